//! bosun-policy (being written)
