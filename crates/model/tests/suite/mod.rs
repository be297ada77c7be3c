mod anthropic;
mod common;
mod edit_blocks;
mod limits;
mod openai;
mod prices;
mod recover;
mod retry;
