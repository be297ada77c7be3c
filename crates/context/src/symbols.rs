//! Questions to the map: where a name is defined (and used), a file's definitions by kind, and
//! what a prompt points at (the files and names it mentions). The `symbols` tool and the first
//! request's map ask them.

use crate::map::RepoMap;
use bosun_syntax::{Role, Tag};

/// The kinds the `symbols` tool can ask for.
pub const SYMBOL_KINDS: &[&str] = &[
    "function",
    "method",
    "class",
    "struct",
    "enum",
    "trait",
    "interface",
    "type",
    "const",
    "module",
];

/// A definition or reference the map holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub path: String,
    pub line: u32,
    pub role: Role,
    /// As the tags query named it (`function`, `class`, `call`, …).
    pub kind: String,
    pub name: String,
    /// The definition's first line; empty for a reference.
    pub signature: String,
    /// The innermost definition around it (a method's class), when there is one.
    pub scope: Option<String>,
}

/// What to look for; every field that is set must match.
#[derive(Debug, Clone, Default)]
pub struct SymbolQuery<'a> {
    /// A name (`total`), or one within a scope (`Cart.total`, `Cart::total`).
    pub name: Option<&'a str>,
    /// A file, or a directory the file is under.
    pub path: Option<&'a str>,
    /// One of [`SYMBOL_KINDS`].
    pub kind: Option<&'a str>,
    /// References too (only with a name).
    pub references: bool,
}

impl RepoMap {
    /// The definitions (and with `references`, the references) matching `q`, by path and line.
    pub fn symbols(&self, q: &SymbolQuery) -> Vec<Symbol> {
        let (scope, name) = match q.name {
            Some(n) => match n.rsplit_once("::").or_else(|| n.rsplit_once('.')) {
                Some((scope, name)) if !name.is_empty() => {
                    let scope = scope.rsplit(['.', ':']).next().unwrap_or(scope);
                    (Some(scope), Some(name))
                }
                _ => (None, Some(n)),
            },
            None => (None, None),
        };
        let dir = q
            .path
            .map(|p| p.trim_start_matches("./").trim_end_matches('/'));
        let mut out = Vec::new();
        for f in &self.files {
            if let Some(dir) = dir
                && !(dir.is_empty()
                    || dir == "."
                    || f.path == dir
                    || f.path.starts_with(&format!("{dir}/")))
            {
                continue;
            }
            for t in &f.tags {
                let wanted_role = t.role == Role::Definition || (q.references && name.is_some());
                if !wanted_role || name.is_some_and(|n| n != t.name) {
                    continue;
                }
                if t.role == Role::Definition
                    && q.kind.is_some_and(|k| !kind_matches(t, k, &f.tags))
                {
                    continue;
                }
                if t.role == Role::Reference
                    && q.kind.is_some()
                    && !self_defines(self, &t.name, q.kind)
                {
                    continue;
                }
                let enclosing = enclosing(&f.tags, t.line, t);
                if let Some(scope) = scope
                    && enclosing.as_deref() != Some(scope)
                {
                    continue;
                }
                out.push(Symbol {
                    path: f.path.clone(),
                    line: t.line,
                    role: t.role,
                    kind: t.kind.clone(),
                    name: t.name.clone(),
                    signature: t.signature.clone(),
                    scope: enclosing,
                });
            }
        }
        out
    }

