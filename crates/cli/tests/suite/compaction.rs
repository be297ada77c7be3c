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

/// Replies reading `f0.txt` … whole (400 lines), one a turn, calls `c0` ….
fn reads_whole(n: usize) -> Vec<MockReply> {
    (0..n)
        .map(|i| {
            tools(vec![call(
                &format!("c{i}"),
                "read_file",
                json!({"path": format!("f{i}.txt"), "limit": 400}),
            )])
        })
        .collect()
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
    let mut replies: Vec<MockReply> = reads_whole(24);
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
    // The system prompt is sent whole every time (the map joins it once ready: on a loaded
    // machine, after the first request).
    let system = |r: &bosun_testkit::RecordedRequest| {
        messages(r)[0]["content"].as_str().unwrap().to_string()
    };
    let (first, later) = (system(&sent[0]), system(last));
    assert!(later.starts_with(&first), "{first}\n---\n{later}");
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
            "[What you were told during the session, and what the user pinned, word for word:\n{rule}\n]"
        )),
        "{}",
        users[0]
    );
}

fn pins(run: &Run) -> Vec<&bosun_protocol::ContextPinned> {
    run.events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ContextPinned(p) => Some(p),
            _ => None,
        })
        .collect()
}

#[test]
fn a_pinned_file_is_in_every_request_as_it_is_now_and_never_masked() {
    let env = Env::new();
    files_of(&env, 24, 400);
    std::fs::write(env.repo.join("RULES.md"), "Rule: tabs, never spaces.\n").unwrap();
    git(&env.repo, &["add", "-A"]);
    git(&env.repo, &["commit", "-q", "-m", "rules"]);
    let window = 32_768;
    let mut replies: Vec<MockReply> = reads_whole(24);
    // The agent changes the pinned file midway: the next requests show the new content.
    replies.insert(
        12,
        tools(vec![call(
            "w1",
            "write_file",
            json!({"path": "RULES.md", "content": "Rule: tabs, never spaces. Changed.\n"}),
        )]),
    );
    replies.push(text("Read them all."));
    let server = server(replies, window);
    provider(&env, &server, window);
    let run = env.run_args(&[
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        "Read every file",
        "--provider",
        "mock",
        "--no-checks",
        "--mode",
        "full-auto",
        "--max-steps",
        "200",
        "--pin",
        "./RULES.md",
        "--pin",
        "RULES.md",
        "--pin",
        "docs/../RULES.md",
    ]);
    // It changed a file: completed.
    assert_eq!(
        run.code(),
        Some(0),
        "{}\n{:?}",
        run.stderr(),
        run.finished()
    );
    // One pin, its path as the worktree has it.
    let p = pins(&run);
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(
        p[0].target,
        bosun_protocol::PinTarget::File {
            path: "RULES.md".into()
        }
    );
    assert!(!compactions(&run).is_empty(), "no compaction");
    let sent = server.model_requests();
    for (i, r) in sent.iter().enumerate() {
        let system = messages(r)[0]["content"].as_str().unwrap().to_string();
        assert!(system.contains("## Pinned files"), "request {i}");
        let changed = system.contains("Rule: tabs, never spaces. Changed.");
        // Requests after the write (the 13th call's result) show the new content.
        assert_eq!(changed, i > 12, "request {i}: {system}");
        assert!(r.body.to_string().len() / 4 <= window as usize);
    }
}

