//! The background exporter: a bounded queue, batches, short timeouts, counters instead of
//! errors.

use crate::ExportConfig;
use crate::follow::{Follower, Output};
use crate::otlp::{Metric, Resource, Span, metrics_request, traces_request};
use bosun_policy::redact::Redactor;
use bosun_protocol::{Event, EventMsg, TaskId};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::mpsc;

/// Spans (and a task's metrics) waiting to be sent; past this they are dropped and counted.
const QUEUE: usize = 2048;
/// Spans per export request.
const BATCH: usize = 256;
/// How often queued spans go out while a task runs.
const INTERVAL: Duration = Duration::from_secs(2);
/// One export request's limit (connect included).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// Tries of one export request when the collector is throttling or unavailable.
const ATTEMPTS: u32 = 3;
/// The first wait before trying again, doubled each time.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// The longest wait before trying again (a longer `Retry-After` is cut to it).
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// How long [`Telemetry::finish`] waits for what is still queued.
/// Not under [`REQUEST_TIMEOUT`]: a slow collector still gets a task's last spans and metrics.
const FINISH_TIMEOUT: Duration = Duration::from_secs(5);

enum Queued {
    Span(Span),
    Metrics(Vec<Metric>),
}

#[derive(Default)]
struct Counters {
    spans_sent: AtomicU64,
    dropped: AtomicU64,
    failed_requests: AtomicU64,
    last_failure: std::sync::Mutex<Option<String>>,
}

/// What an exporter did, for a line on stderr or the log when something was lost.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub spans_sent: u64,
    /// Spans and metric batches dropped because the queue was full.
    pub dropped: u64,
    pub failed_requests: u64,
    /// The last failure, without the request's headers.
    pub last_failure: Option<String>,
    /// [`Telemetry::finish`] gave up waiting for the queue.
    pub timed_out: bool,
}

impl Report {
    /// One line saying what was lost, when something was.
    pub fn problem(&self) -> Option<String> {
        if self.dropped == 0 && self.failed_requests == 0 && !self.timed_out {
            return None;
        }
        let mut parts = Vec::new();
        if self.dropped > 0 {
            parts.push(format!("{} dropped (queue full)", self.dropped));
        }
        if self.failed_requests > 0 {
            parts.push(format!(
                "{} export request{} failed{}",
                self.failed_requests,
                if self.failed_requests == 1 { "" } else { "s" },
                self.last_failure
                    .as_deref()
                    .map(|f| format!(" ({f})"))
                    .unwrap_or_default()
            ));
        }
        if self.timed_out {
            parts.push("gave up waiting for the collector".into());
        }
        Some(format!("OpenTelemetry export: {}", parts.join(", ")))
    }
}

/// Follows events and exports them. Create it inside a Tokio runtime.
pub struct Telemetry {
    follower: Follower,
    queue: mpsc::Sender<Queued>,
    counters: Arc<Counters>,
    worker: tokio::task::JoinHandle<()>,
}

impl Telemetry {
    /// Starts the background exporter. `redactor` redacts exported content (with
    /// `include_content`).
    pub fn start(config: ExportConfig, redactor: Redactor) -> Telemetry {
        let (queue, rx) = mpsc::channel(QUEUE);
        let counters = Arc::new(Counters::default());
        let follower = Follower::new(config.include_content, redactor);
        let worker = tokio::spawn(run(config, rx, Arc::clone(&counters)));
        Telemetry {
            follower,
            queue,
            counters,
            worker,
        }
    }

