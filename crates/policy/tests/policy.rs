//! The policy as a user meets it: the example file, modes, layers, paths, errors, rule editing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bosun_policy::{
    Decision, Layer, Mode, Policy, PolicyError, RuleList, SandboxRules, add_rule, suggestions,
};
use bosun_protocol::ToolAction;
use pretty_assertions::assert_eq;

fn example(mode: Option<Mode>) -> Policy {
    Policy::from_layers(&[Layer::builtin(), Layer::example()], mode).unwrap()
}

fn write(paths: &[&str]) -> ToolAction {
    ToolAction::Write {
        paths: paths.iter().map(|p| p.to_string()).collect(),
    }
}

fn read(path: &str) -> ToolAction {
    ToolAction::Read {
        paths: vec![path.into()],
    }
}

fn cmd(c: &str) -> ToolAction {
    ToolAction::Command { command: c.into() }
}

#[test]
fn the_example_policy_scopes_writes_as_written() {
    let p = example(Some(Mode::AutoEdit));
    let decide = |a: ToolAction| p.decide(&a).decision;
    assert_eq!(decide(write(&["src/a/b.py"])), Decision::Allow);
    assert_eq!(decide(write(&["tests/test_a.py"])), Decision::Allow);
    assert_eq!(decide(write(&["docs/a.md"])), Decision::Ask);
    assert_eq!(decide(write(&["Cargo.lock"])), Decision::Deny);
    assert_eq!(decide(write(&["src/poetry.lock"])), Decision::Deny);
    assert_eq!(decide(write(&[".env"])), Decision::Deny);
    assert_eq!(decide(write(&["infra/prod/main.tf"])), Decision::Deny);
    assert_eq!(decide(write(&["infra/staging/main.tf"])), Decision::Ask);
    // `..` is resolved before matching, and leaving the worktree is refused.
    assert_eq!(decide(write(&["src/../.env"])), Decision::Deny);
    assert_eq!(decide(write(&["src/../../other/x"])), Decision::Deny);
    assert_eq!(decide(write(&["/etc/passwd"])), Decision::Deny);
    assert_eq!(decide(write(&["src/a.py", "Cargo.lock"])), Decision::Deny);
    // Reads run, except secrets.
    assert_eq!(decide(read("src/a.py")), Decision::Allow);
    assert_eq!(decide(read("config/.env")), Decision::Deny);
    assert_eq!(decide(read("certs/server.pem")), Decision::Deny);
    assert_eq!(decide(read("~/.ssh/id_ed25519")), Decision::Deny);
    assert_eq!(decide(ToolAction::Internal), Decision::Allow);

    let outside = p.check_write("docs/a.md");
    assert_eq!(outside.rule, "paths.write");
    assert_eq!(outside.source, "assets/policy/example.toml:8");
    assert!(
        outside.reason.contains("src/**, tests/**"),
        "{}",
        outside.reason
    );
    let inside = p.check_write("src/a.py");
    assert_eq!(inside.rule, "paths.write \"src/**\"");
}

#[test]
fn a_change_over_max_files_asks_and_names_the_condition() {
    let p = example(Some(Mode::AutoEdit));
    let files: Vec<String> = (0..21).map(|i| format!("src/f{i}.py")).collect();
    let refs: Vec<&str> = files.iter().map(String::as_str).collect();
    let d = p.decide(&write(&refs));
    assert_eq!(d.decision, Decision::Ask);
    assert_eq!(d.rule, "approval.max_files = 20");
    assert_eq!(d.source, "assets/policy/example.toml:23");
    assert_eq!(p.decide(&write(&refs[..20])).decision, Decision::Allow);
    assert_eq!(p.check_change(3, 100_000).decision, Decision::Allow);
    let strict = Policy::from_layers(
        &[Layer::file("u.toml", "[approval]\nmax_lines = 50\n")],
        None,
    )
    .unwrap()
    .with_mode(Mode::AutoEdit);
    assert_eq!(strict.check_change(1, 51).decision, Decision::Ask);
    assert_eq!(strict.check_change(1, 50).decision, Decision::Allow);
}

