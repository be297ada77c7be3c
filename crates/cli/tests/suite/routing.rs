//! Model roles and fallback: `[routing] main` picks a new task's provider unless `--provider`
//! names one; `[providers.X] fallback` takes over when X fails past its retries, and only then.

use super::support::*;
use bosun_protocol::{EventMsg, ProviderFallback, TaskStatus};
use bosun_testkit::{MockModelServer, MockReply};
use pretty_assertions::assert_eq;
use serde_json::json;

/// `[providers.NAME]` on the mock `server`, with `model`, one retry after 10 ms and a complete
/// profile (no probe), plus `extra` lines.
fn provider(name: &str, server: &MockModelServer, model: &str, extra: &str) -> String {
    format!(
        "[providers.{name}]\napi = \"openai-chat\"\nbase_url = \"{}/v1\"\nmodel = \"{model}\"\n\
         max_retries = 1\nretry_initial_delay_ms = 10\n\
         profile = {{ native_tools = true, tool_format = \"native\", edit_format = \"tools\", context_window = 100000 }}\n{extra}\n",
        server.url()
    )
}

fn write_config(env: &Env, text: &str) {
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(env.home.join("config.toml"), text).unwrap();
}

/// `bosun run --json` with no provider flag (unless `extra` has one).
fn run(env: &Env, prompt: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        prompt,
        "--no-checks",
    ];
    args.extend_from_slice(extra);
    env.run_args(&args)
}

fn fallbacks(run: &Run) -> Vec<ProviderFallback> {
    run.events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ProviderFallback(f) => Some(f.clone()),
            _ => None,
        })
        .collect()
}

fn warnings(run: &Run, code: &str) -> Vec<String> {
    run.events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::Warning(w) if w.code == code => Some(w.message.clone()),
            _ => None,
        })
        .collect()
}

fn unavailable(n: usize) -> Vec<MockReply> {
    (0..n)
        .map(|_| MockReply::status(503, "overloaded, try later"))
        .collect()
}

#[test]
fn routing_main_is_the_provider_of_a_task_started_without_one() {
    let env = Env::new();
    let a = MockModelServer::start_blocking(vec![text("hello from a")]).unwrap();
    let b = MockModelServer::start_blocking(vec![text("hello from b")]).unwrap();
    write_config(
        &env,
        &format!(
            "default_provider = \"b\"\n[routing]\nmain = \"a\"\n\n{}{}",
            provider("a", &a, "model-a", ""),
            provider("b", &b, "model-b", "")
        ),
    );
    let run = run(&env, "say hello", &[]);
    assert_eq!(run.finished().0, TaskStatus::Answered, "{}", run.stderr());
    let asked = a.model_requests();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].body["model"], "model-a");
    assert!(b.model_requests().is_empty(), "default_provider was asked");
    assert!(run.events.iter().any(|e| matches!(&e.msg,
        EventMsg::TaskStarted(t) if t.provider == "a" && t.model == "model-a")));
}

#[test]
fn the_provider_flag_overrides_routing_main() {
    let env = Env::new();
    let a = MockModelServer::start_blocking(vec![text("hello from a")]).unwrap();
    let b = MockModelServer::start_blocking(vec![text("hello from b")]).unwrap();
    write_config(
        &env,
        &format!(
            "[routing]\nmain = \"a\"\n\n{}{}",
            provider("a", &a, "model-a", ""),
            provider("b", &b, "model-b", "")
        ),
    );
    let run = run(&env, "say hello", &["--provider", "b"]);
    assert_eq!(run.finished().0, TaskStatus::Answered, "{}", run.stderr());
    assert!(a.model_requests().is_empty(), "[routing] main was asked");
    let asked = b.model_requests();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].body["model"], "model-b");
}

#[test]
fn a_provider_down_past_its_retries_hands_the_same_request_to_its_fallback() {
    let env = Env::new();
    let a = MockModelServer::start_blocking(unavailable(20)).unwrap();
    let b = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "w1",
            "write_file",
            json!({"path": "from_b.txt", "content": "b\n"}),
        )]),
        text("done"),
    ])
    .unwrap();
    write_config(
        &env,
        &format!(
            "[routing]\nmain = \"a\"\n\n{}{}",
            provider("a", &a, "model-a", "fallback = [\"b\"]"),
            provider("b", &b, "model-b", "")
        ),
    );
    let run = run(&env, "write from_b.txt", &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Completed);
    // a was asked twice (one retry), then b took over for the rest of the task.
    let asked_a = a.model_requests();
    assert_eq!(asked_a.len(), 2);
    let asked_b = b.model_requests();
    assert_eq!(asked_b.len(), 2);
    let taken = fallbacks(&run);
    assert_eq!(taken.len(), 1, "{taken:?}");
    assert_eq!(
        (
            taken[0].from.as_str(),
            taken[0].to.as_str(),
            taken[0].model.as_str()
        ),
        ("a", "b", "model-b")
    );
    assert!(
        taken[0].reason.contains("503") && taken[0].reason.contains("overloaded, try later"),
        "{}",
        taken[0].reason
    );
    // The same conversation, to b's model.
    assert_eq!(messages(&asked_b[0]), messages(&asked_a[1]));
    assert_eq!(asked_b[0].body["tools"], asked_a[1].body["tools"]);
    assert_eq!(asked_b[0].body["model"], "model-b");
    // The journal agrees, and b's work is the task's.
    let shown = parse_events(
        &env.bosun()
            .args(["show", &run.task_id(), "--json"])
            .output()
            .unwrap()
            .stdout,
    );
    assert!(shown.iter().any(|e| matches!(&e.msg,
        EventMsg::ProviderFallback(f) if f.from == "a" && f.to == "b")));
    assert!(run.events.iter().any(|e| matches!(&e.msg,
        EventMsg::Usage(u) if u.model == "model-b")));
    assert_eq!(
        std::fs::read_to_string(run.worktree().join("from_b.txt")).unwrap(),
        "b\n"
    );
}

