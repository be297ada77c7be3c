//! Network egress as a policy file says it: which commands get Bosun's proxy, which hosts they
//! reach, which host asks, and what "approve always" writes for a host.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bosun_policy::{Decision, Layer, Mode, Policy, PolicyError, RuleList, add_rule, suggestions};
use bosun_protocol::ToolAction;
use pretty_assertions::assert_eq;

const FILE: &str = "/home/u/.local/share/bosun/policy.toml";

fn policy(text: &str, mode: Option<Mode>) -> Policy {
    Policy::with_builtin(&[Layer::file(FILE, text)], mode).unwrap()
}

/// (decision, rule, source) for `command` connecting to `host`.
fn host(p: &Policy, command: &str, host: &str) -> (Decision, String, String) {
    let d = p.check_host(command, host).decision;
    (d.decision, d.rule, d.source)
}

const PIP: &str = r#"
[network]
allow = ["npm"]
domains = ["pypi.org", "*.pythonhosted.org"]

[[network.rules]]
command = "pip install*"
domains = ["download.pytorch.org"]
"#;

#[test]
fn a_command_allowed_the_network_gets_the_proxy_and_a_host_no_rule_names_asks() {
    let p = policy(PIP, None);
    let grant = p.network_grant("npm install lodash").unwrap();
    assert_eq!(grant.granted_by.len(), 1);
    assert_eq!(grant.granted_by[0].rule, "network.allow \"npm\"");
    assert_eq!(grant.granted_by[0].source, format!("{FILE}:3"));
    assert_eq!(grant.other_hosts, Decision::Ask);
    assert_eq!(
        host(&p, "npm install", "pypi.org"),
        (
            Decision::Allow,
            "network.domains \"pypi.org\"".into(),
            format!("{FILE}:4")
        )
    );
    assert_eq!(
        host(&p, "npm install", "files.pythonhosted.org").1,
        "network.domains \"*.pythonhosted.org\""
    );
    let asked = p.check_host("npm install", "registry.npmjs.org").decision;
    assert_eq!(
        (asked.decision, asked.rule.as_str(), asked.source),
        (Decision::Ask, "network.allow \"npm\"", format!("{FILE}:3"))
    );
    assert!(
        asked.reason.contains("`registry.npmjs.org`"),
        "{}",
        asked.reason
    );
    // The rule's own hosts are not npm's.
    assert_eq!(
        host(&p, "npm install", "download.pytorch.org").0,
        Decision::Ask
    );
    assert!(p.network_allowed("npm install") && !p.network_allowed("make"));
}

#[test]
fn a_network_rule_lets_only_its_commands_reach_its_domains() {
    let p = policy(PIP, None);
    let grant = p.network_grant("pip install torch").unwrap();
    assert_eq!(grant.granted_by[0].rule, "network.rules \"pip install*\"");
    assert_eq!(grant.granted_by[0].source, format!("{FILE}:7"));
    let (decision, rule, source) = host(&p, "pip install torch", "download.pytorch.org");
    assert_eq!(decision, Decision::Allow);
    assert_eq!(
        rule,
        "network.rules \"pip install*\" domains \"download.pytorch.org\""
    );
    assert_eq!(source, format!("{FILE}:8"));
    // `pip download` is not the rule's command: it only reaches [network] domains.
    assert_eq!(
        host(&p, "pip download torch", "download.pytorch.org").0,
        Decision::Deny
    );
    assert_eq!(
        host(&p, "pip download torch", "pypi.org").0,
        Decision::Allow
    );
    // A part that is not granted takes the grant away from the whole command.
    assert_eq!(
        host(
            &p,
            "pip install torch && python x.py",
            "download.pytorch.org"
        )
        .0,
        Decision::Deny
    );
    assert!(!p.network_allowed("pip install x && python x.py"));
    assert!(p.network_allowed("cd web && pip install x"));
}

