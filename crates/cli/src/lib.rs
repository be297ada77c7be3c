//! bosun-cli (being written)
