//! How a task's commands are confined: the sandbox from `bosun-exec` when the kernel supports
//! it; otherwise every command asks (never silently unsandboxed).

use bosun_exec::{SandboxPolicy, SandboxSupport, TaskGit};
use std::path::{Path, PathBuf};

/// Entries looked at when finding read-denied files in a worktree.
pub const READ_DENY_SCAN_LIMIT: usize = 200_000;
const SKIPPED_DIRS: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
];

/// Where MCP servers' FIFOs go and where their private directories go (see
/// `bosun_mcp::Launch`): both hidden from commands.
pub fn mcp_dirs(home: &Path) -> (PathBuf, PathBuf) {
    (
        home.join("mcp").join("io"),
        home.join("mcp").join("servers"),
    )
}

/// Where MCP servers keep their caches (see `bosun_mcp::Launch::cache_dir`).
pub fn mcp_cache(home: &Path) -> PathBuf {
    home.join("mcp").join("cache")
}

pub enum Sandboxing {
    On {
        worktree: PathBuf,
        temp_dir: PathBuf,
        /// Bosun's own secrets: the config (key variable names), the journal.
        extra_read_deny: Vec<PathBuf>,
        exe: PathBuf,
        user_home: Option<PathBuf>,
        /// The task's git dir and the user's checkout, as Bosun knows them.
        git: Option<TaskGit>,
        /// Whether a command without a network grant is really cut off (a network namespace,
        /// or seccomp refusing network sockets); when not, every command asks.
        network_contained: bool,
        /// `$BOSUN_HOME/run`: the sockets of commands' egress proxies (commands cannot write it).
        run_dir: PathBuf,
    },
    /// Commands ask, because they cannot be confined.
    Off { reason: String },
    /// The user turned it off explicitly (tests of the foundation, `--no-sandbox`): commands run
    /// as the policy says.
    Disabled,
}

impl Sandboxing {
    /// Probes the kernel once and prepares the task's sandbox. `git` is the task's git state
    /// as the workspace crate knows it (the task's private git dir, the user's checkout and
    /// git dir: see [`TaskGit`]); with `None`, commands get no git dir to write and the
    /// user's checkout is not hidden.
    pub fn for_task(
        home: &Path,
        task_id: &str,
        worktree: &Path,
        enabled: bool,
        git: Option<TaskGit>,
    ) -> Sandboxing {
        if !enabled {
            return Sandboxing::Disabled;
        }
        let support = bosun_exec::probe();
        if let SandboxSupport::Unavailable { reason } = support {
            return Sandboxing::Off { reason };
        }
        let exe = match std::env::current_exe() {
            Ok(e) => e,
            Err(e) => {
                return Sandboxing::Off {
                    reason: format!("cannot find Bosun's own binary to start the sandbox: {e}"),
                };
            }
        };
        // MCP servers' FIFOs and private directories: no command reads them (made now, since
        // a path that does not exist is not hidden).
        let (mcp_io, mcp_private) = mcp_dirs(home);
        let _ = std::fs::create_dir_all(&mcp_io);
        let _ = std::fs::create_dir_all(&mcp_private);
        Sandboxing::On {
            worktree: worktree.to_path_buf(),
            temp_dir: home.join("tmp").join(task_id),
            extra_read_deny: vec![
                home.join("config.toml"),
                home.join("bosun.db"),
                home.join("bosun.db-wal"),
                home.join("bosun.db-shm"),
                mcp_io,
                mcp_private,
            ],
            exe,
            user_home: dirs::home_dir(),
            git,
            network_contained: support.network_contained(),
            run_dir: home.join("run"),
        }
    }

    /// The same sandbox for commands run in `dir` instead of the task's worktree (a check
    /// directory): `dir` is writable, the worktree is not, the user's checkout stays hidden,
    /// and the files the policy says no one reads are found again in `dir`.
    pub fn for_dir(&self, dir: &Path, policy: &bosun_policy::Policy) -> Sandboxing {
        match self {
            Sandboxing::On {
                worktree,
                temp_dir,
                extra_read_deny,
                exe,
                user_home,
                git,
                network_contained,
                run_dir,
            } => {
                let mut sandbox = Sandboxing::On {
                    worktree: dir.to_path_buf(),
                    temp_dir: temp_dir.join("checks"),
                    // Bosun's own files stay hidden, and so does the task's worktree (a check
                    // has its copy of the tree in `dir`; the worktree's read-denied files must
                    // not be reachable through their original paths); what the policy denies is
                    // found again in `dir`.
                    extra_read_deny: extra_read_deny
                        .iter()
                        .filter(|p| !p.starts_with(worktree))
                        .cloned()
                        .chain(std::iter::once(worktree.clone()))
                        .collect(),
                    exe: exe.clone(),
                    user_home: user_home.clone(),
                    git: git.as_ref().map(|g| TaskGit {
                        git_dir: dir.to_path_buf(),
                        user_checkout: g.user_checkout.clone(),
                        user_git_dir: g.user_git_dir.clone(),
                    }),
                    network_contained: *network_contained,
                    run_dir: run_dir.clone(),
                };
                sandbox.hide_read_denied(policy);
                sandbox
            }
            Sandboxing::Off { reason } => Sandboxing::Off {
                reason: reason.clone(),
            },
            Sandboxing::Disabled => Sandboxing::Disabled,
        }
    }

