//! Other agents' sessions read into the journal: Claude Code's (`projects/**/*.jsonl`, sub-agents
//! included) and Codex's (`sessions/**/rollout-*.jsonl`). Each session becomes a read-only task
//! marked with its source, its transcript as the journal's usual events (user and assistant
//! messages, tool calls and their results, usage priced from Bosun's price data), so the history
//! and the costs show it like any other; its spend counts toward no budget and the statistics
//! leave it out.
//!
//! Incremental: the journal remembers how far each file was read; a re-scan reads only the lines
//! after that. A line that is not JSON of a known shape is skipped and counted, never a failed
//! import; a line of a type the reader does not know is skipped and counted apart.

mod claude;
mod codex;
mod journal;
mod session;

pub use journal::FileScan;
pub use session::{Item, Line, ReaderState};

use bosun_model::PriceTable;
use bosun_policy::redact::Redactor;
use bosun_store::{Store, StoreError};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Where an imported session came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    ClaudeCode,
    Codex,
}

impl Source {
    /// As the journal and the views name it: `claude-code`, `codex`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Source::ClaudeCode => "claude-code",
            Source::Codex => "codex",
        }
    }

    fn provider(&self) -> &'static str {
        match self {
            Source::ClaudeCode => "anthropic",
            Source::Codex => "openai",
        }
    }

    /// The folder under the tool's directory that holds its sessions.
    pub fn sessions_dir(&self, dir: &Path) -> PathBuf {
        match self {
            Source::ClaudeCode => dir.join("projects"),
            Source::Codex => dir.join("sessions"),
        }
    }

    /// The tool's directory: `$CLAUDE_CONFIG_DIR` (its first entry when it lists several) or
    /// `~/.claude`; `$CODEX_HOME` or `~/.codex`.
    pub fn default_dir(&self) -> Option<PathBuf> {
        let (var, dot) = match self {
            Source::ClaudeCode => ("CLAUDE_CONFIG_DIR", ".claude"),
            Source::Codex => ("CODEX_HOME", ".codex"),
        };
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            let v = v.to_string_lossy().into_owned();
            let first = v.split(',').next().unwrap_or(&v).trim().to_string();
            return Some(PathBuf::from(first));
        }
        dirs::home_dir().map(|h| h.join(dot))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("could not read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A tool's folder of sessions, as the app offers to import it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ImportFolder {
    /// `claude-code` or `codex`.
    pub source: String,
    /// The tool's directory (`$CLAUDE_CONFIG_DIR`, `~/.claude`, `$CODEX_HOME`, `~/.codex`).
    pub dir: String,
    /// It has a sessions folder (`projects/`, `sessions/`).
    pub found: bool,
}

/// Where each tool keeps its sessions by default, and whether they are there.
pub fn default_folders() -> Vec<ImportFolder> {
    [Source::ClaudeCode, Source::Codex]
        .into_iter()
        .filter_map(|s| {
            let dir = s.default_dir()?;
            Some(ImportFolder {
                source: s.as_str().to_string(),
                found: s.sessions_dir(&dir).is_dir(),
                dir: dir.display().to_string(),
            })
        })
        .collect()
}

/// What an import of one tool's folder did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, ts_rs::TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct SourceReport {
    pub source: String,
    /// The tool's directory.
    pub dir: String,
    /// Session files found.
    #[ts(type = "number")]
    pub files: u64,
    /// Files with new lines this time.
    #[ts(type = "number")]
    pub files_read: u64,
    /// Sessions (tasks) created this time.
    #[ts(type = "number")]
    pub new_sessions: u64,
    /// Lines read this time, and of them skipped: not JSON of a known shape; of a type the
    /// reader does not know.
    #[ts(type = "number")]
    pub lines: u64,
    #[ts(type = "number")]
    pub malformed: u64,
    #[ts(type = "number")]
    pub unknown: u64,
    /// Events written, of them model responses, and what those cost (priced ones).
    #[ts(type = "number")]
    pub events: u64,
    #[ts(type = "number")]
    pub responses: u64,
    pub cost_usd: f64,
    /// Files shorter than what was read of them before (rewritten): left alone.
    pub shrunk: Vec<String>,
    /// Files that repeat a session already imported from another file (a copy, a backup):
    /// left alone, each with that other file.
    pub copies: Vec<ImportedCopy>,
    /// Secrets replaced in what was imported (keys, tokens, passwords in the transcripts).
    #[ts(type = "number")]
    pub redacted: u64,
}

/// A session file left alone because another file of the same session was imported.
#[derive(Debug, Clone, Default, PartialEq, Serialize, ts_rs::TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ImportedCopy {
    pub path: String,
    pub copy_of: String,
}

/// The session files under the tool's directory, sorted; a Claude Code sub-agent's after the
/// sessions (its parent is then in the journal first).
pub fn session_files(source: Source, dir: &Path) -> Result<Vec<PathBuf>, ImportError> {
    let mut out = Vec::new();
    let root = source.sessions_dir(dir);
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| ImportError::Io {
            path: d.clone(),
            source: e,
        })?;
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(path);
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let wanted = name.ends_with(".jsonl")
                && match source {
                    Source::ClaudeCode => true,
                    Source::Codex => name.starts_with("rollout-"),
                };
            if kind.is_file() && wanted {
                out.push(path);
            }
        }
    }
    out.sort_by_key(|p| (journal::is_agent_file(p), p.clone()));
    Ok(out)
}

/// Reads what is new in every session file of the tool's directory `dir` into the journal.
/// `dir` must have the sessions folder (`projects`, `sessions`).
pub fn import_dir(
    store: &Store,
    prices: &PriceTable,
    source: Source,
    dir: &Path,
) -> Result<SourceReport, ImportError> {
    let mut report = SourceReport {
        source: source.as_str().to_string(),
        dir: dir.display().to_string(),
        ..SourceReport::default()
    };
    // Secrets are what the environment Bosun runs in holds (its API keys) and known formats.
    let env: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let redactor = Redactor::new(&env);
    for path in session_files(source, dir)? {
        report.files += 1;
        let scan = journal::import_file(store, prices, &redactor, source, &path)?;
        if scan.shrunk {
            report.shrunk.push(path.display().to_string());
        }
        if let Some(copy_of) = scan.copy_of {
            report.copies.push(ImportedCopy {
                path: path.display().to_string(),
                copy_of,
            });
        }
        report.redacted += scan.redacted as u64;
        if scan.lines > 0 {
            report.files_read += 1;
        }
        report.new_sessions += u64::from(scan.new_session);
        report.lines += scan.lines;
        report.malformed += scan.malformed;
        report.unknown += scan.unknown;
        report.events += scan.events;
        report.responses += scan.responses;
        report.cost_usd += scan.cost_usd;
    }
    Ok(report)
}

/// Imports what is new from each tool's default folder that has sessions (the app's "Import
/// sessions" action).
pub fn import_defaults(
    store: &Store,
    prices: &PriceTable,
) -> Result<Vec<SourceReport>, ImportError> {
    let mut reports = Vec::new();
    for source in [Source::ClaudeCode, Source::Codex] {
        if let Some(dir) = source.default_dir()
            && source.sessions_dir(&dir).is_dir()
        {
            reports.push(import_dir(store, prices, source, &dir)?);
        }
    }
    Ok(reports)
}
