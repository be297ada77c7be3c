//! The merged policy a task runs under, and its decisions.

use bosun_protocol::ToolAction;

use crate::commands::{self, Part};
use crate::judge::Cwd;
use crate::layers::{CommandRule, LayerRules, Origin, parse_layer};
use crate::paths::{Location, locate};
use crate::{BUILTIN_SOURCE, Decision, Layer, Mode, PolicyDecision, PolicyError, suggest};

/// The policy a task runs under: every layer's rules and the mode.
#[derive(Debug, Clone)]
pub struct Policy {
    mode: Mode,
    /// Where the mode was set: a file and line, `--mode`, or `default`.
    mode_source: String,
    layers: Vec<LayerRules>,
}

/// What the command sandbox must enforce, gathered from every layer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxRules {
    /// Globs no command may read (`**/.env`, `~/.ssh/**`); `~` is the user's home.
    pub read_deny: Vec<String>,
    /// Worktree globs no command may write (`paths.deny`).
    pub write_deny: Vec<String>,
    /// Paths outside the worktree that commands may also write (`[sandbox] write`).
    pub extra_write: Vec<String>,
    /// Command patterns granted network access (`[network] allow`).
    pub network_allow: Vec<String>,
    /// Secret-looking environment variable names passed to commands anyway (`[env] allow`).
    pub env_allow: Vec<String>,
}

impl SandboxRules {
    /// The `read_deny` rules under the home directory as concrete paths for a sandbox that
    /// cannot match globs: `~/.ssh/**` → `HOME/.ssh`, `~/.netrc` → `HOME/.netrc`.
    pub fn home_read_deny(&self, home: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut out: Vec<std::path::PathBuf> = Vec::new();
        for pattern in &self.read_deny {
            let Some(rest) = pattern.strip_prefix("~/") else {
                continue;
            };
            let literal: Vec<&str> = rest
                .split('/')
                .take_while(|part| !part.contains(['*', '?', '[', '{']))
                .collect();
            if literal.is_empty() {
                continue;
            }
            let path = home.join(literal.join("/"));
            if !out.contains(&path) {
                out.push(path);
            }
        }
        out
    }
}

impl Policy {
    /// No rules at all: the mode alone decides.
    pub fn new(mode: Mode) -> Self {
        Policy {
            mode,
            mode_source: "default".into(),
            layers: Vec::new(),
        }
    }

    /// Every tool call is allowed (no rules, mode full-auto).
    pub fn allow_all() -> Self {
        Policy::new(Mode::FullAuto)
    }

    /// The built-in defaults alone, in mode `ask`.
    pub fn builtin() -> Self {
        Policy::from_layers(&[Layer::builtin()], None).unwrap_or_else(|_| Policy::new(Mode::Ask))
    }

    /// Merges layers in order (built-in, user, project, `--policy`). The mode is
    /// `mode_override` if given; else the strictest mode the trusted layers set (default `ask`),
    /// tightened by any stricter mode a project layer sets.
    pub fn from_layers(layers: &[Layer], mode_override: Option<Mode>) -> Result<Self, PolicyError> {
        let parsed = layers
            .iter()
            .map(parse_layer)
            .collect::<Result<Vec<_>, _>>()?;
        let strictest = |trusted: bool| {
            layers
                .iter()
                .zip(&parsed)
                .filter(|(layer, _)| layer.trusted == trusted)
                .filter_map(|(_, rules)| rules.mode.clone())
                .min_by_key(|(mode, _)| mode.looseness())
        };
        let mut chosen = strictest(true).map(|(mode, origin)| (mode, origin.to_string()));
        let (base_mode, _) = chosen.clone().unwrap_or((Mode::Ask, String::new()));
        if let Some((mode, origin)) = strictest(false)
            && mode.looseness() < base_mode.looseness()
        {
            chosen = Some((mode, origin.to_string()));
        }
        let (mode, mode_source) = match (mode_override, chosen) {
            (Some(mode), _) => (mode, "--mode".to_string()),
            (None, Some(chosen)) => chosen,
            (None, None) => (Mode::Ask, "default".to_string()),
        };
        Ok(Policy {
            mode,
            mode_source,
            layers: parsed,
        })
    }

