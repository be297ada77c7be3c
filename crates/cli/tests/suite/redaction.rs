//! Secrets read by the agent are redacted before the journal and before the model sees them.

use super::support::*;
use bosun_protocol::EventMsg;
use bosun_testkit::MockModelServer;
use pretty_assertions::assert_eq;
use serde_json::json;

#[test]
fn secrets_in_files_and_the_environment_never_reach_the_model_or_the_journal() {
    let env = Env::new();
    let aws = "AKIAIOSFODNN7EXAMPLE";
    let token = "tok-9f8e7d6c5b4a39281706f5e4d3c2b1a0";
    std::fs::write(
        env.repo.join("deploy.txt"),
        format!("aws_access_key_id = {aws}\nservice token: {token}\ncommit 3f2a9c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a291\n"),
    )
    .unwrap();
    git(&env.repo, &["add", "deploy.txt"]);
    git(&env.repo, &["commit", "-qm", "deploy notes"]);
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call("r", "read_file", json!({"path": "deploy.txt"}))]),
        text("read it"),
    ])
    .unwrap();
    let run = env.run_with_env(
        &server,
        "read deploy.txt",
        &[],
        &[("MY_SERVICE_TOKEN", token)],
    );
    // 6: answered, the task changed nothing.
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    let events = &run.events;

    let sent = serde_json::to_string(&server.requests()[1].body).unwrap();
    assert!(
        !sent.contains(aws) && !sent.contains(token),
        "a secret reached the model: {sent}"
    );
    assert!(sent.contains("[REDACTED:aws_access_key]"), "{sent}");
    assert!(sent.contains("[REDACTED:env:MY_SERVICE_TOKEN]"), "{sent}");
    assert!(
        sent.contains("3f2a9c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a291"),
        "a commit hash is not a secret"
    );

    let printed = String::from_utf8_lossy(&run.output.stdout);
    assert!(!printed.contains(aws) && !printed.contains(token));
    let db = std::fs::read(env.home.join("bosun.db")).unwrap();
    let wal = std::fs::read(env.home.join("bosun.db-wal")).unwrap_or_default();
    for bytes in [&db, &wal] {
        assert!(
            !bytes.windows(aws.len()).any(|w| w == aws.as_bytes()),
            "the key is in the journal"
        );
        assert!(!bytes.windows(token.len()).any(|w| w == token.as_bytes()));
    }
    let places: Vec<(String, u32)> = events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::Redacted(r) => Some((r.place.clone(), r.count)),
            _ => None,
        })
        .collect();
    assert!(
        places.iter().any(|(p, c)| p == "model_request" && *c == 2),
        "{places:?}"
    );
    assert!(places.iter().any(|(p, _)| p == "journal"), "{places:?}");
    // The worktree itself still has the real file: redaction is about what leaves it.
    assert_eq!(
        std::fs::read_to_string(
            events
                .iter()
                .find_map(|e| match &e.msg {
                    EventMsg::TaskStarted(t) => Some(std::path::PathBuf::from(&t.worktree)),
                    _ => None,
                })
                .unwrap()
                .join("deploy.txt")
        )
        .unwrap()
        .contains(aws),
        true
    );
}
