//! The policy for a task's worktree: which parts of the user's `.git` its commands may write.
//!
//! A linked worktree's `.git` file points at `<repo>/.git/worktrees/<name>` (its HEAD, index
//! and logs); its objects and branch refs live in the shared `<repo>/.git`. So that `git add`
//! and `git commit` work inside the task while hooks, config and the user's branches cannot be
//! altered, the task may write:
//! - `<repo>/.git/worktrees/<name>` (its own HEAD, index, logs),
//! - `<repo>/.git/objects` (new objects; existing ones are content-addressed, so adding cannot
//!   rewrite history — but a command could delete objects: Landlock cannot grant "create but
//!   never delete" in a way git tolerates, since git unlinks its temp files and locks there),
//! - the directory of its branch ref and of that ref's log, e.g. `<repo>/.git/refs/heads/bosun`
//!   and `<repo>/.git/logs/refs/heads/bosun` for branch `bosun/<task>` — only when the branch
//!   has a directory of its own (a top-level branch such as `main` would open every branch).
//!
//! The rest of `<repo>/.git` (hooks, config, packed-refs, other branches) is read-only.

use super::{SandboxError, SandboxPolicy};
use std::path::{Path, PathBuf};

/// Credential files and directories under `home` that commands never need to read: SSH, cloud
/// and cluster credentials, package registry tokens, GnuPG, `gh`, `.netrc`, git credentials.
/// Only those that exist are returned.
pub fn home_secrets(home: &Path) -> Vec<PathBuf> {
    [
        ".ssh",
        ".aws",
        ".azure",
        ".gnupg",
        ".kube",
        ".docker/config.json",
        ".netrc",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        ".cargo/credentials",
        ".cargo/credentials.toml",
        ".config/gcloud",
        ".config/gh",
        ".config/hub",
        ".password-store",
    ]
    .iter()
    .map(|p| home.join(p))
    .filter(|p| p.exists())
    .collect()
}

impl SandboxPolicy {
    /// The policy for a task: writes in `worktree` and `temp_dir` (created if missing) and in
    /// the worktree's own git state (see the module docs); the user's `.git` otherwise
    /// read-only; `home`'s credentials ([`home_secrets`]) and the worktree's top-level `.env*`
    /// files unreadable; no network. Adjust `network`, `env_allow` and `read_deny` after.
    pub fn for_task(
        worktree: &Path,
        temp_dir: &Path,
        home: Option<&Path>,
    ) -> Result<SandboxPolicy, SandboxError> {
        std::fs::create_dir_all(temp_dir).map_err(|source| SandboxError::TempDir {
            path: temp_dir.to_path_buf(),
            source,
        })?;
        let mut policy = SandboxPolicy {
            temp_dir: Some(temp_dir.to_path_buf()),
            worktree: worktree.to_path_buf(),
            write_paths: vec![worktree.to_path_buf(), temp_dir.to_path_buf()],
            read_deny: home.map(home_secrets).unwrap_or_default(),
            ..SandboxPolicy::default()
        };
        policy.read_deny.extend(env_files(worktree));
        let dot_git = worktree.join(".git");
        if dot_git.is_file() {
            let git = LinkedGit::read(&dot_git)?;
            policy.read_only_paths.push(git.common.clone());
            policy.write_paths.extend(git.writable());
        }
        Ok(policy)
    }
}

/// `.env`, `.env.local`, … at the top of the worktree (`.envrc` too: it often exports keys).
fn env_files(worktree: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(worktree) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name == ".env" || name.starts_with(".env.") || name == ".envrc"
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// Where a linked worktree's git state lives.
struct LinkedGit {
    /// `<repo>/.git/worktrees/<name>`.
    admin: PathBuf,
    /// `<repo>/.git`.
    common: PathBuf,
}

impl LinkedGit {
    fn read(dot_git: &Path) -> Result<LinkedGit, SandboxError> {
        let read = |path: &Path| {
            std::fs::read_to_string(path).map_err(|source| SandboxError::GitMetadata {
                path: path.to_path_buf(),
                source,
            })
        };
        let base = dot_git.parent().unwrap_or(Path::new("/"));
        let content = read(dot_git)?;
        let pointer = content.trim().strip_prefix("gitdir:").unwrap_or("").trim();
        let admin = base.join(pointer);
        let common = match read(&admin.join("commondir")) {
            Ok(rel) => admin.join(rel.trim()),
            Err(_) => admin.join("../.."),
        };
        let clean = |p: PathBuf| p.canonicalize().unwrap_or(p);
        Ok(LinkedGit {
            admin: clean(admin),
            common: clean(common),
        })
    }

    fn writable(&self) -> Vec<PathBuf> {
        let mut paths = vec![self.admin.clone(), self.common.join("objects")];
        let head = std::fs::read_to_string(self.admin.join("HEAD")).unwrap_or_default();
        if let Some(branch) = head.trim().strip_prefix("ref: refs/heads/")
            && let Some((dir, _)) = branch.rsplit_once('/')
            && !dir.split('/').any(|part| part == ".." || part.is_empty())
        {
            // Either directory may be missing (a packed branch, no reflog yet); make them now
            // so they can be granted.
            for root in ["refs/heads", "logs/refs/heads"] {
                let path = self.common.join(root).join(dir);
                if std::fs::create_dir_all(&path).is_ok() {
                    paths.push(path);
                }
            }
        }
        paths
    }
}