    /// [`Layer::builtin`] followed by `layers` (user, project, `--policy`), as [`Policy::from_layers`].
    pub fn with_builtin(
        layers: &[Layer],
        mode_override: Option<Mode>,
    ) -> Result<Self, PolicyError> {
        let mut all = vec![Layer::builtin()];
        all.extend(layers.iter().cloned());
        Policy::from_layers(&all, mode_override)
    }

    /// The same rules under another mode (e.g. `bosun run --mode`).
    pub fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self.mode_source = "--mode".into();
        self
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Where the mode was set: a file and line, `--mode`, or `default`.
    pub(crate) fn mode_source(&self) -> &str {
        &self.mode_source
    }

    pub(crate) fn layers(&self) -> &[LayerRules] {
        &self.layers
    }

    /// Decides whether a tool call that would do `action` may run.
    pub fn decide(&self, action: &ToolAction) -> PolicyDecision {
        match action {
            ToolAction::Read { paths } => paths
                .iter()
                .map(|p| self.check_read(p))
                .reduce(PolicyDecision::stricter)
                .unwrap_or_else(|| self.by_mode(Decision::Allow, "reads run".into())),
            ToolAction::Write { paths } => {
                let change = self.check_change(paths.len(), 0);
                paths
                    .iter()
                    .map(|p| self.check_write(p))
                    .reduce(PolicyDecision::stricter)
                    .map_or(change.clone(), |d| d.stricter(change))
            }
            ToolAction::Command { command } => self.check_command(command),
            ToolAction::Network { host, command, .. } => self.check_host(command, host).decision,
            ToolAction::Internal => {
                self.by_mode(Decision::Allow, "it changes nothing outside Bosun".into())
            }
            // Budgets are the user's money: no mode answers for them.
            ToolAction::SpendRate { .. } => self.made(
                Decision::Ask,
                "budgets.max_usd_per_minute".into(),
                "config.toml".into(),
                "spending passed the budget's rate limit; a person decides whether the task goes on".into(),
            ),
            ToolAction::UnpricedModel { .. } => self.made(
                Decision::Ask,
                "budgets".into(),
                "config.toml".into(),
                "the model has no price, so its spend cannot be counted against the budgets".into(),
            ),
            // The user asked to see each summary ([context] review_summaries): always asked.
            ToolAction::Summary { .. } => self.made(
                Decision::Ask,
                "context.review_summaries".into(),
                "config.toml".into(),
                "[context] review_summaries = true: a person reads the summary before it replaces the older turns".into(),
            ),
            // An MCP tool is a door out (the server's network, its own code): the [mcp] rules
            // decide, and without one it asks in every mode.
            ToolAction::Mcp { server, tool, .. } => self.check_mcp(server, tool),
            ToolAction::McpServer { .. } => self.made(
                Decision::Ask,
                "mcp server".into(),
                "built-in".into(),
                "a repository declares this MCP server; it starts only once you approve its exact command".into(),
            ),
            // A plan node that failed its retry and the escalation model: a person decides.
            ToolAction::PlanNodeFailed { .. } => self.made(
                Decision::Ask,
                "plan escalation".into(),
                "built-in".into(),
                "the plan node failed after a retry and the escalation model; a person decides".into(),
            ),
        }
    }

    /// Decides a write to a worktree-relative path.
    pub fn check_write(&self, path: &str) -> PolicyDecision {
        let location = locate(path);
        if let Some(denied) = self.path_denied(&location, path, true) {
            return denied;
        }
        let Location::Inside(clean) = location else {
            return self.outside(path, Decision::Deny);
        };
        let mode = self.mode;
        match (mode, self.write_scope(&clean)) {
            (Mode::ReadOnly, _) => self.by_mode(
                Decision::Deny,
                "nothing is written in read-only mode".into(),
            ),
            // A write scope is a policy file's rule: it holds in full-auto too.
            (_, Err((patterns, origin))) => self.made(
                Decision::Ask,
                "paths.write".into(),
                origin.to_string(),
                if mode == Mode::FullAuto {
                    format!(
                        "`{clean}` is outside the write scope ({patterns}), which a policy file sets and full-auto does not waive"
                    )
                } else {
                    format!("`{clean}` is outside the write scope ({patterns})")
                },
            ),
            (Mode::FullAuto, _) => self.by_mode(Decision::Allow, "anything not denied runs".into()),
            (Mode::Ask, _) => {
                self.by_mode(Decision::Ask, format!("edits ask in mode ask (`{clean}`)"))
            }
            (_, Ok(Some((pattern, origin)))) => self.made(
                Decision::Allow,
                format!("paths.write \"{pattern}\""),
                origin.to_string(),
                format!("`{clean}` is inside the write scope"),
            ),
            (_, Ok(None)) => self.by_mode(
                Decision::Allow,
                "no write scope is set, so the whole worktree is in scope".into(),
            ),
        }
    }

