//! Which hunks a verdict applies to. A selector as a user types it (nothing, `PATH`,
//! `PATH:N[,N…]`, `--all`) or as the app sends it (a path, hunk ids) is resolved against the
//! review listing itself — the files, paths and hunk numbers `bosun review` shows — so it can
//! only ever pick what the user was shown. A selector that picks nothing is an error that names
//! what it could have meant.

use super::verdicts::{HunkSel, Verdict};
use crate::CoreError;
use bosun_protocol::{HunkState, Review, ReviewFile};

/// Hunks as a user names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// No selector: every undecided hunk of every file.
    Undecided,
    /// `--all`: every file, each as if named by its path.
    All,
    /// What a user typed: `PATH` (the new or the old path of a rename) or `PATH:N[,N…]`
    /// (hunk numbers as `bosun review` lists them). A path that itself ends in `:<digits>`
    /// names that file when it is one of the changed files.
    Typed(String),
    /// One file, every hunk.
    File(String),
    /// Some hunks of one file.
    Hunks { path: String, hunks: Vec<HunkSel> },
}

impl Selector {
    /// The CLI's form: an optional `PATH[:N[,N…]]`, and `--all`.
    pub fn from_args(target: Option<&str>, all: bool) -> Result<Selector, CoreError> {
        match (target, all) {
            (Some(t), true) => Err(bad(format!(
                "give `{t}` or --all, not both: --all is every file"
            ))),
            (Some(t), false) => Ok(Selector::Typed(t.to_string())),
            (None, true) => Ok(Selector::All),
            (None, false) => Ok(Selector::Undecided),
        }
    }

    /// The app's form: no path is every file; a path without hunk ids is the whole file.
    pub fn from_ids(path: Option<String>, ids: Option<Vec<String>>) -> Result<Selector, CoreError> {
        match (path, ids) {
            (None, None) => Ok(Selector::All),
            (None, Some(_)) => Err(bad("hunk ids need the path of their file".into())),
            (Some(path), None) => Ok(Selector::File(path)),
            (Some(path), Some(ids)) => Ok(Selector::Hunks {
                path,
                hunks: ids.into_iter().map(HunkSel::Id).collect(),
            }),
        }
    }
}

/// A hunk a selector picked, as the user knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pick {
    /// The file's path in the listing (its new path).
    pub path: String,
    pub number: u32,
    pub id: String,
    pub state: HunkState,
}

/// What a selector picked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Selection {
    pub picks: Vec<Pick>,
    /// Hunks were named one by one (a rejected hunk is accepted only then).
    pub named: bool,
}

/// Resolves `sel` against `review`, the listing the user sees.
pub(crate) fn resolve(
    sel: &Selector,
    review: &Review,
    verdict: Verdict,
) -> Result<Selection, CoreError> {
    let whole = |files: &[&ReviewFile]| Selection {
        picks: files.iter().flat_map(|f| picks_of(f)).collect(),
        named: false,
    };
    match sel {
        Selector::Undecided => undecided(review, verdict),
        Selector::All => Ok(whole(&review.files.iter().collect::<Vec<_>>())),
        Selector::File(path) => Ok(whole(&[file(review, path)?])),
        Selector::Hunks { path, hunks } => named(review, file(review, path)?, hunks),
        Selector::Typed(typed) => {
            // The whole text first: a file may be named `notes:2`.
            if let Some(f) = find(review, typed) {
                return Ok(whole(&[f]));
            }
            match split_hunks(typed)? {
                Some((path, numbers)) => named(review, file(review, path)?, &numbers),
                None => Err(no_such_file(review, typed)),
            }
        }
    }
}

fn picks_of(f: &ReviewFile) -> Vec<Pick> {
    f.hunks
        .iter()
        .map(|h| Pick {
            path: f.path.clone(),
            number: h.number,
            id: h.id.clone(),
            state: h.state,
        })
        .collect()
}

/// `PATH:N[,N…]` as the path and the numbers; None when the text does not end in numbers.
fn split_hunks(typed: &str) -> Result<Option<(&str, Vec<HunkSel>)>, CoreError> {
    let Some((path, list)) = typed.rsplit_once(':') else {
        return Ok(None);
    };
    let numbers: Option<Vec<u32>> = list.split(',').map(|n| n.trim().parse().ok()).collect();
    let Some(numbers) = numbers.filter(|_| !list.trim().is_empty()) else {
        return Ok(None);
    };
    if path.is_empty() {
        return Err(bad(format!(
            "`{typed}` names no file: use PATH, or PATH:N for hunk N of it"
        )));
    }
    Ok(Some((
        path,
        numbers.into_iter().map(HunkSel::Number).collect(),
    )))
}

