//! What the watcher saw since the last command checkpoint, kept up to date by notify's event
//! thread: the paths that may have changed, the paths that appeared (directories among them are
//! to be watched), and the watched directories (notify drops the watches of a directory that is
//! removed or moved away; this mirror drops them too).

use super::WalkReason;
use super::backend::Delivery;
use super::dirs::relative;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Condvar, Mutex};

/// Changed paths beyond which a checkpoint walks instead (hashing that many costs about as much
/// as the walk); the set stops growing then.
pub(crate) const MAX_DIRTY: usize = 20_000;

/// Appeared paths beyond which the watches are set up again rather than added one by one.
const MAX_APPEARED: usize = 20_000;

/// What an event says about its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))] // only inotify sends events
pub(crate) enum Seen {
    /// Created or moved in: may be a directory to watch, looked at whole.
    Appeared,
    /// Removed or moved away: looked at whole, and its watches are gone.
    Gone,
    /// Content or metadata changed.
    Changed,
    /// Something happened; what is not known.
    Unknown,
}

/// The state shared with the event thread.
pub(crate) struct Shared {
    pub root: PathBuf,
    pub barrier_dir: PathBuf,
    pub state: Mutex<State>,
    pub barrier: Condvar,
}

#[derive(Debug, Default)]
pub(crate) struct State {
    /// Paths that may have changed (worktree-relative), each with whether it appeared, went or
    /// was renamed (true): such a path is looked at whole even when it is a watched directory.
    pub dirty: BTreeMap<String, bool>,
    /// Paths created or moved in since the last checkpoint.
    pub appeared: BTreeSet<String>,
    /// Watched directories ("" is the root).
    pub watched: BTreeSet<String>,
    /// Directories holding a nested repository (a `.git` of their own).
    pub nested: BTreeSet<String>,
    /// Directories whose `.git` appeared, went or changed.
    pub git_touched: BTreeSet<String>,
    /// The next command checkpoint walks the tree, for this reason.
    pub walk: Option<WalkReason>,
    /// The watches no longer cover the worktree: they are set up again, then the tree walked.
    pub broken: Option<WalkReason>,
    /// The highest barrier the event thread has seen.
    pub barrier_seen: u64,
}

impl Shared {
    /// Called on notify's event thread for each event.
    pub fn deliver(&self, delivery: Delivery) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        match delivery {
            Delivery::Lost => {
                state.broken.get_or_insert(WalkReason::EventsLost);
            }
            Delivery::Failed => {
                state.broken.get_or_insert(WalkReason::WatcherFailed);
            }
            Delivery::Path(path, seen) => {
                if let Ok(name) = path.strip_prefix(&self.barrier_dir) {
                    let n = name
                        .to_str()
                        .and_then(|n| n.strip_prefix("barrier-"))
                        .and_then(|n| n.parse::<u64>().ok());
                    if let Some(n) = n {
                        state.barrier_seen = state.barrier_seen.max(n);
                        self.barrier.notify_all();
                    }
                    return;
                }
                match relative(&self.root, &path) {
                    Some(rel) => state.note(&rel, seen),
                    // Only the worktree is watched (and the barrier directory): a path that is
                    // not UTF-8 is one Bosun cannot name to the scan.
                    None if path.starts_with(&self.root) => {
                        state.walk.get_or_insert(WalkReason::NotUtf8);
                    }
                    None => {}
                }
            }
        }
    }
}

impl State {
    pub fn note(&mut self, rel: &str, seen: Seen) {
        if rel.is_empty() {
            // The worktree itself: its removal or move ends what the watches can say. A change
            // of its own metadata records nothing.
            if matches!(seen, Seen::Gone | Seen::Unknown) {
                self.broken.get_or_insert(WalkReason::WatcherFailed);
            }
            return;
        }
        // The worktree's own `.git` file: Bosun's wiring, never part of a checkpoint.
        if rel == ".git" {
            return;
        }
        if let Some(at) = git_component(rel) {
            // A nested repository appeared, went or changed: what git sees there is the walk's
            // to say.
            self.git_touched
                .insert(rel[..at.saturating_sub(1)].to_string());
            self.walk.get_or_insert(WalkReason::NestedRepository);
            return;
        }
        if rel == ".gitignore" || rel.ends_with("/.gitignore") {
            self.broken.get_or_insert(WalkReason::IgnoreRulesChanged);
        }
        let whole = !matches!(seen, Seen::Changed);
        if matches!(seen, Seen::Gone | Seen::Unknown) {
            self.unmirror(rel);
        }
        if matches!(seen, Seen::Appeared | Seen::Unknown) {
            if self.appeared.len() < MAX_APPEARED {
                self.appeared.insert(rel.to_string());
            } else {
                self.broken.get_or_insert(WalkReason::TooManyChanges);
            }
        }
        if self.walk == Some(WalkReason::TooManyChanges) {
            return;
        }
        let room = self.dirty.len() < MAX_DIRTY;
        match self.dirty.get_mut(rel) {
            Some(w) => *w |= whole,
            None if room => {
                self.dirty.insert(rel.to_string(), whole);
            }
            None => {
                self.walk.get_or_insert(WalkReason::TooManyChanges);
                self.dirty.clear();
            }
        }
    }

    /// `rel` and everything below it is no longer watched.
    pub fn unmirror(&mut self, rel: &str) {
        self.watched.remove(rel);
        let prefix = format!("{rel}/");
        let below: Vec<String> = self
            .watched
            .range(prefix.clone()..)
            .take_while(|d| d.starts_with(&prefix))
            .cloned()
            .collect();
        for d in below {
            self.watched.remove(&d);
        }
    }
}

/// Where a `.git` component starts in `rel` (byte offset), if it has one.
fn git_component(rel: &str) -> Option<usize> {
    let mut at = 0;
    for part in rel.split('/') {
        if part == ".git" {
            return Some(at);
        }
        at += part.len() + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_directory_takes_its_watched_subdirectories_along() {
        let mut state = State::default();
        for d in ["", "a", "a/b", "a/b/c", "a-b", "ab"] {
            state.watched.insert(d.into());
        }
        state.note("a", Seen::Gone);
        let left: Vec<&str> = state.watched.iter().map(String::as_str).collect();
        assert_eq!(left, ["", "a-b", "ab"]);
        assert_eq!(state.dirty.get("a"), Some(&true));
    }

    #[test]
    fn a_nested_git_directory_asks_for_a_walk_and_the_own_git_file_is_ignored() {
        let mut state = State::default();
        state.note(".git", Seen::Changed);
        assert_eq!(state.walk, None);
        state.note("vendor/lib/.git", Seen::Appeared);
        assert_eq!(state.walk, Some(WalkReason::NestedRepository));
        assert!(state.git_touched.contains("vendor/lib"));
        assert!(state.dirty.is_empty());
    }

    #[test]
    fn content_changes_are_not_whole_but_creations_are() {
        let mut state = State::default();
        state.note("f", Seen::Changed);
        state.note("d", Seen::Appeared);
        assert_eq!(state.dirty.get("f"), Some(&false));
        assert_eq!(state.dirty.get("d"), Some(&true));
        assert!(state.appeared.contains("d"));
        state.note("f", Seen::Gone);
        assert_eq!(state.dirty.get("f"), Some(&true));
    }

    #[test]
    fn a_gitignore_change_sets_the_watches_up_again() {
        let mut state = State::default();
        state.note("src/.gitignore", Seen::Changed);
        assert_eq!(state.broken, Some(WalkReason::IgnoreRulesChanged));
    }
}