    /// Decides a read of a worktree-relative path.
    pub fn check_read(&self, path: &str) -> PolicyDecision {
        let location = locate(path);
        if let Some(denied) = self.path_denied(&location, path, false) {
            return denied;
        }
        match location {
            Location::Outside(_) => self.outside(path, Decision::Deny),
            Location::Inside(_) => self.by_mode(Decision::Allow, "reads run".into()),
        }
    }

    /// Whether a `read_deny` rule protects this path (worktree-relative, or `~/…` / absolute):
    /// for a caller that walks the worktree to hide such files from commands.
    pub fn is_read_denied(&self, path: &str) -> bool {
        self.path_denied(&locate(path), path, false).is_some()
    }

    /// Approval conditions: a change touching more than `max_files` files or `max_lines` lines
    /// asks.
    pub fn check_change(&self, files: usize, lines: usize) -> PolicyDecision {
        if self.mode == Mode::ReadOnly && (files > 0 || lines > 0) {
            return self.by_mode(
                Decision::Deny,
                "nothing is written in read-only mode".into(),
            );
        }
        let limits = [
            (
                "max_files",
                files,
                "files",
                self.strictest_limit(|l| l.max_files.clone()),
            ),
            (
                "max_lines",
                lines,
                "lines",
                self.strictest_limit(|l| l.max_lines.clone()),
            ),
        ];
        for (key, count, what, limit) in limits {
            if let Some((max, origin)) = limit
                && count > max
            {
                // Only a built-in default limit would be waived in full-auto; a policy
                // file's limit holds in every mode.
                if self.mode == Mode::FullAuto && origin.file == BUILTIN_SOURCE {
                    return self.by_mode(
                        Decision::Allow,
                        format!("the change touches {count} {what}, more than the built-in approval.{key} = {max}, but anything not denied runs"),
                    );
                }
                return self.made(
                    Decision::Ask,
                    format!("approval.{key} = {max}"),
                    origin.to_string(),
                    format!("the change touches {count} {what}, more than {max}"),
                );
            }
        }
        self.by_mode(
            Decision::Allow,
            "the change is within the approval limits".into(),
        )
    }

    /// What the exec sandbox must enforce.
    pub fn sandbox(&self) -> SandboxRules {
        let mut rules = SandboxRules::default();
        for layer in &self.layers {
            rules
                .read_deny
                .extend(layer.read_deny.iter().map(|e| e.text.clone()));
            rules
                .write_deny
                .extend(layer.deny.iter().map(|e| e.text.clone()));
            rules
                .extra_write
                .extend(layer.sandbox_write.iter().cloned());
            rules
                .network_allow
                .extend(layer.network.iter().map(|e| e.text.clone()));
            rules.env_allow.extend(layer.env_allow.iter().cloned());
        }
        rules
    }

