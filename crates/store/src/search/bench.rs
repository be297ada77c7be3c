//! `bosun bench history`: a generated journal of N tasks and M events (a realistic mix: prompts,
//! streamed assistant text, tool calls with streamed output, checkpoints, usage, checks, review
//! comments), built once and reused, then the time to the first page for typical searches.

use crate::{HistoryQuery, NewTask, Store, StoreError};
use bosun_protocol::{
    ApprovalDecision, ApprovalResolved, AssistantDelta, AssistantMessage, CallId, CheckFinished,
    CheckScope, CheckStarted, CheckStatus, CheckpointCreated, ErrorEvent, Event, EventMsg,
    OutputStream, Rates, ReviewEvent, TaskFinished, TaskId, TaskStatus, ToolCallBegin, ToolCallEnd,
    ToolCallStatus, ToolOutputDelta, UsageEvent, UserMessage,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use time::OffsetDateTime;

/// Target for the first page of a search (the issue's).
const TARGET: Duration = Duration::from_millis(100);
const RUNS: usize = 20;
/// A word put in the output of one task in 2 000.
pub const RARE: &str = "xylophonequartz";

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    /// Zipf-like: small indexes far more often.
    fn skewed(&mut self, n: usize) -> usize {
        let a = self.below(n);
        self.below(a + 1)
    }
}

/// About 400 pseudo-words (`ka`, `kalo`, `kalomi`, …) plus the words of code and shells.
fn vocabulary() -> Vec<String> {
    let syllables = [
        "ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "zu", "pe", "do", "fi",
    ];
    let mut words: Vec<String> = [
        "error", "test", "cargo", "build", "src", "main", "fn", "let", "warning", "file", "line",
        "passed", "failed", "function", "return", "struct", "impl", "module", "import", "config",
    ]
    .iter()
    .map(|w| w.to_string())
    .collect();
    for a in syllables {
        for b in syllables {
            words.push(format!("{a}{b}"));
            for c in ["x", "n"] {
                words.push(format!("{a}{b}{c}"));
            }
        }
    }
    words.truncate(420);
    words
}

