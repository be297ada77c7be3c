//! Network egress: which commands get Bosun's proxy, and which hosts they reach through it.
//!
//! A command *granted* the network (`[network] allow`, or the `command` of a `[[network.rules]]`)
//! gets the proxy; a host no rule names then asks. Any other command still gets the proxy when
//! `[network] domains` is not empty, but reaches only those hosts. `[network] deny_domains`
//! refuses a host whatever allows it. An IP address is reached only when a rule lists that exact
//! address. A rule that names a host exactly (no `*`) also lets it resolve to a private or
//! loopback address (an internal registry); the proxy refuses such answers for every other host.

use std::net::IpAddr;

use serde::Serialize;

use crate::commands::{self, Part, wildcard};
use crate::layers::Entry;
use crate::scripts;
use crate::{BUILTIN_SOURCE, Decision, Mode, Policy, PolicyDecision};

/// A host pattern from `[network] domains`, `deny_domains` or a rule's `domains`: a host name,
/// `*` matching any run of characters (`*.pythonhosted.org` matches every subdomain, not
/// `pythonhosted.org` itself), or an exact IP address. Stored lowercase, without a trailing dot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainPattern {
    text: String,
}

impl DomainPattern {
    pub fn parse(pattern: &str) -> Result<DomainPattern, String> {
        let text = pattern.trim().to_ascii_lowercase();
        if text.is_empty() {
            return Err("an empty host pattern matches nothing; remove it".into());
        }
        if let Some((_, rest)) = text.split_once("://") {
            let host = rest.split(['/', ':']).next().unwrap_or_default();
            return Err(format!(
                "`{pattern}` is a URL; write the host only, like \"{host}\""
            ));
        }
        if text.contains('/') {
            let host = text.split('/').next().unwrap_or_default();
            return Err(format!(
                "`{pattern}` has a path; write the host only, like \"{host}\""
            ));
        }
        let text = normalize_host(&text);
        if text.parse::<IpAddr>().is_ok() {
            return Ok(DomainPattern { text });
        }
        if let Some((host, _)) = text.split_once(':') {
            return Err(format!(
                "`{pattern}` has a port; a host is allowed on every port, so write \"{host}\""
            ));
        }
        let valid_chars = text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '*'));
        if !valid_chars || text.split('.').any(str::is_empty) {
            return Err(format!(
                "`{pattern}` is not a host pattern: use letters, digits, `-`, `.` and `*`, like \"*.pythonhosted.org\""
            ));
        }
        Ok(DomainPattern { text })
    }

    /// Does the pattern match this host (normalized with [`normalize_host`])?
    pub fn matches(&self, host: &str) -> bool {
        wildcard(&self.text, host)
    }

    /// True when the pattern names one host exactly (no `*`).
    pub fn is_exact(&self) -> bool {
        !self.text.contains('*')
    }
}

/// A host as the policy compares it: trimmed, lowercase, without `[…]` around an IPv6 address
/// and without a trailing dot (`PyPI.org.` is `pypi.org`).
pub fn normalize_host(host: &str) -> String {
    let host = host.trim().to_ascii_lowercase();
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .map(str::to_string)
        .unwrap_or(host);
    host.strip_suffix('.').map(str::to_string).unwrap_or(host)
}

/// A `[[network.rules]]` table: commands matching `command` may reach `domains`.
#[derive(Debug, Clone)]
pub struct NetworkRule {
    pub command: Entry<commands::CommandPattern>,
    pub domains: Vec<Entry<DomainPattern>>,
}

/// A rule that lets a command use the network, e.g. `network.allow "npm"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GrantRule {
    pub rule: String,
    /// `path/to/policy.toml:12`.
    pub source: String,
}

/// A host rule that applies to a command's connections.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DomainRule {
    /// The host pattern, e.g. `*.pythonhosted.org`.
    pub pattern: String,
    /// `allow`, or `deny` for `[network] deny_domains`.
    pub decision: Decision,
    /// e.g. `network.domains "pypi.org"` or `network.rules "pip install*" domains "pypi.org"`.
    pub rule: String,
    pub source: String,
    #[serde(skip)]
    matcher: DomainPattern,
}

/// What network a command gets: always through Bosun's proxy, never the raw network.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NetworkGrant {
    /// The rules that grant the command the network, so that a host no rule names asks. Empty
    /// when the command may only reach `[network] domains`.
    pub granted_by: Vec<GrantRule>,
    /// Every host rule that applies, deny rules first.
    pub domains: Vec<DomainRule>,
    /// What happens to a host no rule names: `ask` for a granted command (`allow` in
    /// full-auto), `deny` otherwise.
    pub other_hosts: Decision,
    #[serde(skip)]
    mode: Mode,
    #[serde(skip)]
    mode_source: String,
}

