//! The repository map in the tool loop's requests: the first request waits at most
//! [`MAP_WAIT`] for the map (else goes without it, and the map joins the next request), each
//! request after a change takes the map as it is now, ranked towards what the prompt names and
//! the files the task changed, and `context_assembled` says what went in and why.
//!
//! The budget is the model's context window / 8, clamped to 1,000–4,000 tokens (2,000 when the
//! window is unknown); a model profiled as small gets what keeps its first request under
//! 2,000 tokens, at most 1,000. Tokens are counted by the provider's tokenizer when it has one
//! (llama.cpp `/tokenize`), else estimated as bytes / 3.5 and corrected by how far the last
//! reported `input_tokens` were from that estimate of the request.

use super::TaskRun;
use crate::error::CoreError;
use bosun_model::{ChatMessage, ModelRequest};
use bosun_protocol::{ContextAssembled, ContextItem, ContextKind, EventMsg, ToolSpec};
use std::time::Duration;

/// The longest the first request waits for the map.
pub(crate) const MAP_WAIT: Duration = Duration::from_secs(1);
use bosun_context::MAP_HEADING;
/// A small model's whole first request stays under this many tokens.
const SMALL_FIRST_REQUEST_TOKENS: usize = 2_000;

/// The map as last sent, and the map version it was made from.
#[derive(Default)]
pub(crate) struct MapSent {
    pub version: u64,
    pub text: String,
    /// What the system prompt holds besides the map (instructions, the file list, the files
    /// the prompt names), for `context_assembled`.
    pub base_items: Vec<ContextItem>,
    /// Whether `context_assembled` was sent for the requests so far.
    pub said: bool,
    /// Worktree-relative files the task changed: the ranking leans towards them.
    pub touched: Vec<String>,
}

/// The map's budget for a model with `window` tokens of context.
pub(crate) fn map_budget(window: Option<u32>) -> usize {
    match window {
        Some(w) => (w as usize / 8).clamp(1_000, 4_000),
        None => 2_000,
    }
}

/// Bytes / 3.5 of what a request sends.
pub(crate) fn request_estimate(
    system: &str,
    tools: &[ToolSpec],
    messages: &[ChatMessage],
) -> usize {
    let tools = serde_json::to_string(tools).map_or(0, |s| s.len());
    let messages = serde_json::to_string(messages).map_or(0, |s| s.len());
    ((system.len() + tools + messages) as f64 / 3.5).ceil() as usize
}

impl TaskRun {
    /// Waits (at most [`MAP_WAIT`]) for the map before the first request. (The future holds
    /// no `&TaskRun`, which is not `Sync`.)
    pub(crate) fn wait_for_map(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let live = std::sync::Arc::clone(&self.map);
        async move {
            let _ = tokio::task::spawn_blocking(move || live.wait(MAP_WAIT)).await;
        }
    }

    /// The files an edit changed go into the map and lean its ranking; a command may have
    /// changed anything, so the map looks at the whole tree again, on a thread of its own.
    pub(crate) fn map_after_call(&mut self, touched: &bosun_tools::Touched) {
        match touched {
            bosun_tools::Touched::Paths(paths) => {
                self.map.changed(paths);
                for p in paths {
                    if !self.map_sent.touched.contains(p) {
                        self.map_sent.touched.push(p.clone());
                    }
                }
            }
            bosun_tools::Touched::Unknown => {
                let live = std::sync::Arc::clone(&self.map);
                let _ = std::thread::Builder::new()
                    .name("bosun-map-rebuild".into())
                    .spawn(move || live.rebuild());
            }
            bosun_tools::Touched::Nothing => {}
        }
    }

