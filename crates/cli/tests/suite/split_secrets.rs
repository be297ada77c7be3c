//! Secrets that arrive in pieces — a command printing a key in two halves a second apart, a
//! private key in three chunks, the model writing a key across its streamed deltas — are
//! redacted whole: not one piece reaches the journal, `bosun show`, the CLI's stdout or a
//! model request.

use super::support::*;
use bosun_protocol::{Event, EventMsg, OutputStream};
use bosun_testkit::{MockModelServer, MockReply};
use pretty_assertions::assert_eq;
use serde_json::json;

const AWS_HALVES: [&str; 2] = ["AKIAIOSFOD", "NN7EXAMPLE"];
const PEM_BODY: [&str; 3] = [
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
    "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu",
    "NMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEovGhLa0VzMaQ8s+CLOyS56YyCFGeJZ",
];

/// `printf` with every byte as an octal escape, so the command itself never spells the secret.
fn printf(text: &str) -> String {
    let escaped: String = text.bytes().map(|b| format!("\\{b:03o}")).collect();
    format!("printf '{escaped}'")
}

/// The command's streamed output on `stream`, joined.
fn streamed(events: &[Event], stream: OutputStream) -> String {
    events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ToolOutputDelta(d) if d.stream == stream => Some(d.chunk.as_str()),
            _ => None,
        })
        .collect()
}

/// `bosun run` without `--json`: the readable transcript.
fn run_transcript(env: &Env, server: &MockModelServer, prompt: &str) -> String {
    let base = format!("{}/v1", server.url());
    let out = env
        .bosun()
        .args(["run", "--mode", "full-auto", "--repo", path_str(&env.repo)])
        .args([
            "--prompt",
            prompt,
            "--api",
            "openai-chat",
            "--base-url",
            &base,
        ])
        .args(["--model", "mock-model"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every place a secret must not be: the run's stdout (`--json` and the transcript), the
/// journal file, `bosun show` (text and `--json`) and every request the model got.
fn places(
    env: &Env,
    run: &Run,
    transcript: &str,
    server: &MockModelServer,
) -> Vec<(String, String)> {
    let task = run.task_id();
    let lossy = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    let mut places = vec![
        ("run --json".to_string(), lossy(run.output.stdout.clone())),
        ("run".to_string(), transcript.to_string()),
        ("show".to_string(), env.text(&["show", &task]).1),
        (
            "show --json".to_string(),
            env.text(&["show", &task, "--json"]).1,
        ),
        (
            "bosun.db".to_string(),
            lossy(std::fs::read(env.home.join("bosun.db")).unwrap()),
        ),
        (
            "bosun.db-wal".to_string(),
            lossy(std::fs::read(env.home.join("bosun.db-wal")).unwrap_or_default()),
        ),
    ];
    for (i, req) in server.model_requests().iter().enumerate() {
        places.push((format!("model request {}", i + 1), req.body.to_string()));
    }
    places
}

fn assert_nowhere(places: &[(String, String)], pieces: &[&str]) {
    for (place, text) in places {
        for piece in pieces {
            assert!(!text.contains(piece), "{piece:?} reached {place}:\n{text}");
        }
    }
}

/// Runs `reply` then "done", once with `--json` and once as a transcript; `between` sees the
/// first run before the second starts (which may reuse its worktree).
fn run_both(
    env: &Env,
    reply: MockReply,
    prompt: &str,
    between: impl FnOnce(&Run),
) -> (Run, String, Vec<(String, String)>) {
    let server = MockModelServer::start_blocking(vec![reply.clone(), text("done")]).unwrap();
    let run = env.run(&server, prompt, &[]);
    assert!(matches!(run.code(), Some(0 | 6)), "{}", run.stderr());
    between(&run);
    let shown = MockModelServer::start_blocking(vec![reply, text("done")]).unwrap();
    let transcript = run_transcript(env, &shown, prompt);
    let mut all = places(env, &run, &transcript, &server);
    all.extend(shown.model_requests().iter().map(|r| {
        (
            "model request (transcript run)".to_string(),
            r.body.to_string(),
        )
    }));
    (run, transcript, all)
}

#[test]
fn an_aws_key_printed_in_two_halves_a_second_apart_is_redacted_whole() {
    let env = Env::new();
    let command = format!(
        "{}; sleep 1; {}",
        printf(&format!("key: {}", AWS_HALVES[0])),
        printf(&format!("{}\n", AWS_HALVES[1]))
    );
    let reply = tools(vec![call(
        "c",
        "run_command",
        json!({ "command": command }),
    )]);
    let (run, transcript, places) = run_both(&env, reply, "print the key", |_| {});
    assert_eq!(
        streamed(&run.events, OutputStream::Stdout),
        "key: [REDACTED:aws_access_key]\n"
    );
    assert!(
        transcript.contains("key: [REDACTED:aws_access_key]"),
        "{transcript}"
    );
    assert_nowhere(&places, &AWS_HALVES);
    let redacted: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::Redacted(r) if r.place == "journal" => Some(r.kinds.clone()),
            _ => None,
        })
        .collect();
    assert!(
        redacted.contains(&vec!["aws_access_key".to_string()]),
        "{redacted:?}"
    );
}

#[test]
fn a_private_key_printed_in_three_chunks_is_redacted_whole_and_stdout_flows_meanwhile() {
    let env = Env::new();
    let [a, b, c] = PEM_BODY;
    let (c1, c2) = c.split_at(30);
    let chunks = [
        format!("-----BEGIN PRIVATE KEY-----\n{a}\n"),
        format!("{b}\n{c1}"),
        format!("{c2}\n-----END PRIVATE KEY-----\nafter the key\n"),
    ];
    let command = format!(
        "{} >&2; echo working; sleep 0.5; {} >&2; sleep 0.5; {} >&2; echo done",
        printf(&chunks[0]),
        printf(&chunks[1]),
        printf(&chunks[2])
    );
    let reply = tools(vec![call(
        "k",
        "run_command",
        json!({ "command": command }),
    )]);
    let (run, _, places) = run_both(&env, reply, "print the key", |_| {});
    assert_eq!(
        streamed(&run.events, OutputStream::Stderr),
        "[REDACTED:private_key]\nafter the key\n"
    );
    assert_eq!(
        streamed(&run.events, OutputStream::Stdout),
        "working\ndone\n"
    );
    // The stdout line printed while the key was held went out before the key was complete.
    let order: Vec<&str> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ToolOutputDelta(d) => Some(d.chunk.as_str()),
            _ => None,
        })
        .collect();
    let working = order.iter().position(|c| c.contains("working"));
    let key = order
        .iter()
        .position(|c| c.contains("[REDACTED:private_key]"));
    assert!(working < key, "{order:?}");
    let pieces: Vec<&str> = PEM_BODY
        .iter()
        .flat_map(|line| [&line[..20], &line[20..40], &line[40..]])
        .chain([c1, c2])
        .collect();
    assert_nowhere(&places, &pieces);
}

