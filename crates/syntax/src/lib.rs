//! Tree-sitter for Bosun: the one table of languages ([`Language`]), parsing a file to its first
//! syntax error ([`first_error`]), and the edit guard ([`guard`]; [`GuardCache`] parses later
//! edits of a file incrementally) that tells the model when an edit broke a file that parsed
//! before, and the [`tags`] (definitions and references) the repository map is built from.
//! Pure: no IO.

pub mod bench;
mod guard;
mod language;
mod parse;
mod tags;

pub use guard::{GuardCache, guard};
pub use language::Language;
pub use parse::{MAX_BYTES, PARSE_BUDGET, Problem, SyntaxError, first_error};
pub use tags::{Role, TAGS_VERSION, Tag, has_tags, tags};
/// The tree-sitter this crate's grammars are built for (so users of [`Language::grammar`] agree).
pub use tree_sitter;
