//! Bosun's own calls of the git CLI, made so that nothing a task wrote can make git run a program.
//!
//! The worktree is hostile: the agent controls every byte of it, its `.git` file and its
//! `.gitattributes` included. Git finds its repository, configuration, hooks and filters through
//! exactly those files and the environment, so every call made here:
//! - names its repository (`--git-dir`) and working tree (`--work-tree`) explicitly and never
//!   discovers them: the git directory is one Bosun wrote itself ([`crate::layout::Layout::bosun_git_dir`]),
//!   not the worktree's `.git`, not the user's `.git` (whose config may name filters);
//! - runs with a cleared environment (no API keys, no `GIT_*` variables from the caller), with
//!   `GIT_CONFIG_NOSYSTEM=1` and `GIT_CONFIG_GLOBAL=/dev/null`, so no configuration applies but
//!   Bosun's own git directory's and the `-c` options below, and the identity is passed explicitly;
//! - disables hooks, fsmonitor, the global attributes file and external diff/textconv programs;
//! - has no filter drivers configured anywhere, and the git directory's `info/attributes` (which
//!   outranks every `.gitattributes`) unsets `text`, `filter`, `ident` and
//!   `working-tree-encoding`, so files are stored and checked out as the bytes on disk.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The identity of anything Bosun itself commits.
pub(crate) const IDENTITY: (&str, &str) = ("Bosun", "bosun@localhost");

/// `info/attributes` of Bosun's own git directories: outranks every `.gitattributes` a task
/// writes, so no attribute converts content on its way into or out of the object store.
pub(crate) const NEUTRAL_ATTRIBUTES: &str = "* -text -filter -ident -working-tree-encoding\n";

/// Variables of Bosun's own environment a git call keeps: where git is, where the user's
/// default ignore file lives (`$XDG_CONFIG_HOME/git/ignore`), and the locale.
const KEPT_ENV: &[&str] = &["PATH", "HOME", "XDG_CONFIG_HOME", "LANG", "TZ"];

/// A git CLI call on Bosun's own terms (see the module docs).
pub(crate) struct GitCall {
    git_dir: PathBuf,
    work_tree: Option<PathBuf>,
    index: Option<PathBuf>,
    excludes_file: Option<PathBuf>,
}

impl GitCall {
    /// A call on `git_dir`, which must be a git directory Bosun wrote itself.
    pub fn new(git_dir: &Path) -> GitCall {
        GitCall {
            git_dir: git_dir.to_path_buf(),
            work_tree: None,
            index: None,
            excludes_file: None,
        }
    }

    pub fn work_tree(mut self, path: &Path) -> GitCall {
        self.work_tree = Some(path.to_path_buf());
        self
    }

    /// `GIT_INDEX_FILE`: the index the call reads and writes.
    pub fn index(mut self, path: &Path) -> GitCall {
        self.index = Some(path.to_path_buf());
        self
    }

    /// The user's own ignore file (`core.excludesFile` of their global configuration, which the
    /// call does not read), so ignored files are the ones the user's git ignores.
    pub fn excludes_file(mut self, path: Option<PathBuf>) -> GitCall {
        self.excludes_file = path;
        self
    }

    /// The command, ready for `args`. Its working directory is the work tree (or the git
    /// directory), so a relative path never resolves against Bosun's own directory.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new("git");
        cmd.env_clear();
        for key in KEPT_ENV {
            if let Some(value) = std::env::var_os(key) {
                cmd.env(key, value);
            }
        }
        cmd.env("LC_ALL", "C")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_ATTR_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_AUTHOR_NAME", IDENTITY.0)
            .env("GIT_AUTHOR_EMAIL", IDENTITY.1)
            .env("GIT_COMMITTER_NAME", IDENTITY.0)
            .env("GIT_COMMITTER_EMAIL", IDENTITY.1);
        if let Some(index) = &self.index {
            cmd.env("GIT_INDEX_FILE", index);
        }
        let mut git_dir = std::ffi::OsString::from("--git-dir=");
        git_dir.push(&self.git_dir);
        cmd.arg(git_dir);
        if let Some(work_tree) = &self.work_tree {
            let mut arg = std::ffi::OsString::from("--work-tree=");
            arg.push(work_tree);
            cmd.arg(arg).current_dir(work_tree);
        } else {
            cmd.current_dir(&self.git_dir);
        }
        for setting in [
            "core.hooksPath=/dev/null",
            "core.fsmonitor=false",
            "core.attributesFile=/dev/null",
            "core.untrackedCache=false",
            "core.splitIndex=false",
            "core.autocrlf=false",
            "core.quotePath=false",
            "core.sparseCheckout=false",
            "feature.manyFiles=false",
            "index.version=2",
            "protocol.allow=never",
        ] {
            cmd.args(["-c", setting]);
        }
        if let Some(file) = &self.excludes_file {
            let mut setting = std::ffi::OsString::from("core.excludesFile=");
            setting.push(file);
            cmd.arg("-c").arg(setting);
        }
        cmd
    }
}

