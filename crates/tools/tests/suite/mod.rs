mod command;
mod common;
mod edit;
mod patch;
mod read;
mod registry;
mod search;
