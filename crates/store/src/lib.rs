//! bosun-store (being written)
