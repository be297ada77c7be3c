//! `symbols{name?, path?, kind?, references?}`: definitions from the repository map, each as
//! `path:line` and its signature (and with `references: true`, where the name is used).

use crate::path::{confine, normalize_rel};
use crate::read_file::missing;
use crate::{ToolContext, ToolError, ToolHandler, ToolOutput, blocking, parse_args, spec};
use bosun_context::{RepoMap, SYMBOL_KINDS, SymbolQuery};
use bosun_protocol::{ToolAction, ToolSpec};
use bosun_syntax::Role;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;

/// Definitions (and references) shown at most per call.
pub const MAX_SYMBOLS: usize = 100;

pub struct Symbols;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    name: Option<String>,
    path: Option<String>,
    kind: Option<String>,
    #[serde(default)]
    references: bool,
}

#[async_trait::async_trait]
impl ToolHandler for Symbols {
    fn spec(&self) -> ToolSpec {
        spec(
            "symbols",
            "Definitions from the repository map (path:line signature); references=true adds uses.",
            json!({
                "name": {"type": "string", "description": "name or Scope.name"},
                "path": {"type": "string"},
                "kind": {"type": "string", "enum": SYMBOL_KINDS},
                "references": {"type": "boolean"},
            }),
            &[],
        )
    }

    fn action(&self, args: &serde_json::Value) -> Result<ToolAction, ToolError> {
        let args: Args = parse_args("symbols", args)?;
        let path = normalize_rel(args.path.as_deref().unwrap_or("."))?;
        Ok(ToolAction::Read {
            paths: vec![if path.is_empty() { ".".into() } else { path }],
        })
    }

    async fn handle(
        &self,
        args: serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args("symbols", &args)?;
        let worktree = ctx.worktree.clone();
        let live = ctx.map.clone();
        blocking(move || {
            // The task's map when it has one (kept up to date, read-denied files left out),
            // else a map built now.
            let map = match live
                .as_ref()
                .and_then(|m| m.wait(std::time::Duration::from_secs(30)))
            {
                Some(map) => map,
                None => Arc::new(RepoMap::build(&worktree)),
            };
            symbols(&worktree, &map, &args).map(ToolOutput::text)
        })
        .await
    }
}

