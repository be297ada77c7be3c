//! `write_file{path, content}`: create or overwrite a file, creating parent directories.

use crate::path::{confine_for_write, normalize_rel};
use crate::text::human_size;
use crate::{ToolContext, ToolError, ToolHandler, ToolOutput, on_worktree, parse_args, spec};
use bosun_protocol::{ToolAction, ToolSpec};
use serde::Deserialize;
use serde_json::json;
use std::path::Path;

pub struct WriteFile;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    content: String,
}

#[async_trait::async_trait]
impl ToolHandler for WriteFile {
    fn spec(&self) -> ToolSpec {
        spec(
            "write_file",
            "Create or overwrite a file.",
            json!({
                "path": {"type": "string"},
                "content": {"type": "string"},
            }),
            &["path", "content"],
        )
    }

    fn action(&self, args: &serde_json::Value) -> Result<ToolAction, ToolError> {
        let args: Args = parse_args("write_file", args)?;
        Ok(ToolAction::Write {
            paths: vec![normalize_rel(&args.path)?],
        })
    }

    async fn handle(
        &self,
        args: serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        on_worktree("write_file", &args, ctx, write).await
    }
}

fn write(worktree: &Path, args: &Args) -> Result<ToolOutput, ToolError> {
    let resolved = confine_for_write(worktree, &args.path)?;
    let rel = resolved.rel.clone();
    let existed = match std::fs::metadata(&resolved.abs) {
        Ok(m) if m.is_dir() => {
            return Err(ToolError::Model(format!(
                "`{rel}` is a directory; give a file path"
            )));
        }
        Ok(_) => true,
        Err(_) => false,
    };
    write_text(&resolved.abs, &rel, args.content.as_bytes())?;
    let verb = if existed { "Overwrote" } else { "Created" };
    Ok(ToolOutput::wrote(
        format!(
            "{verb} `{rel}` ({}).",
            human_size(args.content.len() as u64)
        ),
        vec![rel],
    ))
}

/// Writes `bytes` to `abs`, creating parent directories; errors name the relative path.
pub(crate) fn write_text(abs: &Path, rel: &str, bytes: &[u8]) -> Result<(), ToolError> {
    if let Some(parent) = abs.parent() {
        std::fs::create_dir_all(parent).map_err(|e| {
            ToolError::Model(format!("could not create the directories for `{rel}`: {e}"))
        })?;
    }
    std::fs::write(abs, bytes)
        .map_err(|e| ToolError::Model(format!("could not write `{rel}`: {e}")))
}
