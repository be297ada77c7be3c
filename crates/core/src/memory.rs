//! Memory per repository: what Bosun learns across tasks, kept in the journal (`memories`,
//! see `bosun_store`) and keyed by the repository as `task_started.repo` has it.
//!
//! - `verification`: a check command that passed for a task (a `check_finished` of the check's
//!   own command, full or on the accepted tree, that passed);
//! - `failed_approach`: a task that failed (`failed`, `checks_failed`, `max_steps`), whose every
//!   hunk was rejected in review, or that was discarded unmerged: one line of what was tried and
//!   why it failed, built from the task's own events (its prompt, the files it changed, the
//!   failing checks' first failures, its error or last answer, the review's comments) — no
//!   model is asked; at most [`FAILED_APPROACH_MAX`] characters;
//! - `co_change`: the files a completed or merged task changed, when they are 2 to 6;
//! - `convention`: what the user writes (`bosun memory add`, the app's Memory panel).
//!
//! Every text is one line and redacted. A new task's system prompt gets the section
//! [`HEADING`]: pinned memories first, then the newest, as many as fit in [`MEMORY_TOKENS`]
//! (bytes / 3.5); `context_assembled` lists each as an item of kind `memory`. `[memory] enabled
//! = false` in `config.toml` turns off both the learning and the section ([`set_enabled`] writes it,
//! keeping the rest of the file).

use crate::review::Reviewer;
use crate::{BosunConfig, CoreError, Redaction};
use bosun_protocol::{
    CheckFinished, CheckScope, CheckStatus, ContextItem, ContextKind, EventMsg, HunkState,
    ReviewEvent, TaskId, TaskStatus,
};
use bosun_store::{MemoryKind, MemoryRow, NewMemory, Store, StoreError, TaskRow};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

mod switch;
pub use switch::set_enabled;

/// The section's first line in a system prompt.
pub const HEADING: &str = "# What Bosun remembers about this repository";
/// What the section says under its heading.
const INTRO: &str = "Learned from earlier tasks here and written down by the user (pinned first, then newest). Follow the conventions, verify with the checks that passed, and do not repeat an approach that failed unless you change what made it fail.";
/// The section's budget, heading included, in tokens (bytes / 3.5).
pub const MEMORY_TOKENS: usize = 500;
/// The longest `failed_approach` line, in characters.
pub const FAILED_APPROACH_MAX: usize = 300;
/// The longest convention the user may write, in characters.
pub const CONVENTION_MAX: usize = 1_000;
/// How much of a check's output is read for its first error.
const OUTPUT_KEPT: usize = 16 * 1024;
/// `co_change` is kept for this many files changed together.
const CO_CHANGE_FILES: std::ops::RangeInclusive<usize> = 2..=6;

/// Whether memory is on: `[memory] enabled` in `home/config.toml`, default true.
pub fn enabled(home: &Path) -> bool {
    BosunConfig::load(home)
        .ok()
        .and_then(|c| c.memory)
        .and_then(|m| m.enabled)
        .unwrap_or(true)
}

/// The journal's key for the repository containing `path` (as `task_started.repo` has it).
pub fn repo_key(path: &Path) -> Result<String, CoreError> {
    Ok(bosun_workspace::resolve_repo(path)?.display().to_string())
}

/// The repository's memories, pinned first, then the newest.
pub fn list(store: &Store, repo: &str) -> Result<Vec<MemoryRow>, CoreError> {
    Ok(store.memories(Some(repo))?)
}

/// Writes down a convention for the repository `repo` (a key from [`repo_key`]): one line,
/// redacted, at most [`CONVENTION_MAX`] characters; the same text again is the same memory.
pub fn add_convention(store: &Store, repo: &str, text: &str) -> Result<MemoryRow, CoreError> {
    let mut line = one_line(text);
    if line.is_empty() {
        return Err(CoreError::Refused {
            code: "empty_memory",
            message: "write what Bosun should remember (the text is empty)".into(),
        });
    }
    let n = line.chars().count();
    if n > CONVENTION_MAX {
        return Err(CoreError::Refused {
            code: "memory_too_long",
            message: format!(
                "a memory is at most {CONVENTION_MAX} characters (this one is {n}): a new task's prompt gives memories {MEMORY_TOKENS} tokens in all; say it shorter"
            ),
        });
    }
    Redaction::from_environment().text(&mut line);
    Ok(store.remember(&NewMemory {
        repo: repo.to_string(),
        kind: MemoryKind::Convention,
        text: line,
        source_task: None,
    })?)
}

