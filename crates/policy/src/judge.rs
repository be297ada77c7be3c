//! Judging a shell command: every part it would run, every file it would redirect into, every
//! path argument that touches a protected file; the strictest part decides.

use crate::commands::{self, Part};
use crate::git_reads;
use crate::layers::CommandRule;
use crate::paths::{Location, locate};
use crate::shell::{Redirect, RedirectKind};
use crate::{BUILTIN_SOURCE, Decision, Mode, Policy, PolicyDecision};

/// The directory later parts of a command run in, as far as `cd` tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cwd {
    /// A path relative to the worktree root (`""` is the root), or an outside one as written.
    Known(String),
    /// After `cd -`, `cd $DIR` and the like.
    Unknown,
}

impl Cwd {
    pub(crate) fn root() -> Cwd {
        Cwd::Known(String::new())
    }

    /// Where `path` points when used from this directory; `None` when that is unknown.
    fn resolve(&self, path: &str) -> Option<String> {
        if path.starts_with(['/', '~']) || path.starts_with("$HOME") || path.starts_with("${HOME}")
        {
            return Some(path.to_string());
        }
        match self {
            Cwd::Known(dir) if dir.is_empty() => Some(path.to_string()),
            Cwd::Known(dir) => Some(format!("{dir}/{path}")),
            Cwd::Unknown => None,
        }
    }

    fn change(&self, argv: &[String]) -> Cwd {
        match argv.get(1).map(String::as_str) {
            None | Some("~") => Cwd::Known("~".into()),
            Some(dir) if dir.starts_with('-') || dir.contains('$') => Cwd::Unknown,
            Some(dir) => match self.resolve(dir).map(|p| locate(&p)) {
                Some(Location::Inside(p) | Location::Outside(p)) => Cwd::Known(p),
                None => Cwd::Unknown,
            },
        }
    }
}

/// Programs whose path arguments may be written (created, changed or removed).
const WRITERS: &[&str] = &[
    "tee", "touch", "truncate", "cp", "mv", "rm", "rmdir", "ln", "install", "mkdir", "chmod",
    "chown", "dd", "sed", "perl", "patch", "unzip", "tar", "rsync", "shred",
];

impl Policy {
    /// Decides a shell command: every part (compound commands, substitutions, wrappers,
    /// redirections) is judged and the strictest decides.
    pub fn check_command(&self, command: &str) -> PolicyDecision {
        let mut cwd = Cwd::root();
        let mut decisions = Vec::new();
        for part in commands::parts(command) {
            let decision = match part {
                Part::Run { argv, via: None } => {
                    let d = self.judge_run(&argv, &cwd);
                    if matches!(argv.first().map(String::as_str), Some("cd" | "pushd")) {
                        cwd = cwd.change(&argv);
                    }
                    d
                }
                Part::Run {
                    argv,
                    via: Some(via),
                } => {
                    let mut d = self.judge_run(&argv, &cwd);
                    d.reason = format!("{} ({via})", d.reason);
                    d
                }
                Part::Inline {
                    argv,
                    flag,
                    language,
                } => self.judge_inline(&argv, &flag, language),
                Part::Redirect(r) => self.judge_redirect(&r, &cwd),
                Part::Opaque { reason } => self.unknowable(reason),
            };
            decisions.push(decision);
        }
        decisions
            .into_iter()
            .reduce(PolicyDecision::stricter)
            .unwrap_or_else(|| self.by_mode(Decision::Ask, "the command is empty".into()))
    }

