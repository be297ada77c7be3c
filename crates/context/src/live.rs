//! A repository map that builds in the background and follows a task's changes: the first
//! request waits for it a bounded time ([`LiveMap::wait`]), later ones take what is ready
//! ([`LiveMap::current`]), and each change the task makes is folded in ([`LiveMap::changed`]).

use crate::map::{BuildStats, RepoMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Which worktree-relative paths the map may hold (read-denied files never go in).
pub type Keep = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// A map being built, or built and kept up to date.
pub struct LiveMap {
    root: PathBuf,
    store: Option<Arc<bosun_store::Store>>,
    keep: Keep,
    state: Mutex<State>,
    ready: Condvar,
}

#[derive(Default)]
struct State {
    map: Option<Arc<RepoMap>>,
    /// Set when the build ended (with or without a map).
    done: bool,
    stats: BuildStats,
    build_ms: u64,
    /// Paths changed while the build ran: folded in when it ends.
    pending: Vec<String>,
    /// Bumped by every change folded in, so a reader knows its rendering is stale.
    version: u64,
    /// A command ran while the build did: the tree is looked at again once it ends.
    rebuild: bool,
}

impl LiveMap {
    /// Starts building `root`'s map on a thread of its own, tags cached through `store`.
    pub fn start(root: &Path, store: Option<Arc<bosun_store::Store>>, keep: Keep) -> Arc<LiveMap> {
        let live = Arc::new(LiveMap {
            root: root.to_path_buf(),
            store,
            keep,
            state: Mutex::new(State::default()),
            ready: Condvar::new(),
        });
        let building = Arc::clone(&live);
        let spawned = std::thread::Builder::new()
            .name("bosun-map".into())
            .spawn(move || building.build());
        if spawned.is_err() {
            live.finish(None, BuildStats::default(), 0);
        }
        live
    }

    /// A map already built (tests, and a caller that built it itself).
    pub fn ready(root: &Path, map: RepoMap, keep: Keep) -> Arc<LiveMap> {
        let live = Arc::new(LiveMap {
            root: root.to_path_buf(),
            store: None,
            keep,
            state: Mutex::new(State::default()),
            ready: Condvar::new(),
        });
        let stats = BuildStats {
            files: map.files.len(),
            ..BuildStats::default()
        };
        live.finish(Some(map), stats, 0);
        live
    }

    fn build(&self) {
        let started = Instant::now();
        let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            RepoMap::build_keeping(&self.root, self.store.as_deref(), &*self.keep)
        }));
        let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        match built {
            Ok((map, stats)) => self.finish(Some(map), stats, ms),
            Err(_) => self.finish(None, BuildStats::default(), ms),
        }
        if self.state.lock().is_ok_and(|s| s.rebuild) {
            self.rebuild();
        }
    }

    fn finish(&self, map: Option<RepoMap>, stats: BuildStats, ms: u64) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        let map = map.map(|mut m| {
            m.retain(|p| (self.keep)(p));
            let pending = std::mem::take(&mut state.pending);
            if !pending.is_empty() {
                m.update_keeping(&self.root, &pending, self.store.as_deref(), &*self.keep);
                m.retain(|p| (self.keep)(p));
            }
            Arc::new(m)
        });
        state.map = map;
        state.stats = stats;
        state.build_ms = ms;
        state.done = true;
        state.version += 1;
        self.ready.notify_all();
    }

    /// The map, waiting at most `timeout` for the build to end; None when it has not (or it
    /// failed).
    pub fn wait(&self, timeout: Duration) -> Option<Arc<RepoMap>> {
        let state = self.state.lock().ok()?;
        let (state, _) = self
            .ready
            .wait_timeout_while(state, timeout, |s| !s.done)
            .ok()?;
        state.map.clone()
    }

    /// The map when it is built.
    pub fn current(&self) -> Option<Arc<RepoMap>> {
        self.state.lock().ok()?.map.clone()
    }

    /// Changes so far: a rendering made at another version is stale.
    pub fn version(&self) -> u64 {
        self.state.lock().map(|s| s.version).unwrap_or(0)
    }

    /// What the build did and how long it took (ms); None while it runs.
    pub fn build_stats(&self) -> Option<(BuildStats, u64)> {
        let s = self.state.lock().ok()?;
        s.done.then_some((s.stats, s.build_ms))
    }

    /// Folds in `paths` (worktree-relative) that the task created, changed or deleted.
    pub fn changed(&self, paths: &[String]) {
        if paths.is_empty() {
            return;
        }
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        if !state.done {
            state.pending.extend(paths.iter().cloned());
            return;
        }
        let Some(current) = state.map.as_ref() else {
            return;
        };
        let mut next = RepoMap::clone(current);
        next.update_keeping(&self.root, paths, self.store.as_deref(), &*self.keep);
        next.retain(|p| (self.keep)(p));
        state.map = Some(Arc::new(next));
        state.version += 1;
    }

    /// Builds the whole map again (after a command, which may have changed anything): only the
    /// files whose blobs changed are parsed.
    pub fn rebuild(&self) {
        // While the first build runs, it is looked at again when it ends.
        match self.state.lock() {
            Ok(mut s) if !s.done => {
                s.rebuild = true;
                return;
            }
            Ok(mut s) => s.rebuild = false,
            Err(_) => return,
        }
        let (map, _) = RepoMap::build_keeping(&self.root, self.store.as_deref(), &*self.keep);
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        if !state.done {
            return;
        }
        let mut map = map;
        map.retain(|p| (self.keep)(p));
        if state.map.as_deref().is_some_and(|m| m.files == map.files) {
            return;
        }
        state.map = Some(Arc::new(map));
        state.version += 1;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::fs;

    fn keep_all() -> Keep {
        Arc::new(|_: &str| true)
    }

    #[test]
    fn the_map_follows_changes_made_during_and_after_the_build() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.py"), "def one():\n    pass\n").unwrap();
        fs::write(dir.path().join("secret.py"), "def hidden():\n    pass\n").unwrap();
        let live = LiveMap::start(dir.path(), None, Arc::new(|p: &str| p != "secret.py"));
        // A change the build may not have seen yet is folded in either way.
        fs::write(dir.path().join("b.py"), "def two():\n    pass\n").unwrap();
        live.changed(&["b.py".into()]);
        let map = live.wait(Duration::from_secs(30)).unwrap();
        let paths: Vec<&str> = map.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["a.py", "b.py"]);
        let before = live.version();
        fs::remove_file(dir.path().join("a.py")).unwrap();
        fs::write(dir.path().join("b.py"), "def three():\n    pass\n").unwrap();
        live.changed(&["a.py".into(), "b.py".into(), "secret.py".into()]);
        assert!(live.version() > before);
        let map = live.current().unwrap();
        assert_eq!(map.files.len(), 1);
        assert_eq!(map.files[0].tags[0].name, "three");
        // A command's changes: the whole tree is looked at again.
        fs::write(dir.path().join("c.py"), "def four():\n    pass\n").unwrap();
        live.rebuild();
        assert_eq!(live.current().unwrap().files.len(), 2);
        assert!(live.build_stats().is_some());
    }

    #[test]
    fn waiting_is_bounded() {
        let live = LiveMap {
            root: PathBuf::from("/nonexistent"),
            store: None,
            keep: keep_all(),
            state: Mutex::new(State::default()),
            ready: Condvar::new(),
        };
        let started = Instant::now();
        assert!(live.wait(Duration::from_millis(50)).is_none());
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(live.current().is_none());
    }
}