/// Pins or unpins a memory ([`StoreError::NoMemory`], naming the nearest ids, when there is
/// none).
pub fn pin(store: &Store, id: i64, pinned: bool) -> Result<MemoryRow, StoreError> {
    store.set_memory_pinned(id, pinned)
}

/// Deletes a memory; returns it as it was.
pub fn delete(store: &Store, id: i64) -> Result<MemoryRow, StoreError> {
    store.delete_memory(id)
}

/// How a memory reads in the prompt (and in `context_assembled`): `Convention: …`.
pub fn line(m: &MemoryRow) -> String {
    let label = match m.kind {
        MemoryKind::Verification => "Verified",
        MemoryKind::FailedApproach => "Failed before",
        MemoryKind::CoChange => "Changed together",
        MemoryKind::Convention => "Convention",
    };
    format!("{label}: {}", m.text)
}

/// The section for a new task's system prompt, from `memories` in the order given (pinned
/// first, then newest) leaving out those learned from `task` itself (a continued task): as many
/// as fit, with the heading, in [`MEMORY_TOKENS`]. None when there is nothing to say.
pub fn section(memories: &[MemoryRow], task: Option<&TaskId>) -> Option<String> {
    let mut text = format!("{HEADING}\n{INTRO}\n");
    let mut any = false;
    for m in memories {
        if task.is_some() && m.source_task.as_ref() == task {
            continue;
        }
        let entry = format!("- {}\n", line(m));
        if bosun_context::estimate_tokens(&format!("{text}{entry}")) > MEMORY_TOKENS {
            // Too long to fit what is left: a shorter one after it may.
            continue;
        }
        text.push_str(&entry);
        any = true;
    }
    any.then(|| text.trim_end().to_string())
}

/// Appends the memory section to a new task's system prompt, when memory is on and the
/// repository has any. Memory is a help, never a reason to fail: a journal error only warns.
pub(crate) fn append_section(
    system: &mut String,
    home: &Path,
    emitter: &crate::Emitter,
    repo_root: &Path,
) {
    if !enabled(home) {
        return;
    }
    match emitter
        .store()
        .memories(Some(&repo_root.display().to_string()))
    {
        Ok(memories) => {
            if let Some(s) = section(&memories, Some(emitter.task_id())) {
                system.push_str("\n\n");
                system.push_str(&s);
            }
        }
        Err(e) => tracing::warn!("the repository's memories could not be read: {e}"),
    }
}

/// The `context_assembled` items of the memory section in a system prompt: one per memory,
/// the heading's tokens counted with the first.
pub(crate) fn context_items(system: &str, ratio: f64) -> Vec<ContextItem> {
    let marker = format!("{HEADING}\n");
    let Some(at) = system
        .rfind(&format!("\n{marker}"))
        .map(|i| i + 1)
        .or_else(|| system.starts_with(&marker).then_some(0))
    else {
        return Vec::new();
    };
    let mut items: Vec<ContextItem> = Vec::new();
    let mut pending = 0usize;
    for l in system[at..].split_inclusive('\n') {
        if let Some(entry) = l.trim_end().strip_prefix("- ") {
            let tokens = bosun_context::estimate_tokens(l) + std::mem::take(&mut pending);
            items.push(ContextItem {
                kind: ContextKind::Memory,
                path: None,
                symbol: None,
                reason: entry.to_string(),
                tokens: ((tokens as f64) * ratio).ceil() as u64,
            });
        } else if !items.is_empty() && l.starts_with("# ") {
            break;
        } else if items.is_empty() {
            pending += bosun_context::estimate_tokens(l);
        } else {
            break;
        }
    }
    items
}

/// After a task's run finished (its `task_finished` is in the journal): the checks that passed
/// (`verification`), what failed (`failed_approach`, for `failed`, `checks_failed` and
/// `max_steps`) and the files a completed task changed together (`co_change`). Returns how many
/// memories were written. Nothing when memory is off.
pub fn learn_from_task(home: &Path, store: &Store, task: &TaskId) -> Result<usize, CoreError> {
    if !enabled(home) {
        return Ok(0);
    }
    let facts = Facts::read(store, task)?;
    let mut learned = facts.verifications();
    let why = match facts.status {
        Some(TaskStatus::ChecksFailed) => Some((
            "checks failed",
            facts.failing_checks().or_else(|| facts.summary_line()),
        )),
        Some(TaskStatus::Failed) => Some(("failed", facts.summary_line())),
        Some(TaskStatus::MaxSteps) => Some(("ran out of steps", facts.failing_checks())),
        _ => None,
    };
    if let Some((outcome, why)) = why {
        learned.push((MemoryKind::FailedApproach, facts.failed_line(outcome, why)));
    }
    if facts.status == Some(TaskStatus::Completed)
        && let Some(text) = co_change(&facts.files)
    {
        learned.push((MemoryKind::CoChange, text));
    }
    facts.write(store, learned)
}

