//! `bosun import`: Claude Code's and Codex's sessions (the fixtures in tests/fixtures, written from
//! each tool's documented format) in `bosun history` and `bosun costs`, with their source and the
//! totals their tokens cost at Bosun's prices; a re-scan adds nothing, appended lines are the
//! only ones read, a malformed line is counted, the statistics leave them out, and they are
//! read-only. The real home is never read: HOME, CLAUDE_CONFIG_DIR and CODEX_HOME are temporary.

use super::support::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

const CLAUDE_SESSION: &str = "cc-0b5e1a3c-6f1d-4a57-9d2e-2c8f3b7a9e10";
const CLAUDE_AGENT: &str = "cc-agent-7f3a9c21";
const CODEX_SESSION: &str = "codex-5f2c8e1a-9b7d-4c3e-a1f0-6d2b8c4e7a93";

/// The fixtures' costs (tests/fixtures/*/README.md): tokens × the price table's rates.
const CLAUDE_COST: f64 = 0.008_580 + 0.010_290 + 0.005_481 + 0.001_900;
const CODEX_COST: f64 = 0.006_875 + 0.007_000;

struct Homes {
    env: Env,
    claude: PathBuf,
    codex: PathBuf,
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A journal and copies of the fixtures where `CLAUDE_CONFIG_DIR` and `CODEX_HOME` point.
fn homes() -> Homes {
    let env = Env::new();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let claude = env.dir.path().join("claude");
    let codex = env.dir.path().join("codex");
    copy_dir(&fixtures.join("claude-code"), &claude);
    copy_dir(&fixtures.join("codex"), &codex);
    Homes { env, claude, codex }
}

impl Homes {
    fn bosun(&self) -> Command {
        let mut cmd = self.env.bosun();
        cmd.env("HOME", self.env.dir.path().join("user"))
            .env("CLAUDE_CONFIG_DIR", &self.claude)
            .env("CODEX_HOME", &self.codex);
        cmd
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = self.bosun().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "bosun {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// `bosun show TASK --json`: the task's events, one JSON object a line.
    fn events(&self, task: &str) -> Vec<Value> {
        let out = self
            .bosun()
            .args(["show", task, "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// `bosun import --json`: each source's counts, by source.
    fn import(&self) -> (Value, Value) {
        let r = self.json(&["import", "--json"]);
        let of = |s: &str| {
            r.as_array()
                .unwrap()
                .iter()
                .find(|x| x["source"] == s)
                .cloned()
                .unwrap_or_else(|| panic!("no {s} in {r}"))
        };
        (of("claude-code"), of("codex"))
    }

    /// `bosun costs --by source`: cost and responses by source.
    fn costs_by_source(&self) -> Vec<(String, f64, u64)> {
        let rows = self.json(&["costs", "--by", "source", "--json"]);
        let mut v: Vec<(String, f64, u64)> = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["key"].as_str().unwrap().to_string(),
                    r["figure"]["cost_usd"].as_f64().unwrap(),
                    r["figure"]["responses"].as_u64().unwrap(),
                )
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }
}

fn counts(r: &Value) -> Value {
    json!({
        "files": r["files"], "new_sessions": r["new_sessions"], "lines": r["lines"],
        "malformed": r["malformed"], "unknown": r["unknown"], "events": r["events"],
        "responses": r["responses"],
    })
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn fixtures_appear_in_history_and_costs_with_the_expected_totals() {
    let h = homes();
    let (claude, codex) = h.import();
    // Claude Code: 12 + 2 lines, one cut off (malformed), one file-history snapshot (unknown);
    // the session's 11 events and the sub-agent's 4; msg_01 streamed as three lines counts once.
    assert_eq!(
        counts(&claude),
        json!({"files": 2, "new_sessions": 2, "lines": 14, "malformed": 1, "unknown": 1,
               "events": 15, "responses": 4})
    );
    // Codex: 20 lines, one cut off, one web search call; the repeated token count adds nothing.
    assert_eq!(
        counts(&codex),
        json!({"files": 1, "new_sessions": 1, "lines": 20, "malformed": 1, "unknown": 1,
               "events": 9, "responses": 2})
    );

    let costs = h.costs_by_source();
    assert_eq!(costs.len(), 2, "{costs:?}");
    assert_eq!((costs[0].0.as_str(), costs[0].2), ("claude-code", 4));
    assert!(close(costs[0].1, CLAUDE_COST), "{costs:?}");
    assert_eq!((costs[1].0.as_str(), costs[1].2), ("codex", 2));
    assert!(close(costs[1].1, CODEX_COST), "{costs:?}");

    // Tokens by class, the 1-hour cache writes apart, Codex's cached and reasoning tokens
    // taken out of its input and output.
    let all = h.json(&["costs", "--json"]);
    assert_eq!(
        all["all"]["tokens"],
        json!({"input": 117 + 3000, "cache_read": 8500 + 9000, "cache_write_5m": 2800,
               "cache_write_1h": 1800, "output": 390 + 400, "reasoning": 500})
    );
    assert!(close(
        all["all"]["cost_usd"].as_f64().unwrap(),
        CLAUDE_COST + CODEX_COST
    ));
    // A sub-agent's response is its own task's.
    let by_task = h.json(&["costs", "--by", "task", "--json"]);
    let agent = by_task
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == CLAUDE_AGENT)
        .unwrap();
    assert!(close(agent["figure"]["cost_usd"].as_f64().unwrap(), 0.0019));

    // History: the two sessions (the sub-agent is under its parent), with their source,
    // searchable by what was said and done.
    let page = h.json(&["history", "--json"]);
    let mut listed: Vec<(String, String, String)> = page["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| {
            let t = &hit["task"];
            (
                t["id"].as_str().unwrap().to_string(),
                t["source"].as_str().unwrap_or("").to_string(),
                t["prompt"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        [
            (
                CLAUDE_SESSION.to_string(),
                "claude-code".to_string(),
                "Fix the failing test in src/parser.rs".to_string()
            ),
            (
                CODEX_SESSION.to_string(),
                "codex".to_string(),
                "Add a --verbose flag to the CLI".to_string()
            ),
        ]
    );
    // Filtered and counted by source.
    let ids = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["history", "--json"];
        all.extend_from_slice(args);
        let page = h.json(&all);
        let mut ids: Vec<String> = page["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|hit| hit["task"]["id"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(ids(&["source:claude-code"]), [CLAUDE_SESSION]);
    assert_eq!(ids(&["source:Claude"]), [CLAUDE_SESSION]);
    assert_eq!(ids(&["source:codex"]), [CODEX_SESSION]);
    assert_eq!(ids(&["source:codex,claude-code"]).len(), 2);
    assert!(ids(&["source:bosun"]).is_empty());
    let mut sources: Vec<(String, u64)> = page["facets"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["value"].as_str().unwrap().to_string(),
                f["count"].as_u64().unwrap(),
            )
        })
        .collect();
    sources.sort();
    assert_eq!(
        sources,
        [("claude-code".to_string(), 1), ("codex".to_string(), 1)]
    );
    let out = h
        .bosun()
        .args(["history", "source:aider"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown source `aider`") && err.contains("bosun, claude-code, codex"),
        "{err}"
    );
    let found = h.json(&["history", "--json", "empty_input"]);
    assert_eq!(found["hits"][0]["task"]["id"], CLAUDE_SESSION, "{found}");
    let found = h.json(&["history", "--json", "parse_args"]);
    assert_eq!(found["hits"][0]["task"]["id"], CODEX_SESSION, "{found}");
    let out = h.bosun().arg("history").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("[claude-code] Fix the failing test"),
        "{text}"
    );
    assert!(text.contains("[codex] Add a --verbose flag"), "{text}");

    // The transcript: the journal's usual events.
    let show = h.events(CLAUDE_SESSION);
    let kinds: Vec<&str> = show.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "task_started",
            "user_message",
            "assistant_message",
            "tool_call_begin",
            "usage",
            "tool_call_end",
            "tool_call_begin",
            "usage",
            "tool_call_end",
            "assistant_message",
            "usage"
        ]
    );
    // Read as text, the assistant's words are there (they never streamed as deltas).
    let out = h.bosun().args(["show", CLAUDE_SESSION]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for said in [
        "I'll read the parser first.",
        "Fixed: `parse` now returns no tokens for empty input, and the parser tests pass.",
    ] {
        assert_eq!(text.matches(said).count(), 1, "{said}: {text}");
    }
    assert!(!text.contains("worktree"), "{text}");
}

#[test]
fn a_rescan_adds_nothing() {
    let h = homes();
    h.import();
    let before = (
        h.costs_by_source(),
        h.json(&["history", "--json"])["total"].clone(),
    );
    let (claude, codex) = h.import();
    for r in [&claude, &codex] {
        assert_eq!(
            (
                &r["lines"],
                &r["events"],
                &r["new_sessions"],
                &r["files_read"]
            ),
            (&json!(0), &json!(0), &json!(0), &json!(0)),
            "{r}"
        );
    }
    let after = (
        h.costs_by_source(),
        h.json(&["history", "--json"])["total"].clone(),
    );
    assert_eq!(after, before);
}

#[test]
fn lines_appended_to_a_session_are_the_only_ones_read() {
    let h = homes();
    h.import();
    let file = h
        .claude
        .join("projects/-home-dev-shop/0b5e1a3c-6f1d-4a57-9d2e-2c8f3b7a9e10.jsonl");
    let user = json!({"type": "user", "sessionId": "0b5e1a3c-6f1d-4a57-9d2e-2c8f3b7a9e10",
        "cwd": "/home/dev/shop", "version": "2.0.14", "uuid": "u-11", "parentUuid": "u-9",
        "isSidechain": false, "timestamp": "2025-10-14T09:05:00.000Z",
        "message": {"role": "user", "content": "Now add a test for it"}});
    let assistant = json!({"type": "assistant", "sessionId": "0b5e1a3c-6f1d-4a57-9d2e-2c8f3b7a9e10",
        "cwd": "/home/dev/shop", "version": "2.0.14", "uuid": "u-12", "parentUuid": "u-11",
        "isSidechain": false, "timestamp": "2025-10-14T09:05:09.000Z", "requestId": "req_05",
        "message": {"id": "msg_05", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": "Added parser::tests::empty_input_is_empty."}],
            "usage": {"input_tokens": 4, "output_tokens": 60, "cache_read_input_tokens": 5000,
                "cache_creation_input_tokens": 0,
                "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}}}});
    // Half a line: still being written, so read by the scan after it is whole.
    let mut text = format!("{user}\n{assistant}\n");
    let partial = r#"{"type":"user","message":{"role":"user","content":"and"#;
    text.push_str(partial);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
    drop(f);

    let (claude, codex) = h.import();
    assert_eq!(
        counts(&claude),
        json!({"files": 2, "new_sessions": 0, "lines": 2, "malformed": 0, "unknown": 0,
               "events": 3, "responses": 1})
    );
    assert_eq!(codex["lines"], 0);
    // 4 × $3 + 60 × $15 + 5000 × $0.30 per million.
    let added = (4.0 * 3.0 + 60.0 * 15.0 + 5000.0 * 0.3) / 1e6;
    let costs = h.costs_by_source();
    assert!(close(costs[0].1, CLAUDE_COST + added), "{costs:?}");
    assert_eq!(costs[0].2, 5);

    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    std::io::Write::write_all(&mut f, b" one more\"}}\n").unwrap();
    drop(f);
    let (claude, _) = h.import();
    assert_eq!(
        (&claude["lines"], &claude["events"]),
        (&json!(1), &json!(1))
    );
    let last = h.events(CLAUDE_SESSION).last().unwrap().clone();
    assert_eq!(
        (&last["type"], &last["text"]),
        (&json!("user_message"), &json!("and one more"))
    );
}

#[test]
fn imported_sessions_stay_out_of_the_statistics() {
    let h = homes();
    h.import();
    assert_eq!(h.json(&["stats", "--json"]), json!([]));
}

#[test]
fn an_imported_session_is_read_only() {
    let h = homes();
    h.import();
    for args in [
        vec!["continue", CLAUDE_SESSION, "--prompt", "go on"],
        vec!["resume", CODEX_SESSION],
        vec!["merge", CLAUDE_SESSION],
        vec!["accept", CODEX_SESSION, "--all"],
        vec!["review", CLAUDE_SESSION],
        vec!["diff", CODEX_SESSION],
        vec!["restore", CLAUDE_SESSION, "0"],
        vec!["undo", CLAUDE_SESSION],
        vec!["comment", CODEX_SESSION, "src/lib.rs:1", "why?"],
        vec!["request-changes", CLAUDE_SESSION],
        vec!["checks", CLAUDE_SESSION, "--run"],
        vec!["checks", CODEX_SESSION, "--accepted"],
        vec![
            "export",
            CLAUDE_SESSION,
            "--patch",
            "/tmp/never-written.patch",
        ],
    ] {
        let out = h.bosun().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("read by `bosun import`: it is read-only"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn no_folder_to_import_from_is_a_usage_error_saying_where_it_looked() {
    let env = Env::new();
    let nowhere = env.dir.path().join("nowhere");
    let out = env
        .bosun()
        .env("HOME", &nowhere)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .arg("import")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let claude = nowhere.join(".claude/projects");
    let codex = nowhere.join(".codex/sessions");
    assert!(stderr.contains(path_str(&claude)), "{stderr}");
    assert!(stderr.contains(path_str(&codex)), "{stderr}");
}

const CODEX_FILE: &str =
    "sessions/2025/10/14/rollout-2025-10-14T10-00-00-5f2c8e1a-9b7d-4c3e-a1f0-6d2b8c4e7a93.jsonl";

/// A Claude Code line of session `sid` (cwd /home/dev/vault).
fn claude_line(sid: &str, kind: &str, ts: &str, message: Value) -> String {
    json!({"type": kind, "sessionId": sid, "cwd": "/home/dev/vault", "version": "2.0.14",
        "uuid": format!("{sid}-{ts}"), "isSidechain": false, "timestamp": ts,
        "requestId": "req_v1", "message": message})
    .to_string()
}

fn append(file: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .unwrap();
    std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
}

/// Appends a Codex `event_msg` line (`user_message`, `agent_message`) to `file`.
fn append_codex_event(file: &Path, ts: &str, kind: &str, message: &str) {
    let line = json!({"timestamp": ts, "type": "event_msg",
        "payload": {"type": kind, "message": message}});
    append(file, &format!("{line}\n"));
}

#[test]
fn secrets_in_an_imported_transcript_are_redacted_before_the_journal() {
    let h = homes();
    let github = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
    let env_secret = "correct-horse-battery-staple-42";
    let sid = "5ec0e7a1-0000-4000-8000-000000000001";
    let dir = h.claude.join("projects/-home-dev-vault");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{sid}.jsonl"));
    let lines = [
        claude_line(
            sid,
            "user",
            "2025-10-15T08:00:00.000Z",
            json!({"role": "user", "content": format!("Deploy with token {github}")}),
        ),
        claude_line(
            sid,
            "assistant",
            "2025-10-15T08:00:02.000Z",
            json!({"id": "msg_v1", "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [{"type": "text", "text": format!("Using {env_secret} as asked.")},
                    {"type": "tool_use", "id": "toolu_v1", "name": "Bash",
                     "input": {"command": format!("curl -H 'Authorization: token {github}' x")}}],
                "usage": {"input_tokens": 10, "output_tokens": 20}}),
        ),
        claude_line(
            sid,
            "user",
            "2025-10-15T08:00:03.000Z",
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_v1",
                "content": format!("echoed {github} and {env_secret}")}]}),
        ),
    ];
    append(&file, &format!("{}\n", lines.join("\n")));

    let out = h
        .bosun()
        .args(["import", "--claude"])
        .arg(&h.claude)
        .env("DEPLOY_PASSWORD", env_secret)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("5 secrets redacted"), "{stdout}");

    let task = format!("cc-{sid}");
    let shown = serde_json::to_string(&h.events(&task)).unwrap();
    assert!(
        !shown.contains(&github) && !shown.contains(env_secret),
        "{shown}"
    );
    assert!(shown.contains("[REDACTED:github_token]"), "{shown}");
    assert!(shown.contains("[REDACTED:env:DEPLOY_PASSWORD]"), "{shown}");
    // Each event that had a secret is followed by a `redacted` event saying so.
    let redacted = h
        .events(&task)
        .iter()
        .filter(|e| e["type"] == "redacted")
        .count();
    assert_eq!(redacted, 4, "{shown}");
    let history = h.json(&["history", "--json"]).to_string();
    assert!(!history.contains(&github), "{history}");
    // Nothing of either secret in the journal's file, whatever table.
    for entry in walk(&h.env.home) {
        let bytes = std::fs::read(&entry).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains(&github) && !text.contains(env_secret),
            "{} holds a secret",
            entry.display()
        );
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn a_streamed_message_costs_its_last_lines_output_even_across_scans() {
    let h = homes();
    let sid = "5ec0e7a1-0000-4000-8000-000000000002";
    let dir = h.claude.join("projects/-home-dev-vault");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{sid}.jsonl"));
    let message = |block: Value, output: u64| {
        json!({"id": "msg_s1", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5-20250929", "content": [block],
            "usage": {"input_tokens": 100, "output_tokens": output}})
    };
    // Claude Code writes a streamed message a block a line, each with the usage so far.
    append(
        &file,
        &format!(
            "{}\n{}\n",
            claude_line(
                sid,
                "user",
                "2025-10-15T09:00:00.000Z",
                json!({"role": "user", "content": "Explain the parser"})
            ),
            claude_line(
                sid,
                "assistant",
                "2025-10-15T09:00:01.000Z",
                message(json!({"type": "text", "text": "It reads tokens."}), 1)
            ),
        ),
    );
    h.import();
    let task = format!("cc-{sid}");
    let tokens = |h: &Homes| {
        let t = h.json(&["costs", "--by", "task", "--json"]);
        let row = t
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["key"] == task.as_str())
            .cloned()
            .unwrap_or_else(|| panic!("no {task} in {t}"));
        (
            row["figure"]["tokens"]["output"].as_u64().unwrap(),
            row["figure"]["cost_usd"].as_f64().unwrap(),
        )
    };
    let (output, cost) = tokens(&h);
    assert_eq!(output, 1);
    assert!(close(cost, (100.0 * 3.0 + 15.0) / 1e6), "{cost}");

    // The message's later lines, read by the next scan, carry its whole output.
    append(
        &file,
        &format!(
            "{}\n{}\n",
            claude_line(
                sid,
                "assistant",
                "2025-10-15T09:00:02.000Z",
                message(json!({"type": "text", "text": "Then it folds them."}), 180)
            ),
            claude_line(
                sid,
                "assistant",
                "2025-10-15T09:00:03.000Z",
                message(
                    json!({"type": "tool_use", "id": "toolu_s1", "name": "Read",
                        "input": {"file_path": "src/parser.rs"}}),
                    240
                )
            ),
        ),
    );
    let (claude, _) = h.import();
    assert_eq!(
        claude["responses"], 0,
        "a correction, not a new response: {claude}"
    );
    let (output, cost) = tokens(&h);
    assert_eq!(output, 240);
    assert!(close(cost, (100.0 * 3.0 + 240.0 * 15.0) / 1e6), "{cost}");

    // Read whole in one scan (another journal), the same totals.
    let fresh = homes();
    let dir = fresh.claude.join("projects/-home-dev-vault");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&file, dir.join(format!("{sid}.jsonl"))).unwrap();
    fresh.import();
    assert_eq!(tokens(&fresh), (240, cost));
}

#[test]
fn the_same_files_through_another_path_a_move_or_a_copy_are_not_read_twice() {
    let h = homes();
    h.import();
    let before = h.costs_by_source();
    let total = h.json(&["history", "--json"])["total"].clone();

    // Another spelling of the same folder: a symbolic link, a relative path.
    let link = h.env.dir.path().join("claude-link");
    std::os::unix::fs::symlink(&h.claude, &link).unwrap();
    let out = h
        .bosun()
        .args(["import", "--json", "--claude"])
        .arg(&link)
        .args(["--codex", "codex"])
        .current_dir(h.env.dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    for s in r.as_array().unwrap() {
        assert_eq!((&s["lines"], &s["events"]), (&json!(0), &json!(0)), "{s}");
    }
    assert_eq!(h.costs_by_source(), before);

    // A moved session goes on where it was read to: only the lines added after are read.
    let old = h.codex.join(CODEX_FILE);
    let moved = h
        .codex
        .join("sessions/2025/10/15/rollout-2025-10-14T10-00-00-5f2c8e1a-9b7d-4c3e-a1f0-6d2b8c4e7a93.jsonl");
    std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
    std::fs::rename(&old, &moved).unwrap();
    let (_, codex) = h.import();
    assert_eq!(
        (&codex["lines"], &codex["events"]),
        (&json!(0), &json!(0)),
        "{codex}"
    );
    append_codex_event(
        &moved,
        "2025-10-14T10:01:00.000Z",
        "agent_message",
        "Also documented it.",
    );
    let (_, codex) = h.import();
    assert_eq!(
        (&codex["lines"], &codex["events"]),
        (&json!(1), &json!(1)),
        "{codex}"
    );

    // A copy (a backup of the folder) is left alone and said so: no event, no cost twice.
    let backup = h.env.dir.path().join("codex-backup");
    copy_dir(&h.codex, &backup);
    let out = h
        .bosun()
        .args(["import", "--codex"])
        .arg(&backup)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("repeats the session imported from") && stdout.contains("0 new events"),
        "{stdout}"
    );
    assert_eq!(h.costs_by_source(), before);
    assert_eq!(h.json(&["history", "--json"])["total"], total);

    // The copy growing is still a copy: nothing of it goes to the session's task.
    append_codex_event(
        &backup.join(CODEX_FILE.replace("2025/10/14", "2025/10/15")),
        "2025-10-14T10:02:00.000Z",
        "user_message",
        "only in the backup",
    );
    let out = h
        .bosun()
        .args(["import", "--json", "--codex"])
        .arg(&backup)
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&r[0]["lines"], &r[0]["events"]),
        (&json!(1), &json!(0)),
        "{r}"
    );
    let shown = serde_json::to_string(&h.events(CODEX_SESSION)).unwrap();
    assert!(!shown.contains("only in the backup"), "{shown}");
}

#[test]
fn a_deleted_imported_session_stays_deleted_when_its_file_grows() {
    let h = homes();
    h.import();
    let out = h.bosun().args(["delete", CODEX_SESSION]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    append_codex_event(
        &h.codex.join(CODEX_FILE),
        "2025-10-14T10:01:00.000Z",
        "user_message",
        "one more thing",
    );
    let (_, codex) = h.import();
    assert_eq!(
        (&codex["lines"], &codex["events"], &codex["new_sessions"]),
        (&json!(1), &json!(0), &json!(0)),
        "{codex}"
    );
    let history = h.json(&["history", "--json"]).to_string();
    assert!(!history.contains(CODEX_SESSION), "{history}");
}

#[test]
fn a_resumed_session_in_a_new_file_is_its_own_session_and_its_copied_responses_count_once() {
    let h = homes();
    h.import();
    let before = h.costs_by_source();
    // Claude Code's resume: a new file starting with the old session's lines, then new ones.
    let dir = h.claude.join("projects/-home-dev-shop");
    let old =
        std::fs::read_to_string(dir.join("0b5e1a3c-6f1d-4a57-9d2e-2c8f3b7a9e10.jsonl")).unwrap();
    let new_id = "9d0c2b1a-0000-4000-8000-00000000000f";
    let next = json!({"type": "assistant", "sessionId": new_id, "cwd": "/home/dev/shop",
        "version": "2.0.14", "uuid": "r-1", "isSidechain": false,
        "timestamp": "2025-10-16T09:00:00.000Z", "requestId": "req_r1",
        "message": {"id": "msg_r1", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": "Picked up where we left off."}],
            "usage": {"input_tokens": 1000, "output_tokens": 100}}});
    std::fs::write(
        dir.join(format!("{new_id}.jsonl")),
        format!("{old}{next}\n"),
    )
    .unwrap();
    let (claude, _) = h.import();
    assert_eq!(
        (&claude["new_sessions"], &claude["responses"]),
        (&json!(1), &json!(1)),
        "{claude}"
    );
    assert!(claude["copies"].as_array().unwrap().is_empty(), "{claude}");
    let after = h.costs_by_source();
    // Only the new response: 1000 × $3 + 100 × $15 per million.
    assert!(
        close(after[0].1, before[0].1 + 0.0045),
        "{before:?} → {after:?}"
    );
    let shown = h.events(&format!("cc-{new_id}"));
    assert!(
        shown
            .iter()
            .any(|e| e["text"] == "Picked up where we left off."),
        "{shown:?}"
    );
}