#[test]
fn domains_alone_give_every_command_the_proxy_but_nothing_asks() {
    let p = policy("[network]\ndomains = [\"crates.io\"]\n", None);
    let grant = p.network_grant("make test").unwrap();
    assert!(grant.granted_by.is_empty());
    assert_eq!(grant.other_hosts, Decision::Deny);
    assert_eq!(host(&p, "make test", "crates.io").0, Decision::Allow);
    let refused = p.check_host("make test", "evil.example").decision;
    assert_eq!(refused.decision, Decision::Deny);
    assert!(
        refused
            .reason
            .contains("[network] allow or [[network.rules]]"),
        "{}",
        refused.reason
    );
    // Without any network rule, a command gets no proxy at all.
    let none = policy("", None);
    assert!(none.network_grant("npm install").is_none());
    let d = none.check_host("npm install", "pypi.org").decision;
    assert_eq!((d.decision, d.rule.as_str()), (Decision::Deny, "network"));
}

#[test]
fn deny_domains_win_over_every_allow_and_cannot_be_dodged_by_spelling() {
    let text = "[network]\nallow = [\"curl\"]\ndomains = [\"*\"]\ndeny_domains = [\"*.evil.example\", \"evil.example\"]\n";
    let p = policy(text, None);
    for spelling in [
        "evil.example",
        "EVIL.example",
        "evil.example.",
        "x.evil.example",
    ] {
        let (decision, rule, _) = host(&p, "curl x", spelling);
        assert_eq!(decision, Decision::Deny, "{spelling}");
        assert!(rule.starts_with("network.deny_domains"), "{rule}");
    }
    assert_eq!(host(&p, "curl x", "good.example").0, Decision::Allow);
    // A project file's deny holds against the user's allow.
    let layered = Policy::with_builtin(
        &[
            Layer::file(
                FILE,
                "[network]\nallow = [\"curl\"]\ndomains = [\"pypi.org\"]\n",
            ),
            Layer::project(
                "/repo/.bosun/policy.toml",
                "[network]\ndeny_domains = [\"pypi.org\"]\n",
            ),
        ],
        None,
    )
    .unwrap();
    assert_eq!(
        host(&layered, "curl x", "pypi.org"),
        (
            Decision::Deny,
            "network.deny_domains \"pypi.org\"".into(),
            "/repo/.bosun/policy.toml:2".into()
        )
    );
}

#[test]
fn an_ip_address_is_refused_unless_a_rule_lists_it_exactly() {
    let text = "[network]\nallow = [\"curl\"]\ndomains = [\"*\", \"10.0.0.5\", \"[fd00::1]\", \"registry.internal\", \"*.corp\"]\n";
    let p = policy(text, None);
    let refused = p.check_host("curl x", "1.1.1.1");
    assert_eq!(refused.decision.decision, Decision::Deny);
    assert_eq!(refused.decision.rule, "network: IP address");
    assert_eq!(host(&p, "curl x", "::1").0, Decision::Deny);
    let listed = p.check_host("curl x", "10.0.0.5");
    assert_eq!(listed.decision.decision, Decision::Allow);
    assert!(listed.named, "an exact address is named");
    assert!(p.check_host("curl x", "[FD00::1]").named);
    // Exact names may resolve to private addresses; globs may not.
    assert!(p.check_host("curl x", "registry.internal").named);
    let glob = p.check_host("curl x", "git.corp");
    assert_eq!(glob.decision.decision, Decision::Allow);
    assert!(!glob.named);
    assert!(!p.check_host("curl x", "anything.example").named);
}

#[test]
fn modes_decide_a_host_no_rule_names() {
    let text = "[network]\nallow = [\"npm\"]\n";
    let full = policy(text, Some(Mode::FullAuto));
    let d = full
        .check_host("npm install", "registry.npmjs.org")
        .decision;
    assert_eq!(
        (d.decision, d.rule.as_str()),
        (Decision::Allow, "mode full-auto")
    );
    // Full-auto waives asks, never a deny.
    let denied = policy(
        "[network]\nallow = [\"npm\"]\ndeny_domains = [\"*.evil.example\"]\n",
        Some(Mode::FullAuto),
    );
    assert_eq!(host(&denied, "npm i", "a.evil.example").0, Decision::Deny);
    assert_eq!(host(&denied, "npm i", "8.8.8.8").0, Decision::Deny);
    let read_only = policy(text, Some(Mode::ReadOnly));
    assert_eq!(
        host(&read_only, "npm install", "registry.npmjs.org").0,
        Decision::Deny
    );
}

