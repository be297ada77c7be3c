mod anthropic;
mod common;
mod openai;
mod prices;
mod recover;
mod retry;
