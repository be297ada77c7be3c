//! What Bosun knows about one model behind one server: whether its native tool calls are
//! reliable, how to offer it tools when they are not (the format its chat template uses), which
//! edit format it does best with, and its context window.
//!
//! A profile comes from `[providers.NAME] profile = {…}` in `config.toml`, or from a short probe
//! of a loopback or LAN server (cached per base URL and model in `$BOSUN_HOME/model-profiles.json`),
//! or is the default: native tools, edits through the tools.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How the tools are offered to a model whose native tool calls are not reliable: described in
/// the system prompt in the format its chat template was trained on, and parsed from its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ToolFormat {
    /// The API's own `tools` field and `tool_calls` in the response.
    #[default]
    Native,
    /// Hermes / Qwen: `<tools>…</tools>` in the system prompt, calls in `<tool_call>` tags.
    Hermes,
    /// Llama 3.x: `{"name": …, "parameters": {…}}` (after `<|python_tag|>` or alone).
    Llama3,
    /// Mistral: `[TOOL_CALLS] [{"name": …, "arguments": {…}}]`.
    Mistral,
    /// Anything else: a ```json fenced `{"name": …, "arguments": {…}}` block.
    Json,
}

impl ToolFormat {
    pub const ALL: [ToolFormat; 5] = [
        ToolFormat::Native,
        ToolFormat::Hermes,
        ToolFormat::Llama3,
        ToolFormat::Mistral,
        ToolFormat::Json,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            ToolFormat::Native => "native",
            ToolFormat::Hermes => "hermes",
            ToolFormat::Llama3 => "llama3",
            ToolFormat::Mistral => "mistral",
            ToolFormat::Json => "json",
        }
    }
}

impl fmt::Display for ToolFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ToolFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim().to_ascii_lowercase();
        ToolFormat::ALL
            .into_iter()
            .find(|f| f.as_str() == s || (s == "qwen" && *f == ToolFormat::Hermes))
            .ok_or_else(|| {
                format!(
                    "unknown tool format `{s}`: use {}",
                    ToolFormat::ALL.map(|f| f.as_str()).join(", ")
                )
            })
    }
}

/// How the model writes edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum EditFormat {
    /// Through the edit tools (`edit_file`, `write_file`, `apply_patch`).
    #[default]
    Tools,
    /// Whole-file blocks in the reply: a path line, then a fence holding the file's new content.
    Whole,
    /// Search/replace blocks in the reply: a path line, a fence, `<<<<<<< SEARCH`, the old text,
    /// `=======`, the new text, `>>>>>>> REPLACE`.
    SearchReplace,
}

impl EditFormat {
    pub const ALL: [EditFormat; 3] = [
        EditFormat::Tools,
        EditFormat::Whole,
        EditFormat::SearchReplace,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            EditFormat::Tools => "tools",
            EditFormat::Whole => "whole",
            EditFormat::SearchReplace => "search-replace",
        }
    }
}

impl fmt::Display for EditFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EditFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim().to_ascii_lowercase().replace('_', "-");
        match s.as_str() {
            "tools" | "tool" => Ok(EditFormat::Tools),
            "whole" | "whole-file" => Ok(EditFormat::Whole),
            "search-replace" | "diff" => Ok(EditFormat::SearchReplace),
            other => Err(format!(
                "unknown edit format `{other}`: use {}",
                EditFormat::ALL.map(|f| f.as_str()).join(", ")
            )),
        }
    }
}

/// Where a profile came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileSource {
    /// Nothing known: native tools, edits through the tools.
    #[default]
    Default,
    /// `[providers.NAME] profile` in `config.toml` (keys it leaves out come from a probe or the
    /// default).
    Config,
    /// A probe of the server (`bosun models probe`, or the first use of a local server).
    Probe,
}

impl ProfileSource {
    pub fn as_str(&self) -> &'static str {
        match self {
            ProfileSource::Default => "default",
            ProfileSource::Config => "config",
            ProfileSource::Probe => "probe",
        }
    }
}

/// What Bosun knows about one (base URL, model).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ModelProfile {
    /// The model's own tool calls (the API's `tool_calls`) are reliable: tools are sent in the
    /// request's `tools` field. When false they are offered as text in [`Self::tool_format`].
    pub native_tools: bool,
    /// How tools are offered when `native_tools` is false ([`ToolFormat::Native`] otherwise).
    pub tool_format: ToolFormat,
    pub edit_format: EditFormat,
    /// Tokens the model can attend to, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u32>,
    #[serde(default)]
    pub source: ProfileSource,
}

