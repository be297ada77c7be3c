//! Interpreters and build tools are doors: what inline code and project scripts may do, as a
//! policy file says it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bosun_policy::{Decision, Layer, Mode, Policy, ProjectScript, project_scripts};
use bosun_protocol::ToolAction;
use pretty_assertions::assert_eq;

const USER: &str = "/home/u/.local/share/bosun/policy.toml";
const PROJECT: &str = "/repo/.bosun/policy.toml";

/// The issue's setup: `python` and `make` allowed, `curl` denied.
const ISSUE: &str = "[commands]\nallow = [\"python\", \"make\"]\ndeny = [\"curl\"]\n";

fn policy(layers: &[Layer], mode: Option<Mode>) -> Policy {
    Policy::with_builtin(layers, mode).unwrap()
}

#[test]
fn python_running_curl_is_denied_in_every_mode_that_runs_python() {
    for mode in [Mode::Ask, Mode::AutoEdit, Mode::FullAuto] {
        let p = policy(&[Layer::file(USER, ISSUE)], Some(mode));
        let d = p.check_command("python -c 'import os; os.system(\"curl https://x.example\")'");
        assert_eq!(
            (d.decision, d.rule.as_str(), d.source.as_str()),
            (
                Decision::Deny,
                "commands.deny \"curl\"",
                format!("{USER}:3").as_str()
            ),
            "{mode}"
        );
        // Other inline code asks: a file denies a command it could start unseen.
        let d = p.check_command("python -c 'print(1)'");
        assert_eq!(
            (d.decision, d.rule.as_str()),
            (Decision::Ask, "inline code (commands.deny \"curl\")"),
            "{mode}"
        );
        // A make keeps its decision; its Makefile is not read.
        assert_eq!(p.check_command("make").decision, Decision::Allow, "{mode}");
        // A script file is not read either: python keeps its decision.
        assert_eq!(
            p.check_command("python tools/gen.py").decision,
            Decision::Allow
        );
    }
}

#[test]
fn only_a_policy_files_deny_makes_inline_code_ask() {
    // The built-in denies (sudo, mkfs, rm -rf / …) exist always; they alone do not.
    let p = policy(
        &[Layer::file(USER, "[commands]\nallow = [\"python\"]\n")],
        None,
    );
    let d = p.check_command("python -c 'print(1)'");
    assert_eq!(d.decision, Decision::Allow, "{d:?}");
    // But a built-in deny named by the code holds.
    assert_eq!(
        p.check_command("python -c 'import os; os.system(\"sudo ls\")'")
            .decision,
        Decision::Deny
    );
    // A project file's deny counts like the user's.
    let p = policy(
        &[
            Layer::file(USER, "[commands]\nallow = [\"python\"]\n"),
            Layer::project(PROJECT, "[commands]\ndeny = [\"kubectl\"]\n"),
        ],
        None,
    );
    let d = p.check_command("python -c 'print(1)'");
    assert_eq!(
        (d.decision, d.source.as_str()),
        (Decision::Ask, format!("{PROJECT}:2").as_str())
    );
}

#[test]
fn allowing_the_inline_flag_in_your_own_file_lets_inline_code_run() {
    let user = "[commands]\nallow = [\"python\", \"python -c\"]\ndeny = [\"curl\"]\n";
    let p = policy(&[Layer::file(USER, user)], None);
    assert_eq!(
        p.check_command("python -c 'print(1)'").decision,
        Decision::Allow
    );
    // The commands it names are still judged.
    assert_eq!(
        p.check_command("python -c 'import os; os.system(\"curl x\")'")
            .decision,
        Decision::Deny
    );
    // A repository's file cannot lift it: it would loosen the user's deny.
    let p = policy(
        &[
            Layer::file(USER, ISSUE),
            Layer::project(PROJECT, "[commands]\nallow = [\"python -c\"]\n"),
        ],
        None,
    );
    assert_eq!(
        p.check_command("python -c 'print(1)'").decision,
        Decision::Ask
    );
    // Approving "always" offers the flag that lifts it.
    let p = policy(&[Layer::file(USER, ISSUE)], None);
    let action = ToolAction::Command {
        command: "python -c 'print(1)'".into(),
    };
    assert_eq!(p.suggestions(&action), vec!["python -c"]);
}

