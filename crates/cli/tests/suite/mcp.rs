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
    // A marker on the server's command line, to find its process afterwards.
    let marker = format!("bosun-mcp-test-{}", std::process::id());
    write_config(
        &env,
        &format!(
            "[mcp_servers.everything]\ncommand = \"node\"\nargs = [{:?}, \"stdio\", {marker:?}]\n",
            package("server-everything").display().to_string()
        ),
    );
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
    // The server died with its task.
    let left = std::process::Command::new("pgrep")
        .args(["-f", &marker])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "still running: {}",
        String::from_utf8_lossy(&left.stdout)
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

#[test]
fn a_stdio_server_writes_only_in_its_tasks_worktree() {
    let env = Env::new();
    let outside = env.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let outside = std::fs::canonicalize(outside).unwrap();
    // The server itself would write anywhere it is told to: the sandbox is what stops it.
    write_config(
        &env,
        &format!(
            "[mcp_servers.fs]\ncommand = \"node\"\nargs = [{:?}, \".\", {:?}]\n",
            package("server-filesystem").display().to_string(),
            outside.display().to_string()
        ),
    );
    let target = outside.join("escaped.txt");
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "c1",
            "mcp__fs__write_file",
            json!({"path": target.display().to_string(), "content": "out of the worktree"}),
        )]),
        text("Tried."),
    ])
    .unwrap();
    let run = run_answering(
        &env,
        &server,
        "write outside",
        &["--mode", "full-auto"],
        |req| json!({"approval_id": req.approval_id, "decision": "approve_once"}),
    );
    let end = &ends(&run)[0];
    assert_eq!(
        end.status,
        ToolCallStatus::Error,
        "{end:?}\n{}",
        run.stderr()
    );
    assert!(!target.exists(), "the server wrote outside the worktree");
    assert_eq!(
        run.code(),
        Some(6),
        "nothing changed: answered\n{}",
        run.stderr()
    );
}

#[test]
fn the_mcp_policy_allows_denies_and_approve_always_writes_the_rule() {
    let env = Env::new();
    write_config(&env, &everything(""));
    std::fs::write(
        env.home.join("policy.toml"),
        "[mcp]\nallow = [\"everything/echo\"]\ndeny = [\"everything/get-env\"]\n",
    )
    .unwrap();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![
            call("c1", "mcp__everything__echo", json!({"message": "unasked"})),
            call("c2", "mcp__everything__get-env", json!({})),
        ]),
        tools(vec![call(
            "c3",
            "mcp__everything__get-sum",
            json!({"a": 1, "b": 2}),
        )]),
        text("Done."),
    ])
    .unwrap();
    let run = run_answering(&env, &server, "use the tools", &[], |req| {
        assert_eq!(
            req.tool, "mcp__everything__get-sum",
            "only the unruled tool asks"
        );
        assert!(
            req.suggestions.contains(&"everything/get-sum".to_string()),
            "{:?}",
            req.suggestions
        );
        json!({"approval_id": req.approval_id, "decision": "approve_always", "rule": "everything/get-sum"})
    });
    let ends = ends(&run);
    assert_eq!(ends.len(), 3, "{}", run.stderr());
    assert_eq!(ends[0].status, ToolCallStatus::Success, "{:?}", ends[0]);
    assert!(ends[0].output.contains("unasked"));
    assert_eq!(ends[1].status, ToolCallStatus::Denied, "{:?}", ends[1]);
    assert!(
        ends[1]
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("everything/get-env"),
        "{:?}",
        ends[1]
    );
    assert_eq!(ends[2].status, ToolCallStatus::Success, "{:?}", ends[2]);
    assert_eq!(asks(&run).len(), 1);
    let policy = std::fs::read_to_string(env.home.join("policy.toml")).unwrap();
    assert!(policy.contains("everything/get-sum"), "{policy}");
}

#[test]
fn mcp_list_shows_each_servers_state_and_tools() {
    let env = Env::new();
    write_config(
        &env,
        &format!(
            "{}\n[mcp_servers.broken]\ncommand = \"sh\"\nargs = [\"-c\", \"echo no such server >&2; exit 7\"]\n\n[mcp_servers.off]\ncommand = \"node\"\nenabled = false\n",
            everything("")
        ),
    );
    std::fs::create_dir_all(env.repo.join(".bosun")).unwrap();
    std::fs::write(
        env.repo.join(".bosun/config.toml"),
        "[mcp_servers.theirs]\ncommand = \"node\"\nargs = [\"x.js\"]\n",
    )
    .unwrap();
    let out = env
        .bosun()
        .args(["mcp", "list", "--json", "--repo", path_str(&env.repo)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a failed server: exit 1");
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let state = |name: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing: {list:#}"))
            .clone()
    };
    let everything = state("everything");
    assert_eq!(everything["state"], "running", "{everything:#}");
    assert!(
        everything["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["model_name"] == "mcp__everything__echo"),
        "{everything:#}"
    );
    let broken = state("broken");
    assert_eq!(broken["state"], "failed");
    let why = broken["error"].as_str().unwrap();
    assert!(
        why.contains("exit code 7") && why.contains("no such server"),
        "{why}"
    );
    assert_eq!(state("off")["state"], "disabled");
    let theirs = state("theirs");
    assert_eq!(theirs["state"], "awaiting_approval");
    assert!(
        theirs["origin"]
            .as_str()
            .unwrap()
            .ends_with(".bosun/config.toml")
    );

    // The text form says the same, a line per server and a line per tool.
    let (ok, text, err) = env.text(&["mcp", "list", "--repo", path_str(&env.repo)]);
    assert!(!ok, "{err}");
    assert!(text.contains("everything  stdio  running"), "{text}");
    assert!(text.contains("  mcp__everything__echo"), "{text}");
    assert!(text.contains("broken  stdio  failed"), "{text}");
    assert!(text.contains("awaiting approval"), "{text}");

    // Nothing configured: says how to add one.
    let empty = Env::new();
    let (ok, text, _) = empty.text(&["mcp", "list", "--repo", path_str(&empty.repo)]);
    assert!(ok);
    assert!(
        text.contains("No MCP servers are configured") && text.contains("bosun mcp import"),
        "{text}"
    );
}
