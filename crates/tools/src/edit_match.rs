//! How `edit_file` finds `old_string` when it is not in the file exactly: small models get
//! whitespace wrong. Tried in order, line by line, each only when it finds exactly one place:
//! 1. **Trailing whitespace** ignored on every line (spaces or a `\r` the model left out or
//!    added at a line's end, a last line without its newline);
//! 2. **A uniform indentation shift**: every non-blank line of `old_string` is indented by the
//!    same prefix more (or less) in the file; the replacement is re-indented the same way.
//!
//! Nothing looser: the text of every line must be the same, and the lines must be whole lines
//! of the file.

/// How a loose match was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Loose {
    TrailingWhitespace,
    Indentation,
}

impl Loose {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Loose::TrailingWhitespace => "ignoring trailing whitespace",
            Loose::Indentation => {
                "with the indentation shifted; the new text was re-indented the same way"
            }
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LooseMatch {
    /// Not found, even loosely.
    None,
    /// Found once: the file's new text, and where (1-based first line).
    Unique {
        updated: String,
        how: Loose,
        line: usize,
    },
    /// Found at these 1-based lines: not applied.
    Ambiguous { lines: Vec<usize>, how: Loose },
}

/// Indentation added to (or taken from) every non-blank line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Shift {
    Add(String),
    Remove(String),
}

/// Replaces the one place `old` loosely matches in `text` with `new`, with `eol` between the
/// new lines.
pub(crate) fn loose_replace(text: &str, old: &str, new: &str, eol: &str) -> LooseMatch {
    if text.len() > 2 * 1024 * 1024 || old.trim().is_empty() {
        return LooseMatch::None;
    }
    let file: Vec<&str> = text.split_inclusive('\n').collect();
    let content = |l: &str| -> String {
        let l = l.strip_suffix('\n').unwrap_or(l);
        l.strip_suffix('\r').unwrap_or(l).to_string()
    };
    let file_lines: Vec<String> = file.iter().map(|l| content(l)).collect();
    let old = old.replace("\r\n", "\n");
    let old_lines: Vec<&str> = old.strip_suffix('\n').unwrap_or(&old).split('\n').collect();
    let n = old_lines.len();
    if n > file_lines.len() {
        return LooseMatch::None;
    }
    let starts = 0..=file_lines.len() - n;

    let trailing: Vec<usize> = starts
        .clone()
        .filter(|&s| (0..n).all(|k| file_lines[s + k].trim_end() == old_lines[k].trim_end()))
        .collect();
    let (found, how, shift) = match trailing.len() {
        0 => {
            let shifted: Vec<(usize, Shift)> = starts
                .filter_map(|s| shift_at(&file_lines[s..s + n], &old_lines).map(|sh| (s, sh)))
                .collect();
            match shifted.len() {
                0 => return LooseMatch::None,
                1 => (shifted[0].0, Loose::Indentation, Some(shifted[0].1.clone())),
                _ => {
                    return LooseMatch::Ambiguous {
                        lines: shifted.iter().map(|(s, _)| s + 1).collect(),
                        how: Loose::Indentation,
                    };
                }
            }
        }
        1 => (trailing[0], Loose::TrailingWhitespace, None),
        _ => {
            return LooseMatch::Ambiguous {
                lines: trailing.iter().map(|s| s + 1).collect(),
                how: Loose::TrailingWhitespace,
            };
        }
    };

    let new = new.replace("\r\n", "\n");
    let new_lines: Vec<String> = if new.is_empty() {
        Vec::new()
    } else {
        new.strip_suffix('\n')
            .unwrap_or(&new)
            .split('\n')
            .map(|l| reindent(l, shift.as_ref()))
            .collect()
    };
    let last = file[found + n - 1];
    let ends_line = last.ends_with('\n');
    let mut updated: String = file[..found].concat();
    for (i, line) in new_lines.iter().enumerate() {
        updated.push_str(line);
        if i + 1 < new_lines.len() || ends_line {
            updated.push_str(eol);
        }
    }
    updated.push_str(&file[found + n..].concat());
    LooseMatch::Unique {
        updated,
        how,
        line: found + 1,
    }
}

fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// The one shift that makes `old` the file's `lines` (blank lines match blank lines).
fn shift_at(lines: &[String], old: &[&str]) -> Option<Shift> {
    let mut shift: Option<Shift> = None;
    for (have, want) in lines.iter().zip(old) {
        let (h, w) = (have.trim(), want.trim());
        if h.is_empty() || w.is_empty() {
            if h.is_empty() && w.is_empty() {
                continue;
            }
            return None;
        }
        if h != w {
            return None;
        }
        let (hi, wi) = (indent(have), indent(want));
        let this = if let Some(p) = hi.strip_suffix(wi) {
            Shift::Add(p.to_string())
        } else if let Some(p) = wi.strip_suffix(hi) {
            Shift::Remove(p.to_string())
        } else {
            return None;
        };
        match &shift {
            None => shift = Some(this),
            Some(s) if *s == this => {}
            Some(_) => return None,
        }
    }
    shift.filter(|s| !matches!(s, Shift::Add(p) | Shift::Remove(p) if p.is_empty()))
}

fn reindent(line: &str, shift: Option<&Shift>) -> String {
    match shift {
        _ if line.trim().is_empty() => line.to_string(),
        None => line.to_string(),
        Some(Shift::Add(p)) => format!("{p}{line}"),
        Some(Shift::Remove(p)) => match line.strip_prefix(p.as_str()) {
            Some(rest) => rest.to_string(),
            // Less indented than the shift: take off what indentation there is.
            None => line[indent(line).len().min(p.len())..].to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_last_line_without_its_newline_still_matches() {
        assert_eq!(
            loose_replace("a\nb", "b\n", "c\n", "\n"),
            LooseMatch::Unique {
                updated: "a\nc".into(),
                how: Loose::TrailingWhitespace,
                line: 2
            }
        );
    }

    #[test]
    fn the_replacement_takes_the_shift_off_when_the_model_indented_too_much() {
        let text = "def f():\n  return 1\n";
        assert_eq!(
            loose_replace(text, "    return 1\n", "    x = 1\n    return x\n", "\n"),
            LooseMatch::Unique {
                updated: "def f():\n  x = 1\n  return x\n".into(),
                how: Loose::Indentation,
                line: 2
            }
        );
    }

    #[test]
    fn mixed_shifts_do_not_match() {
        let text = "if a:\n    b()\n  c()\n";
        assert_eq!(
            loose_replace(text, "if a:\n  b()\n  c()\n", "x\n", "\n"),
            LooseMatch::None
        );
    }
}