/// The decision for one host a command connects to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostDecision {
    #[serde(flatten)]
    pub decision: PolicyDecision,
    /// The allowing rule names the host exactly (no `*`), so it may resolve to a private or
    /// loopback address.
    pub named: bool,
}

impl NetworkGrant {
    /// Decides a connection to `host` (any port): deny rules first, then an exact rule, then a
    /// glob; a host no rule names is [`NetworkGrant::other_hosts`].
    pub fn decide(&self, host: &str) -> HostDecision {
        let host = normalize_host(host);
        let made = |decision, rule: &str, source: &str, reason: String| PolicyDecision {
            decision,
            rule: rule.to_string(),
            source: source.to_string(),
            mode: self.mode,
            reason,
        };
        let decided = |r: &DomainRule, reason: String| HostDecision {
            decision: made(r.decision, &r.rule, &r.source, reason),
            named: r.decision == Decision::Allow && r.matcher.is_exact(),
        };
        if host.is_empty() {
            return HostDecision {
                decision: made(
                    Decision::Deny,
                    "network",
                    BUILTIN_SOURCE,
                    "the connection names no host".into(),
                ),
                named: false,
            };
        }
        let literal = host.parse::<IpAddr>().is_ok();
        let rules = || self.domains.iter().filter(|r| r.matcher.matches(&host));
        if let Some(r) = rules().find(|r| r.decision == Decision::Deny) {
            return decided(r, format!("`{host}` matches {}", r.rule));
        }
        if let Some(r) = rules().find(|r| r.matcher.is_exact()) {
            return decided(r, format!("`{host}` is named by {}", r.rule));
        }
        if literal {
            return HostDecision {
                decision: made(
                    Decision::Deny,
                    "network: IP address",
                    BUILTIN_SOURCE,
                    format!(
                        "`{host}` is an IP address; commands reach hosts by name (list the exact address in [network] domains to allow it)"
                    ),
                ),
                named: false,
            };
        }
        if let Some(r) = rules().next() {
            return decided(r, format!("`{host}` matches {}", r.rule));
        }
        let reason = |how: &str| format!("no [network] domains rule names `{host}`; {how}");
        let decision = match (self.granted_by.first(), self.other_hosts) {
            (Some(g), Decision::Ask) => made(
                Decision::Ask,
                &g.rule,
                &g.source,
                reason("the command may use the network, so it asks"),
            ),
            (_, Decision::Allow) => made(
                Decision::Allow,
                &format!("mode {}", self.mode),
                &self.mode_source,
                reason("anything not denied runs"),
            ),
            (Some(_), _) => made(
                Decision::Deny,
                &format!("mode {}", self.mode),
                &self.mode_source,
                reason("nothing reaches the network in read-only mode"),
            ),
            (None, _) => made(
                Decision::Deny,
                "network.domains",
                BUILTIN_SOURCE,
                reason(
                    "the command may reach only those hosts (grant it more with [network] allow or [[network.rules]])",
                ),
            ),
        };
        HostDecision {
            decision,
            named: false,
        }
    }
}