    /// Follows one event. Never blocks: a full queue drops what the event finished.
    pub fn observe(&mut self, ev: &Event) {
        for out in self.follower.observe(ev) {
            let item = match out {
                Output::Span(s) => Queued::Span(s),
                Output::Metrics(m) if m.is_empty() => continue,
                Output::Metrics(m) => Queued::Metrics(m),
            };
            if self.queue.try_send(item).is_err() {
                self.counters.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Follows one event of a task whose sub-agents' events are in the journal, not on its
    /// stream: after a `subagent_finished`, the child's events (`children` reads them; empty
    /// when it cannot) are followed too, and theirs in turn, so each sub-agent's
    /// `invoke_agent`, `chat` and `execute_tool` spans sit in the parent's trace under the
    /// parent's span.
    pub fn observe_tree(&mut self, ev: &Event, children: &dyn Fn(&TaskId) -> Vec<Event>) {
        self.observe(ev);
        // A continuation's stream starts at `task_resumed`: the rest is in the journal.
        if let EventMsg::TaskResumed(_) = &ev.msg
            && let Some(started) = children(&ev.task_id).into_iter().find_map(|e| match e.msg {
                EventMsg::TaskStarted(s) => Some(s),
                _ => None,
            })
        {
            self.follower.started_earlier(&ev.task_id, &started);
        }
        if let EventMsg::SubagentFinished(f) = &ev.msg {
            for child in children(&f.child_task_id) {
                self.observe_tree(&child, children);
            }
        }
    }

    /// Sends what is queued (waiting at most a few seconds) and stops the exporter.
    pub async fn finish(self) -> Report {
        let Telemetry {
            queue,
            counters,
            worker,
            ..
        } = self;
        drop(queue);
        let timed_out = tokio::time::timeout(FINISH_TIMEOUT, worker).await.is_err();
        let last_failure = counters.last_failure.lock().ok().and_then(|mut f| f.take());
        Report {
            spans_sent: counters.spans_sent.load(Ordering::Relaxed),
            dropped: counters.dropped.load(Ordering::Relaxed),
            failed_requests: counters.failed_requests.load(Ordering::Relaxed),
            last_failure,
            timed_out,
        }
    }
}

async fn run(config: ExportConfig, mut rx: mpsc::Receiver<Queued>, counters: Arc<Counters>) {
    let client = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .connect_timeout(Duration::from_secs(2))
        .build();
    let sender = match client {
        Ok(client) => Sender {
            client,
            config,
            counters,
            given_up: Default::default(),
        },
        Err(e) => {
            counters.failed_requests.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut f) = counters.last_failure.lock() {
                *f = Some(format!("no HTTP client: {e}"));
            }
            // Drain so senders never see a closed queue as a reason to stop.
            while rx.recv().await.is_some() {}
            return;
        }
    };
    let resource = Resource {
        service_name: sender.config.service_name.clone(),
        instance_id: ulid::Ulid::new().to_string().to_lowercase(),
    };
    let mut windows = Windows::default();
    let mut spans: Vec<Span> = Vec::new();
    let mut tick = tokio::time::interval(INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            item = rx.recv() => match item {
                Some(Queued::Span(s)) => {
                    spans.push(s);
                    if spans.len() >= BATCH {
                        sender.traces(&resource, std::mem::take(&mut spans)).await;
                    }
                }
                // A task ended: its spans first, then its metrics.
                Some(Queued::Metrics(mut m)) => {
                    windows.follow_on(&mut m);
                    sender.traces(&resource, std::mem::take(&mut spans)).await;
                    sender.send("metrics", &metrics_request(&resource, &m)).await;
                }
                None => break,
            },
            _ = tick.tick() => sender.traces(&resource, std::mem::take(&mut spans)).await,
        }
    }
    sender.traces(&resource, spans).await;
}

/// Where each metric series' last delta point ended. Tasks that ran at once (a batch, a parent
/// and its sub-agents) report the same series over overlapping times; a delta point must start
/// where the series' last one ended, so each one's window is moved up to follow the last.
#[derive(Default)]
struct Windows {
    ends: HashMap<String, u64>,
}

impl Windows {
    fn follow_on(&mut self, metrics: &mut [Metric]) {
        for m in metrics {
            let series = format!("{}{:?}", m.name, m.attributes);
            if let Some(&last) = self.ends.get(&series) {
                m.start_ns = m.start_ns.max(last);
                m.end_ns = m.end_ns.max(m.start_ns + 1);
            }
            self.ends.insert(series, m.end_ns);
        }
    }
}

struct Sender {
    client: reqwest::Client,
    config: ExportConfig,
    counters: Arc<Counters>,
    /// A request already failed after all its tries: the next ones are tried once each, so
    /// a collector that is down does not hold the end of every task for each retry's wait.
    given_up: std::sync::atomic::AtomicBool,
}

impl Sender {
    async fn traces(&self, resource: &Resource, spans: Vec<Span>) {
        for chunk in spans.chunks(BATCH) {
            if self.send("traces", &traces_request(resource, chunk)).await {
                self.counters
                    .spans_sent
                    .fetch_add(chunk.len() as u64, Ordering::Relaxed);
            }
        }
    }

