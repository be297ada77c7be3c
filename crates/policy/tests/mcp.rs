//! MCP tools under the policy: `[mcp] allow | ask | deny = ["server/tool", "server/*"]`; with
//! no rule a call asks in every mode (full-auto never loosens MCP); the strictest rule of all
//! layers wins; a repository's file cannot allow one; bad patterns name file and line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bosun_policy::{Decision, Layer, Mode, Policy, PolicyError, RuleList, add_rule, suggestions};
use bosun_protocol::ToolAction;
use pretty_assertions::assert_eq;

const USER: &str = "/home/u/.local/share/bosun/policy.toml";
const PROJECT: &str = "/repo/.bosun/policy.toml";
const FLAG: &str = "/tmp/extra.toml";

const MODES: [Mode; 4] = [Mode::ReadOnly, Mode::Ask, Mode::AutoEdit, Mode::FullAuto];

fn mcp(server: &str, tool: &str) -> ToolAction {
    ToolAction::Mcp {
        server: server.into(),
        tool: tool.into(),
        arguments: serde_json::json!({"title": "a bug"}),
    }
}

/// (decision, rule, source) of a call of `server/tool`.
fn judged(p: &Policy, server: &str, tool: &str) -> (Decision, String, String) {
    let d = p.decide(&mcp(server, tool));
    (d.decision, d.rule, d.source)
}

fn policy(layers: &[Layer], mode: Option<Mode>) -> Policy {
    Policy::with_builtin(layers, mode).unwrap()
}

fn ask_builtin() -> (Decision, String, String) {
    (Decision::Ask, "mcp".into(), "built-in".into())
}

#[test]
fn with_no_rule_an_mcp_tool_asks_in_every_mode_full_auto_included() {
    // A user file that loosens everything it can: full-auto, every command allowed.
    let loose = "mode = \"full-auto\"\n[commands]\nallow = [\"npm\"]\n";
    for layers in [vec![], vec![Layer::file(USER, loose)]] {
        for mode in MODES {
            let p = policy(&layers, Some(mode));
            let d = p.decide(&mcp("github", "create_issue"));
            assert_eq!(
                (d.decision, d.rule.clone(), d.source.clone()),
                ask_builtin(),
                "{mode}"
            );
            assert!(
                d.reason.contains("[mcp] allow = [\"github/create_issue\"]"),
                "{}",
                d.reason
            );
        }
    }
    // The mode the user's file picks does not loosen it either.
    let p = policy(&[Layer::file(USER, "mode = \"full-auto\"\n")], None);
    assert_eq!(p.mode(), Mode::FullAuto);
    let d = p.decide(&mcp("fs", "write_file"));
    assert_eq!(d.decision, Decision::Ask);
    assert!(d.reason.contains("full-auto included"), "{}", d.reason);
}

#[test]
fn an_allow_names_one_tool_or_every_tool_of_a_server() {
    let text = "[mcp]\nallow = [\n  \"github/create_issue\",\n  \"fs/*\",\n]\n";
    for mode in MODES {
        let p = policy(&[Layer::file(USER, text)], Some(mode));
        assert_eq!(
            judged(&p, "github", "create_issue"),
            (
                Decision::Allow,
                "mcp.allow \"github/create_issue\"".into(),
                format!("{USER}:3")
            ),
            "{mode}"
        );
        assert_eq!(
            judged(&p, "fs", "read_file"),
            (
                Decision::Allow,
                "mcp.allow \"fs/*\"".into(),
                format!("{USER}:4")
            ),
            "{mode}"
        );
        // Another tool of the server, the same tool of another server: no rule.
        assert_eq!(judged(&p, "github", "delete_repo"), ask_builtin(), "{mode}");
        assert_eq!(
            judged(&p, "gitlab", "create_issue"),
            ask_builtin(),
            "{mode}"
        );
        assert_eq!(judged(&p, "fs-extra", "read_file"), ask_builtin(), "{mode}");
    }
}