/// [`learn_from_task`] for the task a run just finished; a failure only warns.
pub(crate) fn after_task(home: &Path, emitter: &crate::Emitter) {
    let task = emitter.task_id();
    if let Err(e) = learn_from_task(home, emitter.store(), task) {
        tracing::warn!("nothing was remembered from task {task}: {e}");
    }
}

/// How a review ended a task, for [`learn_from_review`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewEnd {
    /// Every hunk of the task is rejected.
    Rejected,
    /// Its worktree was removed without a merge.
    Discarded,
    /// Its accepted hunks were merged.
    Merged,
}

/// After a review verdict, a discard or a merge: a rejected or discarded task's approach is a
/// `failed_approach`; a merged one's files changed together (`co_change`, from the files with
/// accepted hunks). Errors are logged, never returned: the review already happened.
pub(crate) fn learn_from_review(reviewer: &Reviewer, home: &Path, store: &Store, end: ReviewEnd) {
    if !enabled(home) {
        return;
    }
    let learned = (|| -> Result<usize, CoreError> {
        let facts = Facts::read(store, reviewer.task_id())?;
        // A task that failed was remembered as it finished.
        let failed = matches!(
            facts.status,
            Some(TaskStatus::Failed | TaskStatus::ChecksFailed | TaskStatus::MaxSteps)
        );
        if failed && end != ReviewEnd::Merged {
            return Ok(0);
        }
        let memory = match end {
            ReviewEnd::Rejected => {
                let why = facts.comments().or_else(|| facts.answer_line());
                (
                    MemoryKind::FailedApproach,
                    facts.failed_line("every change was rejected in review", why),
                )
            }
            ReviewEnd::Discarded => {
                // Every hunk rejected first: remembered then.
                if reviewer.review(false).is_ok_and(|r| all_rejected(&r)) {
                    return Ok(0);
                }
                let why = facts.comments().or_else(|| facts.answer_line());
                (
                    MemoryKind::FailedApproach,
                    facts.failed_line("discarded in review without a merge", why),
                )
            }
            ReviewEnd::Merged => {
                let review = reviewer.review(false)?;
                let files: Vec<String> = review
                    .files
                    .iter()
                    .filter(|f| f.hunks.iter().any(|h| h.state == HunkState::Accepted))
                    .map(|f| f.path.clone())
                    .collect();
                match co_change(&files) {
                    Some(text) => (MemoryKind::CoChange, text),
                    None => return Ok(0),
                }
            }
        };
        facts.write(store, vec![memory])
    })();
    if let Err(e) = learned {
        tracing::warn!(
            "nothing was remembered from the review of task {}: {e}",
            reviewer.task_id()
        );
    }
}

/// Whether `review` (after a reject) has every hunk rejected.
pub(crate) fn all_rejected(review: &bosun_protocol::Review) -> bool {
    review.counts.hunks > 0 && review.counts.rejected == review.counts.hunks
}

/// What a task's journal says, for its memories.
struct Facts {
    row: TaskRow,
    /// The last run's status and answer (a continued task has several runs).
    status: Option<TaskStatus>,
    summary: Option<String>,
    last_checks: Vec<CheckFinished>,
    /// Every check of the task that passed with its own command: (name, command).
    passed: Vec<(String, String)>,
    /// The start of each check run's output, by check id.
    output: HashMap<String, String>,
    /// The files the task changed, in the order first changed.
    files: Vec<String>,
    comments: Vec<String>,
}

