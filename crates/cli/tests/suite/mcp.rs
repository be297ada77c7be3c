//! MCP servers in a task, end to end: the real `@modelcontextprotocol/server-everything` and
//! `server-filesystem` (pinned npm devDependencies, started with `node …/dist/index.js`),
//! sandboxed like commands, their tools asked about in every mode.

use super::support::*;
use bosun_protocol::{ApprovalRequested, EventMsg, ToolAction, ToolCallStatus};
use bosun_testkit::MockModelServer;
use serde_json::json;
use std::path::PathBuf;

fn package(name: &str) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../node_modules/@modelcontextprotocol")
        .join(name)
        .join("dist/index.js");
    assert!(p.is_file(), "{} is missing: run `npm ci`", p.display());
    std::fs::canonicalize(p).unwrap()
}

fn write_config(env: &Env, servers: &str) {
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(env.home.join("config.toml"), servers).unwrap();
}

fn everything(extra: &str) -> String {
    format!(
        "[mcp_servers.everything]\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n{extra}",
        package("server-everything").display().to_string()
    )
}

fn asks(run: &Run) -> Vec<ApprovalRequested> {
    run.events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ApprovalRequested(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

fn ends(run: &Run) -> Vec<bosun_protocol::ToolCallEnd> {
    run.events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ToolCallEnd(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

fn offered(server: &MockModelServer) -> Vec<String> {
    server
        .model_requests()
        .first()
        .map(|r| {
            r.body["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn an_mcp_tool_asks_even_in_full_auto_and_its_result_reaches_the_model_once_approved() {
    let env = Env::new();
    write_config(&env, &everything(""));
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "c1",
            "mcp__everything__echo",
            json!({"message": "hello over mcp"}),
        )]),
        text("Echoed."),
    ])
    .unwrap();
    let run = run_answering(
        &env,
        &server,
        "echo something",
        &["--mode", "full-auto"],
        |req| json!({"approval_id": req.approval_id, "decision": "approve_once"}),
    );
    assert!(
        offered(&server).contains(&"mcp__everything__echo".to_string()),
        "{:?}",
        offered(&server)
    );
    let asked = asks(&run);
    assert_eq!(asked.len(), 1, "{}", run.stderr());
    assert_eq!(asked[0].tool, "mcp__everything__echo");
    assert_eq!(
        asked[0].action,
        ToolAction::Mcp {
            server: "everything".into(),
            tool: "echo".into(),
            arguments: json!({"message": "hello over mcp"}),
        }
    );
    let end = &ends(&run)[0];
    assert_eq!(end.status, ToolCallStatus::Success, "{end:?}");
    assert!(end.output.contains("hello over mcp"), "{end:?}");
    let second = &server.model_requests()[1];
    assert!(
        messages(second).iter().any(|m| m["role"] == "tool"
            && m["content"]
                .as_str()
                .unwrap_or("")
                .contains("hello over mcp")),
        "the result went back to the model"
    );
}

#[test]
fn a_denied_mcp_call_never_reaches_the_server() {
    let env = Env::new();
    // The filesystem server is given the worktree (its working directory) to serve.
    write_config(
        &env,
        &format!(
            "[mcp_servers.fs]\ncommand = \"node\"\nargs = [{:?}, \".\"]\n",
            package("server-filesystem").display().to_string()
        ),
    );
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "c1",
            "mcp__fs__write_file",
            json!({"path": "denied.txt", "content": "should not exist"}),
        )]),
        tools(vec![call(
            "c2",
            "mcp__fs__write_file",
            json!({"path": "allowed.txt", "content": "written by the server"}),
        )]),
        text("Wrote one."),
    ])
    .unwrap();
    let run = run_answering(
        &env,
        &server,
        "write a file over mcp",
        &["--mode", "full-auto"],
        |req| {
            if req.call_id.0 == "c1" {
                json!({"approval_id": req.approval_id, "decision": "deny", "note": "not this one"})
            } else {
                json!({"approval_id": req.approval_id, "decision": "approve_once"})
            }
        },
    );
    assert!(
        !run.kinds().contains(&"warning") || !run.stderr().contains("sandbox"),
        "{}",
        run.stderr()
    );
    assert!(
        offered(&server).contains(&"mcp__fs__write_file".to_string()),
        "{:?}\n{}",
        offered(&server),
        run.stderr()
    );
    let end = &ends(&run)[0];
    assert_eq!(end.status, ToolCallStatus::Denied, "{end:?}");
    let wt = run.worktree();
    assert!(
        !wt.join("denied.txt").exists(),
        "the denied call reached the server"
    );
    // The approved one did: the server writes in the worktree (and the checkpoint saw it).
    assert_eq!(
        ends(&run)[1].status,
        ToolCallStatus::Success,
        "{:?}",
        ends(&run)[1]
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("allowed.txt")).unwrap(),
        "written by the server"
    );
}

