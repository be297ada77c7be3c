//! A model server that hangs, goes silent or never stops ends the task `failed` within seconds,
//! with `model_timeout` or `response_too_large` naming the provider and the limit, and a
//! journal of bounded size — with the limits of `[providers.NAME]` set small.

use super::support::*;
use bosun_protocol::{EventMsg, TaskStatus};
use bosun_testkit::{MockModelServer, MockReply};
use pretty_assertions::assert_eq;
use std::time::{Duration, Instant};

/// Writes `[providers.slow]` for `server` with 1 s timeouts and a 64 KB response limit.
fn slow_provider(env: &Env, server: &MockModelServer) {
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "[providers.slow]\napi = \"openai-chat\"\nbase_url = \"{}/v1\"\nmodel = \"mock-model\"\n\
             retry_initial_delay_ms = 10\nconnect_timeout_secs = 1\nfirst_byte_timeout_secs = 1\n\
             idle_timeout_secs = 1\nmax_response_bytes = 65536\nmax_output_tokens = 2048\n",
            server.url()
        ),
    )
    .unwrap();
}

/// Runs a task against `slow` and returns it, the time it took, and its error event.
fn run_slow(env: &Env, server: &MockModelServer) -> (Run, Duration, bosun_protocol::ErrorEvent) {
    slow_provider(env, server);
    let started = Instant::now();
    let run = env.run_args(&[
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        "hello",
        "--provider",
        "slow",
    ]);
    let took = started.elapsed();
    assert_eq!(run.code(), Some(1), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Failed);
    let error = run
        .events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::Error(e) => Some(e.clone()),
            _ => None,
        })
        .expect("an error event");
    (run, took, error)
}

/// What the task wrote to the journal, as `bosun show --json` prints it.
fn journal_bytes(env: &Env, run: &Run) -> usize {
    let (ok, out, err) = env.text(&["show", &run.task_id(), "--json"]);
    assert!(ok, "{err}");
    out.len()
}

#[test]
fn a_server_that_never_answers_fails_the_task_after_one_retry() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![MockReply::HangBeforeHeaders; 5]).unwrap();
    let (run, took, error) = run_slow(&env, &server);
    assert_eq!(error.code, "model_timeout");
    assert!(
        error
            .message
            .contains("slow did not begin to answer within 1 s")
            && error.message.contains("first_byte_timeout_secs")
            && error.message.contains("after 2 attempts"),
        "{}",
        error.message
    );
    assert_eq!(
        server.model_requests().len(),
        2,
        "retried once, not four times"
    );
    assert_eq!(server.model_requests()[0].body["max_tokens"], 2048);
    assert!(took < Duration::from_secs(10), "{took:?}");
    let retries = run.kinds().iter().filter(|k| **k == "model_retry").count();
    assert_eq!(retries, 1);
}

#[test]
fn a_stream_that_goes_silent_after_one_chunk_fails_the_task_without_a_retry() {
    let env = Env::new();
    let silent = MockReply::SilentAfterFirstChunk {
        text: "Looking at the code\n".into(),
    };
    let server = MockModelServer::start_blocking(vec![silent; 3]).unwrap();
    let (run, took, error) = run_slow(&env, &server);
    assert_eq!(error.code, "model_timeout");
    assert!(
        error.message.contains("slow sent nothing for 1 s")
            && error.message.contains("idle_timeout_secs"),
        "{}",
        error.message
    );
    assert_eq!(server.model_requests().len(), 1);
    assert!(took < Duration::from_secs(10), "{took:?}");
    // What it did say before going silent is in the journal.
    assert!(run.events.iter().any(
        |e| matches!(&e.msg, EventMsg::AssistantDelta(d) if d.text.contains("Looking at the code"))
    ));
}

#[test]
fn an_endless_stream_fails_the_task_at_max_response_bytes_with_a_bounded_journal() {
    let env = Env::new();
    let endless = MockReply::Endless {
        text: "all work and no play makes Jack a dull boy\n".into(),
        chunk_delay_ms: 0,
    };
    let server = MockModelServer::start_blocking(vec![endless; 3]).unwrap();
    let (run, took, error) = run_slow(&env, &server);
    assert_eq!(error.code, "response_too_large");
    assert!(
        error
            .message
            .contains("the response from slow passed 64 KB (max_response_bytes)"),
        "{}",
        error.message
    );
    assert_eq!(server.model_requests().len(), 1);
    assert!(took < Duration::from_secs(10), "{took:?}");
    let journal = journal_bytes(&env, &run);
    eprintln!(
        "endless stream: {} events, {journal} bytes of journal, {took:?}",
        run.events.len()
    );
    assert!(journal < 512 * 1024, "the journal grew to {journal} bytes");
}
