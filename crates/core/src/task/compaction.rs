//! Compaction you can see: before a request would pass [`COMPACT_AT`] of the model's context
//! window, old tool outputs are masked (the last [`KEEP_OUTPUTS`] stay verbatim; each older one
//! becomes one line naming the tool and its target, and that the output is in the journal);
//! if that is not enough, the older turns are summarised by the model into one message. A
//! provider's "context length exceeded" is met the same way, then the request is sent again.
//! `context_compacted` says what was masked and summarised, and the tokens before and after.
//!
//! The system prompt (the project's instructions with it) is never touched, so it is there
//! after every compaction; the task's first message (what the user asked) and the last turns
//! are always kept whole.

use super::TaskRun;
use crate::approvals::AskRequest;
use crate::error::CoreError;
use bosun_model::{ChatMessage, ModelRequest};
use bosun_protocol::{ContextCompacted, EventMsg, ToolAction, ToolSpec};

/// Compaction starts when a request would pass this share of the context window.
pub(crate) const COMPACT_AT: f64 = 0.8;
/// What compaction aims for, as a share of the window.
const COMPACT_TO: f64 = 0.5;
/// Tool outputs kept verbatim, the newest.
pub(crate) const KEEP_OUTPUTS: usize = 10;
/// Messages at the end always kept whole by a summary.
const KEEP_TAIL: usize = 6;
/// A tool output this short is kept as it is.
const MASK_MIN_BYTES: usize = 300;
/// The start of a masked output (a masked output is never masked again).
const MASKED: &str = "[output masked to save context: ";
/// What a summary is sent with.
const SUMMARY_PROMPT: &str = "You summarise the earlier part of a coding agent's session so the agent can continue without it. Keep, as short bullet points: what the user asked, the decisions made, the files read and changed (paths), the commands run and whether they passed, the approaches that failed and why, and what is left to do. Do not invent anything. Reply with the summary only.";

/// Where the user's own messages kept through a summary start, and what separates them.
const USER_SAID: &str =
    "\n\n[What you were told during the session, and what the user pinned, word for word:\n";
const USER_SAID_SEP: &str = "\n---\n";

/// How a compaction went.
pub(crate) enum Compacted {
    /// Nothing needed (or nothing could be done and the request is small enough).
    No,
    /// The conversation is smaller now.
    Yes,
    /// Even the first message and the last turn alone pass the window: the task cannot go on.
    TooBig(String),
}

/// `(tool name, target)` of a tool call, for the masked line: `read_file src/a.py`.
fn target(name: &str, args: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(args).unwrap_or_default();
    let pick = ["path", "command", "pattern", "name"]
        .iter()
        .find_map(|k| v.get(*k).and_then(|x| x.as_str()).map(str::to_string))
        .unwrap_or_default();
    let pick: String = pick.chars().take(80).collect();
    if pick.is_empty() {
        name.to_string()
    } else {
        format!("{name} {pick}")
    }
}

/// Masks the tool outputs of `messages` older than the last [`KEEP_OUTPUTS`]; returns what it
/// masked (`tool target`).
#[cfg(test)]
pub(crate) fn mask_old_outputs(messages: &mut [ChatMessage]) -> Vec<String> {
    mask_outputs(messages, KEEP_OUTPUTS, &Default::default())
}

/// Masks the tool outputs of `messages` but the last `keep` and the `pinned` calls'.
fn mask_outputs(
    messages: &mut [ChatMessage],
    keep: usize,
    pinned: &std::collections::BTreeSet<String>,
) -> Vec<String> {
    let mut calls: std::collections::HashMap<String, String> = Default::default();
    for m in messages.iter() {
        if let ChatMessage::Assistant { tool_calls, .. } = m {
            for c in tool_calls {
                calls.insert(c.id.clone(), target(&c.name, &c.arguments));
            }
        }
    }
    let results: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, ChatMessage::Tool { .. }))
        .map(|(i, _)| i)
        .collect();
    let old = results.len().saturating_sub(keep);
    let mut masked = Vec::new();
    for &i in &results[..old] {
        if let ChatMessage::Tool {
            call_id, content, ..
        } = &mut messages[i]
        {
            if content.len() < MASK_MIN_BYTES
                || content.starts_with(MASKED)
                || pinned.contains(call_id.as_str())
            {
                continue;
            }
            let what = calls
                .get(call_id.as_str())
                .cloned()
                .unwrap_or_else(|| "a tool call".into());
            *content = format!(
                "{MASKED}{what} returned {} bytes; the whole output is in the task's journal (call {call_id}). Run it again if you need it.]",
                content.len()
            );
            masked.push(what);
        }
    }
    masked
}

