//! Budgets that stop work, across processes: a request whose reservation would pass a limit is
//! never sent, the 80 % warning, the spend-rate breaker, and an unpriced model under a budget.
//!
//! The provider is `gpt-4o` (2.50 in / 10.00 out per million tokens in the price table) served
//! by the mock with `max_output_tokens = 1000`, so a request reserves its prompt (about a third
//! of its bytes, in tokens, at 2.50 per million: under $0.01 here) plus 1000 × $10 / 1M = $0.01.

use super::support::*;
use bosun_protocol::{ApprovalKind, EventMsg, TaskStatus};
use bosun_testkit::{MockModelServer, MockReply, MockUsage};
use serde_json::json;
use std::process::Stdio;

fn configure(env: &Env, server: &MockModelServer, budgets: &str) {
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "[providers.mock]\napi = \"openai-chat\"\nbase_url = \"{}/v1\"\nmodel = \"gpt-4o\"\nmax_output_tokens = 1000\n\n[budgets]\n{budgets}\n",
            server.url()
        ),
    )
    .unwrap();
}

fn run_args<'a>(env: &'a Env, prompt: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        prompt,
        "--provider",
        "mock",
    ];
    args.extend_from_slice(extra);
    args
}

/// A reply whose usage costs `usd` at gpt-4o's input rate.
fn costing(mut reply: MockReply, usd: f64) -> MockReply {
    if let MockReply::Reply { usage, .. } = &mut reply {
        *usage = MockUsage {
            input_tokens: (usd / 2.5 * 1_000_000.0).round() as u64,
            output_tokens: 0,
            ..Default::default()
        };
    }
    reply
}

fn slow(mut reply: MockReply, ms: u64) -> MockReply {
    if let MockReply::Reply { chunk_delay_ms, .. } = &mut reply {
        *chunk_delay_ms = ms;
    }
    reply
}

fn warnings<'a>(run: &'a Run, code: &str) -> Vec<&'a str> {
    run.events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::Warning(w) if w.code == code => Some(w.message.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn two_processes_share_a_budget_and_the_second_request_is_never_sent() {
    let env = Env::new();
    // The first task's answer streams slowly (dozens of deltas, 150 ms apart), holding its
    // reservation for seconds while the second starts.
    let server = MockModelServer::start_blocking(vec![
        slow(costing(text(&"first done. ".repeat(16)), 0.001), 150),
        text("third done"),
    ])
    .unwrap();
    configure(&env, &server, "daily_usd = 0.019");

    let first = env
        .bosun()
        .args(run_args(&env, "first", &["--mode", "full-auto"]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let waited = std::time::Instant::now();
    while server.model_requests().is_empty() {
        assert!(
            waited.elapsed() < std::time::Duration::from_secs(60),
            "the first task never sent its request"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Two reservations of $0.013 to $0.018 do not fit in $0.019: the second task stops before its
    // request.
    let second = env.run_args(&run_args(&env, "second", &["--mode", "full-auto"]));
    let (status, summary) = second.finished();
    assert_eq!(status, TaskStatus::BudgetExceeded, "{summary}");
    assert_eq!(second.code(), Some(3), "{}", second.stderr());
    assert!(summary.contains("daily budget"), "{summary}");
    assert!(summary.contains("daily_usd"), "{summary}");
    assert!(summary.contains("reserved"), "{summary}");
    assert!(
        second
            .events
            .iter()
            .all(|e| !matches!(e.msg, EventMsg::Usage(_))),
        "the refused task made no request"
    );
    assert_eq!(server.model_requests().len(), 1, "the mock saw one request");

    let out = first.wait_with_output().unwrap();
    let events = parse_events(&out.stdout);
    let finished = events.iter().find_map(|e| match &e.msg {
        EventMsg::TaskFinished(f) => Some(f.status),
        _ => None,
    });
    assert_eq!(finished, Some(TaskStatus::Answered));

    // The first task settled at its real cost ($0.001): a third one fits again.
    let third = env.run_args(&run_args(&env, "third", &["--mode", "full-auto"]));
    assert_eq!(
        third.finished().0,
        TaskStatus::Answered,
        "{}",
        third.stderr()
    );
    assert_eq!(server.model_requests().len(), 2);
}

#[test]
fn a_budget_warns_once_at_80_percent() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        costing(
            tools(vec![call(
                "w",
                "write_file",
                json!({"path": "a.txt", "content": "a\n"}),
            )]),
            0.041,
        ),
        costing(text("done"), 0.001),
    ])
    .unwrap();
    configure(&env, &server, "daily_usd = 0.1");
    let run = env.run_args(&run_args(&env, "spend", &["--mode", "full-auto"]));
    // 0.041 + 0.001 of 0.1 is not 80 %; the reservation of the second request (about $0.018)
    // fits, so it runs.
    assert!(warnings(&run, "budget_80").is_empty(), "{:?}", run.kinds());
    assert_eq!(run.finished().0, TaskStatus::Completed, "{}", run.stderr());

    let server = MockModelServer::start_blocking(vec![
        costing(
            tools(vec![call(
                "w",
                "write_file",
                json!({"path": "b.txt", "content": "b\n"}),
            )]),
            0.04,
        ),
        costing(text("done"), 0.0001),
    ])
    .unwrap();
    configure(&env, &server, "daily_usd = 0.1");
    let run = env.run_args(&run_args(&env, "spend more", &["--mode", "full-auto"]));
    let warned = warnings(&run, "budget_80");
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(warned[0].contains("daily budget"), "{}", warned[0]);
    assert!(warned[0].contains("of $0.1000"), "{}", warned[0]);
}

#[test]
fn the_spend_rate_breaker_stops_a_headless_task_and_asks_when_someone_can_answer() {
    let env = Env::new();
    let pricey = || {
        costing(
            tools(vec![call(
                "w",
                "write_file",
                json!({"path": "a.txt", "content": "a\n"}),
            )]),
            0.02,
        )
    };
    let server = MockModelServer::start_blocking(vec![pricey(), text("unreachable")]).unwrap();
    configure(&env, &server, "max_usd_per_minute = 0.01");
    // Nobody answers (stdin closed): the breaker stops the task before its second request.
    let run = env.run_args(&run_args(&env, "burn", &["--mode", "full-auto"]));
    let (status, summary) = run.finished();
    assert_eq!(status, TaskStatus::BudgetExceeded, "{summary}");
    assert_eq!(run.code(), Some(3));
    assert!(summary.contains("spend-rate breaker"), "{summary}");
    assert!(summary.contains("max_usd_per_minute"), "{summary}");
    let asked: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ApprovalRequested(r) => Some(r.kind),
            _ => None,
        })
        .collect();
    assert_eq!(asked, vec![ApprovalKind::SpendRate]);
    assert_eq!(server.model_requests().len(), 1);

    // The breaker counts every task's spend: a second task within the minute is held before
    // its first request, and --yes (which approves tool calls, never spending) does not let it go.
    let server = MockModelServer::start_blocking(vec![pricey(), text("unreachable")]).unwrap();
    configure(&env, &server, "max_usd_per_minute = 0.01");
    let run = env.run_args(&run_args(&env, "burn", &["--mode", "full-auto", "--yes"]));
    assert_eq!(run.finished().0, TaskStatus::BudgetExceeded);
    assert!(server.model_requests().is_empty());

    // Someone approves: the task goes on, and the minute starts again from each approval (so
    // its own $0.02 trips the breaker once more before its second request).
    let server = MockModelServer::start_blocking(vec![pricey(), text("done")]).unwrap();
    configure(&env, &server, "max_usd_per_minute = 0.01");
    let mut asked = 0;
    let run = answering(&env, "burn", |r| {
        assert_eq!(r.kind, ApprovalKind::SpendRate);
        asked += 1;
        "approve_once"
    });
    assert_eq!(run.finished().0, TaskStatus::Completed, "{}", run.stderr());
    assert_eq!(asked, 2);
    assert_eq!(server.model_requests().len(), 2);
}

