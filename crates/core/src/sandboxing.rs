//! How a task's commands are confined: the sandbox from `bosun-exec` when the kernel supports
//! it; otherwise every command asks (never silently unsandboxed).

use bosun_exec::{SandboxPolicy, SandboxSupport};
use std::path::{Path, PathBuf};

pub enum Sandboxing {
    On {
        worktree: PathBuf,
        temp_dir: PathBuf,
        /// Bosun's own secrets: the config (key variable names), the journal.
        extra_read_deny: Vec<PathBuf>,
        exe: PathBuf,
        user_home: Option<PathBuf>,
    },
    /// Commands ask, because they cannot be confined.
    Off { reason: String },
    /// The user turned it off explicitly (tests of the foundation, `--no-sandbox`): commands run
    /// as the policy says.
    Disabled,
}

impl Sandboxing {
    /// Probes the kernel once and prepares the task's sandbox.
    pub fn for_task(home: &Path, task_id: &str, worktree: &Path, enabled: bool) -> Sandboxing {
        if !enabled {
            return Sandboxing::Disabled;
        }
        if let SandboxSupport::Unavailable { reason } = bosun_exec::probe() {
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
        Sandboxing::On {
            worktree: worktree.to_path_buf(),
            temp_dir: home.join("tmp").join(task_id),
            extra_read_deny: vec![
                home.join("config.toml"),
                home.join("bosun.db"),
                home.join("bosun.db-wal"),
                home.join("bosun.db-shm"),
            ],
            exe,
            user_home: dirs::home_dir(),
        }
    }

    /// The sandbox for one command; `network` comes from the policy.
    pub fn policy(
        &self,
        network: bool,
        env_allow: Vec<String>,
    ) -> Result<Option<(SandboxPolicy, PathBuf)>, String> {
        match self {
            Sandboxing::On {
                worktree,
                temp_dir,
                extra_read_deny,
                exe,
                user_home,
            } => {
                let mut p = SandboxPolicy::for_task(worktree, temp_dir, user_home.as_deref())
                    .map_err(|e| e.to_string())?;
                p.read_deny
                    .extend(extra_read_deny.iter().filter(|p| p.exists()).cloned());
                p.network = network;
                p.env_allow = env_allow;
                Ok(Some((p, exe.clone())))
            }
            Sandboxing::Off { .. } | Sandboxing::Disabled => Ok(None),
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
