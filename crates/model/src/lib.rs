//! bosun-model (being written)
