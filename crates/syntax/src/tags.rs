//! Tags: the definitions and references of a file, from the tags queries its grammar crate
//! ships (`@definition.function`, `@reference.call`, … with the identifier as `@name`); C's
//! and C++'s name definitions only, so Bosun adds its own call and type references for them.
//! The repository map is built from them; they are cached by (blob, language, [`TAGS_VERSION`]).
//!
//! Each language's queries compile once per process. A file over [`MAX_BYTES`], or whose
//! parse runs past [`PARSE_BUDGET`], has no tags (`None`), as for the edit guard.

#[cfg(test)]
use crate::MAX_BYTES;
use crate::{Language, PARSE_BUDGET};
use std::sync::OnceLock;
use tree_sitter::{Parser, Query, QueryCursor, StreamingIterator};

/// Changes whenever what [`tags`] returns for the same input changes (a query, a rule): cached
/// tags of another version are parsed again.
pub const TAGS_VERSION: u32 = 3;

/// A definition or a reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag {
    pub name: String,
    /// `definition` or `reference`.
    pub role: Role,
    /// What the query says it is: `function`, `method`, `class`, `interface`, `module`,
    /// `macro`, `constant`, `type`, `call`, `implementation`, …
    pub kind: String,
    /// 1-based line of the name.
    pub line: u32,
    /// The first line of the whole definition (its signature), trimmed; empty for a reference.
    pub signature: String,
    /// 1-based last line of the whole definition (its body included); `line` for a reference.
    pub end_line: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    Definition,
    Reference,
}

/// The language's queries, compiled (None: it has none, or they do not compile).
fn query(lang: Language) -> Option<&'static Query> {
    static QUERIES: OnceLock<Vec<Option<Query>>> = OnceLock::new();
    QUERIES
        .get_or_init(|| {
            Language::ALL
                .iter()
                .map(|l| {
                    let sources = l.tags_queries();
                    if sources.is_empty() {
                        return None;
                    }
                    Query::new(&l.grammar(), &sources.join("\n")).ok()
                })
                .collect()
        })
        .get(lang as usize)
        .and_then(Option::as_ref)
}

/// Whether `lang` has tags.
pub fn has_tags(lang: Language) -> bool {
    query(lang).is_some()
}

