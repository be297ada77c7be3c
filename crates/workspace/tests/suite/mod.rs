mod bench;
mod checkpoints;
mod errors;
mod fixture;
mod history;
mod recycle;
mod review;
mod storage;