/// One line for a message, for the list of what a summary replaced.
fn describe(m: &ChatMessage) -> String {
    let cut = |s: &str| {
        let line = s.lines().next().unwrap_or("");
        let mut out: String = line.chars().take(80).collect();
        if line.chars().count() > 80 {
            out.push('…');
        }
        out
    };
    match m {
        ChatMessage::User { content } => format!("user: {}", cut(content)),
        ChatMessage::Assistant {
            content,
            tool_calls,
            ..
        } => {
            let calls: Vec<String> = tool_calls
                .iter()
                .map(|c| target(&c.name, &c.arguments))
                .collect();
            match (content.trim().is_empty(), calls.is_empty()) {
                (_, false) if content.trim().is_empty() => {
                    format!("assistant: {}", calls.join(", "))
                }
                (false, false) => format!("assistant: {} ({})", cut(content), calls.join(", ")),
                _ => format!("assistant: {}", cut(content)),
            }
        }
        ChatMessage::Tool { content, .. } => format!("tool result: {} bytes", content.len()),
    }
}

/// The messages as plain text, for the summariser.
fn transcript(messages: &[ChatMessage]) -> String {
    let mut out = String::new();
    for m in messages {
        match m {
            ChatMessage::User { content } => out.push_str(&format!("USER:\n{content}\n\n")),
            ChatMessage::Assistant {
                content,
                tool_calls,
                ..
            } => {
                out.push_str(&format!("AGENT:\n{content}\n"));
                for c in tool_calls {
                    out.push_str(&format!("CALL {}({})\n", c.name, c.arguments));
                }
                out.push('\n');
            }
            ChatMessage::Tool { content, .. } => {
                let cut: String = content.chars().take(4_000).collect();
                out.push_str(&format!("RESULT:\n{cut}\n\n"));
            }
        }
    }
    out
}

impl TaskRun {
    /// The model's context window in tokens: its profile (configured or probed), else the
    /// price table's.
    pub(crate) fn context_window(&self) -> Option<u64> {
        let known = self
            .client
            .profile()
            .context_window
            .map(u64::from)
            .or_else(|| self.budget.prices().context_window(self.client.model()))
            .filter(|w| *w > 0);
        match (known, self.window_learned) {
            (Some(k), Some(l)) => Some(k.min(l)),
            (k, l) => k.or(l),
        }
    }

    /// The tokens a request of `system`, `tools` and `messages` would take (estimated and
    /// corrected by the last reported prompt tokens).
    fn request_tokens(&self, system: &str, tools: &[ToolSpec], messages: &[ChatMessage]) -> u64 {
        let estimate = super::repo_map::request_estimate(system, tools, messages) as f64;
        let ratio = self.token_ratio.unwrap_or(1.0).clamp(0.5, 2.0);
        (estimate * ratio).ceil() as u64
    }

