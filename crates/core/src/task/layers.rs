//! The layered context in the tool loop's requests (see `bosun_context::assemble`): the task
//! files, their tests, their siblings, the map and recent changes, within one budget split by
//! `[context.shares]`. It replaces the map alone for a model not profiled as small, and is
//! assembled again when the map changes (an edit, a command).

use super::TaskRun;
use crate::error::CoreError;
use bosun_protocol::{ContextAssembled, ContextItem, ContextKind, EventMsg};
use std::sync::Arc;

/// The layered budget for a model with `window` tokens: a quarter of it, within 2,000–8,000
/// (4,000 when the window is unknown).
pub(crate) fn layered_budget(window: Option<u32>) -> usize {
    match window {
        Some(w) => (w as usize / 4).clamp(2_000, 8_000),
        None => 4_000,
    }
}

impl TaskRun {
    pub(crate) async fn system_with_layers(
        &mut self,
        base: &str,
        asked: &str,
        map: Arc<bosun_context::RepoMap>,
        version: u64,
    ) -> Result<Option<String>, CoreError> {
        let budget = layered_budget(self.client.profile().context_window);
        let ratio = self.token_ratio.unwrap_or(1.0).clamp(0.5, 2.0);
        let fit = (budget as f64 / ratio) as usize;
        let policy = match self.policy.read() {
            Ok(p) => p.clone(),
            Err(_) => return Ok(None),
        };
        let root = self.worktree_path.clone();
        let repo_root = self.repo_root.clone();
        let base_commit = self.base_commit.clone();
        let touched = self.map_sent.touched.clone();
        let prompt = asked.to_string();
        let shares = self.shares;
        let assembled = tokio::task::spawn_blocking(move || {
            let readable = |p: &str| !policy.is_read_denied(p);
            let recent = |paths: &[String], cap: usize| {
                bosun_workspace::recent_changes(&repo_root, &base_commit, paths, 3, cap)
                    .into_iter()
                    .map(|c| (c.commit, c.summary, c.patch))
                    .collect()
            };
            bosun_context::assemble(
                &bosun_context::Inputs {
                    root: &root,
                    map: &map,
                    prompt: &prompt,
                    touched: &touched,
                    readable: &readable,
                    recent: &recent,
                },
                fit,
                &shares,
            )
        })
        .await
        .map_err(|e| CoreError::Internal(format!("assembling the context failed: {e}")))?;
        self.map_sent.version = version;
        if assembled.text.is_empty() {
            return Ok(None);
        }
        let mut text = assembled.text;
        self.note_redacted(self.redaction.text(&mut text))?;
        if text == self.map_sent.text {
            return Ok(None);
        }
        let counted = self.client.count_tokens(&text).await;
        let scale = |t: usize| ((t as f64) * ratio).ceil() as u64;
        let mut items = self.map_sent.base_items.clone();
        let rest: u64 = items.iter().map(|i| i.tokens).sum();
        for p in &assembled.pieces {
            items.push(ContextItem {
                kind: match p.layer {
                    bosun_context::Layer::Target => ContextKind::File,
                    bosun_context::Layer::Test => ContextKind::Test,
                    bosun_context::Layer::Sibling => ContextKind::Sibling,
                    bosun_context::Layer::Map => ContextKind::Map,
                    bosun_context::Layer::Recent => ContextKind::RecentChanges,
                },
                path: p.path.clone(),
                symbol: None,
                reason: p.reason.clone(),
                tokens: scale(p.tokens),
            });
        }
        let layered = match counted {
            Some(n) => n as u64,
            None => scale(bosun_context::estimate_tokens(&text)),
        };
        self.emitter
            .emit(EventMsg::ContextAssembled(ContextAssembled {
                items,
                total_tokens: layered + rest,
                budget_tokens: budget as u64 + rest,
            }))?;
        self.map_sent.said = true;
        self.map_sent.text = text.clone();
        Ok(Some(format!("{base}\n\n{text}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layered_budget_is_a_quarter_of_the_window_within_two_to_eight_thousand() {
        assert_eq!(layered_budget(Some(4_096)), 2_000);
        assert_eq!(layered_budget(Some(16_384)), 4_096);
        assert_eq!(layered_budget(Some(200_000)), 8_000);
        assert_eq!(layered_budget(None), 4_000);
    }
}
