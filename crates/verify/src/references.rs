//! Broken Python references after an edit, found without running anything: a file that imports
//! a name a module of the worktree does not define (`from pricing import calc_total` after
//! `calc_total` was renamed), or uses `module.name` of a worktree module that has no `name`.
//! Only what involves a file the task changed is reported, so a repository's own old breakage
//! is not the task's. `bosun-core`'s direct turn sends these back before the checks run: a
//! small model that renamed a function but not its callers learns it at once.

use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Python files bigger than this are not read.
const MAX_FILE_BYTES: u64 = 512 * 1024;
/// At most this many files are read.
const MAX_FILES: usize = 2000;
/// At most this much Python in all.
const MAX_TOTAL_BYTES: u64 = 8 << 20;
/// Directories never walked.
const SKIPPED: &[&str] = &[
    ".git",
    "node_modules",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    "build",
    "dist",
    "site-packages",
];

/// One broken reference, as a sentence for the model.
pub fn broken_references(worktree: &Path, changed: &[String]) -> Vec<String> {
    if !changed.iter().any(|p| p.ends_with(".py")) {
        return Vec::new();
    }
    let mut files = Vec::new();
    walk(worktree, "", 0, &mut files);
    files.sort();
    // A repository with more Python than MAX_TOTAL_BYTES is not checked (the check is a
    // small model's help on small repositories, not a type checker).
    let total: u64 = files
        .iter()
        .filter_map(|rel| std::fs::symlink_metadata(worktree.join(rel)).ok())
        .map(|m| m.len())
        .sum();
    if total > MAX_TOTAL_BYTES {
        return Vec::new();
    }
    let sources: HashMap<String, String> = files
        .into_iter()
        .filter_map(|rel| {
            let text = std::fs::read_to_string(worktree.join(&rel)).ok()?;
            Some((rel, text))
        })
        .collect();
    // Module name → file, for the flat layout and `src/`.
    let mut modules: HashMap<String, String> = HashMap::new();
    for rel in sources.keys() {
        for name in module_names(rel) {
            modules.entry(name).or_insert_with(|| rel.clone());
        }
    }
    let changed: HashSet<&str> = changed.iter().map(String::as_str).collect();
    let mut defined_cache: HashMap<String, Option<HashSet<String>>> = HashMap::new();
    let mut out = Vec::new();
    let mut paths: Vec<&String> = sources.keys().collect();
    paths.sort();
    for rel in paths {
        let text = &sources[rel];
        for import in imports(text) {
            let Some(target) = modules.get(&import.module) else {
                continue;
            };
            if !changed.contains(rel.as_str()) && !changed.contains(target.as_str()) {
                continue;
            }
            let defined = defined_cache
                .entry(target.clone())
                .or_insert_with(|| defined_names(&sources[target]));
            // A star import or a module `__getattr__`: anything may be there.
            let Some(defined) = defined else {
                continue;
            };
            let names: Vec<String> = match &import.names {
                Some(names) => names.clone(),
                None => attribute_uses(text, &import.bound),
            };
            for name in names {
                let submodule = format!("{}.{name}", import.module);
                if defined.contains(&name) || modules.contains_key(&submodule) {
                    continue;
                }
                out.push(match &import.names {
                    Some(_) => format!(
                        "`{rel}` imports `{name}` from `{}`, but `{target}` does not define `{name}`",
                        import.module
                    ),
                    None => format!(
                        "`{rel}` uses `{}.{name}`, but `{target}` does not define `{name}`",
                        import.bound
                    ),
                });
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn walk(dir: &Path, rel: &str, depth: usize, out: &mut Vec<String>) {
    if depth > 8 || out.len() >= MAX_FILES {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if meta.is_dir() {
            if !SKIPPED.contains(&name.as_str()) && !name.ends_with(".egg-info") {
                walk(&e.path(), &path, depth + 1, out);
            }
        } else if meta.is_file() && name.ends_with(".py") && meta.len() <= MAX_FILE_BYTES {
            out.push(path);
        }
    }
}

/// The names a file is imported as: `a/b.py` is `a.b`, `a/__init__.py` is `a`; under `src/`
/// also without it.
fn module_names(rel: &str) -> Vec<String> {
    let stem = rel.strip_suffix(".py").unwrap_or(rel);
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    let dotted = stem.replace('/', ".");
    let mut out = vec![dotted.clone()];
    if let Some(inner) = dotted.strip_prefix("src.") {
        out.push(inner.to_string());
    }
    out
}

struct Import {
    module: String,
    /// `from module import names`; None for `import module`.
    names: Option<Vec<String>>,
    /// The name `import module [as x]` binds (for its `x.attr` uses).
    bound: String,
}

/// The absolute imports of `text` (relative ones are left alone).
fn imports(text: &str) -> Vec<Import> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = strip_comment(lines[i]).trim();
        i += 1;
        if let Some(rest) = line.strip_prefix("from ") {
            let Some((module, names)) = rest.split_once(" import ") else {
                continue;
            };
            let module = module.trim();
            if module.starts_with('.') {
                continue;
            }
            let mut names = names.trim().to_string();
            if names.starts_with('(') && !names.contains(')') {
                while i < lines.len() {
                    let more = strip_comment(lines[i]);
                    i += 1;
                    names.push(' ');
                    names.push_str(more.trim());
                    if more.contains(')') {
                        break;
                    }
                }
            } else {
                while names.ends_with('\\') && i < lines.len() {
                    names.pop();
                    names.push(' ');
                    names.push_str(strip_comment(lines[i]).trim());
                    i += 1;
                }
            }
            let names = names.trim_matches(|c| c == '(' || c == ')' || c == ' ');
            if names.contains('*') {
                continue;
            }
            let names: Vec<String> = names
                .split(',')
                .map(|n| n.split_whitespace().next().unwrap_or_default().to_string())
                .filter(|n| is_identifier(n))
                .collect();
            out.push(Import {
                module: module.to_string(),
                names: Some(names),
                bound: String::new(),
            });
        } else if let Some(rest) = line.strip_prefix("import ") {
            for part in rest.split(',') {
                let mut words = part.split_whitespace();
                let Some(module) = words.next() else { continue };
                let bound = match (words.next(), words.next()) {
                    (Some("as"), Some(alias)) => alias.to_string(),
                    // `import a.b` binds `a`: its attributes are `a`'s.
                    _ if module.contains('.') => continue,
                    _ => module.to_string(),
                };
                out.push(Import {
                    module: module.to_string(),
                    names: None,
                    bound,
                });
            }
        }
    }
    out
}

fn strip_comment(line: &str) -> &str {
    match line.find('#') {
        Some(at) if !line[..at].contains(['"', '\'']) => &line[..at],
        _ => line,
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// The `bound.attr` names `text` uses.
fn attribute_uses(text: &str, bound: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let pattern = format!("{bound}.");
    for (at, _) in text.match_indices(&pattern) {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.') {
            continue;
        }
        // Not inside a string or a comment on its line.
        let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
        let head = &text[line_start..at];
        if head.contains('#')
            || head.matches('"').count() % 2 == 1
            || head.matches('\'').count() % 2 == 1
        {
            continue;
        }
        let name: String = text[at + pattern.len()..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if is_identifier(&name) && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// The names a module defines at its top level (also inside top-level `if`, `try` and `with`
/// blocks); None when it could define anything (`from x import *`, a module `__getattr__`,
/// `globals()` written to).
fn defined_names(text: &str) -> Option<HashSet<String>> {
    let mut out: HashSet<String> = HashSet::new();
    // Whether the current top-level statement is a function or class (its body defines
    // nothing at module level).
    let mut in_body = false;
    for raw in text.lines() {
        let line = strip_comment(raw);
        if line.trim().is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let t = line.trim();
        if indent == 0 {
            in_body = t.starts_with("def ")
                || t.starts_with("async def ")
                || t.starts_with("class ")
                || t.starts_with('@');
        } else if in_body {
            continue;
        }
        if t.starts_with("from ") && t.contains("import *") || t.contains("globals()") {
            return None;
        }
        for key in ["def ", "async def ", "class "] {
            if let Some(rest) = t.strip_prefix(key) {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if name == "__getattr__" && indent == 0 {
                    return None;
                }
                out.insert(name);
            }
        }
        if let Some(rest) = t.strip_prefix("import ") {
            for part in rest.split(',') {
                let mut words = part.split_whitespace();
                let module = words.next().unwrap_or_default();
                match (words.next(), words.next()) {
                    (Some("as"), Some(alias)) => out.insert(alias.to_string()),
                    _ => out.insert(module.split('.').next().unwrap_or_default().to_string()),
                };
            }
        } else if let Some(rest) = t.strip_prefix("from ")
            && let Some((_, names)) = rest.split_once(" import ")
        {
            for part in names.trim_matches(|c| c == '(' || c == ')').split(',') {
                let words: Vec<&str> = part.split_whitespace().collect();
                match words.as_slice() {
                    [_, "as", alias] => out.insert(alias.to_string()),
                    [name, ..] => out.insert(name.trim_matches(['(', ')']).to_string()),
                    [] => false,
                };
            }
        } else if let Some((lhs, _)) = t.split_once('=')
            && !t[lhs.len()..].starts_with("==")
            && !lhs.ends_with(['!', '<', '>'])
        {
            // `a = …`, `a: int = …`, `a, b = …`, `a += …` (defined before anyway).
            for target in lhs.split(',') {
                let target = target.split(':').next().unwrap_or_default();
                let target = target
                    .trim()
                    .trim_end_matches(['+', '-', '*', '/', '|', '&']);
                let target = target.trim().trim_matches(['(', ')', '[', ']']);
                if is_identifier(target) {
                    out.insert(target.to_string());
                }
            }
        } else if let Some((name, _)) = t.split_once(':')
            && is_identifier(name.trim())
            && indent == 0
        {
            // `name: Type` (an annotation).
            out.insert(name.trim().to_string());
        }
        // `for x in …:` and `with … as x:` at the top level bind too.
        if let Some(rest) = t.strip_prefix("for ")
            && let Some((targets, _)) = rest.split_once(" in ")
        {
            for target in targets.split(',') {
                let target = target.trim().trim_matches(['(', ')']);
                if is_identifier(target) {
                    out.insert(target.to_string());
                }
            }
        }
        if let Some((_, alias)) = t.rsplit_once(" as ")
            && (t.starts_with("with ") || t.starts_with("except "))
        {
            let alias = alias.trim_end_matches(':').trim();
            if is_identifier(alias) {
                out.insert(alias.to_string());
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn a_renamed_function_whose_callers_were_not_updated_is_reported() {
        let dir = repo(&[
            (
                "pricing.py",
                "TAX = 0.2\n\n\ndef order_total(lines):\n    return 1\n",
            ),
            (
                "invoice.py",
                "from pricing import calc_total, TAX\n\nX = calc_total([])\n",
            ),
            (
                "report.py",
                "import pricing\n\n\ndef daily():\n    return pricing.calc_total([]) + pricing.TAX\n",
            ),
            ("ok.py", "import pricing as p\n\nY = p.order_total([])\n"),
        ]);
        let found = broken_references(dir.path(), &["pricing.py".to_string()]);
        assert_eq!(
            found,
            [
                "`invoice.py` imports `calc_total` from `pricing`, but `pricing.py` does not define `calc_total`",
                "`report.py` uses `pricing.calc_total`, but `pricing.py` does not define `calc_total`",
            ]
        );
        // Nothing the task changed is involved: not the task's.
        assert!(broken_references(dir.path(), &["other.py".to_string()]).is_empty());
    }

    #[test]
    fn what_a_module_defines_in_every_usual_way_is_found() {
        let dir = repo(&[
            (
                "m.py",
                "import re\nimport os.path\nfrom json import loads as parse, dumps\nA, B = 1, 2\nC: int = 3\nD: str\ntry:\n    import fast as speed\nexcept ImportError:\n    speed = None\nif True:\n    def cond():\n        inner = 1\n\n\n@dec\nclass K:\n    attr = 1\n\n\nasync def run():\n    local = 2\n",
            ),
            (
                "use.py",
                "from m import re, os, parse, dumps, A, B, C, D, speed, cond, K, run\nfrom m import (\n    attr,\n    local,\n)\nfrom pkg import sub\nimport m\nprint(m.K, \"m.nothing\")  # m.comment\n",
            ),
            ("pkg/__init__.py", ""),
            ("pkg/sub.py", "X = 1\n"),
            ("star.py", "from m import *\n"),
            ("use_star.py", "from star import anything\n"),
        ]);
        let found = broken_references(
            dir.path(),
            &["use.py".to_string(), "use_star.py".to_string()],
        );
        assert_eq!(
            found,
            [
                "`use.py` imports `attr` from `m`, but `m.py` does not define `attr`",
                "`use.py` imports `local` from `m`, but `m.py` does not define `local`",
            ]
        );
    }

    #[test]
    fn a_moved_function_imported_from_its_new_module_is_found_there() {
        let dir = repo(&[
            ("utils.py", "def normalize(t):\n    return t\n"),
            (
                "validators.py",
                "import re\n\n\ndef is_valid_email(a):\n    return True\n",
            ),
            (
                "signup.py",
                "from validators import is_valid_email, normalize\n",
            ),
            ("src/app/core.py", "from app.helpers import gone\n"),
            ("src/app/helpers.py", "def here():\n    pass\n"),
        ]);
        let found = broken_references(
            dir.path(),
            &["signup.py".to_string(), "src/app/core.py".to_string()],
        );
        assert_eq!(
            found,
            [
                "`signup.py` imports `normalize` from `validators`, but `validators.py` does not define `normalize`",
                "`src/app/core.py` imports `gone` from `app.helpers`, but `src/app/helpers.py` does not define `gone`",
            ]
        );
    }
}
