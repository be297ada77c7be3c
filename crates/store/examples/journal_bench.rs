//! Prints how fast the journal appends and reads, alone and with concurrent writers.
//!
//! `cargo run -p bosun-store --release --example journal_bench [events]`

use bosun_protocol::{CallId, Event, EventMsg, OutputStream, TaskId, ToolOutputDelta};
use bosun_store::{NewTask, Store, now_rfc3339};
use std::path::Path;
use std::time::{Duration, Instant};

type Fallible<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

fn task(id: &str) -> NewTask {
    NewTask {
        id: TaskId::from(id),
        repo: "/src/app".into(),
        prompt: "benchmark".into(),
        base_commit: "0".repeat(40),
        branch: format!("bosun/{id}"),
        worktree: format!("/tmp/{id}"),
        provider: "openai".into(),
        model: "gpt-bench".into(),
        created_at: now_rfc3339(),
        owner_pid: std::process::id(),
        owner_started: bosun_store::process_start_time(std::process::id()),
        max_steps: 100,
        max_cost_usd: None,
        parent_task_id: None,
        role: None,
        depth: 0,
    }
}

fn output(id: &str, seq: u64) -> Event {
    Event {
        seq,
        task_id: TaskId::from(id),
        ts: now_rfc3339(),
        msg: EventMsg::ToolOutputDelta(ToolOutputDelta {
            call_id: CallId::from("call_1"),
            stream: OutputStream::Stdout,
            chunk: format!("line {seq}: {}\n", "x".repeat(180)),
        }),
    }
}

/// Appends `n` events to a new task and returns each append's latency.
fn write(store: &Store, id: &str, n: u64) -> Fallible<Vec<Duration>> {
    store.create_task(&task(id))?;
    let mut lat = Vec::with_capacity(n as usize);
    for seq in 1..=n {
        let ev = output(id, seq);
        let t = Instant::now();
        store.append_event(&ev)?;
        lat.push(t.elapsed());
    }
    Ok(lat)
}

fn report(what: &str, mut lat: Vec<Duration>, wall: Duration) {
    lat.sort();
    let pct = |p: f64| lat[((lat.len() - 1) as f64 * p) as usize];
    println!(
        "{what}: {} appends in {:.2?} = {:.0}/s; latency p50 {:.2?} p99 {:.2?} max {:.2?}",
        lat.len(),
        wall,
        lat.len() as f64 / wall.as_secs_f64(),
        pct(0.5),
        pct(0.99),
        pct(1.0),
    );
}

fn wal_size(db: &Path) {
    let wal = db.with_extension("db-wal");
    let size = std::fs::metadata(wal).map_or(0, |m| m.len());
    println!("  WAL now {} KiB", size / 1024);
}

fn main() -> Fallible<()> {
    let n: u64 = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(5000);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("bosun.db");
    let store = Store::open(&path)?;

    let t = Instant::now();
    let lat = write(&store, "01single", n)?;
    report("one writer", lat, t.elapsed());
    wal_size(&path);

    let t = Instant::now();
    let (mut read, mut after) = (0, 0);
    loop {
        let page = store.events(&TaskId::from("01single"), after, 500)?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        read += page.len();
    }
    let took = t.elapsed();
    println!(
        "read back: {read} events in pages of 500 in {took:.2?} = {:.0}/s",
        read as f64 / took.as_secs_f64()
    );

    let writers = 3;
    let t = Instant::now();
    let threads: Vec<_> = (0..writers)
        .map(|i| {
            let path = path.clone();
            std::thread::spawn(move || -> Fallible<Vec<Duration>> {
                let store = Store::open(Path::new(&path))?;
                write(&store, &format!("01parallel_{i}"), n / 2)
            })
        })
        .collect();
    let mut lat = Vec::new();
    for th in threads {
        lat.extend(th.join().map_err(|_| "a writer panicked")??);
    }
    report(&format!("{writers} connections at once"), lat, t.elapsed());

    wal_size(&path);
    for i in 0..1000 {
        store.create_task(&task(&format!("01many_{i:04}x")))?;
    }
    let t = Instant::now();
    let tasks = store.tasks()?;
    println!("list {} tasks: {:.2?}", tasks.len(), t.elapsed());
    let t = Instant::now();
    let found = store.find_task("01many_0500")?;
    println!("find_task by prefix: {:.2?} ({})", t.elapsed(), found.id);
    let t = Instant::now();
    let polls = 10_000;
    for _ in 0..polls {
        store.data_version()?;
    }
    println!("data_version poll: {:.2?} each", t.elapsed() / polls);

    let wal = std::fs::metadata(dir.path().join("bosun.db-wal")).map_or(0, |m| m.len());
    println!(
        "file: {} KiB (+ {} KiB WAL) for {} events",
        std::fs::metadata(&path)?.len() / 1024,
        wal / 1024,
        n + writers * (n / 2)
    );
    Ok(())
}
