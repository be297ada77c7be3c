//! A whole task over the OpenAI Responses API: the model reasons, writes a file, sees the result
//! and answers; its reasoning item goes back on the next request, usage and cost are recorded,
//! and the key stays out of every output and file.

use super::support::*;
use bosun_protocol::{EventMsg, TaskStatus};
use bosun_testkit::{MockModelServer, MockUsage};
use pretty_assertions::assert_eq;
use serde_json::json;

const KEY: &str = "sk-responses-test-secret-4242";

#[test]
fn a_task_runs_end_to_end_over_the_responses_api() {
    let env = Env::new();
    let write = tools(vec![call(
        "call_write_1",
        "write_file",
        json!({"path": "hello.txt", "content": "hello from the responses api\n"}),
    )])
    .with_reasoning("gAAAA-encrypted-reasoning", "Write the file, then report.")
    .with_usage(MockUsage {
        input_tokens: 1_000,
        cached_input_tokens: 200,
        output_tokens: 50,
        reasoning_tokens: 300,
        cache_write_tokens: 0,
    });
    let server = MockModelServer::start_blocking(vec![write, text("Wrote hello.txt.")]).unwrap();
    let base = format!("{}/v1", server.url());
    let run = env.run_args_with_env(
        &[
            "run",
            "--json",
            "--repo",
            path_str(&env.repo),
            "--prompt",
            "write hello.txt",
            "--api",
            "openai-responses",
            "--base-url",
            &base,
            "--model",
            "gpt-5",
            "--api-key-env",
            "RESPONSES_TEST_KEY",
        ],
        &[("RESPONSES_TEST_KEY", KEY)],
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    assert_eq!(
        run.finished(),
        (TaskStatus::Completed, "Wrote hello.txt.".into())
    );
    assert_eq!(
        std::fs::read_to_string(run.worktree().join("hello.txt")).unwrap(),
        "hello from the responses api\n"
    );

    // Both requests went to /v1/responses with the key; the second carried the reasoning item
    // back, then the call and its result.
    let reqs = server.model_requests();
    assert_eq!(reqs.len(), 2);
    for r in &reqs {
        assert_eq!(r.path, "/v1/responses");
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert_eq!(r.body["store"], false);
        assert_eq!(r.body["include"], json!(["reasoning.encrypted_content"]));
        assert!(
            r.body["tools"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["type"] == "function" && t["name"] == "write_file"),
            "{}",
            r.body["tools"]
        );
    }
    let input = reqs[1].body["input"].as_array().unwrap();
    let kinds: Vec<&str> = input.iter().filter_map(|i| i["type"].as_str()).collect();
    let at = |kind: &str| kinds.iter().position(|k| *k == kind).unwrap();
    assert!(
        at("reasoning") < at("function_call") && at("function_call") < at("function_call_output"),
        "{kinds:?}"
    );
    let reasoning = &input[at("reasoning")];
    assert_eq!(reasoning["encrypted_content"], "gAAAA-encrypted-reasoning");
    assert!(reasoning.get("id").is_none(), "{reasoning}");
    assert_eq!(input[at("function_call")]["call_id"], "call_write_1");
    assert_eq!(input[at("function_call_output")]["call_id"], "call_write_1");

    // Usage in disjoint classes, priced: gpt-5 at 1.25 in, 0.125 cached, 10 out and reasoning.
    let usage: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::Usage(u) => Some(u.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(usage.len(), 2);
    let first = &usage[0];
    assert_eq!(
        (
            first.input_tokens,
            first.cached_input_tokens,
            first.output_tokens,
            first.reasoning_tokens
        ),
        (800, 200, 50, 300)
    );
    let expected = (800.0 * 1.25 + 200.0 * 0.125 + 50.0 * 10.0 + 300.0 * 10.0) / 1e6;
    let cost = first.cost_usd.unwrap();
    assert!(first.priced && (cost - expected).abs() < 1e-9, "{first:?}");
    assert!(usage[1].total_cost_usd > cost, "{:?}", usage[1]);

    // A follow-up (`bosun continue`) rebuilds the conversation from the journal: the reasoning
    // item goes back as the live task sent it.
    server.push(text("Still there."));
    let more = env.run_args_with_env(
        &[
            "continue",
            &run.task_id(),
            "--prompt",
            "and the file?",
            "--json",
            "--api",
            "openai-responses",
            "--base-url",
            &base,
            "--model",
            "gpt-5",
            "--api-key-env",
            "RESPONSES_TEST_KEY",
        ],
        &[("RESPONSES_TEST_KEY", KEY)],
    );
    assert_eq!(more.code(), Some(6), "answered: {}", more.stderr());
    let last = server.model_requests().pop().unwrap();
    let input = last.body["input"].as_array().unwrap();
    assert!(
        input
            .iter()
            .any(|i| i["type"] == "reasoning"
                && i["encrypted_content"] == "gAAAA-encrypted-reasoning"),
        "the continued task dropped the reasoning item: {input:?}"
    );

    // The key is in no output and no file Bosun wrote.
    assert!(!String::from_utf8_lossy(&run.output.stdout).contains(KEY));
    assert!(!run.stderr().contains(KEY));
    for entry in walk(&env.home) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(KEY),
            "{} holds the key",
            entry.display()
        );
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn an_unknown_api_names_the_ones_there_are() {
    let env = Env::new();
    let run = env.run_args(&[
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        "x",
        "--api",
        "openai-respones",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "gpt-5",
    ]);
    assert_ne!(run.code(), Some(0));
    let err = run.stderr();
    assert!(err.contains("openai-responses"), "{err}");
}
