//! Policy decisions for tool calls: pure and synchronous, no IO.
//!
//! A [`Decision`] is ordered `Allow < Ask < Deny`; when several rules match, the strictest wins,
//! and the result carries the rule that made it, the file and line it came from and the mode, so
//! a frontend can say why.
//!
//! A [`Policy`] is built from [`Layer`]s (TOML texts read by the caller) merged in order: the
//! built-in defaults ([`Layer::builtin`]), the user's `$BOSUN_HOME/policy.toml`, the repository's
//! `.bosun/policy.toml`, then a `--policy FILE`. Among policy files the strictest matching rule
//! wins, so a project file can tighten but never loosen what the user's file denies. Built-in
//! command rules are defaults: a file rule at least as specific replaces them (a user may allow
//! `sudo`, but allowing `find` does not undo the built-in `find -delete`). Path rules from every
//! layer apply, and a path is inside the write scope only if every layer that sets one agrees.
//! The mode is `--mode` if given, else the strictest `mode` of the trusted layers (built-in,
//! user, `--policy`; default `ask`), tightened, never loosened, by a project file's `mode`.
//!
//! Network: a command granted the network (`[network] allow`, `[[network.rules]]`) or any
//! command when `[network] domains` is set gets Bosun's egress proxy, never the raw network;
//! [`Policy::network_grant`] says which hosts it reaches and [`NetworkGrant::decide`] decides
//! one host (see `network`).
//!
//! Commands are parsed, not string-matched (`shell`): compound commands, substitutions,
//! subshells, `bash -c`, `eval`, `sudo`, `env`, `xargs`, `timeout`, `find -exec` … are seen
//! through, redirections and path arguments are checked against the path rules (following
//! `cd`), and anything that cannot be followed asks. Interpreters are doors (`interpreters`):
//! in `python -c`, `node -e`, `perl -e`, `ruby -e` and here-documents fed to them, the string
//! literals passed to `os.system`, `subprocess.*`, `child_process.*`, `system`, backticks … are
//! judged as commands, and when a policy file denies a command the rest of the code asks.
//! Project scripts (`make`, `npm run`, `cargo test`, a script file) are not inspected
//! (`scripts`): they keep their decision but get no network grant unless a rule names them.
//!
//! MCP tools (`mcp`): `[mcp] allow | ask | deny = ["server/tool", "server/*"]`; with no rule a
//! call asks in every mode, full-auto included, and a repository's file cannot allow one.
//!
//! Modes relax only the built-in defaults: `full-auto` waives the built-in asks, never the
//! asks, write scope or approval limits of a policy file; `read-only` is a ceiling no allow rule
//! lifts.

mod commands;
mod edit;
mod git_reads;
mod interpreters;
mod judge;
mod layers;
mod mcp;
mod network;
mod paths;
mod policy;
pub mod redact;
mod scripts;
mod shell;
mod suggest;

use serde::{Deserialize, Serialize};

pub use edit::{RuleList, add_rule};
pub use git_reads::git_prints_objects;
pub use mcp::McpPattern;
pub use network::{
    DomainPattern, DomainRule, GrantRule, HostDecision, NetworkGrant, normalize_host,
};
pub use policy::{Policy, SandboxRules};
pub use scripts::{ProjectScript, project_scripts};
pub use suggest::suggestions;

/// The `source` of the built-in layer.
pub const BUILTIN_SOURCE: &str = "built-in";

/// What may happen to a tool call. Ordered: the strictest (greatest) of several matches wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

