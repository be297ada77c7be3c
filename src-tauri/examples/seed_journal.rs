//! Fills `$BOSUN_HOME/bosun.db` with sample tasks for looking at the app without a model:
//! a finished task with coloured command output, checkpoints and a plan; a failed one; and, with
//! `--live`, a task that keeps appending events (one every 300 ms) while the app follows it; with
//! `--big`, a task whose command printed 100k lines. With `--costs`, instead: the cost journal the
//! Costs view's end-to-end test reads (see [`costs`]), and one line `costs <json>` naming every
//! model response it wrote (task, repository, model, time, tokens by class, cost) so the test can
//! work out the figures the view must show.
//!
//! `BOSUN_HOME=/tmp/bosun-demo cargo run -p bosun-app --example seed_journal -- --live`

use anyhow::{Context, Result};
use bosun_protocol::*;
use bosun_store::{NewTask, Store};
use serde_json::json;
use std::time::Duration;

struct Writer<'a> {
    store: &'a Store,
    task: TaskId,
    seq: u64,
    pace: Duration,
    /// The events' time (RFC 3339), when not now.
    at: Option<String>,
}

impl Writer<'_> {
    fn emit(&mut self, msg: EventMsg) -> Result<()> {
        self.seq += 1;
        let ev = Event {
            seq: self.seq,
            task_id: self.task.clone(),
            ts: self.at.clone().unwrap_or_else(bosun_store::now_rfc3339),
            msg,
        };
        self.store
            .append_event(&ev)
            .with_context(|| format!("while appending event {}", self.seq))?;
        std::thread::sleep(self.pace);
        Ok(())
    }

    fn tool(
        &mut self,
        id: &str,
        tool: &str,
        args: serde_json::Value,
        out: &[&str],
        status: ToolCallStatus,
        ms: u64,
    ) -> Result<()> {
        self.emit(EventMsg::ToolCallBegin(ToolCallBegin {
            call_id: CallId::from(id),
            tool: tool.into(),
            args,
            recovered: false,
        }))?;
        for chunk in out {
            self.emit(EventMsg::ToolOutputDelta(ToolOutputDelta {
                call_id: CallId::from(id),
                stream: OutputStream::Stdout,
                chunk: (*chunk).into(),
            }))?;
        }
        self.emit(EventMsg::ToolCallEnd(ToolCallEnd {
            call_id: CallId::from(id),
            status,
            exit_code: Some(if status == ToolCallStatus::Success {
                0
            } else {
                101
            }),
            error: None,
            output: out.concat(),
            duration_ms: ms,
        }))
    }

    fn usage(&mut self, input: u64, output: u64, cost: f64, total: f64) -> Result<()> {
        self.usage_of("claude-sonnet-4-5", input, output, cost, total)
    }

    fn usage_of(
        &mut self,
        model: &str,
        input: u64,
        output: u64,
        cost: f64,
        total: f64,
    ) -> Result<()> {
        self.emit(EventMsg::Usage(UsageEvent {
            model: model.into(),
            input_tokens: input,
            output_tokens: output,
            cached_input_tokens: input / 2,
            cache_write_tokens: 0,
            cache_write_1h_tokens: 0,
            reasoning_tokens: 0,
            cost_usd: Some(cost),
            total_cost_usd: total,
            priced: true,
            rates: None,
            latency_ms: Some(1200),
            reasoning: Vec::new(),
        }))
    }
}

fn start<'a>(
    store: &'a Store,
    id: &str,
    repo: &str,
    prompt: &str,
    pace: Duration,
) -> Result<Writer<'a>> {
    start_as(store, id, repo, prompt, pace, None)
}

/// A sub-agent's place: its parent, role, depth and model.
struct Lineage<'a> {
    parent: &'a TaskId,
    role: &'a str,
    depth: u32,
    model: &'a str,
}

