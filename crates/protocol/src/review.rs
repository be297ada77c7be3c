//! Review: what a task changed against its base, file by file and hunk by hunk, with the user's
//! verdicts, comments and where each change came from; and the merge of the accepted result.
//!
//! Verdicts and comments are events in the task's journal ([`ReviewEvent`]); the review state is
//! the fold of those events over the diff between the task's base and its latest checkpoint. A
//! rejected hunk is taken out of the worktree (a checkpoint records it), so the agent and the tests
//! see exactly what the user kept; an accepted one is only marked. Merging writes the base plus the
//! accepted hunks: unreviewed hunks are left out.

use crate::CallId;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How a file differs between the base and the latest checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum FileStatus {
    Added,
    Modified,
    Deleted,
    /// Moved (possibly with edits); `old_path` says from where.
    Renamed,
    /// Only the executable bit changed.
    ModeChanged,
    /// A file became a symlink or the other way round.
    TypeChanged,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum HunkState {
    Unreviewed,
    Accepted,
    Rejected,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum FileReviewState {
    Unreviewed,
    Accepted,
    Rejected,
    /// Some hunks decided, others not, or accepted and rejected ones mixed.
    Partly,
}

/// What a hunk changes. Every change of a file is a hunk, so each can be accepted or rejected on
/// its own: lines of text, and the parts that are not lines (mode, name, binary content).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum HunkKind {
    /// Lines removed and/or added (an added or deleted text file is one text hunk).
    Text,
    /// The executable bit (`old_mode` → `new_mode` on the file).
    Mode,
    /// The move from `old_path` to `path`.
    Rename,
    /// The whole content of a binary file (or a symlink target, or a file that became a symlink).
    Binary,
    /// An empty file added or deleted (there are no lines to show).
    Empty,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum LineKind {
    Context,
    Added,
    Removed,
}

/// One line of a hunk. Text is shown lossily when the file is not UTF-8; line endings are not
/// part of `text` (`\r` of a CRLF line is kept at its end, so CRLF changes stay visible).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct DiffLine {
    pub kind: LineKind,
    /// 1-based line number in the base version (context and removed lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub old_line: Option<u32>,
    /// 1-based line number in the latest version (context and added lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub new_line: Option<u32>,
    pub text: String,
    /// The line is the last of its file and has no newline at its end.
    #[serde(default)]
    pub no_newline: bool,
}

/// Which step of the task made (part of) a hunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct Provenance {
    /// The checkpoint that recorded the change.
    pub checkpoint: u32,
    /// The tool call that made it (none for a checkpoint Bosun wrote itself, e.g. a restore).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub call_id: Option<CallId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool: Option<String>,
    /// The call's arguments in a line (`edit_file src/lib.rs`, `run_command cargo fmt`), or what
    /// wrote the checkpoint (`Restore checkpoint 3`, `Rejected 1 hunk of a.txt`).
    pub summary: String,
    /// The assistant text the model wrote before that call (capped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub assistant_text: Option<String>,
    /// Who let the call run: `policy (allow rule …)`, `you: approved once`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub approval: Option<String>,
    /// `seq` of the call's `tool_call_begin` event (or the checkpoint event): where to jump in the
    /// timeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub seq: Option<u64>,
}

/// A hunk: one change of a file, its verdict and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ReviewHunk {
    /// 1-based position in the file's hunk list (what `bosun accept TASK PATH:N` takes).
    pub number: u32,
    /// Stable while the change itself is the same (its removed and added lines, its path, and
    /// which of identical changes in the file it is), so a verdict survives unrelated edits.
    pub id: String,
    pub kind: HunkKind,
    pub state: HunkState,
    /// `@@ -old_start,old_lines +new_start,new_lines @@` for text; 0 for the other kinds.
    pub old_start: u32,
    pub old_lines: u32,
    pub new_start: u32,
    pub new_lines: u32,
    /// `@@ -1,3 +1,4 @@`, `mode 100644 → 100755`, `rename a.txt → b.txt`, `binary 12 B → 40 B`.
    pub header: String,
    pub added: u32,
    pub removed: u32,
    /// With context (3 lines). Empty when the listing was asked without lines.
    pub lines: Vec<DiffLine>,
    pub provenance: Vec<Provenance>,
}

