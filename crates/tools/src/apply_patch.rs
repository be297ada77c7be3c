//! `apply_patch{patch}`: a multi-file unified diff, applied all or nothing.

use crate::patch::{FilePatch, TextFile, apply_hunks, parse_patch};
use crate::path::{Resolved, confine_for_write, normalize_rel};
use crate::text::looks_binary;
use crate::write_file::write_text;
use crate::{ToolContext, ToolError, ToolHandler, ToolOutput, on_worktree, parse_args, spec};
use bosun_protocol::{ToolAction, ToolSpec};
use serde::Deserialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub struct ApplyPatch;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    patch: String,
}

#[async_trait::async_trait]
impl ToolHandler for ApplyPatch {
    fn spec(&self) -> ToolSpec {
        spec(
            "apply_patch",
            "Apply a unified diff to files (/dev/null adds/deletes); all or nothing.",
            json!({"patch": {"type": "string"}}),
            &["patch"],
        )
    }

    fn action(&self, args: &serde_json::Value) -> Result<ToolAction, ToolError> {
        let args: Args = parse_args("apply_patch", args)?;
        let files = parse_patch(&args.patch).map_err(patch_error)?;
        let mut paths = Vec::new();
        for fp in &files {
            for p in [&fp.old_path, &fp.new_path].into_iter().flatten() {
                let norm = normalize_rel(p)?;
                if !paths.contains(&norm) {
                    paths.push(norm);
                }
            }
        }
        Ok(ToolAction::Write { paths })
    }

    async fn handle(
        &self,
        args: serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        on_worktree("apply_patch", &args, ctx, |w, a: &Args| apply(w, &a.patch)).await
    }
}

fn patch_error(msg: String) -> ToolError {
    ToolError::Model(format!("apply_patch: {msg}. No file was changed."))
}

/// A file the patch touches: what it was on disk and what it becomes (`None` = absent).
struct Planned {
    abs: PathBuf,
    before: Option<Vec<u8>>,
    after: Option<String>,
}

fn apply(worktree: &Path, patch: &str) -> Result<ToolOutput, ToolError> {
    let files = parse_patch(patch).map_err(patch_error)?;
    let mut plan: BTreeMap<String, Planned> = BTreeMap::new();
    for fp in &files {
        plan_file(worktree, fp, &mut plan)?;
    }
    let changed: Vec<(&String, &Planned)> = plan
        .iter()
        .filter(|(_, p)| p.before.as_deref() != p.after.as_ref().map(|s| s.as_bytes()))
        .collect();
    let mut written: Vec<&Planned> = Vec::new();
    for (rel, planned) in &changed {
        let result = match &planned.after {
            Some(text) => write_text(&planned.abs, rel, text.as_bytes()),
            None => std::fs::remove_file(&planned.abs)
                .map_err(|e| ToolError::Model(format!("could not delete `{rel}`: {e}"))),
        };
        if let Err(e) = result {
            roll_back(&written);
            return Err(ToolError::Model(format!(
                "{e}; the files already written were restored, no file was changed"
            )));
        }
        written.push(planned);
    }
    let mut summary = format!("Applied the patch to {} file(s):\n", changed.len());
    for (rel, p) in &changed {
        let mark = match (&p.before, &p.after) {
            (None, _) => 'A',
            (_, None) => 'D',
            _ => 'M',
        };
        summary.push_str(&format!("{mark} {rel}\n"));
    }
    let paths = changed.iter().map(|(rel, _)| (*rel).clone()).collect();
    Ok(ToolOutput::wrote(summary, paths))
}

/// Puts back what was on disk before, best effort.
fn roll_back(written: &[&Planned]) {
    for p in written {
        let _ = match &p.before {
            Some(bytes) => std::fs::write(&p.abs, bytes),
            None => std::fs::remove_file(&p.abs),
        };
    }
}

