//! What `/proc` says about processes: parents, start times, command lines, environments.

use std::collections::HashMap;

/// The fields of `/proc/<pid>/stat` the sandbox needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    pub ppid: u32,
    /// Clock ticks since boot when the process started: with the pid, it names one process
    /// for good (a pid alone can be reused).
    pub start_time: u64,
}

/// Parses a `/proc/<pid>/stat` line. The command name (field 2) is in parentheses and may
/// itself contain spaces and parentheses, so fields are counted from the last `)`.
pub(crate) fn parse_stat(line: &str) -> Option<Stat> {
    let after = &line[line.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // After the name: state (3), ppid (4), …, starttime (22).
    Some(Stat {
        ppid: fields.get(1)?.parse().ok()?,
        start_time: fields.get(19)?.parse().ok()?,
    })
}

pub(crate) fn stat(pid: u32) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Every process id listed in `/proc`.
pub(crate) fn pids() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

/// Every descendant of `root` (children, their children, …) that `/proc` shows now.
pub(crate) fn descendants(root: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for pid in pids() {
        if let Some(s) = stat(pid) {
            children.entry(s.ppid).or_default().push(pid);
        }
    }
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        for &child in children.get(&pid).map(Vec::as_slice).unwrap_or_default() {
            if child != root && !found.contains(&child) {
                found.push(child);
                stack.push(child);
            }
        }
    }
    found
}

/// The command line of `pid`, arguments joined by spaces (empty for a kernel thread or a
/// process that is gone).
pub(crate) fn command_line(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    raw.split(|b| *b == 0)
        .filter(|part| !part.is_empty())
        .map(String::from_utf8_lossy)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The value of `name` in the environment `pid` was started with, if it can be read.
pub(crate) fn environ_var(pid: u32, name: &str) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{name}=");
    raw.split(|b| *b == 0)
        .find_map(|entry| entry.strip_prefix(prefix.as_bytes()))
        .map(|v| String::from_utf8_lossy(v).into_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_command_name_with_spaces_and_parentheses_does_not_shift_the_fields() {
        let line = "4242 (evil) 1 (x) S 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                ppid: 17,
                start_time: 987654
            })
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn this_process_is_found_with_its_parent_and_start_time() {
        let me = std::process::id();
        let s = stat(me).unwrap();
        assert_eq!(s.ppid, std::os::unix::process::parent_id());
        assert!(s.start_time > 0);
        assert!(descendants(s.ppid).contains(&me));
        assert!(!command_line(me).is_empty());
    }
}
