//! The scripted mock model server: `POST /v1/chat/completions` (OpenAI Chat), `POST
//! /v1/responses` (OpenAI Responses), `POST /v1/messages` (Anthropic), `GET /v1/models`; plus `POST /_mock/replies` (push replies: one or an array) and
//! `GET /_mock/requests` (the recorded requests) and `GET /_mock/stats` (`{"served",
//! "in_flight", "peak_in_flight", "busy_ms"}`: model requests being answered now and at most at
//! once, a streamed reply counting until its last byte, and the time spent answering them) for tests in other languages.

use crate::render::{
    MockReasoning, Wire, anthropic_frames, openai_frames, responses_frames, unfinished_frames,
};
use crate::script::MockReply;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::Response;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{oneshot, watch};

/// One request the server received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    pub path: String,
    /// Header names lowercase, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`null` when empty, a string when it was not JSON).
    pub body: Value,
}

impl RecordedRequest {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Where to listen and whether to append requests to a JSON-lines file.
#[derive(Debug, Clone, Default)]
pub struct MockOptions {
    /// 0 picks a free port.
    pub port: u16,
    pub record: Option<PathBuf>,
    /// What `GET /props` answers, as llama.cpp's server does (`{"chat_template": …,
    /// "default_generation_settings": {"n_ctx": …}}`); without it, 404 like any other server.
    /// Neither that request nor the 404 is recorded: a task's profile probe asks it first.
    pub props: Option<Value>,
    /// Answer `POST /tokenize` as llama.cpp's server does (`{"tokens": [...]}`), one token per
    /// 4 bytes of `content`; without it, 404. Not recorded either way.
    pub tokenize: bool,
    /// A context window in tokens: a model request over it (counted as bytes / 4) is answered
    /// 400 `context_length_exceeded`, as OpenAI and llama.cpp answer. It is recorded, and takes
    /// no scripted reply.
    pub window: Option<u64>,
    /// A model request that offers no tools (a summary, a commit message) is answered with
    /// this text, without taking a scripted reply.
    pub summary_reply: Option<String>,
    /// Scripts of their own for some conversations: a request whose first user message
    /// contains the marker takes the next reply of that script instead of the main one (a
    /// sub-agent's requests, which run beside their parent's in any order).
    pub routes: Vec<(String, Vec<MockReply>)>,
}

struct Shared {
    replies: Mutex<VecDeque<MockReply>>,
    requests: Mutex<Vec<RecordedRequest>>,
    record: Option<Mutex<std::fs::File>>,
    served: AtomicU64,
    /// Model requests being answered (a streamed reply until its body ends), and the most at once.
    in_flight: AtomicU64,
    peak_in_flight: AtomicU64,
    /// Microseconds spent answering model requests, summed over the requests.
    busy_us: AtomicU64,
    props: Option<Value>,
    tokenize: bool,
    window: Option<u64>,
    summary_reply: Option<String>,
    routes: Vec<(String, Mutex<VecDeque<MockReply>>)>,
    /// Set when the server stops: replies that hang or never end finish then.
    stopping: watch::Sender<bool>,
}

impl Shared {
    /// Resolves once the server stops.
    fn stopped(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut rx = self.stopping.subscribe();
        async move {
            let _ = rx.wait_for(|stopping| *stopping).await;
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A mock model server on 127.0.0.1. Dropping it stops it.
pub struct MockModelServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<oneshot::Sender<()>>,
}

impl MockModelServer {
    /// Starts on a free port in the current tokio runtime.
    pub async fn start(replies: Vec<MockReply>) -> io::Result<Self> {
        Self::start_with(replies, MockOptions::default()).await
    }

    pub async fn start_with(replies: Vec<MockReply>, options: MockOptions) -> io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", options.port)).await?;
        let shared = shared(replies, &options)?;
        let (tx, rx) = oneshot::channel();
        let addr = listener.local_addr()?;
        tokio::spawn(serve(listener, shared.clone(), rx));
        Ok(MockModelServer {
            addr,
            shared,
            shutdown: Some(tx),
        })
    }

    /// Starts on its own thread and runtime, for synchronous tests (e.g. ones that spawn the
    /// `bosun` binary).
    pub fn start_blocking(replies: Vec<MockReply>) -> io::Result<Self> {
        Self::start_blocking_with(replies, MockOptions::default())
    }

    pub fn start_blocking_with(replies: Vec<MockReply>, options: MockOptions) -> io::Result<Self> {
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", options.port))?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let shared = shared(replies, &options)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .thread_name("mock-model")
            .build()?;
        let (tx, rx) = oneshot::channel();
        let state = shared.clone();
        std::thread::Builder::new()
            .name("mock-model".into())
            .spawn(move || {
                runtime.block_on(async move {
                    match tokio::net::TcpListener::from_std(std_listener) {
                        Ok(listener) => serve(listener, state, rx).await,
                        Err(e) => eprintln!("mock model server: cannot listen: {e}"),
                    }
                });
            })?;
        Ok(MockModelServer {
            addr,
            shared,
            shutdown: Some(tx),
        })
    }

    /// `http://127.0.0.1:PORT`. OpenAI base_url is `url() + "/v1"`, Anthropic base_url is `url()`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// The recorded model requests only (not `GET /v1/models`).
    pub fn model_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| {
                r.path.ends_with("/chat/completions")
                    || r.path.ends_with("/messages")
                    || r.path.ends_with("/responses")
            })
            .collect()
    }