impl Facts {
    fn read(store: &Store, task: &TaskId) -> Result<Facts, CoreError> {
        let row = store.task(task)?;
        let events = store.events_of_kinds(
            task,
            &[
                "check_started",
                "check_finished",
                "task_finished",
                "checkpoint_created",
                "review",
                "check_output_delta",
            ],
        )?;
        let mut facts = Facts {
            row,
            status: None,
            summary: None,
            last_checks: Vec::new(),
            passed: Vec::new(),
            output: HashMap::new(),
            files: Vec::new(),
            comments: Vec::new(),
        };
        let mut commands: HashMap<String, (String, CheckScope)> = HashMap::new();
        for e in events {
            match e.msg {
                EventMsg::CheckStarted(s) => {
                    commands.insert(s.check_id, (s.command, s.scope));
                }
                EventMsg::CheckFinished(f) if f.status == CheckStatus::Passed => {
                    if let Some((command, scope)) = commands.get(&f.check_id)
                        && matches!(scope, CheckScope::Full | CheckScope::Accepted)
                        && !facts.passed.iter().any(|(_, c)| c == command)
                    {
                        facts.passed.push((f.name.clone(), command.clone()));
                    }
                }
                EventMsg::CheckOutputDelta(d) => {
                    let out = facts.output.entry(d.check_id).or_default();
                    if out.len() < OUTPUT_KEPT {
                        out.push_str(&d.chunk);
                    }
                }
                EventMsg::TaskFinished(t) => {
                    facts.status = Some(t.status);
                    facts.summary = Some(t.summary);
                    facts.last_checks = t.checks;
                }
                EventMsg::CheckpointCreated(c) => {
                    for f in c.files {
                        if !facts.files.contains(&f) {
                            facts.files.push(f);
                        }
                    }
                }
                EventMsg::Review(ReviewEvent::Comment { comment }) => {
                    facts
                        .comments
                        .push(format!("{}: {}", comment.path, one_line(&comment.body)));
                }
                _ => {}
            }
        }
        Ok(facts)
    }

    fn verifications(&self) -> Vec<(MemoryKind, String)> {
        self.passed
            .iter()
            .map(|(name, command)| {
                let command = one_line(command);
                let text = if *name == command {
                    format!("`{command}` passes")
                } else {
                    format!("`{command}` passes (check `{name}`)")
                };
                (MemoryKind::Verification, text)
            })
            .collect()
    }