    /// Compacts `messages` when the request would pass [`COMPACT_AT`] of the window, or
    /// always (`forced`: the provider said it was too long), towards [`COMPACT_TO`] of it.
    pub(crate) async fn compact(
        &mut self,
        system: &str,
        tools: &[ToolSpec],
        messages: &mut Vec<ChatMessage>,
        forced: Option<&str>,
    ) -> Result<Compacted, CoreError> {
        let before = self.request_tokens(system, tools, messages);
        if let Some(said) = forced {
            // The provider said too long: its window is what it says, else smaller than
            // what was sent, whatever Bosun thought it was; later requests keep within it.
            let window = said_window(said).unwrap_or(before * 9 / 10).max(1);
            self.window_learned = Some(self.window_learned.map_or(window, |l| l.min(window)));
        }
        let forced = forced.is_some();
        let Some(window) = self.context_window() else {
            return Ok(Compacted::No);
        };
        let limit = (window as f64 * COMPACT_AT) as u64;
        if !forced && before <= limit {
            return Ok(Compacted::No);
        }
        let target = (window as f64 * COMPACT_TO) as u64;
        let pinned_calls = self.pins.calls();
        let mut masked = if self.mask_outputs {
            mask_outputs(messages, KEEP_OUTPUTS, &pinned_calls)
        } else {
            Vec::new()
        };
        let mut now = self.request_tokens(system, tools, messages);
        // Ten big outputs can pass a small window alone: fewer are kept, down to the last two.
        let mut keep = KEEP_OUTPUTS;
        while self.mask_outputs && now > target && keep > 2 {
            keep -= 1;
            let more = mask_outputs(messages, keep, &pinned_calls);
            if !more.is_empty() {
                masked.extend(more);
                now = self.request_tokens(system, tools, messages);
            }
        }
        let mut summarised = Vec::new();
        let mut summary = None;
        // Still too big for the request to go: the older turns are summarised.
        if (now > limit || (forced && masked.is_empty()))
            && let Some((lines, text)) = self.summarise(messages).await?
        {
            summarised = lines;
            summary = Some(text);
            now = self.request_tokens(system, tools, messages);
        }
        if masked.is_empty() && summarised.is_empty() {
            // Nothing left to drop: past the window (or the provider said so), the task cannot
            // go on; under it, the request goes as it is.
            if now > window || forced {
                return Ok(Compacted::TooBig(self.too_big(format!(
                    "the conversation cannot be made small enough for the model's context window ({window} tokens): the task's first message, its last {KEEP_TAIL} messages and what is pinned alone take about {now} tokens"
                ), messages)));
            }
            return Ok(Compacted::No);
        }
        self.emitter
            .emit(EventMsg::ContextCompacted(ContextCompacted {
                tokens_before: before,
                tokens_after: now,
                window_tokens: window,
                reason: if forced {
                    "provider_said_too_long".into()
                } else {
                    "near_window".into()
                },
                masked,
                summarised,
                summary,
            }))?;
        if now > window {
            return Ok(Compacted::TooBig(self.too_big(format!(
                "after compaction the request still takes about {now} tokens, more than the model's context window ({window} tokens): its first message, last turns and what is pinned alone are too big"
            ), messages)));
        }
        self.compactions += 1;
        Ok(Compacted::Yes)
    }

    /// The failure's message: what is too big, then what to unpin (when anything is pinned)
    /// or what else to do.
    fn too_big(&self, what: String, messages: &[ChatMessage]) -> String {
        match self.pins_to_unpin(messages) {
            Some(unpin) => {
                format!("{what}; {unpin}, or use a model with a larger window.")
            }
            None => format!(
                "{what}. Start a new task with a shorter prompt, or use a model with a larger window."
            ),
        }
    }

