mod anthropic;
mod common;
mod limits;
mod openai;
mod prices;
mod recover;
mod retry;
