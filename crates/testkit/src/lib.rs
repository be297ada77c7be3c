//! bosun-testkit (being written)