    /// Inline code as a whole. The commands it names are judged as parts of their own; what
    /// else it does Bosun cannot read, so when a policy file denies a command (a user-written
    /// `commands.deny`: the built-in denies — `sudo`, `mkfs`, `rm -rf /` … — guard what the
    /// sandbox refuses anyway, and counting them would make every snippet ask), the code asks,
    /// unless the user's own file allows the interpreter's inline flag (`python -c`).
    pub(crate) fn judge_inline(
        &self,
        argv: &[String],
        flag: &str,
        language: &str,
    ) -> PolicyDecision {
        let program = argv.first().map(String::as_str).unwrap_or_default();
        let program = program.rsplit('/').next().unwrap_or(program);
        let how = if flag == "<<" {
            format!("a here-document fed to `{program}`")
        } else {
            format!("`{program} {flag}`")
        };
        let denies: Vec<&CommandRule> = self
            .layers()
            .iter()
            .filter(|l| !l.builtin)
            .flat_map(|l| &l.commands)
            .filter(|r| r.decision == Decision::Deny)
            .collect();
        let Some(deny) = denies.first() else {
            return self.made(
                Decision::Allow,
                "inline code".into(),
                BUILTIN_SOURCE.into(),
                format!(
                    "no policy file denies a command, so {how} is judged by the commands its {language} code names"
                ),
            );
        };
        let lifted = self
            .layers()
            .iter()
            .filter(|l| l.trusted && !l.builtin)
            .flat_map(|l| &l.commands)
            .find(|r| {
                r.decision == Decision::Allow && r.pattern.matches(argv) && r.pattern.has_flag(flag)
            });
        if let Some(r) = lifted {
            return self.made(
                Decision::Allow,
                format!("commands.allow \"{}\"", r.text),
                r.origin.to_string(),
                format!(
                    "your own policy file allows `{}`, so its inline {language} code runs unasked although commands.deny \"{}\" exists (the commands the code names are still judged)",
                    r.text, deny.text
                ),
            );
        }
        let mut listed: Vec<String> = denies
            .iter()
            .take(3)
            .map(|r| format!("\"{}\"", r.text))
            .collect();
        if denies.len() > 3 {
            listed.push("…".into());
        }
        self.made(
            Decision::Ask,
            format!("inline code (commands.deny \"{}\")", deny.text),
            deny.origin.to_string(),
            format!(
                "{how} runs inline {language} code, which can start any program in ways Bosun cannot read, and a policy file denies commands (commands.deny {}); only the string literals the code passes to os.system, subprocess, child_process, system, exec and backticks are judged. Approve it, or allow `{program} {flag}` in your own policy file",
                listed.join(", ")
            ),
        )
    }

    fn unknowable(&self, reason: String) -> PolicyDecision {
        let decision = if self.mode() == Mode::ReadOnly {
            Decision::Deny
        } else {
            Decision::Ask
        };
        self.made(
            decision,
            "command parsing".into(),
            BUILTIN_SOURCE.into(),
            reason,
        )
    }

    /// Path arguments that a `read_deny` rule protects (any program) or a `deny` rule protects
    /// (programs that write their arguments).
    fn protected_argument(&self, argv: &[String], cwd: &Cwd) -> Option<PolicyDecision> {
        let program = argv.first().map(String::as_str).unwrap_or_default();
        let base = program.rsplit('/').next().unwrap_or(program);
        let writes = WRITERS.contains(&base);
        if base == "git" {
            // `git show HEAD:.env`, `git cat-file -p :config/.env`: a path inside a revision.
            for arg in argv.iter().skip(1) {
                for path in git_reads::revision_paths(arg) {
                    let resolved = cwd.resolve(path).unwrap_or_else(|| path.to_string());
                    if let Some(mut denied) = self.path_denied(&locate(&resolved), path, false) {
                        denied.reason = format!(
                            "`git` would print `{path}` from the object store (`{arg}`), which paths.read_deny protects"
                        );
                        return Some(denied);
                    }
                }
            }
        }
        for arg in argv.iter().skip(1) {
            let candidate = match arg.split_once('=') {
                Some((flag, value)) if flag.starts_with('-') || flag == "of" || flag == "if" => {
                    value
                }
                _ => arg.as_str(),
            };
            if candidate.starts_with('-') || candidate.is_empty() {
                continue;
            }
            let resolved = cwd
                .resolve(candidate)
                .unwrap_or_else(|| candidate.to_string());
            let location = locate(&resolved);
            if let Some(mut denied) = self.path_denied(&location, candidate, writes) {
                let verb = if denied.rule.starts_with("paths.read_deny") {
                    "read"
                } else {
                    "write"
                };
                let list = if verb == "read" { "read_deny" } else { "deny" };
                denied.reason =
                    format!("`{program}` would {verb} `{candidate}`, which paths.{list} protects");
                return Some(denied);
            }
        }
        None
    }