#[test]
fn an_auth_error_is_the_users_to_fix_and_does_not_fall_back() {
    let env = Env::new();
    let a = MockModelServer::start_blocking(
        (0..5)
            .map(|_| MockReply::status(401, "invalid api key"))
            .collect(),
    )
    .unwrap();
    let b = MockModelServer::start_blocking(vec![text("b should not be asked")]).unwrap();
    write_config(
        &env,
        &format!(
            "{}{}",
            provider("a", &a, "model-a", "fallback = [\"b\"]"),
            provider("b", &b, "model-b", "")
        ),
    );
    let run = run(&env, "say hello", &["--provider", "a"]);
    let (status, summary) = run.finished();
    assert_eq!(status, TaskStatus::Failed);
    assert!(summary.contains("401"), "{summary}");
    assert!(fallbacks(&run).is_empty());
    assert!(b.model_requests().is_empty(), "b was asked after a 401");
}

#[test]
fn fallbacks_are_tried_once_in_order_the_unusable_ones_warned_and_a_fallbacks_own_list_ignored() {
    let env = Env::new();
    let a = MockModelServer::start_blocking(unavailable(20)).unwrap();
    let b = MockModelServer::start_blocking(unavailable(20)).unwrap();
    let c = MockModelServer::start_blocking(vec![text("c answers")]).unwrap();
    write_config(
        &env,
        &format!(
            "{}{}{}{}",
            // "ghost" names no provider; "k" needs a key variable that is not set; "a" is the
            // task's own provider; b's own list (c) is not followed.
            provider(
                "a",
                &a,
                "model-a",
                "fallback = [\"ghost\", \"k\", \"a\", \"b\"]"
            ),
            provider("b", &b, "model-b", "fallback = [\"c\"]"),
            provider(
                "k",
                &c,
                "model-k",
                "api_key_env = \"BOSUN_TEST_UNSET_VARIABLE\""
            ),
            provider("c", &c, "model-c", "")
        ),
    );
    let run = run(&env, "say hello", &["--provider", "a"]);
    let (status, summary) = run.finished();
    assert_eq!(status, TaskStatus::Failed, "{summary}");
    // The task fails with the last provider's error.
    assert!(summary.contains("b returned 503"), "{summary}");
    let taken: Vec<(String, String)> = fallbacks(&run)
        .into_iter()
        .map(|f| (f.from, f.to))
        .collect();
    assert_eq!(taken, vec![("a".to_string(), "b".to_string())]);
    let warned = warnings(&run, "fallback_unavailable");
    assert_eq!(warned.len(), 2, "{warned:?}");
    assert!(
        warned[0].contains("\"ghost\"") && warned[0].contains("known: a, b, c, k"),
        "{warned:?}"
    );
    assert!(
        warned[1].contains("BOSUN_TEST_UNSET_VARIABLE is not set"),
        "{warned:?}"
    );
    assert_eq!(a.model_requests().len(), 2);
    assert_eq!(b.model_requests().len(), 2);
    assert!(
        c.model_requests().is_empty(),
        "b's own fallback was followed"
    );
}

#[test]
fn a_fallbacks_key_variable_never_reaches_a_command() {
    let env = Env::new();
    let a = MockModelServer::start_blocking(unavailable(20)).unwrap();
    let b = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "e",
            "run_command",
            json!({"command": "echo \"seen:${BEE_VAR:-}:\""}),
        )]),
        text("done"),
    ])
    .unwrap();
    write_config(
        &env,
        &format!(
            "{}{}",
            provider("a", &a, "model-a", "fallback = [\"b\"]"),
            // A name that does not look secret: only the fallback's own entry says it is.
            provider("b", &b, "model-b", "api_key_env = \"BEE_VAR\"")
        ),
    );
    let secret = "bee-value-0123456789";
    let mut cmd = env.bosun();
    cmd.env("BEE_VAR", secret).args([
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        "print it",
        "--no-checks",
        "--provider",
        "a",
        "--mode",
        "full-auto",
    ]);
    let out = cmd.output().unwrap();
    let events = parse_events(&out.stdout);
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.msg, EventMsg::ProviderFallback(_))),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let auth = b.model_requests()[0]
        .header("authorization")
        .map(String::from);
    assert_eq!(auth, Some(format!("Bearer {secret}")));
    let result = tool_result(&b, "e");
    assert!(result.contains("seen::"), "{result}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(secret));
}