    /// POSTs one request to `<endpoint>/v1/<signal>`, tried again as the OTLP spec says for a
    /// throttled or unavailable collector (429, 502, 503, 504, or no connection): up to
    /// [`ATTEMPTS`] tries, waiting its `Retry-After` or a doubling backoff, each wait capped.
    /// False (and counted once) when it failed.
    async fn send(&self, signal: &str, body: &serde_json::Value) -> bool {
        // A signal with an endpoint of its own only (the other one's) is not exported.
        let Some(url) = self.config.url(signal) else {
            return true;
        };
        // What a failure says: the URL without a user or password in it.
        let shown = shown_url(&url);
        let mut backoff = FIRST_BACKOFF;
        let mut attempt = 1;
        let failure = loop {
            let mut req = self.client.post(&url).json(body);
            for (k, v) in &self.config.headers {
                req = req.header(k.as_str(), v.as_str());
            }
            let (failure, retry_after) = match req.send().await {
                Ok(resp) if resp.status().is_success() => {
                    self.given_up.store(false, Ordering::Relaxed);
                    return true;
                }
                Ok(resp) => {
                    let code = resp.status().as_u16();
                    let retry = matches!(code, 429 | 502 | 503 | 504).then(|| {
                        resp.headers()
                            .get(reqwest::header::RETRY_AFTER)
                            .and_then(|v| v.to_str().ok())
                            .and_then(|v| v.trim().parse::<u64>().ok())
                            .map(Duration::from_secs)
                    });
                    (format!("{shown}: HTTP {code}"), retry)
                }
                // Said without the error's chain: it never holds the headers, but keep it short.
                Err(e) if e.is_timeout() => (format!("{shown}: timed out"), None),
                Err(e) if e.is_connect() => (format!("{shown}: could not connect"), Some(None)),
                Err(e) if e.is_builder() => (
                    format!("{shown}: bad request (check the endpoint and headers)"),
                    None,
                ),
                Err(_) => (format!("{shown}: request failed"), None),
            };
            // A timed-out request is not tried again: the collector is hanging, and each try
            // would hold the queue for the whole request timeout.
            match retry_after {
                Some(after) if attempt < ATTEMPTS && !self.given_up.load(Ordering::Relaxed) => {
                    let wait = after.unwrap_or(backoff).min(MAX_BACKOFF);
                    tokio::time::sleep(wait).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    attempt += 1;
                }
                _ => break failure,
            }
        };
        self.given_up.store(true, Ordering::Relaxed);
        self.counters
            .failed_requests
            .fetch_add(1, Ordering::Relaxed);
        if let Ok(mut f) = self.counters.last_failure.lock() {
            *f = Some(failure);
        }
        false
    }
}

/// `url` without its user and password (`https://user:secret@host/` → `https://host/`).
fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) if !u.username().is_empty() || u.password().is_some() => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.to_string()
        }
        Ok(_) => url.to_string(),
        // Not a URL: said no further than its scheme and host part could leak nothing.
        Err(_) => match url.split_once('@') {
            Some((_, host)) => format!("…@{host}"),
            None => url.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_reported_by_tasks_that_overlapped_gets_windows_one_after_the_other() {
        use crate::otlp::Point;
        let metric = |start_ns, end_ns, model: &str| Metric {
            name: "bosun.cost.usd",
            unit: "USD",
            description: "",
            attributes: vec![("gen_ai.request.model".into(), model.into())],
            start_ns,
            end_ns,
            point: Point::Sum(1.0),
        };
        let mut w = Windows::default();
        // A parent (10..50) whose sub-agent (20..30) ended first, then a task of another model.
        let mut child = vec![metric(20, 30, "m")];
        let mut parent = vec![metric(10, 50, "m"), metric(10, 50, "other")];
        let mut late = vec![metric(12, 40, "m")];
        w.follow_on(&mut child);
        w.follow_on(&mut parent);
        w.follow_on(&mut late);
        let windows = |ms: &[Metric]| {
            ms.iter()
                .map(|m| (m.start_ns, m.end_ns))
                .collect::<Vec<_>>()
        };
        assert_eq!(windows(&child), [(20, 30)]);
        assert_eq!(windows(&parent), [(30, 50), (10, 50)]);
        assert_eq!(windows(&late), [(50, 51)]);
    }

    #[test]
    fn a_failure_never_shows_the_user_or_password_of_the_endpoint() {
        assert_eq!(
            shown_url("https://alice:s3cr3t@otel.example:4318/v1/traces"),
            "https://otel.example:4318/v1/traces"
        );
        assert_eq!(
            shown_url("http://collector:4318/v1/metrics"),
            "http://collector:4318/v1/metrics"
        );
        assert!(!shown_url("not a url alice:s3cr3t@host").contains("s3cr3t"));
    }
}
