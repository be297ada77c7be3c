//! Policy decisions for tool calls: pure and synchronous, no IO.
//!
//! A [`Decision`] is ordered `Allow < Ask < Deny`; when several rules match, the strictest wins,
//! and the result carries the rule that made it so a frontend can say why. This first version
//! knows only modes; path scopes, command rules and approvals build on this seam.

use bosun_protocol::ToolAction;
use serde::{Deserialize, Serialize};

/// What may happen to a tool call. Ordered: the strictest (greatest) of several matches wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

/// A decision with the rule that made it and where that rule came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyDecision {
    pub decision: Decision,
    /// The rule that matched, e.g. `mode full-auto` or `commands.deny "git push"`.
    pub rule: String,
    /// Where the rule came from (`built-in`, a policy file path and line).
    pub source: String,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Reads only; every write and command is denied.
    ReadOnly,
    /// Everything runs unasked.
    FullAuto,
}

impl Mode {
    pub fn as_str(&self) -> &'static str {
        match self {
            Mode::ReadOnly => "read-only",
            Mode::FullAuto => "full-auto",
        }
    }
}

/// The policy a task runs under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    mode: Mode,
}

impl Policy {
    pub fn new(mode: Mode) -> Self {
        Policy { mode }
    }

    /// Every tool call is allowed (the foundation's behaviour before rules and approvals exist).
    pub fn allow_all() -> Self {
        Policy::new(Mode::FullAuto)
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Decides whether a tool call that would do `action` may run.
    pub fn decide(&self, action: &ToolAction) -> PolicyDecision {
        let by_mode = |decision| PolicyDecision {
            decision,
            rule: format!("mode {}", self.mode.as_str()),
            source: "built-in".into(),
        };
        match (self.mode, action) {
            (_, ToolAction::Read { .. } | ToolAction::Internal) => by_mode(Decision::Allow),
            (Mode::ReadOnly, ToolAction::Write { .. } | ToolAction::Command { .. }) => {
                by_mode(Decision::Deny)
            }
            (Mode::FullAuto, _) => by_mode(Decision::Allow),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strictest_decision_wins() {
        let allow = Policy::allow_all().decide(&ToolAction::Internal);
        let deny = Policy::new(Mode::ReadOnly).decide(&ToolAction::Command {
            command: "rm -rf /".into(),
        });
        assert_eq!(
            allow.clone().stricter(deny.clone()).decision,
            Decision::Deny
        );
        assert_eq!(deny.stricter(allow).decision, Decision::Deny);
        assert!(Decision::Allow < Decision::Ask && Decision::Ask < Decision::Deny);
    }

    #[test]
    fn read_only_denies_writes_and_commands_but_not_reads() {
        let p = Policy::new(Mode::ReadOnly);
        let write = p.decide(&ToolAction::Write {
            paths: vec!["src/a.rs".into()],
        });
        assert_eq!(write.decision, Decision::Deny);
        assert_eq!(write.rule, "mode read-only");
        let read = p.decide(&ToolAction::Read {
            paths: vec!["src/a.rs".into()],
        });
        assert_eq!(read.decision, Decision::Allow);
    }
}