#[test]
fn modes_behave_as_the_issue_says() {
    let ro = example(Some(Mode::ReadOnly));
    assert_eq!(ro.decide(&read("src/a.py")).decision, Decision::Allow);
    assert_eq!(
        ro.decide(&cmd("git status && ls")).decision,
        Decision::Allow
    );
    assert_eq!(ro.decide(&cmd("make")).decision, Decision::Deny);
    assert_eq!(ro.decide(&cmd("ls > out.txt")).decision, Decision::Deny);
    assert_eq!(ro.decide(&cmd("find . -delete")).decision, Decision::Deny);
    let d = ro.decide(&write(&["src/a.py"]));
    assert_eq!(
        (d.decision, d.rule.as_str()),
        (Decision::Deny, "mode read-only")
    );

    let ask = example(None);
    assert_eq!(ask.mode(), Mode::Ask);
    assert_eq!(ask.decide(&write(&["src/a.py"])).decision, Decision::Ask);
    assert_eq!(ask.decide(&cmd("make")).decision, Decision::Allow);
    assert_eq!(ask.decide(&cmd("cargo build")).decision, Decision::Ask);

    let auto = example(Some(Mode::AutoEdit));
    assert_eq!(auto.decide(&write(&["src/a.py"])).decision, Decision::Allow);
    assert_eq!(auto.decide(&cmd("cargo build")).decision, Decision::Ask);
    assert_eq!(auto.decide(&cmd("rm -rf build")).decision, Decision::Ask);

    // Full-auto waives the built-in default asks; the example file's own rules (its write
    // scope, its `ask = ["rm -rf"]`) still ask.
    let full = example(Some(Mode::FullAuto));
    assert_eq!(full.decide(&write(&["src/a.py"])).decision, Decision::Allow);
    assert_eq!(full.decide(&write(&["docs/a.md"])).decision, Decision::Ask);
    assert_eq!(full.decide(&cmd("cargo build")).decision, Decision::Allow);
    assert_eq!(full.decide(&cmd("rm -r build")).decision, Decision::Allow);
    assert_eq!(full.decide(&cmd("rm -rf build")).decision, Decision::Ask);
    assert_eq!(
        full.decide(&cmd("make && git push")).decision,
        Decision::Deny
    );
    assert_eq!(
        full.decide(&write(&["Cargo.lock"])).decision,
        Decision::Deny
    );
    assert_eq!(full.decide(&read(".env")).decision, Decision::Deny);
    assert_eq!(full.check_command("cargo build").mode, Mode::FullAuto);

    assert_eq!("auto-edit".parse::<Mode>().unwrap(), Mode::AutoEdit);
    assert!(matches!(
        "yolo".parse::<Mode>(),
        Err(PolicyError::UnknownMode(_))
    ));
    assert_eq!(Mode::default(), Mode::Ask);
}

const USER: &str = "# user policy\n[commands]\nallow = [\"npm\"]\ndeny = [\"git push\"]\n[paths]\nwrite = [\"src/**\"]\n";

#[test]
fn a_project_can_tighten_but_never_loosen_what_the_user_denies() {
    let project = "mode = \"full-auto\"\n[commands]\nallow = [\"git push\", \"git\"]\ndeny = [\"npm publish\"]\n[paths]\nwrite = [\"**\"]\n";
    let p = Policy::from_layers(
        &[
            Layer::builtin(),
            Layer::file("/home/u/.bosun/policy.toml", USER),
            Layer::project("/repo/.bosun/policy.toml", project),
        ],
        None,
    )
    .unwrap();
    // The user's deny stands, and says where it came from.
    let d = p.check_command("git push origin main");
    assert_eq!(d.decision, Decision::Deny);
    assert_eq!(d.source, "/home/u/.bosun/policy.toml:4");
    // The project tightens.
    let d = p.check_command("npm publish");
    assert_eq!(
        (d.decision, d.source.as_str()),
        (Decision::Deny, "/repo/.bosun/policy.toml:4")
    );
    assert_eq!(p.check_command("npm test").decision, Decision::Allow);
    // The project cannot widen the user's write scope, nor pick a looser mode.
    assert_eq!(p.mode(), Mode::Ask);
    let p = p.with_mode(Mode::AutoEdit);
    assert_eq!(p.check_write("docs/x.md").decision, Decision::Ask);
    assert_eq!(p.check_write("src/x.rs").decision, Decision::Allow);
    // A mode given on the command line wins.
    let p = Policy::from_layers(&[Layer::file("u", USER)], Some(Mode::ReadOnly)).unwrap();
    assert_eq!(
        (p.mode(), p.check_command("npm test").source.as_str()),
        (Mode::ReadOnly, "--mode")
    );
    // The user's own file may pick a looser mode; a project may still tighten it.
    let loose = "mode = \"full-auto\"\n";
    let p = Policy::from_layers(&[Layer::file("u", loose)], None).unwrap();
    assert_eq!(p.mode(), Mode::FullAuto);
    let p = Policy::from_layers(
        &[
            Layer::file("u", loose),
            Layer::project("p", "mode = \"read-only\""),
        ],
        None,
    )
    .unwrap();
    assert_eq!(
        (p.mode(), p.check_command("make").source.as_str()),
        (Mode::ReadOnly, "p:1")
    );
    let p = Policy::from_layers(&[Layer::file("u", USER)], Some(Mode::ReadOnly)).unwrap();
    assert_eq!(
        (p.mode(), p.check_command("npm test").source.as_str()),
        (Mode::ReadOnly, "--mode")
    );
}

