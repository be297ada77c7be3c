//! bosun-core (being written)