    /// Summarises the messages between the first one and the last [`KEEP_TAIL`] (cut where a
    /// turn starts, so no tool result loses its call) into the first message; returns the lines
    /// describing what it replaced and the summary. None when there is nothing to summarise or
    /// the summary failed (the task goes on with masking alone).
    async fn summarise(
        &mut self,
        messages: &mut Vec<ChatMessage>,
    ) -> Result<Option<(Vec<String>, String)>, CoreError> {
        if messages.len() <= KEEP_TAIL + 2 {
            return Ok(None);
        }
        // A summary the user refused is not asked for again until the conversation has grown
        // by a few messages.
        if self
            .summary_refused_at
            .is_some_and(|n| messages.len() < n + KEEP_TAIL)
        {
            return Ok(None);
        }
        // The kept tail starts at an assistant message: its results follow it.
        let mut split = messages.len() - KEEP_TAIL;
        while split > 1 && !matches!(messages[split], ChatMessage::Assistant { .. }) {
            split -= 1;
        }
        if split <= 1 {
            return Ok(None);
        }
        let middle = &messages[1..split];
        let request = ModelRequest {
            system: SUMMARY_PROMPT.to_string(),
            messages: vec![ChatMessage::User {
                content: transcript(middle),
            }],
            tools: Vec::new(),
            retry_sampling: None,
        };
        let client = self
            .summarizer
            .clone()
            .unwrap_or_else(|| std::sync::Arc::clone(&self.client));
        let response = match client.complete(&request).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!("summarising for compaction failed: {e}");
                return Ok(None);
            }
        };
        let model = if response.model.is_empty() {
            client.model().to_string()
        } else {
            response.model.clone()
        };
        let recorded = self.budget.record(&model, client.model(), &response);
        self.emitter.emit(EventMsg::Usage(recorded.event))?;
        let mut text = response.text.trim().to_string();
        if text.is_empty() {
            return Ok(None);
        }
        self.note_redacted(self.redaction.text(&mut text))?;
        let lines: Vec<String> = middle.iter().map(describe).collect();
        // `[context] review_summaries`: the user reads it first, and may edit or refuse it.
        if self.review_summaries {
            let action = ToolAction::Summary {
                text: text.clone(),
                replaces: lines.len() as u32,
            };
            let answer = self
                .gate
                .ask_summary(
                    AskRequest {
                        call_id: "compaction",
                        tool: "compaction",
                        action: &action,
                        reason: format!(
                            "the conversation nears the model's context window: this summary would replace {} older messages. Accept it, edit it, or refuse it to keep them (the task may then not fit)",
                            lines.len()
                        ),
                        rule: "context.review_summaries".into(),
                        source: "config.toml".into(),
                        suggestions: Vec::new(),
                        preview: None,
                    },
                    &self.emitter,
                    &self.cancel,
                )
                .await?;
            match answer {
                Ok(Some(edited)) => {
                    text = edited;
                    self.note_redacted(self.redaction.text(&mut text))?;
                }
                Ok(None) => {
                    self.summary_refused_at = Some(messages.len());
                    return Ok(None);
                }
                Err(()) => return Ok(None),
            }
        }
        let drained: Vec<ChatMessage> = messages.drain(1..split).collect();
        // What the user said is never summarised away (their rules, their corrections): it
        // is kept word for word after the summary.
        let mut said: Vec<String> = drained
            .iter()
            .filter_map(|m| match m {
                // (Long ones are check output and file listings Bosun sent, not the user's
                // words — unless the user pinned one.)
                ChatMessage::User { content }
                    if content.len() <= 1_500 || self.pins.is_pinned_message(content) =>
                {
                    Some(content.clone())
                }
                _ => None,
            })
            .collect();
        // Pinned tool outputs are kept word for word too, with the call that made them.
        let pinned_calls = self.pins.calls();
        for m in &drained {
            if let ChatMessage::Assistant { tool_calls, .. } = m {
                for c in tool_calls.iter().filter(|c| pinned_calls.contains(&c.id)) {
                    let output = drained.iter().find_map(|r| match r {
                        ChatMessage::Tool {
                            call_id, content, ..
                        } if call_id == &c.id => Some(content.as_str()),
                        _ => None,
                    });
                    if let Some(output) = output {
                        said.push(format!(
                            "(pinned output of {} {}, call {})\n{output}",
                            c.name, c.arguments, c.id
                        ));
                    }
                }
            }
        }
        if let ChatMessage::User { content } = &mut messages[0] {
            // A summary of an earlier compaction is replaced by the new one, which covers it
            // (the user's messages it kept are kept again below).
            let mut kept: Vec<String> = Vec::new();
            if let Some(at) = content.find("\n\n[Summary of the session so far") {
                if let Some(k) = content.find(USER_SAID) {
                    let tail = &content[k + USER_SAID.len()..];
                    kept.extend(
                        tail.trim_end_matches(']')
                            .split(USER_SAID_SEP)
                            .map(|x| x.trim().to_string())
                            .filter(|x| !x.is_empty()),
                    );
                }
                content.truncate(at);
            }
            kept.extend(said);
            content.push_str(&format!(
                "\n\n[Summary of the session so far, by Bosun, replacing {} earlier messages:\n{text}\n]",
                lines.len()
            ));
            if !kept.is_empty() {
                content.push_str(USER_SAID);
                content.push_str(&kept.join(USER_SAID_SEP));
                content.push_str("\n]");
            }
        }
        Ok(Some((lines, text)))
    }
}

