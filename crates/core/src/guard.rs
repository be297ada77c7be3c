//! The edit guard: after `write_file`, `edit_file` and `apply_patch`, the edited files are
//! parsed (`bosun-syntax`); an edit that turns a file that parsed into one that does not stays
//! applied, and its tool result says where the syntax broke so the model fixes it at once.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

/// Files larger than this are not guarded (the parser would not take them either).
const MAX_GUARDED_BYTES: u64 = bosun_syntax::MAX_BYTES as u64;

/// What the files an edit may touch held before it (None: it did not exist).
#[derive(Default)]
pub(crate) struct Before {
    files: HashMap<String, Option<Vec<u8>>>,
}

impl Before {
    /// Reads the files of `paths` (worktree-relative) that a language of the guard covers.
    pub fn read(worktree: &Path, paths: &[String]) -> Before {
        let mut files = HashMap::new();
        for path in paths {
            if bosun_syntax::Language::for_path(path).is_none() {
                continue;
            }
            files.insert(path.clone(), read_regular(worktree, path));
        }
        Before { files }
    }

    /// The guard's message for each of `touched` that the edit broke; `cache` keeps the trees
    /// of the files it parsed, so the next edit of one is parsed incrementally.
    pub fn broken_by_edit(
        &self,
        worktree: &Path,
        touched: &[String],
        cache: &mut bosun_syntax::GuardCache,
    ) -> Vec<String> {
        let mut out = Vec::new();
        for path in touched {
            if bosun_syntax::Language::for_path(path).is_none() {
                continue;
            }
            let Some(after) = read_regular(worktree, path) else {
                continue; // deleted (or not a regular file): nothing to parse
            };
            // A path the action did not name (a patch's rename target) counts as new.
            let before = self.files.get(path).cloned().flatten();
            if let Some(message) = cache.guard(path, before.as_deref(), &after) {
                out.push(message);
            }
        }
        out
    }
}

/// The model read these files (whole or in part): their trees are kept, so that an edit that
/// follows is checked incrementally (a parse of the whole file after an edit is what costs).
pub(crate) fn remember_read(
    worktree: &Path,
    paths: &[String],
    cache: &mut bosun_syntax::GuardCache,
) {
    for path in paths {
        if bosun_syntax::Language::for_path(path).is_none() {
            continue;
        }
        if let Some(bytes) = read_regular(worktree, path) {
            cache.remember(path, &bytes);
        }
    }
}

/// The bytes of a regular file inside the worktree, never through a symlink; None for a
/// missing, special or too large file.
fn read_regular(worktree: &Path, rel: &str) -> Option<Vec<u8>> {
    let abs = worktree.join(rel);
    let meta = std::fs::symlink_metadata(&abs).ok()?;
    if !meta.is_file() || meta.len() > MAX_GUARDED_BYTES {
        return None;
    }
    // The parent directories may be symlinks the agent made: refuse any path that resolves
    // outside the worktree.
    let real = abs.canonicalize().ok()?;
    let root = worktree.canonicalize().ok()?;
    if !real.starts_with(&root) {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&real)
        .ok()?
        .take(MAX_GUARDED_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn an_edit_that_breaks_a_parsing_file_is_named_and_one_that_keeps_it_parsing_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path();
        std::fs::write(wt.join("calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
        std::fs::write(wt.join("old.py"), "def broken(:\n").unwrap();
        let paths = vec!["calc.py".to_string(), "old.py".into(), "new.py".into()];
        let before = Before::read(wt, &paths);
        std::fs::write(wt.join("calc.py"), "def add(a, b):\n    return (a + b\n").unwrap();
        std::fs::write(wt.join("old.py"), "def still_broken(:\n").unwrap();
        std::fs::write(wt.join("new.py"), "x = 1\n").unwrap();
        let mut cache = bosun_syntax::GuardCache::default();
        let broken = before.broken_by_edit(wt, &paths, &mut cache);
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert!(
            broken[0].starts_with("calc.py: syntax error at line"),
            "{broken:?}"
        );
        assert!(
            broken[0].contains("the file parsed before this edit"),
            "{broken:?}"
        );
    }
}
