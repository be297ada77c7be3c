//! Parsing a file and finding its first syntax error.

use crate::Language;
use std::fmt;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};
use tree_sitter::{Node, ParseOptions, ParseState, Parser, Tree};

/// Files larger than this are not parsed: [`first_error`] answers `None` (nothing known).
pub const MAX_BYTES: usize = 2 * 1024 * 1024;

/// The longest a parse may take; a parse cut short answers `None` (nothing known), so a giant or
/// adversarial file can never hold up the caller.
pub const PARSE_BUDGET: Duration = Duration::from_millis(500);

/// The longest text of an unexpected token that is quoted, in characters.
const MAX_QUOTED: usize = 30;

/// Where a file stops parsing, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// 1-based.
    pub line: u32,
    /// 1-based, in characters (not bytes) from the start of the line.
    pub column: u32,
    pub problem: Problem,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The text of the first token that does not fit (trimmed, shortened, escaped to one line).
    Unexpected(String),
    /// The token or node kind the grammar expected here, e.g. `)` or `;`.
    Missing(String),
    UnexpectedEndOfFile,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "syntax error at line {}, column {} ({})",
            self.line, self.column, self.problem
        )
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Unexpected(text) => write!(f, "unexpected `{text}`"),
            Problem::Missing(kind) => write!(f, "missing `{kind}`"),
            Problem::UnexpectedEndOfFile => f.write_str("unexpected end of file"),
        }
    }
}

/// The first syntax error (in document order) of `source` read as `lang`, or `None` when it
/// parses — or when it was not checked: larger than [`MAX_BYTES`], or its parse took longer than
/// [`PARSE_BUDGET`]. The source need not be UTF-8 (tree-sitter reads bytes).
pub fn first_error(lang: Language, source: &[u8]) -> Option<SyntaxError> {
    match check(lang, source, PARSE_BUDGET) {
        Checked::Broken(error) => Some(error),
        Checked::Parses | Checked::Unchecked => None,
    }
}

/// What parsing told us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Checked {
    Parses,
    Broken(SyntaxError),
    /// Too large, out of time, or the grammar would not load: nothing is known.
    Unchecked,
}

pub(crate) fn check(lang: Language, source: &[u8], budget: Duration) -> Checked {
    if source.len() > MAX_BYTES {
        return Checked::Unchecked;
    }
    let Some(mut parser) = parser(lang) else {
        return Checked::Unchecked;
    };
    match parse(&mut parser, source, None, budget) {
        Some(tree) => verdict(&tree, source),
        None => Checked::Unchecked,
    }
}

/// A parser for `lang`, or `None` when its grammar will not load.
pub(crate) fn parser(lang: Language) -> Option<Parser> {
    let mut parser = Parser::new();
    parser.set_language(&lang.grammar()).ok()?;
    Some(parser)
}

/// Parses `source` (at most [`MAX_BYTES`]) within `budget`, incrementally when `old` is given
/// (`old` must already be edited to match `source`, see [`Tree::edit`]). `None` when too large or
/// out of time; the parser is then reset, so its next parse starts afresh.
pub(crate) fn parse(
    parser: &mut Parser,
    source: &[u8],
    old: Option<&Tree>,
    budget: Duration,
) -> Option<Tree> {
    if source.len() > MAX_BYTES {
        return None;
    }
    let deadline = Instant::now() + budget;
    let mut in_time = |_: &ParseState| {
        if Instant::now() < deadline {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(())
        }
    };
    let options = ParseOptions::new().progress_callback(&mut in_time);
    let tree = parser.parse_with_options(
        &mut |offset, _| source.get(offset..).unwrap_or_default(),
        old,
        Some(options),
    );
    if tree.is_none() {
        // A parse cut short would otherwise resume (on other text) at the next call.
        parser.reset();
    }
    tree
}

/// Whether `tree`, parsed from `source`, parses, or where its first error is.
pub(crate) fn verdict(tree: &Tree, source: &[u8]) -> Checked {
    let root = tree.root_node();
    if !root.has_error() {
        return Checked::Parses;
    }
    Checked::Broken(match first_error_node(root) {
        Some(node) => describe(node, source),
        // has_error() with no ERROR or MISSING node: say where the tree ends.
        None => at(root.end_byte(), root, source, Problem::UnexpectedEndOfFile),
    })
}

/// The first ERROR or MISSING node in document order (pre-order, entering only subtrees that
/// contain an error).
fn first_error_node(root: Node<'_>) -> Option<Node<'_>> {
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            return Some(node);
        }
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return None;
            }
        }
    }
}

