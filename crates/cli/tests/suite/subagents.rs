//! Sub-agents: `delegate` hands a subtask to a child task with a fresh context, its own caps
//! and a scope; disjoint children run side by side and are merged back one at a time with the
//! checks after each merge; overlapping ones run one after another; stopping the parent stops
//! them; a child of a child gets no `delegate` tool; a role routes a child to its own model.

use super::support::*;
use bosun_protocol::{Event, EventMsg, TaskId, TaskStatus};
use bosun_store::{Store, TaskRow};
use bosun_testkit::{MockModelServer, MockOptions, MockReply};
use pretty_assertions::assert_eq;
use serde_json::json;

fn mock(main: Vec<MockReply>, routes: Vec<(&str, Vec<MockReply>)>) -> MockModelServer {
    MockModelServer::start_blocking_with(
        main,
        MockOptions {
            routes: routes
                .into_iter()
                .map(|(m, r)| (m.to_string(), r))
                .collect(),
            ..MockOptions::default()
        },
    )
    .unwrap()
}

/// A child's script: one `write_file`, then its answer.
fn writes(id: &str, path: &str, content: &str, done: &str) -> Vec<MockReply> {
    vec![
        tools(vec![call(
            id,
            "write_file",
            json!({"path": path, "content": content}),
        )]),
        text(done),
    ]
}

/// `config.toml` with an escalation provider at `url` and one check round.
fn escalation_config(env: &Env, url: &str) {
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "max_check_rounds = 1\n\n[providers.strong]\napi = \"openai-chat\"\nbase_url = \"{url}/v1\"\nmodel = \"strong-model\"\n\n[routing]\nescalation = \"strong\"\n"
        ),
    )
    .unwrap();
}

/// `bosun run --json` (full-auto, no checks) started against `server`, its events read as
/// they come.
fn spawn_run(
    env: &Env,
    server: &MockModelServer,
    prompt: &str,
) -> (
    std::process::Child,
    std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
) {
    use std::io::BufRead;
    let base = format!("{}/v1", server.url());
    let mut child = env
        .bosun()
        .args([
            "run",
            "--json",
            "--mode",
            "full-auto",
            "--no-checks",
            "--repo",
        ])
        .arg(&env.repo)
        .args([
            "--prompt",
            prompt,
            "--api",
            "openai-chat",
            "--base-url",
            &base,
        ])
        .args(["--model", "mock-model"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    (child, lines)
}

fn delegate(id: &str, brief: &str, scope: &[&str]) -> bosun_testkit::MockToolCall {
    call(id, "delegate", json!({"brief": brief, "scope": scope}))
}

fn store(env: &Env) -> Store {
    Store::open(&env.home.join("bosun.db")).unwrap()
}

fn children(env: &Env, parent: &str) -> Vec<TaskRow> {
    store(env).children(&TaskId::from(parent)).unwrap()
}

fn events_of(env: &Env, task: &TaskId) -> Vec<Event> {
    store(env).events(task, 0, 100_000).unwrap()
}

fn finished_of(events: &[Event]) -> Vec<&bosun_protocol::SubagentFinished> {
    events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::SubagentFinished(f) => Some(f),
            _ => None,
        })
        .collect()
}

fn started_of(events: &[Event]) -> Vec<&bosun_protocol::SubagentStarted> {
    events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::SubagentStarted(s) => Some(s),
            _ => None,
        })
        .collect()
}

/// The requests whose first user message holds `marker`.
fn requests_with(server: &MockModelServer, marker: &str) -> Vec<bosun_testkit::RecordedRequest> {
    server
        .model_requests()
        .into_iter()
        .filter(|r| {
            messages(r)
                .iter()
                .find(|m| m["role"] == "user")
                .and_then(|m| m["content"].as_str())
                .is_some_and(|c| c.contains(marker))
        })
        .collect()
}