impl Policy {
    /// The network a command gets through Bosun's proxy, or `None` when it gets none: no rule
    /// grants it and `[network] domains` is empty. A command is granted when every program it
    /// runs is granted by `[network] allow` or a `[[network.rules]]` command (or is a built-in
    /// read-only command) and at least one is; a rule's `domains` apply only then. A program
    /// that runs project scripts (`make`, `npm run`, `cargo test`, `python tool.py`) is granted
    /// only by a rule that names it (`make`, `npm run build`), not by a shorter one (`npm`) or
    /// `*`: what its scripts do is not inspected. In read-only mode no command gets network.
    pub fn network_grant(&self, command: &str) -> Option<NetworkGrant> {
        // Read-only is a ceiling: no network rule lifts it.
        if self.mode() == Mode::ReadOnly {
            return None;
        }
        let mut granted_by: Vec<GrantRule> = Vec::new();
        let mut scoped: Vec<DomainRule> = Vec::new();
        let mut every_part = true;
        for part in commands::parts(command) {
            match part {
                Part::Run { argv, .. } => {
                    let mut granted = false;
                    // A project-script runner is granted only by a rule that names it.
                    let runner = scripts::runner(&argv);
                    let names = |p: &commands::CommandPattern| {
                        runner.as_ref().is_none_or(|r| p.names(&r.words))
                    };
                    for e in self.layers().iter().flat_map(|l| &l.network) {
                        if e.value.matches(&argv) && names(&e.value) {
                            granted = true;
                            push_new(
                                &mut granted_by,
                                GrantRule {
                                    rule: format!("network.allow \"{}\"", e.text),
                                    source: e.origin.to_string(),
                                },
                            );
                        }
                    }
                    for r in self.layers().iter().flat_map(|l| &l.network_rules) {
                        if !r.command.value.matches(&argv) || !names(&r.command.value) {
                            continue;
                        }
                        granted = true;
                        let rule = format!("network.rules \"{}\"", r.command.text);
                        for d in &r.domains {
                            let domain_rule = domain_rule(
                                d,
                                Decision::Allow,
                                format!("{rule} domains \"{}\"", d.text),
                            );
                            push_new(&mut scoped, domain_rule);
                        }
                        let source = r.command.origin.to_string();
                        push_new(&mut granted_by, GrantRule { rule, source });
                    }
                    every_part &= granted || self.read_only_command(&argv);
                }
                Part::Redirect(_) | Part::Inline { .. } => {}
                Part::Opaque { .. } => every_part = false,
            }
        }
        if !every_part {
            granted_by.clear();
        }
        let mut domains: Vec<DomainRule> = Vec::new();
        for layer in self.layers() {
            for d in &layer.deny_domains {
                let rule = format!("network.deny_domains \"{}\"", d.text);
                push_new(&mut domains, domain_rule(d, Decision::Deny, rule));
            }
        }
        for layer in self.layers() {
            for d in &layer.domains {
                let rule = format!("network.domains \"{}\"", d.text);
                push_new(&mut domains, domain_rule(d, Decision::Allow, rule));
            }
        }
        let global_allows = domains.iter().any(|d| d.decision == Decision::Allow);
        if granted_by.is_empty() && !global_allows {
            return None;
        }
        if !granted_by.is_empty() {
            for d in scoped {
                push_new(&mut domains, d);
            }
        }
        let other_hosts = match (granted_by.is_empty(), self.mode()) {
            (true, _) | (false, Mode::ReadOnly) => Decision::Deny,
            (false, Mode::FullAuto) => Decision::Allow,
            (false, _) => Decision::Ask,
        };
        Some(NetworkGrant {
            granted_by,
            domains,
            other_hosts,
            mode: self.mode(),
            mode_source: self.mode_source().to_string(),
        })
    }

    /// Whether a command is granted the network (`[network] allow` or a `[[network.rules]]`
    /// command), so that a host no rule names asks rather than being refused.
    pub fn network_allowed(&self, command: &str) -> bool {
        self.network_grant(command)
            .is_some_and(|g| !g.granted_by.is_empty())
    }

    /// Decides a connection from `command` to `host`: refused when the command gets no network.
    pub fn check_host(&self, command: &str, host: &str) -> HostDecision {
        match self.network_grant(command) {
            Some(grant) => grant.decide(host),
            None if self.mode() == Mode::ReadOnly => HostDecision {
                decision: self.by_mode(
                    Decision::Deny,
                    format!(
                        "nothing reaches the network in read-only mode, so the command cannot reach `{}`, whatever a [network] rule allows",
                        normalize_host(host)
                    ),
                ),
                named: false,
            },
            None => HostDecision {
                decision: self.made(
                    Decision::Deny,
                    "network".into(),
                    BUILTIN_SOURCE.into(),
                    format!(
                        "the command gets no network, so it cannot reach `{}` (grant it with [network] allow, [[network.rules]] or [network] domains)",
                        normalize_host(host)
                    ),
                ),
                named: false,
            },
        }
    }
}

fn domain_rule(entry: &Entry<DomainPattern>, decision: Decision, rule: String) -> DomainRule {
    DomainRule {
        pattern: entry.text.clone(),
        decision,
        rule,
        source: entry.origin.to_string(),
        matcher: entry.value.clone(),
    }
}

fn push_new<T: PartialEq>(list: &mut Vec<T>, item: T) {
    if !list.contains(&item) {
        list.push(item);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn host_patterns_are_hosts_or_globs_and_say_what_is_wrong() {
        let p = DomainPattern::parse("*.PythonHosted.org.").unwrap();
        assert!(p.matches("files.pythonhosted.org") && p.matches("a.b.pythonhosted.org"));
        assert!(!p.matches("pythonhosted.org") && !p.matches("evilpythonhosted.org"));
        assert!(!p.is_exact());
        assert!(DomainPattern::parse("[::1]").unwrap().is_exact());
        let err = |p: &str| DomainPattern::parse(p).unwrap_err();
        assert!(err("https://pypi.org/simple").contains("write the host only, like \"pypi.org\""));
        assert!(err("pypi.org:443").contains("write \"pypi.org\""));
        assert!(err("pypi.org/simple").contains("has a path"));
        assert!(err("a..b").contains("not a host pattern"));
        assert!(err("pypi org").contains("not a host pattern"));
        assert!(err(" ").contains("empty"));
    }

    #[test]
    fn hosts_are_compared_normalized() {
        assert_eq!(normalize_host(" PyPI.org. "), "pypi.org");
        assert_eq!(normalize_host("[::1]"), "::1");
    }
}
