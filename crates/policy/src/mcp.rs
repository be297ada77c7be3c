//! MCP tools: `[mcp] allow | ask | deny = ["server/tool", "server/*"]`, and the decision for a
//! call of one.
//!
//! An MCP tool is a door out of the sandbox (the server's own code, its network), so with no
//! rule a call asks in every mode, full-auto included: the mode never loosens MCP. The strictest
//! matching rule of all layers wins (deny > ask > allow). A repository's `.bosun/policy.toml`
//! may ask about or deny a tool, never allow one: its `[mcp] allow` entries are ignored (as its
//! allow of an interpreter's inline flag is), and the decision says so.

use crate::layers::Origin;
use crate::{Decision, Mode, Policy, PolicyDecision};

/// What `[mcp]` lists accept, for error messages.
pub(crate) const FORMS: &str = "write `server/tool` or `server/*` (server and tool names are letters, digits, `_`, `-` and `.`)";

/// `server/tool`, or `server/*` for every tool of the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPattern {
    pub server: String,
    /// `None` for `*`.
    pub tool: Option<String>,
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

impl McpPattern {
    pub fn parse(text: &str) -> Result<McpPattern, String> {
        let bad = |why: String| format!("`{text}` is not an MCP rule: {why}; {FORMS}");
        // The name the model sees, `mcp__server__tool`, written where the rule belongs.
        if let Some(rest) = text.strip_prefix("mcp__")
            && let Some((server, tool)) = rest.split_once("__")
            && is_name(server)
            && is_name(tool)
        {
            return Err(bad(format!(
                "that is the name the model sees; did you mean `{server}/{tool}`?"
            )));
        }
        let Some((server, tool)) = text.split_once('/') else {
            let hint = match text.split_once([':', ' ']) {
                Some((s, t)) if is_name(s) && (is_name(t) || t == "*") => {
                    format!("did you mean `{s}/{t}`?")
                }
                _ if is_name(text) => format!(
                    "it has no `/`; did you mean `{text}/*` (every tool of the server `{text}`)?"
                ),
                _ => "it has no `/`".to_string(),
            };
            return Err(bad(hint));
        };
        if server == "*" || server.contains('*') {
            return Err(bad(
                "the server must be named (a rule for every server would let any server a repository declares in)".into(),
            ));
        }
        if server.is_empty() {
            return Err(bad("the server name is empty".into()));
        }
        if tool.is_empty() {
            return Err(bad(format!(
                "the tool name is empty; did you mean `{server}/*`?"
            )));
        }
        if tool.contains('/') {
            return Err(bad("it has more than one `/`".into()));
        }
        if !is_name(server) {
            return Err(bad(format!(
                "the server name `{server}` has other characters"
            )));
        }
        if tool == "*" {
            return Ok(McpPattern {
                server: server.to_string(),
                tool: None,
            });
        }
        if tool.contains(['*', '?', '[', '{']) {
            return Err(bad(format!(
                "`{tool}` is a glob, and only a whole `*` is accepted for the tool; did you mean `{server}/*`?"
            )));
        }
        if !is_name(tool) {
            return Err(bad(format!("the tool name `{tool}` has other characters")));
        }
        Ok(McpPattern {
            server: server.to_string(),
            tool: Some(tool.to_string()),
        })
    }

    pub fn matches(&self, server: &str, tool: &str) -> bool {
        self.server == server && self.tool.as_deref().is_none_or(|t| t == tool)
    }
}

/// One `[mcp]` rule, with the file and line it came from.
#[derive(Debug, Clone)]
pub struct McpRule {
    pub decision: Decision,
    pub pattern: McpPattern,
    pub text: String,
    pub origin: Origin,
}

impl Policy {
    /// Decides a call of the MCP tool `tool` of `server`.
    pub fn check_mcp(&self, server: &str, tool: &str) -> PolicyDecision {
        let name = format!("{server}/{tool}");
        let mut ignored: Option<&McpRule> = None;
        let mut best: Option<&McpRule> = None;
        for layer in self.layers() {
            for rule in layer.mcp.iter().filter(|r| r.pattern.matches(server, tool)) {
                if rule.decision == Decision::Allow && !layer.trusted {
                    ignored.get_or_insert(rule);
                    continue;
                }
                if best.is_none_or(|b| rule.decision > b.decision) {
                    best = Some(rule);
                }
            }
        }
        let ignored_note = ignored.map(|r| {
            format!(
                "; {} allows it (mcp.allow \"{}\"), but a repository's policy file cannot let an MCP tool run unasked: put the allow in your own policy file",
                r.origin, r.text
            )
        });
        let Some(rule) = best else {
            let full_auto = if self.mode() == Mode::FullAuto {
                ", full-auto included"
            } else {
                ""
            };
            return self.made(
                Decision::Ask,
                "mcp".into(),
                crate::BUILTIN_SOURCE.into(),
                format!(
                    "no [mcp] rule names `{name}`: MCP tools ask by default in every mode{full_auto}; `[mcp] allow = [\"{name}\"]` in your policy file lets it run unasked{}",
                    ignored_note.unwrap_or_default()
                ),
            );
        };
        let reason = match rule.decision {
            Decision::Deny => format!("the MCP tool `{name}` is denied"),
            Decision::Ask => format!(
                "the MCP tool `{name}` needs approval: an [mcp] ask holds in every mode{}",
                ignored_note.unwrap_or_default()
            ),
            Decision::Allow => format!("the MCP tool `{name}` is allowed"),
        };
        self.made(
            rule.decision,
            format!("mcp.{} \"{}\"", rule.decision.as_str(), rule.text),
            rule.origin.to_string(),
            reason,
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn patterns_name_a_server_and_a_tool_or_every_tool() {
        let p = McpPattern::parse("github/create_issue").unwrap();
        assert!(p.matches("github", "create_issue"));
        assert!(!p.matches("github", "create_issues"));
        assert!(!p.matches("gitlab", "create_issue"));
        let all = McpPattern::parse("my-server.v2/*").unwrap();
        assert!(all.matches("my-server.v2", "anything"));
        assert!(!all.matches("my-server", "anything"));
    }

    #[test]
    fn bad_patterns_say_what_they_could_have_meant() {
        let err = |t: &str| McpPattern::parse(t).unwrap_err();
        assert!(
            err("github").contains("did you mean `github/*`"),
            "{}",
            err("github")
        );
        assert!(err("github:create_issue").contains("did you mean `github/create_issue`"));
        assert!(err("mcp__github__create_issue").contains("did you mean `github/create_issue`"));
        assert!(err("github/").contains("did you mean `github/*`"));
        assert!(err("*/create_issue").contains("the server must be named"));
        assert!(err("/x").contains("the server name is empty"));
        assert!(err("github/create_*").contains("is a glob"));
        assert!(err("github/a/b").contains("more than one `/`"));
        assert!(err("git hub/x").contains("other characters"));
        for e in [err("github"), err("*/x"), err("a/b c")] {
            assert!(e.contains("`server/tool` or `server/*`"), "{e}");
        }
    }
}