    pub(crate) fn judge_run(&self, argv: &[String], cwd: &Cwd) -> PolicyDecision {
        let program = argv.first().map(String::as_str).unwrap_or_default();
        if let Some(denied) = self.protected_argument(argv, cwd) {
            return denied;
        }
        let rule = Policy::strictest_rule(self.matching_rules(argv));
        let from_rule = |r: &CommandRule, reason: String| {
            self.made(
                r.decision,
                format!("commands.{} \"{}\"", r.decision.as_str(), r.text),
                r.origin.to_string(),
                reason,
            )
        };
        match (rule, self.mode()) {
            (Some(r), _) if r.decision == Decision::Deny => {
                from_rule(r, format!("`{program}` is denied"))
            }
            (Some(r), Mode::ReadOnly)
                if r.decision == Decision::Allow && self.read_only_command(argv) =>
            {
                from_rule(r, format!("`{program}` is a read-only command"))
            }
            // A policy file's ask holds in read-only too: the read-only command asks.
            (Some(r), Mode::ReadOnly)
                if r.decision == Decision::Ask && !r.builtin && self.read_only_command(argv) =>
            {
                from_rule(
                    r,
                    format!("`{program}` is a read-only command, but a policy file says it asks"),
                )
            }
            (_, Mode::ReadOnly) => self.by_mode(
                Decision::Deny,
                format!(
                    "only read-only commands run in read-only mode, and `{program}` is not one"
                ),
            ),
            // Full-auto relaxes the built-in default asks, never a policy file's.
            (Some(r), Mode::FullAuto) if r.decision == Decision::Ask && r.builtin => self.by_mode(
                Decision::Allow,
                format!(
                    "anything not denied runs (the built-in default commands.ask \"{}\" at {} is waived)",
                    r.text, r.origin
                ),
            ),
            (Some(r), mode) => {
                let reason = match (r.decision, mode) {
                    (Decision::Allow, _) => format!("`{program}` is allowed"),
                    (_, Mode::FullAuto) => format!(
                        "`{program}` needs approval: a policy file's ask rule holds in every mode (full-auto waives only the built-in defaults)"
                    ),
                    _ => format!("`{program}` needs approval"),
                };
                from_rule(r, reason)
            }
            (None, Mode::FullAuto) => {
                self.by_mode(Decision::Allow, "anything not denied runs".into())
            }
            (None, _) => self.by_mode(Decision::Ask, format!("no rule allows `{program}`")),
        }
    }

    fn judge_redirect(&self, redirect: &Redirect, cwd: &Cwd) -> PolicyDecision {
        let target = &redirect.target.text;
        let harmless = || {
            self.made(
                Decision::Allow,
                "redirection".into(),
                BUILTIN_SOURCE.into(),
                format!("`{target}` is harmless"),
            )
        };
        if matches!(
            target.as_str(),
            "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
        ) {
            return harmless();
        }
        let resolved = match cwd.resolve(target) {
            Some(path)
                if !redirect.target.dynamic
                    || path.starts_with("$HOME/")
                    || path.starts_with("${HOME}/") =>
            {
                path
            }
            _ => {
                return self.unknowable(format!(
                    "redirects to `{target}`, a path only known when the command runs"
                ));
            }
        };
        let location = locate(&resolved);
        if redirect.kind == RedirectKind::Read {
            return self
                .path_denied(&location, target, false)
                .unwrap_or_else(harmless);
        }
        if let Some(denied) = self.path_denied(&location, target, true) {
            return denied;
        }
        match location {
            Location::Outside(_) => match self.mode() {
                Mode::ReadOnly => self.by_mode(
                    Decision::Deny,
                    "nothing is written in read-only mode".into(),
                ),
                Mode::FullAuto => self.by_mode(Decision::Allow, "anything not denied runs".into()),
                _ => self.outside(target, Decision::Ask),
            },
            Location::Inside(clean) => self.check_write(&clean),
        }
    }
}
