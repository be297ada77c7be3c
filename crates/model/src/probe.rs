//! The probe behind a model profile: what the server says about the model (its chat template
//! and context window: llama.cpp's `GET /props`, Ollama's `POST /api/show`), and whether the
//! model's native tool calls come back valid (two short requests, each offering two tools).
//!
//! The chat template decides how tools are offered as text when native calls are not
//! reliable: `<tool_call>` in it is Hermes/Qwen, `<|python_tag|>` Llama 3, `[TOOL_CALLS]`
//! Mistral; without a template the model's name is the hint, and fenced JSON is the fallback.

use crate::message::{ChatMessage, ModelRequest};
use crate::{
    EditFormat, ModelError, ModelProfile, ProfileSource, ProviderConfig, RetryPolicy, ToolFormat,
};
use bosun_protocol::ToolSpec;
use serde_json::{Value, json};
use std::time::Duration;

/// The edit format chosen for a model whose native tool calls are not reliable. Measured with
/// `bosun eval --suite tests/eval` and Qwen2.5-Coder-1.5B: whole files 10 of 21 in the direct
/// turn, search/replace blocks 3 of 21 (the model does not copy the lines to replace exactly).
pub const TEXT_EDIT_FORMAT: EditFormat = EditFormat::Whole;

/// What [`probe_profile`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeFindings {
    pub profile: ModelProfile,
    /// Where the chat template was read (`llama.cpp /props`, `ollama /api/show`).
    pub template_from: Option<String>,
    /// One line per observation.
    pub findings: Vec<String>,
}

/// The server's root: the base URL without its `/v1`.
fn root(base_url: &str) -> String {
    let b = base_url.trim_end_matches('/');
    b.strip_suffix("/v1").unwrap_or(b).to_string()
}

/// The tool format a chat template was written for, if it says.
pub fn template_tool_format(template: &str) -> Option<ToolFormat> {
    if template.contains("<tool_call>") {
        Some(ToolFormat::Hermes)
    } else if template.contains("<|python_tag|>")
        || (template.contains("<|start_header_id|>") && template.contains("\"parameters\""))
    {
        Some(ToolFormat::Llama3)
    } else if template.contains("[TOOL_CALLS]") || template.contains("[AVAILABLE_TOOLS]") {
        Some(ToolFormat::Mistral)
    } else {
        None
    }
}

/// The tool format a model's name suggests (when the server shows no template).
pub fn name_tool_format(model: &str) -> Option<ToolFormat> {
    let m = model.to_ascii_lowercase();
    if m.contains("qwen") || m.contains("hermes") {
        Some(ToolFormat::Hermes)
    } else if m.contains("llama-3") || m.contains("llama3") {
        Some(ToolFormat::Llama3)
    } else if m.contains("mistral") || m.contains("mixtral") || m.contains("codestral") {
        Some(ToolFormat::Mistral)
    } else {
        None
    }
}

struct ServerInfo {
    template: Option<String>,
    template_from: Option<String>,
    context_window: Option<u32>,
    context_from: Option<String>,
}