/// Every undecided hunk; none left is an error that says what there is.
fn undecided(review: &Review, verdict: Verdict) -> Result<Selection, CoreError> {
    let task = &review.task_id;
    if verdict == Verdict::Unmark {
        return Err(bad(format!(
            "say what to take back: `bosun unmark {task} PATH`, `PATH:N` or `--all` (unmark changes accepted and rejected hunks, never undecided ones)"
        )));
    }
    let picks: Vec<Pick> = review
        .files
        .iter()
        .flat_map(picks_of)
        .filter(|p| p.state == HunkState::Unreviewed)
        .collect();
    if !picks.is_empty() {
        return Ok(Selection {
            picks,
            named: false,
        });
    }
    let c = &review.counts;
    if c.hunks == 0 {
        return Err(not_found(format!(
            "task {task} changed no files: there is nothing to review"
        )));
    }
    // A hunk this verdict would change: a rejected one to accept, an accepted one to reject.
    let (verb, other) = if verdict == Verdict::Accept {
        ("accept", HunkState::Rejected)
    } else {
        ("reject", HunkState::Accepted)
    };
    let example = review
        .files
        .iter()
        .flat_map(picks_of)
        .find(|p| p.state == other)
        .map(|p| format!("{}:{}", p.path, p.number))
        .unwrap_or_default();
    Err(not_found(format!(
        "nothing is undecided in task {task} ({} accepted, {} rejected): name the hunks whose verdict should change, e.g. `bosun {verb} {task} {example}` (`bosun review {task}` lists them)",
        c.accepted, c.rejected
    )))
}

/// Hunks of `f` named by number or id.
fn named(review: &Review, f: &ReviewFile, hunks: &[HunkSel]) -> Result<Selection, CoreError> {
    let mut picks: Vec<Pick> = Vec::new();
    for sel in hunks {
        let found = f.hunks.iter().find(|h| match sel {
            HunkSel::Number(n) => h.number == *n,
            HunkSel::Id(id) => h.id == *id,
        });
        let Some(h) = found else {
            return Err(no_such_hunk(review, f, sel));
        };
        if !picks.iter().any(|p| p.id == h.id) {
            picks.push(Pick {
                path: f.path.clone(),
                number: h.number,
                id: h.id.clone(),
                state: h.state,
            });
        }
    }
    Ok(Selection { picks, named: true })
}

/// The listed file `path` names (its new path, or the old path of a rename), or an error.
fn file<'r>(review: &'r Review, path: &str) -> Result<&'r ReviewFile, CoreError> {
    find(review, path).ok_or_else(|| no_such_file(review, path))
}

fn find<'r>(review: &'r Review, path: &str) -> Option<&'r ReviewFile> {
    let path = bosun_workspace::normalise_path(path).ok()?;
    let files = &review.files;
    files.iter().find(|f| f.path == path).or_else(|| {
        files
            .iter()
            .find(|f| f.old_path.as_deref() == Some(path.as_str()))
    })
}

fn no_such_hunk(review: &Review, f: &ReviewFile, sel: &HunkSel) -> CoreError {
    let has = match f.hunks.len() {
        0 => "it has no hunks".to_string(),
        1 => "it has one hunk, 1".to_string(),
        2 => "its hunks are 1 and 2".to_string(),
        n => format!("its hunks are 1 to {n}"),
    };
    match sel {
        HunkSel::Number(n) => not_found(format!(
            "{} has no hunk {n}: {has} (`bosun review {}` lists them)",
            f.path, review.task_id
        )),
        HunkSel::Id(id) => not_found(format!(
            "{} has no hunk with id {id} (the task's changes moved on since it was listed): {has}; reload the review",
            f.path
        )),
    }
}

