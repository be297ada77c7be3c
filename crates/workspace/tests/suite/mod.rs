mod bench;
mod checkpoints;
mod containment;
mod errors;
mod fixture;
mod history;
mod recycle;
#[cfg(target_os = "linux")]
mod refs_watch;
mod review;
mod spare;
mod storage;
mod watch;
