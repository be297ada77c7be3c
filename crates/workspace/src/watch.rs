//! Watching a running task's worktree, so the checkpoint after a command re-hashes only what
//! changed instead of walking the whole tree.
//!
//! [`TaskWorktree::watch`] puts a non-recursive inotify watch (through `notify`) on every
//! directory the command checkpoint's stat walk would enter ([`dirs`]: ignore-aware, `.git`
//! never entered) and on every directory holding a file of the latest checkpoint. Events mark
//! paths dirty; a directory that appears is watched at the next checkpoint (before anything is
//! looked at) and looked at whole, so what happened in it before its watch is seen too.
//!
//! At a command checkpoint the dirty paths are taken and scanned like an edit tool's paths
//! ([`ChangeHint::Paths`]): exactly those files, a directory looked at whole. Before they are
//! taken, the watcher drains: a file is created in a private directory outside the worktree
//! (`$BOSUN_HOME/workspace/<repo>/tasks/<task>/watch`), watched by the same inotify instance.
//! Its queue is in order, so once the event thread has seen that file it has seen every event
//! of every change made before it, whatever the load on the machine. Measured by `bosun bench
//! checkpoint` (100,000 files): 0.1 to 1 ms, where waiting for the events to go quiet would cost
//! 20 ms at least and could still be overtaken by a starved event thread (a test that skips the
//! wait misses changes). A barrier not seen within 200 ms counts as lost events: the
//! checkpoint walks. Nothing is ever written into the worktree for this.
//!
//! Correctness first: the checkpoint walks the tree instead ([`WalkReason`]) the first time after
//! the watcher starts (what changed before the watches were in place only a walk sees: a new
//! task, a resumed one after a restart), when events were lost (queue overflow, notify's rescan,
//! any watcher error, [`Watcher::inject_overflow`]), when ignore rules changed (a `.gitignore`,
//! `info/exclude` or the user's excludes file: the watches are set up again first), when a nested
//! repository is involved, when too many paths changed to be cheaper than a walk, and for as
//! long as coverage is partial: more directories than the cap (`BOSUN_WATCH_MAX`, default
//! 8192, and never more than the kernel's `max_user_watches` less a margin), or no inotify at
//! all. After the walk of a checkpoint that found its changes from a walk, the watches (in
//! place before it began) take over again.
//!
//! What inotify cannot see is not seen by command checkpoints: a file written through a shared
//! mapping after its descriptor was closed, or through a hard link from outside the worktree (or
//! from a directory that is not watched). The stat walk sees those (as changed stat data), and
//! a task's final checkpoint always walks: [`TaskWorktree::release`] stops the watcher first
//! (and so does core's final checkpoint of a run).

mod backend;
mod dirs;
mod events;
mod refs;

pub use refs::RefsWatcher;

use crate::task::{TaskWorktree, tree_of};
use backend::{AddError, Backend, Delivery};
use dirs::IgnoreFiles;
use events::{Shared, State};
use git2::Tree;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Directories watched at most when `BOSUN_WATCH_MAX` does not say.
pub const DEFAULT_WATCH_MAX: usize = 8192;

/// How long a checkpoint waits for the event thread to confirm it has read every event.
const DRAIN_TIMEOUT: Duration = Duration::from_millis(200);

/// How many directories a watcher may watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchLimits {
    pub max_dirs: usize,
}

impl WatchLimits {
    /// `BOSUN_WATCH_MAX` (default [`DEFAULT_WATCH_MAX`]), bounded by the kernel's
    /// `/proc/sys/fs/inotify/max_user_watches` less a margin for the user's other watchers.
    pub fn from_env() -> WatchLimits {
        let kernel = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok());
        WatchLimits::from_values(std::env::var("BOSUN_WATCH_MAX").ok().as_deref(), kernel)
    }

    /// [`WatchLimits::from_env`] from the variable's value and the kernel's limit.
    pub fn from_values(env: Option<&str>, max_user_watches: Option<usize>) -> WatchLimits {
        let asked = env
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(DEFAULT_WATCH_MAX);
        let kernel = max_user_watches
            .map(|k| k.saturating_sub((k / 10).max(1024)))
            .unwrap_or(usize::MAX);
        WatchLimits {
            max_dirs: asked.min(kernel),
        }
    }
}

