//! Pins: what the user keeps in view so that compaction never drops it — a file (its current
//! content is in every request), a tool call's output (never masked, kept word for word through
//! a summary) or one of the user's messages (kept word for word, however long).
//!
//! Pins are `context_pinned` events, so a continued or resumed task keeps them; `bosun run
//! --pin FILE`, `bosun continue --pin FILE` and the app's pin buttons (`Op::Pin`) make them.

use bosun_model::ChatMessage;
use bosun_policy::Policy;
use bosun_protocol::{Event, EventMsg, PinTarget};
use std::collections::BTreeSet;
use std::path::Path;

/// A pinned file's content shown at most this long (the rest is cut, and said so).
const FILE_CAP_BYTES: usize = 256 * 1024;
/// Where the pinned files start in the system prompt.
pub(crate) const HEADING: &str = "## Pinned files\nThe user pinned these files so they stay in view: their current content (after your changes) is in every request.";

/// What is pinned now.
#[derive(Debug, Default, Clone)]
pub(crate) struct Pins {
    set: BTreeSet<PinTarget>,
}

impl Pins {
    /// The pins a task's journal holds (the last word on each target counts).
    pub(crate) fn from_events(events: &[Event]) -> Pins {
        let mut pins = Pins::default();
        for e in events {
            if let EventMsg::ContextPinned(p) = &e.msg {
                pins.apply(p.target.clone(), p.pinned);
            }
        }
        pins
    }

    pub(crate) fn apply(&mut self, target: PinTarget, pinned: bool) {
        if pinned {
            self.set.insert(target);
        } else {
            self.set.remove(&target);
        }
    }

