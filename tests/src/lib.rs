//! Integration suite: see all.rs
