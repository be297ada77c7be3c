//! OpenTelemetry export, opt-in: a task's events become spans and metrics, sent over OTLP/HTTP
//! (JSON) to a collector.
//!
//! The crate follows the event stream the CLI and the app already read; the core never calls
//! it. [`Telemetry::observe`] is synchronous and cheap (no IO): finished spans go to a bounded
//! queue that a background task sends in batches, with short timeouts; a full queue drops spans
//! and counts them, a failed export is counted, and neither ever slows or fails the task. A
//! task's metrics and its `invoke_agent` span go out when it finishes, and
//! [`Telemetry::finish`] waits (briefly) for what is still queued.
//!
//! What is exported (GenAI semantic conventions, plus `bosun.*` attributes):
//! - `invoke_agent bosun`: one span per task run (a follow-up or resume is a new trace), with
//!   `bosun.task.id`, `bosun.repository`, `bosun.task.outcome`, the total cost and tokens;
//! - `chat <model>`: one span per model request (its `usage` event), a child of the task's, with
//!   `gen_ai.request.model`, `gen_ai.usage.input_tokens` (every prompt token, cached ones
//!   included), `gen_ai.usage.output_tokens` (reasoning included),
//!   `gen_ai.usage.cache_read.input_tokens`, `gen_ai.usage.cache_creation.input_tokens`;
//! - `execute_tool <tool>`: one span per tool call, a child of the task's, with
//!   `gen_ai.tool.name`, `bosun.tool.status`, `bosun.tool.duration_ms` and
//!   `bosun.policy.decision` (`allow`, `deny`, or `ask` with `bosun.approval.decision`);
//! - metrics `gen_ai.client.token.usage`, `gen_ai.client.operation.duration` (histograms) and
//!   `bosun.cost.usd` (a sum), with delta temporality: each task exports its own.
//!
//! Prompts, model outputs, tool arguments and results are exported only with
//! `include_content = true`, and redacted first ([`bosun_policy::redact::Redactor`]).

mod export;
mod follow;
mod otlp;

pub use export::{Report, Telemetry};

use std::collections::BTreeMap;