#[test]
fn an_unpriced_model_under_a_budget_is_refused_headless_and_asked_otherwise() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![text("hi")]).unwrap();
    configure(&env, &server, "weekly_usd = 5");
    let args = [
        "run",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        "hi",
        "--provider",
        "mock",
        "--model",
        "my-local-model",
        "--mode",
        "full-auto",
    ];
    // No terminal, no --json: nobody can answer.
    let run = env.run_args(&args);
    assert_eq!(run.code(), Some(2), "{}", run.stderr());
    assert!(run.stderr().contains("no price"), "{}", run.stderr());
    assert!(run.stderr().contains("weekly_usd"), "{}", run.stderr());
    assert!(
        run.stderr().contains("bosun prices set"),
        "{}",
        run.stderr()
    );
    assert!(server.model_requests().is_empty());
    let mut yes = args.to_vec();
    yes.push("--yes");
    assert_eq!(env.run_args(&yes).code(), Some(2));

    // Asked once over --json: approved, the request goes out, unpriced.
    let mut asked = 0;
    let run = answering_args(
        &env,
        &run_args(
            &env,
            "hi",
            &["--model", "my-local-model", "--mode", "full-auto"],
        ),
        |r| {
            assert_eq!(r.kind, ApprovalKind::UnpricedModel);
            asked += 1;
            "approve_once"
        },
    );
    assert_eq!(asked, 1);
    assert_eq!(run.finished().0, TaskStatus::Answered, "{}", run.stderr());
    let usage = run
        .events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::Usage(u) => Some(u.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(usage.cost_usd, None);

    // Denied: the task stops before its request, saying how to price the model.
    let server = MockModelServer::start_blocking(vec![text("hi")]).unwrap();
    configure(&env, &server, "weekly_usd = 5");
    let run = answering_args(
        &env,
        &run_args(
            &env,
            "hi",
            &["--model", "my-local-model", "--mode", "full-auto"],
        ),
        |_| "deny",
    );
    let (status, summary) = run.finished();
    assert_eq!(status, TaskStatus::Failed);
    assert!(summary.contains("no price"), "{summary}");
    assert!(server.model_requests().is_empty());
}