/// A changed file (or one whose changes were all rejected).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ReviewFile {
    /// Path in the latest version (the new name for a rename; the old path for a deletion).
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub old_path: Option<String>,
    pub status: FileStatus,
    pub binary: bool,
    /// Not valid UTF-8: lines are shown lossily (changes are still exact).
    pub non_utf8: bool,
    /// Git file modes (`0o100644`, `0o100755`, `0o120000`); none where the file does not exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub old_mode: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub new_mode: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub old_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub new_size: Option<u64>,
    pub added: u32,
    pub removed: u32,
    pub state: FileReviewState,
    /// Over the size limit: listed with its counts, its lines load when the file is opened.
    pub large: bool,
    pub hunks: Vec<ReviewHunk>,
}

/// One file's diff, opened: its hunks with lines, and both whole texts (for more context and the
/// side-by-side view) unless the file is binary or beyond the limit for full texts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct FileDiff {
    pub file: ReviewFile,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub old_text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub new_text: Option<String>,
}

/// A comment on a line or range of lines of the latest version of a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ReviewComment {
    /// The `seq` of the event that added it.
    #[ts(type = "number")]
    pub id: u64,
    pub path: String,
    /// 1-based, inclusive, in the file as it was at `checkpoint`.
    pub start_line: u32,
    pub end_line: u32,
    /// The latest checkpoint when the comment was made (none: the base).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub checkpoint: Option<u32>,
    /// The commented lines, as they were.
    pub quote: String,
    pub body: String,
    pub created_at: String,
    /// When "request changes" sent it to the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub sent_at: Option<String>,
    /// The agent changed those lines after the comment was sent.
    pub resolved: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ReviewCounts {
    pub files: u32,
    pub hunks: u32,
    pub accepted: u32,
    pub rejected: u32,
    pub unreviewed: u32,
    pub added: u32,
    pub removed: u32,
}

/// The review of a task: what `bosun review TASK --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct Review {
    pub task_id: String,
    pub base_commit: String,
    /// The branch the task was started from, when it was started from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub base_ref: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub latest_checkpoint: Option<u32>,
    pub files: Vec<ReviewFile>,
    pub comments: Vec<ReviewComment>,
    pub counts: ReviewCounts,
    /// A description of the last verdict or comment `undo` would take back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub undo: Option<String>,
    /// The task is running: verdicts wait until it stops.
    pub running: bool,
    /// The task was merged (the latest merge), if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub merged: Option<MergeOutcome>,
    /// The worktree was removed (discarded, or removed after a merge).
    pub worktree_removed: bool,
    /// The branch the task is based on moved since its base (none: it did not, the base is a
    /// commit rather than a branch, or the task was merged or its worktree removed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub base_moved: Option<BaseMoved>,
}

/// The branch a task is based on, found somewhere else than the task's base: the user committed
/// to it (`ahead` commits), or reset or force-pushed it (`rewritten`). A rebase moves the task
/// onto its tip; a merge without one merges onto the tip as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct BaseMoved {
    /// The branch (`main`): the one the task was started from, or last rebased onto.
    pub branch: String,
    /// The task's base commit.
    pub base_commit: String,
    /// The branch's tip now.
    pub tip: String,
    /// Commits on the branch that the base does not have (`git rev-list base..tip`).
    pub ahead: u32,
    /// The base is no longer on the branch (it was reset or rewritten and force-pushed).
    pub rewritten: bool,
}

