//! Confinement: every path a tool is given is relative to the task's worktree and must stay
//! inside it — through `..`, absolute paths and symlinks alike.

use crate::ToolError;
use std::path::{Path, PathBuf};

/// A model-given path resolved inside the worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// The worktree, canonical.
    pub root: PathBuf,
    /// Absolute, with symlinks along the way resolved.
    pub abs: PathBuf,
    /// Normalized, worktree-relative, `/`-separated (`""` for the worktree itself).
    pub rel: String,
}

impl Resolved {
    /// The relative path for messages (`.` for the worktree itself).
    pub fn shown(&self) -> &str {
        if self.rel.is_empty() { "." } else { &self.rel }
    }
}

fn outside(rel: &str) -> ToolError {
    ToolError::Model(format!(
        "`{rel}` is outside the task's worktree: paths must stay inside the task's worktree \
         (give a path relative to its root, without a leading `/` or `..` above it)"
    ))
}

/// Normalizes a worktree-relative path lexically (`./a/../b` → `b`), refusing absolute paths
/// and `..` above the root. Does not touch the file system.
pub fn normalize_rel(rel: &str) -> Result<String, ToolError> {
    if rel.contains('\0') {
        return Err(ToolError::Model(format!(
            "`{}` contains a NUL byte; give a plain relative path",
            rel.escape_debug()
        )));
    }
    let looks_windows_absolute = rel.len() >= 2 && rel.as_bytes()[1] == b':';
    if rel.starts_with('/') || Path::new(rel).is_absolute() || looks_windows_absolute {
        return Err(outside(rel));
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(outside(rel));
                }
            }
            p => parts.push(p),
        }
    }
    Ok(parts.join("/"))
}

/// Resolves a worktree-relative path to an absolute one inside the worktree. `..` above the
/// root, absolute paths, and symlinks (anywhere along the path, the last component included)
/// that lead outside the worktree are refused with a message for the model.
pub fn resolve_in_worktree(worktree: &Path, rel: &str) -> Result<PathBuf, ToolError> {
    confine(worktree, rel).map(|r| r.abs)
}

/// The worktree-relative path `rel` really names once the symlinks inside the worktree along it
/// are followed (`env.txt` → `.env`), when that differs from `rel`: the policy's path rules
/// must judge the file read or written, not the link.
pub fn resolve_symlinks_in(worktree: &Path, rel: &str) -> Option<String> {
    let resolved = confine(worktree, rel).ok()?;
    let real = resolved.abs.strip_prefix(&resolved.root).ok()?;
    let real = real.to_string_lossy().replace('\\', "/");
    (real != resolved.rel).then_some(real)
}

pub(crate) fn confine(worktree: &Path, rel: &str) -> Result<Resolved, ToolError> {
    let norm = normalize_rel(rel)?;
    let root = worktree.canonicalize().map_err(|e| {
        ToolError::Fatal(format!(
            "the task's worktree {} is not accessible: {e}",
            worktree.display()
        ))
    })?;
    let mut current = root.clone();
    for part in norm.split('/').filter(|p| !p.is_empty()) {
        let next = current.join(part);
        let is_link = std::fs::symlink_metadata(&next)
            .map(|m| m.file_type().is_symlink())
            .unwrap_or(false);
        if !is_link {
            current = next;
            continue;
        }
        match next.canonicalize() {
            Ok(real) if real.starts_with(&root) => current = real,
            Ok(_) => return Err(outside(rel)),
            Err(_) => {
                return Err(ToolError::Model(format!(
                    "`{rel}` goes through the symlink `{part}` whose target does not exist; \
                     paths must stay inside the task's worktree, so use the real path"
                )));
            }
        }
    }
    Ok(Resolved {
        root,
        abs: current,
        rel: norm,
    })
}

/// Like [`confine`], and also refuses paths with a `.git` in them (`.git/config`, and a
/// nested repository's `sub/.git` too, which git would follow to another directory): the
/// repository's own files are Bosun's to manage, never a tool's to write, and a checkpoint
/// could not hold them.
pub(crate) fn confine_for_write(worktree: &Path, rel: &str) -> Result<Resolved, ToolError> {
    let resolved = confine(worktree, rel)?;
    let in_git = |p: &Path| {
        p.components()
            .any(|c| c.as_os_str().eq_ignore_ascii_case(".git"))
    };
    let real_rel = resolved
        .abs
        .strip_prefix(&resolved.root)
        .unwrap_or(&resolved.abs);
    if resolved.rel.is_empty() {
        return Err(ToolError::Model(
            "a file path is required, not the worktree itself".to_string(),
        ));
    }
    if in_git(Path::new(&resolved.rel)) || in_git(real_rel) {
        return Err(ToolError::Model(format!(
            "`{rel}` is inside `.git`; writing the repository's internals is not allowed — \
             change the working files instead"
        )));
    }
    // Through an inside symlink, the file that changes is the target: report that path.
    let real = real_rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/");
    Ok(Resolved {
        rel: real,
        ..resolved
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn normalizes_inside_paths() {
        assert_eq!(normalize_rel("./src/../lib.rs").unwrap(), "lib.rs");
        assert_eq!(normalize_rel("a//b/./c").unwrap(), "a/b/c");
        assert_eq!(normalize_rel(".").unwrap(), "");
        assert_eq!(normalize_rel("").unwrap(), "");
    }

    #[test]
    fn a_write_never_goes_into_a_git_directory_at_any_depth() {
        let dir = tempfile::tempdir().unwrap();
        for bad in [
            ".git/config",
            ".GIT/hooks/pre-commit",
            "sub/.git",
            "a/b/.Git/HEAD",
        ] {
            let Err(ToolError::Model(m)) = confine_for_write(dir.path(), bad) else {
                panic!("{bad} was accepted");
            };
            assert!(m.contains("is inside `.git`"), "{m}");
        }
        for ok in ["src/git.rs", ".gitignore", "sub/.gitattributes", "x.git/y"] {
            assert!(
                confine_for_write(dir.path(), ok).is_ok(),
                "{ok} was refused"
            );
        }
    }

    #[test]
    fn refuses_escapes_and_absolute_paths() {
        for bad in ["../x", "a/../../x", "/etc/passwd", "C:/x", "a\0b"] {
            assert!(normalize_rel(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
