//! Compaction you can see: a long task against a mock model with a small window never sends a
//! request over it (old tool outputs masked, then older turns summarised), a provider's
//! "context length exceeded" is compacted and retried, and a task whose last turn alone is too
//! big fails saying so.

use super::support::*;
use bosun_protocol::{EventMsg, TaskStatus};
use bosun_testkit::{MockModelServer, MockOptions, MockReply};
use pretty_assertions::assert_eq;
use serde_json::json;

/// A provider with a known window (no probe), pointing at `server`.
fn provider(env: &Env, server: &MockModelServer, window: u64) {
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "[providers.mock]\napi = \"openai-chat\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\nprofile = {{ native_tools = true, tool_format = \"native\", edit_format = \"tools\", context_window = {window} }}\n",
            server.url()
        ),
    )
    .unwrap();
}

fn run(env: &Env, prompt: &str) -> Run {
    env.run_args(&[
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        prompt,
        "--provider",
        "mock",
        "--no-checks",
        "--max-steps",
        "200",
    ])
}

fn server(replies: Vec<MockReply>, window: u64) -> MockModelServer {
    MockModelServer::start_blocking_with(
        replies,
        MockOptions {
            window: Some(window),
            ..MockOptions::default()
        },
    )
    .unwrap()
}

/// Files of `lines` lines (60 bytes each), committed.
fn files_of(env: &Env, n: usize, lines: usize) {
    for i in 0..n {
        let text: String = (0..lines)
            .map(|l| format!("line {l} of file {i}: {}\n", "x".repeat(36)))
            .collect();
        std::fs::write(env.repo.join(format!("f{i}.txt")), text).unwrap();
    }
    git(&env.repo, &["add", "-A"]);
    git(&env.repo, &["commit", "-q", "-m", "big"]);
}

fn compactions(run: &Run) -> Vec<&bosun_protocol::ContextCompacted> {
    run.events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ContextCompacted(c) => Some(c),
            _ => None,
        })
        .collect()
}

#[test]
fn a_long_task_never_sends_a_request_over_the_window_and_says_what_it_masked() {
    let env = Env::new();
    // 24 KB each.
    files_of(&env, 24, 400);
    let window = 32_768;
    let mut replies: Vec<MockReply> = (0..24)
        .map(|i| {
            tools(vec![call(
                &format!("c{i}"),
                "read_file",
                json!({"path": format!("f{i}.txt"), "limit": 400}),
            )])
        })
        .collect();
    replies.push(text("Read them all."));
    let server = server(replies, window);
    provider(&env, &server, window);
    let run = run(&env, "Read every file");
    assert_eq!(
        run.code(),
        Some(6),
        "{}\n{:?}",
        run.stderr(),
        run.finished()
    );
    assert_eq!(run.finished().0, TaskStatus::Answered);
    // Every request fitted (the mock would have answered 400), and the last one came.
    let sent = server.model_requests();
    assert_eq!(sent.len(), 25);
    for r in &sent {
        let tokens = r.body.to_string().len() / 4;
        assert!(tokens <= window as usize, "a request of {tokens} tokens");
    }
    let done = compactions(&run);
    assert!(!done.is_empty(), "no compaction");
    let first = done[0];
    assert_eq!(first.reason, "near_window");
    assert!(first.tokens_after < first.tokens_before, "{first:?}");
    assert_eq!(first.window_tokens, window);
    assert!(
        first.masked.iter().all(|m| m.starts_with("read_file f")),
        "{first:?}"
    );
    // What the model was told instead of an old output, and the newest kept whole.
    let last = &sent[sent.len() - 1];
    let tool_msgs: Vec<String> = messages(last)
        .into_iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert!(
        tool_msgs[0].starts_with("[output masked to save context: read_file f"),
        "{}",
        tool_msgs[0]
    );
    assert!(
        tool_msgs.last().unwrap().contains("line 399 of file"),
        "the newest output is whole"
    );
    // The system prompt is sent whole every time.
    assert_eq!(
        messages(&sent[0])[0]["content"],
        messages(last)[0]["content"]
    );
}

#[test]
fn a_provider_that_says_too_long_gets_a_compacted_request_instead_of_a_failed_task() {
    let env = Env::new();
    // 12 KB each.
    files_of(&env, 6, 200);
    // The window the provider enforces is smaller than the one configured: Bosun finds out
    // from its 400.
    let mut replies: Vec<MockReply> = (0..6)
        .map(|i| {
            tools(vec![call(
                &format!("c{i}"),
                "read_file",
                json!({"path": format!("f{i}.txt")}),
            )])
        })
        .collect();
    replies.push(text("Done reading."));
    let server = server(replies, 20_000);
    provider(&env, &server, 200_000);
    let run = run(&env, "Read the files");
    assert_eq!(
        run.code(),
        Some(6),
        "{:?}\n{:?}",
        run.finished(),
        compactions(&run)
    );
    let done = compactions(&run);
    assert!(
        done.iter().any(|c| c.reason == "provider_said_too_long"),
        "{done:?}"
    );
    assert!(!run.kinds().contains(&"error"), "{:?}", run.kinds());
    assert_eq!(run.finished().1, "Done reading.");
}