async fn server_info(http: &reqwest::Client, cfg: &ProviderConfig) -> ServerInfo {
    let root = root(&cfg.base_url);
    let mut info = ServerInfo {
        template: None,
        template_from: None,
        context_window: None,
        context_from: None,
    };
    let key = cfg.api_key.as_ref().map(|k| k.expose().to_string());
    let with_key = |r: reqwest::RequestBuilder| match &key {
        Some(k) => r.bearer_auth(k),
        None => r,
    };
    // llama.cpp
    if let Ok(resp) = with_key(http.get(format!("{root}/props"))).send().await
        && resp.status().is_success()
        && let Ok(v) = resp.json::<Value>().await
    {
        if let Some(t) = v.get("chat_template").and_then(Value::as_str)
            && !t.is_empty()
        {
            info.template = Some(t.to_string());
            info.template_from = Some("llama.cpp /props".into());
        }
        let n_ctx = v
            .pointer("/default_generation_settings/n_ctx")
            .or_else(|| v.get("n_ctx"))
            .and_then(Value::as_u64);
        if let Some(n) = n_ctx.and_then(|n| u32::try_from(n).ok()).filter(|n| *n > 0) {
            info.context_window = Some(n);
            info.context_from = Some("llama.cpp /props n_ctx".into());
        }
    }
    if info.template.is_some() {
        return info;
    }
    // Ollama
    if let Ok(resp) = with_key(http.post(format!("{root}/api/show")))
        .json(&json!({"model": cfg.model}))
        .send()
        .await
        && resp.status().is_success()
        && let Ok(v) = resp.json::<Value>().await
    {
        if let Some(t) = v.get("template").and_then(Value::as_str)
            && !t.is_empty()
        {
            info.template = Some(t.to_string());
            info.template_from = Some("ollama /api/show".into());
        }
        // The context length set for the model (`num_ctx`), else the one it was trained with.
        let set = v.get("parameters").and_then(Value::as_str).and_then(|p| {
            p.lines().find_map(|l| {
                let mut w = l.split_whitespace();
                (w.next() == Some("num_ctx")).then(|| w.next()?.parse::<u32>().ok())?
            })
        });
        let trained = v
            .get("model_info")
            .and_then(Value::as_object)
            .and_then(|m| {
                m.iter()
                    .find(|(k, _)| k.ends_with(".context_length"))
                    .and_then(|(_, v)| v.as_u64())
                    .and_then(|n| u32::try_from(n).ok())
            });
        if let Some(n) = set.or(trained) {
            info.context_window = Some(n);
            info.context_from = Some(if set.is_some() {
                "ollama num_ctx".into()
            } else {
                "ollama model_info".into()
            });
        }
    }
    info
}

fn probe_tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "read_file".into(),
            description: "Read a text file of the repository.".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string", "description": "Path relative to the repository root"}}, "required": ["path"]}),
        },
        ToolSpec {
            name: "list_dir".into(),
            description: "List the entries of a directory of the repository.".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string", "description": "Directory relative to the repository root"}}, "required": ["path"]}),
        },
    ]
}

/// Whether a response holds the one native call expected, with that argument.
fn expected_call(resp: &crate::ModelResponse, tool: &str, path: &str) -> bool {
    resp.tool_calls.len() == 1
        && resp.tool_calls[0].name == tool
        && serde_json::from_str::<Value>(&resp.tool_calls[0].arguments)
            .ok()
            .and_then(|a| a.get("path").and_then(Value::as_str).map(str::to_string))
            .is_some_and(|p| p.trim_start_matches("./").trim_end_matches('/') == path)
}