/// How much of the worktree the watcher covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchCoverage {
    /// Every directory a command checkpoint looks at is watched.
    Full { watched: usize },
    /// The worktree has `total` directories to watch and only `watched` could be (the cap, or
    /// the kernel's limit, was reached). A partial watch cannot say what changed, so it is
    /// stopped and command checkpoints walk the tree; worth a `watch_partial` warning.
    Partial { watched: usize, total: usize },
    /// No watcher (no inotify, or it failed): command checkpoints walk the tree.
    Unavailable { reason: String },
}

/// What starting a watcher found, and what it cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchReport {
    pub coverage: WatchCoverage,
    pub setup: Duration,
}

/// Why a command checkpoint walked the tree rather than taking the watcher's paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkReason {
    /// No watcher was started (or it was stopped).
    NoWatcher,
    /// No inotify: see [`WatchCoverage::Unavailable`].
    Unavailable,
    /// More directories than may be watched: see [`WatchCoverage::Partial`].
    Partial,
    /// The first command checkpoint after the watches were put in place.
    Starting,
    /// Events were lost: the queue overflowed, or notify asked for a rescan.
    EventsLost,
    /// The watcher reported an error, or the worktree itself was moved.
    WatcherFailed,
    /// The event thread did not confirm within 200 ms that it had read every event.
    NotDrained,
    /// A `.gitignore`, `info/exclude` or the user's excludes file changed.
    IgnoreRulesChanged,
    /// A path in (or the `.git` of) a nested repository changed.
    NestedRepository,
    /// More changed paths than a walk costs.
    TooManyChanges,
    /// A changed path was not UTF-8.
    NotUtf8,
    /// A checkpoint recorded a file where no directory was watched (now it is).
    UnwatchedDirectory,
    /// The previous command checkpoint failed after taking the watcher's paths.
    Retry,
}

/// How the latest command checkpoint ([`ChangeHint::Unknown`]) found its changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandScan {
    /// From the watcher: `paths` paths looked at, after waiting `drain` for the event thread.
    Events { paths: usize, drain: Duration },
    /// From a stat walk of the whole tree.
    Walk(WalkReason),
}

/// What a command checkpoint is to look at.
pub(crate) enum Take {
    Paths(Vec<String>, Duration),
    Walk(WalkReason),
}

/// The watcher of one task's worktree (see the module docs).
pub struct Watcher {
    root: PathBuf,
    barrier_dir: PathBuf,
    rules: IgnoreFiles,
    rules_stamp: Vec<Option<(u64, i64, i64, u64)>>,
    limits: WatchLimits,
    backend: Option<Backend>,
    shared: Arc<Shared>,
    coverage: WatchCoverage,
    /// The next command checkpoint walks, for this reason (the first one always does).
    walk_next: Option<WalkReason>,
    barrier_n: u64,
    /// Coverage got worse since it was last reported.
    notice: Option<WatchCoverage>,
}

impl Watcher {
    fn new(root: &Path, barrier_dir: PathBuf, rules: IgnoreFiles, limits: WatchLimits) -> Watcher {
        Watcher {
            shared: Arc::new(new_shared(root, &barrier_dir)),
            root: root.to_path_buf(),
            barrier_dir,
            rules,
            rules_stamp: Vec::new(),
            limits,
            backend: None,
            coverage: WatchCoverage::Unavailable {
                reason: "not started".into(),
            },
            walk_next: Some(WalkReason::Starting),
            barrier_n: 0,
            notice: None,
        }
    }