fn start_as<'a>(
    store: &'a Store,
    id: &str,
    repo: &str,
    prompt: &str,
    pace: Duration,
    lineage: Option<Lineage<'_>>,
) -> Result<Writer<'a>> {
    let task = TaskId::from(id);
    let model = lineage.as_ref().map_or("claude-sonnet-4-5", |l| l.model);
    store.create_task(&NewTask {
        id: task.clone(),
        repo: repo.into(),
        prompt: prompt.into(),
        base_commit: "4f1c2a9e0b7d".into(),
        branch: format!("bosun/{id}"),
        worktree: format!("/tmp/bosun-demo/worktrees/{id}"),
        provider: "anthropic".into(),
        model: model.into(),
        created_at: bosun_store::now_rfc3339(),
        owner_pid: std::process::id(),
        owner_started: bosun_store::process_start_time(std::process::id()),
        max_steps: 50,
        max_cost_usd: Some(2.0),
        parent_task_id: lineage.as_ref().map(|l| l.parent.clone()),
        role: lineage.as_ref().map(|l| l.role.to_string()),
        depth: lineage.as_ref().map_or(0, |l| l.depth),
    })?;
    let mut w = Writer {
        store,
        task,
        seq: 0,
        pace,
        at: None,
    };
    w.emit(EventMsg::TaskStarted(TaskStarted {
        repo: repo.into(),
        base_commit: "4f1c2a9e0b7d".into(),
        base_ref: Some("main".into()),
        branch: format!("bosun/{id}"),
        worktree: format!("/tmp/bosun-demo/worktrees/{id}"),
        prompt: prompt.into(),
        provider: "anthropic".into(),
        model: model.into(),
        api: "anthropic".into(),
        base_url: "https://api.anthropic.com".into(),
        api_key_env: Some("ANTHROPIC_API_KEY".into()),
        mode: None,
        max_cost_usd: None,
        forked_from: None,
        profile: None,
    }))?;
    w.emit(EventMsg::UserMessage(UserMessage {
        text: prompt.into(),
        origin: None,
    }))?;
    Ok(w)
}

fn story(w: &mut Writer<'_>, finish: TaskStatus) -> Result<()> {
    for piece in [
        "I'll look at the failing test ",
        "first, then fix the parser ",
        "and run the suite again.",
    ] {
        w.emit(EventMsg::AssistantDelta(AssistantDelta {
            text: piece.into(),
        }))?;
    }
    w.emit(EventMsg::AssistantMessage(AssistantMessage {
        text: "I'll look at the failing test first, then fix the parser and run the suite again."
            .into(),
    }))?;
    w.emit(EventMsg::PlanUpdated(PlanUpdated {
        items: vec![
            PlanItem::step("Reproduce the failure", PlanStatus::Completed),
            PlanItem::step("Fix quoted keys in the parser", PlanStatus::InProgress),
            PlanItem::step("Run the whole suite", PlanStatus::Pending),
        ],
    }))?;
    w.usage(14_200, 310, 0.0472, 0.0472)?;
    w.tool(
        "toolu_01",
        "read_file",
        json!({"path": "src/parser.rs", "offset": 120, "limit": 60}),
        &[
            "fn parse_key(input: &str) -> Result<Key> {\n",
            "    // …\n",
            "}\n",
        ],
        ToolCallStatus::Success,
        4,
    )?;
    w.tool(
        "toolu_02",
        "run_command",
        json!({"command": "cargo test -p config parser::"}),
        &[
            "\u{1b}[1m\u{1b}[32m   Compiling\u{1b}[0m config v0.3.1 (/work/config)\n",
            "\u{1b}[1m\u{1b}[32m    Finished\u{1b}[0m `test` profile [unoptimized + debuginfo] target(s) in 2.41s\n",
            "\u{1b}[1m\u{1b}[32m     Running\u{1b}[0m unittests src/lib.rs\n\nrunning 3 tests\n",
            "test parser::tests::bare_keys ... \u{1b}[32mok\u{1b}[0m\n",
            "test parser::tests::quoted_keys ... \u{1b}[31mFAILED\u{1b}[0m\n",
            "test parser::tests::dotted_keys ... \u{1b}[32mok\u{1b}[0m\n\nfailures:\n\n---- parser::tests::quoted_keys stdout ----\n",
            "thread 'parser::tests::quoted_keys' panicked at src/parser.rs:214:9:\nassertion `left == right` failed\n  left: Key(\"a.b\")\n right: Key(\"\\\"a.b\\\"\")\n",
            "\ntest result: \u{1b}[31mFAILED\u{1b}[0m. 2 passed; 1 failed; 0 ignored\n",
        ],
        ToolCallStatus::Error,
        2870,
    )?;
    w.tool(
        "toolu_03",
        "edit_file",
        json!({"path": "src/parser.rs", "old_string": "let key = raw;", "new_string": "let key = unquote(raw)?;"}),
        &["Edited src/parser.rs (1 replacement)\n"],
        ToolCallStatus::Success,
        9,
    )?;
    w.emit(EventMsg::CheckpointCreated(CheckpointCreated {
        checkpoint: 1,
        commit: "9c0e4b1d7a5f3e2c1b0a9f8e7d6c5b4a3f2e1d0c".into(),
        files: vec!["src/parser.rs".into()],
        call_id: Some(CallId::from("toolu_03")),
    }))?;
    w.usage(16_900, 220, 0.0211, 0.0683)?;
    // 400 lines of output in chunks of 50, as a command streams them.
    let long: Vec<String> = (0..8)
        .map(|c| {
            (c * 50..(c + 1) * 50)
                .map(|i| format!("test suite::case_{i:03} ... \u{1b}[32mok\u{1b}[0m\n"))
                .collect()
        })
        .collect();
    let long: Vec<&str> = long.iter().map(String::as_str).collect();
    w.tool(
        "toolu_04",
        "run_command",
        json!({"command": "cargo test -p config"}),
        &long,
        ToolCallStatus::Success,
        5120,
    )?;
    w.emit(EventMsg::AssistantMessage(AssistantMessage {
        text: "Quoted keys are now unquoted before they are split on dots; all 403 tests pass."
            .into(),
    }))?;
    w.usage(18_300, 95, 0.0098, 0.0781)?;
    w.emit(EventMsg::TaskFinished(TaskFinished {
        status: finish,
        summary: "Quoted keys are now unquoted before they are split on dots; all 403 tests pass."
            .into(),
        checks: Vec::new(),
    }))
}