fn symbols(worktree: &std::path::Path, map: &RepoMap, args: &Args) -> Result<String, ToolError> {
    if let Some(kind) = args.kind.as_deref()
        && !SYMBOL_KINDS.contains(&kind)
    {
        return Err(ToolError::Model(format!(
            "kind `{kind}` is not one of: {}",
            SYMBOL_KINDS.join(", ")
        )));
    }
    let name = args
        .name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty());
    if args.references && name.is_none() {
        return Err(ToolError::Model(
            "references=true needs a name: which name's uses should be listed?".into(),
        ));
    }
    let path = match args
        .path
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty() && *p != ".")
    {
        Some(p) => {
            let resolved = confine(worktree, p)?;
            let shown = resolved.shown().to_string();
            std::fs::metadata(&resolved.abs).map_err(|e| missing(&shown, &e))?;
            let under = map
                .files
                .iter()
                .any(|f| f.path == shown || f.path.starts_with(&format!("{shown}/")));
            if !under {
                return Err(ToolError::Model(format!(
                    "`{shown}` holds no source file the repository map reads (code in a language it parses, not ignored, generated, vendored or over 512 KB); use search or read_file"
                )));
            }
            Some(shown)
        }
        None => None,
    };
    let found = map.symbols(&SymbolQuery {
        name,
        path: path.as_deref(),
        kind: args.kind.as_deref(),
        references: args.references,
    });
    let place = path
        .as_deref()
        .map(|p| format!(" in {p}"))
        .unwrap_or_default();
    let what = match (name, args.kind.as_deref()) {
        (Some(n), Some(k)) => format!("{k} `{n}`"),
        (Some(n), None) => format!("`{n}`"),
        (None, Some(k)) => format!("kind {k}"),
        (None, None) => "any name".to_string(),
    };
    if found.is_empty() {
        let mut msg = format!("no definition of {what}{place} in the repository map");
        if let Some(n) = name {
            let last = n.rsplit(['.', ':']).next().unwrap_or(n);
            // The name is there, only not of that kind or not in that place.
            let any = map.symbols(&SymbolQuery {
                name: Some(last),
                ..Default::default()
            });
            if let Some(s) = any.first() {
                msg.push_str(&format!(
                    "; `{last}` is defined at {}:{} ({})",
                    s.path, s.line, s.kind
                ));
            }
            let near: Vec<String> = map
                .nearest_names(last)
                .into_iter()
                .filter(|x| x != last)
                .collect();
            if !near.is_empty() {
                msg.push_str(&format!("; similar names: {}", near.join(", ")));
            }
            msg.push_str(
                ". search finds text the map does not hold (strings, comments, other languages).",
            );
        }
        return Ok(msg);
    }
    let defs: Vec<_> = found
        .iter()
        .filter(|s| s.role == Role::Definition)
        .collect();
    let refs: Vec<_> = found.iter().filter(|s| s.role == Role::Reference).collect();
    let mut out = String::new();
    let mut shown = 0;
    out.push_str(&format!(
        "{} definition{} of {what}{place}:\n",
        defs.len(),
        plural(defs.len())
    ));
    for s in &defs {
        if shown == MAX_SYMBOLS {
            break;
        }
        let scope = s
            .scope
            .as_deref()
            .map(|sc| format!("  (in {sc})"))
            .unwrap_or_default();
        let signature = crate::text::truncate_at(&s.signature, 200);
        let cut = if signature.len() < s.signature.len() {
            " …"
        } else {
            ""
        };
        out.push_str(&format!("{}:{}  {signature}{cut}{scope}\n", s.path, s.line));
        shown += 1;
    }
    if args.references {
        out.push_str(&format!(
            "{} reference{}:\n",
            refs.len(),
            plural(refs.len())
        ));
        for s in &refs {
            if shown == MAX_SYMBOLS {
                break;
            }
            let scope = s
                .scope
                .as_deref()
                .map(|sc| format!("  (in {sc})"))
                .unwrap_or_default();
            out.push_str(&format!("{}:{}{scope}\n", s.path, s.line));
            shown += 1;
        }
    }
    if shown < found.len() {
        out.push_str(&format!(
            "… {} more not shown; narrow with name, path or kind\n",
            found.len() - shown
        ));
    }
    Ok(out)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::fs;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let w = |rel: &str, bytes: &[u8]| {
            let path = dir.path().join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, bytes).unwrap();
        };
        w(
            "shop/cart.py",
            b"class Cart:\n    def total(self):\n        return compute(self.items)\n\n\ndef compute(xs):\n    return sum(xs)\n",
        );
        w(
            "shop/report.py",
            b"def report(days):\n    return [compute(d) for d in days]\n",
        );
        // Not UTF-8 (Latin-1), a huge line, a binary file, an ignored one.
        w(
            "legacy.py",
            b"# caf\xe9\ndef legacy():\n    return '\xe9'\n",
        );
        let mut huge = b"def wide():\n    return ".to_vec();
        huge.extend(std::iter::repeat_n(b'1', 300_000));
        huge.push(b'\n');
        w("wide.py", &huge);
        w("blob.py", b"def x():\n\0\0\0");
        w("gen/skip.py", b"def skipped():\n    pass\n");
        w(".gitignore", b"gen/\n");
        dir
    }

    fn run(dir: &std::path::Path, args: serde_json::Value) -> Result<String, ToolError> {
        let args: Args = serde_json::from_value(args).unwrap();
        symbols(dir, &RepoMap::build(dir), &args)
    }

    #[test]
    fn a_name_gives_its_definitions_and_with_references_its_uses() {
        let dir = repo();
        let out = run(dir.path(), json!({"name": "compute"})).unwrap();
        assert_eq!(
            out,
            "1 definition of `compute`:\nshop/cart.py:6  def compute(xs):\n"
        );
        let out = run(dir.path(), json!({"name": "compute", "references": true})).unwrap();
        assert!(
            out.ends_with(
                "2 references:\nshop/cart.py:3  (in total)\nshop/report.py:2  (in report)\n"
            ),
            "{out}"
        );
        let out = run(dir.path(), json!({"kind": "method"})).unwrap();
        assert!(
            out.contains("shop/cart.py:2  def total(self):  (in Cart)"),
            "{out}"
        );
    }

    #[test]
    fn tricky_files_are_read_or_left_out_and_misses_say_what_is_near() {
        let dir = repo();
        // Non-UTF-8 and huge-line files are parsed; binary and ignored ones are not.
        let out = run(dir.path(), json!({"name": "legacy"})).unwrap();
        assert!(out.contains("legacy.py:2  def legacy():"), "{out}");
        let out = run(dir.path(), json!({"name": "wide"})).unwrap();
        assert!(out.contains("wide.py:1  def wide():"), "{out}");
        assert!(out.len() < 500, "{}", out.len());
        let out = run(dir.path(), json!({"name": "x"})).unwrap();
        assert!(
            out.starts_with("no definition of `x` in the repository map"),
            "{out}"
        );
        let out = run(dir.path(), json!({"name": "skipped"})).unwrap();
        assert!(out.starts_with("no definition of `skipped`"), "{out}");
        let out = run(dir.path(), json!({"name": "compute", "kind": "class"})).unwrap();
        assert!(
            out.starts_with("no definition of class `compute` in the repository map; `compute` is defined at shop/cart.py:6 (function)"),
            "{out}"
        );
        assert!(!out.contains("similar names: compute"), "{out}");
        let out = run(dir.path(), json!({"name": "computer"})).unwrap();
        assert!(out.contains("similar names: compute"), "{out}");
        // Bad arguments are the model's to fix.
        let e = run(dir.path(), json!({"kind": "widget"})).unwrap_err();
        assert!(e.to_string().contains("function, method, class"), "{e}");
        let e = run(dir.path(), json!({"references": true})).unwrap_err();
        assert!(e.to_string().contains("needs a name"), "{e}");
        let e = run(dir.path(), json!({"path": "../etc"})).unwrap_err();
        assert!(matches!(e, ToolError::Model(_)), "{e}");
        let e = run(dir.path(), json!({"path": "gen"})).unwrap_err();
        assert!(e.to_string().contains("holds no source file"), "{e}");
        let e = run(dir.path(), json!({"path": "nope"})).unwrap_err();
        assert!(matches!(e, ToolError::Model(_)), "{e}");
    }
}