/// Where and how to export, resolved from `[telemetry]` and the `OTEL_*` environment.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportConfig {
    /// The OTLP/HTTP base URL (`http://collector:4318`); `/v1/traces` and `/v1/metrics` are
    /// added to it.
    pub endpoint: String,
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` and `_METRICS_ENDPOINT`: the whole URL a signal
    /// goes to, instead of `<endpoint>/v1/<signal>`.
    pub traces_endpoint: Option<String>,
    pub metrics_endpoint: Option<String>,
    /// Sent with every export request (an API key for a hosted backend). Never logged.
    pub headers: BTreeMap<String, String>,
    /// Export prompts, outputs and tool arguments (redacted).
    pub include_content: bool,
    /// `service.name` of the resource (default `bosun`).
    pub service_name: String,
}

impl ExportConfig {
    /// Where `signal` (`traces`, `metrics`) is posted; None when only the other signal has an
    /// endpoint.
    pub fn url(&self, signal: &str) -> Option<String> {
        let own = match signal {
            "traces" => self.traces_endpoint.as_ref(),
            "metrics" => self.metrics_endpoint.as_ref(),
            _ => None,
        };
        match (own, self.endpoint.is_empty()) {
            (Some(url), _) => Some(url.clone()),
            (None, false) => Some(format!("{}/v1/{signal}", self.endpoint)),
            (None, true) => None,
        }
    }
}

/// `[telemetry]` as the user wrote it (the core's config type mirrors this; this crate does not
/// depend on the core).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    pub otlp_endpoint: Option<String>,
    pub headers: BTreeMap<String, String>,
    pub include_content: bool,
    pub service_name: Option<String>,
}

/// The export configuration, if export is on: `otlp_endpoint` from the settings, else
/// `OTEL_EXPORTER_OTLP_ENDPOINT`; `OTEL_EXPORTER_OTLP_HEADERS` (`k=v,k2=v2`) adds headers under
/// the configured ones, `OTEL_SERVICE_NAME` names the service unless the settings do, and
/// `OTEL_SDK_DISABLED=true` turns export off. `env` looks a variable up.
pub fn resolve(
    settings: Option<&Settings>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<ExportConfig> {
    if env("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return None;
    }
    let empty = Settings::default();
    let settings = settings.unwrap_or(&empty);
    let clean =
        |e: String| Some(e.trim().trim_end_matches('/').to_string()).filter(|e| !e.is_empty());
    let signal = |name: &str| env(name).and_then(clean);
    let configured = settings.otlp_endpoint.clone().and_then(clean);
    // The setting wins over the environment, the signals' own variables included.
    let (traces_endpoint, metrics_endpoint) = match configured {
        Some(_) => (None, None),
        None => (
            signal("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            signal("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"),
        ),
    };
    let endpoint = configured
        .or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT").and_then(clean))
        // Only a signal's own URL given: only that signal is exported.
        .or_else(|| (traces_endpoint.is_some() || metrics_endpoint.is_some()).then(String::new))?;
    let mut headers: BTreeMap<String, String> = env("OTEL_EXPORTER_OTLP_HEADERS")
        .map(|h| parse_headers(&h))
        .unwrap_or_default();
    headers.extend(settings.headers.clone());
    let service_name = settings
        .service_name
        .clone()
        .or_else(|| env("OTEL_SERVICE_NAME"))
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "bosun".to_string());
    Some(ExportConfig {
        endpoint,
        traces_endpoint,
        metrics_endpoint,
        headers,
        include_content: settings.include_content,
        service_name,
    })
}

/// `api-key=abc,x-team=core` (the `OTEL_EXPORTER_OTLP_HEADERS` format; values may be
/// percent-encoded, which is decoded for `%20`-style escapes only).
fn parse_headers(text: &str) -> BTreeMap<String, String> {
    text.split(',')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            let k = k.trim();
            (!k.is_empty()).then(|| (k.to_string(), percent_decode(v.trim())))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = s.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn export_is_off_without_an_endpoint() {
        assert_eq!(resolve(None, &env_of(&[])), None);
        let s = Settings {
            include_content: true,
            ..Settings::default()
        };
        assert_eq!(resolve(Some(&s), &env_of(&[])), None);
    }

    #[test]
    fn a_signals_own_endpoint_is_used_whole_and_alone_turns_export_on() {
        let env = env_of(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "https://traces.example/otlp/spans/",
            ),
        ]);
        let c = resolve(None, &env).unwrap();
        assert_eq!(
            c.url("traces").as_deref(),
            Some("https://traces.example/otlp/spans")
        );
        assert_eq!(
            c.url("metrics").as_deref(),
            Some("http://env:4318/v1/metrics")
        );
        let only = env_of(&[("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://m:9/x")]);
        let c = resolve(None, &only).unwrap();
        assert_eq!(
            (c.url("metrics").as_deref(), c.url("traces")),
            (Some("http://m:9/x"), None)
        );
        // A configured endpoint wins over every variable.
        let s = Settings {
            otlp_endpoint: Some("http://config:4318".into()),
            ..Settings::default()
        };
        let c = resolve(Some(&s), &env).unwrap();
        assert_eq!(
            c.url("traces").as_deref(),
            Some("http://config:4318/v1/traces")
        );
    }

    #[test]
    fn the_environment_endpoint_is_honoured_and_the_setting_wins() {
        let env = env_of(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318/"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "api-key=from%20env,x-team=core",
            ),
        ]);
        let c = resolve(None, &env).map(|c| (c.endpoint, c.headers.len(), c.service_name));
        assert_eq!(c, Some(("http://env:4318".into(), 2, "bosun".into())));
        let s = Settings {
            otlp_endpoint: Some("http://config:4318".into()),
            headers: BTreeMap::from([("api-key".into(), "from config".into())]),
            ..Settings::default()
        };
        let c = resolve(Some(&s), &env);
        assert_eq!(
            c.as_ref().map(|c| c.endpoint.as_str()),
            Some("http://config:4318")
        );
        assert_eq!(
            c.map(|c| c.headers),
            Some(BTreeMap::from([
                ("api-key".into(), "from config".into()),
                ("x-team".into(), "core".into())
            ]))
        );
    }

    #[test]
    fn otel_sdk_disabled_turns_export_off() {
        let env = env_of(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
            ("OTEL_SDK_DISABLED", "true"),
        ]);
        assert_eq!(resolve(None, &env), None);
    }
}
