//! The MCP servers section's commands without a window: `bosun_app::mcp` as the commands call
//! it, on a real home. Servers that are on are started (the real window's test sees them
//! running); here the switch and the errors are the subject, and a server that is off is never
//! started.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bosun_app::mcp;
use bosun_mcp::ServerState;
use bosun_testkit::fixture_repo;
use pretty_assertions::assert_eq;

const CONFIG: &str = "# mine\n[mcp_servers.gone]\ncommand = \"/nonexistent/mcp-server\"   # moved\n\n[mcp_servers.docs]\nurl = \"http://127.0.0.1:9/mcp\"\nenabled = false\n";

fn home() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), CONFIG).unwrap();
    (dir, home)
}

#[tokio::test]
async fn listing_reports_each_server_and_a_failed_one_says_why() {
    let (_dir, home) = home();
    let reports = mcp::servers(&home, None).await.unwrap();
    let states: Vec<(&str, ServerState)> =
        reports.iter().map(|r| (r.name.as_str(), r.state)).collect();
    assert_eq!(
        states,
        vec![
            ("docs", ServerState::Disabled),
            ("gone", ServerState::Failed)
        ]
    );
    let gone = &reports[1];
    assert_eq!(gone.target, "/nonexistent/mcp-server");
    assert_eq!(gone.origin, "config.toml");
    assert!(
        gone.error.as_deref().is_some_and(|e| e.contains("gone")),
        "{gone:?}"
    );
    // A blank repository is no repository: your global servers.
    assert_eq!(mcp::servers(&home, Some("  ")).await.unwrap().len(), 2);
}

#[tokio::test]
async fn turning_a_server_off_writes_config_toml_and_reports_it_disabled() {
    let (_dir, home) = home();
    let report = mcp::set_enabled(&home, "gone", None, false).await.unwrap();
    assert_eq!(report.name, "gone");
    assert_eq!(report.state, ServerState::Disabled);
    assert_eq!(report.tools, vec![]);
    assert_eq!(
        std::fs::read_to_string(home.join("config.toml")).unwrap(),
        CONFIG.replace("# moved\n", "# moved\nenabled = false\n")
    );
}

#[tokio::test]
async fn bad_input_gets_an_error_that_says_what_to_do() {
    let (dir, home) = home();
    let err = mcp::set_enabled(&home, "evrything", None, false)
        .await
        .unwrap_err();
    assert_eq!(err.code, "config_error");
    assert!(err.message.contains("docs, gone"), "{}", err.message);

    let outside = dir.path().join("plain");
    std::fs::create_dir_all(&outside).unwrap();
    let err = mcp::servers(&home, Some(&outside.display().to_string()))
        .await
        .unwrap_err();
    assert!(err.message.contains("plain"), "{}", err.message);

    // A repository's own server is approved when a task starts, not switched here.
    let repo = fixture_repo(&dir.path().join("repo")).unwrap();
    std::fs::create_dir_all(repo.join(".bosun")).unwrap();
    std::fs::write(
        repo.join(".bosun/config.toml"),
        "[mcp_servers.lint]\ncommand = \"node\"\n",
    )
    .unwrap();
    let shown = repo.display().to_string();
    let listed = mcp::servers(&home, Some(&shown)).await.unwrap();
    let lint = listed.iter().find(|r| r.name == "lint").unwrap();
    assert_eq!(lint.state, ServerState::AwaitingApproval);
    assert!(
        lint.origin.ends_with(".bosun/config.toml"),
        "{}",
        lint.origin
    );
    let err = mcp::set_enabled(&home, "lint", Some(&shown), false)
        .await
        .unwrap_err();
    assert!(err.message.contains("when a task"), "{}", err.message);
    assert_eq!(
        std::fs::read_to_string(home.join("config.toml")).unwrap(),
        CONFIG
    );
}

#[test]
fn importing_from_a_file_previews_then_writes_the_chosen_server() {
    let (dir, home) = home();
    let file = dir.path().join("claude.json");
    std::fs::write(
        &file,
        r#"{"mcpServers": {"everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]}, "gone": {"command": "x"}}}"#,
    )
    .unwrap();
    let from = file.display().to_string();
    let preview = mcp::import(&home, &from, None, None, false).unwrap();
    let seen: Vec<(&str, &str)> = preview
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.target.as_str()))
        .collect();
    assert_eq!(
        seen,
        vec![
            (
                "everything",
                "npx -y @modelcontextprotocol/server-everything"
            ),
            ("gone", "x")
        ]
    );
    assert_eq!(
        std::fs::read_to_string(home.join("config.toml")).unwrap(),
        CONFIG
    );

    let names = vec!["everything".to_string()];
    let done = mcp::import(&home, &from, None, Some(&names), true).unwrap();
    assert_eq!(done.imported, 1);
    let text = std::fs::read_to_string(home.join("config.toml")).unwrap();
    assert!(text.starts_with(CONFIG), "{text}");
    assert!(
        text.contains("[mcp_servers.everything]\ncommand = \"npx\""),
        "{text}"
    );

    let err = mcp::import(&home, "cursor", None, None, false).unwrap_err();
    assert_eq!(err.code, "config_error");
    assert!(
        err.message.contains("`claude`, `codex` or a file"),
        "{}",
        err.message
    );
}