/// The window a "too long" message names: `maximum context length is 8192 tokens`,
/// `… > 200000 maximum`.
fn said_window(message: &str) -> Option<u64> {
    let m = message.to_ascii_lowercase();
    let number_after = |key: &str| -> Option<u64> {
        let at = m.find(key)? + key.len();
        let digits: String = m[at..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ',')
            .filter(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    };
    number_after("maximum context length is")
        .or_else(|| number_after("context window of"))
        .or_else(|| {
            let at = m.find(" maximum")?;
            let before = m[..at].trim_end();
            let digits: String = before
                .chars()
                .rev()
                .take_while(char::is_ascii_digit)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            digits.parse().ok()
        })
        .filter(|n| *n > 0)
}

/// Whether a model error says the request was longer than the model's context.
pub(crate) fn context_exceeded(e: &bosun_model::ModelError) -> bool {
    let bosun_model::ModelError::Http {
        status, message, ..
    } = e
    else {
        return false;
    };
    let m = message.to_ascii_lowercase();
    matches!(status, 400 | 413 | 422)
        && (m.contains("context_length_exceeded")
            || m.contains("context length")
            || m.contains("maximum context")
            || m.contains("context window")
            || m.contains("prompt is too long")
            || m.contains("too many tokens")
            || m.contains("exceeds the context"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use bosun_model::ToolCall;

    fn call(id: &str, path: &str) -> ChatMessage {
        ChatMessage::Assistant {
            content: String::new(),
            tool_calls: vec![ToolCall {
                id: id.into(),
                name: "read_file".into(),
                arguments: format!("{{\"path\":\"{path}\"}}"),
            }],
            reasoning: Vec::new(),
        }
    }

    #[test]
    fn old_outputs_are_masked_the_last_ten_and_short_ones_kept() {
        let mut messages = vec![ChatMessage::User {
            content: "Fix it".into(),
        }];
        for i in 0..14 {
            messages.push(call(&format!("c{i}"), &format!("f{i}.py")));
            messages.push(ChatMessage::Tool {
                call_id: format!("c{i}"),
                content: if i == 1 {
                    "short".into()
                } else {
                    "x".repeat(5_000)
                },
                is_error: false,
            });
        }
        let masked = mask_old_outputs(&mut messages);
        assert_eq!(
            masked,
            ["read_file f0.py", "read_file f2.py", "read_file f3.py"]
        );
        let ChatMessage::Tool { content, .. } = &messages[2] else {
            panic!()
        };
        assert_eq!(
            content,
            "[output masked to save context: read_file f0.py returned 5000 bytes; the whole output is in the task's journal (call c0). Run it again if you need it.]"
        );
        // Masking again changes nothing.
        assert!(mask_old_outputs(&mut messages).is_empty());
        let ChatMessage::Tool { content, .. } = messages.last().unwrap() else {
            panic!()
        };
        assert_eq!(content.len(), 5_000);
    }

    #[test]
    fn a_too_long_error_is_recognised_by_its_words_and_status() {
        let err = |status: u16, message: &str| bosun_model::ModelError::Http {
            provider: "p".into(),
            status,
            message: message.into(),
            attempts: 1,
        };
        assert!(context_exceeded(&err(
            400,
            "This model's maximum context length is 8192 tokens"
        )));
        assert!(context_exceeded(&err(
            400,
            "prompt is too long: 210000 tokens > 200000 maximum"
        )));
        assert!(!context_exceeded(&err(400, "invalid tool schema")));
        assert!(!context_exceeded(&err(500, "maximum context length")));
        assert_eq!(
            said_window("This model's maximum context length is 8,192 tokens. However"),
            Some(8192)
        );
        assert_eq!(
            said_window("prompt is too long: 210000 tokens > 200000 maximum"),
            Some(200_000)
        );
        assert_eq!(said_window("too long"), None);
    }
}