#[test]
fn a_last_turn_too_big_for_the_window_fails_naming_why() {
    let env = Env::new();
    // The prompt alone passes the window.
    let prompt = format!("Summarise this: {}", "word ".repeat(12_000));
    let server = server(vec![text("never")], 4_096);
    provider(&env, &server, 4_096);
    let run = run(&env, &prompt);
    assert_eq!(run.code(), Some(1), "{}", run.stderr());
    let (status, summary) = run.finished();
    assert_eq!(status, TaskStatus::Failed);
    assert!(
        summary.contains("cannot be made small enough") || summary.contains("still takes about"),
        "{summary}"
    );
    assert_eq!(
        server.remaining(),
        1,
        "the scripted reply was never asked for"
    );
}

#[test]
fn turns_that_masking_cannot_shrink_are_summarised_into_the_first_message() {
    let env = Env::new();
    files_of(&env, 40, 2);
    // Long replies with short results: nothing to mask, so older turns are summarised (the
    // summary is one more request to the model, answered by the next scripted reply).
    let thinking = format!(
        "Reading the next file. {}",
        "Notes on the code so far. ".repeat(80)
    );
    let mut replies: Vec<MockReply> = (0..40)
        .map(|i| MockReply::Reply {
            text: thinking.clone(),
            tool_calls: vec![call(
                &format!("c{i}"),
                "read_file",
                json!({"path": format!("f{i}.txt")}),
            )],
            usage: usage(100, 20),
            chunk_delay_ms: 0,
            cut_after_events: None,
        })
        .collect();
    replies.push(text("Finished."));
    let window = 12_000;
    let server = server(replies, window);
    provider(&env, &server, window);
    let run = run(&env, "Read the 40 files in order");
    let done = compactions(&run);
    assert!(
        done.iter()
            .any(|c| !c.summarised.is_empty() && c.summary.is_some()),
        "{:?}\n{done:?}",
        run.finished()
    );
    let c = done.iter().find(|c| c.summary.is_some()).unwrap();
    assert!(
        c.summarised
            .iter()
            .any(|l| l.starts_with("assistant: Reading the next file.")),
        "{c:?}"
    );
    assert!(c.tokens_after < c.tokens_before, "{c:?}");
    // The summary sits in the first message, after what the user asked.
    let last = server.model_requests().pop().unwrap();
    let first = messages(&last)
        .into_iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    let first = first["content"].as_str().unwrap();
    assert!(first.starts_with("Read the 40 files in order"), "{first}");
    assert!(
        first.contains("[Summary of the session so far, by Bosun, replacing"),
        "{first}"
    );
    for r in server.model_requests() {
        assert!(r.body.to_string().len() / 4 <= window as usize);
    }
}

#[test]
fn what_the_user_said_during_the_task_survives_a_summary_word_for_word() {
    let env = Env::new();
    files_of(&env, 40, 2);
    let thinking = format!(
        "Reading the next file. {}",
        "Notes on the code so far. ".repeat(80)
    );
    let read = |i: usize| MockReply::Reply {
        text: thinking.clone(),
        tool_calls: vec![call(
            &format!("c{i}"),
            "read_file",
            json!({"path": format!("f{i}.txt")}),
        )],
        usage: usage(100, 20),
        chunk_delay_ms: 0,
        cut_after_events: None,
    };
    // The task, then a follow-up with a rule, then enough turns for a summary.
    let mut replies: Vec<MockReply> = vec![read(0), text("Read f0.")];
    replies.extend((1..40).map(read));
    replies.push(text("Finished."));
    let window = 12_000;
    let server = server(replies, window);
    provider(&env, &server, window);
    let first = run(&env, "Read f0.txt");
    assert_eq!(first.code(), Some(6), "{:?}", first.finished());
    let rule = "Rule from now on: never edit f0.txt, and answer in French.";
    let more = env.run_args(&[
        "continue",
        &first.task_id(),
        "--prompt",
        rule,
        "--json",
        "--provider",
        "mock",
    ]);
    let done = compactions(&more);
    assert!(
        done.iter().any(|c| c.summary.is_some()),
        "{:?}\n{done:?}",
        more.finished()
    );
    let last = server.model_requests().pop().unwrap();
    let users: Vec<String> = messages(&last)
        .into_iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert!(users[0].starts_with("Read f0.txt"), "{users:?}");
    assert!(
        users[0].contains(&format!(
            "[What you were told during the session, word for word:\n{rule}\n]"
        )),
        "{}",
        users[0]
    );
}
