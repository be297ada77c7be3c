//! OpenTelemetry export for the tasks this app runs (`[telemetry]` in config.toml, or
//! `OTEL_EXPORTER_OTLP_ENDPOINT`): the engine's follower feeds each task's events to
//! `bosun-telemetry`, one exporter per task, read from the config as the task starts.

use bosun_core::BosunConfig;
use bosun_telemetry::Telemetry;
use std::path::Path;

/// The exporter for one task, when export is configured. Call inside the Tokio runtime.
pub fn start(home: &Path) -> Option<Telemetry> {
    let config = BosunConfig::load(home).ok()?;
    let settings = config.telemetry.map(|t| bosun_telemetry::Settings {
        otlp_endpoint: t.otlp_endpoint,
        headers: t.headers,
        include_content: t.include_content,
        service_name: t.service_name,
    });
    let export = bosun_telemetry::resolve(settings.as_ref(), &|v| std::env::var(v).ok())?;
    let env: Vec<(String, String)> = std::env::vars().collect();
    Some(Telemetry::start(
        export,
        bosun_policy::redact::Redactor::new(&env),
    ))
}

/// Waits (a few seconds at most) for the task's export to end; what was lost goes to the log.
pub async fn finish(task: &bosun_protocol::TaskId, telemetry: Option<Telemetry>) {
    if let Some(t) = telemetry
        && let Some(problem) = t.finish().await.problem()
    {
        tracing::warn!("task {task}: {problem}");
    }
}