#[test]
fn a_pinned_tool_output_is_never_masked() {
    let env = Env::new();
    files_of(&env, 24, 400);
    let window = 32_768;
    let mut replies: Vec<MockReply> = reads_whole(24);
    replies.push(text("Read them all."));
    let server = server(replies, window);
    provider(&env, &server, window);
    // The first output is pinned from the start of a follow-up: a continued task keeps its
    // pins (they are events), and a pin from the app arrives the same way (Op::Pin).
    let first = env.run_args(&[
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        "Read f0",
        "--provider",
        "mock",
        "--no-checks",
        "--max-steps",
        "1",
    ]);
    // max-steps 1: the task stops after its first call ran.
    let id = first.task_id();
    let store = bosun_store::Store::open(&env.home.join("bosun.db")).unwrap();
    let task = bosun_protocol::TaskId(id.clone());
    let seq = store.last_seq(&task).unwrap();
    let pin = bosun_protocol::Event {
        task_id: task.clone(),
        seq: seq + 1,
        ts: bosun_store::now_rfc3339(),
        msg: EventMsg::ContextPinned(bosun_protocol::ContextPinned {
            target: bosun_protocol::PinTarget::Call {
                call_id: "c0".into(),
            },
            pinned: true,
            by: "test".into(),
        }),
    };
    store.append_event(&pin).unwrap();
    drop(store);
    let more = env.run_args(&[
        "continue",
        &id,
        "--prompt",
        "Now read the rest",
        "--json",
        "--provider",
        "mock",
        "--max-steps",
        "200",
    ]);
    assert!(
        !compactions(&more).is_empty(),
        "no compaction: {:?}",
        more.finished()
    );
    let masked: Vec<&String> = compactions(&more)
        .iter()
        .flat_map(|c| c.masked.iter())
        .collect();
    assert!(
        !masked.iter().any(|m| m.as_str() == "read_file f0.txt"),
        "{masked:?}"
    );
    assert!(
        masked.iter().any(|m| m.as_str() == "read_file f1.txt"),
        "{masked:?}"
    );
    let last = server.model_requests().pop().unwrap();
    // Word for word: as c0's result, or (once older turns were summarised) in the first
    // message's pinned section, with the call that made it.
    let kept = messages(&last).into_iter().any(|m| {
        let content = m["content"].as_str().unwrap_or_default();
        let whole = content.contains("line 0 of file 0") && content.contains("line 399 of file 0");
        whole
            && ((m["role"] == "tool" && m["tool_call_id"] == "c0")
                || (m["role"] == "user" && content.contains("(pinned output of read_file")))
    });
    assert!(kept, "the pinned output is not in the last request whole");
}

#[test]
fn a_pin_that_names_no_file_of_the_worktree_is_refused_before_the_task_starts() {
    let env = Env::new();
    files_of(&env, 2, 2);
    let server = server(vec![text("never")], 32_768);
    provider(&env, &server, 32_768);
    for (pin, says) in [
        ("f0.tx", "did you mean f0.txt"),
        ("../outside.txt", "outside the task's worktree"),
        ("/etc/passwd", "outside the task's worktree"),
        (".git/config", ".git"),
        ("", "needs a file path"),
    ] {
        let run = env.run_args(&[
            "run",
            "--json",
            "--repo",
            path_str(&env.repo),
            "--prompt",
            "x",
            "--provider",
            "mock",
            "--no-checks",
            "--pin",
            pin,
        ]);
        assert_eq!(run.code(), Some(2), "{pin}: {}", run.stderr());
        assert!(run.stderr().contains(says), "{pin}: {}", run.stderr());
    }
    assert_eq!(server.remaining(), 1, "no request was sent");
    let (_, tasks, _) = env.text(&["tasks"]);
    assert!(!tasks.contains("x"), "no task was made: {tasks}");
}

#[test]
fn pinned_files_too_big_for_the_window_fail_the_task_naming_what_to_unpin() {
    let env = Env::new();
    // 24 KB: about 6k tokens, in a 4k window.
    files_of(&env, 1, 400);
    let server = server(vec![text("never")], 4_096);
    provider(&env, &server, 4_096);
    let run = env.run_args(&[
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        "Look at f0",
        "--provider",
        "mock",
        "--no-checks",
        "--pin",
        "f0.txt",
    ]);
    assert_eq!(run.code(), Some(1), "{}", run.stderr());
    let (status, summary) = run.finished();
    assert_eq!(status, TaskStatus::Failed);
    assert!(summary.contains("unpin f0.txt (about 5."), "{summary}");
    assert!(summary.contains("--unpin"), "{summary}");
    assert_eq!(server.remaining(), 1, "no request was sent");
    // Unpinning something not pinned says what is; unpinning the file lets the task go on.
    let id = run.task_id();
    let wrong = env.run_args(&[
        "continue",
        &id,
        "--prompt",
        "Go on",
        "--json",
        "--provider",
        "mock",
        "--unpin",
        "f1.txt",
    ]);
    assert_eq!(wrong.code(), Some(2), "{}", wrong.stderr());
    assert!(
        wrong.stderr().contains("pinned: f0.txt"),
        "{}",
        wrong.stderr()
    );
    let more = env.run_args(&[
        "continue",
        &id,
        "--prompt",
        "Go on",
        "--json",
        "--provider",
        "mock",
        "--unpin",
        "./f0.txt",
    ]);
    assert_eq!(
        more.code(),
        Some(6),
        "{}\n{:?}",
        more.stderr(),
        more.finished()
    );
    let p = pins(&more);
    assert_eq!(p.len(), 1);
    assert!(!p[0].pinned);
    assert_eq!(more.finished().1, "never");
    let last = server.model_requests().pop().unwrap();
    assert!(
        !messages(&last)[0]["content"]
            .as_str()
            .unwrap()
            .contains("## Pinned files")
    );
}