fn main() -> Result<()> {
    let live = std::env::args().any(|a| a == "--live");
    let big = std::env::args().any(|a| a == "--big");
    let store = Store::open(&bosun_store::journal_path()).context("while opening the journal")?;
    if std::env::args().any(|a| a == "--costs") {
        let written = costs::seed(&store)?;
        println!("costs {}", serde_json::to_string(&written)?);
        println!("seeded {}", store.path().display());
        return Ok(());
    }
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    let quick = Duration::ZERO;

    let mut failed = start(
        &store,
        &format!("01demo{stamp}a"),
        "/home/dev/src/billing",
        "Add retries with jitter to the webhook sender",
        quick,
    )?;
    failed.emit(EventMsg::AssistantMessage(AssistantMessage {
        text: "Let me find the webhook sender.".into(),
    }))?;
    failed.tool(
        "toolu_a1",
        "search",
        json!({"pattern": "fn send_webhook", "path": "src"}),
        &["src/webhooks/send.rs:42: pub async fn send_webhook(\n"],
        ToolCallStatus::Success,
        31,
    )?;
    failed.emit(EventMsg::Error(ErrorEvent {
        code: "rate_limited".into(),
        message: "The provider kept answering 429 after 5 attempts.".into(),
    }))?;
    failed.emit(EventMsg::TaskFinished(TaskFinished {
        status: TaskStatus::Failed,
        summary: "The model provider rate-limited every retry.".into(),
        checks: Vec::new(),
    }))?;

    let mut done = start(
        &store,
        &format!("01demo{stamp}b"),
        "/home/dev/src/config",
        "Fix the parser so quoted keys with dots work",
        quick,
    )?;
    story(&mut done, TaskStatus::Completed)?;

    if big {
        // 100k lines of coloured output in 1000-line chunks: the app must stay responsive.
        let mut w = start(
            &store,
            &format!("01demo{stamp}d"),
            "/home/dev/src/monorepo",
            "Run the whole test suite and summarize failures",
            quick,
        )?;
        let chunks: Vec<String> = (0..100)
            .map(|c| {
                (c * 1000..(c + 1) * 1000)
                    .map(|i| format!("\u{1b}[2m{i:06}\u{1b}[0m test module_{}::case_{i} ... \u{1b}[32mok\u{1b}[0m\n", i % 97))
                    .collect()
            })
            .collect();
        let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
        w.tool(
            "toolu_big",
            "run_command",
            json!({"command": "cargo test --workspace"}),
            &chunks,
            ToolCallStatus::Success,
            93_000,
        )?;
        w.emit(EventMsg::TaskFinished(TaskFinished {
            status: TaskStatus::Completed,
            summary: "100000 tests passed.".into(),
            checks: Vec::new(),
        }))?;
    }
    subagents::seed(
        &store,
        &format!("01demo{stamp}s"),
        if live {
            Duration::from_millis(400)
        } else {
            quick
        },
    )?;

    if live {
        let mut running = start(
            &store,
            &format!("01demo{stamp}c"),
            "/home/dev/src/config",
            "Make `config get` print nested tables as TOML",
            Duration::from_millis(300),
        )?;
        story(&mut running, TaskStatus::Completed)?;
    }
    println!("seeded {}", store.path().display());
    Ok(())
}