#[test]
fn unknown_network_keys_and_bad_hosts_are_errors_naming_key_file_and_line() {
    let err = |text: &str| {
        Policy::with_builtin(&[Layer::file(FILE, text)], None)
            .unwrap_err()
            .to_string()
    };
    let e = err("[network]\nhosts = []\n");
    assert!(
        e.starts_with(&format!("{FILE}:2: unknown key `network.hosts`")),
        "{e}"
    );
    assert!(e.contains("allow, domains, deny_domains, rules"), "{e}");
    let e = err("[[network.rules]]\ncommand = \"pip install*\"\nhosts = [\"pypi.org\"]\n");
    assert!(
        e.starts_with(&format!("{FILE}:3: unknown key `network.rules.hosts`")),
        "{e}"
    );
    let e = err("[[network.rules]]\ndomains = [\"pypi.org\"]\n");
    assert!(e.contains("has no `command`"), "{e}");
    let e = err("[network]\ndomains = [\"https://pypi.org/simple\"]\n");
    assert!(e.starts_with(&format!("{FILE}:2: ")), "{e}");
    assert!(e.contains("write the host only, like \"pypi.org\""), "{e}");
    let e = err("[network]\nrules = [\"pip\"]\n");
    assert!(e.contains("[[network.rules]] tables"), "{e}");
    let e = err("[[network.rules]]\ncommand = \"pip\"\ndomains = [\"pypi.org:443\"]\n");
    assert!(
        e.starts_with(&format!("{FILE}:3: ")) && e.contains("port"),
        "{e}"
    );
}

#[test]
fn approving_a_host_always_writes_a_network_domains_entry() {
    assert_eq!(
        "network.domains".parse::<RuleList>().unwrap(),
        RuleList::NetworkDomains
    );
    let text = "# mine\n[[network.rules]]\ncommand = \"pip install*\"\ndomains = [\"pypi.org\"]\n";
    let out = add_rule(text, RuleList::NetworkDomains, "files.pythonhosted.org").unwrap();
    let p = policy(&out, None);
    let d = p.check_host("make", "files.pythonhosted.org").decision;
    assert_eq!(d.decision, Decision::Allow, "{out}");
    assert_eq!(d.rule, "network.domains \"files.pythonhosted.org\"");
    assert_eq!(
        out,
        "# mine\n[[network.rules]]\ncommand = \"pip install*\"\ndomains = [\"pypi.org\"]\n\n[network]\ndomains = [\"files.pythonhosted.org\"]\n"
    );
    assert_eq!(host(&p, "pip install x", "pypi.org").0, Decision::Allow);
    assert!(matches!(
        add_rule("", RuleList::NetworkDomains, "https://x"),
        Err(PolicyError::Invalid { .. })
    ));
}

#[test]
fn a_network_action_is_decided_and_suggested_by_host() {
    let p = policy(PIP, None);
    let action = |h: &str| ToolAction::Network {
        host: h.into(),
        port: 443,
        command: "npm install".into(),
    };
    assert_eq!(p.decide(&action("pypi.org")).decision, Decision::Allow);
    assert_eq!(
        p.decide(&action("registry.npmjs.org")).decision,
        Decision::Ask
    );
    assert_eq!(
        p.suggestions(&action("registry.npmjs.org")),
        vec!["registry.npmjs.org", "*.npmjs.org"]
    );
    assert_eq!(suggestions(&action("pypi.org")), vec!["pypi.org"]);
    assert_eq!(suggestions(&action("10.1.2.3")), vec!["10.1.2.3"]);
}
