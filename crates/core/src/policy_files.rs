//! Where a task's policy comes from: the built-in defaults, the user's
//! `$BOSUN_HOME/policy.toml`, the repository's `.bosun/policy.toml` (read from the user's
//! checkout, never from the agent's worktree, which the agent can write), and `--policy FILE`.

use crate::CoreError;
use bosun_policy::{Layer, Mode, Policy, RuleList};
use bosun_protocol::{RuleScope, ToolAction};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct PolicyFiles {
    pub user: PathBuf,
    pub project: PathBuf,
    pub extra: Option<PathBuf>,
    pub mode: Option<Mode>,
}

impl PolicyFiles {
    pub fn new(home: &Path, repo_root: &Path, extra: Option<PathBuf>, mode: Option<Mode>) -> Self {
        PolicyFiles {
            user: home.join("policy.toml"),
            project: repo_root.join(".bosun").join("policy.toml"),
            extra,
            mode,
        }
    }

    /// Reads the layers that exist and builds the policy. A `--policy FILE` that does not exist
    /// is an error; the user and project files are optional.
    pub fn load(&self) -> Result<Policy, CoreError> {
        let mut layers = Vec::new();
        // The project file is untrusted (it comes with the repository): it may tighten, never
        // loosen, what the user's own files allow.
        for (path, required, trusted) in [
            (Some(&self.user), false, true),
            (Some(&self.project), false, false),
            (self.extra.as_ref(), true, true),
        ] {
            let Some(path) = path else { continue };
            match std::fs::read_to_string(path) {
                Ok(text) => {
                    let source = path.display().to_string();
                    layers.push(if trusted {
                        Layer::file(source, text)
                    } else {
                        Layer::project(source, text)
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {}
                Err(e) => {
                    return Err(CoreError::Config(format!(
                        "cannot read the policy file {}: {e}",
                        path.display()
                    )));
                }
            }
        }
        Policy::with_builtin(&layers, self.mode).map_err(|e| CoreError::Config(e.to_string()))
    }

    /// Writes `rule` to the chosen policy file (creating it) and returns the file and the policy
    /// rebuilt with it.
    pub fn add_rule(
        &self,
        scope: RuleScope,
        action: &ToolAction,
        rule: &str,
    ) -> Result<(PathBuf, Policy), CoreError> {
        let path = match scope {
            RuleScope::Project => self.project.clone(),
            RuleScope::User => self.user.clone(),
        };
        let list = match action {
            ToolAction::Command { .. } => RuleList::CommandsAllow,
            ToolAction::Write { .. } => RuleList::PathsWrite,
            ToolAction::Network { .. } => RuleList::NetworkDomains,
            // A repository's file cannot let an MCP tool run unasked (its `[mcp] allow` is
            // ignored), so the rule would do nothing there.
            ToolAction::Mcp { server, tool, .. } if scope == RuleScope::Project => {
                return Err(CoreError::Config(format!(
                    "an MCP tool can be allowed only in your own policy file ({}): a repository's .bosun/policy.toml cannot let `{server}/{tool}` run unasked; save the rule for the user",
                    self.user.display()
                )));
            }
            ToolAction::Mcp { .. } => RuleList::McpAllow,
            ToolAction::Read { .. }
            | ToolAction::Internal
            | ToolAction::SpendRate { .. }
            | ToolAction::UnpricedModel { .. }
            | ToolAction::Summary { .. }
            | ToolAction::PlanNodeFailed { .. }
            | ToolAction::McpServer { .. } => {
                return Err(CoreError::Config(
                    "only commands, writes, hosts and MCP tools can be allowed by a rule".into(),
                ));
            }
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => {
                return Err(CoreError::Config(format!(
                    "cannot read {}: {e}",
                    path.display()
                )));
            }
        };
        let updated = bosun_policy::add_rule(&text, list, rule)
            .map_err(|e| CoreError::Config(format!("{}: {e}", path.display())))?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| CoreError::Config(format!("cannot create {}: {e}", dir.display())))?;
        }
        let tmp = path.with_extension("toml.tmp");
        std::fs::write(&tmp, updated)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| CoreError::Config(format!("cannot write {}: {e}", path.display())))?;
        Ok((path, self.load()?))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use bosun_policy::Decision;

    fn mcp() -> ToolAction {
        ToolAction::Mcp {
            server: "github".into(),
            tool: "create_issue".into(),
            arguments: serde_json::json!({}),
        }
    }

    #[test]
    fn an_mcp_rule_goes_to_the_users_file_and_takes_effect_there_only() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let repo = dir.path().join("repo");
        let files = PolicyFiles::new(&home, &repo, None, Some(Mode::FullAuto));
        assert_eq!(files.load().unwrap().decide(&mcp()).decision, Decision::Ask);

        // A repository's file would ignore it: refused, nothing written.
        let err = files
            .add_rule(RuleScope::Project, &mcp(), "github/create_issue")
            .unwrap_err()
            .to_string();
        assert!(err.contains("only in your own policy file"), "{err}");
        assert!(!files.project.exists());

        let (path, policy) = files.add_rule(RuleScope::User, &mcp(), "github/*").unwrap();
        assert_eq!(path, files.user);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[mcp]\nallow = [\"github/*\"]\n"
        );
        let d = policy.decide(&mcp());
        assert_eq!(
            (d.decision, d.rule.as_str()),
            (Decision::Allow, "mcp.allow \"github/*\"")
        );
        // A bad pattern is an error naming what it could have meant; the file is unchanged.
        let err = files
            .add_rule(RuleScope::User, &mcp(), "github")
            .unwrap_err()
            .to_string();
        assert!(err.contains("did you mean `github/*`"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[mcp]\nallow = [\"github/*\"]\n"
        );
    }
}