/// `[context] review_summaries = true` in the config.
fn review_summaries(env: &Env) {
    let path = env.home.join("config.toml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("\n[context]\nreview_summaries = true\n");
    std::fs::write(path, text).unwrap();
}

/// Replies that make older turns too long to mask away: a summary is needed.
fn wordy_reads(n: usize) -> Vec<MockReply> {
    let thinking = format!(
        "Reading the next file. {}",
        "Notes on the code so far. ".repeat(80)
    );
    let mut replies: Vec<MockReply> = (0..n)
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
    replies
}

/// A task whose older turns need a summary, with `[context] review_summaries = true`: the mock
/// and the `bosun run --json` to answer.
fn summary_task(env: &Env) -> (MockModelServer, std::process::Command) {
    files_of(env, 40, 2);
    let window = 12_000;
    let server = server(wordy_reads(40), window);
    provider(env, &server, window);
    review_summaries(env);
    let mut cmd = env.bosun();
    cmd.args([
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        "Read the 40 files in order",
        "--provider",
        "mock",
        "--no-checks",
        "--max-steps",
        "200",
    ]);
    (server, cmd)
}

#[test]
fn with_review_summaries_the_task_waits_on_the_summary_and_sends_the_edited_one() {
    let env = Env::new();
    let (server, cmd) = summary_task(&env);
    let mut asked = Vec::new();
    let run = answer_while_running(cmd, |req| {
        asked.push(req.clone());
        json!({
            "approval_id": req.approval_id,
            "decision": "approve_once",
            "text": "EDITED SUMMARY: f0 to f20 read; nothing changed.",
        })
    });
    assert_eq!(
        run.code(),
        Some(6),
        "{}\n{:?}",
        run.stderr(),
        run.finished()
    );
    assert!(!asked.is_empty(), "the summary was never shown");
    let req = &asked[0];
    assert_eq!(req.kind, bosun_protocol::ApprovalKind::Summary);
    let bosun_protocol::ToolAction::Summary { text, replaces } = &req.action else {
        panic!("{req:?}")
    };
    assert!(!text.is_empty() && *replaces > 0, "{req:?}");
    // What the model got next is the user's version, and the event says so.
    let c = compactions(&run)
        .into_iter()
        .find(|c| c.summary.is_some())
        .unwrap();
    assert_eq!(
        c.summary.as_deref(),
        Some("EDITED SUMMARY: f0 to f20 read; nothing changed.")
    );
    let last = server.model_requests().pop().unwrap();
    let first = messages(&last)
        .into_iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    assert!(
        first["content"]
            .as_str()
            .unwrap()
            .contains("EDITED SUMMARY: f0 to f20 read; nothing changed."),
        "{first}"
    );
    assert!(run.events.iter().any(|e| matches!(&e.msg,
        EventMsg::ApprovalResolved(r) if r.note.as_deref() == Some("summary edited"))));
}

#[test]
fn a_refused_summary_keeps_the_older_turns() {
    let env = Env::new();
    let (_server, cmd) = summary_task(&env);
    let mut asked = 0;
    let run = answer_while_running(cmd, |req| {
        asked += 1;
        json!({"approval_id": req.approval_id, "decision": "deny"})
    });
    // Asked (again only once the conversation grew); nothing was summarised; with turns too long to keep, the task ends saying so.
    assert!(asked >= 1, "the summary was never shown");
    assert!(
        compactions(&run).iter().all(|c| c.summary.is_none()),
        "{:?}",
        compactions(&run)
    );
    let (status, summary) = run.finished();
    assert_eq!(status, TaskStatus::Failed, "{summary}");
    assert!(summary.contains("context window"), "{summary}");
}

#[test]
fn a_configured_summarizer_writes_the_summary_instead_of_the_tasks_model() {
    let env = Env::new();
    files_of(&env, 40, 2);
    let window = 12_000;
    // The task's model answers every turn; the summaries come from the other server.
    let server = server(wordy_reads(40), window);
    let summarizer = MockModelServer::start_blocking_with(
        (0..10)
            .map(|_| text("- SUMMARY FROM THE SUMMARIZER: files read in order"))
            .collect(),
        MockOptions::default(),
    )
    .unwrap();
    provider(&env, &server, window);
    let path = env.home.join("config.toml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    config.push_str(&format!(
        "\n[providers.small]\napi = \"openai-chat\"\nbase_url = \"{}/v1\"\nmodel = \"summarizer-model\"\n\n[context]\nsummarizer = \"small\"\n",
        summarizer.url()
    ));
    std::fs::write(&path, config).unwrap();
    let run = run(&env, "Read the 40 files in order");
    let c = compactions(&run)
        .into_iter()
        .find(|c| c.summary.is_some())
        .unwrap_or_else(|| panic!("no summary: {:?}", run.finished()));
    assert_eq!(
        c.summary.as_deref(),
        Some("- SUMMARY FROM THE SUMMARIZER: files read in order")
    );
    let asked = summarizer.model_requests();
    assert!(!asked.is_empty());
    assert_eq!(asked[0].body["model"], "summarizer-model");
    // The task's model was never asked for a summary.
    assert!(server.model_requests().iter().all(|r| {
        !r.body
            .to_string()
            .contains("You summarise the earlier part")
    }));
    // Its usage is counted under its own model.
    assert!(run.events.iter().any(|e| matches!(&e.msg,
        EventMsg::Usage(u) if u.model == "summarizer-model")));
}