impl ModelProfile {
    /// Native tools, edits through the tools, nothing else known.
    pub const DEFAULT: ModelProfile = ModelProfile {
        native_tools: true,
        tool_format: ToolFormat::Native,
        edit_format: EditFormat::Tools,
        context_window: None,
        source: ProfileSource::Default,
    };

    /// Tools go in the request's `tools` field.
    pub fn sends_native_tools(&self) -> bool {
        self.native_tools || self.tool_format == ToolFormat::Native
    }

    /// A model this small in context is kept to a short first request.
    pub fn is_small(&self) -> bool {
        !self.native_tools || self.context_window.is_some_and(|w| w <= 16_384)
    }
}

/// The profile keys a user set (`[providers.NAME] profile = {…}`); a key left out is decided by
/// a probe or the default. Set keys are never probed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ProfileKeys {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_tools: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_format: Option<ToolFormat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit_format: Option<EditFormat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u32>,
}

impl ProfileKeys {
    pub fn is_empty(&self) -> bool {
        self == &ProfileKeys::default()
    }

    /// Nothing is left for a probe to find out.
    pub fn is_complete(&self) -> bool {
        self.native_tools.is_some() && self.edit_format.is_some() && self.context_window.is_some()
    }

    /// `base` with these keys put over it (source `config` when any is set). Native tools off
    /// with no text format chosen offers fenced JSON; native tools on offers them natively.
    pub fn over(&self, base: &ModelProfile) -> ModelProfile {
        let mut p = base.clone();
        if let Some(n) = self.native_tools {
            p.native_tools = n;
        }
        if let Some(f) = self.tool_format {
            p.tool_format = f;
        }
        if let Some(f) = self.edit_format {
            p.edit_format = f;
        }
        if let Some(w) = self.context_window {
            p.context_window = Some(w);
        }
        if self.tool_format.is_some() && self.native_tools.is_none() {
            // A text format chosen says the native calls are not to be used.
            p.native_tools = p.tool_format == ToolFormat::Native;
        }
        if !p.native_tools && p.tool_format == ToolFormat::Native {
            p.tool_format = ToolFormat::Json;
        }
        if p.native_tools {
            p.tool_format = ToolFormat::Native;
        }
        if !self.is_empty() {
            p.source = ProfileSource::Config;
        }
        p
    }
}

/// Whether `base_url` points at this machine or the local network (loopback, private IPv4
/// ranges, link-local, `localhost`, `*.local`): the only servers probed without being asked.
pub fn is_local_url(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return false;
    };
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private() || ip.is_link_local(),
        Ok(std::net::IpAddr::V6(ip)) => {
            ip.is_loopback()
                || (ip.segments()[0] & 0xfe00) == 0xfc00
                || (ip.segments()[0] & 0xffc0) == 0xfe80
        }
        Err(_) => {
            let d = host.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost") || d.ends_with(".local")
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn formats_parse_from_what_users_type() {
        assert_eq!("Hermes".parse::<ToolFormat>().unwrap(), ToolFormat::Hermes);
        assert_eq!("qwen".parse::<ToolFormat>().unwrap(), ToolFormat::Hermes);
        assert!(
            "xml"
                .parse::<ToolFormat>()
                .unwrap_err()
                .contains("native, hermes")
        );
        assert_eq!(
            "search_replace".parse::<EditFormat>().unwrap(),
            EditFormat::SearchReplace
        );
        assert_eq!("whole".parse::<EditFormat>().unwrap(), EditFormat::Whole);
        assert!("udiff".parse::<EditFormat>().unwrap_err().contains("tools"));
    }

    #[test]
    fn only_this_machine_and_the_lan_are_local() {
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434/v1",
            "http://192.168.1.20:8000/v1",
            "http://10.0.0.5/v1",
            "http://[::1]:8080/v1",
            "http://gpu-box.local:8080/v1",
        ] {
            assert!(is_local_url(url), "{url}");
        }
        for url in [
            "https://api.openai.com/v1",
            "https://openrouter.ai/api/v1",
            "http://8.8.8.8/v1",
            "not a url",
        ] {
            assert!(!is_local_url(url), "{url}");
        }
    }
}