    /// `base` with the map as it is now, when the map is ready and what it shows changed since
    /// the last request (None: send the system prompt as before).
    pub(crate) async fn system_with_map(
        &mut self,
        base: &str,
        asked: &str,
        tools: &[ToolSpec],
        messages: &[ChatMessage],
    ) -> Result<Option<String>, CoreError> {
        let Some(map) = self.map.current() else {
            // No map yet: the rest of the context is said once.
            if !self.map_sent.said && !self.map_sent.base_items.is_empty() {
                self.map_sent.said = true;
                let items = self.map_sent.base_items.clone();
                let total = items.iter().map(|i| i.tokens).sum();
                self.emitter
                    .emit(EventMsg::ContextAssembled(ContextAssembled {
                        items,
                        total_tokens: total,
                        budget_tokens: 0,
                    }))?;
            }
            return Ok(None);
        };
        let version = self.map.version();
        if version == self.map_sent.version && !self.map_sent.text.is_empty() {
            return Ok(None);
        }
        let profile = self.client.profile();
        // A model not profiled as small gets the layered context; a small one the map alone
        // (its first request stays under 2,000 tokens).
        if !profile.is_small() {
            return self.system_with_layers(base, asked, map, version).await;
        }
        let mut budget = map_budget(profile.context_window);
        if profile.is_small() {
            let used = self.corrected(request_estimate(base, tools, messages));
            budget = SMALL_FIRST_REQUEST_TOKENS
                .saturating_sub(used + 100)
                .min(1_000);
        }
        // Ranked as `bosun bench localise` measures it: what the prompt names and suggests,
        // and the files the task changed.
        let (mut focus_files, idents) = map.task_focus(asked);
        for t in &self.map_sent.touched {
            match focus_files.iter_mut().find(|(f, _)| f == t) {
                Some(entry) => entry.1 = entry.1.max(1.0),
                None => focus_files.push((t.clone(), 1.0)),
            }
        }
        let denied: Vec<String> = match self.policy.read() {
            Ok(policy) => map
                .files
                .iter()
                .filter(|f| policy.is_read_denied(&f.path))
                .map(|f| f.path.clone())
                .collect(),
            Err(_) => return Ok(None),
        };
        // The estimate runs high or low for this model by `ratio`: fit the text to the
        // budget as the model counts it.
        let ratio = self.token_ratio.unwrap_or(1.0).clamp(0.5, 2.0);
        let fit = ((budget as f64 / ratio) as usize).saturating_sub(estimate(MAP_HEADING));
        let ranking = {
            let map = std::sync::Arc::clone(&map);
            let files = focus_files.clone();
            let idents = idents.clone();
            tokio::task::spawn_blocking(move || {
                let ranked: Vec<_> = map
                    .rank_weighted(&files, &idents)
                    .into_iter()
                    .filter(|r| !denied.contains(&r.path))
                    .collect();
                let names: Vec<String> = idents.into_iter().map(|(x, _)| x).collect();
                map.render_focused(&ranked, fit, &names)
            })
            .await
            .map_err(|e| CoreError::Internal(format!("the repository map's ranking failed: {e}")))?
        };
        self.map_sent.version = version;
        if ranking.text.is_empty() || fit < 50 {
            return Ok(None);
        }
        let mut text = format!("{MAP_HEADING}{}", ranking.text);
        self.note_redacted(self.redaction.text(&mut text))?;
        if text == self.map_sent.text {
            return Ok(None);
        }
        let total = match self.client.count_tokens(&text).await {
            Some(n) => n,
            None => ((estimate(&text) as f64) * ratio).ceil() as usize,
        };
        let named: Vec<String> = focus_files
            .iter()
            .filter(|(_, w)| *w >= 1.0)
            .map(|(f, _)| f.clone())
            .collect();
        let suggested: Vec<String> = focus_files
            .iter()
            .filter(|(_, w)| *w < 1.0)
            .map(|(f, _)| f.clone())
            .collect();
        let names: Vec<String> = idents.iter().map(|(x, _)| x.clone()).collect();
        let items = items(
            &ranking.text,
            &Reasons {
                named: &named,
                suggested: &suggested,
                touched: &self.map_sent.touched,
                idents: &names,
            },
            &map,
            ratio,
        );
        let mut all = self.map_sent.base_items.clone();
        let rest: u64 = all.iter().map(|i| i.tokens).sum();
        all.extend(items);
        self.emitter
            .emit(EventMsg::ContextAssembled(ContextAssembled {
                items: all,
                total_tokens: total as u64 + rest,
                budget_tokens: budget as u64 + rest,
            }))?;
        self.map_sent.said = true;
        self.map_sent.text = text.clone();
        Ok(Some(format!("{base}\n\n{text}")))
    }

    /// `tokens` of the estimate, corrected by the last response's reported prompt tokens.
    fn corrected(&self, tokens: usize) -> usize {
        let ratio = self.token_ratio.unwrap_or(1.0).clamp(0.5, 2.0);
        (tokens as f64 * ratio).ceil() as usize
    }

    /// After a response: how the reported prompt tokens compare with the estimate of the
    /// request, for the next estimates.
    pub(crate) fn learn_token_ratio(
        &mut self,
        request: &ModelRequest,
        usage: &bosun_protocol::TokenUsage,
    ) {
        let reported = usage.input_tokens
            + usage.cached_input_tokens
            + usage.cache_write_tokens
            + usage.cache_write_1h_tokens;
        let estimated = request_estimate(&request.system, &request.tools, &request.messages);
        // Tokenizers run 2.5-5 bytes a token: a ratio far outside that is a server reporting
        // something else (only the uncached part, a fixed figure), not a correction.
        if reported > 0 && estimated > 0 {
            let ratio = reported as f64 / estimated as f64;
            if (0.5..=2.0).contains(&ratio) {
                self.token_ratio = Some(ratio);
            }
        }
    }
}

