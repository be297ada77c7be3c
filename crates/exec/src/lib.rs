//! bosun-exec (being written)
