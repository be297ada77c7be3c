//! Talking to a provider before saving it: list its models (`GET …/models`, which also tests the
//! connection and the key) and find OpenAI-compatible servers answering on their default local
//! ports. Only `127.0.0.1` is ever scanned.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A known OpenAI-compatible server and where it listens by default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Preset {
    pub id: &'static str,
    pub label: &'static str,
    pub base_url: &'static str,
    /// Runs on this machine (and is looked for by [`detect`]).
    pub local: bool,
    /// The environment variable its key is usually in: the key variable when none is given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<&'static str>,
}

pub const PRESETS: &[Preset] = &[
    Preset {
        id: "ollama",
        label: "Ollama",
        base_url: "http://127.0.0.1:11434/v1",
        local: true,
        api_key_env: None,
    },
    Preset {
        id: "llama-cpp",
        label: "llama.cpp server",
        base_url: "http://127.0.0.1:8080/v1",
        local: true,
        api_key_env: None,
    },
    Preset {
        id: "lm-studio",
        label: "LM Studio",
        base_url: "http://127.0.0.1:1234/v1",
        local: true,
        api_key_env: None,
    },
    Preset {
        id: "vllm",
        label: "vLLM",
        base_url: "http://127.0.0.1:8000/v1",
        local: true,
        api_key_env: None,
    },
    Preset {
        id: "openrouter",
        label: "OpenRouter",
        base_url: "https://openrouter.ai/api/v1",
        local: false,
        api_key_env: None,
    },
    Preset {
        id: "gemini",
        label: "Gemini (OpenAI-compatible)",
        base_url: "https://generativelanguage.googleapis.com/v1beta/openai",
        local: false,
        api_key_env: Some("GEMINI_API_KEY"),
    },
];

/// How long a local port may take to answer during detection.
pub const DETECT_TIMEOUT: Duration = Duration::from_millis(800);
/// How long listing models may take when testing a connection.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(15);

/// A local server that answered, with the models it serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Detected {
    pub preset: &'static str,
    pub label: &'static str,
    pub base_url: String,
    pub models: Vec<String>,
}

#[derive(Deserialize)]
struct ModelList {
    data: Vec<ModelId>,
}

#[derive(Deserialize)]
struct ModelId {
    id: String,
}

/// The models endpoint of an API: `{base}/models` for OpenAI-compatible servers (whose base URL
/// ends in `/v1`), `{base}/v1/models` for Anthropic (whose base URL has no version).
pub fn models_url(api: &str, base_url: &str) -> String {
    let base = base_url.trim().trim_end_matches('/');
    if api == "anthropic" && !base.ends_with("/v1") {
        format!("{base}/v1/models")
    } else {
        format!("{base}/models")
    }
}

/// Lists the models the server serves; an error says what went wrong in a sentence.
pub async fn list_models(
    api: &str,
    base_url: &str,
    key: Option<&str>,
    timeout: Duration,
) -> Result<Vec<String>, String> {
    let url = models_url(api, base_url);
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .build()
        .map_err(|e| format!("could not make an HTTP client: {e}"))?;
    let mut req = client.get(&url);
    if let Some(key) = key.filter(|k| !k.is_empty()) {
        req = if api == "anthropic" {
            req.header("x-api-key", key)
        } else {
            req.bearer_auth(key)
        };
    }
    if api == "anthropic" {
        req = req.header("anthropic-version", "2023-06-01");
    }
    let res = req.send().await.map_err(|e| {
        if e.is_timeout() {
            format!("{url} did not answer within {} s", timeout.as_secs_f32())
        } else if e.is_connect() {
            format!("nothing answers at {url}: is the server running?")
        } else {
            format!("could not reach {url}: {e}")
        }
    })?;
    let status = res.status();
    if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
        return Err(format!(
            "{url} refused the key (HTTP {}): check the API key",
            status.as_u16()
        ));
    }
    if !status.is_success() {
        let body = res.text().await.unwrap_or_default();
        let body: String = body.chars().take(300).collect();
        return Err(format!("{url} answered HTTP {}: {body}", status.as_u16()));
    }
    let list: ModelList = res
        .json()
        .await
        .map_err(|e| format!("{url} did not answer with a model list: {e}"))?;
    let mut models: Vec<String> = list.data.into_iter().map(|m| m.id).collect();
    models.sort();
    models.dedup();
    Ok(models)
}

/// The local presets whose default port answers `GET /v1/models`, all probed at once.
pub async fn detect() -> Vec<Detected> {
    let probes = PRESETS.iter().filter(|p| p.local).map(|p| async move {
        list_models("openai-chat", p.base_url, None, DETECT_TIMEOUT)
            .await
            .ok()
            .map(|models| Detected {
                preset: p.id,
                label: p.label,
                base_url: p.base_url.to_string(),
                models,
            })
    });
    let mut found = Vec::new();
    let handles: Vec<_> = probes.map(tokio::spawn).collect();
    for h in handles {
        if let Ok(Some(d)) = h.await {
            found.push(d);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use bosun_testkit::MockModelServer;

    #[tokio::test]
    async fn a_running_server_lists_its_models_and_a_closed_port_says_nothing_answers() {
        let server = MockModelServer::start(vec![]).await.unwrap();
        let models = list_models(
            "openai-chat",
            &format!("{}/v1", server.url()),
            None,
            TEST_TIMEOUT,
        )
        .await
        .unwrap();
        assert!(!models.is_empty());
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let err = list_models(
            "openai-chat",
            &format!("http://127.0.0.1:{port}/v1"),
            None,
            TEST_TIMEOUT,
        )
        .await
        .unwrap_err();
        assert!(err.contains("nothing answers"), "{err}");
    }

    #[test]
    fn models_urls_follow_each_apis_layout() {
        assert_eq!(
            models_url("openai-chat", "http://127.0.0.1:11434/v1/"),
            "http://127.0.0.1:11434/v1/models"
        );
        assert_eq!(
            models_url("anthropic", "https://api.anthropic.com"),
            "https://api.anthropic.com/v1/models"
        );
        assert!(
            PRESETS
                .iter()
                .filter(|p| p.local)
                .all(|p| p.base_url.starts_with("http://127.0.0.1:"))
        );
    }
}
