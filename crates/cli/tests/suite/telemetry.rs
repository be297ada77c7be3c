//! OpenTelemetry export end to end: `bosun run` against the mock model, exporting to a real
//! OTLP/HTTP receiver (tests/otel/receiver.py, which decodes every request with
//! `opentelemetry-proto` into the protocol's own messages) that the test starts.

use super::support::*;
use bosun_protocol::EventMsg;
use bosun_testkit::{MockModelServer, MockReply, MockUsage};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const PROMPT_MARK: &str = "FROBNICATE-7731";
const FILE_MARK: &str = "GREETING-BODY-4410";

/// The receiver's Python (a venv with pinned opentelemetry-proto), set up once per machine by
/// tests/otel/setup-venv.sh (scripts/setup runs it too); one test at a time creates it.
fn receiver_python() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let lock = std::fs::File::create(std::env::temp_dir().join("bosun-otel-venv.lock")).unwrap();
    lock.lock().unwrap();
    let out = Command::new("bash")
        .arg(root.join("tests/otel/setup-venv.sh"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "tests/otel/setup-venv.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// A running receiver; killed when dropped.
struct Receiver {
    child: Child,
    port: u16,
    out: PathBuf,
}

impl Receiver {
    fn start(dir: &Path) -> Receiver {
        Receiver::start_refusing(dir, 0)
    }

    /// A receiver answering its first `refused` requests with 503 (`Retry-After: 0`).
    fn start_refusing(dir: &Path, refused: u32) -> Receiver {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/otel/receiver.py");
        let out = dir.join(format!("otlp-{}.jsonl", std::process::id()));
        let mut child = Command::new(receiver_python())
            .arg(&script)
            .arg(&out)
            .env("OTLP_RECEIVER_UNAVAILABLE", refused.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .unwrap_or_else(|| panic!("receiver said {line:?}"))
            .parse()
            .unwrap();
        Receiver { child, port, out }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Everything received, one record per line (see receiver.py).
    fn records(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        let records: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let errors: Vec<&Value> = records.iter().filter(|r| r["kind"] == "error").collect();
        assert!(
            errors.is_empty(),
            "the receiver could not decode: {errors:?}"
        );
        records
    }

    fn raw(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn of_kind<'a>(records: &'a [Value], kind: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["kind"] == kind).collect()
}

fn with_usage(reply: MockReply, usage: MockUsage) -> MockReply {
    match reply {
        MockReply::Reply {
            text,
            tool_calls,
            chunk_delay_ms,
            cut_after_events,
            ..
        } => MockReply::Reply {
            text,
            tool_calls,
            usage,
            chunk_delay_ms,
            cut_after_events,
        },
        other => other,
    }
}

/// A write_file call (1000 prompt tokens, 800 of them read from the cache and 100 written to
/// it; 50 out) then an answer (120 in, 10 out), on the Anthropic wire with a priced model.
fn script() -> Vec<MockReply> {
    vec![
        with_usage(
            tools(vec![call(
                "toolu_w1",
                "write_file",
                json!({"path": "greet.txt", "content": format!("{FILE_MARK}\n")}),
            )]),
            MockUsage {
                input_tokens: 1000,
                output_tokens: 50,
                cached_input_tokens: 800,
                cache_write_tokens: 100,
                ..MockUsage::default()
            },
        ),
        text("Wrote greet.txt."),
    ]
}

fn run_task(env: &Env, server: &MockModelServer, prompt: &str, vars: &[(&str, &str)]) -> Run {
    run_task_with(env, server, prompt, &[], vars)
}

/// `bosun run --json` of `prompt` on the Anthropic wire, with `extra` arguments; it must exit 0.
fn run_task_with(
    env: &Env,
    server: &MockModelServer,
    prompt: &str,
    extra: &[&str],
    vars: &[(&str, &str)],
) -> Run {
    let url = server.url();
    let mut args = vec![
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        prompt,
        "--api",
        "anthropic",
        "--base-url",
        &url,
        "--model",
        "claude-sonnet-4-5",
    ];
    args.extend_from_slice(extra);
    let run = env.run_args_with_env(&args, vars);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    run
}

fn write_config(env: &Env, telemetry: &str) {
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(env.home.join("config.toml"), telemetry).unwrap();
}

fn span<'a>(spans: &[&'a Value], name: &str) -> Vec<&'a Value> {
    spans
        .iter()
        .copied()
        .filter(|s| s["name"] == name)
        .collect()
}

fn points<'a>(metrics: &[&'a Value], name: &str) -> Vec<&'a Value> {
    let found: Vec<&Value> = metrics
        .iter()
        .copied()
        .filter(|m| m["name"] == name)
        .collect();
    assert_eq!(found.len(), 1, "metric {name}: {metrics:?}");
    found[0]["points"].as_array().unwrap().iter().collect()
}