/// A task that delegated: two parallel children (one merged with its checks passing, one whose
/// merge conflicted), then a child on the parent's state with a child of its own (depth 2).
mod subagents {
    use super::*;

    const REPO: &str = "/home/dev/src/config";

    fn check(name: &str) -> CheckFinished {
        CheckFinished {
            check_id: format!("k-{name}"),
            name: name.into(),
            status: CheckStatus::Passed,
            exit_code: Some(0),
            duration_ms: 2400,
            summary: "passed".into(),
            failures: Vec::new(),
            required: true,
            scope: CheckScope::Full,
            only_before_task: false,
        }
    }

    fn started(
        child: &TaskId,
        brief: &str,
        role: &str,
        model: &str,
        parallel: bool,
        depth: u32,
        call: &str,
    ) -> EventMsg {
        EventMsg::SubagentStarted(SubagentStarted {
            child_task_id: child.clone(),
            brief: brief.into(),
            scope: Vec::new(),
            role: role.into(),
            provider: "anthropic".into(),
            model: model.into(),
            call_id: Some(CallId::from(call)),
            plan_node: None,
            parallel,
            depth,
            max_steps: 20,
            max_cost_usd: Some(0.5),
            max_tokens: 200_000,
            max_wall_secs: 900,
        })
    }

    fn progress(
        child: &TaskId,
        steps: u32,
        tokens: u64,
        cost: f64,
        files: &[&str],
        activity: &str,
    ) -> EventMsg {
        EventMsg::SubagentProgress(SubagentProgress {
            child_task_id: child.clone(),
            steps,
            tokens,
            cost_usd: cost,
            tool_calls: steps.saturating_sub(1),
            files: files.iter().map(|f| f.to_string()).collect(),
            activity: activity.into(),
        })
    }

    /// A child's own run: its brief, one model turn, a file written, its answer.
    fn run_child(
        w: &mut Writer<'_>,
        model: &str,
        call: &str,
        path: &str,
        answer: &str,
    ) -> Result<()> {
        w.usage_of(model, 6_400, 180, 0.0071, 0.0071)?;
        w.tool(
            call,
            "write_file",
            json!({"path": path, "content": "…"}),
            &[&format!("Wrote {path}\n")],
            ToolCallStatus::Success,
            3,
        )?;
        w.emit(EventMsg::CheckpointCreated(CheckpointCreated {
            checkpoint: 1,
            commit: "5b1e0c7d9a3f2e4c6b8a0d1f3e5c7b9a1d3f5e7c".into(),
            files: vec![path.into()],
            call_id: Some(CallId::from(call)),
        }))?;
        w.usage_of(model, 7_100, 60, 0.0052, 0.0123)?;
        w.emit(EventMsg::AssistantMessage(AssistantMessage {
            text: answer.into(),
        }))
    }

    fn finish(w: &mut Writer<'_>, status: TaskStatus, summary: &str) -> Result<()> {
        w.emit(EventMsg::TaskFinished(TaskFinished {
            status,
            summary: summary.into(),
            checks: Vec::new(),
        }))
    }