    /// How much of the worktree is watched.
    pub fn coverage(&self) -> &WatchCoverage {
        &self.coverage
    }

    /// Test hook: behaves as if the kernel's event queue had overflowed, so the next command
    /// checkpoint sets the watches up again and walks the tree.
    #[doc(hidden)]
    pub fn inject_overflow(&self) {
        self.shared.deliver(Delivery::Lost);
    }

    /// Test hook: the watched directories, worktree-relative ("" is the root), sorted.
    #[doc(hidden)]
    pub fn watched_dirs(&self) -> Vec<String> {
        self.shared
            .state
            .lock()
            .map(|s| s.watched.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// (Re)creates the backend and watches every directory there is to watch.
    fn setup(&mut self, tree: &Tree<'_>) {
        self.backend = None;
        self.shared = Arc::new(new_shared(&self.root, &self.barrier_dir));
        self.walk_next = Some(WalkReason::Starting);
        if let Err(e) = fresh_dir(&self.barrier_dir) {
            return self.degrade(WatchCoverage::Unavailable {
                reason: format!("cannot prepare {}: {e}", self.barrier_dir.display()),
            });
        }
        let shared = Arc::clone(&self.shared);
        let mut backend = match Backend::start(move |d| shared.deliver(d)) {
            Ok(b) => b,
            Err(reason) => return self.degrade(WatchCoverage::Unavailable { reason }),
        };
        if let Err(e) = backend.add(vec![self.barrier_dir.clone()]) {
            return self.degrade(unavailable(e));
        }
        // The rules as the walk reads them: a change after this point is noticed.
        self.rules_stamp = self.rules.stamp();
        let mut all: BTreeSet<String> = dirs::walk(&self.root, &self.rules, None)
            .dirs
            .into_iter()
            .collect();
        all.insert(String::new());
        let tracked = dirs::tree_dirs(&self.root, tree, &all);
        all.extend(tracked);
        if all.len() > self.limits.max_dirs {
            return self.degrade(WatchCoverage::Partial {
                watched: self.limits.max_dirs,
                total: all.len(),
            });
        }
        let nested = dirs::nested_repositories(&self.root, all.iter());
        if let Ok(mut state) = self.shared.state.lock() {
            state.watched = all.clone();
            state.nested = nested;
        }
        let total = all.len();
        match backend.add(all.iter().map(|d| self.root.join(d)).collect()) {
            Ok(gone) => self.forget(&gone),
            Err(AddError::Limit { added }) => {
                return self.degrade(WatchCoverage::Partial {
                    watched: added,
                    total,
                });
            }
            Err(e) => return self.degrade(unavailable(e)),
        }
        self.coverage = WatchCoverage::Full {
            watched: self.shared.state.lock().map_or(total, |s| s.watched.len()),
        };
        self.backend = Some(backend);
    }

    /// Stops watching: the coverage is no longer full, and a notice says so once.
    fn degrade(&mut self, coverage: WatchCoverage) {
        self.backend = None;
        self.coverage = coverage.clone();
        self.notice = Some(coverage);
    }

    /// Drops from the mirror the directories that were gone before they could be watched.
    fn forget(&self, gone: &[PathBuf]) {
        if gone.is_empty() {
            return;
        }
        if let Ok(mut state) = self.shared.state.lock() {
            for path in gone {
                if let Some(rel) = dirs::relative(&self.root, path) {
                    state.watched.remove(&rel);
                }
            }
        }
    }

    /// What a command checkpoint is to look at: the paths that changed since the last one, or
    /// a walk. `tree` is the latest checkpoint's (for setting the watches up again).
    pub(crate) fn take(&mut self, tree: &Tree<'_>) -> Take {
        if self.backend.is_none() {
            return Take::Walk(match self.coverage {
                WatchCoverage::Partial { .. } => WalkReason::Partial,
                WatchCoverage::Unavailable { .. } => WalkReason::Unavailable,
                WatchCoverage::Full { .. } => WalkReason::NoWatcher,
            });
        }
        let started = Instant::now();
        let drained = self.barrier();
        let taken = match self.shared.state.lock() {
            Ok(mut state) => Some(take_state(&mut state)),
            Err(_) => None,
        };
        let Some(mut taken) = taken else {
            self.setup(tree);
            self.walk_next = None;
            return Take::Walk(WalkReason::WatcherFailed);
        };
        if !drained {
            taken.broken.get_or_insert(WalkReason::NotDrained);
        }
        if taken.broken.is_none() && self.rules.stamp() != self.rules_stamp {
            taken.broken = Some(WalkReason::IgnoreRulesChanged);
        }
        if let Some(reason) = taken.broken {
            // The watches go up before the walk, so the walk's result is theirs to follow.
            self.setup(tree);
            self.walk_next = None;
            return Take::Walk(reason);
        }
        // New directories are watched before anything is looked at.
        if let Err(reason) = self.watch_appeared(&taken.appeared, tree) {
            // Whatever the watches are now, they were in place before this walk.
            self.walk_next = None;
            return Take::Walk(reason);
        }
        let Ok(mut state) = self.shared.state.lock() else {
            self.setup(tree);
            self.walk_next = None;
            return Take::Walk(WalkReason::WatcherFailed);
        };
        for dir in &taken.git_touched {
            if std::fs::symlink_metadata(self.root.join(dir).join(".git")).is_ok() {
                state.nested.insert(dir.clone());
            } else {
                state.nested.remove(dir);
            }
        }
        if let Some(reason) = self.walk_next.take().or(taken.walk) {
            return Take::Walk(reason);
        }
        let mut paths = Vec::with_capacity(taken.dirty.len());
        for (path, whole) in taken.dirty {
            // A watched directory's own metadata: its entries have watches of their own.
            if !whole && state.watched.contains(&path) && is_dir(&self.root, &path) {
                continue;
            }
            if in_nested(&state.nested, &path) {
                return Take::Walk(WalkReason::NestedRepository);
            }
            paths.push(path);
        }
        Take::Paths(paths, started.elapsed())
    }

    /// Creates a file in the barrier directory and waits until the event thread has seen it:
    /// every event queued before it has then been delivered.
    fn barrier(&mut self) -> bool {
        self.barrier_n += 1;
        let n = self.barrier_n;
        let file = self.barrier_dir.join(format!("barrier-{n}"));
        if std::fs::File::create(&file).is_err() {
            return false;
        }
        let deadline = Instant::now() + DRAIN_TIMEOUT;
        let seen = {
            let Ok(mut state) = self.shared.state.lock() else {
                return false;
            };
            while state.barrier_seen < n {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                match self.shared.barrier.wait_timeout(state, left) {
                    Ok((s, _)) => state = s,
                    Err(_) => return false,
                }
            }
            state.barrier_seen >= n
        };
        let _ = std::fs::remove_file(&file);
        seen
    }

    /// Watches the directories among `appeared` (and below them) that the walk would enter.
    fn watch_appeared(
        &mut self,
        appeared: &BTreeSet<String>,
        tree: &Tree<'_>,
    ) -> Result<(), WalkReason> {
        let mut reachable = crate::safe_fs::Reachable::default();
        let dirs: BTreeSet<String> = appeared
            .iter()
            .filter(|p| reachable.check(&self.root, p) && is_dir(&self.root, p))
            .cloned()
            .collect();
        if dirs.is_empty() {
            return Ok(());
        }
        // Listed again once watched: a directory made below one of them between the listing and
        // its watch (a background process of a command run without the sandbox) gets its watch
        // too. Its content is looked at, since the directory that appeared is looked at whole.
        let mut known = 0;
        for _ in 0..4 {
            let found = dirs::walk(&self.root, &self.rules, Some(&dirs)).dirs;
            if found.len() == known {
                return Ok(());
            }
            known = found.len();
            self.add_watches(found, tree)?;
        }
        Ok(())
    }

    /// Watches `dirs` (those not watched yet); past the cap, coverage becomes partial.
    fn add_watches(&mut self, dirs: Vec<String>, tree: &Tree<'_>) -> Result<(), WalkReason> {
        let Ok(mut state) = self.shared.state.lock() else {
            return Err(WalkReason::WatcherFailed);
        };
        let new: Vec<String> = dirs
            .into_iter()
            .filter(|d| !state.watched.contains(d))
            .collect();
        if new.is_empty() {
            return Ok(());
        }
        let watched = state.watched.len();
        if watched + new.len() > self.limits.max_dirs {
            drop(state);
            self.degrade(WatchCoverage::Partial {
                watched,
                total: watched + new.len(),
            });
            return Err(WalkReason::Partial);
        }
        // In the mirror before the watch exists: an event removing one of them, delivered
        // once it does, then takes it out again.
        state.watched.extend(new.iter().cloned());
        let nested = dirs::nested_repositories(&self.root, new.iter());
        state.nested.extend(nested);
        drop(state);
        let Some(backend) = self.backend.as_mut() else {
            return Err(WalkReason::NoWatcher);
        };
        match backend.add(new.iter().map(|d| self.root.join(d)).collect()) {
            Ok(gone) => {
                self.forget(&gone);
                Ok(())
            }
            Err(AddError::Limit { added }) => {
                self.degrade(WatchCoverage::Partial {
                    watched: watched + added,
                    total: watched + new.len(),
                });
                Err(WalkReason::Partial)
            }
            Err(AddError::Failed(_)) => {
                // Set up again from scratch: the next command checkpoint walks.
                self.setup(tree);
                Err(WalkReason::WatcherFailed)
            }
        }
    }

    /// After a command checkpoint recorded `files`: a directory holding one that is not watched
    /// (a tracked file below an ignored directory that was made again) is watched now, and the
    /// next command checkpoint walks (the file may have changed before its watch).
    pub(crate) fn after_scan<'a>(&mut self, files: impl Iterator<Item = &'a str>, tree: &Tree<'_>) {
        if self.backend.is_none() {
            return;
        }
        let missing: BTreeSet<String> = {
            let Ok(state) = self.shared.state.lock() else {
                return;
            };
            let mut missing = BTreeSet::new();
            for file in files {
                let mut at = file;
                while let Some(i) = at.rfind('/') {
                    at = &at[..i];
                    if state.watched.contains(at) {
                        break;
                    }
                    missing.insert(at.to_string());
                }
            }
            missing
        };
        let mut reachable = crate::safe_fs::Reachable::default();
        let missing: Vec<String> = missing
            .into_iter()
            .filter(|d| reachable.check(&self.root, d) && is_dir(&self.root, d))
            .collect();
        if missing.is_empty() {
            return;
        }
        if self.add_watches(missing, tree).is_ok() {
            self.walk_next.get_or_insert(WalkReason::UnwatchedDirectory);
        }
    }

    /// A command checkpoint failed after taking the paths: the next one walks.
    pub(crate) fn mark_stale(&mut self) {
        self.walk_next.get_or_insert(WalkReason::Retry);
    }

    fn take_notice(&mut self) -> Option<WatchCoverage> {
        self.notice.take()
    }
}

/// Whether `rel` below `root` is a directory (not a symlink to one).
fn is_dir(root: &Path, rel: &str) -> bool {
    std::fs::symlink_metadata(root.join(rel)).is_ok_and(|m| m.is_dir())
}

impl Drop for Watcher {
    fn drop(&mut self) {
        // notify's event thread ends and closes its inotify descriptor.
        self.backend = None;
        let _ = std::fs::remove_dir_all(&self.barrier_dir);
    }
}

/// What [`Watcher::take`] takes out of the shared state.
struct Taken {
    dirty: std::collections::BTreeMap<String, bool>,
    appeared: BTreeSet<String>,
    git_touched: BTreeSet<String>,
    walk: Option<WalkReason>,
    broken: Option<WalkReason>,
}

fn take_state(state: &mut State) -> Taken {
    Taken {
        dirty: std::mem::take(&mut state.dirty),
        appeared: std::mem::take(&mut state.appeared),
        git_touched: std::mem::take(&mut state.git_touched),
        walk: state.walk.take(),
        broken: state.broken.take(),
    }
}

/// Whether `path` lies strictly inside one of the nested repositories.
fn in_nested(nested: &BTreeSet<String>, path: &str) -> bool {
    if nested.is_empty() {
        return false;
    }
    let mut at = path;
    while let Some(i) = at.rfind('/') {
        at = &at[..i];
        if nested.contains(at) {
            return true;
        }
    }
    false
}

fn new_shared(root: &Path, barrier_dir: &Path) -> Shared {
    Shared {
        root: root.to_path_buf(),
        barrier_dir: barrier_dir.to_path_buf(),
        state: Mutex::new(State::default()),
        barrier: Condvar::new(),
    }
}

fn unavailable(e: AddError) -> WatchCoverage {
    WatchCoverage::Unavailable {
        reason: match e {
            AddError::Limit { .. } => "the kernel's inotify watch limit is reached".into(),
            AddError::Failed(reason) => reason,
        },
    }
}

/// An empty directory at `dir` (what was there is removed).
fn fresh_dir(dir: &Path) -> std::io::Result<()> {
    crate::safe_fs::remove_any(dir).map_err(std::io::Error::other)?;
    std::fs::create_dir_all(dir)
}

impl TaskWorktree {
    /// Starts watching the worktree (see [`crate::watch`]), within [`WatchLimits::from_env`].
    /// Never fails: without a watcher, command checkpoints walk the tree, and the report says
    /// why ([`WatchCoverage::Unavailable`], [`WatchCoverage::Partial`]).
    pub fn watch(&mut self) -> WatchReport {
        self.watch_with(WatchLimits::from_env())
    }