    /// Where commands' proxy sockets go, when commands are sandboxed (without a sandbox nothing
    /// would make a command use the proxy, so none is started).
    pub fn run_dir(&self) -> Option<&Path> {
        match self {
            Sandboxing::On { run_dir, .. } => Some(run_dir),
            Sandboxing::Off { .. } | Sandboxing::Disabled => None,
        }
    }

    /// Hides the worktree's files that the policy says no one reads (`**/.env`, `**/*.pem`, …)
    /// from commands, as found when the task starts. The walk skips `.git` and the usual
    /// dependency and build folders, and stops after [`READ_DENY_SCAN_LIMIT`] entries.
    pub fn hide_read_denied(&mut self, policy: &bosun_policy::Policy) {
        let Sandboxing::On {
            worktree,
            extra_read_deny,
            ..
        } = self
        else {
            return;
        };
        let mut stack = vec![worktree.clone()];
        let mut seen = 0usize;
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                seen += 1;
                if seen > READ_DENY_SCAN_LIMIT {
                    return;
                }
                let path = entry.path();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let name = entry.file_name();
                if kind.is_dir() {
                    if !SKIPPED_DIRS.iter().any(|s| name == *s) {
                        stack.push(path);
                    }
                    continue;
                }
                let Ok(rel) = path.strip_prefix(&*worktree) else {
                    continue;
                };
                if kind.is_file()
                    && policy.is_read_denied(&rel.to_string_lossy())
                    && !extra_read_deny.contains(&path)
                {
                    extra_read_deny.push(path);
                }
            }
        }
    }

    /// The sandbox for one command; `proxy` is the socket of its egress proxy when the policy
    /// grants it network (it never gets the raw network).
    pub fn policy(
        &self,
        proxy: Option<PathBuf>,
        rules: &bosun_policy::SandboxRules,
    ) -> Result<Option<(SandboxPolicy, PathBuf)>, String> {
        match self {
            Sandboxing::On {
                worktree,
                temp_dir,
                extra_read_deny,
                exe,
                user_home,
                git,
                ..
            } => {
                let mut p =
                    SandboxPolicy::for_task(worktree, temp_dir, user_home.as_deref(), git.as_ref())
                        .map_err(|e| e.to_string())?;
                p.read_deny
                    .extend(extra_read_deny.iter().filter(|p| p.exists()).cloned());
                if let Some(home) = user_home {
                    for denied in rules.home_read_deny(home) {
                        if denied.exists() && !p.read_deny.contains(&denied) {
                            p.read_deny.push(denied);
                        }
                    }
                }
                for extra in &rules.extra_write {
                    let path = match (extra.strip_prefix("~/"), user_home) {
                        (Some(rest), Some(home)) => home.join(rest),
                        _ => PathBuf::from(extra),
                    };
                    if path.is_absolute() && path.exists() {
                        p.write_paths.push(path);
                    }
                }
                p.network = false;
                p.proxy = proxy;
                p.env_allow = rules.env_allow.clone();
                Ok(Some((p, exe.clone())))
            }
            Sandboxing::Off { .. } | Sandboxing::Disabled => Ok(None),
        }
    }

    /// True when commands are sandboxed but their network is not contained (no network
    /// namespace and no seccomp): every command then asks.
    pub fn network_uncontained(&self) -> bool {
        matches!(
            self,
            Sandboxing::On {
                network_contained: false,
                ..
            }
        )
    }

    /// Whether the command sandbox's seccomp filter refuses set-id mode bits (when it does not,
    /// the worktree is swept after every command). Without a sandbox there is nothing to sweep
    /// for: commands run with the user's own permissions.
    pub fn refuses_set_id(&self) -> bool {
        match self {
            Sandboxing::On { .. } => match bosun_exec::probe() {
                SandboxSupport::Full { seccomp, .. } => seccomp,
                _ => true,
            },
            Sandboxing::Off { .. } | Sandboxing::Disabled => true,
        }
    }

    /// Why commands must ask, when they cannot be confined.
    pub fn unavailable(&self) -> Option<&str> {
        match self {
            Sandboxing::Off { reason } => Some(reason),
            _ => None,
        }
    }
}