/// The app tells its window that branches of a repository may have moved (the event
/// `bosun://refs-changed`): a review of a task of that repository looks again whether its base
/// branch moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct RefsChanged {
    /// The repository, as a task's `repo` names it.
    pub repo: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum MergeMode {
    /// One commit with the whole accepted change.
    #[default]
    Squash,
    /// One commit per step (checkpoint) that made accepted hunks, with that step's summary.
    PerStep,
}

/// What to merge where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct MergeRequest {
    /// A branch of the user's repository; created from the task's base when it does not exist.
    /// None: the branch the task was started from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub into: Option<String>,
    pub mode: MergeMode,
    /// The squashed commit's message (default: from the task's prompt and summary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub message: Option<String>,
    /// Merge although a required check of the accepted tree fails: the reason, kept in the
    /// journal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub override_checks: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct MergeOutcome {
    pub branch: String,
    /// The branch did not exist and was created from the task's base.
    pub created: bool,
    /// The commits written, oldest first.
    pub commits: Vec<String>,
    pub files: u32,
    pub hunks: u32,
    /// Unreviewed hunks that were left out.
    pub left_out: u32,
    /// The branch is the one checked out in the user's repository, whose working tree and index
    /// were updated (only ever when they were clean).
    pub checked_out: bool,
    /// The task's worktree and its disk use, to offer removing it.
    pub worktree: String,
    #[ts(type = "number")]
    pub worktree_bytes: u64,
}

/// A step of the task that wrote a checkpoint: the checkpoint timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct TimelineCheckpoint {
    pub n: u32,
    pub commit: String,
    pub files: Vec<String>,
    pub provenance: Provenance,
    pub created_at: String,
}

/// A rejected hunk as recorded in the journal: enough to show it and to put it back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct RejectedHunk {
    pub hunk: ReviewHunk,
    /// The file's entry in the latest checkpoint before the rejection (path, mode, blob), so an
    /// undo can put non-text changes back exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub old_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub before_blob: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub before_mode: Option<u32>,
}

/// A verdict, comment, merge or discard: an event in the task's journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "action", rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum ReviewEvent {
    Accept {
        path: String,
        hunks: Vec<String>,
    },
    /// Hunks taken out of the worktree; `checkpoint` records the result.
    Reject {
        path: String,
        hunks: Vec<RejectedHunk>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        checkpoint: Option<u32>,
    },
    /// Accepted hunks back to unreviewed.
    Reset {
        path: String,
        hunks: Vec<String>,
        /// The `seq` of the action this takes back, when it is an undo.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "number")]
        undoes: Option<u64>,
    },
    /// Rejected hunks put back into the worktree.
    Unreject {
        path: String,
        hunks: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        checkpoint: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "number")]
        undoes: Option<u64>,
    },
    Comment {
        comment: ReviewComment,
    },
    Uncomment {
        #[ts(type = "number")]
        id: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "number")]
        undoes: Option<u64>,
    },
    /// The open comments were sent to the agent as one message.
    RequestChanges {
        #[ts(type = "Array<number>")]
        comments: Vec<u64>,
    },
    Merge {
        outcome: MergeOutcome,
        /// The merge went ahead although required checks of the accepted tree failed: why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        override_checks: Option<String>,
        /// The checks of the merged tree, as the gate saw them.
        #[serde(default)]
        checks: Vec<crate::CheckFinished>,
    },
    /// The task's changes were moved onto a new base; conflicting files hold conflict markers.
    Rebase {
        old_base: String,
        new_base: String,
        conflicts: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        checkpoint: Option<u32>,
        /// What the task was rebased onto, as given (a branch, a commit): from then on the task
        /// follows that branch, if it is one (none in journals written before this was kept).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        onto: Option<String>,
    },
    /// The worktree (and the `bosun/<task>` branch) were removed.
    RemoveWorktree {
        #[ts(type = "number")]
        freed_bytes: u64,
    },
    /// A removed worktree was made again from the task's checkpoints (`bosun restore`).
    RecreateWorktree {
        /// The checkpoint it holds (0: the base).
        checkpoint: u32,
    },
}