/// The tags of `source` in `lang`, in source order (definitions before references at the same
/// place), each once. None when it has no tags, or `source` is too big or too slow to parse.
pub fn tags(lang: Language, source: &[u8]) -> Option<Vec<Tag>> {
    let query = query(lang)?;
    let mut parser = Parser::new();
    parser.set_language(&lang.grammar()).ok()?;
    let tree = crate::parse::parse(&mut parser, source, None, PARSE_BUDGET)?;
    let names = query.capture_names();
    let name_index = names.iter().position(|n| *n == "name")?;
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, tree.root_node(), source);
    let mut out: Vec<Tag> = Vec::new();
    while let Some(m) = matches.next() {
        let Some(name) = m.captures.iter().find(|c| c.index as usize == name_index) else {
            continue;
        };
        let Some((role, kind, node)) = m.captures.iter().find_map(|c| {
            let capture = names[c.index as usize];
            if let Some(kind) = capture.strip_prefix("definition.") {
                Some((Role::Definition, kind, c.node))
            } else {
                capture
                    .strip_prefix("reference.")
                    .map(|kind| (Role::Reference, kind, c.node))
            }
        }) else {
            continue;
        };
        let Ok(text) = name.node.utf8_text(source) else {
            continue;
        };
        let line = u32::try_from(name.node.start_position().row + 1).unwrap_or(u32::MAX);
        let end_line = if role == Role::Definition {
            u32::try_from(node.end_position().row + 1)
                .unwrap_or(u32::MAX)
                .max(line)
        } else {
            line
        };
        let signature = if role == Role::Definition {
            let start = node.start_byte();
            let end = source[start..]
                .iter()
                .position(|b| *b == b'\n')
                .map_or(source.len(), |n| start + n);
            String::from_utf8_lossy(&source[start..end])
                .trim()
                .to_string()
        } else {
            String::new()
        };
        let tag = Tag {
            name: text.to_string(),
            role,
            kind: kind.to_string(),
            line,
            signature,
            end_line,
        };
        if !out
            .iter()
            .any(|t| t.name == tag.name && t.line == tag.line && t.role == tag.role)
        {
            out.push(tag);
        }
    }
    // A name where it is defined is not also a reference to it.
    let defined: Vec<(String, u32)> = out
        .iter()
        .filter(|t| t.role == Role::Definition)
        .map(|t| (t.name.clone(), t.line))
        .collect();
    out.retain(|t| t.role == Role::Definition || !defined.contains(&(t.name.clone(), t.line)));
    out.sort_by_key(|t| (t.line, t.role == Role::Reference));
    Some(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// (name, role, line) of each tag.
    fn found(lang: Language, source: &str) -> Vec<(String, Role, u32)> {
        tags(lang, source.as_bytes())
            .unwrap_or_else(|| panic!("{lang} has no tags"))
            .into_iter()
            .map(|t| (t.name, t.role, t.line))
            .collect()
    }

    fn has(found: &[(String, Role, u32)], name: &str, role: Role, line: u32) -> bool {
        found
            .iter()
            .any(|(n, r, l)| n == name && *r == role && *l == line)
    }

    use Role::{Definition as D, Reference as R};

    #[test]
    fn every_language_with_a_grammar_for_code_has_tags() {
        for lang in Language::ALL {
            let code = !matches!(lang, Language::Json | Language::Toml);
            assert_eq!(has_tags(lang), code, "{lang}");
        }
    }

    #[test]
    fn definitions_and_references_of_each_language() {
        /// A language, a source, and tags it must have: (name, role, line).
        type Case<'a> = (Language, &'a str, &'a [(&'a str, Role, u32)]);
        let cases: &[Case] = &[
            (
                Language::Rust,
                "pub struct Cart {\n    items: Vec<u32>,\n}\n\nfn total(c: &Cart) -> u32 {\n    sum(&c.items)\n}\n",
                &[("Cart", D, 1), ("total", D, 5), ("sum", R, 6)],
            ),
            (
                Language::Python,
                "class Cart:\n    def total(self):\n        return compute(self.items)\n\n\ndef compute(xs):\n    return sum(xs)\n",
                &[
                    ("Cart", D, 1),
                    ("total", D, 2),
                    ("compute", R, 3),
                    ("compute", D, 6),
                ],
            ),
            (
                Language::JavaScript,
                "class Cart {\n  total() {\n    return compute(this.items);\n  }\n}\n\nfunction compute(xs) {\n  return xs.length;\n}\n",
                &[
                    ("Cart", D, 1),
                    ("total", D, 2),
                    ("compute", R, 3),
                    ("compute", D, 7),
                ],
            ),
            (
                Language::TypeScript,
                "interface Item {\n  price: number;\n}\n\nfunction total(items: Item[]): number {\n  return compute(items);\n}\n",
                &[("Item", D, 1), ("total", D, 5), ("compute", R, 6)],
            ),
            (
                Language::Tsx,
                "function App(): JSX.Element {\n  return render(<div />);\n}\n",
                &[("App", D, 1), ("render", R, 2)],
            ),
            (
                Language::Go,
                "package cart\n\ntype Cart struct {\n\tItems []int\n}\n\nfunc Total(c Cart) int {\n\treturn sum(c.Items)\n}\n",
                &[("Cart", D, 3), ("Total", D, 7), ("sum", R, 8)],
            ),
            (
                Language::Java,
                "class Cart {\n  int total() {\n    return compute(items);\n  }\n}\n",
                &[("Cart", D, 1), ("total", D, 2), ("compute", R, 3)],
            ),
            (
                Language::C,
                "struct cart { int n; };\n\nint total(struct cart *c) {\n  return compute(c->n);\n}\n",
                &[("cart", D, 1), ("total", D, 3), ("compute", R, 4)],
            ),
            (
                Language::Cpp,
                "class Cart {\n public:\n  int total();\n};\n\nint Cart::total() {\n  return compute(n);\n}\n",
                &[("Cart", D, 1), ("compute", R, 7)],
            ),
            (
                Language::Ruby,
                "class Cart\n  def total\n    compute(items)\n  end\nend\n",
                &[("Cart", D, 1), ("total", D, 2), ("compute", R, 3)],
            ),
        ];
        // A type where it is defined is not also a reference to it.
        let c = found(Language::C, cases[7].1);
        assert!(!has(&c, "cart", R, 1), "{c:?}");
        for (lang, source, want) in cases {
            let got = found(*lang, source);
            for (name, role, line) in *want {
                assert!(
                    has(&got, name, *role, *line),
                    "{lang}: {name} {role:?} at line {line} not in {got:?}"
                );
            }
        }
    }

    #[test]
    fn a_definition_carries_its_signature_line() {
        let t = tags(
            Language::Python,
            b"def compute(xs, *, scale=1):\n    return sum(xs) * scale\n",
        )
        .unwrap();
        let def = t.iter().find(|t| t.role == Role::Definition).unwrap();
        assert_eq!(def.signature, "def compute(xs, *, scale=1):");
        assert_eq!(def.kind, "function");
        assert_eq!((def.line, def.end_line), (1, 2));
        // A method ends inside its class, so the map can show it within it.
        let t = tags(
            Language::Python,
            b"class Cart:\n    def total(self):\n        return 1\n\n    def n(self):\n        return 2\n\nX = 1\n",
        )
        .unwrap();
        let span = |name: &str| {
            let d = t
                .iter()
                .find(|t| t.name == name && t.role == Role::Definition)
                .unwrap();
            (d.line, d.end_line)
        };
        assert_eq!(span("Cart"), (1, 6));
        assert_eq!(span("total"), (2, 3));
        assert_eq!(span("n"), (5, 6));
    }

    #[test]
    fn bad_input_has_no_tags_or_what_parses() {
        // Too big: none. Not UTF-8, broken syntax: what can be read.
        assert!(tags(Language::Python, &vec![b'x'; MAX_BYTES + 1]).is_none());
        let broken = tags(
            Language::Python,
            b"def ok():\n    pass\n\ndef (\n\xff\xfe\n",
        )
        .unwrap();
        assert!(broken.iter().any(|t| t.name == "ok"), "{broken:?}");
        assert!(tags(Language::Json, b"{}").is_none());
    }
}