fn tool_names(r: &bosun_testkit::RecordedRequest) -> Vec<String> {
    r.body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["function"]["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_child_starts_fresh_with_its_brief_its_work_lands_in_the_parent_and_its_result_reaches_it() {
    let env = Env::new();
    let server = mock(
        vec![
            tools(vec![delegate(
                "d1",
                "CHILD-A: write notes.txt saying hello",
                &["notes.txt"],
            )]),
            text("The sub-agent wrote the notes."),
        ],
        vec![(
            "CHILD-A",
            writes("w1", "notes.txt", "hello\n", "Wrote notes.txt."),
        )],
    );
    let run = env.run(
        &server,
        "PARENT-PROMPT: organise the notes",
        &["--no-checks"],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Completed);
    // The child's requests hold its brief, never the parent's prompt or transcript.
    let child_requests = requests_with(&server, "CHILD-A");
    assert_eq!(child_requests.len(), 2);
    for r in &child_requests {
        assert!(
            !r.body.to_string().contains("PARENT-PROMPT"),
            "a child saw the parent's prompt: {}",
            r.body
        );
    }
    // It is a task of its own, named by its parent; lists show only the parent.
    let parent = run.task_id();
    let kids = children(&env, &parent);
    assert_eq!(kids.len(), 1);
    let child = &kids[0];
    assert_eq!(
        child.parent_task_id.as_ref().map(|p| p.0.clone()),
        Some(parent.clone())
    );
    assert_eq!((child.role.as_deref(), child.depth), (Some("worker"), 1));
    assert_eq!(child.status, TaskStatus::Completed);
    let listed: Vec<String> = store(&env)
        .tasks()
        .unwrap()
        .into_iter()
        .map(|t| t.id.0)
        .collect();
    assert_eq!(listed, std::slice::from_ref(&parent));
    // The parent's timeline tells the story; its result went back to the model.
    let started = started_of(&run.events);
    assert_eq!(started.len(), 1);
    assert_eq!(started[0].child_task_id, child.id);
    assert_eq!(started[0].scope, ["notes.txt"]);
    assert_eq!(started[0].role, "worker");
    assert!(!started[0].parallel);
    let finished = finished_of(&run.events);
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].status, TaskStatus::Completed);
    assert_eq!(finished[0].files, ["notes.txt"]);
    assert_eq!(finished[0].merge, "applied");
    assert_eq!(finished[0].steps, 2);
    let result = tool_result(&server, "d1");
    assert!(result.contains("\"status\": \"completed\""), "{result}");
    assert!(result.contains("notes.txt"), "{result}");
    assert!(result.contains("Wrote notes.txt."), "{result}");
    // The work is in the parent's worktree, recorded as its checkpoint.
    assert_eq!(
        std::fs::read_to_string(run.worktree().join("notes.txt")).unwrap(),
        "hello\n"
    );
    assert!(run.events.iter().any(|e| matches!(&e.msg,
        EventMsg::CheckpointCreated(c) if c.files == ["notes.txt"] && c.call_id.as_ref().is_some_and(|id| id.0 == "d1"))));
    // Costs by role: the parent's requests are main's, the child's the worker's.
    let by_role = env.json(&["costs", "--by", "role", "--json"]);
    let keys: Vec<String> = by_role
        .as_array()
        .or_else(|| by_role["rows"].as_array())
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap().to_string())
        .collect();
    let mut keys = keys;
    keys.sort();
    assert_eq!(keys, ["main", "worker"], "{by_role}");
    // The CLI shows it.
    let (ok, shown, _) = env.text(&["show", &parent]);
    assert!(ok);
    assert!(shown.contains("sub-agent"), "{shown}");
}