/// A spawned git call whose output is collected on threads, so it can be waited for with a
/// deadline: a call that hangs (a huge tree on a slow disk, anything unforeseen) is killed
/// rather than holding Bosun forever.
pub(crate) struct Running {
    child: std::process::Child,
    out: Option<std::thread::JoinHandle<Vec<u8>>>,
    err: Option<std::thread::JoinHandle<Vec<u8>>>,
}

impl Running {
    pub fn spawn(mut cmd: Command) -> std::io::Result<Running> {
        use std::process::Stdio;
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
            pipe.map(|mut p| {
                std::thread::spawn(move || {
                    let mut buf = Vec::new();
                    let _ = p.read_to_end(&mut buf);
                    buf
                })
            })
        };
        let out = drain(
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
        );
        let err = drain(
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
        );
        Ok(Running { child, out, err })
    }

    /// Waits until `deadline`; past it the call is killed and an error says so.
    pub fn wait(mut self, deadline: std::time::Instant) -> std::io::Result<std::process::Output> {
        let status = loop {
            if let Some(status) = self.child.try_wait()? {
                break status;
            }
            if std::time::Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "git did not finish in time and was stopped",
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        };
        let join = |h: Option<std::thread::JoinHandle<Vec<u8>>>| {
            h.and_then(|h| h.join().ok()).unwrap_or_default()
        };
        Ok(std::process::Output {
            status,
            stdout: join(self.out.take()),
            stderr: join(self.err.take()),
        })
    }
}

/// How long Bosun's own git calls may take: a scan of the worktree, a checkout of a large tree.
pub(crate) const SCAN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);
pub(crate) const CHECKOUT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1800);

/// The user's `core.excludesFile` from their global git configuration, read by libgit2 (which
/// runs nothing), when it names a file that exists. Read once per process: checkpoints ask for it
/// after every command.
pub(crate) fn user_excludes_file() -> Option<PathBuf> {
    static FILE: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    FILE.get_or_init(|| {
        let config = git2::Config::open_default().ok()?;
        let raw = config.get_path("core.excludesFile").ok()?;
        raw.is_file().then_some(raw)
    })
    .clone()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_call_names_its_repository_and_reads_no_configuration_of_its_own() {
        let cmd = GitCall::new(Path::new("/b/git"))
            .work_tree(Path::new("/w"))
            .index(Path::new("/b/index"))
            .command();
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args[..2], ["--git-dir=/b/git", "--work-tree=/w"]);
        assert!(args.contains(&"core.hooksPath=/dev/null".to_string()));
        assert!(args.contains(&"core.fsmonitor=false".to_string()));
        let envs: Vec<(String, Option<String>)> = cmd
            .get_envs()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.map(|v| v.to_string_lossy().into_owned()),
                )
            })
            .collect();
        let get = |key: &str| {
            envs.iter()
                .find(|(k, _)| k == key)
                .and_then(|(_, v)| v.clone())
        };
        assert_eq!(get("GIT_CONFIG_GLOBAL").as_deref(), Some("/dev/null"));
        assert_eq!(get("GIT_CONFIG_NOSYSTEM").as_deref(), Some("1"));
        assert_eq!(get("GIT_INDEX_FILE").as_deref(), Some("/b/index"));
        assert_eq!(cmd.get_current_dir(), Some(Path::new("/w")));
    }
}