#[test]
fn policy_files_override_built_in_command_defaults_only_as_specifically() {
    let user = "[commands]\nallow = [\"sudo\", \"find\", \"git push\"]\n";
    let p = Policy::from_layers(&[Layer::builtin(), Layer::file("u", user)], None).unwrap();
    assert_eq!(p.check_command("sudo ls").decision, Decision::Allow);
    assert_eq!(p.check_command("git push").decision, Decision::Allow);
    assert_eq!(p.check_command("find . -name x").decision, Decision::Allow);
    // `find` is less specific than the built-in `find -delete`, which still asks.
    assert_eq!(p.check_command("find . -delete").decision, Decision::Ask);
    // Built-in path rules cannot be loosened.
    assert_eq!(p.check_read(".env").decision, Decision::Deny);
    let builtin = Policy::builtin();
    assert_eq!(builtin.check_command("sudo ls").decision, Decision::Deny);
    assert_eq!(
        builtin.check_command("git status").decision,
        Decision::Allow
    );
}

#[test]
fn bad_files_give_file_line_and_what_to_fix() {
    let err = |text: &str| {
        Policy::from_layers(&[Layer::file("/repo/.bosun/policy.toml", text)], None)
            .unwrap_err()
            .to_string()
    };
    let e = err("mode = \"ask\"\n[commands]\nallow = [\"make\"\n");
    assert!(
        e.starts_with("/repo/.bosun/policy.toml:3: not valid TOML"),
        "{e}"
    );
    let e = err("mode = \"ask\"\n\n[comands]\nallow = []\n");
    assert!(
        e.starts_with("/repo/.bosun/policy.toml:3: unknown key `comands`"),
        "{e}"
    );
    let e = err("[commands]\nallow = [\"make\",\n  3]\n");
    assert!(
        e.starts_with("/repo/.bosun/policy.toml:3: `commands.allow` must hold only strings"),
        "{e}"
    );
    let e = err("[paths]\n\nwrite = \"src/**\"\n");
    assert!(
        e.starts_with("/repo/.bosun/policy.toml:3: `paths.write` must be a list"),
        "{e}"
    );
    let e = err("\nmode = \"yolo\"\n");
    assert!(
        e.starts_with("/repo/.bosun/policy.toml:2: unknown mode `yolo`"),
        "{e}"
    );
    let e = err("[approval]\nmax_files = -1\n");
    assert!(
        e.starts_with("/repo/.bosun/policy.toml:2: `approval.max_files`"),
        "{e}"
    );
    let e = err("[paths]\ndeny = [\"a/[\"]\n");
    assert!(
        e.starts_with("/repo/.bosun/policy.toml:2: `a/[` is not a valid glob"),
        "{e}"
    );
    let e = err("[commands]\nask = [\"-rf\"]\n");
    assert!(e.starts_with("/repo/.bosun/policy.toml:2:"), "{e}");
    assert!(
        err("[network]\nallow = [\"npm\"]\nhosts = []\n")
            .contains(":3: unknown key `network.hosts`")
    );
}

#[test]
fn network_is_off_unless_a_rule_grants_it() {
    let p = example(None);
    assert!(!p.network_allowed("npm install"));
    let granted = "[network]\nallow = [\"npm install\", \"pip install\"]\n";
    let p = Policy::from_layers(
        &[
            Layer::builtin(),
            Layer::example(),
            Layer::file("u", granted),
        ],
        None,
    )
    .unwrap();
    assert!(p.network_allowed("npm install"));
    assert!(p.network_allowed("cd web && npm install lodash"));
    assert!(!p.network_allowed("npm install && make"));
    assert!(!p.network_allowed("npm test"));
    assert!(!p.network_allowed("bash -c \"$X\""));
}

#[test]
fn the_sandbox_gets_every_layers_path_and_network_rules() {
    let extra = "[sandbox]\nwrite = [\"~/.cache/go-build\"]\n[env]\nallow = [\"NPM_TOKEN\"]\n[network]\nallow = [\"npm ci\"]\n";
    let p = Policy::from_layers(
        &[Layer::builtin(), Layer::example(), Layer::file("u", extra)],
        None,
    )
    .unwrap();
    let SandboxRules {
        read_deny,
        write_deny,
        extra_write,
        network_allow,
        env_allow,
    } = p.sandbox();
    assert!(read_deny.contains(&"~/.ssh/**".to_string()));
    assert!(read_deny.contains(&"**/*.pem".to_string()));
    assert_eq!(write_deny, vec!["*.lock", ".env", "infra/prod/**"]);
    assert_eq!(extra_write, vec!["~/.cache/go-build"]);
    assert_eq!(network_allow, vec!["npm ci"]);
    assert_eq!(env_allow, vec!["NPM_TOKEN"]);
    let home = std::path::Path::new("/home/u");
    let concrete = p.sandbox().home_read_deny(home);
    assert!(concrete.contains(&home.join(".ssh")));
    assert!(concrete.contains(&home.join(".netrc")));
    assert!(p.is_read_denied("web/.env") && p.is_read_denied("keys/id_rsa.pub"));
    assert!(!p.is_read_denied("src/env.rs"));
}