#[test]
fn a_tasks_spans_and_metrics_arrive_with_their_names_and_values_and_no_prompt_text() {
    let env = Env::new();
    let receiver = Receiver::start(env.dir.path());
    write_config(
        &env,
        &format!(
            "[telemetry]\notlp_endpoint = \"{}\"\nheaders = {{ \"x-bosun-test\" = \"hdr-value-1\" }}\n",
            receiver.endpoint()
        ),
    );
    let server = MockModelServer::start_blocking(script()).unwrap();
    let run = run_task(
        &env,
        &server,
        &format!("{PROMPT_MARK}: add a greeting file"),
        &[],
    );
    let task = run.task_id();
    let repo = run
        .events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::TaskStarted(s) => Some(s.repo.clone()),
            _ => None,
        })
        .unwrap();
    let cost: f64 = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::Usage(u) => u.cost_usd,
            _ => None,
        })
        .sum();
    assert!(cost > 0.0, "the model is priced");

    let records = receiver.records();
    let requests = of_kind(&records, "request");
    assert!(
        requests
            .iter()
            .all(|r| r["content_type"] == "application/json"
                && r["headers"]["x-bosun-test"] == "hdr-value-1"),
        "{requests:?}"
    );
    let spans = of_kind(&records, "span");
    let mut names: Vec<&str> = spans.iter().map(|s| s["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "chat claude-sonnet-4-5",
            "chat claude-sonnet-4-5",
            "execute_tool write_file",
            "invoke_agent bosun"
        ]
    );

    // The task's span: the root, with Bosun's attributes.
    let root = span(&spans, "invoke_agent bosun")[0];
    assert_eq!(root["parentSpanId"], "");
    let a = &root["attributes"];
    assert_eq!(a["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(a["bosun.task.id"], task.as_str());
    assert_eq!(a["bosun.repository"], repo.as_str());
    assert_eq!(a["bosun.task.outcome"], "completed");
    assert_eq!(a["gen_ai.request.model"], "claude-sonnet-4-5");
    assert_eq!(a["gen_ai.usage.input_tokens"], 1120);
    assert_eq!(a["gen_ai.usage.output_tokens"], 60);
    assert!((a["bosun.cost.usd"].as_f64().unwrap() - cost).abs() < 1e-9);
    assert_eq!(root["resource"]["service.name"], "bosun");

    // Every other span is its child, in its trace.
    for s in &spans {
        assert_eq!(s["traceId"], root["traceId"]);
        if s["name"] != "invoke_agent bosun" {
            assert_eq!(s["parentSpanId"], root["spanId"], "{}", s["name"]);
            assert!(s["start"].as_u64() >= root["start"].as_u64());
            assert!(s["end"].as_u64() <= root["end"].as_u64());
        }
    }

    // The model requests, in order, with the GenAI token attributes.
    let mut chats = span(&spans, "chat claude-sonnet-4-5");
    chats.sort_by_key(|s| s["start"].as_u64());
    let tokens = |s: &Value| {
        let a = &s["attributes"];
        (
            a["gen_ai.operation.name"].clone(),
            a["gen_ai.request.model"].clone(),
            a["gen_ai.usage.input_tokens"].clone(),
            a["gen_ai.usage.output_tokens"].clone(),
            a["gen_ai.usage.cache_read.input_tokens"].clone(),
            a["gen_ai.usage.cache_creation.input_tokens"].clone(),
            a["bosun.task.id"].clone(),
        )
    };
    assert_eq!(
        chats.iter().map(|s| tokens(s)).collect::<Vec<_>>(),
        vec![
            (
                json!("chat"),
                json!("claude-sonnet-4-5"),
                json!(1000),
                json!(50),
                json!(800),
                json!(100),
                json!(task)
            ),
            (
                json!("chat"),
                json!("claude-sonnet-4-5"),
                json!(120),
                json!(10),
                json!(0),
                json!(0),
                json!(task)
            ),
        ]
    );
    assert_eq!(chats[0]["kind_code"], 3, "a model request is a CLIENT span");

    // The tool call: its name, status, duration and the policy's decision (full-auto allows).
    let tool = span(&spans, "execute_tool write_file")[0];
    let t = &tool["attributes"];
    let ended = run.tool_ends()[0];
    assert_eq!(
        (
            &t["gen_ai.operation.name"],
            &t["gen_ai.tool.name"],
            &t["gen_ai.tool.call.id"],
            &t["bosun.tool.status"],
            &t["bosun.tool.duration_ms"],
            &t["bosun.policy.decision"],
        ),
        (
            &json!("execute_tool"),
            &json!("write_file"),
            &json!("toolu_w1"),
            &json!("success"),
            &json!(ended.duration_ms),
            &json!("allow"),
        )
    );
    assert!(t.get("gen_ai.tool.call.arguments").is_none());

    // The metrics: tokens by type, request durations and the cost, as deltas.
    let metrics = of_kind(&records, "metric");
    assert!(metrics.iter().all(|m| m["temporality"] == 1), "{metrics:?}");
    let usage = points(&metrics, "gen_ai.client.token.usage");
    let by_type = |kind: &str| {
        let p = usage
            .iter()
            .find(|p| p["attributes"]["gen_ai.token.type"] == kind)
            .unwrap();
        (p["count"].clone(), p["sum"].clone())
    };
    assert_eq!(by_type("input"), (json!(2), json!(1120.0)));
    assert_eq!(by_type("output"), (json!(2), json!(60.0)));
    assert_eq!(
        usage[0]["attributes"]["gen_ai.request.model"],
        "claude-sonnet-4-5"
    );
    assert_eq!(usage[0]["attributes"]["bosun.repository"], repo.as_str());
    let durations = points(&metrics, "gen_ai.client.operation.duration");
    assert_eq!(durations[0]["count"], 2);
    let spent = points(&metrics, "bosun.cost.usd");
    assert!((spent[0]["value"].as_f64().unwrap() - cost).abs() < 1e-9);

    // No content left the machine: not the prompt, not what the tool wrote.
    let raw = receiver.raw();
    assert!(!raw.contains(PROMPT_MARK), "the prompt was exported");
    assert!(
        !raw.contains(FILE_MARK),
        "the tool's arguments were exported"
    );
}

#[test]
fn with_include_content_the_prompt_and_arguments_are_exported_redacted() {
    let env = Env::new();
    let receiver = Receiver::start(env.dir.path());
    write_config(
        &env,
        &format!(
            "[telemetry]\notlp_endpoint = \"{}\"\ninclude_content = true\n",
            receiver.endpoint()
        ),
    );
    let secret = "AKIAIOSFODNN7EXAMPLE";
    let server = MockModelServer::start_blocking(script()).unwrap();
    run_task(
        &env,
        &server,
        &format!("{PROMPT_MARK}: add a greeting file, key {secret}"),
        &[],
    );
    let records = receiver.records();
    let spans = of_kind(&records, "span");
    let root = span(&spans, "invoke_agent bosun")[0];
    let input: Value = serde_json::from_str(
        root["attributes"]["gen_ai.input.messages"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let prompt = input[0]["parts"][0]["content"].as_str().unwrap();
    assert!(prompt.starts_with(PROMPT_MARK), "{prompt}");
    assert!(prompt.contains("[REDACTED:aws_access_key]"), "{prompt}");
    let tool = span(&spans, "execute_tool write_file")[0];
    let args = tool["attributes"]["gen_ai.tool.call.arguments"]
        .as_str()
        .unwrap();
    assert!(args.contains(FILE_MARK), "{args}");
    // The answer is the output of the request that wrote it.
    let mut chats = span(&spans, "chat claude-sonnet-4-5");
    chats.sort_by_key(|s| s["start"].as_u64());
    let said = chats[1]["attributes"]["gen_ai.output.messages"]
        .as_str()
        .unwrap_or_default();
    assert!(said.contains("Wrote greet.txt."), "{said}");
    assert!(!receiver.raw().contains(secret), "a secret was exported");
}

#[test]
fn otel_exporter_otlp_endpoint_turns_export_on_without_a_config() {
    let env = Env::new();
    let receiver = Receiver::start(env.dir.path());
    let server = MockModelServer::start_blocking(script()).unwrap();
    let endpoint = receiver.endpoint();
    let run = run_task(
        &env,
        &server,
        "add a greeting file",
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("OTEL_SERVICE_NAME", "bosun-ci"),
        ],
    );
    let records = receiver.records();
    let spans = of_kind(&records, "span");
    let root = span(&spans, "invoke_agent bosun")[0];
    assert_eq!(root["attributes"]["bosun.task.id"], run.task_id().as_str());
    assert_eq!(root["resource"]["service.name"], "bosun-ci");
    assert_eq!(of_kind(&records, "metric").len(), 3);
}

#[test]
fn an_unreachable_collector_never_fails_the_task_and_is_said_once() {
    let env = Env::new();
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    write_config(
        &env,
        &format!(
            "[telemetry]\notlp_endpoint = \"http://alice:url-secret-5@127.0.0.1:{port}\"\nheaders = {{ authorization = \"Bearer hdr-secret-9\" }}\n"
        ),
    );
    let server = MockModelServer::start_blocking(script()).unwrap();
    let run = run_task(&env, &server, "add a greeting file", &[]);
    let stderr = run.stderr();
    assert_eq!(
        stderr.matches("OpenTelemetry export:").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("could not connect"), "{stderr}");
    assert!(
        !stderr.contains("hdr-secret-9"),
        "a header value was logged"
    );
    assert!(
        !stderr.contains("url-secret-5") && stderr.contains(&format!("http://127.0.0.1:{port}/")),
        "the endpoint's password was logged: {stderr}"
    );
}

#[test]
fn a_failed_model_request_is_a_chat_span_with_its_error_and_a_signals_own_endpoint_is_used() {
    let env = Env::new();
    let receiver = Receiver::start(env.dir.path());
    let mut replies = vec![MockReply::status(500, "the model server fell over")];
    replies.extend(script());
    let server = MockModelServer::start_blocking(replies).unwrap();
    let endpoint = receiver.endpoint();
    // Traces to their own URL (used whole), metrics to the base endpoint's /v1/metrics.
    let traces = format!("{endpoint}/v1/traces");
    run_task(
        &env,
        &server,
        "add a greeting file",
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", traces.as_str()),
            (
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                &format!("{endpoint}/v1/metrics"),
            ),
        ],
    );
    let records = receiver.records();
    let spans = of_kind(&records, "span");
    let chats = span(&spans, "chat claude-sonnet-4-5");
    assert_eq!(chats.len(), 3, "one failed and two answered: {chats:?}");
    let failed: Vec<&&Value> = chats
        .iter()
        .filter(|s| s["attributes"]["error.type"] == "retry")
        .collect();
    assert_eq!(failed.len(), 1, "{chats:?}");
    assert!(
        failed[0]["status"].to_string().contains("500"),
        "the span says why: {}",
        failed[0]
    );
    let root = span(&spans, "invoke_agent bosun")[0];
    assert_eq!(failed[0]["parentSpanId"], root["spanId"]);
    for chat in &chats {
        // A server on this machine is none of the known providers': Bosun's name for it.
        let a = &chat["attributes"];
        assert!(a["bosun.provider"].is_string(), "{chat}");
        assert_eq!(a["gen_ai.provider.name"], a["bosun.provider"], "{chat}");
        assert_eq!(a["gen_ai.request.model"], "claude-sonnet-4-5");
    }
    assert_eq!(of_kind(&records, "metric").len(), 3);
}

#[test]
fn a_sub_agents_spans_sit_in_its_parents_trace_under_the_parents_span() {
    let env = Env::new();
    let receiver = Receiver::start(env.dir.path());
    write_config(
        &env,
        &format!("[telemetry]\notlp_endpoint = \"{}\"\n", receiver.endpoint()),
    );
    let server = MockModelServer::start_blocking_with(
        vec![
            tools(vec![call(
                "toolu_d1",
                "delegate",
                json!({"brief": "CHILD-SPAN: write notes.txt saying hello", "scope": ["notes.txt"]}),
            )]),
            text("The sub-agent wrote the notes."),
        ],
        bosun_testkit::MockOptions {
            routes: vec![(
                "CHILD-SPAN".to_string(),
                vec![
                    tools(vec![call(
                        "toolu_w1",
                        "write_file",
                        json!({"path": "notes.txt", "content": "hello\n"}),
                    )]),
                    text("Wrote notes.txt."),
                ],
            )]
            .into_iter()
            .collect(),
            ..bosun_testkit::MockOptions::default()
        },
    )
    .unwrap();
    let run = run_task_with(&env, &server, "organise the notes", &["--no-checks"], &[]);
    let parent = run.task_id();
    let child = run
        .events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::SubagentStarted(s) => Some(s.child_task_id.0.clone()),
            _ => None,
        })
        .expect("a sub-agent started");

    let records = receiver.records();
    let spans = of_kind(&records, "span");
    let mut names: Vec<&str> = spans.iter().map(|s| s["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "chat claude-sonnet-4-5",
            "chat claude-sonnet-4-5",
            "chat claude-sonnet-4-5",
            "chat claude-sonnet-4-5",
            "execute_tool delegate",
            "execute_tool write_file",
            "invoke_agent bosun",
            "invoke_agent bosun-worker",
        ]
    );
    let root = span(&spans, "invoke_agent bosun")[0];
    let sub = span(&spans, "invoke_agent bosun-worker")[0];
    assert_eq!(root["parentSpanId"], "");
    assert_eq!(root["attributes"]["bosun.task.id"], parent.as_str());
    // The sub-agent: in the parent's trace, under the parent's span, named as a child.
    assert_eq!(sub["traceId"], root["traceId"]);
    assert_eq!(sub["parentSpanId"], root["spanId"]);
    let a = &sub["attributes"];
    assert_eq!(a["bosun.task.id"], child.as_str());
    assert_eq!(a["bosun.task.parent_id"], parent.as_str());
    assert_eq!(a["bosun.subagent.role"], "worker");
    assert_eq!(a["gen_ai.agent.name"], "bosun-worker");
    assert_eq!(a["bosun.task.outcome"], "completed");
    assert_eq!(a["bosun.model_requests"], 2);
    // Each span hangs under the task that made it: the child's requests and its write under
    // the child's span, the parent's under the parent's.
    for s in &spans {
        assert_eq!(s["traceId"], root["traceId"], "{}", s["name"]);
        let owner = s["attributes"]["bosun.task.id"].as_str().unwrap();
        if s["name"].as_str().unwrap().starts_with("invoke_agent") {
            continue;
        }
        let under = if owner == child { sub } else { root };
        assert_eq!(
            s["parentSpanId"], under["spanId"],
            "{} of {owner}",
            s["name"]
        );
    }
    let write = span(&spans, "execute_tool write_file")[0];
    assert_eq!(write["attributes"]["bosun.task.id"], child.as_str());
    let delegate = span(&spans, "execute_tool delegate")[0];
    assert_eq!(delegate["attributes"]["bosun.task.id"], parent.as_str());
    // The child's requests are in the token metrics too: four requests in all.
    let metrics = of_kind(&records, "metric");
    let requests: u64 = metrics
        .iter()
        .filter(|m| m["name"] == "gen_ai.client.operation.duration")
        .flat_map(|m| m["points"].as_array().unwrap())
        .map(|p| p["count"].as_u64().unwrap())
        .sum();
    assert_eq!(requests, 4, "{metrics:?}");
}