fn sentence(rng: &mut Rng, vocab: &[String], n: usize) -> String {
    (0..n)
        .map(|_| vocab[rng.skewed(vocab.len())].as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The journal for `tasks` and `events` in `dir` (built when missing).
pub fn journal(
    tasks: usize,
    events: usize,
    dir: &Path,
    out: &mut dyn Write,
) -> Result<PathBuf, StoreError> {
    // v5: the generator's usage, outcomes and reviews changed with schema 5; an older file is
    // not reused.
    let path = dir.join(format!("journal-v5b-{tasks}-{events}.db"));
    if path.exists() {
        let _ = writeln!(out, "reusing {}", path.display());
        return Ok(path);
    }
    let partial = dir.join(format!("journal-v5b-{tasks}-{events}.db.partial"));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", partial.display()));
    }
    let store = Store::open(&partial)?;
    let vocab = vocabulary();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let start = Instant::now();
    let now = OffsetDateTime::now_utc();
    let per_task = (events / tasks.max(1)).max(4);
    let repos = [
        "/src/app",
        "/src/web",
        "/src/api",
        "/src/tools",
        "/src/infra",
        "/src/docs",
    ];
    let models = MODELS;
    let mut batch: Vec<Event> = Vec::with_capacity(20_000);
    let mut reviewed: Vec<TaskId> = Vec::new();
    for t in 0..tasks {
        let id = format!("01bench{t:08}");
        // Spread over the last 120 days, in order.
        let created =
            now - Duration::from_secs(((tasks - t) as u64 * SPAN_SECS) / tasks.max(1) as u64);
        let ts = rfc3339(created);
        let model = &models[rng.skewed(models.len())];
        let outcome = Scenario::pick(&mut rng);
        let prompt = format!(
            "{} {}",
            sentence(&mut rng, &vocab, 6),
            sentence(&mut rng, &vocab, 10)
        );
        store.create_task(&NewTask {
            id: TaskId::from(id.as_str()),
            repo: repos[rng.skewed(repos.len())].into(),
            prompt: prompt.clone(),
            base_commit: "0".repeat(40),
            branch: format!("bosun/{id}"),
            worktree: format!("/w/{id}"),
            provider: "bench".into(),
            model: model.name.into(),
            created_at: ts.clone(),
            owner_pid: 1,
            owner_started: None,
            max_steps: 50,
            max_cost_usd: None,
            parent_task_id: None,
            role: None,
            depth: 0,
        })?;
        let first = batch.len();
        let mut seq = 0;
        // Events 7 s apart from the task's start.
        let mut push = |msg: EventMsg, batch: &mut Vec<Event>| {
            seq += 1;
            batch.push(Event {
                seq,
                task_id: TaskId::from(id.as_str()),
                ts: rfc3339(created + Duration::from_secs(seq * 7)),
                msg,
            });
        };
        push(
            EventMsg::UserMessage(UserMessage {
                text: prompt,
                origin: None,
            }),
            &mut batch,
        );
        let mut n = 1;
        let mut checkpoint = 0;
        while n + 12 < per_task {
            let call = CallId::from(format!("call_{n}").as_str());
            for _ in 0..3 {
                push(
                    EventMsg::AssistantDelta(AssistantDelta {
                        text: sentence(&mut rng, &vocab, 4),
                    }),
                    &mut batch,
                );
            }
            push(
                EventMsg::AssistantMessage(AssistantMessage {
                    text: sentence(&mut rng, &vocab, 20),
                }),
                &mut batch,
            );
            let command = if rng.below(4) == 0 {
                "cargo test".to_string()
            } else {
                format!("grep -rn {} src", vocab[rng.skewed(vocab.len())])
            };
            push(
                EventMsg::ToolCallBegin(ToolCallBegin {
                    call_id: call.clone(),
                    tool: "run_command".into(),
                    args: serde_json::json!({"command": command}),
                    recovered: false,
                }),
                &mut batch,
            );
            let mut output = String::new();
            for _ in 0..4 {
                let chunk = format!("{}\n", sentence(&mut rng, &vocab, 25));
                output.push_str(&chunk);
                push(
                    EventMsg::ToolOutputDelta(ToolOutputDelta {
                        call_id: call.clone(),
                        stream: OutputStream::Stdout,
                        chunk,
                    }),
                    &mut batch,
                );
            }
            if t % 2000 == 7 && n == 1 {
                output.push_str(RARE);
            }
            push(
                EventMsg::ToolCallEnd(ToolCallEnd {
                    call_id: call.clone(),
                    status: ToolCallStatus::Success,
                    exit_code: Some(0),
                    error: None,
                    output,
                    duration_ms: 40,
                }),
                &mut batch,
            );
            checkpoint += 1;
            let files = vec![format!("src/{}.rs", vocab[rng.below(vocab.len())])];
            push(
                EventMsg::CheckpointCreated(CheckpointCreated {
                    checkpoint,
                    commit: format!("{checkpoint:040x}"),
                    files,
                    call_id: Some(call),
                }),
                &mut batch,
            );
            let step = n / 12;
            push(
                EventMsg::Usage(model.usage(&mut rng, step as u64)),
                &mut batch,
            );
            if step == 2 {
                for msg in outcome.middle(&mut rng, &call_for(n)) {
                    push(msg, &mut batch);
                }
            }
            n += 12;
        }
        let tail = outcome.tail(&mut rng, &vocab);
        // Fill up to the task's share of the events with streamed text.
        while batch.len() - first + tail.len() < per_task {
            push(
                EventMsg::AssistantDelta(AssistantDelta {
                    text: sentence(&mut rng, &vocab, 4),
                }),
                &mut batch,
            );
        }
        for msg in tail {
            push(msg, &mut batch);
        }
        if outcome.review == Review::AllAccepted {
            reviewed.push(TaskId::from(id.as_str()));
        }
        if batch.len() >= 10_000 || t + 1 == tasks {
            store.append_events(&batch)?;
            batch.clear();
            // "Every hunk decided" needs the diff, which only the review knows: as it would.
            for task in reviewed.drain(..) {
                store.set_review_state(&task, "reviewed")?;
            }
            let _ = write!(
                out,
                "\rbuilding: {}/{tasks} tasks, {:.0} s",
                t + 1,
                start.elapsed().as_secs_f64()
            );
            let _ = out.flush();
        }
    }
    let _ = writeln!(out);
    drop(store);
    std::fs::rename(&partial, &path).map_err(|source| StoreError::CreateDir {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

fn call_for(n: usize) -> CallId {
    CallId::from(format!("call_{n}").as_str())
}

/// The generated journal's time span: about 120 days, so the 30- and 90-day charts are full.
const SPAN_SECS: u64 = 120 * 86_400;

/// A model of the generated journal: its rates (None: unpriced, a local model) and how its
/// responses' tokens look.
struct BenchModel {
    name: &'static str,
    rates: Option<[f64; 6]>,
    /// The provider reports its own cost (OpenRouter).
    reported: bool,
    /// Writes to the cache (Anthropic), and for an hour too.
    writes: bool,
    reasons: bool,
}

const MODELS: [BenchModel; 7] = [
    BenchModel {
        name: "claude-sonnet-4-5",
        rates: Some([3.0, 15.0, 0.3, 3.75, 6.0, 15.0]),
        reported: false,
        writes: true,
        reasons: false,
    },
    BenchModel {
        name: "gpt-5",
        rates: Some([1.25, 10.0, 0.125, 0.0, 0.0, 10.0]),
        reported: false,
        writes: false,
        reasons: true,
    },
    BenchModel {
        name: "gpt-5-mini",
        rates: Some([0.25, 2.0, 0.025, 0.0, 0.0, 2.0]),
        reported: false,
        writes: false,
        reasons: true,
    },
    BenchModel {
        name: "claude-opus-4-1",
        rates: Some([15.0, 75.0, 1.5, 18.75, 30.0, 75.0]),
        reported: false,
        writes: true,
        reasons: false,
    },
    BenchModel {
        name: "deepseek/deepseek-chat-v3.1",
        rates: Some([0.27, 1.1, 0.07, 0.0, 0.0, 1.1]),
        reported: true,
        writes: false,
        reasons: false,
    },
    BenchModel {
        name: "qwen3-coder",
        rates: None,
        reported: false,
        writes: false,
        reasons: false,
    },
    BenchModel {
        name: "gemini-2.5-pro",
        rates: Some([1.25, 10.0, 0.31, 0.0, 0.0, 10.0]),
        reported: false,
        writes: false,
        reasons: true,
    },
];

impl BenchModel {
    /// The usage of the `step`th response of a task: the cached prefix grows with the
    /// conversation.
    fn usage(&self, rng: &mut Rng, step: u64) -> UsageEvent {
        let cached = if step == 0 {
            0
        } else {
            4_000 + step * 3_000 + rng.below(2_000) as u64
        };
        let write = |rng: &mut Rng| 500 + rng.below(3_000) as u64;
        let mut u = UsageEvent {
            model: self.name.into(),
            input_tokens: 200 + rng.below(3_000) as u64,
            output_tokens: 80 + rng.below(1_500) as u64,
            cached_input_tokens: cached,
            cache_write_tokens: if self.writes { write(rng) } else { 0 },
            cache_write_1h_tokens: if self.writes && rng.below(4) == 0 {
                write(rng)
            } else {
                0
            },
            reasoning_tokens: if self.reasons {
                rng.below(3_000) as u64
            } else {
                0
            },
            cost_usd: None,
            total_cost_usd: 0.0,
            priced: false,
            rates: None,
            latency_ms: Some(
                600 + rng.below(9_000) as u64 + rng.below(2) as u64 * rng.below(20_000) as u64,
            ),
            reasoning: Vec::new(),
        };
        if let Some(
            [
                input,
                output,
                cache_read,
                cache_write,
                cache_write_1h,
                reasoning,
            ],
        ) = self.rates
        {
            let rates = Rates {
                input,
                output,
                cache_read,
                cache_write,
                cache_write_1h,
                reasoning,
                tier: None,
                source: if self.reported {
                    "provider"
                } else {
                    "litellm bench"
                }
                .into(),
                entry: self.name.into(),
            };
            let c = crate::usage::class_costs(&u, &rates);
            let cost =
                c.input + c.cache_read + c.cache_write + c.cache_write_1h + c.output + c.reasoning;
            u.cost_usd = Some(cost);
            u.priced = true;
            u.rates = Some(rates);
        }
        u
    }
}

/// How a generated task ends and what the user did along the way, so the metrics have
/// something to show.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Review {
    Unreviewed,
    Merged,
    AllAccepted,
    ChangesRequested,
}

struct Scenario {
    status: TaskStatus,
    review: Review,
    approval: Option<bool>,
    follow_up: bool,
    last_call_denied: bool,
    unknown_tool: bool,
    model_error: bool,
    /// Check rounds that failed before the last one (which passes unless the task ended
    /// `checks_failed`); none: the task ran no checks.
    failed_rounds: Option<u32>,
    /// A hunk rejected in the review (AllAccepted: then put back).
    rejects_hunk: bool,
}

/// The `check_finished` of a round's check.
fn check_finished(round: u32, passed: bool) -> CheckFinished {
    CheckFinished {
        check_id: format!("check_{round}"),
        name: "cargo test".into(),
        status: if passed {
            CheckStatus::Passed
        } else {
            CheckStatus::Failed
        },
        exit_code: Some(i32::from(!passed)),
        duration_ms: 4_000,
        summary: if passed {
            "passed"
        } else {
            "1 test failed: test_add"
        }
        .into(),
        failures: Vec::new(),
        required: true,
        scope: CheckScope::Full,
        only_before_task: false,
    }
}

/// A check's `check_started` and `check_finished`.
fn check_events(round: u32, passed: bool) -> [EventMsg; 2] {
    [
        EventMsg::CheckStarted(CheckStarted {
            check_id: format!("check_{round}"),
            name: "cargo test".into(),
            command: "cargo test".into(),
            round,
            scope: CheckScope::Full,
        }),
        EventMsg::CheckFinished(check_finished(round, passed)),
    ]
}

impl Scenario {
    fn pick(rng: &mut Rng) -> Scenario {
        let status = match rng.below(100) {
            0..=54 => TaskStatus::Completed,
            55..=64 => TaskStatus::Answered,
            65..=74 => TaskStatus::Failed,
            75..=82 => TaskStatus::ChecksFailed,
            83..=89 => TaskStatus::Interrupted,
            90..=94 => TaskStatus::BudgetExceeded,
            _ => TaskStatus::MaxSteps,
        };
        let review = match (status, rng.below(100)) {
            (TaskStatus::Answered, _) => Review::Unreviewed,
            (TaskStatus::Completed, 0..=39) => Review::Merged,
            (TaskStatus::Completed, 40..=59) => Review::AllAccepted,
            (_, 0..=9) => Review::ChangesRequested,
            _ => Review::Unreviewed,
        };
        Scenario {
            status,
            review,
            approval: (rng.below(10) == 0).then(|| rng.below(4) != 0),
            follow_up: rng.below(10) == 0,
            last_call_denied: status == TaskStatus::Failed && rng.below(3) == 0,
            unknown_tool: rng.below(40) == 0,
            model_error: status == TaskStatus::Failed && rng.below(2) == 0,
            failed_rounds: match status {
                TaskStatus::ChecksFailed => Some(1 + rng.below(2) as u32),
                TaskStatus::Completed if rng.below(2) == 0 => {
                    Some(rng.below(4).saturating_sub(2) as u32)
                }
                _ => None,
            },
            rejects_hunk: rng.below(5) == 0,
        }
    }

    /// Events in the middle of the task: an approval, a follow-up, a call of a missing tool.
    fn middle(&self, rng: &mut Rng, call: &CallId) -> Vec<EventMsg> {
        let mut out = Vec::new();
        if let Some(approved) = self.approval {
            let id = format!("ap_{}", rng.below(1 << 20));
            if let Ok(msg) = serde_json::from_value(serde_json::json!({
                "type": "approval_requested", "approval_id": id, "call_id": call.as_str(),
                "tool": "run_command", "action": {"kind": "command", "command": "rm -rf target"},
                "reason": "the command deletes files", "rule": "commands.ask \"rm\"",
                "source": "built-in", "suggestions": []
            })) {
                out.push(msg);
            }
            out.push(EventMsg::ApprovalResolved(ApprovalResolved {
                approval_id: id,
                call_id: call.clone(),
                decision: if approved {
                    ApprovalDecision::ApproveOnce
                } else {
                    ApprovalDecision::Deny
                },
                rule: None,
                rule_file: None,
                note: None,
                by: "you".into(),
            }));
        }
        if self.follow_up {
            out.push(EventMsg::UserMessage(UserMessage {
                text: "also update the tests".into(),
                origin: None,
            }));
        }
        if self.unknown_tool {
            out.push(EventMsg::ToolCallEnd(ToolCallEnd {
                call_id: CallId::from("call_missing"),
                status: ToolCallStatus::Error,
                exit_code: None,
                error: Some("there is no tool named \"browse\"; the tools are: read_file".into()),
                output: String::new(),
                duration_ms: 0,
            }));
        }
        out
    }

    /// The task's last events: how it ended, and its review.
    fn tail(&self, rng: &mut Rng, vocab: &[String]) -> Vec<EventMsg> {
        let mut out = Vec::new();
        if self.last_call_denied {
            out.push(EventMsg::ToolCallEnd(ToolCallEnd {
                call_id: CallId::from("call_denied"),
                status: ToolCallStatus::Denied,
                exit_code: None,
                error: Some("denied by the policy: commands.deny \"git push\"".into()),
                output: String::new(),
                duration_ms: 0,
            }));
        }
        if let Some(failed) = self.failed_rounds {
            for round in 1..=failed {
                out.extend(check_events(round, false));
            }
            if self.status != TaskStatus::ChecksFailed {
                out.extend(check_events(failed + 1, true));
            }
        }
        if self.model_error {
            out.push(EventMsg::Error(ErrorEvent {
                code: "model_error".into(),
                message: "the model's response could not be parsed after 3 attempts".into(),
            }));
        }
        // The last round's checks, as the loop reports them.
        let checks = match self.failed_rounds {
            Some(failed) if self.status == TaskStatus::ChecksFailed => {
                vec![check_finished(failed, false)]
            }
            Some(failed) => vec![check_finished(failed + 1, true)],
            None => Vec::new(),
        };
        out.push(EventMsg::TaskFinished(TaskFinished {
            status: self.status,
            summary: sentence(rng, vocab, 12),
            checks,
        }));
        match self.review {
            Review::Unreviewed => {}
            Review::AllAccepted | Review::Merged => {
                out.push(EventMsg::Review(ReviewEvent::Accept {
                    path: "src/lib.rs".into(),
                    hunks: vec!["h1".into(), "h2".into()],
                }));
                if self.rejects_hunk
                    && let Ok(msg) = serde_json::from_value(serde_json::json!({
                        "type": "review", "action": "reject", "path": "src/main.rs",
                        "hunks": [{"hunk": {"number": 1, "id": "h3", "kind": "text",
                            "state": "rejected", "old_start": 1, "old_lines": 1, "new_start": 1,
                            "new_lines": 1, "header": "@@ -1 +1 @@", "added": 1, "removed": 1,
                            "lines": [], "provenance": []}}]
                    }))
                {
                    out.push(msg);
                    if self.review == Review::AllAccepted {
                        // Put back and accepted after all.
                        out.push(EventMsg::Review(ReviewEvent::Unreject {
                            path: "src/main.rs".into(),
                            hunks: vec!["h3".into()],
                            checkpoint: None,
                            undoes: None,
                        }));
                    }
                }
                if self.review == Review::Merged
                    && let Ok(msg) = serde_json::from_value(serde_json::json!({
                        "type": "review", "action": "merge",
                        "outcome": {"branch": "main", "created": false, "commits": ["0".repeat(40)],
                            "files": 1, "hunks": 2, "left_out": 0, "checked_out": false,
                            "worktree": "/w", "worktree_bytes": 0},
                        "checks": []
                    }))
                {
                    out.push(msg);
                }
            }
            Review::ChangesRequested => {
                out.push(EventMsg::Review(ReviewEvent::RequestChanges {
                    comments: vec![1],
                }));
            }
        }
        out
    }
}

fn rfc3339(t: OffsetDateTime) -> String {
    const FORMAT: &[time::format_description::FormatItem<'static>] = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
    );
    t.format(FORMAT).unwrap_or_default()
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Builds (or reuses) the journal and prints its size with and without the index and the
/// medians of the first page's time for each kind of search.
pub fn run(tasks: usize, events: usize, dir: &Path, out: &mut dyn Write) -> Result<(), StoreError> {
    std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let path = journal(tasks, events, dir, out)?;
    let store = Store::open(&path)?;
    let conn = store.conn();
    let (count, indexed): (u64, u64) = conn.query_row(
        "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM search)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let page: u64 = conn.pragma_query_value(None, "page_size", |r| r.get(0))?;
    let pages: u64 = conn.pragma_query_value(None, "page_count", |r| r.get(0))?;
    // The index's tables: `search_content` holds a copy of the text (for snippets),
    // `search_data` the inverted index, `search_docsize` the token counts.
    let fts_pages: Option<u64> = conn
        .query_row(
            "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'search%'",
            [],
            |r| r.get(0),
        )
        .ok();
    let content: Option<u64> = conn
        .query_row(
            "SELECT sum(pgsize) FROM dbstat WHERE name = 'search_content'",
            [],
            |r| r.get(0),
        )
        .ok();
    drop(conn);
    let total = page * pages;
    let _ = writeln!(
        out,
        "journal: {tasks} tasks, {count} events, {indexed} indexed rows"
    );
    match fts_pages {
        Some(fts) => {
            let _ = writeln!(
                out,
                "size: {:.1} MiB without the index, {:.1} MiB with it (the index: {:.1} MiB, +{:.0}%)",
                mib(total - fts),
                mib(total),
                mib(fts),
                100.0 * fts as f64 / (total - fts).max(1) as f64
            );
            if let Some(content) = content {
                let _ = writeln!(
                    out,
                    "  of which the text copied for snippets: {:.1} MiB; the inverted index and sizes: {:.1} MiB",
                    mib(content),
                    mib(fts - content)
                );
            }
        }
        None => {
            let _ = writeln!(
                out,
                "size: {:.1} MiB with the index (dbstat is not available to split it)",
                mib(total)
            );
        }
    }
    let now = OffsetDateTime::now_utc();
    let cases = [
        ("common word", "error".to_string()),
        ("mid word", "kalo".to_string()),
        ("rare word", RARE.to_string()),
        ("phrase", "\"cargo test\"".to_string()),
        (
            "filter only",
            "status:failed since:30d repo:web".to_string(),
        ),
        (
            "words + filters",
            "error kalo repo:app status:completed,failed since:3m".to_string(),
        ),
    ];
    let _ = writeln!(
        out,
        "{:<16} {:>10} {:>10} {:>8}  vs {} ms",
        "first page (50)",
        "median ms",
        "max ms",
        "hits",
        TARGET.as_millis()
    );
    for (name, text) in cases {
        let q = HistoryQuery::parse(&text, now)?;
        let mut times = Vec::with_capacity(RUNS);
        let mut hits = 0;
        for _ in 0..RUNS {
            let start = Instant::now();
            let page = store.history(&q)?;
            times.push(start.elapsed());
            hits = page.total;
        }
        times.sort();
        let median = times[RUNS / 2];
        let verdict = if median <= TARGET { "under" } else { "OVER" };
        let _ = writeln!(
            out,
            "{name:<16} {:>10.1} {:>10.1} {hits:>8}  {verdict}   ({text})",
            median.as_secs_f64() * 1e3,
            times[RUNS - 1].as_secs_f64() * 1e3,
        );
    }
    Ok(())
}

/// `bosun bench costs`: over the same generated journal, the Costs view's query (30 and 90
/// days), `bosun costs --by day`'s, `bosun stats`' and a budget reservation plus its
/// settlement per model request.
pub fn run_costs(
    tasks: usize,
    events: usize,
    dir: &Path,
    out: &mut dyn Write,
) -> Result<(), StoreError> {
    use crate::{
        BudgetLimit, BudgetWindow, CostFilter, CostGroup, CostQuery, StatsFilter, StatsGroup,
    };
    std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let path = journal(tasks, events, dir, out)?;
    let store = Store::open(&path)?;
    let rows: u64 = store
        .conn()
        .query_row("SELECT count(*) FROM usage", [], |r| r.get(0))?;
    let _ = writeln!(
        out,
        "journal: {tasks} tasks, {rows} usage rows ({})",
        path.display()
    );
    let time = |runs: usize, f: &mut dyn FnMut() -> Result<(), StoreError>| {
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let start = Instant::now();
            f()?;
            times.push(start.elapsed());
        }
        times.sort();
        Ok::<_, StoreError>((times[runs / 2], times[runs - 1]))
    };
    let line =
        |out: &mut dyn Write, name: &str, (median, max): (Duration, Duration), target: &str| {
            let _ = writeln!(
                out,
                "{name:<34} {:>9.1} ms median {:>9.1} ms max   {target}",
                median.as_secs_f64() * 1e3,
                max.as_secs_f64() * 1e3
            );
        };
    for days in [30, 90] {
        let q = CostQuery {
            days,
            ..Default::default()
        };
        let t = time(RUNS, &mut || store.cost_dashboard(&q).map(drop))?;
        line(
            out,
            &format!("dashboard, {days} days"),
            t,
            "target < 100 ms",
        );
    }
    let t = time(RUNS, &mut || {
        store
            .costs(CostGroup::Day, &CostFilter::default())
            .map(drop)
    })?;
    line(out, "bosun costs --by day", t, "");
    let t = time(RUNS, &mut || {
        store
            .stats(StatsGroup::All, &StatsFilter::default())
            .map(drop)
    })?;
    line(out, "bosun stats", t, "");
    let t = time(RUNS, &mut || {
        store
            .stats(StatsGroup::Model, &StatsFilter::default())
            .map(drop)
    })?;
    line(out, "bosun stats --by model", t, "");

    let limits = [
        BudgetLimit {
            name: "daily_usd".into(),
            window: BudgetWindow::Day,
            repo: None,
            limit_usd: 1e9,
        },
        BudgetLimit {
            name: "monthly_usd".into(),
            window: BudgetWindow::Month,
            repo: None,
            limit_usd: 1e9,
        },
        BudgetLimit {
            name: "repos.\"/src/app\".budgets.weekly_usd".into(),
            window: BudgetWindow::Week,
            repo: Some("/src/app".into()),
            limit_usd: 1e9,
        },
    ];
    let task = TaskId::from("01benchbudget");
    const REQUESTS: usize = 200;
    let mut times = Vec::with_capacity(REQUESTS);
    for _ in 0..REQUESTS {
        let start = Instant::now();
        match store.reserve(&task, "/src/app", 0.25, &limits)? {
            crate::Reservation::Reserved { id, .. } => store.settle(id)?,
            crate::Reservation::Refused { status, .. } => {
                let _ = writeln!(out, "refused by {}", status.limit.name);
            }
        }
        times.push(start.elapsed());
    }
    times.sort();
    let _ = writeln!(
        out,
        "reserve + settle per model request ({} budgets): {:.0} µs median, {:.0} µs max",
        limits.len(),
        times[REQUESTS / 2].as_secs_f64() * 1e6,
        times[REQUESTS - 1].as_secs_f64() * 1e6
    );
    Ok(())
}
