//! bosun-context (being written)
