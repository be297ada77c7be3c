//! Rules the user wrote hold in every mode, through `bosun run` as a user types it: a
//! `mode = "full-auto"` file with its own `ask` rule still asks, the deny note reaches the
//! model, and `--yes` stays the explicit way to approve every ask. Also what `bosun policy
//! check` says about project scripts.

use super::support::*;
use bosun_protocol::{ApprovalDecision, EventMsg, ToolCallStatus};
use bosun_testkit::MockModelServer;
use pretty_assertions::assert_eq;
use serde_json::json;

const FULL_AUTO_ASKS: &str = "mode = \"full-auto\"\n[commands]\nask = [\"rm -rf\"]\n";

fn user_policy(env: &Env, text: &str) -> String {
    std::fs::create_dir_all(&env.home).unwrap();
    let file = env.home.join("policy.toml");
    std::fs::write(&file, text).unwrap();
    file.display().to_string()
}

fn build_then_remove() -> Vec<bosun_testkit::MockReply> {
    vec![
        tools(vec![call(
            "mk",
            "run_command",
            json!({"command": "mkdir -p build && touch build/out.o"}),
        )]),
        tools(vec![call(
            "rm",
            "run_command",
            json!({"command": "rm -rf build"}),
        )]),
        text("done"),
    ]
}

#[test]
fn full_auto_with_a_users_ask_rule_asks_before_rm_rf_and_the_deny_note_reaches_the_model() {
    let env = Env::new();
    let file = user_policy(&env, FULL_AUTO_ASKS);
    let server = MockModelServer::start_blocking(build_then_remove()).unwrap();
    let mut asked = Vec::new();
    // No --mode: the file's `mode = "full-auto"` decides.
    let run = run_answering(&env, &server, "clean the build", &[], |req| {
        let command = match &req.action {
            bosun_protocol::ToolAction::Command { command } => command.clone(),
            other => panic!("unexpected approval {other:?}"),
        };
        asked.push((command.clone(), req.rule.clone(), req.source.clone()));
        if command == "rm -rf build" {
            json!({"approval_id": req.approval_id, "decision": "deny", "note": "keep build/, the next step needs it"})
        } else {
            // Only where commands cannot be sandboxed does anything else ask.
            json!({"approval_id": req.approval_id, "decision": "approve_once"})
        }
    });
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let rm = asked
        .iter()
        .find(|(c, _, _)| c == "rm -rf build")
        .expect("rm -rf build asked");
    assert_eq!(
        (rm.1.as_str(), rm.2.as_str()),
        ("commands.ask \"rm -rf\"", format!("{file}:3").as_str())
    );
    let ends = run.tool_ends();
    assert_eq!(ends[1].status, ToolCallStatus::Denied);
    assert!(run.worktree().join("build/out.o").exists());
    // The next model request carries the note as the tool's result.
    let reqs = server.requests();
    let result = messages(&reqs[2])
        .into_iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "rm")
        .unwrap();
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("keep build/, the next step needs it"),
        "{result}"
    );
}

#[test]
fn yes_approves_the_users_ask_in_full_auto() {
    let env = Env::new();
    user_policy(&env, FULL_AUTO_ASKS);
    let server = MockModelServer::start_blocking(build_then_remove()).unwrap();
    let run = run_answering(&env, &server, "clean the build", &["--yes"], |_| json!({}));
    // build/ was made and removed again: no net change, so the task answered (6).
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    let by_yes: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ApprovalResolved(r) => Some((r.decision, r.by.clone())),
            _ => None,
        })
        .collect();
    assert!(
        by_yes.contains(&(ApprovalDecision::ApproveOnce, "--yes".to_string())),
        "{by_yes:?}"
    );
    assert!(
        run.tool_ends()
            .iter()
            .all(|e| e.status == ToolCallStatus::Success)
    );
    assert!(!run.worktree().join("build").exists());
}

#[test]
fn policy_check_says_project_scripts_are_not_inspected_and_inline_code_is_read() {
    let env = Env::new();
    user_policy(
        &env,
        "[commands]\nallow = [\"python\", \"make\"]\ndeny = [\"curl\"]\n[network]\nallow = [\"npm\"]\n",
    );
    let check = |args: &[&str]| {
        let mut all = vec!["policy", "check", "--repo", path_str(&env.repo)];
        all.extend_from_slice(args);
        let (ok, out, err) = env.text(&all);
        assert!(ok, "{err}");
        out
    };
    let out = check(&["--", "make test"]);
    assert!(out.starts_with("allow: "), "{out}");
    assert!(
        out.contains("project scripts are not inspected: `make` runs the Makefile's recipes"),
        "{out}"
    );
    let out = check(&["--", "npm run build"]);
    assert!(
        out.contains("project scripts are not inspected: `npm run` runs package.json scripts"),
        "{out}"
    );
    assert!(out.contains("network: none"), "{out}");
    let out = check(&["--json", "--", "make"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["project_scripts"][0]["runner"], "make", "{v}");
    // Inline code is read: its curl is denied.
    let out = check(&["--", "python -c 'import os; os.system(\"curl x\")'"]);
    assert!(
        out.starts_with("deny: `curl` is denied (run by `os.system`"),
        "{out}"
    );
    assert!(!out.contains("project scripts"), "{out}");
}

#[test]
fn policy_check_decides_an_mcp_tool_and_names_the_rule() {
    let env = Env::new();
    let file = user_policy(
        &env,
        "mode = \"full-auto\"\n[mcp]\nallow = [\"fs/*\"]\ndeny = [\"fs/rm\"]\n",
    );
    let check = |args: &[&str]| {
        let mut all = vec!["policy", "check", "--repo", path_str(&env.repo)];
        all.extend_from_slice(args);
        env.text(&all)
    };
    let (ok, out, err) = check(&["--mcp", "fs/read_file"]);
    assert!(ok, "{err}");
    assert!(
        out.starts_with("allow: the MCP tool `fs/read_file` is allowed"),
        "{out}"
    );
    assert!(out.contains("rule:   mcp.allow \"fs/*\""), "{out}");
    assert!(out.contains(&format!("source: {file}:3")), "{out}");
    let (ok, out, _) = check(&["--json", "--mcp", "fs/rm"]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["decision"].as_str(), v["rule"].as_str()),
        (Some("deny"), Some("mcp.deny \"fs/rm\""))
    );
    // No rule: asks although the user's mode is full-auto.
    let (ok, out, _) = check(&["--mcp", "github/create_issue"]);
    assert!(ok);
    assert!(
        out.starts_with("ask: no [mcp] rule names `github/create_issue`"),
        "{out}"
    );
    assert!(out.contains("source: built-in"), "{out}");
    // Malformed names fail and say what they could have meant.
    for (name, hint) in [
        ("github", "did you mean --mcp github/TOOL"),
        (
            "mcp__github__create_issue",
            "did you mean --mcp github/create_issue",
        ),
        ("github/*", "check one tool"),
    ] {
        let (ok, _, err) = check(&["--mcp", name]);
        assert!(!ok, "{name}");
        assert!(err.contains(hint), "{name}: {err}");
    }
}
