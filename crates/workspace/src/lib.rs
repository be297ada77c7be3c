//! bosun-workspace (being written)