/// A MISSING node is reported where the token is missing. In an ERROR node, the first closing
/// bracket that closes nothing opened inside it is the unexpected token; failing that, an ERROR
/// that runs to the end of the file is a construct that was never finished (an unclosed bracket,
/// a `def` without its `end`), reported where it starts; otherwise it is its first token.
fn describe(node: Node<'_>, source: &[u8]) -> SyntaxError {
    if node.is_missing() {
        let problem = Problem::Missing(node.kind().to_string());
        return at(node.start_byte(), node, source, problem);
    }
    let text = |leaf: Node<'_>| {
        quote(
            source
                .get(leaf.start_byte()..leaf.end_byte())
                .unwrap_or_default(),
        )
    };
    let leaves = leaves(node);
    if let Some(closer) = unmatched_closer(&leaves) {
        return at(
            closer.start_byte(),
            closer,
            source,
            Problem::Unexpected(text(closer)),
        );
    }
    let first = leaves.first().copied().unwrap_or(node);
    let rest = source.get(node.end_byte()..).unwrap_or_default();
    let text = text(first);
    let problem = if text.is_empty() || rest.iter().all(u8::is_ascii_whitespace) {
        Problem::UnexpectedEndOfFile
    } else {
        Problem::Unexpected(text)
    };
    at(first.start_byte(), first, source, problem)
}

/// The leaves (tokens) under `node`, in order.
fn leaves(node: Node<'_>) -> Vec<Node<'_>> {
    let mut leaves = Vec::new();
    let mut cursor = node.walk();
    loop {
        if !cursor.goto_first_child() {
            leaves.push(cursor.node());
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() || cursor.node() == node {
                    return leaves;
                }
            }
        }
    }
}

fn unmatched_closer<'t>(leaves: &[Node<'t>]) -> Option<Node<'t>> {
    let mut open = Vec::new();
    for leaf in leaves {
        match leaf.kind() {
            kind @ ("(" | "[" | "{") => open.push(kind),
            kind @ (")" | "]" | "}") => {
                let opener = match kind {
                    ")" => "(",
                    "]" => "[",
                    _ => "{",
                };
                if open.pop() != Some(opener) {
                    return Some(*leaf);
                }
            }
            _ => {}
        }
    }
    None
}

/// A [`SyntaxError`] at `byte`, which lies on `node`'s first line.
fn at(byte: usize, node: Node<'_>, source: &[u8], problem: Problem) -> SyntaxError {
    let point = node.start_position();
    let (row, line_start) = if byte == node.start_byte() {
        (point.row, byte - point.column)
    } else {
        let end = node.end_position();
        (end.row, byte - end.column)
    };
    let before = source.get(line_start..byte).unwrap_or_default();
    let column = String::from_utf8_lossy(before).chars().count() + 1;
    SyntaxError {
        line: u32::try_from(row + 1).unwrap_or(u32::MAX),
        column: u32::try_from(column).unwrap_or(u32::MAX),
        problem,
    }
}

/// The text trimmed, at most [`MAX_QUOTED`] characters (then `…`), on one line.
fn quote(text: &[u8]) -> String {
    let text = String::from_utf8_lossy(text);
    let text = text.trim();
    let mut quoted = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == MAX_QUOTED {
            quoted.push('…');
            break;
        }
        match c {
            '\n' => quoted.push_str("\\n"),
            '\r' => quoted.push_str("\\r"),
            '\t' => quoted.push_str("\\t"),
            c if c.is_control() => quoted.push_str(&c.escape_unicode().to_string()),
            c => quoted.push(c),
        }
    }
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_parse_out_of_time_is_unchecked() {
        let source = "def f(:\n    x = [1, (2,\n".repeat(20_000);
        assert_eq!(
            check(Language::Python, source.as_bytes(), Duration::ZERO),
            Checked::Unchecked
        );
        assert!(matches!(
            check(Language::Python, source.as_bytes(), Duration::from_secs(60)),
            Checked::Broken(_)
        ));
    }

    #[test]
    fn quoted_text_is_trimmed_short_and_on_one_line() {
        assert_eq!(quote(b"  )  "), ")");
        assert_eq!(quote(b"'a\n\tb\x07'"), "'a\\n\\tb\\u{7}'");
        assert_eq!(
            quote("é".repeat(31).as_bytes()),
            format!("{}…", "é".repeat(30))
        );
        assert_eq!(quote(b"\xff"), "\u{fffd}");
    }
}