    /// Appends a reply to the script.
    /// The most model requests that were being answered at once (a streamed reply counts until
    /// its last byte).
    pub fn peak_in_flight(&self) -> u64 {
        self.shared.peak_in_flight.load(Ordering::SeqCst)
    }

    /// The time spent answering model requests, summed over the requests (from the request
    /// until a streamed reply's last byte): the model's share of the tasks' time.
    pub fn model_busy(&self) -> Duration {
        Duration::from_micros(self.shared.busy_us.load(Ordering::SeqCst))
    }

    /// Replaces what is left of the script of the route with this marker (see
    /// [`MockOptions::routes`]). Panics when no route has the marker.
    pub fn set_route(&self, marker: &str, replies: Vec<MockReply>) {
        let (_, script) = self
            .shared
            .routes
            .iter()
            .find(|(m, _)| m == marker)
            .unwrap_or_else(|| panic!("the mock server has no route {marker:?}"));
        *lock(script) = replies.into();
    }

    pub fn push(&self, reply: MockReply) {
        lock(&self.shared.replies).push_back(reply);
    }

    /// How many scripted replies are left.
    pub fn remaining(&self) -> usize {
        lock(&self.shared.replies).len()
    }
}

impl Drop for MockModelServer {
    fn drop(&mut self) {
        self.shared.stopping.send_replace(true);
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

fn shared(replies: Vec<MockReply>, options: &MockOptions) -> io::Result<Arc<Shared>> {
    let record = match &options.record {
        Some(path) => Some(Mutex::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?,
        )),
        None => None,
    };
    Ok(Arc::new(Shared {
        replies: Mutex::new(replies.into()),
        requests: Mutex::new(Vec::new()),
        record,
        served: AtomicU64::new(0),
        in_flight: AtomicU64::new(0),
        peak_in_flight: AtomicU64::new(0),
        busy_us: AtomicU64::new(0),
        props: options.props.clone(),
        tokenize: options.tokenize,
        window: options.window,
        summary_reply: options.summary_reply.clone(),
        routes: options
            .routes
            .iter()
            .map(|(marker, replies)| (marker.clone(), Mutex::new(replies.clone().into())))
            .collect(),
        stopping: watch::channel(false).0,
    }))
}

async fn serve(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
    stop: oneshot::Receiver<()>,
) {
    let app = Router::new().fallback(move |method: Method, uri: Uri, headers, body| {
        let shared = shared.clone();
        async move {
            let model = method == Method::POST
                && matches!(
                    uri.path(),
                    "/v1/chat/completions"
                        | "/chat/completions"
                        | "/v1/responses"
                        | "/responses"
                        | "/v1/messages"
                        | "/messages"
                );
            let guard = model.then(|| InFlight::enter(Arc::clone(&shared)));
            let response = handle(&shared, method, uri, headers, body).await;
            match guard {
                None => response,
                // Counted until the body is sent (or the client goes away).
                Some(guard) => {
                    let (parts, body) = response.into_parts();
                    let stream = body.into_data_stream().map(move |chunk| {
                        let _ = &guard;
                        chunk
                    });
                    Response::from_parts(parts, Body::from_stream(stream))
                }
            }
        }
    });
    let result = axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = stop.await;
        })
        .await;
    if let Err(e) = result {
        eprintln!("mock model server stopped: {e}");
    }
}