#[test]
fn a_key_the_model_writes_is_redacted_in_the_journal_and_the_history_but_written_to_the_file() {
    let env = Env::new();
    let key = AWS_HALVES.concat();
    let content = format!("aws_access_key_id = {key}\n");
    let reply = MockReply::Reply {
        text: format!("I will store the key {key} in creds.txt.\n"),
        tool_calls: vec![call(
            "w",
            "write_file",
            json!({"path": "creds.txt", "content": content}),
        )],
        usage: usage(100, 20),
        chunk_delay_ms: 0,
        cut_after_events: None,
    };
    // The tool ran with the arguments as the model wrote them.
    let written = |run: &Run| {
        assert_eq!(
            std::fs::read_to_string(run.worktree().join("creds.txt")).unwrap(),
            content
        );
    };
    let (run, _, places) = run_both(&env, reply, "store the key", written);
    assert_nowhere(&places, &[&key, AWS_HALVES[0], AWS_HALVES[1]]);

    let deltas: String = run
        .events
        .iter()
        .take_while(|e| !matches!(e.msg, EventMsg::ToolCallBegin(_)))
        .filter_map(|e| match &e.msg {
            EventMsg::AssistantDelta(d) => Some(d.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        deltas,
        "I will store the key [REDACTED:aws_access_key] in creds.txt.\n"
    );
    let args = run
        .events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::ToolCallBegin(b) => Some(b.args.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        args,
        json!({"path": "creds.txt", "content": "aws_access_key_id = [REDACTED:aws_access_key]\n"})
    );
    // The history sent back carries the redacted text and arguments (and no piece of the key
    // is in any request, above).
    let (_, second) = places.iter().find(|(p, _)| p == "model request 2").unwrap();
    assert!(
        second.contains("I will store the key [REDACTED:aws_access_key]"),
        "{second}"
    );
    assert!(
        second.contains("aws_access_key_id = [REDACTED:aws_access_key]"),
        "{second}"
    );
}
