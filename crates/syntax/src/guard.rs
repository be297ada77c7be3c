//! The edit guard: after an edit, tell the model if it broke a file that parsed before.

use crate::Language;
use crate::parse::{Checked, PARSE_BUDGET, check};

/// What to tell the model after an edit left `path` with the contents `after` (`before` is the
/// contents it replaced, `None` for a new file), or `None` when there is nothing to say: the
/// language is not one Bosun parses, `after` parses (or could not be checked), or `before` did
/// not parse either (the edit did not break a parsing file, and saying nothing avoids crying wolf
/// on files that were already broken or that the grammar does not read).
///
/// `src/calc.py: syntax error at line 12, column 5 (unexpected `)`); the file parsed before this edit`
///
/// `after` is parsed first and `before` only when `after` does not parse, so an edit that keeps
/// the file valid costs one parse.
pub fn guard(path: &str, before: Option<&[u8]>, after: &[u8]) -> Option<String> {
    let lang = Language::for_path(path)?;
    let Checked::Broken(error) = check(lang, after, PARSE_BUDGET) else {
        return None;
    };
    let why = match before {
        None => "the file is new",
        Some(before) => match check(lang, before, PARSE_BUDGET) {
            Checked::Parses => "the file parsed before this edit",
            Checked::Broken(_) | Checked::Unchecked => return None,
        },
    };
    Some(format!("{path}: {error}; {why}"))
}
