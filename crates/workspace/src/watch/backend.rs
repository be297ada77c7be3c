//! The one place that names `notify`: an inotify watcher (Linux) whose events go to a handler
//! as [`Seen`], and non-recursive watches added in batches. Elsewhere there is no backend and
//! command checkpoints walk the tree.

use super::events::Seen;
use std::path::PathBuf;

/// Why watches could not be added.
#[derive(Debug)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))] // only inotify has a limit
pub(crate) enum AddError {
    /// The kernel's limit on inotify watches was reached, after `added` of them.
    Limit {
        added: usize,
    },
    Failed(String),
}

/// What the handler is told: a change at a path, or that events were lost.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))] // only inotify delivers
pub(crate) enum Delivery {
    Path(PathBuf, Seen),
    /// The kernel's queue overflowed (or notify asked for a rescan): events were lost.
    Lost,
    /// The watcher reported an error.
    Failed,
}

#[cfg(target_os = "linux")]
pub(crate) use linux::Backend;

#[cfg(not(target_os = "linux"))]
pub(crate) use other::Backend;

#[cfg(target_os = "linux")]
mod linux {
    use super::{AddError, Delivery, Seen};
    use notify::event::{AccessKind, AccessMode, ModifyKind, RenameMode};
    use notify::{
        Config, ErrorKind, EventKind, EventKindMask, PathOp, RecursiveMode, WatchPathConfig,
        Watcher as _,
    };
    use std::path::PathBuf;

    pub(crate) struct Backend {
        inner: notify::INotifyWatcher,
    }

    impl Backend {
        /// Starts notify's event thread (and its inotify instance).
        pub fn start(
            mut deliver: impl FnMut(Delivery) + Send + 'static,
        ) -> Result<Backend, String> {
            // No access events: a command that reads the whole tree would flood the queue.
            // Close-after-write is kept: a file written through a mapping says so only then.
            let kinds = EventKindMask::CREATE
                | EventKindMask::REMOVE
                | EventKindMask::MODIFY_DATA
                | EventKindMask::MODIFY_META
                | EventKindMask::MODIFY_NAME
                | EventKindMask::ACCESS_CLOSE;
            let config = Config::default().with_event_kinds(kinds);
            let handler = move |event: notify::Result<notify::Event>| match event {
                Err(_) => deliver(Delivery::Failed),
                Ok(event) if event.need_rescan() => deliver(Delivery::Lost),
                Ok(event) => {
                    let Some(seen) = classify(&event.kind) else {
                        return;
                    };
                    for path in event.paths {
                        deliver(Delivery::Path(path, seen));
                    }
                }
            };
            notify::INotifyWatcher::new(handler, config)
                .map(|inner| Backend { inner })
                .map_err(|e| e.to_string())
        }

        /// Watches each of `dirs` (not recursively, never through a symlink). Returns those
        /// that were gone before they could be watched.
        pub fn add(&mut self, dirs: Vec<PathBuf>) -> Result<Vec<PathBuf>, AddError> {
            let config =
                WatchPathConfig::new(RecursiveMode::NonRecursive).with_dereference_symlinks(false);
            let mut ops: Vec<PathOp> = dirs
                .into_iter()
                .map(|d| PathOp::Watch(d, config.clone()))
                .collect();
            let asked = ops.len();
            let mut gone = Vec::new();
            while !ops.is_empty() {
                match self.inner.update_paths(ops) {
                    Ok(()) => break,
                    Err(e) => {
                        let limit = match &e.source.kind {
                            ErrorKind::PathNotFound => {
                                gone.extend(e.origin.map(PathOp::into_path));
                                ops = e.remaining;
                                continue;
                            }
                            ErrorKind::MaxFilesWatch => true,
                            ErrorKind::Io(io) => io.raw_os_error() == Some(libc::ENOSPC),
                            _ => false,
                        };
                        if limit {
                            let added = asked.saturating_sub(e.remaining.len() + 1 + gone.len());
                            return Err(AddError::Limit { added });
                        }
                        return Err(AddError::Failed(e.source.to_string()));
                    }
                }
            }
            Ok(gone)
        }
    }

    fn classify(kind: &EventKind) -> Option<Seen> {
        Some(match kind {
            EventKind::Create(_) | EventKind::Modify(ModifyKind::Name(RenameMode::To)) => {
                Seen::Appeared
            }
            EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(RenameMode::From)) => {
                Seen::Gone
            }
            // The two halves of the rename came as From and To.
            EventKind::Modify(ModifyKind::Name(RenameMode::Both)) => return None,
            EventKind::Modify(ModifyKind::Name(_)) | EventKind::Any | EventKind::Other => {
                Seen::Unknown
            }
            EventKind::Modify(_) | EventKind::Access(AccessKind::Close(AccessMode::Write)) => {
                Seen::Changed
            }
            EventKind::Access(_) => return None,
        })
    }
}

#[cfg(not(target_os = "linux"))]
mod other {
    use super::{AddError, Delivery};
    use std::path::PathBuf;

    pub(crate) struct Backend;

    impl Backend {
        pub fn start(_deliver: impl FnMut(Delivery) + Send + 'static) -> Result<Backend, String> {
            Err("watching a worktree needs Linux's inotify".into())
        }

        pub fn add(&mut self, _dirs: Vec<PathBuf>) -> Result<Vec<PathBuf>, AddError> {
            Err(AddError::Failed("no watcher".into()))
        }
    }
}
