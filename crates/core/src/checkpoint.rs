//! Checkpoints after tool calls that changed the worktree.

use crate::{CoreError, Emitter};
use bosun_protocol::{CallId, CheckpointCreated, EventMsg, Warning};
use bosun_tools::Touched;
use bosun_workspace::{ChangeHint, TaskWorktree, WatchCoverage};

/// Owns the task's worktree between tool calls; git work runs on the blocking pool.
pub struct Checkpointer {
    worktree: Option<TaskWorktree>,
    /// Checkpoints written in this run of the task: whether it changed anything.
    created: u32,
    /// A resumed task continues the same run: what it changed before the crash counts.
    changed_before: bool,
    /// Paths the checkpoints of this run changed (for the tests related to them).
    changed: std::collections::BTreeSet<String>,
    /// The commit this run started from (a continuation's: the task's last checkpoint).
    start: String,
    /// The files of the last checkpoint written (empty when the last write changed nothing).
    last_files: Vec<String>,
}

impl Checkpointer {
    pub fn new(worktree: TaskWorktree, changed_before: bool) -> Self {
        let start = worktree.latest_commit();
        Checkpointer {
            worktree: Some(worktree),
            created: 0,
            changed_before,
            changed: Default::default(),
            start,
            last_files: Vec::new(),
        }
    }

    /// Starts watching the worktree for the rest of the run, so a command's checkpoint looks only
    /// at what changed (the watcher stops when the worktree is released or dropped). Says in a
    /// `warning` when the watch cannot cover the worktree (`watch_partial`) or there is no
    /// inotify (`watch_unavailable`); command checkpoints walk the tree then.
    pub async fn watch(&mut self, emitter: &Emitter) -> Result<(), CoreError> {
        let report = self
            .on_worktree("watcher start", |wt| Ok(wt.watch()))
            .await?;
        warn_coverage(&report.coverage, emitter)
    }

    /// Writes a checkpoint if `touched` says something may have changed, and emits
    /// `checkpoint_created` when something did.
    pub async fn after_tool(
        &mut self,
        touched: Touched,
        tool: &str,
        call_id: &str,
        emitter: &Emitter,
    ) -> Result<(), CoreError> {
        let message = format!("bosun: after {tool} ({call_id})");
        self.write(touched, message, Some(call_id), emitter).await
    }

    /// At the end of a task: catches changes no tool reported (a background process that kept
    /// writing after its command returned), so the last checkpoint is the final state. The
    /// watcher stops first, so this one walks the tree: it also sees what inotify cannot (a
    /// file written through a hard link from outside the worktree, or through a mapping).
    pub async fn final_state(&mut self, emitter: &Emitter) -> Result<(), CoreError> {
        self.on_worktree("watcher stop", |wt| {
            wt.unwatch();
            Ok(())
        })
        .await?;
        self.write(Touched::Unknown, "bosun: final state".into(), None, emitter)
            .await
    }

    async fn write(
        &mut self,
        touched: Touched,
        message: String,
        call_id: Option<&str>,
        emitter: &Emitter,
    ) -> Result<(), CoreError> {
        let hint = match touched {
            Touched::Nothing => return Ok(()),
            Touched::Paths(p) if p.is_empty() => return Ok(()),
            Touched::Paths(p) => ChangeHint::Paths(p),
            Touched::Unknown => ChangeHint::Unknown,
        };
        let (checkpoint, notice) = self
            .on_worktree("checkpoint", move |wt| {
                let checkpoint = wt.checkpoint(&hint, &message)?;
                Ok((checkpoint, wt.take_watch_notice()))
            })
            .await?;
        if let Some(coverage) = notice {
            warn_coverage(&coverage, emitter)?;
        }
        self.last_files.clear();
        if let Some(cp) = checkpoint {
            self.record(cp, call_id, emitter)?;
        }
        Ok(())
    }

    /// Three-way merges a sub-agent's changes (from `base` to `theirs`) into the worktree (see
    /// [`TaskWorktree::merge_in`]); a clean merge is the next checkpoint, credited to `call_id`.
    pub async fn merge_in(
        &mut self,
        base: &str,
        theirs: &str,
        message: String,
        call_id: Option<&str>,
        emitter: &Emitter,
    ) -> Result<bosun_workspace::MergedIn, CoreError> {
        let (base, theirs) = (base.to_string(), theirs.to_string());
        let merged = self
            .on_worktree("merge", move |wt| wt.merge_in(&base, &theirs, &message))
            .await?;
        if let bosun_workspace::MergedIn::Merged {
            checkpoint: Some(cp),
            ..
        } = &merged
        {
            self.record(cp.clone(), call_id, emitter)?;
        }
        Ok(merged)
    }

    /// Puts `paths` back as they are in `from` (a sub-agent's changes outside its scope) and
    /// records that as the next checkpoint. Returns the paths rewritten.
    pub async fn put_back(
        &mut self,
        from: &str,
        paths: Vec<String>,
        call_id: Option<&str>,
        emitter: &Emitter,
    ) -> Result<Vec<String>, CoreError> {
        let from = from.to_string();
        let (rewritten, checkpoint) = self
            .on_worktree("put back", move |wt| {
                wt.put_back(&from, &paths, "bosun: put back changes outside the scope")
            })
            .await?;
        if let Some(cp) = checkpoint {
            self.record(cp, call_id, emitter)?;
        }
        Ok(rewritten)
    }

    /// The files the checkpoint just written changed, for a check after a command.
    pub fn last_checkpoint_files(&self) -> Vec<String> {
        self.last_files.clone()
    }