/// The items of what a system prompt holds besides the map, from its sections: the project's
/// instructions, the file list and the files the prompt names (the base prompt is not listed).
pub(crate) fn section_items(system: &str, ratio: f64) -> Vec<ContextItem> {
    let mut items: Vec<ContextItem> = Vec::new();
    let mut current: Option<(ContextItem, String)> = None;
    let flush = |current: &mut Option<(ContextItem, String)>, items: &mut Vec<ContextItem>| {
        if let Some((mut item, text)) = current.take() {
            item.tokens = ((estimate(&text) as f64) * ratio).ceil() as u64;
            items.push(item);
        }
    };
    for line in system.split_inclusive('\n') {
        let head = line.trim_end();
        let opened = if let Some(path) = head.strip_prefix("# Project instructions from ") {
            Some(ContextItem {
                kind: ContextKind::Instructions,
                path: Some(path.to_string()),
                symbol: None,
                reason: "the project's instructions".into(),
                tokens: 0,
            })
        } else if head == "# The repository" {
            Some(ContextItem {
                kind: ContextKind::FileList,
                path: None,
                symbol: None,
                reason: "the repository's files, a few levels deep".into(),
                tokens: 0,
            })
        } else if let Some(rest) = head.strip_prefix("## ")
            && let Some(path) = rest.strip_suffix(" (named in the task)")
        {
            Some(ContextItem {
                kind: ContextKind::File,
                path: Some(path.to_string()),
                symbol: None,
                reason: "named in the prompt".into(),
                tokens: 0,
            })
        } else if head.starts_with("# ") {
            // Another section (the edit format's instructions): not context about the repository.
            flush(&mut current, &mut items);
            None
        } else {
            if let Some((_, text)) = current.as_mut() {
                text.push_str(line);
            }
            continue;
        };
        if let Some(item) = opened {
            flush(&mut current, &mut items);
            current = Some((item, line.to_string()));
        }
    }
    flush(&mut current, &mut items);
    // memory: one item per remembered line (crate::memory).
    items.extend(crate::memory::context_items(system, ratio));
    items
}

fn estimate(text: &str) -> usize {
    bosun_context::estimate_tokens(text)
}

/// What the ranking was pointed at, to say why a file is in the map.
struct Reasons<'a> {
    named: &'a [String],
    suggested: &'a [String],
    touched: &'a [String],
    idents: &'a [String],
}

/// One item per file of the rendered map, with why it is there and its tokens.
fn items(text: &str, why: &Reasons, map: &bosun_context::RepoMap, ratio: f64) -> Vec<ContextItem> {
    let Reasons {
        named,
        suggested,
        touched,
        idents,
    } = why;
    let mut blocks: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            blocks.push((line.trim_end_matches(':').to_string(), String::new()));
        }
        if let Some((_, b)) = blocks.last_mut() {
            b.push_str(line);
            b.push('\n');
        }
    }
    blocks
        .into_iter()
        .enumerate()
        .map(|(i, (path, block))| {
            let defines: Vec<&str> = map
                .files
                .iter()
                .find(|f| f.path == path)
                .map(|f| {
                    idents
                        .iter()
                        .filter(|x| {
                            f.tags
                                .iter()
                                .any(|t| t.role == bosun_syntax::Role::Definition && &t.name == *x)
                        })
                        .map(String::as_str)
                        .collect()
                })
                .unwrap_or_default();
            let reason = if touched.contains(&path) {
                "changed by the task".to_string()
            } else if named.contains(&path) {
                "named in the prompt".to_string()
            } else if !defines.is_empty() {
                let names: Vec<String> = defines.iter().take(3).map(|d| format!("`{d}`")).collect();
                format!("defines {}, named in the prompt", names.join(", "))
            } else if suggested.contains(&path) {
                "its path or names share the prompt's words".to_string()
            } else {
                format!("ranked {} by the map", i + 1)
            };
            ContextItem {
                kind: ContextKind::Map,
                path: Some(path),
                symbol: None,
                reason,
                tokens: ((estimate(&block) as f64) * ratio).ceil() as u64,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_an_eighth_of_the_window_within_one_to_four_thousand() {
        assert_eq!(map_budget(Some(4_096)), 1_000);
        assert_eq!(map_budget(Some(16_384)), 2_048);
        assert_eq!(map_budget(Some(200_000)), 4_000);
        assert_eq!(map_budget(None), 2_000);
    }
}