#[test]
fn the_strictest_rule_of_every_layer_wins() {
    // A later file's allow does not undo an earlier file's deny, whichever is more specific.
    let p = policy(
        &[
            Layer::file(USER, "[mcp]\ndeny = [\"github/*\"]\n"),
            Layer::file(FLAG, "[mcp]\nallow = [\"github/create_issue\", \"fs/*\"]\n"),
        ],
        Some(Mode::FullAuto),
    );
    assert_eq!(
        judged(&p, "github", "create_issue"),
        (
            Decision::Deny,
            "mcp.deny \"github/*\"".into(),
            format!("{USER}:2")
        )
    );
    assert_eq!(p.decide(&mcp("fs", "x")).decision, Decision::Allow);
    // An ask beats an allow, in the same file too.
    let p = policy(
        &[Layer::file(
            USER,
            "[mcp]\nallow = [\"fs/*\"]\nask = [\"fs/write_file\"]\n",
        )],
        Some(Mode::FullAuto),
    );
    let d = p.decide(&mcp("fs", "write_file"));
    assert_eq!(
        (d.decision, d.rule.as_str(), d.source.clone()),
        (
            Decision::Ask,
            "mcp.ask \"fs/write_file\"",
            format!("{USER}:3")
        )
    );
    assert!(d.reason.contains("holds in every mode"), "{}", d.reason);
    assert_eq!(p.decide(&mcp("fs", "read_file")).decision, Decision::Allow);
    // A deny beats an ask.
    let p = policy(
        &[
            Layer::file(USER, "[mcp]\nask = [\"fs/*\"]\n"),
            Layer::file(FLAG, "[mcp]\ndeny = [\"fs/rm\"]\n"),
        ],
        None,
    );
    assert_eq!(
        judged(&p, "fs", "rm"),
        (
            Decision::Deny,
            "mcp.deny \"fs/rm\"".into(),
            format!("{FLAG}:2")
        )
    );
}

#[test]
fn a_repository_can_ask_about_or_deny_an_mcp_tool_but_never_allow_one() {
    let project = "mode = \"full-auto\"\n[mcp]\nallow = [\"evil/*\", \"github/create_issue\"]\nask = [\"fs/read_file\"]\ndeny = [\"fs/rm\"]\n";
    let p = policy(
        &[
            Layer::file(USER, "[mcp]\nallow = [\"fs/*\"]\n"),
            Layer::project(PROJECT, project),
        ],
        Some(Mode::FullAuto),
    );
    // Its allow is ignored, and the decision says so and where.
    let d = p.decide(&mcp("evil", "exfiltrate"));
    assert_eq!(
        (d.decision, d.rule.clone(), d.source.clone()),
        ask_builtin()
    );
    assert!(
        d.reason.contains(&format!("{PROJECT}:3 allows it")),
        "{}",
        d.reason
    );
    assert!(d.reason.contains("cannot let an MCP tool run unasked"));
    assert_eq!(
        p.decide(&mcp("github", "create_issue")).decision,
        Decision::Ask
    );
    // Its ask and deny tighten the user's allow.
    assert_eq!(
        judged(&p, "fs", "read_file"),
        (
            Decision::Ask,
            "mcp.ask \"fs/read_file\"".into(),
            format!("{PROJECT}:4")
        )
    );
    assert_eq!(
        judged(&p, "fs", "rm"),
        (
            Decision::Deny,
            "mcp.deny \"fs/rm\"".into(),
            format!("{PROJECT}:5")
        )
    );
    assert_eq!(
        judged(&p, "fs", "list"),
        (
            Decision::Allow,
            "mcp.allow \"fs/*\"".into(),
            format!("{USER}:2")
        )
    );
    // The same allow in the user's own file lets it run.
    let p = policy(&[Layer::file(USER, project)], None);
    assert_eq!(p.decide(&mcp("evil", "x")).decision, Decision::Allow);
}

#[test]
fn starting_a_project_declared_server_always_asks() {
    let action = ToolAction::McpServer {
        server: "evil".into(),
        command: "npx evil-server".into(),
        origin: "/repo/.bosun/config.toml".into(),
    };
    for mode in MODES {
        let p = policy(
            &[Layer::file(USER, "[mcp]\nallow = [\"evil/*\"]\n")],
            Some(mode),
        );
        let d = p.decide(&action);
        assert_eq!((d.decision, d.source.as_str()), (Decision::Ask, "built-in"));
    }
    assert!(suggestions(&action).is_empty());
}

