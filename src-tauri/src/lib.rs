//! bosun-app (being written)