#[test]
fn the_servers_environment_holds_no_secret_of_bosuns_and_a_secret_it_returns_is_redacted() {
    let env = Env::new();
    write_config(
        &env,
        &everything("env_vars = [\"GITHUB_TOKEN\"]\nenv = { PLAIN = \"visible-value\" }\n"),
    );
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call("c1", "mcp__everything__get-env", json!({}))]),
        text("Read the environment."),
    ])
    .unwrap();
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let bosun_secret = "sk-bosun-own-secret-0123456789abcdef";
    let run = run_answering_with_env(
        &env,
        &server,
        "show the env",
        &["--mode", "full-auto"],
        &[
            ("GITHUB_TOKEN", token),
            ("MY_SERVICE_API_KEY", bosun_secret),
        ],
        |req| json!({"approval_id": req.approval_id, "decision": "approve_once"}),
    );
    let end = &ends(&run)[0];
    assert_eq!(
        end.status,
        ToolCallStatus::Success,
        "{end:?}\n{}",
        run.stderr()
    );
    assert!(
        end.output.contains("visible-value"),
        "literal env reaches it: {}",
        end.output
    );
    // Sandboxed like a command: its temp dir is a private one of the task's.
    let env_json: serde_json::Value = serde_json::from_str(&end.output).unwrap();
    let tmp = env_json["TMPDIR"].as_str().unwrap_or_default();
    assert!(tmp.contains("/mcp-everything-"), "TMPDIR {tmp:?}");
    // Not passed by name: never in the server's environment.
    assert!(!end.output.contains("MY_SERVICE_API_KEY"), "{}", end.output);
    assert!(!end.output.contains(bosun_secret));
    // Passed by name, and returned: redacted in the journal and in what the model is sent.
    assert!(end.output.contains("GITHUB_TOKEN"), "{}", end.output);
    assert!(!end.output.contains(token), "the journal holds the token");
    let all = serde_json::to_string(&server.model_requests()).unwrap();
    assert!(!all.contains(token), "the model was sent the token");
    assert!(all.contains("GITHUB_TOKEN"));
}

#[test]
fn a_server_a_repository_declares_waits_for_approval_of_its_exact_command() {
    let env = Env::new();
    std::fs::create_dir_all(env.repo.join(".bosun")).unwrap();
    std::fs::write(env.repo.join(".bosun/config.toml"), everything("")).unwrap();
    let replies = || vec![text("Nothing to do.")];
    // Denied: no tools of it are offered, and a warning says why.
    let server = MockModelServer::start_blocking(replies()).unwrap();
    let run = run_answering(
        &env,
        &server,
        "look",
        &[],
        |req| json!({"approval_id": req.approval_id, "decision": "deny"}),
    );
    let asked = asks(&run);
    assert_eq!(asked.len(), 1, "{}", run.stderr());
    match &asked[0].action {
        ToolAction::McpServer {
            server,
            command,
            origin,
        } => {
            assert_eq!(server, "everything");
            assert!(
                command.starts_with("node ") && command.ends_with(" stdio"),
                "{command}"
            );
            assert!(origin.ends_with(".bosun/config.toml"), "{origin}");
        }
        other => panic!("{other:?}"),
    }
    assert!(offered(&server).iter().all(|t| !t.starts_with("mcp__")));
    assert!(
        run.events
            .iter()
            .any(|e| matches!(&e.msg, EventMsg::Warning(w) if w.code == "mcp_server_not_approved")),
        "{:?}",
        run.kinds()
    );
    // Approved once: offered now and from then on without asking.
    for answer in ["approve_once", "never asked"] {
        let server = MockModelServer::start_blocking(replies()).unwrap();
        let run = run_answering(&env, &server, "look", &[], |req| {
            assert_eq!(answer, "approve_once", "asked again: {req:?}");
            json!({"approval_id": req.approval_id, "decision": "approve_once"})
        });
        assert!(
            offered(&server).contains(&"mcp__everything__echo".to_string()),
            "{answer}: {:?}\n{}",
            offered(&server),
            run.stderr()
        );
    }
    // A changed command asks again.
    std::fs::write(
        env.repo.join(".bosun/config.toml"),
        everything("env = { EXTRA = \"1\" }\n"),
    )
    .unwrap();
    let server = MockModelServer::start_blocking(replies()).unwrap();
    let run = run_answering(
        &env,
        &server,
        "look",
        &[],
        |req| json!({"approval_id": req.approval_id, "decision": "deny"}),
    );
    assert_eq!(asks(&run).len(), 1);
}
