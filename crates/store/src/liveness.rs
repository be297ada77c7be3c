//! Is a task's owner process still there? Finds tasks left `running` by a process that died
//! (crash, `kill -9`, power loss) and closes them as `interrupted`.

use crate::{Store, StoreError, events, now_rfc3339};
use bosun_protocol::{Event, EventMsg, TaskFinished, TaskId, TaskStatus};
use rusqlite::{OptionalExtension, TransactionBehavior};

/// The start time of process `pid` in clock ticks since boot (`/proc/<pid>/stat` field 22); with
/// the pid it identifies a process across pid reuse. `None` if the process is gone, or off Linux.
pub fn process_start_time(pid: u32) -> Option<u64> {
    proc_stat(pid).map(|s| s.started)
}

struct ProcStat {
    /// The state letter: `R`, `S`, `Z` (zombie: exited, not yet reaped)…
    state: char,
    started: u64,
}

#[cfg(target_os = "linux")]
fn proc_stat(pid: u32) -> Option<ProcStat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

#[cfg(not(target_os = "linux"))]
fn proc_stat(_pid: u32) -> Option<ProcStat> {
    None
}

/// Parses `pid (comm) state ppid … starttime …`. `comm` may hold spaces and parentheses, so the
/// fields are counted from the last `)`.
fn parse_stat(stat: &str) -> Option<ProcStat> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    // Field 3 is the state; field 22 is 19 fields after it.
    let started = fields.nth(18)?.parse().ok()?;
    Some(ProcStat { state, started })
}

/// Whether the process that started a task (`pid`, started at `started`) is still running.
pub(crate) fn owner_alive(pid: u32, started: Option<u64>) -> bool {
    if pid == 0 {
        return false;
    }
    if cfg!(target_os = "linux") {
        return match proc_stat(pid) {
            None => false,
            Some(s) if matches!(s.state, 'Z' | 'X' | 'x') => false,
            Some(s) => started.is_none_or(|t| t == s.started),
        };
    }
    // Elsewhere, without /proc: ask `kill -0`, which cannot tell a reused pid apart.
    std::process::Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl Store {
    /// Closes every task still `running` whose owner process is gone (not alive, or a different
    /// process now holding its pid) with a `task_finished{status: interrupted}` event, and returns
    /// their ids. Safe to run from several processes at once: each task is closed once.
    pub fn reconcile_interrupted(&self) -> Result<Vec<TaskId>, StoreError> {
        let running: Vec<(TaskId, u32, Option<u64>)> = {
            let conn = self.conn();
            let mut stmt = conn.prepare_cached(
                "SELECT id, owner_pid, owner_started FROM tasks WHERE status = 'running'",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    TaskId(r.get(0)?),
                    r.get(1)?,
                    r.get::<_, Option<i64>>(2)?
                        .and_then(|s| u64::try_from(s).ok()),
                ))
            })?;
            rows.collect::<Result<_, _>>()?
        };
        let mut closed = Vec::new();
        for (task, pid, started) in running {
            if owner_alive(pid, started) {
                continue;
            }
            let mut conn = self.conn();
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            // Another process may have closed it (or the owner finished it) since the scan.
            let last: Option<u64> = tx
                .query_row(
                    "SELECT last_seq FROM tasks WHERE id = ?1 AND status = 'running'",
                    [task.as_str()],
                    |r| r.get(0),
                )
                .optional()?;
            let Some(last) = last else { continue };
            let ev = Event {
                seq: last + 1,
                task_id: task.clone(),
                ts: now_rfc3339(),
                msg: EventMsg::TaskFinished(TaskFinished {
                    status: TaskStatus::Interrupted,
                    summary: format!(
                        "interrupted: the process running it (pid {pid}) stopped before the task \
                         finished; its worktree and checkpoints are kept"
                    ),
                    checks: Vec::new(),
                }),
            };
            events::append_in(&tx, &ev)?;
            tx.commit()?;
            closed.push(task);
        }
        Ok(closed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_command_name() {
        let stat = "4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        let s = parse_stat(stat);
        assert_eq!(s.map(|s| (s.state, s.started)), Some(('S', 987654)));
        assert!(parse_stat("garbage").is_none());
        assert!(parse_stat("1 (x) R 1 2").is_none());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_is_alive_and_a_wrong_start_time_is_not_it() {
        let me = std::process::id();
        let started = process_start_time(me);
        assert!(started.is_some());
        assert!(owner_alive(me, started));
        assert!(owner_alive(me, None));
        assert!(!owner_alive(me, started.map(|s| s + 1)));
        assert!(!owner_alive(0, None));
    }
}