    pub fn seed(store: &Store, id: &str, pace: Duration) -> Result<()> {
        let mut p = start(
            store,
            id,
            REPO,
            "Quoted keys: fix the dotted-key split, add tests and document them",
            pace,
        )?;
        let parent = p.task.clone();
        let child = |n: u8| TaskId::from(format!("{id}{n}").as_str());
        let (c1, c2, c3, g1) = (child(1), child(2), child(3), child(4));
        p.emit(EventMsg::AssistantMessage(AssistantMessage {
            text: "The tests and the docs are independent: two sub-agents in parallel, then the parser fix.".into(),
        }))?;
        let node = |id: &str,
                    step: &str,
                    status: PlanStatus,
                    deps: &[&str],
                    role: Option<&str>,
                    child: &TaskId| PlanItem {
            id: Some(id.into()),
            depends_on: deps.iter().map(|d| d.to_string()).collect(),
            role: role.map(String::from),
            child_task_id: Some(child.clone()),
            ..PlanItem::step(step, status)
        };
        p.emit(EventMsg::PlanUpdated(PlanUpdated {
            items: vec![
                node(
                    "tests",
                    "Add tests for quoted keys",
                    PlanStatus::InProgress,
                    &[],
                    None,
                    &c1,
                ),
                node(
                    "docs",
                    "Document quoted keys",
                    PlanStatus::InProgress,
                    &[],
                    None,
                    &c2,
                ),
                node(
                    "parser",
                    "Fix the dotted-key split",
                    PlanStatus::Pending,
                    &["tests"],
                    Some("escalation"),
                    &c3,
                ),
            ],
        }))?;
        p.usage(12_800, 420, 0.0440, 0.0440)?;

        let worker = "claude-haiku-4-5";
        let lineage = |role, depth, model| {
            Some(Lineage {
                parent: &parent,
                role,
                depth,
                model,
            })
        };
        let brief1 = "Add tests for quoted keys with dots to tests/quoted.rs";
        let mut w1 = start_as(
            store,
            c1.as_str(),
            REPO,
            brief1,
            pace,
            lineage("worker", 1, worker),
        )?;
        p.emit(started(&c1, brief1, "worker", worker, true, 1, "toolu_d1"))?;
        let brief2 = "Document quoted keys in docs/config.md";
        let mut w2 = start_as(
            store,
            c2.as_str(),
            REPO,
            brief2,
            pace,
            lineage("worker", 1, worker),
        )?;
        p.emit(started(&c2, brief2, "worker", worker, true, 1, "toolu_d2"))?;
        p.emit(progress(&c1, 1, 6_580, 0.0071, &[], "write_file"))?;
        p.emit(progress(&c2, 1, 6_580, 0.0071, &[], "thinking"))?;
        run_child(
            &mut w1,
            worker,
            "toolu_c1",
            "tests/quoted.rs",
            "Added four tests for quoted keys.",
        )?;
        p.emit(progress(
            &c1,
            2,
            13_740,
            0.0123,
            &["tests/quoted.rs"],
            "thinking",
        ))?;
        run_child(
            &mut w2,
            worker,
            "toolu_c2",
            "docs/config.md",
            "Documented quoted keys.",
        )?;
        p.emit(progress(
            &c2,
            2,
            13_740,
            0.0123,
            &["docs/config.md"],
            "thinking",
        ))?;
        finish(
            &mut w1,
            TaskStatus::Completed,
            "Added four tests for quoted keys.",
        )?;
        p.emit(EventMsg::SubagentFinished(SubagentFinished {
            child_task_id: c1.clone(),
            status: TaskStatus::Completed,
            summary: "Added four tests for quoted keys.".into(),
            files: vec!["tests/quoted.rs".into()],
            checks: vec![check("cargo test")],
            cost_usd: 0.0123,
            tokens: 13_740,
            steps: 2,
            merge: "merged".into(),
            conflicts: Vec::new(),
            reverted: Vec::new(),
        }))?;
        finish(&mut w2, TaskStatus::Completed, "Documented quoted keys.")?;
        p.emit(EventMsg::SubagentFinished(SubagentFinished {
            child_task_id: c2.clone(),
            status: TaskStatus::Completed,
            summary: "Documented quoted keys.".into(),
            files: Vec::new(),
            checks: Vec::new(),
            cost_usd: 0.0123,
            tokens: 13_740,
            steps: 2,
            merge: "conflict".into(),
            conflicts: vec!["docs/config.md".into()],
            reverted: Vec::new(),
        }))?;

        let strong = "claude-opus-4-1";
        let brief3 = "Fix the dotted-key split in src/parser.rs so the new tests pass";
        let mut w3 = start_as(
            store,
            c3.as_str(),
            REPO,
            brief3,
            pace,
            lineage("escalation", 1, strong),
        )?;
        p.emit(started(
            &c3,
            brief3,
            "escalation",
            strong,
            false,
            1,
            "toolu_d3",
        ))?;
        w3.usage_of(strong, 9_200, 240, 0.1560, 0.1560)?;
        p.emit(progress(&c3, 1, 9_440, 0.1560, &[], "delegate"))?;
        let brief4 = "Add a regression test for a.\"b.c\" to tests/regression.rs";
        let mut w4 = start_as(
            store,
            g1.as_str(),
            REPO,
            brief4,
            pace,
            Some(Lineage {
                parent: &c3,
                role: "worker",
                depth: 2,
                model: worker,
            }),
        )?;
        w3.emit(started(&g1, brief4, "worker", worker, false, 2, "toolu_g"))?;
        run_child(
            &mut w4,
            worker,
            "toolu_g1",
            "tests/regression.rs",
            "Added the regression test.",
        )?;
        w3.emit(progress(
            &g1,
            2,
            13_740,
            0.0123,
            &["tests/regression.rs"],
            "thinking",
        ))?;
        finish(&mut w4, TaskStatus::Completed, "Added the regression test.")?;
        w3.emit(EventMsg::SubagentFinished(SubagentFinished {
            child_task_id: g1.clone(),
            status: TaskStatus::Completed,
            summary: "Added the regression test.".into(),
            files: vec!["tests/regression.rs".into()],
            checks: Vec::new(),
            cost_usd: 0.0123,
            tokens: 13_740,
            steps: 2,
            merge: "applied".into(),
            conflicts: Vec::new(),
            reverted: Vec::new(),
        }))?;
        p.emit(progress(
            &c3,
            2,
            9_440,
            0.1560,
            &["tests/regression.rs"],
            "run_command",
        ))?;
        w3.tool(
            "toolu_c3",
            "run_command",
            json!({"command": "cargo test -p config"}),
            &["test result: ok. 407 passed\n"],
            ToolCallStatus::Success,
            4100,
        )?;
        if pace > Duration::ZERO {
            // Leave the last child running a while, so a screenshot catches it.
            std::thread::sleep(pace * 10);
        }
        w3.usage_of(strong, 10_100, 90, 0.0910, 0.2470)?;
        finish(
            &mut w3,
            TaskStatus::Completed,
            "The split now respects quotes; 407 tests pass.",
        )?;
        p.emit(EventMsg::SubagentFinished(SubagentFinished {
            child_task_id: c3.clone(),
            status: TaskStatus::Completed,
            summary: "The split now respects quotes; 407 tests pass.".into(),
            files: vec!["src/parser.rs".into(), "tests/regression.rs".into()],
            checks: vec![check("cargo test"), check("cargo clippy")],
            cost_usd: 0.2593,
            tokens: 33_370,
            steps: 3,
            merge: "applied".into(),
            conflicts: Vec::new(),
            reverted: Vec::new(),
        }))?;
        p.emit(EventMsg::PlanUpdated(PlanUpdated {
            items: vec![
                node(
                    "tests",
                    "Add tests for quoted keys",
                    PlanStatus::Completed,
                    &[],
                    None,
                    &c1,
                ),
                node(
                    "docs",
                    "Document quoted keys",
                    PlanStatus::Failed,
                    &[],
                    None,
                    &c2,
                ),
                node(
                    "parser",
                    "Fix the dotted-key split",
                    PlanStatus::Completed,
                    &["tests"],
                    Some("escalation"),
                    &c3,
                ),
            ],
        }))?;
        p.usage(15_600, 160, 0.0290, 0.0730)?;
        p.emit(EventMsg::AssistantMessage(AssistantMessage {
            text: "The parser and its tests are in; the docs conflicted with your edit of docs/config.md.".into(),
        }))?;
        finish(
            &mut p,
            TaskStatus::Completed,
            "The parser and its tests are in; the docs conflicted.",
        )
    }
}