#[test]
fn bad_mcp_patterns_name_the_file_and_line_and_the_accepted_forms() {
    for (text, line, hint) in [
        (
            "[mcp]\nallow = [\"github\"]\n",
            2,
            "did you mean `github/*`",
        ),
        (
            "[mcp]\n\nask = [\"ok/x\", \"mcp__github__create_issue\"]\n",
            3,
            "did you mean `github/create_issue`",
        ),
        ("[mcp]\ndeny = [\"*/x\"]\n", 2, "the server must be named"),
        ("[mcp]\ndeny = [\"a/\"]\n", 2, "did you mean `a/*`"),
        ("[mcp]\nallow = [\"a/b*\"]\n", 2, "is a glob"),
        ("[mcp]\nallow = [\"a b/c\"]\n", 2, "other characters"),
    ] {
        let err = Policy::from_layers(&[Layer::file(USER, text)], None).unwrap_err();
        let PolicyError::Invalid {
            file,
            line: at,
            message,
        } = &err
        else {
            panic!("{err:?}");
        };
        assert_eq!((file.as_str(), *at), (USER, line), "{text}");
        assert!(message.contains(hint), "{text}: {message}");
        assert!(
            message.contains("`server/tool` or `server/*`"),
            "{text}: {message}"
        );
    }
    // Not a list, an unknown key, a typo in the section name.
    let err = |t: &str| {
        Policy::from_layers(&[Layer::project(PROJECT, t)], None)
            .unwrap_err()
            .to_string()
    };
    assert!(
        err("[mcp]\nallow = \"a/b\"\n")
            .contains(&format!("{PROJECT}:2: `mcp.allow` must be a list"))
    );
    assert!(
        err("[mcp]\nallows = [\"a/b\"]\n")
            .contains("unknown key `mcp.allows`; [mcp] takes allow, ask, deny")
    );
    assert!(err("[mpc]\nallow = [\"a/b\"]\n").contains("[env], [mcp]"));
}

#[test]
fn approving_always_writes_an_mcp_allow_that_takes_effect() {
    let action = mcp("github", "create_issue");
    let suggested = suggestions(&action);
    assert_eq!(suggested, vec!["github/create_issue", "github/*"]);
    let p = policy(&[], None);
    assert_eq!(p.suggestions(&action), suggested);

    let text = "# mine\nmode = \"ask\"\n\n[commands]\nallow = [\"make\"]\n";
    let edited = add_rule(text, RuleList::McpAllow, &suggested[0]).unwrap();
    assert_eq!(
        edited,
        "# mine\nmode = \"ask\"\n\n[commands]\nallow = [\"make\"]\n\n[mcp]\nallow = [\"github/create_issue\"]\n"
    );
    let edited = add_rule(&edited, RuleList::McpAllow, "fs/*").unwrap();
    assert_eq!(
        add_rule(&edited, RuleList::McpAllow, "fs/*").unwrap(),
        edited
    );
    let p = policy(&[Layer::file(USER, edited.clone())], Some(Mode::FullAuto));
    assert_eq!(
        judged(&p, "github", "create_issue"),
        (
            Decision::Allow,
            "mcp.allow \"github/create_issue\"".into(),
            format!("{USER}:8")
        )
    );
    assert_eq!(p.decide(&mcp("fs", "read")).decision, Decision::Allow);
    assert_eq!(p.decide(&mcp("github", "other")).decision, Decision::Ask);

    // The other lists, by name; a bad pattern is refused before it reaches the file.
    for (name, list) in [
        ("mcp.allow", RuleList::McpAllow),
        ("mcp.ask", RuleList::McpAsk),
        ("mcp.deny", RuleList::McpDeny),
    ] {
        assert_eq!(name.parse::<RuleList>().unwrap(), list);
    }
    let denied = add_rule(&edited, RuleList::McpDeny, "github/*").unwrap();
    let p = policy(&[Layer::file(USER, denied)], None);
    assert_eq!(p.decide(&action).decision, Decision::Deny);
    let err = add_rule(&edited, RuleList::McpAllow, "github").unwrap_err();
    assert!(err.to_string().contains("did you mean `github/*`"), "{err}");
    assert!(
        "mcp.maybe"
            .parse::<RuleList>()
            .unwrap_err()
            .to_string()
            .contains("mcp.deny")
    );
}