#[test]
fn a_summarizer_routed_to_another_provider_writes_the_summary_and_context_summarizer_wins() {
    let env = Env::new();
    files_of(&env, 40, 2);
    let window = 12_000;
    let task_model = server(wordy_reads(40), window);
    let summary = |who: &str| {
        MockModelServer::start_blocking_with(
            (0..10)
                .map(|_| text(&format!("- SUMMARY BY {who}: files read in order")))
                .collect(),
            MockOptions::default(),
        )
        .unwrap()
    };
    let routed = summary("THE ROUTED ONE");
    provider(&env, &task_model, window);
    let path = env.home.join("config.toml");
    let base = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        format!(
            "[routing]\nsummarizer = \"small\"\n\n{base}\n[providers.small]\napi = \"openai-chat\"\nbase_url = \"{}/v1\"\nmodel = \"routed-summarizer\"\n",
            routed.url()
        ),
    )
    .unwrap();
    let first = run(&env, "Read the 40 files in order");
    let c = compactions(&first)
        .into_iter()
        .find(|c| c.summary.is_some())
        .unwrap_or_else(|| panic!("no summary: {:?}", first.finished()));
    assert_eq!(
        c.summary.as_deref(),
        Some("- SUMMARY BY THE ROUTED ONE: files read in order")
    );
    let asked = routed.model_requests();
    assert!(!asked.is_empty());
    assert_eq!(asked[0].body["model"], "routed-summarizer");
    assert!(task_model.model_requests().iter().all(|r| {
        !r.body
            .to_string()
            .contains("You summarise the earlier part")
    }));

    // With `[context] summarizer` set as well, that one writes the summaries.
    let env = Env::new();
    files_of(&env, 40, 2);
    let task_model = server(wordy_reads(40), window);
    let routed = summary("THE ROUTED ONE");
    let context = summary("THE CONTEXT ONE");
    provider(&env, &task_model, window);
    let base = std::fs::read_to_string(env.home.join("config.toml")).unwrap();
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "[routing]\nsummarizer = \"small\"\n\n{base}\n[providers.small]\napi = \"openai-chat\"\nbase_url = \"{}/v1\"\nmodel = \"routed-summarizer\"\n\n[providers.ctx]\napi = \"openai-chat\"\nbase_url = \"{}/v1\"\nmodel = \"context-summarizer\"\n\n[context]\nsummarizer = \"ctx\"\n",
            routed.url(),
            context.url()
        ),
    )
    .unwrap();
    let run = run(&env, "Read the 40 files in order");
    let c = compactions(&run)
        .into_iter()
        .find(|c| c.summary.is_some())
        .unwrap_or_else(|| panic!("no summary: {:?}", run.finished()));
    assert_eq!(
        c.summary.as_deref(),
        Some("- SUMMARY BY THE CONTEXT ONE: files read in order")
    );
    assert!(routed.model_requests().is_empty());
    assert_eq!(
        context.model_requests()[0].body["model"],
        "context-summarizer"
    );
}

#[test]
fn a_summarizer_that_names_no_provider_is_a_warning_and_the_tasks_model_summarises() {
    let env = Env::new();
    files_of(&env, 40, 2);
    let window = 12_000;
    let server = server(wordy_reads(40), window);
    provider(&env, &server, window);
    let path = env.home.join("config.toml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    config.push_str("\n[context]\nsummarizer = \"nope\"\n");
    std::fs::write(&path, config).unwrap();
    let run = run(&env, "Read the 40 files in order");
    let warned: Vec<&String> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::Warning(w) if w.code == "summarizer_unavailable" => Some(&w.message),
            _ => None,
        })
        .collect();
    assert_eq!(warned.len(), 1);
    assert!(
        warned[0].contains("no provider named \"nope\""),
        "{warned:?}"
    );
    assert!(compactions(&run).iter().any(|c| c.summary.is_some()));
}