/// The cost journal: six tasks in three repositories over 200 days, three models (one without a
/// price), every token class, with rates whose products are whole cents.
mod costs {
    use super::*;

    /// Dollars per million tokens: input, output, cache read, 5-minute write, 1-hour write,
    /// reasoning.
    fn rates(model: &str) -> Option<Rates> {
        let (input, output, cache_read, cache_write, cache_write_1h, reasoning) = match model {
            "claude-sonnet-4-5" => (3.0, 15.0, 0.3, 3.75, 6.0, 15.0),
            "gpt-5" => (1.25, 10.0, 0.125, 1.25, 1.25, 10.0),
            _ => return None,
        };
        Some(Rates {
            input,
            output,
            cache_read,
            cache_write,
            cache_write_1h,
            reasoning,
            tier: None,
            source: "seed".into(),
            entry: model.into(),
        })
    }

    /// Tokens: uncached input, cache read, 5-minute write, 1-hour write, output, reasoning.
    type Classes = [u64; 6];
    /// $1.35: 0.30 + 0.30 + 0.15 + 0.30 + 0.30.
    const SONNET_BIG: Classes = [100_000, 1_000_000, 40_000, 50_000, 20_000, 0];
    /// $0.45.
    const SONNET_SMALL: Classes = [50_000, 500_000, 0, 0, 10_000, 0];
    /// $0.40 at gpt-5's rates: 0.10 + 0.05 + 0.05 + 0.20.
    const GPT: Classes = [80_000, 400_000, 0, 0, 5_000, 20_000];
    const LOCAL: Classes = [30_000, 0, 0, 0, 2_000, 0];