    /// The required checks of the last round that failed, each with its first new failure.
    fn failing_checks(&self) -> Option<String> {
        let parts: Vec<String> = self
            .last_checks
            .iter()
            .filter(|c| c.blocks())
            .map(|c| {
                let first = c
                    .failures
                    .iter()
                    .find(|f| !f.before_task)
                    .map(|f| first_line(&f.message))
                    .or_else(|| self.output.get(&c.check_id).and_then(|o| error_line(o)))
                    .unwrap_or_else(|| first_line(&c.summary));
                format!("`{}`: {first}", c.name)
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// The last run's summary (the error that stopped it, or the model's last answer).
    fn summary_line(&self) -> Option<String> {
        self.summary
            .as_deref()
            .map(first_line)
            .filter(|s| !s.is_empty())
    }

    /// The model's last answer, for a task the review turned down.
    fn answer_line(&self) -> Option<String> {
        self.summary_line().map(|s| format!("its answer: {s}"))
    }

    fn comments(&self) -> Option<String> {
        (!self.comments.is_empty()).then(|| format!("review said {}", self.comments.join("; ")))
    }

    /// `Tried "PROMPT" (changed a, b): OUTCOME — WHY`, at most [`FAILED_APPROACH_MAX`]
    /// characters.
    fn failed_line(&self, outcome: &str, why: Option<String>) -> String {
        let prompt = cut(&first_line(&self.row.prompt), 100);
        let changed = match self.files.as_slice() {
            [] => String::new(),
            files if files.len() <= 3 => format!(" (changed {})", files.join(", ")),
            files => format!(
                " (changed {} and {} more)",
                files[..3].join(", "),
                files.len() - 3
            ),
        };
        let why = why.map(|w| format!(" — {w}")).unwrap_or_default();
        cut(
            &format!("Tried \"{prompt}\"{changed}: {outcome}{why}"),
            FAILED_APPROACH_MAX,
        )
    }

    /// Writes each memory (one line, redacted) for the task's repository.
    fn write(&self, store: &Store, learned: Vec<(MemoryKind, String)>) -> Result<usize, CoreError> {
        let redaction = Redaction::from_environment();
        let mut written = 0;
        for (kind, text) in learned {
            let mut text = one_line(&text);
            redaction.text(&mut text);
            store.remember(&NewMemory {
                repo: self.row.repo.clone(),
                kind,
                text,
                source_task: Some(self.row.id.clone()),
            })?;
            written += 1;
        }
        Ok(written)
    }
}

/// The files as one `co_change` text, when they are 2 to 6: sorted, comma-separated.
fn co_change(files: &[String]) -> Option<String> {
    let set: BTreeSet<&str> = files.iter().map(String::as_str).collect();
    CO_CHANGE_FILES
        .contains(&set.len())
        .then(|| set.into_iter().collect::<Vec<_>>().join(", "))
}

/// The first line of a check's output that reads as an error, else its last line.
fn error_line(output: &str) -> Option<String> {
    const WORDS: [&str; 6] = ["error", "fail", "panic", "assert", "exception", "traceback"];
    let lines: Vec<&str> = output.lines().filter(|l| !l.trim().is_empty()).collect();
    lines
        .iter()
        .find(|l| {
            let l = l.to_lowercase();
            WORDS.iter().any(|w| l.contains(w))
        })
        .or(lines.last())
        .map(|l| one_line(l))
}

/// Whitespace (newlines included) collapsed to single spaces.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first non-empty line, trimmed.
fn first_line(s: &str) -> String {
    one_line(s.lines().find(|l| !l.trim().is_empty()).unwrap_or(""))
}

/// At most `max` characters, the last one `…` when cut.
fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    fn row(id: i64, kind: MemoryKind, text: &str, task: Option<&str>) -> MemoryRow {
        MemoryRow {
            id,
            repo: "/r".into(),
            kind,
            text: text.into(),
            pinned: false,
            seen: 1,
            created_at: String::new(),
            updated_at: String::new(),
            source_task: task.map(TaskId::from),
        }
    }

    #[test]
    fn the_section_lists_memories_in_order_and_its_items_one_each() {
        let memories = [
            row(2, MemoryKind::Convention, "tabs, not spaces", None),
            row(1, MemoryKind::CoChange, "a.rs, b.rs", Some("t1")),
            row(3, MemoryKind::FailedApproach, "mine", Some("me")),
        ];
        let text = section(&memories, Some(&TaskId::from("me"))).unwrap();
        assert_eq!(
            text,
            format!(
                "{HEADING}\n{INTRO}\n- Convention: tabs, not spaces\n- Changed together: a.rs, b.rs"
            )
        );
        let system = format!("You are Bosun.\n\n{text}\n\n# Edit format\nblocks\n");
        let items = context_items(&system, 1.0);
        let reasons: Vec<&str> = items.iter().map(|i| i.reason.as_str()).collect();
        assert_eq!(
            reasons,
            [
                "Convention: tabs, not spaces",
                "Changed together: a.rs, b.rs"
            ]
        );
        assert!(items.iter().all(|i| i.kind == ContextKind::Memory));
        let total: u64 = items.iter().map(|i| i.tokens).sum();
        assert!(
            total as usize >= bosun_context::estimate_tokens(&text),
            "{total}"
        );
        assert!(section(&memories[2..], Some(&TaskId::from("me"))).is_none());
        assert!(context_items("You are Bosun.", 1.0).is_empty());
    }

    #[test]
    fn the_section_stays_within_its_token_budget() {
        let memories: Vec<MemoryRow> = (0..50)
            .map(|i| {
                row(
                    i,
                    MemoryKind::Convention,
                    &format!("rule {i}: {}", "x".repeat(120)),
                    None,
                )
            })
            .collect();
        let text = section(&memories, None).unwrap();
        assert!(
            bosun_context::estimate_tokens(&text) <= MEMORY_TOKENS,
            "{}",
            text.len()
        );
        // The first ones (pinned, newest) are the ones kept.
        assert!(text.contains("- Convention: rule 0: "));
        assert!(!text.contains("rule 49"));
    }

    #[test]
    fn a_long_failure_is_cut_to_one_line_of_three_hundred_characters() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(first_line("\n\n  two  words \nnext"), "two words");
        assert_eq!(
            co_change(&["b".into(), "a".into(), "b".into()]),
            Some("a, b".into())
        );
        assert_eq!(co_change(&["a".into()]), None);
        assert_eq!(
            error_line("running 3 tests\nok\nFAILED: test_add (3 != -1)\nmore\n"),
            Some("FAILED: test_add (3 != -1)".into())
        );
        assert_eq!(error_line("a\nlast words\n\n"), Some("last words".into()));
        let seven: Vec<String> = (0..7).map(|i| format!("f{i}")).collect();
        assert_eq!(co_change(&seven), None);
    }
}