    /// [`TaskWorktree::watch`] within `limits`. A watcher already running is replaced.
    pub fn watch_with(&mut self, limits: WatchLimits) -> WatchReport {
        let started = Instant::now();
        self.watcher = None;
        let barrier_dir = self.layout.task_dir(&self.task_id).join("watch");
        let rules = IgnoreFiles::new(&self.layout.bosun_git_dir());
        let mut watcher = Watcher::new(&self.worktree, barrier_dir, rules, limits);
        match self
            .latest_oid()
            .and_then(|commit| tree_of(&self.repo, commit))
        {
            Ok(tree) => watcher.setup(&tree),
            Err(e) => watcher.degrade(WatchCoverage::Unavailable {
                reason: e.to_string(),
            }),
        }
        // The report says it; the notice is for what happens later.
        watcher.notice = None;
        let coverage = watcher.coverage.clone();
        self.watcher = Some(watcher);
        WatchReport {
            coverage,
            setup: started.elapsed(),
        }
    }

    /// Stops watching (also done when the task is released or the worktree dropped): notify's
    /// thread ends and its inotify descriptor is closed.
    pub fn unwatch(&mut self) {
        self.watcher = None;
    }

    /// The running watcher, if one was started.
    pub fn watcher(&self) -> Option<&Watcher> {
        self.watcher.as_ref()
    }

    /// The coverage, once, when it got worse after the watcher started (the cap reached by new
    /// directories, a watcher that could not be set up again): for a warning.
    pub fn take_watch_notice(&mut self) -> Option<WatchCoverage> {
        self.watcher.as_mut().and_then(Watcher::take_notice)
    }

    /// How the latest command checkpoint found its changes.
    pub fn last_command_scan(&self) -> Option<CommandScan> {
        self.last_scan
    }
}
