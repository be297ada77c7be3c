//! bosun-tools (being written)
