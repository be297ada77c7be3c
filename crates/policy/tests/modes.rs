//! Modes against the rules a user wrote: full-auto waives only the built-in default asks; the
//! asks and denies of `$BOSUN_HOME/policy.toml`, `.bosun/policy.toml` and `--policy` hold in
//! every mode; read-only is a ceiling no allow rule lifts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bosun_policy::{Decision, Layer, Mode, Policy};
use bosun_protocol::ToolAction;
use pretty_assertions::assert_eq;

const USER: &str = "/home/u/.local/share/bosun/policy.toml";
const PROJECT: &str = "/repo/.bosun/policy.toml";
const FLAG: &str = "/tmp/extra.toml";

const MODES: [Mode; 4] = [Mode::ReadOnly, Mode::Ask, Mode::AutoEdit, Mode::FullAuto];

/// (decision, rule, source) of a command.
fn judged(p: &Policy, command: &str) -> (Decision, String, String) {
    let d = p.check_command(command);
    (d.decision, d.rule, d.source)
}

#[test]
fn full_auto_in_the_same_file_as_an_ask_rule_still_asks() {
    let text = "mode = \"full-auto\"\n[commands]\nask = [\"rm -rf\"]\n";
    let p = Policy::with_builtin(&[Layer::file(USER, text)], None).unwrap();
    assert_eq!(p.mode(), Mode::FullAuto);
    let d = p.check_command("rm -rf build");
    assert_eq!(
        (d.decision, d.rule.as_str(), d.source.as_str()),
        (
            Decision::Ask,
            "commands.ask \"rm -rf\"",
            format!("{USER}:3").as_str()
        )
    );
    assert!(d.reason.contains("holds in every mode"), "{}", d.reason);
    // Wherever it hides.
    for command in [
        "rm -fr build",
        "bash -c 'rm -rf build'",
        "find . -name '*.o' | xargs rm -rf",
        "make && rm --recursive --force build",
        "python3 -c 'import os; os.system(\"rm -rf build\")'",
    ] {
        assert_eq!(
            p.check_command(command).decision,
            Decision::Ask,
            "{command}"
        );
    }
    // The built-in default asks are what full-auto waives.
    for command in [
        "rm -r build",
        "curl https://example.com",
        "git push",
        "find . -delete",
    ] {
        let d = p.check_command(command);
        assert_eq!(d.decision, Decision::Allow, "{command}: {d:?}");
        assert!(d.reason.contains("built-in default"), "{}", d.reason);
    }
}

#[test]
fn asks_from_every_policy_file_hold_in_full_auto() {
    let layers = [
        Layer::file(USER, "[commands]\nask = [\"git commit\"]\n"),
        Layer::project(PROJECT, "[commands]\nask = [\"npm publish\"]\n"),
        Layer::file(FLAG, "[commands]\nask = [\"terraform apply\"]\n"),
    ];
    let p = Policy::with_builtin(&layers, Some(Mode::FullAuto)).unwrap();
    assert_eq!(
        judged(&p, "git commit -m x"),
        (
            Decision::Ask,
            "commands.ask \"git commit\"".into(),
            format!("{USER}:2")
        )
    );
    assert_eq!(
        judged(&p, "npm publish --tag next"),
        (
            Decision::Ask,
            "commands.ask \"npm publish\"".into(),
            format!("{PROJECT}:2")
        )
    );
    assert_eq!(
        judged(&p, "terraform apply -auto-approve"),
        (
            Decision::Ask,
            "commands.ask \"terraform apply\"".into(),
            format!("{FLAG}:2")
        )
    );
    // A later file's allow does not undo an earlier file's ask.
    let p = Policy::with_builtin(
        &[
            Layer::file(USER, "[commands]\nask = [\"rm -rf\"]\n"),
            Layer::project(PROJECT, "[commands]\nallow = [\"rm -rf\", \"rm\"]\n"),
        ],
        Some(Mode::FullAuto),
    )
    .unwrap();
    assert_eq!(p.check_command("rm -rf build").decision, Decision::Ask);
    assert_eq!(p.check_command("rm build").decision, Decision::Allow);
}

#[test]
fn denies_hold_in_every_mode() {
    let layers = [
        Layer::file(USER, "[commands]\ndeny = [\"curl\"]\n"),
        Layer::project(PROJECT, "[commands]\ndeny = [\"kubectl\"]\n"),
        Layer::file(FLAG, "[commands]\ndeny = [\"git push\"]\n"),
    ];
    for mode in MODES {
        let p = Policy::with_builtin(&layers, Some(mode)).unwrap();
        for (command, source) in [
            ("curl x", format!("{USER}:2")),
            ("kubectl get pods", format!("{PROJECT}:2")),
            ("true && git push", format!("{FLAG}:2")),
            ("sudo ls", "built-in".into()),
        ] {
            let d = p.check_command(command);
            assert_eq!(d.decision, Decision::Deny, "{command} in {mode}");
            assert!(d.source.starts_with(&source), "{command} in {mode}: {d:?}");
        }
    }
}