    #[derive(serde::Serialize)]
    pub struct Written {
        task: String,
        number: usize,
        repo: String,
        model: String,
        ts: String,
        seq: u64,
        tokens: Classes,
        cost_usd: Option<f64>,
        latency_ms: u64,
    }

    /// `now - secs` as the journal writes times (RFC 3339, UTC, milliseconds).
    fn ago(secs: u64) -> String {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let ms = (t.as_millis() as u64).saturating_sub(secs * 1000);
        let (days, rest) = ((ms / 86_400_000) as i64, ms % 86_400_000);
        // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = doy - (153 * mp + 2) / 5 + 1;
        let m = if mp < 10 { mp + 3 } else { mp - 9 };
        let y = yoe + era * 400 + i64::from(m <= 2);
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
            rest / 3_600_000,
            rest / 60_000 % 60,
            rest / 1000 % 60,
            rest % 1000
        )
    }

    /// A task: repository, model, prompt, how it ended, and its requests (seconds ago, tokens).
    type Seeded = (
        &'static str,
        &'static str,
        &'static str,
        TaskStatus,
        Vec<(u64, Classes)>,
    );

    const MIN: u64 = 60;
    const DAY: u64 = 86_400;

    pub fn seed(store: &Store) -> Result<Vec<Written>> {
        // (repository, model, prompt, status, [(seconds ago, tokens)]), oldest task first.
        let tasks: [Seeded; 6] = [
            (
                "/home/dev/src/web",
                "claude-sonnet-4-5",
                "Port the settings page to the new router",
                TaskStatus::Completed,
                vec![
                    (100 * DAY + 5 * MIN, SONNET_BIG),
                    (100 * DAY + 4 * MIN, SONNET_BIG),
                    (100 * DAY + 3 * MIN, SONNET_BIG),
                    (100 * DAY + 2 * MIN, SONNET_BIG),
                    (100 * DAY + MIN, SONNET_SMALL),
                ],
            ),
            (
                "/home/dev/src/web",
                "gpt-5",
                "Add a dark theme to the charts",
                TaskStatus::Completed,
                vec![
                    (40 * DAY + 3 * MIN, GPT),
                    (40 * DAY + 2 * MIN, GPT),
                    (40 * DAY + MIN, GPT),
                ],
            ),
            (
                "/home/dev/src/config",
                "claude-sonnet-4-5",
                "Fix the parser so quoted keys with dots work",
                TaskStatus::Completed,
                vec![(10 * DAY, SONNET_BIG)],
            ),
            (
                "/home/dev/src/config",
                "gpt-5",
                "Explain the config loader",
                TaskStatus::Answered,
                vec![(2 * DAY + MIN, GPT), (2 * DAY, GPT)],
            ),
            (
                "/home/dev/src/billing",
                "local-llm",
                "Summarize the invoices module",
                TaskStatus::Answered,
                vec![(4 * MIN, LOCAL), (3 * MIN, LOCAL)],
            ),
            (
                "/home/dev/src/billing",
                "claude-sonnet-4-5",
                "Add retries with jitter to the webhook sender",
                TaskStatus::Completed,
                vec![(2 * MIN, SONNET_BIG), (MIN, SONNET_SMALL)],
            ),
        ];
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or_default();
        let mut written = Vec::new();
        for (n, (repo, model, prompt, status, requests)) in tasks.into_iter().enumerate() {
            let id = format!("01cost{stamp}{n}");
            let first = requests.first().map(|r| r.0).unwrap_or_default() + 30;
            let task = TaskId::from(id.as_str());
            store.create_task(&NewTask {
                id: task.clone(),
                repo: repo.into(),
                prompt: prompt.into(),
                base_commit: "4f1c2a9e0b7d".into(),
                branch: format!("bosun/{id}"),
                worktree: format!("/tmp/bosun-demo/worktrees/{id}"),
                provider: "seed".into(),
                model: model.into(),
                created_at: ago(first),
                owner_pid: std::process::id(),
                owner_started: bosun_store::process_start_time(std::process::id()),
                max_steps: 50,
                max_cost_usd: None,
                parent_task_id: None,
                role: None,
                depth: 0,
            })?;
            let mut w = Writer {
                store,
                task,
                seq: 0,
                pace: Duration::ZERO,
                at: Some(ago(first)),
            };
            w.emit(EventMsg::TaskStarted(TaskStarted {
                repo: repo.into(),
                base_commit: "4f1c2a9e0b7d".into(),
                base_ref: Some("main".into()),
                branch: format!("bosun/{id}"),
                worktree: format!("/tmp/bosun-demo/worktrees/{id}"),
                prompt: prompt.into(),
                provider: "seed".into(),
                model: model.into(),
                api: "openai-chat".into(),
                base_url: "http://127.0.0.1:9/v1".into(),
                api_key_env: None,
                mode: None,
                max_cost_usd: None,
                forked_from: None,
                profile: None,
            }))?;
            w.emit(EventMsg::UserMessage(UserMessage {
                text: prompt.into(),
                origin: None,
            }))?;
            let mut total = 0.0;
            let mut last = first;
            for (i, (secs, t)) in requests.iter().enumerate() {
                let r = rates(model);
                let cost = r.as_ref().map(|r| {
                    let cents = t[0] as f64 * r.input
                        + t[1] as f64 * r.cache_read
                        + t[2] as f64 * r.cache_write
                        + t[3] as f64 * r.cache_write_1h
                        + t[4] as f64 * r.output
                        + t[5] as f64 * r.reasoning;
                    // Whole cents by construction; rounded so the sums are exact too.
                    (cents / 10_000.0).round() / 100.0
                });
                total += cost.unwrap_or(0.0);
                let latency_ms = 800 + 150 * i as u64;
                let ts = ago(*secs);
                w.at = Some(ts.clone());
                w.emit(EventMsg::Usage(UsageEvent {
                    model: model.into(),
                    input_tokens: t[0],
                    cached_input_tokens: t[1],
                    cache_write_tokens: t[2],
                    cache_write_1h_tokens: t[3],
                    output_tokens: t[4],
                    reasoning_tokens: t[5],
                    cost_usd: cost,
                    total_cost_usd: total,
                    priced: cost.is_some(),
                    rates: r,
                    latency_ms: Some(latency_ms),
                    reasoning: Vec::new(),
                }))?;
                written.push(Written {
                    task: id.clone(),
                    number: n + 1,
                    repo: repo.into(),
                    model: model.into(),
                    ts,
                    seq: w.seq,
                    tokens: *t,
                    cost_usd: cost,
                    latency_ms,
                });
                last = *secs;
            }
            w.at = Some(ago(last.saturating_sub(20)));
            w.emit(EventMsg::AssistantMessage(AssistantMessage {
                text: format!("Done: {prompt}."),
            }))?;
            w.emit(EventMsg::TaskFinished(TaskFinished {
                status,
                summary: format!("Done: {prompt}."),
                checks: Vec::new(),
            }))?;
        }
        Ok(written)
    }
}