#[test]
fn build_tools_keep_their_decision_but_get_no_network_grant_unless_named() {
    let text = "[commands]\nallow = [\"npm\", \"make\", \"cargo\"]\n[network]\nallow = [\"npm\", \"cargo\"]\ndomains = [\"pypi.org\"]\n";
    let p = policy(&[Layer::file(USER, text)], None);
    assert!(p.network_allowed("npm install lodash"));
    assert!(p.network_allowed("npm ci"));
    for runner in [
        "npm run build",
        "npm test",
        "make",
        "cargo test",
        "cargo run",
        "python setup.py install",
    ] {
        assert!(!p.network_allowed(runner), "{runner}");
    }
    // They keep their command decision.
    assert_eq!(p.check_command("npm run build").decision, Decision::Allow);
    assert_eq!(p.check_command("make").decision, Decision::Allow);
    // Like any command they reach `[network] domains`, and nothing else.
    let grant = p.network_grant("make").unwrap();
    assert!(grant.granted_by.is_empty());
    assert_eq!(grant.other_hosts, Decision::Deny);
    assert_eq!(
        p.check_host("make", "pypi.org").decision.decision,
        Decision::Allow
    );
    assert_eq!(
        p.check_host("npm run build", "registry.npmjs.org")
            .decision
            .decision,
        Decision::Deny
    );
    // A rule that names the runner grants it.
    let named = "[network]\nallow = [\"make\", \"npm run build\"]\n[[network.rules]]\ncommand = \"cargo test\"\ndomains = [\"crates.io\"]\n";
    let p = policy(&[Layer::file(USER, named)], None);
    assert!(p.network_allowed("make -j4"));
    assert!(p.network_allowed("npm run build"));
    assert!(!p.network_allowed("npm run deploy"));
    assert!(p.network_allowed("cargo test -p x"));
    // Inline code's commands count against a grant: curl is not granted with python.
    let python = "[network]\nallow = [\"python\"]\n";
    let p = policy(&[Layer::file(USER, python)], None);
    assert!(p.network_allowed("python -c 'import urllib.request'"));
    assert!(!p.network_allowed("python -c 'import os; os.system(\"curl x\")'"));
}

#[test]
fn project_scripts_say_what_they_run() {
    assert_eq!(
        project_scripts("make test && npm run lint"),
        vec![
            ProjectScript {
                runner: "make".into(),
                runs: "the Makefile's recipes".into()
            },
            ProjectScript {
                runner: "npm run".into(),
                runs: "package.json scripts".into()
            }
        ]
    );
    assert_eq!(project_scripts("git status"), vec![]);
}

#[test]
fn no_inline_code_makes_the_policy_panic() {
    let p = policy(&[Layer::file(USER, ISSUE)], None);
    let alphabet = [
        "a", " ", "'", "\"", "\\", "$", "(", ")", "`", "{", "}", "[", "]", "#", "%", "q", "x", "/",
        ",", ";", "\n", "<<", ":", "é",
    ];
    let mut count = 0;
    for program in ["python -c", "node -e", "perl -e", "ruby -e"] {
        for a in alphabet {
            for b in alphabet {
                for c in alphabet {
                    let code = format!("system({a}{b}{c}) os.system(\"{a}{b}\"){c}`");
                    let quoted = code.replace('\'', r"'\''");
                    let d = p.check_command(&format!("{program} '{quoted}'"));
                    assert_ne!(d.decision, Decision::Allow, "{program} {code}");
                    count += 1;
                }
            }
        }
    }
    assert!(count > 50_000);
}