/// One model request being answered, since when.
struct InFlight(Arc<Shared>, std::time::Instant);

impl InFlight {
    fn enter(shared: Arc<Shared>) -> InFlight {
        let now = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        shared.peak_in_flight.fetch_max(now, Ordering::SeqCst);
        InFlight(shared, std::time::Instant::now())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let us = u64::try_from(self.1.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.0.busy_us.fetch_add(us, Ordering::SeqCst);
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn handle(
    shared: &Shared,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_string();
    match (&method, path.as_str()) {
        (&Method::POST, "/_mock/replies") => return push_replies(shared, &body),
        (&Method::GET, "/_mock/requests") => {
            let all = lock(&shared.requests).clone();
            return json_response(StatusCode::OK, &json!(all));
        }
        (&Method::GET, "/_mock/stats") => {
            return json_response(
                StatusCode::OK,
                &json!({
                    "served": shared.served.load(Ordering::SeqCst),
                    "in_flight": shared.in_flight.load(Ordering::SeqCst),
                    "peak_in_flight": shared.peak_in_flight.load(Ordering::SeqCst),
                    "busy_ms": shared.busy_us.load(Ordering::SeqCst) / 1000,
                }),
            );
        }
        // What a profile probe asks a server about its model (llama.cpp, Ollama).
        (&Method::GET, "/props") => {
            return match &shared.props {
                Some(p) => json_response(StatusCode::OK, p),
                None => json_response(
                    StatusCode::NOT_FOUND,
                    &json!({"error": {"message": "mock model: no /props configured"}}),
                ),
            };
        }
        (&Method::POST, "/tokenize") => {
            if !shared.tokenize {
                return json_response(
                    StatusCode::NOT_FOUND,
                    &json!({"error": {"message": "mock model: no /tokenize configured"}}),
                );
            }
            let content = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|v| v.get("content").and_then(Value::as_str).map(str::len))
                .unwrap_or(0);
            let tokens: Vec<usize> = (0..content.div_ceil(4)).collect();
            return json_response(StatusCode::OK, &json!({ "tokens": tokens }));
        }
        (&Method::POST, "/api/show") => {
            return json_response(
                StatusCode::NOT_FOUND,
                &json!({"error": {"message": "mock model: not an Ollama server"}}),
            );
        }
        _ => {}
    }
    let body_json = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()))
    };
    let recorded = RecordedRequest {
        path: path.clone(),
        headers: headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: body_json.clone(),
    };
    if let Some(file) = &shared.record
        && let Ok(line) = serde_json::to_string(&recorded)
    {
        let mut f = lock(file);
        let _ = writeln!(f, "{line}");
        let _ = f.flush();
    }
    lock(&shared.requests).push(recorded);

    let wire = match (&method, path.as_str()) {
        (&Method::GET, "/v1/models" | "/models") => return models(),
        (&Method::POST, "/v1/chat/completions" | "/chat/completions") => Wire::OpenAi,
        (&Method::POST, "/v1/responses" | "/responses") => Wire::Responses,
        (&Method::POST, "/v1/messages" | "/messages") => Wire::Anthropic,
        _ => {
            return json_response(
                StatusCode::NOT_FOUND,
                &json!({"error": {"message": format!("mock model: no route for {method} {path}")}}),
            );
        }
    };
    if let Some(window) = shared.window {
        let tokens = body.len() as u64 / 4;
        if tokens > window {
            return json_response(
                StatusCode::BAD_REQUEST,
                &json!({"error": {
                    "message": format!("This model's maximum context length is {window} tokens. However, your messages resulted in {tokens} tokens."),
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }}),
            );
        }
    }
    let offers_tools = body_json
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let summary = shared
        .summary_reply
        .as_ref()
        .filter(|_| !offers_tools)
        .map(|text| MockReply::Reply {
            text: text.clone(),
            tool_calls: Vec::new(),
            usage: Default::default(),
            chunk_delay_ms: 0,
            cut_after_events: None,
        });
    let first_user = first_user_text(&body_json);
    let route = shared
        .routes
        .iter()
        .find(|(marker, _)| first_user.contains(marker.as_str()));
    let next = || match route {
        Some((_, replies)) => lock(replies).pop_front(),
        None => lock(&shared.replies).pop_front(),
    };
    let Some(reply) = summary.or_else(next) else {
        return json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"error": {"message": "mock model: script exhausted"}}),
        );
    };
    let n = shared.served.fetch_add(1, Ordering::SeqCst) + 1;
    // A scripted reasoning item, for the Responses wire; the other wires leave it out.
    let (reasoning, reply) = match reply {
        MockReply::WithReasoning {
            encrypted_content,
            summary,
            reply,
        } => (Some((encrypted_content, summary)), *reply),
        other => (None, other),
    };
    let model = body_json
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("mock-model")
        .to_string();
    match reply {
        MockReply::Status {
            status,
            retry_after,
            body,
        } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let content_type = if serde_json::from_str::<Value>(&body).is_ok() {
                "application/json"
            } else {
                "text/plain; charset=utf-8"
            };
            let mut builder = Response::builder()
                .status(status)
                .header(header::CONTENT_TYPE, content_type);
            if let Some(ra) = retry_after {
                builder = builder.header(header::RETRY_AFTER, ra);
            }
            builder
                .body(Body::from(body))
                .unwrap_or_else(|_| fallback())
        }
        MockReply::RawSse { body } => sse_response(Body::from(body)),
        MockReply::WithReasoning { .. } => json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"error": {"message": "mock model: a reasoning item wraps another one"}}),
        ),
        MockReply::HangBeforeHeaders => {
            shared.stopped().await;
            json_response(
                StatusCode::SERVICE_UNAVAILABLE,
                &json!({"error": {"message": "mock model: stopped"}}),
            )
        }
        MockReply::SilentAfterFirstChunk { text } => {
            let (open, piece) = unfinished(&wire, n, &model, &text);
            let first: Vec<Result<Bytes, io::Error>> =
                vec![Ok(Bytes::from(open.concat() + &piece))];
            let stopped = shared.stopped();
            let silence = futures::stream::once(async move {
                stopped.await;
                Err(io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    "mock model: stopped",
                ))
            });
            sse_response(Body::from_stream(
                futures::stream::iter(first).chain(silence),
            ))
        }
        MockReply::Endless {
            text,
            chunk_delay_ms,
        } => {
            let (open, piece) = unfinished(&wire, n, &model, &text);
            let pieces = futures::stream::repeat(piece).then(move |piece| async move {
                if chunk_delay_ms > 0 {
                    tokio::time::sleep(Duration::from_millis(chunk_delay_ms)).await;
                } else {
                    tokio::task::yield_now().await;
                }
                Ok::<_, io::Error>(Bytes::from(piece))
            });
            let body = futures::stream::iter(open.into_iter().map(|f| Ok(Bytes::from(f))))
                .chain(pieces)
                .take_until(shared.stopped());
            sse_response(Body::from_stream(body))
        }
        MockReply::Reply {
            text,
            tool_calls,
            usage,
            chunk_delay_ms,
            cut_after_events,
        } => {
            let frames = match wire {
                Wire::OpenAi => {
                    let include_usage = body_json
                        .pointer("/stream_options/include_usage")
                        .and_then(Value::as_bool)
                        .unwrap_or(false);
                    openai_frames(
                        &format!("chatcmpl-mock-{n}"),
                        &model,
                        &text,
                        &tool_calls,
                        &usage,
                        include_usage,
                    )
                }
                Wire::Responses => responses_frames(
                    &format!("resp_mock_{n}"),
                    &model,
                    reasoning
                        .as_ref()
                        .map(|(encrypted_content, summary)| MockReasoning {
                            encrypted_content,
                            summary,
                        })
                        .as_ref(),
                    &text,
                    &tool_calls,
                    &usage,
                ),
                Wire::Anthropic => {
                    anthropic_frames(&format!("msg_mock_{n}"), &model, &text, &tool_calls, &usage)
                }
            };
            sse_response(stream_frames(frames, chunk_delay_ms, cut_after_events))
        }
    }
}

