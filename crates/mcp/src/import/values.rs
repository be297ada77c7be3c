//! What both sources share: parsing a file with its line and column in the error, and carrying
//! environment variables and headers over without carrying a secret.

use super::ImportError;
use crate::config::McpServerConfig;
use std::path::Path;

pub(super) fn parse_json(text: &str, path: &Path) -> Result<serde_json::Value, ImportError> {
    // serde_json's message names the line and column, never the text there.
    serde_json::from_str(text).map_err(|e| ImportError::Parse {
        path: path.to_path_buf(),
        format: "JSON",
        message: e.to_string(),
    })
}

pub(super) fn parse_toml(text: &str, path: &Path) -> Result<toml::Table, ImportError> {
    // Not the error's Display: it quotes the offending line, which may hold a token.
    text.parse::<toml::Table>().map_err(|e| {
        let at = e
            .span()
            .map(|span| {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                format!(" at line {line}, column {column}")
            })
            .unwrap_or_default();
        ImportError::Parse {
            path: path.to_path_buf(),
            format: "TOML",
            message: format!("{}{at}", e.message().trim_end()),
        }
    })
}

/// `${NAME}` or `${NAME:-default}`, the whole value: the name and whether it had a default.
pub(super) fn whole_var(value: &str) -> Option<(&str, bool)> {
    let inner = value.strip_prefix("${")?.strip_suffix('}')?;
    let (name, default) = match inner.split_once(":-") {
        Some((name, _)) => (name, true),
        None => (inner, false),
    };
    is_var_name(name).then_some((name, default))
}

/// The variables a value refers to as `${NAME}` / `${NAME:-…}`.
pub(super) fn vars_in(value: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        rest = &rest[start + 2..];
        let end = rest.find(['}', ':']).unwrap_or(rest.len());
        if is_var_name(&rest[..end]) {
            names.push(rest[..end].to_string());
        }
        rest = &rest[end..];
    }
    names
}

fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn shown_vars(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("${{{n}}}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A literal value shaped like a credential: a known token prefix, or a long run of hex or
/// base64 with letters and digits.
pub fn value_looks_secret(value: &str) -> bool {
    let v = value.trim();
    const PREFIXES: &[&str] = &[
        "sk-",
        "sk_",
        "pk_live_",
        "rk_live_",
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
        "glpat-",
        "xoxa-",
        "xoxb-",
        "xoxp-",
        "xoxr-",
        "xoxs-",
        "xapp-",
        "AKIA",
        "ASIA",
        "AIza",
        "hf_",
        "npm_",
        "pypi-",
        "Bearer ",
        "bearer ",
        "Basic ",
        "eyJ",
    ];
    if PREFIXES.iter().any(|p| v.starts_with(p)) && v.len() >= 12 {
        return true;
    }
    let token_chars = v
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "+/=_-".contains(c));
    let has_digit = v.chars().any(|c| c.is_ascii_digit());
    let has_letter = v.chars().any(|c| c.is_ascii_alphabetic());
    v.len() >= 32 && token_chars && has_digit && has_letter && !v.starts_with('/')
}

/// One variable of a stdio server's environment: a literal that looks secret (by its name or
/// its value) or a value Claude Code would have expanded becomes a name passed from Bosun's
/// environment; anything else is copied.
pub(super) fn carry_env(
    key: &str,
    value: &str,
    config: &mut McpServerConfig,
    notes: &mut Vec<String>,
) {
    let pass = |config: &mut McpServerConfig| {
        if !config.env_vars.iter().any(|v| v == key) {
            config.env_vars.push(key.to_string());
        }
    };
    if let Some((name, default)) = whole_var(value).filter(|(name, _)| *name == key) {
        pass(config);
        if default {
            notes.push(format!(
                "{name} is passed from your environment; the default Claude Code used when it is unset was not copied"
            ));
        }
        return;
    }
    let refs = vars_in(value);
    if !refs.is_empty() {
        pass(config);
        notes.push(format!(
            "{key} was made from {} where the server was configured; Bosun passes variables by name and does not expand them, so that could not be mapped: set {key} in your environment",
            shown_vars(&refs)
        ));
        return;
    }
    if bosun_exec::sandbox::looks_secret(key) || value_looks_secret(value) {
        pass(config);
        notes.push(format!(
            "set {key} in your environment (the value was not copied)"
        ));
        return;
    }
    config.env.insert(key.to_string(), value.to_string());
}

/// One header of an HTTP server: `Authorization: Bearer ${TOKEN}` becomes
/// `bearer_token_env_var`; a literal `Authorization`, a header that looks secret or one made
/// from variables is dropped with a note; anything else is copied.
pub(super) fn carry_header(
    key: &str,
    value: &str,
    config: &mut McpServerConfig,
    notes: &mut Vec<String>,
) {
    let refs = vars_in(value);
    if key.eq_ignore_ascii_case("authorization") {
        let token = value
            .trim()
            .strip_prefix("Bearer ")
            .or_else(|| value.trim().strip_prefix("bearer "))
            .map(str::trim);
        if let Some((name, default)) = token.and_then(whole_var) {
            match &config.bearer_token_env_var {
                Some(existing) if existing != name => notes.push(format!(
                    "the Authorization header (from ${{{name}}}) was dropped: bearer_token_env_var is already {existing}"
                )),
                _ => {
                    config.bearer_token_env_var = Some(name.to_string());
                    if default {
                        notes.push(format!(
                            "the bearer token comes from {name}; the default Claude Code used when it is unset was not copied"
                        ));
                    }
                }
            }
            return;
        }
        if refs.is_empty() {
            notes.push(
                "the Authorization header held a literal credential and was not copied: put the token in an environment variable and set bearer_token_env_var = \"NAME\"".into(),
            );
        } else {
            notes.push(format!(
                "the Authorization header was made from {}, which Bosun cannot send (only `Bearer` and a token from bearer_token_env_var): not copied",
                shown_vars(&refs)
            ));
        }
        return;
    }
    if !refs.is_empty() {
        notes.push(format!(
            "the header {key} was made from {}; Bosun sends literal headers only, so it was not copied",
            shown_vars(&refs)
        ));
        return;
    }
    if bosun_exec::sandbox::looks_secret(key) || value_looks_secret(value) {
        notes.push(format!(
            "the header {key} looked secret and was not copied; add it to config.toml yourself if it may be stored there"
        ));
        return;
    }
    config.headers.insert(key.to_string(), value.to_string());
}

/// A note for `${…}` in a command, its arguments or a URL, which Bosun takes literally.
pub(super) fn note_unexpanded(what: &str, values: &[&str], notes: &mut Vec<String>) {
    let refs: Vec<String> = values.iter().flat_map(|v| vars_in(v)).collect();
    if !refs.is_empty() {
        notes.push(format!(
            "{what} holds {}, which Bosun does not expand: edit it in config.toml",
            shown_vars(&refs)
        ));
    }
}
