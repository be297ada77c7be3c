//! `bosun-mock-model --script FILE.json [--port N] [--record FILE.jsonl] [--props FILE.json] [--route MARKER=FILE.json …]`: serves a scripted
//! model (OpenAI Chat Completions at `/v1/chat/completions`, OpenAI Responses at
//! `/v1/responses`, Anthropic Messages at `/v1/messages`) and prints `listening http://127.0.0.1:PORT` as its first line.

use anyhow::Context;
use bosun_testkit::{MockModelServer, MockOptions, MockReply};
use clap::Parser;
use std::io::Write;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "bosun-mock-model",
    about = "A scripted mock model server for Bosun's tests"
)]
struct Args {
    /// A JSON array of replies, e.g. [{"kind":"reply","text":"hi"},{"kind":"status","status":500}]
    #[arg(long)]
    script: PathBuf,
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Append every request received as a JSON line to this file.
    #[arg(long)]
    record: Option<PathBuf>,
    /// A JSON file `GET /props` answers with, as llama.cpp's server does (its chat template
    /// and context size); without it, 404.
    #[arg(long)]
    props: Option<PathBuf>,
    /// A context window in tokens: a model request over it (bytes / 4) is answered 400
    /// `context_length_exceeded`
    #[arg(long)]
    window: Option<u64>,
    /// `MARKER=FILE.json` (repeatable): a request whose first user message contains MARKER
    /// takes its replies from FILE's script instead (a sub-agent's conversation).
    #[arg(long = "route")]
    routes: Vec<String>,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let text = std::fs::read_to_string(&args.script)
        .with_context(|| format!("while reading the script {}", args.script.display()))?;
    let replies: Vec<MockReply> = serde_json::from_str(&text).with_context(|| {
        format!(
            "while parsing the script {} as a JSON array of replies",
            args.script.display()
        )
    })?;
    let props = match &args.props {
        Some(path) => Some(
            serde_json::from_str(
                &std::fs::read_to_string(path)
                    .with_context(|| format!("while reading {}", path.display()))?,
            )
            .with_context(|| format!("while parsing {} as JSON", path.display()))?,
        ),
        None => None,
    };
    let mut routes = Vec::new();
    for route in &args.routes {
        let (marker, file) = route
            .split_once('=')
            .with_context(|| format!("--route {route:?}: use MARKER=FILE.json"))?;
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("while reading the route script {file}"))?;
        let replies: Vec<MockReply> = serde_json::from_str(&text)
            .with_context(|| format!("while parsing the route script {file}"))?;
        routes.push((marker.to_string(), replies));
    }
    let server = MockModelServer::start_with(
        replies,
        MockOptions {
            port: args.port,
            record: args.record.clone(),
            props,
            tokenize: false,
            window: args.window,
            summary_reply: None,
            routes,
        },
    )
    .await
    .context("while starting the mock model server")?;
    let mut out = std::io::stdout();
    writeln!(out, "listening {}", server.url())?;
    out.flush()?;
    tokio::signal::ctrl_c()
        .await
        .context("while waiting for ctrl-c")?;
    drop(server);
    Ok(())
}
