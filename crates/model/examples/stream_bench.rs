//! `cargo run -p bosun-model --release --example stream_bench [REPLIES]`: streams scripted replies
//! from the mock model server through the real client, in both wire formats, and prints figures
//! (a benchmark prints, it never asserts).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bosun_model::{ApiKind, ChatMessage, ModelRequest, ProviderConfig, client};
use bosun_testkit::{MockModelServer, MockReply, MockToolCall, MockUsage};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let replies: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let text = "The quick brown fox jumps over the lazy dog. ".repeat(2000); // 90 kB
    let args = format!(
        "{{\"path\": \"src/lib.rs\", \"content\": {:?}}}",
        "x".repeat(20_000)
    );
    let reply = MockReply::Reply {
        text: text.clone(),
        tool_calls: vec![MockToolCall {
            id: "c1".into(),
            name: "write_file".into(),
            arguments: args.clone(),
        }],
        usage: MockUsage {
            input_tokens: 1000,
            output_tokens: 500,
            ..MockUsage::default()
        },
        chunk_delay_ms: 0,
        cut_after_events: None,
    };
    let bytes_per_reply = text.len() + args.len();
    println!(
        "{replies} replies of {} kB each (text in 8-char deltas, arguments in 5-char deltas)",
        bytes_per_reply / 1000
    );
    for api in [
        ApiKind::OpenAiChat,
        ApiKind::OpenAiResponses,
        ApiKind::Anthropic,
    ] {
        let server = MockModelServer::start(vec![reply.clone(); replies]).await?;
        let base = match api {
            ApiKind::OpenAiChat | ApiKind::OpenAiResponses => server.url() + "/v1",
            ApiKind::Anthropic => server.url(),
        };
        // Baseline: the same stream read as raw bytes, without parsing.
        let raw = MockModelServer::start(vec![reply.clone(); replies]).await?;
        let path = match api {
            ApiKind::OpenAiChat => "/v1/chat/completions",
            ApiKind::OpenAiResponses => "/v1/responses",
            ApiKind::Anthropic => "/v1/messages",
        };
        let http = reqwest::Client::new();
        let start = Instant::now();
        for _ in 0..replies {
            http.post(raw.url() + path)
                .body("{}")
                .send()
                .await?
                .bytes()
                .await?;
        }
        let raw_secs = start.elapsed().as_secs_f64();
        let c = client(ProviderConfig::new("bench", api, base, "m"))?;
        let req = ModelRequest {
            system: String::new(),
            messages: vec![ChatMessage::User {
                content: "go".into(),
            }],
            tools: vec![],
            retry_sampling: None,
        };
        let events = AtomicUsize::new(0);
        let start = Instant::now();
        for _ in 0..replies {
            let resp = c
                .stream(&req, &|_| {
                    events.fetch_add(1, Ordering::Relaxed);
                })
                .await?;
            assert_eq!(resp.tool_calls.len(), 1);
        }
        let secs = start.elapsed().as_secs_f64();
        let n = events.load(Ordering::Relaxed);
        println!(
            "{api:>12}: {:.1} ms/reply, {:.0} stream events/s, {:.1} MB/s of content",
            secs * 1000.0 / replies as f64,
            n as f64 / secs,
            (bytes_per_reply * replies) as f64 / secs / 1e6
        );
        println!(
            "{:>12}  raw read of the same streams: {:.1} ms/reply (client/raw = {:.2})",
            "",
            raw_secs * 1000.0 / replies as f64,
            secs / raw_secs
        );
    }
    Ok(())
}