    /// What a prompt points at in the map: the map's files it names (a path, or a file name
    /// only one file has), and the names it mentions that the map defines (written like code,
    /// or a plain word of four letters or more that is a defined name).
    pub fn focus(&self, prompt: &str) -> (Vec<String>, Vec<String>) {
        let mut files: Vec<String> = Vec::new();
        let words: Vec<&str> = prompt
            .split(|c: char| c.is_whitespace() || "`'\"(),;:<>[]{}".contains(c))
            .map(|w| w.trim_end_matches(['.', '!', '?']).trim_start_matches("./"))
            .filter(|w| !w.is_empty())
            .collect();
        for w in &words {
            if !w.contains('.') {
                continue;
            }
            let hit: Vec<&str> = self
                .files
                .iter()
                .map(|f| f.path.as_str())
                .filter(|p| {
                    p == w
                        || (!w.contains('/') && p.rsplit('/').next() == Some(*w))
                        || p.ends_with(&format!("/{w}"))
                })
                .collect();
            if hit.len() == 1 && !files.iter().any(|f| f == hit[0]) {
                files.push(hit[0].to_string());
            }
        }
        let defined = |name: &str| {
            self.files.iter().any(|f| {
                f.tags
                    .iter()
                    .any(|t| t.role == Role::Definition && t.name == name)
            })
        };
        let mut idents: Vec<String> = crate::identifiers(prompt);
        for w in prompt.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if w.chars().count() >= 4
                && !idents.iter().any(|x| x == w)
                && !STOP_WORDS.contains(&w.to_lowercase().as_str())
                && defined(w)
            {
                idents.push(w.to_string());
            }
        }
        (files, idents)
    }
}

/// A focus and its weight (1: named outright; less: only suggested).
pub type Weighted = Vec<(String, f64)>;

/// Weight of a plain word of the prompt that is a name the map defines.
const PLAIN_NAME_WEIGHT: f64 = 0.3;
/// Weight, shared out, of the files whose path or definitions' words the prompt's words match.
const LEXICAL_WEIGHT: f64 = 0.3;
/// At most this many files get a lexical share.
const LEXICAL_FILES: usize = 20;

impl RepoMap {
    /// What a task's prompt points at, weighted: the files it names and the names written like
    /// code (1), plain words that are defined names ([`PLAIN_NAME_WEIGHT`]), and the files whose
    /// path or definitions' words share the prompt's words ("compression" and
    /// `compress_block`, "pipe" and `src/pipe.rs`: [`LEXICAL_WEIGHT`] shared by score).
    pub fn task_focus(&self, prompt: &str) -> (Weighted, Weighted) {
        let (files, idents) = self.focus(prompt);
        let coded = crate::identifiers(prompt);
        let mut files: Weighted = files.into_iter().map(|f| (f, 1.0)).collect();
        let idents: Weighted = idents
            .into_iter()
            .map(|x| {
                let w = if coded.contains(&x) {
                    1.0
                } else {
                    PLAIN_NAME_WEIGHT
                };
                (x, w)
            })
            .collect();
        let words = prompt_words(prompt);
        if words.is_empty() {
            return (files, idents);
        }
        let mut scored: Vec<(usize, &str)> = Vec::new();
        for f in &self.files {
            let mut tokens: Vec<String> = Vec::new();
            for part in f.path.split(['/', '.', '_', '-']) {
                tokens.extend(word_tokens(part));
            }
            for t in f.tags.iter().filter(|t| t.role == Role::Definition) {
                tokens.extend(word_tokens(&t.name));
            }
            let hits = words
                .iter()
                .filter(|w| tokens.iter().any(|t| same_word(w, t)))
                .count();
            if hits > 0 {
                scored.push((hits, f.path.as_str()));
            }
        }
        scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        scored.truncate(LEXICAL_FILES);
        let total: usize = scored.iter().map(|(h, _)| h * h).sum();
        for (hits, path) in scored {
            let w = LEXICAL_WEIGHT * (hits * hits) as f64 / total as f64;
            match files.iter_mut().find(|(f, _)| f == path) {
                Some(entry) => entry.1 += w,
                None => files.push((path.to_string(), w)),
            }
        }
        (files, idents)
    }
}

/// The prompt's words that may name something: four letters or more, lowercased, not a stop
/// word, each once.
fn prompt_words(prompt: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in prompt.split(|c: char| !c.is_alphanumeric()) {
        for t in word_tokens(w) {
            if t.chars().count() >= 4
                && !STOP_WORDS.contains(&t.as_str())
                && !LEXICAL_STOP_WORDS.contains(&t.as_str())
                && !out.contains(&t)
            {
                out.push(t);
            }
        }
    }
    out
}