    pub(crate) fn contains(&self, target: &PinTarget) -> bool {
        self.set.contains(target)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    pub(crate) fn files(&self) -> impl Iterator<Item = &str> {
        self.set.iter().filter_map(|t| match t {
            PinTarget::File { path } => Some(path.as_str()),
            _ => None,
        })
    }

    pub(crate) fn calls(&self) -> BTreeSet<String> {
        self.set
            .iter()
            .filter_map(|t| match t {
                PinTarget::Call { call_id } => Some(call_id.clone()),
                _ => None,
            })
            .collect()
    }

    pub(crate) fn is_pinned_message(&self, text: &str) -> bool {
        self.set.contains(&PinTarget::Message {
            text: text.to_string(),
        })
    }

    /// What each pin takes in a request, in estimated tokens, the biggest first: what a user
    /// could unpin when the window is too small.
    pub(crate) fn sizes(
        &self,
        worktree: &Path,
        policy: &Policy,
        messages: &[ChatMessage],
    ) -> Vec<(String, u64)> {
        let mut out: Vec<(String, u64)> = self
            .set
            .iter()
            .map(|t| {
                let bytes = match t {
                    PinTarget::File { path } => {
                        file_section(worktree, policy, path).map_or(0, |s| s.len())
                    }
                    PinTarget::Call { call_id } => messages
                        .iter()
                        .find_map(|m| match m {
                            ChatMessage::Tool {
                                call_id: id,
                                content,
                                ..
                            } if id == call_id => Some(content.len()),
                            _ => None,
                        })
                        .unwrap_or(0),
                    PinTarget::Message { text } => text.len(),
                };
                (t.describe(), (bytes as u64).div_ceil(4))
            })
            .collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }

    /// The system prompt's section of pinned files: each one's current content (read again
    /// for every request: the agent may have changed it). Empty when no file is pinned.
    pub(crate) fn section(&self, worktree: &Path, policy: &Policy) -> String {
        let mut out = String::new();
        for path in self.files() {
            if let Some(s) = file_section(worktree, policy, path) {
                if out.is_empty() {
                    out.push_str(HEADING);
                }
                out.push_str("\n\n");
                out.push_str(&s);
            }
        }
        out
    }
}

/// One pinned file as the request shows it; None when it cannot be shown now (deleted, made
/// a link outside the worktree or to a read-denied file).
fn file_section(worktree: &Path, policy: &Policy, path: &str) -> Option<String> {
    let text = match read_pinnable(worktree, policy, path) {
        Ok(t) => t,
        Err(why) => return Some(format!("### {path}\n(not shown: {why})")),
    };
    Some(format!("### {path}\n```\n{text}\n```"))
}

/// The content of `path` in the worktree, if the user may pin it: a regular text file inside
/// the worktree (through symlinks too), not in `.git`, not read-denied by the policy.
fn read_pinnable(worktree: &Path, policy: &Policy, path: &str) -> Result<String, String> {
    let abs = bosun_tools::resolve_in_worktree(worktree, path).map_err(|e| e.to_string())?;
    let real = bosun_tools::resolve_symlinks_in(worktree, path).unwrap_or_else(|| path.into());
    if [path, real.as_str()]
        .iter()
        .any(|p| p.split('/').any(|c| c == ".git"))
    {
        return Err("files in .git are Bosun's, not the task's".into());
    }
    if policy.is_read_denied(path) || policy.is_read_denied(&real) {
        return Err("the policy denies reading it".into());
    }
    let meta = std::fs::metadata(&abs).map_err(|_| "it does not exist now".to_string())?;
    if !meta.is_file() {
        return Err("it is not a file".into());
    }
    let bytes = std::fs::read(&abs).map_err(|e| format!("it cannot be read: {e}"))?;
    if bytes.iter().take(8_000).any(|b| *b == 0) {
        return Err(format!("it is a binary file of {} bytes", bytes.len()));
    }
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if text.len() > FILE_CAP_BYTES {
        let mut cut = FILE_CAP_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str(&format!(
            "\n[… cut: the file has {} bytes; read the rest with read_file]",
            bytes.len()
        ));
    }
    Ok(text)
}

/// Checks that `target` can be pinned now; returns it normalised (a file's path relative to
/// the worktree), or why not — naming what the user could have meant.
pub(crate) fn check(
    target: &PinTarget,
    worktree: &Path,
    policy: &Policy,
    messages: &[ChatMessage],
) -> Result<PinTarget, String> {
    match target {
        PinTarget::File { path } => {
            let rel = path.trim();
            if rel.is_empty() {
                return Err("--pin needs a file path relative to the repository".into());
            }
            let why = match (
                bosun_tools::normalize_rel(rel),
                read_pinnable(worktree, policy, rel),
            ) {
                (Ok(path), Ok(_)) => return Ok(PinTarget::File { path }),
                (Err(e), _) => e.to_string(),
                (_, Err(why)) => why,
            };
            let near = nearest_files(worktree, rel);
            Err(if near.is_empty() {
                format!("cannot pin `{rel}`: {why}")
            } else {
                format!(
                    "cannot pin `{rel}`: {why}; did you mean {}?",
                    near.join(", ")
                )
            })
        }
        PinTarget::Call { call_id } => {
            let ids: Vec<&str> = messages
                .iter()
                .filter_map(|m| match m {
                    ChatMessage::Tool { call_id, .. } => Some(call_id.as_str()),
                    _ => None,
                })
                .collect();
            if ids.contains(&call_id.as_str()) {
                Ok(target.clone())
            } else {
                let last: Vec<&str> = ids.iter().rev().take(5).copied().collect();
                Err(if last.is_empty() {
                    format!("cannot pin call {call_id}: the task has made no tool call yet")
                } else {
                    format!(
                        "cannot pin call {call_id}: no tool call of the task has that id (the last: {})",
                        last.join(", ")
                    )
                })
            }
        }
        PinTarget::Message { text } => {
            if text.trim().is_empty() {
                return Err("cannot pin an empty message".into());
            }
            let said = messages
                .iter()
                .any(|m| matches!(m, ChatMessage::User { content } if content == text));
            if said {
                Ok(target.clone())
            } else {
                Err(format!(
                    "cannot pin {}: the task's conversation has no message of the user with that text",
                    target.describe()
                ))
            }
        }
    }
}

/// Up to three files of the worktree whose name is near `want`'s.
fn nearest_files(worktree: &Path, want: &str) -> Vec<String> {
    let name = want.rsplit('/').next().unwrap_or(want).to_lowercase();
    let stem = name.split('.').next().unwrap_or(&name).to_string();
    if stem.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let walk = ignore::WalkBuilder::new(worktree)
        .hidden(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    for entry in walk.flatten().take(50_000) {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(worktree) else {
            continue;
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        let own = rel.rsplit('/').next().unwrap_or(&rel).to_lowercase();
        let own_stem = own.split('.').next().unwrap_or(&own).to_string();
        if own.contains(&stem) || (own_stem.len() > 2 && stem.contains(&own_stem)) {
            out.push(rel);
            if out.len() == 3 {
                break;
            }
        }
    }
    out.sort();
    out
}

impl super::TaskRun {
    /// The pins the task's journal holds (a continued task keeps its pins).
    pub(crate) fn load_pins(&mut self) -> Result<(), crate::CoreError> {
        let events = self
            .emitter
            .store()
            .events_of_kinds(self.emitter.task_id(), &["context_pinned"])?;
        self.pins = Pins::from_events(&events);
        Ok(())
    }

    /// Applies the pins sent while the task ran: each one journaled (`context_pinned`), or a
    /// `pin_refused` warning saying why not.
    pub(crate) fn take_pins(&mut self, messages: &[ChatMessage]) -> Result<(), crate::CoreError> {
        let ops: Vec<bosun_protocol::PinOp> = match self.pin_ops.lock() {
            Ok(mut p) => p.drain(..).collect(),
            Err(_) => return Err(crate::CoreError::Internal("pin queue poisoned".into())),
        };
        for op in ops {
            let checked = if op.pinned {
                match self.policy.read() {
                    Ok(policy) => check(&op.target, &self.worktree_path, &policy, messages),
                    Err(_) => Err("the policy is not readable".into()),
                }
            } else if self.pins.contains(&op.target) {
                Ok(op.target.clone())
            } else {
                Err(format!("{} is not pinned", op.target.describe()))
            };
            match checked {
                Ok(target) => {
                    self.pins.apply(target.clone(), op.pinned);
                    self.emitter
                        .emit(EventMsg::ContextPinned(bosun_protocol::ContextPinned {
                            target,
                            pinned: op.pinned,
                            by: op.by.unwrap_or_else(|| "user".into()),
                        }))?;
                }
                Err(why) => {
                    self.emitter
                        .emit(EventMsg::Warning(bosun_protocol::Warning {
                            code: "pin_refused".into(),
                            message: why,
                        }))?;
                }
            }
        }
        Ok(())
    }

    /// `system` with the pinned files' current content after it.
    pub(crate) fn with_pinned_files(&self, system: &str) -> String {
        if self.pins.files().next().is_none() {
            return system.to_string();
        }
        let section = match self.policy.read() {
            Ok(policy) => self.pins.section(&self.worktree_path, &policy),
            Err(_) => String::new(),
        };
        if section.is_empty() {
            return system.to_string();
        }
        let mut section = section;
        self.redaction.text(&mut section);
        format!("{system}\n\n{section}")
    }

    /// What to unpin, for a conversation that cannot be made to fit: each pin's tokens.
    pub(crate) fn pins_to_unpin(&self, messages: &[ChatMessage]) -> Option<String> {
        if self.pins.is_empty() {
            return None;
        }
        let sizes = match self.policy.read() {
            Ok(policy) => self.pins.sizes(&self.worktree_path, &policy, messages),
            Err(_) => return None,
        };
        let list: Vec<String> = sizes
            .iter()
            .map(|(what, tokens)| {
                format!(
                    "{what} (about {} tokens)",
                    bosun_protocol::short_count(*tokens)
                )
            })
            .collect();
        Some(format!(
            "the pinned items alone take a large part of it: unpin {} (`bosun continue {} --unpin …`, or the pin buttons in the app's timeline)",
            list.join(", "),
            self.emitter.task_id()
        ))
    }
}

/// `--pin FILE…` as a task starts or continues: each file checked against the worktree and
/// the policy; a file that cannot be pinned refuses the whole start (exit 2), naming the
/// nearest files.
pub(crate) fn files_to_pin(
    paths: &[String],
    worktree: &Path,
    policy: &Policy,
) -> Result<Vec<PinTarget>, crate::CoreError> {
    let mut out: Vec<PinTarget> = Vec::new();
    for path in paths {
        let target = check(
            &PinTarget::File { path: path.clone() },
            worktree,
            policy,
            &[],
        )
        .map_err(|message| crate::CoreError::Refused {
            code: "bad_pin",
            message,
        })?;
        if !out.contains(&target) {
            out.push(target);
        }
    }
    Ok(out)
}

/// `--unpin FILE|call:ID…` as a task continues: each must be pinned now; one that is not
/// refuses the continuation (exit 2), naming what is pinned.
pub(crate) fn pins_to_take_back(
    names: &[String],
    events: &[Event],
) -> Result<Vec<PinTarget>, crate::CoreError> {
    let pins = Pins::from_events(events);
    let mut out = Vec::new();
    for name in names {
        let name = name.trim();
        let target = match name.strip_prefix("call:") {
            Some(id) => PinTarget::Call {
                call_id: id.trim().to_string(),
            },
            None => PinTarget::File {
                path: bosun_tools::normalize_rel(name).unwrap_or_else(|_| name.to_string()),
            },
        };
        if !pins.contains(&target) {
            let now: Vec<String> = pins
                .set
                .iter()
                .map(|t| match t {
                    PinTarget::Call { call_id } => format!("call:{call_id}"),
                    other => other.describe(),
                })
                .collect();
            return Err(crate::CoreError::Refused {
                code: "bad_pin",
                message: if now.is_empty() {
                    format!("cannot unpin `{name}`: the task has nothing pinned")
                } else {
                    format!(
                        "cannot unpin `{name}`: it is not pinned (pinned: {})",
                        now.join(", ")
                    )
                },
            });
        }
        if !out.contains(&target) {
            out.push(target);
        }
    }
    Ok(out)
}

/// Journals the pins a start or continuation was given (or took back).
pub(crate) fn emit_pins(
    emitter: &crate::Emitter,
    pins: Vec<PinTarget>,
    pinned: bool,
) -> Result<(), crate::CoreError> {
    for target in pins {
        emitter.emit(EventMsg::ContextPinned(bosun_protocol::ContextPinned {
            target,
            pinned,
            by: "user".into(),
        }))?;
    }
    Ok(())
}