#[test]
fn a_child_changes_only_its_scope_its_commands_changes_outside_are_put_back_and_it_stops_at_its_cap()
 {
    let env = Env::new();
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(env.home.join("config.toml"), "[subagents]\nmax_steps = 3\n").unwrap();
    let server = mock(
        vec![
            tools(vec![delegate(
                "d1",
                "SCOPED: update notes",
                &["notes.txt", "link.txt"],
            )]),
            text("done"),
        ],
        vec![(
            "SCOPED",
            vec![
                tools(vec![call(
                    "w-out",
                    "write_file",
                    json!({"path": "README.md", "content": "taken over\n"}),
                )]),
                tools(vec![call(
                    "sh",
                    "run_command",
                    json!({"command": "echo inside > notes.txt; echo outside > stray.txt; echo changed >> README.md; ln -s README.md link.txt"}),
                )]),
                // In scope by its name, outside it by its target.
                tools(vec![call(
                    "w-link",
                    "write_file",
                    json!({"path": "link.txt", "content": "hijacked\n"}),
                )]),
                // Past its cap of 3 requests: never asked for.
                tools(vec![call("r", "read_file", json!({"path": "notes.txt"}))]),
                text("never sent"),
            ],
        )],
    );
    let readme_before = std::fs::read_to_string(env.repo.join("README.md")).unwrap();
    let run = env.run(&server, "keep the notes", &["--no-checks"]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let kid = &children(&env, &run.task_id())[0];
    let kid_events = events_of(&env, &kid.id);
    // The edit outside the scope was refused.
    let refused = kid_events.iter().find_map(|e| match &e.msg {
        EventMsg::ToolCallEnd(end) if end.call_id.0 == "w-out" => Some(end.clone()),
        _ => None,
    });
    let refused = refused.unwrap();
    assert_eq!(refused.status, bosun_protocol::ToolCallStatus::Denied);
    assert!(
        refused
            .error
            .unwrap()
            .contains("outside this sub-agent's scope")
    );
    let through_link = kid_events.iter().find_map(|e| match &e.msg {
        EventMsg::ToolCallEnd(end) if end.call_id.0 == "w-link" => Some(end.status),
        _ => None,
    });
    assert_eq!(through_link, Some(bosun_protocol::ToolCallStatus::Denied));
    // The command's changes outside were put back; the one inside kept.
    let command_result = tool_result(&server, "sh");
    assert!(command_result.contains("put back"), "{command_result}");
    assert!(command_result.contains("stray.txt"), "{command_result}");
    assert_eq!(
        requests_with(&server, "SCOPED").len(),
        3,
        "the cap is 3 requests"
    );
    assert_eq!(kid.status, TaskStatus::MaxSteps);
    let finished = finished_of(&run.events);
    assert_eq!(finished[0].status, TaskStatus::MaxSteps);
    assert_eq!(finished[0].reverted, ["README.md", "stray.txt"]);
    let wt = run.worktree();
    assert_eq!(
        std::fs::read_to_string(wt.join("notes.txt")).unwrap(),
        "inside\n"
    );
    assert!(!wt.join("stray.txt").exists());
    assert_eq!(
        std::fs::read_to_string(wt.join("README.md")).unwrap(),
        readme_before
    );
    let result = tool_result(&server, "d1");
    assert!(result.contains("max_steps"), "{result}");
}

#[test]
fn disjoint_children_run_side_by_side_and_merge_with_the_checks_after_each_merge() {
    let env = Env::new();
    let slow = |path: &str, content: &str| MockReply::Reply {
        text: "Working on it, step by step, slowly and carefully.".into(),
        tool_calls: vec![call(
            "w",
            "write_file",
            json!({"path": path, "content": content}),
        )],
        usage: usage(50, 5),
        chunk_delay_ms: 120,
        cut_after_events: None,
    };
    let server = mock(
        vec![
            tools(vec![
                delegate("da", "PART-A: write a/one.txt", &["a/**"]),
                delegate("db", "PART-B: write b/two.txt", &["b/**"]),
            ]),
            text("both parts done"),
        ],
        vec![
            ("PART-A", vec![slow("a/one.txt", "one\n"), text("a done")]),
            ("PART-B", vec![slow("b/two.txt", "two\n"), text("b done")]),
        ],
    );
    let run = env.run(&server, "do both parts", &["--check", "test -f README.md"]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let started = started_of(&run.events);
    assert_eq!(started.len(), 2);
    assert!(started.iter().all(|s| s.parallel));
    // Their requests overlapped in time: each child's first reply streams for over a second,
    // and the other child had started before it ended.
    let kids = children(&env, &run.task_id());
    assert_eq!(kids.len(), 2);
    let spans: Vec<(String, String)> = kids
        .iter()
        .map(|k| {
            let evs = events_of(&env, &k.id);
            let first_delta = evs
                .iter()
                .find(|e| matches!(e.msg, EventMsg::TaskStarted(_)))
                .map(|e| e.ts.clone())
                .unwrap();
            let first_usage = evs
                .iter()
                .find(|e| matches!(e.msg, EventMsg::Usage(_)))
                .map(|e| e.ts.clone())
                .unwrap();
            (first_delta, first_usage)
        })
        .collect();
    assert!(
        spans[0].0 < spans[1].1 && spans[1].0 < spans[0].1,
        "the children's first responses did not overlap: {spans:?}"
    );
    // Merged one at a time, the checks after each merge.
    let finished = finished_of(&run.events);
    assert_eq!(finished.len(), 2);
    assert!(finished.iter().all(|f| f.merge == "merged"), "{finished:?}");
    assert!(
        finished
            .iter()
            .all(|f| f.checks.len() == 1
                && f.checks[0].status == bosun_protocol::CheckStatus::Passed)
    );
    let order: Vec<&str> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::CheckpointCreated(_) => Some("checkpoint"),
            EventMsg::CheckFinished(_) => Some("check"),
            EventMsg::SubagentFinished(_) => Some("finished"),
            _ => None,
        })
        .collect();
    assert_eq!(
        &order[..6],
        [
            "checkpoint",
            "check",
            "finished",
            "checkpoint",
            "check",
            "finished"
        ]
    );
    let wt = run.worktree();
    assert_eq!(
        std::fs::read_to_string(wt.join("a/one.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("b/two.txt")).unwrap(),
        "two\n"
    );
}

#[test]
fn overlapping_children_run_one_after_another_each_on_the_state_the_one_before_left() {
    let env = Env::new();
    let server = mock(
        vec![
            tools(vec![
                delegate("d1", "FIRST: write src/a.txt", &["src/**"]),
                delegate("d2", "SECOND: extend src/a.txt", &["src/a.txt"]),
            ]),
            text("done"),
        ],
        vec![
            ("FIRST", writes("w1", "src/a.txt", "first\n", "first done")),
            (
                "SECOND",
                vec![
                    tools(vec![call("r2", "read_file", json!({"path": "src/a.txt"}))]),
                    tools(vec![call(
                        "w2",
                        "write_file",
                        json!({"path": "src/a.txt", "content": "first\nsecond\n"}),
                    )]),
                    text("second done"),
                ],
            ),
        ],
    );
    let run = env.run(&server, "two steps on one file", &["--no-checks"]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let started = started_of(&run.events);
    assert!(started.iter().all(|s| !s.parallel), "{started:?}");
    let kids = children(&env, &run.task_id());
    assert_eq!(kids.len(), 2);
    let (first, second) = if kids[0].prompt.contains("FIRST") {
        (&kids[0], &kids[1])
    } else {
        (&kids[1], &kids[0])
    };
    // The second started after the first finished, from its result.
    assert!(second.created_at >= *first.finished_at.as_ref().unwrap());
    assert!(tool_result(&server, "r2").contains("first"));
    let finished = finished_of(&run.events);
    assert!(
        finished.iter().all(|f| f.merge == "applied"),
        "{finished:?}"
    );
    assert_eq!(
        std::fs::read_to_string(run.worktree().join("src/a.txt")).unwrap(),
        "first\nsecond\n"
    );
}

#[test]
fn stopping_the_parent_stops_its_children_and_no_request_is_sent_after_the_stop() {
    let env = Env::new();
    let server = mock(
        vec![
            tools(vec![delegate(
                "d1",
                "LONG-CHILD: think hard",
                &["notes.txt"],
            )]),
            text("x"),
        ],
        vec![(
            "LONG-CHILD",
            vec![
                MockReply::Reply {
                    text: "thinking ".repeat(200),
                    tool_calls: vec![],
                    usage: usage(10, 10),
                    chunk_delay_ms: 100,
                    cut_after_events: None,
                },
                text("never asked"),
            ],
        )],
    );
    let (mut child, mut lines) = spawn_run(&env, &server, "delegate it");
    let mut events = Vec::new();
    for line in lines.by_ref() {
        let ev: Event = serde_json::from_str(&line.unwrap()).unwrap();
        let started = matches!(ev.msg, EventMsg::SubagentStarted(_));
        events.push(ev);
        if started {
            break;
        }
    }
    // The child is streaming its first reply.
    std::thread::sleep(std::time::Duration::from_millis(800));
    let requests_at_stop = server.model_requests().len();
    assert_eq!(requests_at_stop, 2, "the parent's and the child's first");
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    for line in lines {
        events.push(serde_json::from_str(&line.unwrap()).unwrap());
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(server.model_requests().len(), requests_at_stop);
    let parent = events[0].task_id.clone();
    let kids = store(&env).children(&parent).unwrap();
    assert_eq!(kids[0].status, TaskStatus::Interrupted);
    assert!(events.iter().any(|e| matches!(&e.msg,
        EventMsg::TaskFinished(f) if f.status == TaskStatus::Interrupted)));
}

#[test]
fn a_child_may_delegate_once_more_but_a_child_at_depth_two_has_no_delegate_tool() {
    let env = Env::new();
    let server = mock(
        vec![
            tools(vec![delegate(
                "d1",
                "DEPTH-ONE: split the docs work",
                &["docs/**"],
            )]),
            text("done"),
        ],
        vec![
            (
                "DEPTH-ONE",
                vec![
                    tools(vec![delegate(
                        "d2",
                        "DEPTH-TWO: write docs/a.md",
                        &["docs/a.md"],
                    )]),
                    text("delegated"),
                ],
            ),
            ("DEPTH-TWO", writes("w", "docs/a.md", "# A\n", "written")),
        ],
    );
    let run = env.run(&server, "write the docs", &["--no-checks"]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let parent_tools = tool_names(&server.model_requests()[0]);
    assert!(parent_tools.contains(&"delegate".to_string()));
    let one = requests_with(&server, "DEPTH-ONE");
    assert!(tool_names(&one[0]).contains(&"delegate".to_string()));
    let two = requests_with(&server, "DEPTH-TWO");
    assert!(!two.is_empty());
    for r in &two {
        assert!(!tool_names(r).contains(&"delegate".to_string()));
    }
    let depth_one = &children(&env, &run.task_id())[0];
    let depth_two = store(&env).children(&depth_one.id).unwrap();
    assert_eq!(depth_two.len(), 1);
    assert_eq!(depth_two[0].depth, 2);
    assert_eq!(
        std::fs::read_to_string(run.worktree().join("docs/a.md")).unwrap(),
        "# A\n"
    );
}

#[test]
fn the_worker_role_routes_children_to_its_own_model_and_a_bad_call_says_what_would_do() {
    let env = Env::new();
    let worker = mock(
        vec![],
        vec![(
            "ROUTED",
            writes("w", "notes.txt", "cheap\n", "done cheaply"),
        )],
    );
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "[providers.cheap]\napi = \"openai-chat\"\nbase_url = \"{}/v1\"\nmodel = \"cheap-model\"\n\n[routing]\nworker = \"cheap\"\n",
            worker.url()
        ),
    )
    .unwrap();
    let main = mock(
        vec![
            tools(vec![
                call(
                    "bad",
                    "delegate",
                    json!({"brief": "BAD", "scope": ["x"], "checks": ["nope"]}),
                ),
                call("bad2", "delegate", json!({"brief": "  ", "scope": ["x"]})),
                call(
                    "bad3",
                    "delegate",
                    json!({"brief": "b", "scope": ["../outside"]}),
                ),
            ]),
            tools(vec![delegate("d1", "ROUTED: write notes", &["notes.txt"])]),
            text("done"),
        ],
        vec![],
    );
    let run = env.run(&main, "route it", &["--no-checks"]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert!(tool_result(&main, "bad").contains("no check named \"nope\""));
    assert!(tool_result(&main, "bad2").contains("needs a brief"));
    assert!(tool_result(&main, "bad3").contains("outside the worktree"));
    let routed = worker.model_requests();
    assert_eq!(routed.len(), 2);
    assert!(routed.iter().all(|r| r.body["model"] == "cheap-model"));
    assert!(
        main.model_requests()
            .iter()
            .all(|r| r.body["model"] == "mock-model")
    );
    let started = started_of(&run.events);
    assert_eq!(
        (started[0].model.as_str(), started[0].provider.as_str()),
        ("cheap-model", "cheap")
    );
}

fn node(id: &str, step: &str, deps: &[&str], scope: &[&str]) -> serde_json::Value {
    json!({"id": id, "step": step, "status": "pending", "depends_on": deps, "scope": scope})
}

fn plan_items(events: &[Event]) -> Vec<bosun_protocol::PlanItem> {
    events
        .iter()
        .rev()
        .find_map(|e| match &e.msg {
            EventMsg::PlanUpdated(p) => Some(p.items.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

#[test]
fn a_plan_graph_runs_its_nodes_in_dependency_order_each_a_sub_agent() {
    let env = Env::new();
    let server = mock(
        vec![
            tools(vec![call(
                "p",
                "update_plan",
                json!({"run": true, "items": [
                    node("b", "NODE-B: write b.txt from a.txt", &["a"], &["b.txt"]),
                    node("a", "NODE-A: write a.txt", &[], &["a.txt"]),
                ]}),
            )]),
            text("The plan ran."),
        ],
        vec![
            ("NODE-A", writes("wa", "a.txt", "A\n", "a written")),
            (
                "NODE-B",
                vec![
                    tools(vec![call("rb", "read_file", json!({"path": "a.txt"}))]),
                    tools(vec![call(
                        "wb",
                        "write_file",
                        json!({"path": "b.txt", "content": "B after A\n"}),
                    )]),
                    text("b written"),
                ],
            ),
        ],
    );
    let run = env.run(&server, "run the plan", &["--no-checks"]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    // a before b: b's child read what a wrote.
    assert!(tool_result(&server, "rb").contains('A'));
    let started = started_of(&run.events);
    let nodes: Vec<Option<&str>> = started.iter().map(|s| s.plan_node.as_deref()).collect();
    assert_eq!(nodes, [Some("a"), Some("b")]);
    let items = plan_items(&run.events);
    assert!(
        items
            .iter()
            .all(|i| i.status == bosun_protocol::PlanStatus::Completed)
    );
    assert!(items.iter().all(|i| i.child_task_id.is_some()));
    let result = tool_result(&server, "p");
    assert!(result.contains("\"plan\": \"completed\""), "{result}");
    let wt = run.worktree();
    assert_eq!(
        std::fs::read_to_string(wt.join("b.txt")).unwrap(),
        "B after A\n"
    );
    // A checkpoint per node.
    let node_checkpoints = run
        .events
        .iter()
        .filter(|e| {
            matches!(&e.msg, EventMsg::CheckpointCreated(c)
            if c.call_id.as_ref().is_some_and(|id| id.0.starts_with("p:")))
        })
        .count();
    assert_eq!(node_checkpoints, 2);
    // A cycle is refused with what is wrong, and nothing runs.
    let env = Env::new();
    let server = mock(
        vec![
            tools(vec![call(
                "p",
                "update_plan",
                json!({"run": true, "items": [node("x", "X", &["y"], &[]), node("y", "Y", &["x"], &[])]}),
            )]),
            text("ok"),
        ],
        vec![],
    );
    let run = env.run(&server, "run the plan", &["--no-checks"]);
    assert!(tool_result(&server, "p").contains("cycle through x, y"));
    assert!(started_of(&run.events).is_empty());
}

#[test]
fn a_failing_node_is_retried_with_its_failure_then_escalated_then_the_user_decides() {
    let env = Env::new();
    let escalation = mock(
        vec![],
        vec![(
            "NODE-FIX",
            writes("good", "ok.txt", "ok\n", "fixed it properly"),
        )],
    );
    escalation_config(&env, &escalation.url());
    let wrong = |id: &str| {
        tools(vec![call(
            id,
            "write_file",
            json!({"path": "wrong.txt", "content": "no\n"}),
        )])
    };
    let server = mock(
        vec![
            tools(vec![call(
                "p",
                "update_plan",
                json!({"run": true, "items": [node("fix", "NODE-FIX: make ok.txt", &[], &["*.txt"])]}),
            )]),
            text("The plan ran."),
        ],
        vec![(
            "NODE-FIX",
            vec![wrong("w1"), text("done"), wrong("w2"), text("done again")],
        )],
    );
    let run = env.run(&server, "run the plan", &["--check", "test -f ok.txt"]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let worker = requests_with(&server, "NODE-FIX");
    assert_eq!(worker.len(), 4, "two attempts of two requests each");
    let first_user = |r: &bosun_testkit::RecordedRequest| {
        messages(r)
            .iter()
            .find(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_str().map(String::from))
            .unwrap()
    };
    assert!(!first_user(&worker[0]).contains("An earlier attempt"));
    assert!(first_user(&worker[2]).contains("An earlier attempt at this failed"));
    assert!(
        first_user(&worker[2]).contains("ok.txt"),
        "the digest names the check"
    );
    let strong = escalation.model_requests();
    assert_eq!(strong.len(), 2);
    assert!(strong.iter().all(|r| r.body["model"] == "strong-model"));
    let started = started_of(&run.events);
    let roles: Vec<&str> = started.iter().map(|s| s.role.as_str()).collect();
    assert_eq!(roles, ["worker", "worker", "escalation"]);
    let wt = run.worktree();
    assert!(wt.join("ok.txt").exists());
    assert!(
        !wt.join("wrong.txt").exists(),
        "a failed attempt is never merged"
    );
    assert_eq!(run.finished().0, TaskStatus::Completed);

    // Past the ladder, with neither a terminal nor --json: the plan stops, checks_failed (5).
    let env = Env::new();
    let escalation = mock(vec![], vec![("NODE-NEVER", vec![wrong("e1"), text("no")])]);
    escalation_config(&env, &escalation.url());
    let server = mock(
        vec![tools(vec![call(
            "p",
            "update_plan",
            json!({"run": true, "items": [node("n", "NODE-NEVER: make ok.txt", &[], &["*.txt"])]}),
        )])],
        vec![(
            "NODE-NEVER",
            vec![wrong("w1"), text("done"), wrong("w2"), text("done")],
        )],
    );
    let base = format!("{}/v1", server.url());
    let out = env
        .bosun()
        .args(["run", "--mode", "full-auto", "--repo"])
        .arg(&env.repo)
        .args([
            "--prompt",
            "run the plan",
            "--api",
            "openai-chat",
            "--base-url",
            &base,
        ])
        .args(["--model", "mock-model", "--check", "test -f ok.txt"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let parent = store(&env).tasks().unwrap().remove(0);
    assert_eq!(parent.status, TaskStatus::ChecksFailed);
    let events = events_of(&env, &parent.id);
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.msg, EventMsg::ApprovalRequested(a)
        if a.kind == bosun_protocol::ApprovalKind::PlanNodeFailed))
    );
    assert!(
        parent
            .summary
            .unwrap()
            .contains("the plan stopped at node n")
    );
}

#[test]
fn a_plan_killed_midway_resumes_at_the_first_unfinished_node() {
    let env = Env::new();
    let server = mock(
        vec![
            tools(vec![call(
                "p",
                "update_plan",
                json!({"run": true, "items": [
                    node("a", "NODE-A: write a.txt", &[], &["a.txt"]),
                    node("b", "NODE-B: write b.txt", &["a"], &["b.txt"]),
                ]}),
            )]),
            text("The plan ran after the resume."),
        ],
        vec![
            ("NODE-A", writes("wa", "a.txt", "A\n", "a written")),
            (
                "NODE-B",
                vec![
                    // In flight when Bosun is killed.
                    MockReply::Reply {
                        text: "slowly ".repeat(200),
                        tool_calls: vec![],
                        usage: usage(10, 10),
                        chunk_delay_ms: 100,
                        cut_after_events: None,
                    },
                    tools(vec![call(
                        "wb",
                        "write_file",
                        json!({"path": "b.txt", "content": "B\n"}),
                    )]),
                    text("b written"),
                ],
            ),
        ],
    );
    let (mut bosun, mut lines) = spawn_run(&env, &server, "run the plan");
    let mut task = String::new();
    for line in lines.by_ref() {
        let ev: Event = serde_json::from_str(&line.unwrap()).unwrap();
        task = ev.task_id.0.clone();
        if matches!(&ev.msg, EventMsg::SubagentStarted(s) if s.plan_node.as_deref() == Some("b")) {
            break;
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    bosun.kill().unwrap();
    bosun.wait().unwrap();

    let out = env
        .bosun()
        .args(["resume", &task, "--json", "--mode", "full-auto"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = parse_events(&out.stdout);
    // Node a is not run again; node b runs from the state a left.
    assert_eq!(requests_with(&server, "NODE-A").len(), 2);
    let started = started_of(&events);
    let nodes: Vec<Option<&str>> = started.iter().map(|s| s.plan_node.as_deref()).collect();
    assert_eq!(nodes, [Some("b")]);
    let items = plan_items(&events);
    assert!(
        items
            .iter()
            .all(|i| i.status == bosun_protocol::PlanStatus::Completed),
        "{items:?}"
    );
    let wt = worktree_of(&events_of(&env, &TaskId::from(task.as_str())));
    assert_eq!(std::fs::read_to_string(wt.join("a.txt")).unwrap(), "A\n");
    assert_eq!(std::fs::read_to_string(wt.join("b.txt")).unwrap(), "B\n");
    // The resumed model was told the plan's real result.
    let last = server.model_requests().pop().unwrap();
    assert!(
        last.body
            .to_string()
            .contains("\\\"plan\\\": \\\"completed\\\""),
        "{}",
        last.body
    );
    let finished = events.iter().rev().find_map(|e| match &e.msg {
        EventMsg::TaskFinished(f) => Some(f.status),
        _ => None,
    });
    assert_eq!(finished, Some(TaskStatus::Completed));
}

#[test]
fn run_plan_has_the_planner_role_write_the_graph_first_and_the_main_model_finish() {
    let env = Env::new();
    let planner = mock(
        vec![MockReply::Reply {
            text: "Here is the plan.".into(),
            tool_calls: vec![call(
                "plan1",
                "update_plan",
                json!({"items": [node("one", "PLANNED-ONE: write one.txt", &[], &["one.txt"])]}),
            )],
            usage: usage(30, 10),
            chunk_delay_ms: 0,
            cut_after_events: None,
        }],
        vec![],
    );
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "[providers.thinker]\napi = \"openai-chat\"\nbase_url = \"{}/v1\"\nmodel = \"planner-model\"\n\n[routing]\nplanner = \"thinker\"\n",
            planner.url()
        ),
    )
    .unwrap();
    let main = mock(
        vec![text("All planned work is done.")],
        vec![("PLANNED-ONE", writes("w", "one.txt", "1\n", "one written"))],
    );
    let run = env.run(&main, "PLAN-ME: write one.txt", &["--no-checks", "--plan"]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let asked = planner.model_requests();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].body["model"], "planner-model");
    assert_eq!(tool_names(&asked[0]), ["update_plan"]);
    assert!(asked[0].body.to_string().contains("PLAN-ME"));
    let started = started_of(&run.events);
    assert_eq!(started.len(), 1);
    assert_eq!(started[0].plan_node.as_deref(), Some("one"));
    // The main model finishes, told the plan's result.
    let last = main.model_requests().pop().unwrap();
    assert_eq!(last.body["model"], "mock-model");
    assert!(last.body.to_string().contains("completed"));
    assert_eq!(run.finished().0, TaskStatus::Completed);
    assert!(run.worktree().join("one.txt").exists());
}

#[test]
fn a_child_stops_at_its_token_cap_and_at_its_wall_time_cap() {
    // Tokens: each response counts 120 (usage 100 + 20); the cap is 200.
    let env = Env::new();
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(
        env.home.join("config.toml"),
        "[subagents]\nmax_tokens = 200\n",
    )
    .unwrap();
    let read = |id: &str| tools(vec![call(id, "read_file", json!({"path": "README.md"}))]);
    let server = mock(
        vec![
            tools(vec![delegate("d1", "TOKENS: look around", &["notes.txt"])]),
            text("ok"),
        ],
        vec![(
            "TOKENS",
            vec![read("r1"), read("r2"), read("r3"), text("never")],
        )],
    );
    let run = env.run(&server, "look", &["--no-checks"]);
    assert_eq!(
        run.code(),
        Some(6),
        "nothing changed: answered; {}",
        run.stderr()
    );
    assert_eq!(requests_with(&server, "TOKENS").len(), 2);
    let finished = finished_of(&run.events);
    assert_eq!(finished[0].status, TaskStatus::BudgetExceeded);
    assert!(tool_result(&server, "d1").contains("token cap of 200"));

    // Wall time: a reply that streams for 20 s, a cap of 1 s.
    let env = Env::new();
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(
        env.home.join("config.toml"),
        "[subagents]\nmax_wall_secs = 1\n",
    )
    .unwrap();
    let server = mock(
        vec![
            tools(vec![delegate("d1", "SLOW: think", &["notes.txt"])]),
            text("ok"),
        ],
        vec![(
            "SLOW",
            vec![MockReply::Reply {
                text: "hmm ".repeat(200),
                tool_calls: vec![],
                usage: usage(10, 10),
                chunk_delay_ms: 100,
                cut_after_events: None,
            }],
        )],
    );
    let run = env.run(&server, "think", &["--no-checks"]);
    let finished = finished_of(&run.events);
    assert_eq!(finished[0].status, TaskStatus::BudgetExceeded);
    assert!(
        finished[0].summary.contains("wall-time cap of 1 s"),
        "{}",
        finished[0].summary
    );
    assert_eq!(run.finished().1, "ok");
}