impl Decision {
    pub fn as_str(&self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

/// A decision with its explanation: the rule that made it, where that rule came from, the mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyDecision {
    pub decision: Decision,
    /// The rule that matched, e.g. `commands.deny "git push"`, `paths.write` or `mode ask`.
    pub rule: String,
    /// Where the rule came from: `path/to/policy.toml:12`, `built-in:30`, or `mode` when the
    /// mode alone decided.
    pub source: String,
    pub mode: Mode,
    /// One sentence for a person: what matched and why that leads to this decision.
    pub reason: String,
}

impl PolicyDecision {
    /// Combines two decisions: the stricter wins; on a tie the first is kept.
    pub fn stricter(self, other: PolicyDecision) -> PolicyDecision {
        if other.decision > self.decision {
            other
        } else {
            self
        }
    }
}

/// How much runs without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Reads and read-only commands only; every write, other command and connection is
    /// denied, whatever an allow rule says (a policy file's ask on a read-only command asks).
    ReadOnly,
    /// Reads run; edits and commands not allowed by a rule ask.
    #[default]
    Ask,
    /// Edits inside the write scope run; commands as in `ask`.
    AutoEdit,
    /// Anything not denied runs (commands inside the sandbox), except what a policy file asks
    /// about: full-auto waives only the built-in default asks, never the `commands.ask` rules,
    /// write scope (`paths.write`) or approval limits of `$BOSUN_HOME/policy.toml`,
    /// `.bosun/policy.toml` or `--policy`.
    FullAuto,
}

impl Mode {
    pub fn as_str(&self) -> &'static str {
        match self {
            Mode::ReadOnly => "read-only",
            Mode::Ask => "ask",
            Mode::AutoEdit => "auto-edit",
            Mode::FullAuto => "full-auto",
        }
    }

    /// Lower is stricter: read-only < ask < auto-edit < full-auto.
    fn looseness(&self) -> u8 {
        match self {
            Mode::ReadOnly => 0,
            Mode::Ask => 1,
            Mode::AutoEdit => 2,
            Mode::FullAuto => 3,
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Mode {
    type Err = PolicyError;
    fn from_str(s: &str) -> Result<Mode, PolicyError> {
        match s {
            "read-only" => Ok(Mode::ReadOnly),
            "ask" => Ok(Mode::Ask),
            "auto-edit" => Ok(Mode::AutoEdit),
            "full-auto" => Ok(Mode::FullAuto),
            other => Err(PolicyError::UnknownMode(other.to_string())),
        }
    }
}

/// One policy text and where it came from (`built-in` or a file path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    pub source: String,
    pub text: String,
    /// Written by the user (built-in, `$BOSUN_HOME/policy.toml`, `--policy FILE`): its `mode`
    /// may be looser than `ask`. A repository's file is not trusted: its mode only tightens.
    pub trusted: bool,
}

impl Layer {
    /// The built-in defaults (`assets/policy/default.toml`).
    pub fn builtin() -> Layer {
        Layer {
            source: BUILTIN_SOURCE.into(),
            text: include_str!("../../../assets/policy/default.toml").into(),
            trusted: true,
        }
    }

    /// The example policy from the design notes (`assets/policy/example.toml`).
    pub fn example() -> Layer {
        Layer {
            source: "assets/policy/example.toml".into(),
            text: include_str!("../../../assets/policy/example.toml").into(),
            trusted: true,
        }
    }

    /// A file the user controls: `$BOSUN_HOME/policy.toml` or `--policy FILE`.
    pub fn file(path: impl Into<String>, text: impl Into<String>) -> Layer {
        Layer {
            source: path.into(),
            text: text.into(),
            trusted: true,
        }
    }

    /// A repository's `.bosun/policy.toml`: its rules apply, but its mode can only tighten.
    pub fn project(path: impl Into<String>, text: impl Into<String>) -> Layer {
        Layer {
            source: path.into(),
            text: text.into(),
            trusted: false,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PolicyError {
    #[error("{file}:{line}: {message}")]
    Invalid {
        file: String,
        line: usize,
        message: String,
    },
    #[error("unknown mode `{0}`: use read-only, ask, auto-edit or full-auto")]
    UnknownMode(String),
    #[error(
        "unknown rule list `{0}`: use commands.allow, commands.ask, commands.deny, paths.write, paths.deny, paths.read_deny, network.allow, network.domains, mcp.allow, mcp.ask or mcp.deny"
    )]
    UnknownList(String),
    #[error("the policy file is not valid TOML ({0}); fix it before adding a rule")]
    Unreadable(String),
}
