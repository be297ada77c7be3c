pub mod approve;
pub mod batch;
pub mod bench;
pub mod bench_batch;
pub mod bench_compaction;
pub mod checks;
pub mod compare;
pub mod costs;
pub mod diff;
pub mod eval;
pub mod export;
pub mod history;
pub mod import;
pub mod inspect;
pub mod map;
pub mod mcp;
pub mod mcp_list;
pub mod memory;
pub mod models;
pub mod policy;
pub mod prices;
pub mod review;
pub mod run;

use anyhow::Context;
use bosun_store::{Store, TaskRow};

/// Opens the journal in `$BOSUN_HOME`.
pub fn open_store() -> anyhow::Result<Store> {
    let path = crate::home().join("bosun.db");
    Store::open(&path).with_context(|| format!("while opening the journal {}", path.display()))
}

/// Finds a task by id or unique prefix.
pub fn find_task(store: &Store, task: &str) -> anyhow::Result<TaskRow> {
    Ok(store.find_task(task)?)
}
