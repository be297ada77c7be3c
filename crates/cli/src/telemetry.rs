//! OpenTelemetry export for the tasks this process follows (`[telemetry]` in config.toml, or
//! `OTEL_EXPORTER_OTLP_ENDPOINT`): the CLI feeds the events it reads to `bosun-telemetry`.

use bosun_core::BosunConfig;
use bosun_telemetry::Telemetry;

/// The exporter, when export is configured; None otherwise (and when config.toml does not
/// load: the command that reads it says why). Call inside the Tokio runtime.
pub(crate) fn start() -> Option<Telemetry> {
    let config = BosunConfig::load(&crate::home()).ok()?;
    let settings = config.telemetry.map(|t| bosun_telemetry::Settings {
        otlp_endpoint: t.otlp_endpoint,
        headers: t.headers,
        include_content: t.include_content,
        service_name: t.service_name,
    });
    let export = bosun_telemetry::resolve(settings.as_ref(), &|v| std::env::var(v).ok())?;
    // Content (with include_content) is redacted as the journal is: known secret formats and
    // the values of this process's secret-looking variables.
    let env: Vec<(String, String)> = std::env::vars().collect();
    Some(Telemetry::start(
        export,
        bosun_policy::redact::Redactor::new(&env),
    ))
}

/// A sub-agent's events, read from the journal once it has finished (its own stream is its
/// parent's loop's); none when the journal cannot be read.
pub(crate) fn journaled(task: &bosun_protocol::TaskId) -> Vec<bosun_protocol::Event> {
    crate::commands::open_store()
        .and_then(|store| Ok(store.events(task, 0, usize::MAX)?))
        .unwrap_or_default()
}

/// Waits (a few seconds at most) for the export to end, and says on stderr what was lost.
pub(crate) async fn finish(telemetry: Option<Telemetry>) {
    if let Some(t) = telemetry
        && let Some(problem) = t.finish().await.problem()
    {
        eprintln!("bosun: {problem}");
    }
}