/// Probes the server behind `cfg` (see the module docs). Fails only when the server cannot be
/// reached or refuses the requests; a model that answers badly is a finding, not an error.
///
/// Unasked (`asked` false: a task's first use of a local server), only a server that says
/// what it serves — llama.cpp's `/props`, Ollama's `/api/show` — is sent the two tool-call
/// requests; for any other, `None` and the profile stays as configured.
pub async fn probe_profile(
    cfg: &ProviderConfig,
    asked: bool,
) -> Result<Option<ProbeFindings>, ModelError> {
    let http = reqwest::Client::builder()
        .connect_timeout(cfg.limits.connect_timeout)
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| ModelError::Config(format!("cannot build the HTTP client: {e}")))?;
    let info = server_info(&http, cfg).await;
    if !asked && info.template_from.is_none() && info.context_from.is_none() {
        return Ok(None);
    }
    let mut findings = Vec::new();
    match (
        &info.template_from,
        info.template.as_deref().and_then(template_tool_format),
    ) {
        (Some(from), Some(f)) => findings.push(format!(
            "chat template ({from}) writes tool calls in the {f} format"
        )),
        (Some(from), None) => findings.push(format!(
            "chat template ({from}) has no tool-call format Bosun knows"
        )),
        (None, _) => findings.push(
            "the server shows no chat template (neither llama.cpp's /props nor Ollama's /api/show)"
                .into(),
        ),
    }
    if let (Some(n), Some(from)) = (info.context_window, &info.context_from) {
        findings.push(format!("context window {n} tokens ({from})"));
    }

    // Two short requests with native tools; the default profile so they go natively.
    let mut probe_cfg = cfg.clone();
    probe_cfg.profile = ModelProfile::DEFAULT;
    probe_cfg.retry = RetryPolicy::none();
    probe_cfg.max_output_tokens = 256;
    probe_cfg.temperature = Some(0.0);
    // A short prompt: a server that does not begin answering it within a minute is hung, and
    // the task that asked should not wait the five minutes a long prompt may need.
    probe_cfg.limits.first_byte_timeout = probe_cfg
        .limits
        .first_byte_timeout
        .min(Duration::from_secs(60));
    probe_cfg.limits.idle_timeout = probe_cfg.limits.idle_timeout.min(Duration::from_secs(30));
    let client = crate::client(probe_cfg)?;
    let tools = probe_tools();
    let cases = [
        (
            "Use the read_file tool to read the file README.md.",
            "read_file",
            "README.md",
        ),
        (
            "Use the list_dir tool to list the directory src.",
            "list_dir",
            "src",
        ),
    ];
    let mut native_ok = 0;
    let mut as_text = 0;
    for (prompt, tool, path) in cases {
        let req = ModelRequest {
            system: "You are a coding assistant working in a repository. Call tools to act.".into(),
            messages: vec![ChatMessage::User {
                content: prompt.into(),
            }],
            tools: tools.clone(),
            retry_sampling: None,
        };
        let resp = client.complete(&req).await?;
        if expected_call(&resp, tool, path) {
            native_ok += 1;
        } else if !crate::recover_tool_calls(&resp.text, &tools)
            .calls
            .is_empty()
        {
            as_text += 1;
        }
    }
    findings.push(format!(
        "{native_ok} of {} native tool calls came back valid{}",
        cases.len(),
        if as_text > 0 {
            format!("; {as_text} written as text instead")
        } else {
            String::new()
        }
    ));
    let native_tools = native_ok == cases.len();
    let tool_format = if native_tools {
        ToolFormat::Native
    } else {
        info.template
            .as_deref()
            .and_then(template_tool_format)
            .or_else(|| name_tool_format(&cfg.model))
            .unwrap_or(ToolFormat::Json)
    };
    let edit_format = if native_tools {
        EditFormat::Tools
    } else {
        TEXT_EDIT_FORMAT
    };
    let profile = ModelProfile {
        native_tools,
        tool_format,
        edit_format,
        context_window: info.context_window,
        source: ProfileSource::Probe,
    };
    if !native_tools {
        let edits = match edit_format {
            EditFormat::Whole => "edits as whole files".to_string(),
            f => format!("edits as {f} blocks"),
        };
        findings.push(format!(
            "tools will be offered as {tool_format} text, {edits}"
        ));
    }
    Ok(Some(ProbeFindings {
        profile,
        template_from: info.template_from,
        findings,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_name_their_tool_format() {
        let qwen = "{%- if tools %}<|im_start|>system\n# Tools\n<tools>{{ tool | tojson }}</tools>\n<tool_call>\n{\"name\": <function-name>}</tool_call>";
        assert_eq!(template_tool_format(qwen), Some(ToolFormat::Hermes));
        let llama = "<|start_header_id|>ipython<|end_header_id|>{\"name\": …, \"parameters\": …}<|python_tag|>";
        assert_eq!(template_tool_format(llama), Some(ToolFormat::Llama3));
        assert_eq!(
            template_tool_format("[AVAILABLE_TOOLS] {{ tools }}[/AVAILABLE_TOOLS][TOOL_CALLS]"),
            Some(ToolFormat::Mistral)
        );
        assert_eq!(template_tool_format("{{ bos_token }}{{ messages }}"), None);
        assert_eq!(
            name_tool_format("Qwen2.5-Coder-1.5B-Instruct"),
            Some(ToolFormat::Hermes)
        );
        assert_eq!(name_tool_format("phi-3"), None);
        assert_eq!(root("http://127.0.0.1:8080/v1/"), "http://127.0.0.1:8080");
        assert_eq!(root("http://127.0.0.1:11434"), "http://127.0.0.1:11434");
    }
}