/// The opening frames and the repeated text frame of an answer that does not finish.
fn unfinished(wire: &Wire, n: u64, model: &str, text: &str) -> (Vec<String>, String) {
    let id = match wire {
        Wire::OpenAi => format!("chatcmpl-mock-{n}"),
        Wire::Responses => format!("resp_mock_{n}"),
        Wire::Anthropic => format!("msg_mock_{n}"),
    };
    unfinished_frames(*wire, &id, model, text)
}

/// SSE frames written together when a reply is not paced.
const FRAMES_PER_WRITE: usize = 32;

/// The frames as a body, each after `delay_ms`; with `cut`, the connection is aborted (no
/// terminating chunk) after that many frames.
fn stream_frames(mut frames: Vec<String>, delay_ms: u64, cut: Option<usize>) -> Body {
    let cut = cut.filter(|c| *c < frames.len());
    if delay_ms == 0 && cut.is_none() {
        // Nothing to pace: send the frames in batches (the client sees many body chunks either way).
        let batches: Vec<Result<Bytes, io::Error>> = frames
            .chunks(FRAMES_PER_WRITE)
            .map(|b| Ok(Bytes::from(b.concat())))
            .collect();
        return Body::from_stream(futures::stream::iter(batches));
    }
    if let Some(c) = cut {
        frames.truncate(c);
    }
    let items: Vec<Option<String>> = frames
        .into_iter()
        .map(Some)
        .chain(cut.map(|_| None))
        .collect();
    let stream = futures::stream::iter(items).then(move |item| async move {
        match item {
            Some(frame) => {
                if delay_ms > 0 {
                    tokio::time::sleep(Duration::from_millis(delay_ms)).await;
                }
                Ok(Bytes::from(frame))
            }
            None => {
                // Let what was sent reach the client before the connection is aborted.
                tokio::time::sleep(Duration::from_millis(30)).await;
                Err(io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    "mock model: stream cut as scripted",
                ))
            }
        }
    });
    Body::from_stream(stream)
}