/// The lowercase words of a name: `compress_block` → compress, block; `HttpClient` → http,
/// client.
fn word_tokens(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Whether a prompt word and a name's word are the same word: equal, or one a prefix of the
/// other of at least four letters covering most of it ("compression" / "compress").
fn same_word(word: &str, token: &str) -> bool {
    if token.len() < 3 {
        return false;
    }
    if word == token {
        return true;
    }
    let (short, long) = if word.len() <= token.len() {
        (word, token)
    } else {
        (token, word)
    };
    short.len() >= 4 && long.starts_with(short) && short.len() * 3 >= long.len() * 2
}

/// Words common in release notes and requests that say nothing about where.
const LEXICAL_STOP_WORDS: &[&str] = &[
    "added",
    "adds",
    "fixed",
    "fixes",
    "changed",
    "changes",
    "removed",
    "support",
    "supports",
    "now",
    "allow",
    "allows",
    "instead",
    "when",
    "also",
    "used",
    "uses",
    "using",
    "case",
    "cases",
    "issue",
    "release",
    "version",
    "behavior",
    "behaviour",
    "correctly",
    "properly",
    "panic",
    "crate",
    "library",
    "rust",
    "python",
    "feature",
    "features",
    "being",
    "after",
    "before",
    "without",
    "like",
    "more",
    "than",
    "does",
    "doesn",
    "were",
    "will",
    "been",
    "into",
    "other",
    "such",
    "each",
    "some",
    "any",
    "could",
    "work",
    "works",
    "make",
    "makes",
];

/// Plain words that name nothing in particular even where a repository defines them.
const STOP_WORDS: &[&str] = &[
    "this", "that", "with", "from", "when", "then", "else", "into", "make", "should", "would",
    "could", "must", "have", "there", "their", "where", "which", "what", "some", "more", "test",
    "tests", "main", "file", "files", "function", "method", "class", "error", "value", "name",
    "type", "data", "list", "default", "self", "none", "true", "false", "return", "only",
];

/// Whether some definition of `name` is of `kind`.
fn self_defines(map: &RepoMap, name: &str, kind: Option<&str>) -> bool {
    let Some(kind) = kind else { return true };
    map.files.iter().any(|f| {
        f.tags
            .iter()
            .any(|t| t.role == Role::Definition && t.name == name && kind_matches(t, kind, &f.tags))
    })
}

/// The name of the innermost definition of `tags` that encloses `line` (not `me`).
fn enclosing(tags: &[Tag], line: u32, me: &Tag) -> Option<String> {
    tags.iter()
        .filter(|t| {
            t.role == Role::Definition
                && !std::ptr::eq(*t, me)
                && t.line <= line
                && t.end_line >= line
                && t.end_line > t.line
                && !(t.line == me.line && t.name == me.name)
        })
        .min_by_key(|t| t.end_line - t.line)
        .map(|t| t.name.clone())
}

/// The words of a signature before the name (`pub`, `struct`, `async`, `def`, …).
fn keywords(t: &Tag) -> Vec<&str> {
    let before = t
        .signature
        .find(t.name.as_str())
        .map_or(t.signature.as_str(), |i| &t.signature[..i]);
    before
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

/// Whether the definition `t` (of a file with `tags`) is of the tool's `kind`, from the query's
/// kind and the signature's keywords (a Rust `struct` is a query `class`, a trait an
/// `interface`).
pub fn kind_matches(t: &Tag, kind: &str, tags: &[Tag]) -> bool {
    let words = keywords(t);
    let has = |w: &str| words.contains(&w);
    let k = t.kind.as_str();
    // Go's `type T struct {…}`: the signature starts at the name, the kind comes after it.
    let go_type = |w: &str| {
        k == "type"
            && t.signature
                .strip_prefix(t.name.as_str())
                .is_some_and(|rest| rest.trim_start().starts_with(w))
    };
    let typeish = has("struct") || has("enum") || has("union") || has("type") || has("trait");
    match kind {
        "function" => k == "function" || k == "method",
        "method" => {
            k == "method"
                || (k == "function"
                    && tags.iter().any(|o| {
                        o.role == Role::Definition
                            && matches!(o.kind.as_str(), "class" | "interface" | "implementation")
                            && o.line < t.line
                            && o.end_line >= t.line
                    }))
        }
        "struct" => k == "struct" || has("struct") || go_type("struct"),
        "enum" => k == "enum" || has("enum"),
        "trait" => k == "trait" || has("trait"),
        "interface" => {
            (k == "interface" && !has("trait")) || has("interface") || go_type("interface")
        }
        "type" => {
            (k == "type" && !go_type("struct") && !go_type("interface"))
                || has("type")
                || has("typedef")
        }
        "const" => {
            matches!(k, "constant" | "const")
                || has("const")
                || has("static")
                || has("final")
                || (k == "variable"
                    && t.name
                        .chars()
                        .all(|c| c.is_uppercase() || c == '_' || c.is_ascii_digit()))
        }
        "module" => {
            k == "module" || has("mod") || has("module") || has("namespace") || has("package")
        }
        "class" => has("class") || (k == "class" && !typeish),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::fs;

    fn repo() -> (tempfile::TempDir, RepoMap) {
        let dir = tempfile::tempdir().unwrap();
        let w = |rel: &str, text: &str| {
            let path = dir.path().join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        };
        w(
            "shop/cart.py",
            "MAX_ITEMS = 10\n\n\nclass Cart:\n    def total(self):\n        return compute(self.items)\n\n\ndef compute(xs):\n    return sum(xs)\n",
        );
        w(
            "shop/report.py",
            "from shop.cart import compute\n\n\ndef report(days):\n    return [compute(d) for d in days]\n",
        );
        w(
            "src/lib.rs",
            "pub struct Shape {\n    w: f64,\n}\n\npub enum Color {\n    Red,\n}\n\npub trait Draw {\n    fn draw(&self);\n}\n\nimpl Shape {\n    pub fn area(&self) -> f64 {\n        compute(self.w)\n    }\n}\n\nfn compute(w: f64) -> f64 {\n    w\n}\n",
        );
        let map = RepoMap::build(dir.path());
        (dir, map)
    }

    fn at(found: &[Symbol]) -> Vec<String> {
        found
            .iter()
            .map(|s| format!("{}:{} {}", s.path, s.line, s.name))
            .collect()
    }

    #[test]
    fn definitions_by_name_with_references_when_asked() {
        let (_d, map) = repo();
        let defs = map.symbols(&SymbolQuery {
            name: Some("compute"),
            ..Default::default()
        });
        assert_eq!(
            at(&defs),
            ["shop/cart.py:9 compute", "src/lib.rs:19 compute"]
        );
        assert_eq!(defs[0].signature, "def compute(xs):");
        let all = map.symbols(&SymbolQuery {
            name: Some("compute"),
            path: Some("shop"),
            references: true,
            ..Default::default()
        });
        assert_eq!(
            at(&all),
            [
                "shop/cart.py:6 compute",
                "shop/cart.py:9 compute",
                "shop/report.py:5 compute"
            ]
        );
        assert_eq!(all[0].role, Role::Reference);
        assert_eq!(all[0].scope.as_deref(), Some("total"));
    }

    #[test]
    fn kinds_follow_the_signature_and_a_scope_narrows_a_name() {
        let (_d, map) = repo();
        let of = |kind: &str| {
            let found = map.symbols(&SymbolQuery {
                kind: Some(kind),
                ..Default::default()
            });
            found.into_iter().map(|s| s.name).collect::<Vec<_>>()
        };
        assert_eq!(of("struct"), ["Shape"]);
        assert_eq!(of("enum"), ["Color"]);
        assert_eq!(of("trait"), ["Draw"]);
        assert_eq!(of("class"), ["Cart"]);
        assert!(
            of("method").contains(&"total".to_string()),
            "{:?}",
            of("method")
        );
        assert!(
            !of("method").contains(&"compute".to_string()),
            "{:?}",
            of("method")
        );
        assert!(of("const").contains(&"MAX_ITEMS".to_string()) || of("const").is_empty());
        let scoped = map.symbols(&SymbolQuery {
            name: Some("Cart.total"),
            ..Default::default()
        });
        assert_eq!(at(&scoped), ["shop/cart.py:5 total"]);
        let none = map.symbols(&SymbolQuery {
            name: Some("Shape.total"),
            ..Default::default()
        });
        assert!(none.is_empty(), "{none:?}");
    }

    #[test]
    fn plain_words_of_the_prompt_point_at_the_files_whose_paths_and_names_share_them() {
        let dir = tempfile::tempdir().unwrap();
        let w = |rel: &str, text: &str| {
            let path = dir.path().join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        };
        // A hub everything uses, and the file the release note is about, which uses the hub.
        w("src/util.rs", "pub fn helper() -> u32 {\n    1\n}\n");
        w(
            "src/codec.rs",
            "pub fn compress_block(b: &[u8]) -> Vec<u8> {\n    helper();\n    b.to_vec()\n}\n",
        );
        for i in 0..4 {
            w(
                &format!("src/m{i}.rs"),
                &format!("pub fn m{i}() -> u32 {{\n    helper()\n}}\n"),
            );
        }
        let map = RepoMap::build(dir.path());
        // Global PageRank alone puts the hub first.
        assert_eq!(map.rank(&[], &[])[0].path, "src/util.rs");
        let prompt = "Fixed a panic in block compression when the input is empty.";
        let (files, idents) = map.task_focus(prompt);
        assert_eq!(files.len(), 1, "{files:?}");
        assert_eq!(files[0].0, "src/codec.rs");
        assert!(files[0].1 < 1.0, "only suggested: {files:?}");
        assert!(idents.is_empty(), "{idents:?}");
        let ranked = map.rank_weighted(&files, &idents);
        assert_eq!(ranked[0].path, "src/codec.rs", "{ranked:?}");
        // Named outright, a function keeps its file first though the file uses the hub.
        let ranked = map.rank(&[], &["compress_block".to_string()]);
        assert_eq!(ranked[0].path, "src/codec.rs", "{ranked:?}");
    }

    #[test]
    fn constants_enums_types_structs_and_interfaces_of_rust_go_and_typescript() {
        let dir = tempfile::tempdir().unwrap();
        let w = |rel: &str, text: &str| fs::write(dir.path().join(rel), text).unwrap();
        w(
            "k.rs",
            "pub const K: u32 = 1;\nstatic S: u8 = 2;\npub type Id = u64;\n",
        );
        w(
            "m.go",
            "package m\n\nconst C = 1\n\ntype T struct{}\n\ntype I interface{}\n\ntype N int\n",
        );
        w(
            "t.ts",
            "export const LIMIT = 5;\nenum Color { Red }\ntype Key = string;\nfunction f() { const inner = 1; return inner; }\n",
        );
        let map = RepoMap::build(dir.path());
        let of = |kind: &str| {
            let mut names: Vec<String> = map
                .symbols(&SymbolQuery {
                    kind: Some(kind),
                    ..Default::default()
                })
                .into_iter()
                .map(|s| s.name)
                .collect();
            names.sort();
            names
        };
        assert_eq!(of("const"), ["C", "K", "LIMIT", "S"]);
        assert_eq!(of("enum"), ["Color"]);
        assert_eq!(of("struct"), ["T"]);
        assert_eq!(of("interface"), ["I"]);
        assert_eq!(of("type"), ["Id", "Key", "N"]);
    }

    #[test]
    fn a_prompt_points_at_the_files_and_names_it_mentions() {
        let (_d, map) = repo();
        let (files, idents) =
            map.focus("In cart.py, make Cart.total() skip items; the report should not change.");
        assert_eq!(files, ["shop/cart.py"]);
        assert!(
            idents.contains(&"total".to_string()) || idents.contains(&"Cart".to_string()),
            "{idents:?}"
        );
        assert!(idents.contains(&"report".to_string()), "{idents:?}");
        assert!(!idents.contains(&"should".to_string()), "{idents:?}");
    }
}