    /// Rules to offer when approving `action`, most general first; for commands only the
    /// parts that would not already run are covered.
    pub fn suggestions(&self, action: &ToolAction) -> Vec<String> {
        let ToolAction::Command { command } = action else {
            return suggest::suggestions(action);
        };
        let mut out: Vec<String> = Vec::new();
        for part in commands::parts(command) {
            let more = match part {
                Part::Run { argv, .. }
                    if self.judge_run(&argv, &Cwd::root()).decision != Decision::Allow =>
                {
                    suggest::for_argv(&argv)
                }
                // Inline code that asks: allowing the interpreter's flag is what lifts it.
                Part::Inline {
                    argv,
                    flag,
                    language,
                } if flag != "<<"
                    && self.judge_inline(&argv, &flag, language).decision != Decision::Allow =>
                {
                    let program = argv.first().map(String::as_str).unwrap_or_default();
                    let program = program.rsplit('/').next().unwrap_or(program);
                    vec![format!("{program} {flag}")]
                }
                _ => Vec::new(),
            };
            for s in more {
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        }
        out
    }

    pub(crate) fn made(
        &self,
        decision: Decision,
        rule: String,
        source: String,
        reason: String,
    ) -> PolicyDecision {
        PolicyDecision {
            decision,
            rule,
            source,
            mode: self.mode,
            reason,
        }
    }

    pub(crate) fn by_mode(&self, decision: Decision, reason: String) -> PolicyDecision {
        self.made(
            decision,
            format!("mode {}", self.mode),
            self.mode_source.clone(),
            reason,
        )
    }

    pub(crate) fn outside(&self, path: &str, decision: Decision) -> PolicyDecision {
        self.made(
            decision,
            "worktree".into(),
            BUILTIN_SOURCE.into(),
            format!("`{path}` is outside the task's worktree"),
        )
    }

    fn strictest_limit(
        &self,
        get: impl Fn(&LayerRules) -> Option<(usize, Origin)>,
    ) -> Option<(usize, Origin)> {
        self.layers.iter().filter_map(get).min_by_key(|(n, _)| *n)
    }

    /// `read_deny` (and for writes `deny`) rules matching a path.
    pub(crate) fn path_denied(
        &self,
        location: &Location,
        path: &str,
        write: bool,
    ) -> Option<PolicyDecision> {
        for layer in &self.layers {
            let lists = [("read_deny", &layer.read_deny), ("deny", &layer.deny)];
            for (name, list) in lists {
                if name == "deny" && !write {
                    continue;
                }
                if let Some(e) = list.iter().find(|e| e.value.matches_location(location)) {
                    return Some(self.made(
                        Decision::Deny,
                        format!("paths.{name} \"{}\"", e.text),
                        e.origin.to_string(),
                        format!("`{path}` matches paths.{name}"),
                    ));
                }
            }
        }
        None
    }

    /// `Ok(Some(pattern, origin))` inside a scope, `Ok(None)` when no layer sets one,
    /// `Err((patterns, origin))` naming the first scope that leaves the path out.
    pub(crate) fn write_scope(
        &self,
        path: &str,
    ) -> Result<Option<(String, Origin)>, (String, Origin)> {
        let mut inside = None;
        for (entries, origin) in self.layers.iter().filter_map(|l| l.write.as_ref()) {
            match entries.iter().find(|e| e.value.matches(path)) {
                Some(e) => {
                    inside.get_or_insert((e.text.clone(), e.origin.clone()));
                }
                None => {
                    let list: Vec<&str> = entries.iter().map(|e| e.text.as_str()).collect();
                    return Err((list.join(", "), origin.clone()));
                }
            }
        }
        Ok(inside)
    }

    /// The command rules matching `argv`: every file rule, and built-in rules more specific
    /// than the most specific matching file rule.
    pub(crate) fn matching_rules(&self, argv: &[String]) -> Vec<&CommandRule> {
        let matching: Vec<&CommandRule> = self
            .layers
            .iter()
            .flat_map(|l| &l.commands)
            .filter(|r| r.pattern.matches(argv))
            .collect();
        let file_specificity = matching
            .iter()
            .filter(|r| !r.builtin)
            .map(|r| r.pattern.specificity())
            .max();
        matching
            .into_iter()
            .filter(|r| !r.builtin || file_specificity.is_none_or(|s| r.pattern.specificity() > s))
            .collect()
    }

    pub(crate) fn strictest_rule<'a>(
        rules: impl IntoIterator<Item = &'a CommandRule>,
    ) -> Option<&'a CommandRule> {
        rules
            .into_iter()
            .fold(None, |best: Option<&CommandRule>, r| match best {
                Some(b) if b.decision >= r.decision => Some(b),
                _ => Some(r),
            })
    }

    /// A command the built-in defaults allow as read-only (what `read-only` mode runs).
    pub(crate) fn read_only_command(&self, argv: &[String]) -> bool {
        let builtin = self
            .layers
            .iter()
            .filter(|l| l.builtin)
            .flat_map(|l| &l.commands)
            .filter(|r| r.pattern.matches(argv));
        Policy::strictest_rule(builtin).is_some_and(|r| r.decision == Decision::Allow)
    }
}