    fn record(
        &mut self,
        cp: bosun_workspace::Checkpoint,
        call_id: Option<&str>,
        emitter: &Emitter,
    ) -> Result<(), CoreError> {
        self.created += 1;
        self.changed.extend(cp.files.iter().cloned());
        self.last_files = cp.files.clone();
        emitter.emit(EventMsg::CheckpointCreated(CheckpointCreated {
            checkpoint: cp.n,
            commit: cp.commit,
            files: cp.files,
            call_id: call_id.map(|c| CallId(c.to_string())),
        }))?;
        Ok(())
    }

    /// The commit holding the worktree's recorded state: the latest checkpoint, else the base.
    pub fn latest_commit(&self) -> Option<String> {
        self.worktree.as_ref().map(TaskWorktree::latest_commit)
    }

    /// Paths this run's checkpoints changed, sorted.
    pub fn changed_paths(&self) -> Vec<String> {
        self.changed.iter().cloned().collect()
    }

    /// Whether this run of the task changed the worktree: its recorded state differs from the
    /// one it started from (a file written and then deleted again is no change; for a resumed
    /// task, what it changed before the crash counts).
    pub fn changed_anything(&self) -> bool {
        if self.changed_before {
            return true;
        }
        if self.created == 0 {
            return false;
        }
        let Some(wt) = &self.worktree else {
            return true;
        };
        let end = wt.latest_commit();
        if end == self.start {
            return false;
        }
        // Same tree, other commit: the checkpoints undid each other. When git cannot tell, the
        // checkpoints say it changed.
        match (
            bosun_workspace::tree_id(&wt.repo_root, &self.start),
            bosun_workspace::tree_id(&wt.repo_root, &end),
        ) {
            (Ok(a), Ok(b)) => a != b,
            _ => true,
        }
    }

    /// Puts back whatever a command changed of the worktree's git wiring (its `.git` file, its
    /// git directory's HEAD, config, alternates) and says so in a `warning` event.
    pub async fn verify(&mut self, emitter: &Emitter) -> Result<(), CoreError> {
        let repaired = self
            .on_worktree("worktree check", TaskWorktree::verify)
            .await?;
        if !repaired.is_empty() {
            emitter.emit(EventMsg::Warning(Warning {
                code: "worktree_git_repaired".into(),
                message: format!(
                    "a command changed the worktree's git wiring ({}); Bosun put it back, and its own git calls never use it",
                    repaired.join("; ")
                ),
            }))?;
        }
        Ok(())
    }

    /// Clears set-id bits anywhere in the worktree (ignored files included), for commands the
    /// sandbox could not stop from setting them; says so in a `warning` when it found some.
    pub async fn strip_set_id(&mut self, emitter: &Emitter) -> Result<(), CoreError> {
        let stripped = self
            .on_worktree("set-id sweep", |wt| wt.strip_set_id_bits())
            .await?;
        if !stripped.is_empty() {
            emitter.emit(EventMsg::Warning(Warning {
                code: "set_id_bits_cleared".into(),
                message: format!(
                    "a command made files setuid or setgid ({}); the bits were cleared",
                    stripped.join(", ")
                ),
            }))?;
        }
        Ok(())
    }

    /// Runs `work` on the worktree on the blocking pool (git work is blocking) and takes the
    /// worktree back, whatever `work` returned.
    async fn on_worktree<T: Send + 'static>(
        &mut self,
        what: &'static str,
        work: impl FnOnce(&mut TaskWorktree) -> Result<T, bosun_workspace::WorkspaceError>
        + Send
        + 'static,
    ) -> Result<T, CoreError> {
        let mut wt = self
            .worktree
            .take()
            .ok_or_else(|| CoreError::Internal("the worktree was lost after a failure".into()))?;
        let (wt, result) = tokio::task::spawn_blocking(move || {
            let r = work(&mut wt);
            (wt, r)
        })
        .await
        .map_err(|e| CoreError::Internal(format!("{what} thread failed: {e}")))?;
        self.worktree = Some(wt);
        Ok(result?)
    }

    /// Gives the worktree back for recycling once the task is over.
    pub async fn release(mut self) -> Result<(), CoreError> {
        if let Some(wt) = self.worktree.take() {
            tokio::task::spawn_blocking(move || wt.release())
                .await
                .map_err(|e| CoreError::Internal(format!("release thread failed: {e}")))??;
        }
        Ok(())
    }
}

/// A `warning` when the watcher does not cover the worktree (command checkpoints walk it).
fn warn_coverage(coverage: &WatchCoverage, emitter: &Emitter) -> Result<(), CoreError> {
    let (code, message) = match coverage {
        WatchCoverage::Full { .. } => return Ok(()),
        WatchCoverage::Partial { watched, total } => (
            "watch_partial",
            format!(
                "the worktree has {total} directories to watch and only {watched} could be (BOSUN_WATCH_MAX, or the kernel's fs.inotify.max_user_watches); checkpoints after commands walk the whole tree instead"
            ),
        ),
        // Watching is for Linux: elsewhere the walk is the plan, not news.
        WatchCoverage::Unavailable { .. } if !cfg!(target_os = "linux") => return Ok(()),
        WatchCoverage::Unavailable { reason } => (
            "watch_unavailable",
            format!(
                "the worktree is not watched ({reason}); checkpoints after commands walk the whole tree instead"
            ),
        ),
    };
    emitter.emit(EventMsg::Warning(Warning {
        code: code.into(),
        message,
    }))?;
    Ok(())
}