/// The error for a path that names no changed file, with what it could have meant.
fn no_such_file(review: &Review, typed: &str) -> CoreError {
    let task = &review.task_id;
    let paths: Vec<&str> = review
        .files
        .iter()
        .flat_map(|f| std::iter::once(f.path.as_str()).chain(f.old_path.as_deref()))
        .collect();
    let listed = |found: &[&str]| list(found, 10);
    let trimmed = typed.trim_start_matches("./").trim_end_matches('/');
    if typed.contains(['*', '?', '[', '{']) {
        let matching: Vec<&str> = globset::Glob::new(trimmed)
            .map(|g| g.compile_matcher())
            .map(|m| paths.iter().copied().filter(|p| m.is_match(p)).collect())
            .unwrap_or_default();
        let what = if matching.is_empty() {
            format!("the changed files: {}", listed(&paths))
        } else {
            format!("the changed files it matches: {}", listed(&matching))
        };
        return not_found(format!(
            "`{typed}` is a glob, and globs are not selectors: name one file (PATH or PATH:N) at a time, or use --all; {what}"
        ));
    }
    let under: Vec<&str> = paths
        .iter()
        .copied()
        .filter(|p| trimmed.is_empty() || p.starts_with(&format!("{trimmed}/")))
        .collect();
    if typed.ends_with('/') || !under.is_empty() {
        let what = if under.is_empty() {
            "it holds no changed file".to_string()
        } else {
            format!("the changed files in it: {}", listed(&under))
        };
        return not_found(format!(
            "`{typed}` is a directory, and directories are not selectors: name one file (PATH or PATH:N) at a time, or use --all; {what}"
        ));
    }
    let close = close_paths(trimmed, &paths);
    let hint = if !close.is_empty() {
        format!("did you mean {}?", list(&close, 5).replace(", ", " or "))
    } else if paths.is_empty() {
        "it changed no files".to_string()
    } else {
        format!("the changed files: {}", listed(&paths))
    };
    not_found(format!(
        "`{typed}` is not a file task {task} changed: {hint} (`bosun review {task}` lists them)"
    ))
}

/// Changed paths a typo of `typed` could have meant: the same file name elsewhere, the same
/// path in another case, or a few characters apart.
fn close_paths<'p>(typed: &str, paths: &[&'p str]) -> Vec<&'p str> {
    let name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_lowercase();
    let typed_lower = typed.to_lowercase();
    let limit = (typed.chars().count() / 4).clamp(1, 3);
    let mut scored: Vec<(usize, &str)> = paths
        .iter()
        .filter_map(|p| {
            let lower = p.to_lowercase();
            let score = if lower == typed_lower {
                0
            } else if name(p) == name(typed) {
                1
            } else {
                let d = distance(&lower, &typed_lower);
                let dn = distance(&name(p), &name(typed));
                if d <= limit {
                    1 + d
                } else if dn <= limit {
                    2 + dn
                } else {
                    return None;
                }
            };
            Some((score, *p))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().map(|(_, p)| p).collect()
}

/// Levenshtein distance between two short strings.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = if ca == *cb {
                previous
            } else {
                1 + previous.min(row[j]).min(current)
            };
            previous = current;
        }
    }
    row[b.len()]
}

/// At most `max` items, then how many more.
fn list(items: &[&str], max: usize) -> String {
    let mut out = items
        .iter()
        .take(max)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > max {
        out.push_str(&format!(" and {} more", items.len() - max));
    }
    out
}

fn not_found(message: String) -> CoreError {
    CoreError::Review {
        code: "not_found",
        message,
    }
}

fn bad(message: String) -> CoreError {
    CoreError::Review {
        code: "bad_request",
        message,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn numbers_follow_the_last_colon_and_a_path_may_hold_colons() {
        assert_eq!(split_hunks("src/a.rs").unwrap(), None);
        assert_eq!(
            split_hunks("a:b.txt:1, 3").unwrap(),
            Some(("a:b.txt", vec![HunkSel::Number(1), HunkSel::Number(3)]))
        );
        assert_eq!(split_hunks("a:b.txt").unwrap(), None);
        assert_eq!(split_hunks("a.txt:").unwrap(), None);
        assert_eq!(split_hunks("a.txt:1,x").unwrap(), None);
        assert!(split_hunks(":3").is_err());
    }

    #[test]
    fn a_typo_finds_the_path_it_meant() {
        let paths = ["big.txt", "src/new.txt", "docs/guide.md"];
        assert_eq!(close_paths("new.txt", &paths), vec!["src/new.txt"]);
        assert_eq!(close_paths("bg.txt", &paths), vec!["big.txt"]);
        assert_eq!(close_paths("BIG.TXT", &paths), vec!["big.txt"]);
        assert_eq!(close_paths("zzz", &paths), Vec::<&str>::new());
    }
}