#[test]
fn an_approved_rule_lands_in_the_file_with_its_comments_and_takes_effect() {
    let text = include_str!("../../../assets/policy/example.toml");
    let suggested = suggestions(&cmd("node a.mjs"));
    assert_eq!(suggested, vec!["node *.mjs", "node a.mjs"]);
    let edited = add_rule(text, RuleList::CommandsAllow, &suggested[0]).unwrap();
    assert!(
        edited.contains(
            "allow = [\"make\", \"pytest\", \"npm\", \"go\", \"python\", \"node *.mjs\"]"
        ),
        "{edited}"
    );
    for line in text.lines().filter(|l| l.starts_with('#')) {
        assert!(edited.contains(line), "lost comment {line}");
    }
    let p = Policy::from_layers(
        &[Layer::builtin(), Layer::file("p.toml", edited.clone())],
        None,
    )
    .unwrap();
    let d = p.check_command("node scripts/b.mjs");
    assert_eq!(
        (d.decision, d.rule.as_str(), d.source.as_str()),
        (
            Decision::Allow,
            "commands.allow \"node *.mjs\"",
            "p.toml:16"
        )
    );
    assert_eq!(p.check_command("node a.js").decision, Decision::Ask);

    let edited = add_rule(&edited, RuleList::PathsWrite, "docs/**").unwrap();
    let p = Policy::from_layers(&[Layer::file("p.toml", edited)], Some(Mode::AutoEdit)).unwrap();
    assert_eq!(p.check_write("docs/a.md").decision, Decision::Allow);
}

#[test]
fn policy_suggestions_cover_only_what_would_ask() {
    let p = example(None);
    assert_eq!(
        p.suggestions(&cmd("make && node a.mjs")),
        vec!["node *.mjs", "node a.mjs"]
    );
    assert_eq!(
        p.suggestions(&cmd("cargo test -p foo")),
        vec!["cargo test", "cargo test -p foo"]
    );
    assert_eq!(p.suggestions(&write(&["src/a/b.rs"]))[0], "src/a/**");
}

#[test]
fn a_decision_serialises_for_the_cli_and_the_ui() {
    let d = example(None).check_command("git push");
    let json = serde_json::to_value(&d).unwrap();
    assert_eq!(json["decision"], "deny");
    assert_eq!(json["mode"], "ask");
    assert_eq!(json["rule"], "commands.deny \"git push\"");
    assert_eq!(json["source"], "assets/policy/example.toml:19");
}

#[test]
fn allow_all_and_new_keep_their_foundation_behaviour() {
    assert_eq!(
        Policy::allow_all().decide(&cmd("rm -rf /")).decision,
        Decision::Allow
    );
    let ro = Policy::new(Mode::ReadOnly);
    assert_eq!(ro.decide(&read("src/a.rs")).decision, Decision::Allow);
    assert_eq!(ro.decide(&cmd("ls")).decision, Decision::Deny);
}

#[test]
fn no_input_makes_the_policy_panic() {
    let p = example(None);
    let alphabet = [
        "a", " ", "'", "\"", "\\", "$", "(", ")", "`", "{", "}", "<", ">", "&", "|", ";", "\n",
        "=", "-", "*", "~", "#", "é",
    ];
    let mut count = 0;
    for a in alphabet {
        for b in alphabet {
            for c in alphabet {
                for d in ["", "$(", "<<", "x"] {
                    let command = format!("{d}{a}{b}{c}{d}");
                    let decision = p.check_command(&command);
                    assert!(!decision.reason.is_empty());
                    let _ = p.suggestions(&cmd(&command));
                    let _ = p.network_allowed(&command);
                    let _ = p.check_write(&command);
                    count += 1;
                }
            }
        }
    }
    assert!(count > 40_000);
    let nested = "bash -c '".repeat(50) + "git push" + &"'".repeat(50);
    assert_ne!(p.check_command(&nested).decision, Decision::Allow);
    let deep_eval = "eval ".repeat(100) + "git push";
    assert_ne!(p.check_command(&deep_eval).decision, Decision::Allow);
}