#[test]
fn an_overloaded_collector_is_tried_again_and_nothing_is_lost() {
    let env = Env::new();
    // Two 503s: the first export request gets through on its third try.
    let receiver = Receiver::start_refusing(env.dir.path(), 2);
    write_config(
        &env,
        &format!("[telemetry]\notlp_endpoint = \"{}\"\n", receiver.endpoint()),
    );
    let server = MockModelServer::start_blocking(script()).unwrap();
    let run = run_task(&env, &server, "add a greeting file", &[]);
    let records = receiver.records();
    assert_eq!(of_kind(&records, "refused").len(), 2, "{records:?}");
    let spans = of_kind(&records, "span");
    assert_eq!(spans.len(), 4, "every span arrived: {spans:?}");
    assert_eq!(span(&spans, "invoke_agent bosun").len(), 1);
    assert!(!of_kind(&records, "metric").is_empty());
    assert!(
        !run.stderr().contains("OpenTelemetry export"),
        "a retried export was reported lost: {}",
        run.stderr()
    );
}

#[test]
fn a_follow_ups_invoke_agent_span_has_its_own_cost_and_the_tasks_repository() {
    let env = Env::new();
    let receiver = Receiver::start(env.dir.path());
    write_config(
        &env,
        &format!("[telemetry]\notlp_endpoint = \"{}\"\n", receiver.endpoint()),
    );
    let mut replies = script();
    replies.push(with_usage(
        text("It greets."),
        MockUsage {
            input_tokens: 2000,
            output_tokens: 10,
            ..MockUsage::default()
        },
    ));
    let server = MockModelServer::start_blocking(replies).unwrap();
    let run = run_task(&env, &server, "add a greeting file", &[]);
    let task = run.task_id();
    let out = env
        .bosun()
        .args(["continue", &task, "--prompt", "what does it say?", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(6),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let follow_up: f64 = parse_events(&out.stdout)
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::Usage(u) => u.cost_usd,
            _ => None,
        })
        .sum();
    // 2000 × $3 + 10 × $15 per million.
    assert!((follow_up - 0.00615).abs() < 1e-9, "{follow_up}");

    let records = receiver.records();
    let spans = of_kind(&records, "span");
    let agents = span(&spans, "invoke_agent bosun");
    assert_eq!(agents.len(), 2, "{agents:?}");
    let second = agents
        .iter()
        .find(|s| s["attributes"]["bosun.task.resumed"] == "follow_up")
        .unwrap();
    let a = &second["attributes"];
    assert!(
        (a["bosun.cost.usd"].as_f64().unwrap() - follow_up).abs() < 1e-9,
        "the follow-up's own spend, not the task's: {second}"
    );
    assert_eq!(
        a["bosun.repository"],
        agents[0]["attributes"]["bosun.repository"]
    );
    assert!(a["bosun.repository"].is_string(), "{second}");
    let chat = span(&spans, "chat claude-sonnet-4-5")
        .into_iter()
        .find(|s| s["parentSpanId"] == second["spanId"])
        .unwrap();
    assert!(
        chat["attributes"]["gen_ai.provider.name"].is_string(),
        "{chat}"
    );
    assert_eq!(
        chat["attributes"]["gen_ai.request.model"],
        "claude-sonnet-4-5"
    );
}