fn sse_response(body: Body) -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(body)
        .unwrap_or_else(|_| fallback())
}

fn json_response(status: StatusCode, v: &Value) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(v.to_string()))
        .unwrap_or_else(|_| fallback())
}

fn fallback() -> Response {
    let mut r = Response::new(Body::from("mock model: cannot build the response"));
    *r.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    r
}

fn models() -> Response {
    json_response(
        StatusCode::OK,
        &json!({
            "object": "list",
            "data": [{"id": "mock-model", "object": "model", "type": "model", "created": 0,
                      "owned_by": "bosun", "display_name": "Mock model",
                      "created_at": "2026-01-01T00:00:00Z"}],
            "has_more": false, "first_id": "mock-model", "last_id": "mock-model"
        }),
    )
}

fn push_replies(shared: &Shared, body: &[u8]) -> Response {
    let parsed: Result<Vec<MockReply>, _> = serde_json::from_slice::<Vec<MockReply>>(body)
        .or_else(|_| serde_json::from_slice::<MockReply>(body).map(|r| vec![r]));
    match parsed {
        Ok(replies) => {
            let n = replies.len();
            lock(&shared.replies).extend(replies);
            json_response(StatusCode::OK, &json!({"pushed": n}))
        }
        Err(e) => json_response(
            StatusCode::BAD_REQUEST,
            &json!({"error": {"message": format!("mock model: not a MockReply or an array of them: {e}")}}),
        ),
    }
}

/// The text of a request's first user message (OpenAI Chat, OpenAI Responses or Anthropic
/// Messages), for [`MockOptions::routes`].
fn first_user_text(body: &Value) -> String {
    let Some(messages) = body
        .get("messages")
        .or_else(|| body.get("input"))
        .and_then(Value::as_array)
    else {
        return String::new();
    };
    let Some(first) = messages
        .iter()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
    else {
        return String::new();
    };
    match first.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