/// Computes one file's new content into `plan` (where earlier parts of the patch may already
/// have changed it), without writing anything.
fn plan_file(
    worktree: &Path,
    fp: &FilePatch,
    plan: &mut BTreeMap<String, Planned>,
) -> Result<(), ToolError> {
    match (&fp.old_path, &fp.new_path) {
        (None, None) => Err(patch_error(
            "a file section has /dev/null on both sides".into(),
        )),
        (None, Some(new)) => {
            let target = load(worktree, new, plan)?;
            if current(plan, &target.rel).is_some() {
                return Err(patch_error(format!(
                    "`{}` already exists; to change it use `--- a/{0}` instead of `--- /dev/null`",
                    target.rel
                )));
            }
            let mut file = TextFile::parse("");
            apply_hunks(&mut file, &fp.hunks).map_err(|(n, _)| {
                patch_error(format!(
                    "hunk {n} for new file `{}` did not apply",
                    target.rel
                ))
            })?;
            set(plan, &target.rel, Some(file.render()));
            Ok(())
        }
        (Some(old), None) => {
            let source = load(worktree, old, plan)?;
            if current(plan, &source.rel).is_none() {
                return Err(patch_error(format!(
                    "`{}` cannot be deleted: it does not exist",
                    source.rel
                )));
            }
            set(plan, &source.rel, None);
            Ok(())
        }
        (Some(old), Some(new)) => {
            let source = load(worktree, old, plan)?;
            let Some(text) = current(plan, &source.rel) else {
                return Err(patch_error(format!(
                    "`{}` does not exist; to create it use `--- /dev/null`",
                    source.rel
                )));
            };
            let mut file = TextFile::parse(&text);
            let count = fp.hunks.len();
            apply_hunks(&mut file, &fp.hunks).map_err(|(n, expected)| {
                patch_error(format!(
                    "hunk {n} of {count} for `{}` did not apply: these lines were not found:\n{expected}Read the file again and make the context lines match it exactly",
                    source.rel
                ))
            })?;
            let target = load(worktree, new, plan)?;
            if target.rel != source.rel {
                if current(plan, &target.rel).is_some() {
                    return Err(patch_error(format!(
                        "cannot rename `{}` to `{}`: the target already exists",
                        source.rel, target.rel
                    )));
                }
                set(plan, &source.rel, None);
            }
            set(plan, &target.rel, Some(file.render()));
            Ok(())
        }
    }
}

/// Resolves a path for writing and records its on-disk state in `plan` the first time.
fn load(
    worktree: &Path,
    rel: &str,
    plan: &mut BTreeMap<String, Planned>,
) -> Result<Resolved, ToolError> {
    let resolved = confine_for_write(worktree, rel)?;
    if plan.contains_key(&resolved.rel) {
        return Ok(resolved);
    }
    let shown = resolved.rel.clone();
    let before = match std::fs::metadata(&resolved.abs) {
        Ok(m) if m.is_dir() => {
            return Err(patch_error(format!("`{shown}` is a directory, not a file")));
        }
        Ok(_) => {
            let bytes = std::fs::read(&resolved.abs)
                .map_err(|e| patch_error(format!("could not read `{shown}`: {e}")))?;
            if looks_binary(&bytes) {
                return Err(patch_error(format!(
                    "`{shown}` is a binary file; patches only change text"
                )));
            }
            if std::str::from_utf8(&bytes).is_err() {
                return Err(patch_error(format!(
                    "`{shown}` is not valid UTF-8; it will not be patched, to avoid mangling its bytes"
                )));
            }
            Some(bytes)
        }
        Err(_) => None,
    };
    let after = before
        .as_ref()
        .map(|b| String::from_utf8_lossy(b).into_owned());
    plan.insert(
        shown,
        Planned {
            abs: resolved.abs.clone(),
            before,
            after,
        },
    );
    Ok(resolved)
}

fn current(plan: &BTreeMap<String, Planned>, rel: &str) -> Option<String> {
    plan.get(rel).and_then(|p| p.after.clone())
}

fn set(plan: &mut BTreeMap<String, Planned>, rel: &str, after: Option<String>) {
    if let Some(p) = plan.get_mut(rel) {
        p.after = after;
    }
}