#[test]
fn full_auto_keeps_a_policy_files_write_scope_and_approval_limits() {
    let text = "[paths]\nwrite = [\"src/**\"]\n[approval]\nmax_files = 2\nmax_lines = 10\n";
    let p = Policy::with_builtin(&[Layer::file(USER, text)], Some(Mode::FullAuto)).unwrap();
    let outside = p.check_write("docs/a.md");
    assert_eq!(
        (outside.decision, outside.rule.as_str()),
        (Decision::Ask, "paths.write")
    );
    assert!(
        outside.reason.contains("full-auto does not waive"),
        "{}",
        outside.reason
    );
    assert_eq!(p.check_write("src/a.rs").decision, Decision::Allow);
    assert_eq!(
        p.check_command("echo x > docs/a.md").decision,
        Decision::Ask
    );
    assert_eq!(
        p.check_command("echo x > src/a.rs").decision,
        Decision::Allow
    );
    // Writing outside the worktree asks by default only: full-auto waives that.
    assert_eq!(p.check_command("echo x > /tmp/x").decision, Decision::Allow);
    let d = p.check_change(3, 0);
    assert_eq!(
        (d.decision, d.rule.as_str(), d.source),
        (Decision::Ask, "approval.max_files = 2", format!("{USER}:4"))
    );
    assert_eq!(p.check_change(1, 11).rule, "approval.max_lines = 10");
    assert_eq!(p.check_change(2, 10).decision, Decision::Allow);
    let three = ToolAction::Write {
        paths: vec!["src/a".into(), "src/b".into(), "src/c".into()],
    };
    assert_eq!(p.decide(&three).decision, Decision::Ask);
}

#[test]
fn read_only_is_a_ceiling_no_allow_rule_lifts() {
    let text = "[commands]\nallow = [\"make\", \"npm\", \"rm -rf\", \"git push\"]\nask = [\"cat\"]\n[paths]\nwrite = [\"**\"]\n[network]\nallow = [\"npm\"]\ndomains = [\"pypi.org\"]\n";
    let p = Policy::with_builtin(&[Layer::file(USER, text)], Some(Mode::ReadOnly)).unwrap();
    for command in [
        "make",
        "rm -rf build",
        "git push",
        "npm install",
        "ls > out.txt",
    ] {
        let d = p.check_command(command);
        assert_eq!(d.decision, Decision::Deny, "{command}: {d:?}");
    }
    assert_eq!(p.check_write("src/a.rs").decision, Decision::Deny);
    assert_eq!(p.check_change(1, 1).decision, Decision::Deny);
    // No network rule applies.
    assert_eq!(p.network_grant("npm install"), None);
    assert!(!p.network_allowed("npm install"));
    let host = p.check_host("npm install", "pypi.org").decision;
    assert_eq!(
        (host.decision, host.rule.as_str()),
        (Decision::Deny, "mode read-only")
    );
    // Read-only commands run, and a file's ask on one still asks.
    assert_eq!(p.check_command("ls -la").decision, Decision::Allow);
    assert_eq!(
        judged(&p, "cat README.md"),
        (
            Decision::Ask,
            "commands.ask \"cat\"".into(),
            format!("{USER}:3")
        )
    );
    // A project can make it read-only; nothing the user wrote loosens it.
    let p = Policy::with_builtin(
        &[
            Layer::file(
                USER,
                "mode = \"full-auto\"\n[commands]\nallow = [\"make\"]\n",
            ),
            Layer::project(PROJECT, "mode = \"read-only\"\n"),
        ],
        None,
    )
    .unwrap();
    assert_eq!(p.mode(), Mode::ReadOnly);
    assert_eq!(p.check_command("make").decision, Decision::Deny);
}

#[test]
fn an_ask_a_user_wrote_is_what_approval_answers_in_every_mode_but_read_only() {
    let text = "[commands]\nask = [\"rm -rf\"]\n";
    for mode in [Mode::Ask, Mode::AutoEdit, Mode::FullAuto] {
        let p = Policy::with_builtin(&[Layer::file(USER, text)], Some(mode)).unwrap();
        let d = p.check_command("rm -rf build");
        assert_eq!(
            (d.decision, d.mode, d.rule.as_str()),
            (Decision::Ask, mode, "commands.ask \"rm -rf\""),
        );
        assert_eq!(
            p.suggestions(&ToolAction::Command {
                command: "rm -rf build".into()
            }),
            vec!["rm -rf build"]
        );
    }
    let p = Policy::with_builtin(&[Layer::file(USER, text)], Some(Mode::ReadOnly)).unwrap();
    assert_eq!(p.check_command("rm -rf build").decision, Decision::Deny);
}
