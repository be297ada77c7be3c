//! `bosun bench compaction`: a long task against the mock model with a small window — N tool
//! calls with big outputs — run with masking on and off; prints the requests, the input tokens
//! they took in all (counted as the mock counts them, bytes / 4), the biggest request, the
//! compactions, and how many requests the mock refused as over its window.

use anyhow::Context;
use bosun_testkit::{MockModelServer, MockOptions, MockReply, MockToolCall, MockUsage};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

pub fn run(
    calls: usize,
    kb: usize,
    window: u64,
    dir: &Path,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        (1..=2_000).contains(&calls),
        "--calls must be between 1 and 2000 (got {calls})"
    );
    anyhow::ensure!(
        (1..=1_000).contains(&kb),
        "--kb must be between 1 and 1000 (got {kb})"
    );
    anyhow::ensure!(
        (2_048..=10_000_000).contains(&window),
        "--window must be between 2048 and 10000000 tokens (got {window})"
    );
    std::fs::create_dir_all(dir).with_context(|| format!("while creating {}", dir.display()))?;
    let repo = dir.join(format!("compaction-repo-{calls}-{kb}"));
    if !repo.join(".git").exists() {
        std::fs::create_dir_all(&repo)?;
        let line = format!("{}\n", "y".repeat(59));
        let body = line.repeat(kb * 1024 / 60 + 1);
        for i in 0..calls {
            std::fs::write(
                repo.join(format!("out{i}.txt")),
                format!("output {i}\n{body}"),
            )?;
        }
        for args in [
            vec!["init", "-q", "-b", "main"],
            vec!["add", "-A"],
            vec![
                "-c",
                "user.name=bench",
                "-c",
                "user.email=bench@example.com",
                "commit",
                "-q",
                "-m",
                "outputs",
            ],
        ] {
            let st = Command::new("git")
                .arg("-C")
                .arg(&repo)
                .args(&args)
                .status()?;
            anyhow::ensure!(st.success(), "git {args:?} failed");
        }
    }
    writeln!(
        out,
        "{calls} tool calls with {kb} KB outputs, a {window}-token window (the mock refuses a request over it)"
    )?;
    for masking in [true, false] {
        let figures = one(&repo, dir, calls, window, masking)?;
        writeln!(
            out,
            "  masking {:<3}: {:>4} requests, {:>10} input tokens in all, biggest {:>7}, {:>3} compactions, {:>2} refused as too long, {} ({:.1} s)",
            if masking { "on" } else { "off" },
            figures.requests,
            figures.input_tokens,
            figures.biggest,
            figures.compactions,
            figures.refused,
            figures.status,
            figures.secs
        )?;
    }
    Ok(())
}

struct Figures {
    requests: usize,
    input_tokens: u64,
    biggest: u64,
    compactions: usize,
    refused: usize,
    status: String,
    secs: f64,
}

fn one(
    repo: &Path,
    dir: &Path,
    calls: usize,
    window: u64,
    masking: bool,
) -> anyhow::Result<Figures> {
    let mut replies: Vec<MockReply> = (0..calls)
        .map(|i| MockReply::Reply {
            text: String::new(),
            tool_calls: vec![MockToolCall {
                id: format!("call_{i}"),
                name: "read_file".into(),
                arguments: serde_json::json!({"path": format!("out{i}.txt"), "limit": 2000})
                    .to_string(),
            }],
            usage: MockUsage::default(),
            chunk_delay_ms: 0,
            cut_after_events: None,
        })
        .collect();
    replies.push(MockReply::Reply {
        text: "Read every output.".into(),
        tool_calls: vec![],
        usage: MockUsage::default(),
        chunk_delay_ms: 0,
        cut_after_events: None,
    });
    let server = MockModelServer::start_blocking_with(
        replies,
        MockOptions {
            window: Some(window),
            summary_reply: Some(
                "- Read the outputs out0.txt … in order; each held the same filler.".into(),
            ),
            ..MockOptions::default()
        },
    )?;
    let home = dir.join(format!("compaction-home-{}-{masking}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home)?;
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[providers.mock]\napi = \"openai-chat\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\nprofile = {{ native_tools = true, tool_format = \"native\", edit_format = \"tools\", context_window = {window} }}\n\n[context]\nmask_tool_outputs = {masking}\n",
            server.url()
        ),
    )?;
    let exe = std::env::current_exe().context("while finding the bosun binary")?;
    let started = Instant::now();
    let output = Command::new(exe)
        .env("BOSUN_HOME", &home)
        .args([
            "run",
            "--json",
            "--no-checks",
            "--provider",
            "mock",
            "--mode",
            "full-auto",
        ])
        .args(["--max-steps", &(calls * 2 + 20).to_string()])
        .arg("--repo")
        .arg(repo)
        .args(["--prompt", "Read every out*.txt file, one by one"])
        .stdin(Stdio::null())
        .output()?;
    let secs = started.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let events: Vec<serde_json::Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let compactions = events
        .iter()
        .filter(|e| e["type"] == "context_compacted")
        .count();
    let status = events
        .iter()
        .rev()
        .find(|e| e["type"] == "task_finished")
        .and_then(|e| e["status"].as_str())
        .unwrap_or("no task_finished")
        .to_string();
    let sent = server.model_requests();
    let sizes: Vec<u64> = sent
        .iter()
        .map(|r| r.body.to_string().len() as u64 / 4)
        .collect();
    let _ = std::fs::remove_dir_all(&home);
    Ok(Figures {
        requests: sent.len(),
        input_tokens: sizes.iter().filter(|s| **s <= window).sum(),
        biggest: sizes.iter().copied().max().unwrap_or(0),
        compactions,
        refused: sizes.iter().filter(|s| **s > window).count(),
        status,
        secs,
    })
}
