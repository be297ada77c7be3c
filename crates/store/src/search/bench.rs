//! `bosun bench history`: a generated journal of N tasks and M events (a realistic mix: prompts,
//! streamed assistant text, tool calls with streamed output, checkpoints, usage, checks, review
//! comments), built once and reused, then the time to the first page for typical searches.

use crate::{HistoryQuery, NewTask, Store, StoreError};
use bosun_protocol::{
    AssistantDelta, AssistantMessage, CallId, CheckpointCreated, Event, EventMsg, OutputStream,
    TaskFinished, TaskId, TaskStatus, ToolCallBegin, ToolCallEnd, ToolCallStatus, ToolOutputDelta,
    UsageEvent, UserMessage,
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
    let path = dir.join(format!("history-{tasks}-{events}.db"));
    if path.exists() {
        let _ = writeln!(out, "reusing {}", path.display());
        return Ok(path);
    }
    let partial = dir.join(format!("history-{tasks}-{events}.db.partial"));
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
    let models = [
        "gpt-5",
        "claude-sonnet-4-5",
        "claude-opus-4-1",
        "gpt-5-mini",
        "qwen3-coder",
    ];
    let mut batch: Vec<Event> = Vec::with_capacity(20_000);
    for t in 0..tasks {
        let id = format!("01bench{t:08}");
        // Spread over the last year, in order.
        let created =
            now - Duration::from_secs(((tasks - t) as u64 * 31_536_000) / tasks.max(1) as u64);
        let ts = rfc3339(created);
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
            model: models[rng.skewed(models.len())].into(),
            created_at: ts.clone(),
            owner_pid: 1,
            owner_started: None,
            max_steps: 50,
            max_cost_usd: None,
        })?;
        let first = batch.len();
        let mut seq = 0;
        let mut push = |msg: EventMsg, batch: &mut Vec<Event>| {
            seq += 1;
            batch.push(Event {
                seq,
                task_id: TaskId::from(id.as_str()),
                ts: ts.clone(),
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
            push(
                EventMsg::Usage(UsageEvent {
                    model: "gpt-5".into(),
                    input_tokens: 1000,
                    output_tokens: 200,
                    cached_input_tokens: 1000,
                    cache_write_tokens: 0,
                    cache_write_1h_tokens: 0,
                    reasoning_tokens: 0,
                    cost_usd: Some((rng.below(100) as f64) / 1000.0),
                    total_cost_usd: 0.0,
                    priced: true,
                    rates: None,
                    latency_ms: Some(800 + rng.below(4000) as u64),
                }),
                &mut batch,
            );
            n += 12;
        }
        // Fill up to the task's share of the events with streamed text.
        while batch.len() - first + 1 < per_task {
            push(
                EventMsg::AssistantDelta(AssistantDelta {
                    text: sentence(&mut rng, &vocab, 4),
                }),
                &mut batch,
            );
        }
        let status = [
            TaskStatus::Completed,
            TaskStatus::Completed,
            TaskStatus::Failed,
            TaskStatus::Answered,
            TaskStatus::ChecksFailed,
        ][rng.below(5)];
        push(
            EventMsg::TaskFinished(TaskFinished {
                status,
                summary: sentence(&mut rng, &vocab, 12),
                checks: Vec::new(),
            }),
            &mut batch,
        );
        if batch.len() >= 10_000 || t + 1 == tasks {
            store.append_events(&batch)?;
            batch.clear();
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