#[test]
fn a_repository_budget_holds_only_that_repository() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![text("other repo")]).unwrap();
    let root = std::fs::canonicalize(&env.repo).unwrap();
    configure(&env, &server, "");
    let mut config = std::fs::read_to_string(env.home.join("config.toml")).unwrap();
    config.push_str(&format!(
        "\n[repos.\"{}\".budgets]\ndaily_usd = 0.001\n",
        root.display()
    ));
    std::fs::write(env.home.join("config.toml"), &config).unwrap();
    let run = env.run_args(&run_args(&env, "x", &["--mode", "full-auto"]));
    let (status, summary) = run.finished();
    assert_eq!(status, TaskStatus::BudgetExceeded, "{summary}");
    assert!(
        summary.contains(&format!("daily budget of {}", root.display())),
        "{summary}"
    );
    assert!(server.model_requests().is_empty());

    let other = bosun_testkit::fixture_repo(&env.dir.path().join("other")).unwrap();
    let run = env.run_args(&[
        "run",
        "--json",
        "--repo",
        path_str(&other),
        "--prompt",
        "x",
        "--provider",
        "mock",
        "--mode",
        "full-auto",
    ]);
    assert_eq!(run.finished().0, TaskStatus::Answered, "{}", run.stderr());
}

fn answering(
    env: &Env,
    prompt: &str,
    decide: impl FnMut(&bosun_protocol::ApprovalRequested) -> &'static str,
) -> Run {
    answering_args(
        env,
        &run_args(env, prompt, &["--mode", "full-auto"]),
        decide,
    )
}

/// Runs `bosun ARGS` (with `--json`), answering each approval with `decide`'s decision.
fn answering_args(
    env: &Env,
    args: &[&str],
    mut decide: impl FnMut(&bosun_protocol::ApprovalRequested) -> &'static str,
) -> Run {
    let mut cmd = env.bosun();
    cmd.args(args);
    answer_while_running(
        cmd,
        |req| json!({"approval_id": req.approval_id, "decision": decide(req)}),
    )
}

/// An OpenAI-style stream that says it came from `model`, with `prompt` prompt tokens.
fn raw_reply(model: &str, prompt: &str) -> MockReply {
    let chunk = |rest: &str| {
        format!(
            "data: {{\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"{model}\",{rest}}}\n\n"
        )
    };
    MockReply::RawSse {
        body: [
            chunk(r#""choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":null}]"#),
            chunk(r#""choices":[{"index":0,"delta":{},"finish_reason":"stop"}]"#),
            chunk(&format!(
                r#""choices":[],"usage":{{"prompt_tokens":{prompt},"completion_tokens":0}}"#
            )),
            "data: [DONE]\n\n".to_string(),
        ]
        .concat(),
    }
}

#[test]
fn a_server_naming_a_model_bosun_does_not_know_is_priced_as_the_one_asked_for() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        raw_reply("my-azure-deployment", "1000000"),
        text("unreachable"),
    ])
    .unwrap();
    configure(&env, &server, "daily_usd = 1");
    let run = env.run_args(&run_args(&env, "x", &["--mode", "full-auto"]));
    let usage = run
        .events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::Usage(u) => Some(u.clone()),
            _ => None,
        })
        .unwrap();
    // The response's model is what ran; the price is gpt-4o's, what was asked for: 1M × $2.50.
    assert_eq!(usage.model, "my-azure-deployment");
    assert_eq!(usage.cost_usd, Some(2.5));
    assert_eq!(usage.rates.unwrap().entry, "gpt-4o");
    // So the budget holds: the next task is stopped before its request.
    let run = env.run_args(&run_args(&env, "y", &["--mode", "full-auto"]));
    assert_eq!(run.finished().0, TaskStatus::BudgetExceeded);
    assert_eq!(server.model_requests().len(), 1);
}

#[test]
fn absurd_token_counts_are_clamped_and_said_and_the_journal_goes_on() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        raw_reply("gpt-4o", "18446744073709551615"),
        raw_reply("gpt-4o", "9223372036854775807"),
        text("fine"),
    ])
    .unwrap();
    configure(&env, &server, "");
    for _ in 0..2 {
        let run = env.run_args(&run_args(&env, "x", &["--mode", "full-auto"]));
        assert_eq!(run.finished().0, TaskStatus::Answered, "{}", run.stderr());
        let said = warnings(&run, "usage_clamped");
        assert_eq!(said.len(), 1, "{:?}", run.kinds());
        assert!(said[0].contains("1000000000"), "{}", said[0]);
    }
    // A normal response in the same hour, repository and model is still written.
    let run = env.run_args(&run_args(&env, "x", &["--mode", "full-auto"]));
    assert_eq!(run.finished().0, TaskStatus::Answered, "{}", run.stderr());
    let costs = env.json(&["costs", "--json"]);
    assert!(costs["all"]["cost_usd"].as_f64().unwrap() > 0.0, "{costs}");
}
