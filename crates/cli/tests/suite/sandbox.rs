//! Commands run sandboxed: what they may not touch, end to end through `bosun run`.

use super::support::*;
use bosun_testkit::MockModelServer;
use serde_json::json;

fn tool_output(server: &MockModelServer, call_id: &str) -> String {
    let reqs = server.requests();
    reqs.iter()
        .flat_map(messages)
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_else(|| panic!("no result for {call_id}"))
}

#[test]
fn a_command_cannot_read_denied_files_write_outside_or_reach_the_network() {
    if !bosun_exec::probe().is_available() {
        eprintln!("SKIPPED: {}", bosun_exec::probe().describe());
        return;
    }
    let env = Env::new();
    std::fs::create_dir_all(env.repo.join("certs")).unwrap();
    std::fs::write(
        env.repo.join("certs/server.pem"),
        "PEM-CONTENT-THAT-MUST-NOT-LEAK\n",
    )
    .unwrap();
    git(&env.repo, &["add", "certs/server.pem"]);
    git(&env.repo, &["commit", "-qm", "cert"]);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let outside = env.dir.path().join("outside.txt");
    let server = MockModelServer::start_blocking(vec![
        tools(vec![
            call("read", "run_command", json!({"command": "python3 -c \"import sys; sys.stdout.write(open('certs/' + 'server.pem').read())\"; echo read-done"})),
            call("write", "run_command", json!({"command": format!("echo x > {}; echo write-done", outside.display())})),
            call("net", "run_command", json!({"command": format!("timeout 5 bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' && echo CONNECTED || echo no-network")})),
            call("hook", "run_command", json!({"command": "echo evil > \"$(git rev-parse --git-common-dir)/hooks/pre-commit\"; echo hook-done"})),
            call("ok", "run_command", json!({"command": "echo fine > inside.txt && cat inside.txt"})),
        ]),
        text("done"),
    ])
    .unwrap();
    let run = env.run(&server, "probe the sandbox", &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let read = tool_output(&server, "read");
    assert!(!read.contains("PEM-CONTENT-THAT-MUST-NOT-LEAK"), "{read}");
    assert!(!outside.exists(), "a command wrote outside the worktree");
    let net = tool_output(&server, "net");
    assert!(
        net.contains("no-network") && !net.contains("CONNECTED"),
        "{net}"
    );
    assert!(
        !env.repo.join(".git/hooks/pre-commit").exists(),
        "a command planted a git hook"
    );
    assert!(tool_output(&server, "ok").contains("fine"));
    assert!(run.worktree().join("inside.txt").exists());
}
