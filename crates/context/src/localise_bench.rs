//! `bosun bench localise`: does the repository map find the files a change touches? Each task
//! is a real release of a published project (a crate or a Python sdist): the prompt is the
//! release's CHANGELOG entry, the answer the source files that changed between it and the
//! version before. The map (tags of the `from` version, ranked towards the prompt's
//! identifiers and the files it names) is scored next to a baseline that ranks the same files
//! by grep hits of the prompt's words in their path and content.
//!
//! **The answer** is the source files of the `from` version that the `to` version changed or
//! removed, among the files the map can index (a language with tags). Left out: tests (a
//! `tests`, `test` or `testing` directory, or a test's file name: `test_x.py`, `x_test.go`,
//! `conftest.py`), benches, examples and docs; hidden and dependency directories; files the `to`
//! version adds (nothing could rank a file that does not exist yet); and a file whose only
//! change is the version number (`__version__ = "1.2.3"`). The benchmark recomputes the answer
//! from the two archives and warns when it differs from the task list's `files`.
//!
//! **Both methods rank the same files**: every file the map indexes in the `from` tree, tests
//! included (an agent's map holds them too).
//!
//! **The scores**, per method: recall@k, the share of a task's answer files in the method's
//! top k, averaged over the tasks; hit@k, the share of tasks with at least one answer file in
//! the top k; and per task the position of the first answer file. The totals are also split
//! by whether the map had a focus (an identifier of the prompt that a file defines, or a file
//! the prompt names): without one it is its plain PageRank, blind to the prompt.
//!
//! It downloads (static.crates.io, PyPI) into a cache, so it is not part of CI; its tests run
//! offline on archives they build.

mod releases;

use crate::map::RepoMap;
pub use releases::{answer_file, changed_files, read_archive};
use releases::{version_files, write_tree};
use serde::{Deserialize, Serialize};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The committed task list (`tests/localise/tasks.toml`).
pub const TASKS: &str = include_str!("../../../tests/localise/tasks.toml");

/// Where a task's project is published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Registry {
    /// crates.io: the `.crate` archives of static.crates.io.
    Crates,
    /// PyPI: the version's sdist (`.tar.gz`).
    Pypi,
}

/// One task of the list: a release, its CHANGELOG entry and the files it changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    pub registry: Registry,
    pub name: String,
    /// The version before the release (the tree the map is built from).
    pub from: String,
    /// The release.
    pub to: String,
    pub prompt: String,
    /// The answer: package-relative paths of the source files the release changed.
    pub files: Vec<String>,
}

#[derive(Deserialize)]
struct TaskList {
    task: Vec<Task>,
}

/// Why the benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum LocaliseError {
    #[error("the task list {path}: {cause}")]
    Tasks { path: String, cause: String },
    #[error(
        "could not download {url}: {cause} (is the network up? a cache that holds the archives, \
         --cache DIR, needs none)"
    )]
    Fetch { url: String, cause: String },
    #[error("the archive {path}: {cause}")]
    Archive { path: String, cause: String },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
}

fn io_err(context: impl Into<String>) -> impl FnOnce(io::Error) -> LocaliseError {
    let context = context.into();
    move |source| LocaliseError::Io { context, source }
}

/// Downloads a URL's body (an error is a sentence saying why).
pub type Fetch<'a> = &'a dyn Fn(&str) -> Result<Vec<u8>, String>;

/// The tasks of a task list (TOML, `[[task]]` tables); `path` names it in errors.
pub fn parse_tasks(text: &str, path: &str) -> Result<Vec<Task>, LocaliseError> {
    let list: TaskList = toml::from_str(text).map_err(|e| LocaliseError::Tasks {
        path: path.to_string(),
        cause: e.to_string(),
    })?;
    if list.task.is_empty() {
        return Err(LocaliseError::Tasks {
            path: path.to_string(),
            cause: "no [[task]] tables: nothing to measure".into(),
        });
    }
    for t in &list.task {
        if t.files.is_empty() || t.prompt.trim().is_empty() {
            return Err(LocaliseError::Tasks {
                path: path.to_string(),
                cause: format!("{} {}: no prompt or no files", t.name, t.to),
            });
        }
    }
    Ok(list.task)
}

/// Words that say nothing about where a change is.
const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "from", "are", "was", "were", "not", "but", "now",
    "when", "into", "its", "can", "has", "have", "had", "been", "will", "also", "more", "than",
    "then", "there", "their", "they", "them", "these", "those", "such", "use", "used", "using",
    "via", "all", "any", "fix", "fixes", "fixed", "add", "adds", "added", "new", "support", "make",
    "makes", "made", "allow", "allows", "should", "would", "could", "does", "doesn", "don",
    "instead", "only", "other", "some", "like", "out", "you", "your", "which", "what", "where",
    "who", "how", "why", "being", "about", "after", "before", "over", "under", "same", "each",
    "both", "just", "very", "may", "might", "must", "one", "two",
];

/// The prompt's words the baseline greps for: runs of letters, digits and `_` holding a
/// letter, three characters or more, lowercased, without [`STOP_WORDS`], each once.
pub fn prompt_words(prompt: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in prompt.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        let word = word.to_lowercase();
        if word.chars().count() >= 3
            && word.chars().any(char::is_alphabetic)
            && !STOP_WORDS.contains(&word.as_str())
            && !out.contains(&word)
        {
            out.push(word);
        }
    }
    out
}

/// A path hit weighs as much as this many matching lines.
const PATH_HIT_LINES: usize = 10;

/// The baseline: `files` (under `root`) by grep hits of the prompt's words, highest first,
/// ties by path. A file scores, for each word, the lines of its content that hold the word
/// (case-insensitive) and [`PATH_HIT_LINES`] when its path holds it.
pub fn baseline_rank(root: &Path, files: &[String], prompt: &str) -> Vec<String> {
    let words = prompt_words(prompt);
    let mut scored: Vec<(usize, &String)> = files
        .iter()
        .map(|f| {
            let path = f.to_lowercase();
            let text = std::fs::read(root.join(f))
                .map(|b| String::from_utf8_lossy(&b).to_lowercase())
                .unwrap_or_default();
            let score = words
                .iter()
                .map(|w| {
                    let lines = text.lines().filter(|l| l.contains(w.as_str())).count();
                    lines
                        + if path.contains(w.as_str()) {
                            PATH_HIT_LINES
                        } else {
                            0
                        }
                })
                .sum();
            (score, f)
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().map(|(_, f)| f.clone()).collect()
}

/// The share of `answer` in the first `k` of `ranking`.
pub fn recall_at(ranking: &[String], answer: &[String], k: usize) -> f64 {
    if answer.is_empty() {
        return 0.0;
    }
    let top = &ranking[..k.min(ranking.len())];
    answer.iter().filter(|a| top.contains(a)).count() as f64 / answer.len() as f64
}

/// The 1-based position of the first answer file in `ranking`.
pub fn first_hit(ranking: &[String], answer: &[String]) -> Option<usize> {
    ranking
        .iter()
        .position(|f| answer.contains(f))
        .map(|i| i + 1)
}

/// One method's figures on one task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MethodResult {
    /// Position of the first answer file (none: not ranked at all).
    pub first: Option<usize>,
    pub recall_at_1: f64,
    pub recall_at_5: f64,
    /// The method's top five files.
    pub top: Vec<String>,
    pub ms: f64,
}

impl MethodResult {
    fn new(ranking: &[String], answer: &[String], took: Duration) -> MethodResult {
        MethodResult {
            first: first_hit(ranking, answer),
            recall_at_1: recall_at(ranking, answer, 1),
            recall_at_5: recall_at(ranking, answer, 5),
            top: ranking.iter().take(5).cloned().collect(),
            ms: took.as_secs_f64() * 1000.0,
        }
    }
}

/// One task's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskResult {
    pub name: String,
    pub from: String,
    pub to: String,
    /// Files of the `from` version the map indexed (both methods rank these).
    pub indexed: usize,
    pub answer: Vec<String>,
    /// The identifiers the map was given (`bosun_context::identifiers` of the prompt)…
    pub identifiers: Vec<String>,
    /// … those a file of the map defines (the others steer nothing) …
    pub defined: Vec<String>,
    /// … and the files the prompt names (the map's focus files).
    pub named: Vec<String>,
    pub map: MethodResult,
    pub baseline: MethodResult,
    /// What the recomputed answer says against the task list, if they differ.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// One method's totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scores {
    pub recall_at_1: f64,
    pub recall_at_5: f64,
    pub hit_at_1: f64,
    pub hit_at_5: f64,
    pub ms: f64,
}

impl Scores {
    fn of<'a>(results: impl Iterator<Item = &'a MethodResult> + Clone) -> Scores {
        let n = results.clone().count().max(1) as f64;
        let sum = |f: &dyn Fn(&MethodResult) -> f64| results.clone().map(f).sum::<f64>();
        let hit = |k| move |r: &MethodResult| f64::from(u8::from(r.first.is_some_and(|p| p <= k)));
        Scores {
            recall_at_1: sum(&|r| r.recall_at_1) / n,
            recall_at_5: sum(&|r| r.recall_at_5) / n,
            hit_at_1: sum(&hit(1)) / n,
            hit_at_5: sum(&hit(5)) / n,
            ms: sum(&|r| r.ms),
        }
    }
}

/// The benchmark's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub tasks: Vec<TaskResult>,
    pub map: Scores,
    pub baseline: Scores,
    /// The same over the tasks where the map had a focus (an identifier of the prompt that a
    /// file defines, or a file it names) …
    pub with_focus: Subset,
    /// … and over the others (where the map is its plain PageRank).
    pub without_focus: Subset,
    pub seconds: f64,
}

/// Both methods' totals over some of the tasks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Subset {
    pub tasks: usize,
    pub map: Scores,
    pub baseline: Scores,
}

impl Subset {
    fn of(results: &[&TaskResult]) -> Subset {
        Subset {
            tasks: results.len(),
            map: Scores::of(results.iter().map(|r| &r.map)),
            baseline: Scores::of(results.iter().map(|r| &r.baseline)),
        }
    }
}

impl TaskResult {
    /// Whether the map had a focus: a defined identifier or a named file.
    pub fn focused(&self) -> bool {
        !self.defined.is_empty() || !self.named.is_empty()
    }
}

/// Scores one task on the `from` tree at `root`.
pub fn score_task(root: &Path, task: &Task) -> TaskResult {
    let t = Instant::now();
    let map = RepoMap::build(root);
    let paths: Vec<String> = map.files.iter().map(|f| f.path.clone()).collect();
    let focus = crate::repo::named_files(&task.prompt, &paths);
    let idents = crate::identifiers(&task.prompt);
    // Ranked as a task's request ranks it.
    let (focus_files, focus_idents) = map.task_focus(&task.prompt);
    let ranked: Vec<String> = map
        .rank_weighted(&focus_files, &focus_idents)
        .into_iter()
        .map(|r| r.path)
        .collect();
    let map_took = t.elapsed();
    let t = Instant::now();
    let baseline = baseline_rank(root, &paths, &task.prompt);
    let baseline_took = t.elapsed();
    let missing: Vec<&String> = task.files.iter().filter(|f| !paths.contains(f)).collect();
    let defined: Vec<String> = idents
        .iter()
        .filter(|x| {
            map.files.iter().any(|f| {
                f.tags
                    .iter()
                    .any(|t| t.role == bosun_syntax::Role::Definition && &t.name == *x)
            })
        })
        .cloned()
        .collect();
    TaskResult {
        name: task.name.clone(),
        from: task.from.clone(),
        to: task.to.clone(),
        indexed: paths.len(),
        answer: task.files.clone(),
        identifiers: idents,
        defined,
        named: focus,
        map: MethodResult::new(&ranked, &task.files, map_took),
        baseline: MethodResult::new(&baseline, &task.files, baseline_took),
        warning: (!missing.is_empty())
            .then(|| format!("answer files the map does not index: {missing:?}")),
    }
}

/// Runs the tasks: archives from `cache` (downloaded into it with `fetch` when missing), the
/// answers checked against the archives, each task scored. `progress` gets a line per task.
pub fn run(
    tasks: &[Task],
    cache: &Path,
    fetch: Fetch,
    progress: &mut dyn Write,
) -> Result<Report, LocaliseError> {
    let started = Instant::now();
    let mut results = Vec::new();
    for (i, task) in tasks.iter().enumerate() {
        let _ = writeln!(
            progress,
            "[{}/{}] {} {} → {}",
            i + 1,
            tasks.len(),
            task.name,
            task.from,
            task.to
        );
        let before = version_files(task.registry, &task.name, &task.from, cache, fetch)?;
        let after = version_files(task.registry, &task.name, &task.to, cache, fetch)?;
        let changed = changed_files(&before, &after, &task.from, &task.to);
        let mut expected = task.files.clone();
        expected.sort();
        let differs = (changed != expected).then(|| {
            format!(
                "the archives' changed source files are {changed:?}, the task list says {expected:?}"
            )
        });
        let registry = match task.registry {
            Registry::Crates => "crates",
            Registry::Pypi => "pypi",
        };
        let root: PathBuf = cache
            .join("trees")
            .join(format!("{registry}-{}-{}", task.name, task.from));
        write_tree(&root, &before)
            .map_err(io_err(format!("while unpacking into {}", root.display())))?;
        let mut result = score_task(&root, task);
        let _ = std::fs::remove_dir_all(&root);
        if let Some(d) = differs {
            let _ = writeln!(progress, "  warning: {d}");
            result.warning = Some(match result.warning {
                Some(w) => format!("{d}; {w}"),
                None => d,
            });
        } else if let Some(w) = &result.warning {
            let _ = writeln!(progress, "  warning: {w}");
        }
        results.push(result);
    }
    let (with, without): (Vec<&TaskResult>, Vec<&TaskResult>) =
        results.iter().partition(|r| r.focused());
    Ok(Report {
        map: Scores::of(results.iter().map(|r| &r.map)),
        baseline: Scores::of(results.iter().map(|r| &r.baseline)),
        with_focus: Subset::of(&with),
        without_focus: Subset::of(&without),
        tasks: results,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// `bosun bench context`: on the same tasks, what the layered context of a first request
/// (`crate::assemble`, no recent changes: archives have no history) holds of the files the
/// release changed, under each split of the budget in `presets`: the share of answer files
/// shown at all (as a task file, a test, a sibling or a map entry), shown whole as a task file,
/// and the tokens it took. Prints a row per preset.
pub fn run_context(
    tasks: &[Task],
    cache: &Path,
    fetch: Fetch,
    presets: &[(String, crate::Shares)],
    budget: usize,
    out: &mut dyn Write,
) -> Result<(), LocaliseError> {
    let started = Instant::now();
    // Per preset: (shown, as a task file, tokens) summed over tasks.
    let mut sums = vec![(0.0f64, 0.0f64, 0usize); presets.len()];
    for task in tasks {
        let before = version_files(task.registry, &task.name, &task.from, cache, fetch)?;
        let registry = match task.registry {
            Registry::Crates => "crates",
            Registry::Pypi => "pypi",
        };
        let root: PathBuf = cache
            .join("trees")
            .join(format!("ctx-{registry}-{}-{}", task.name, task.from));
        write_tree(&root, &before)
            .map_err(io_err(format!("while unpacking into {}", root.display())))?;
        let map = RepoMap::build(&root);
        for (i, (_, shares)) in presets.iter().enumerate() {
            let none = |_: &[String], _: usize| Vec::new();
            let got = crate::assemble(
                &crate::Inputs {
                    root: &root,
                    map: &map,
                    prompt: &task.prompt,
                    touched: &[],
                    readable: &|_| true,
                    recent: &none,
                },
                budget,
                shares,
            );
            let shown = |layer: Option<crate::Layer>| {
                task.files
                    .iter()
                    .filter(|f| {
                        got.pieces.iter().any(|p| {
                            p.path.as_deref() == Some(f.as_str())
                                && layer.is_none_or(|l| p.layer == l)
                        })
                    })
                    .count() as f64
                    / task.files.len().max(1) as f64
            };
            sums[i].0 += shown(None);
            sums[i].1 += shown(Some(crate::Layer::Target));
            sums[i].2 += crate::estimate_tokens(&got.text);
        }
        let _ = std::fs::remove_dir_all(&root);
    }
    let n = tasks.len().max(1) as f64;
    writeln!(
        out,
        "{} tasks, a {budget}-token layered context (targets / tests / siblings / map / recent); answer files:",
        tasks.len()
    )
    .map_err(io_err("while printing"))?;
    writeln!(
        out,
        "{:<34} {:>8} {:>10} {:>12}",
        "shares", "shown", "as a task", "tokens (avg)"
    )
    .map_err(io_err("while printing"))?;
    for ((name, s), (shown, whole, tokens)) in presets.iter().zip(sums) {
        let label = format!(
            "{name} {:.0}/{:.0}/{:.0}/{:.0}/{:.0}",
            s.targets * 100.0,
            s.tests * 100.0,
            s.siblings * 100.0,
            s.symbols * 100.0,
            s.recent * 100.0
        );
        writeln!(
            out,
            "{label:<34} {:>8.3} {:>10.3} {:>12.0}",
            shown / n,
            whole / n,
            tokens as f64 / n
        )
        .map_err(io_err("while printing"))?;
    }
    writeln!(out, "total {:.1} s", started.elapsed().as_secs_f64())
        .map_err(io_err("while printing"))?;
    Ok(())
}

/// The report as a table: a row per task (the first answer file's position per method), then
/// the totals.
pub fn print(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let pos = |p: Option<usize>| p.map_or("–".to_string(), |p| p.to_string());
    writeln!(
        out,
        "{:<36} {:>6} {:>7} {:>7} {:>5} {:>9}",
        "task", "files", "answer", "idents", "map", "baseline"
    )?;
    for t in &report.tasks {
        writeln!(
            out,
            "{:<36} {:>6} {:>7} {:>7} {:>5} {:>9}{}",
            format!("{} {}→{}", t.name, t.from, t.to),
            t.indexed,
            t.answer.len(),
            format!("{}/{}", t.defined.len(), t.identifiers.len()),
            pos(t.map.first),
            pos(t.baseline.first),
            if t.warning.is_some() {
                "  (warning)"
            } else {
                ""
            }
        )?;
    }
    writeln!(
        out,
        "\n{} tasks; map and baseline rank the same files (above: the position of the first answer \
         file; idents: the prompt's identifiers a file defines / all it names)",
        report.tasks.len()
    )?;
    writeln!(
        out,
        "{:<40} {:>9} {:>9} {:>6} {:>6} {:>10}",
        "", "recall@1", "recall@5", "hit@1", "hit@5", "time"
    )?;
    let rows = [
        ("all", report.tasks.len(), &report.map, &report.baseline),
        (
            "with a defined identifier",
            report.with_focus.tasks,
            &report.with_focus.map,
            &report.with_focus.baseline,
        ),
        (
            "no defined identifier",
            report.without_focus.tasks,
            &report.without_focus.map,
            &report.without_focus.baseline,
        ),
    ];
    for (label, n, map, baseline) in rows {
        for (name, s) in [("map", map), ("baseline", baseline)] {
            writeln!(
                out,
                "{:<40} {:>9.3} {:>9.3} {:>6.3} {:>6.3} {:>7.0} ms",
                format!("{name:<9} {label} ({n})"),
                s.recall_at_1,
                s.recall_at_5,
                s.hit_at_1,
                s.hit_at_5,
                s.ms
            )?;
        }
    }
    writeln!(
        out,
        "total {:.1} s (downloads and unpacking included)",
        report.seconds
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use pretty_assertions::assert_eq;
    use std::collections::BTreeMap;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn recall_is_the_share_of_the_answer_in_the_top_k_and_hit_needs_one() {
        let ranking = strings(&["x.rs", "a.rs", "y.rs", "z.rs", "w.rs", "b.rs"]);
        let answer = strings(&["a.rs", "b.rs"]);
        assert_eq!(recall_at(&ranking, &answer, 1), 0.0);
        assert_eq!(recall_at(&ranking, &answer, 2), 0.5);
        assert_eq!(recall_at(&ranking, &answer, 5), 0.5);
        assert_eq!(recall_at(&ranking, &answer, 6), 1.0);
        assert_eq!(recall_at(&ranking, &answer, 100), 1.0);
        assert_eq!(recall_at(&[], &answer, 5), 0.0);
        assert_eq!(first_hit(&ranking, &answer), Some(2));
        assert_eq!(first_hit(&ranking, &strings(&["gone.rs"])), None);

        let one = MethodResult::new(&ranking, &answer, Duration::from_millis(2));
        let other = MethodResult::new(&strings(&["b.rs"]), &answer, Duration::from_millis(3));
        assert_eq!((one.recall_at_1, one.recall_at_5), (0.0, 0.5));
        assert_eq!((other.recall_at_1, other.recall_at_5), (0.5, 0.5));
        let s = Scores::of([one, other].iter());
        assert_eq!(
            (s.recall_at_1, s.recall_at_5, s.hit_at_1, s.hit_at_5),
            (0.25, 0.5, 0.5, 1.0)
        );
        assert!((s.ms - 5.0).abs() < 1e-9, "{s:?}");
    }

    #[test]
    fn the_prompts_words_are_long_lowercased_once_and_not_stop_words() {
        assert_eq!(
            prompt_words("Fixed the `Retry` backoff: retry_after is now honoured (#42), in v2."),
            ["retry", "backoff", "retry_after", "honoured"]
        );
    }

    #[test]
    fn the_baseline_ranks_by_grep_hits_in_path_and_content_ties_by_path() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let w = |rel: &str, text: &str| {
            let path = p.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        w("src/retry.rs", "pub fn delay() {}\n");
        w(
            "src/client.rs",
            "// Backoff before a retry.\nfn backoff() {}\nfn send() { backoff() }\n",
        );
        w("src/lib.rs", "mod client;\nmod retry;\n");
        w("src/zeta.rs", "fn unrelated() {}\n");
        w("src/alpha.rs", "fn unrelated() {}\n");
        let files = strings(&[
            "src/zeta.rs",
            "src/lib.rs",
            "src/client.rs",
            "src/alpha.rs",
            "src/retry.rs",
        ]);
        // retry.rs: 10 for its path; client.rs: 3 lines with backoff, 1 with retry; lib.rs: 1.
        let ranked = baseline_rank(p, &files, "Fix the retry BACKOFF.");
        assert_eq!(
            ranked,
            [
                "src/retry.rs",
                "src/client.rs",
                "src/lib.rs",
                "src/alpha.rs",
                "src/zeta.rs"
            ]
        );
    }

    #[test]
    fn the_committed_task_list_holds_thirty_distinct_releases_with_answers_the_rules_allow() {
        let tasks = parse_tasks(TASKS, "tests/localise/tasks.toml").unwrap();
        assert!(tasks.len() >= 30, "{} tasks", tasks.len());
        let mut seen = std::collections::BTreeSet::new();
        for t in &tasks {
            assert!(
                seen.insert((&t.name, &t.from)),
                "{} {} twice",
                t.name,
                t.from
            );
            assert_ne!(t.from, t.to, "{}", t.name);
            assert!((1..=4).contains(&t.files.len()), "{} {}", t.name, t.to);
            for f in &t.files {
                assert!(answer_file(f), "{} {}: {f}", t.name, t.to);
            }
            assert!(
                !t.prompt.contains("://"),
                "{} {}: a link left",
                t.name,
                t.to
            );
            assert!(
                !t.prompt.contains(&t.to),
                "{} {}: the version",
                t.name,
                t.to
            );
        }
    }

    /// A `.tar.gz` of `files` under `top/`.
    fn archive(top: &str, files: &[(&str, &str)]) -> Vec<u8> {
        let mut b = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        for (path, text) in files {
            let mut h = tar::Header::new_gnu();
            h.set_size(text.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            b.append_data(&mut h, format!("{top}/{path}"), text.as_bytes())
                .unwrap();
        }
        b.into_inner().unwrap().finish().unwrap()
    }

    fn tasks() -> Vec<Task> {
        parse_tasks(
            r#"
[[task]]
registry = "crates"
name = "demo"
from = "0.1.0"
to = "0.1.1"
prompt = "Fix `parse_header` rejecting a header with trailing whitespace."
files = ["src/header.rs"]

[[task]]
registry = "crates"
name = "demo"
from = "0.1.1"
to = "0.1.2"
prompt = "The retry delay doubles after each failed attempt."
files = ["src/lib.rs"]
"#,
            "tasks.toml",
        )
        .unwrap()
    }

    #[test]
    fn a_run_scores_each_task_warns_on_a_wrong_answer_and_then_needs_no_network() {
        let v = |header: &str, retry: &str| {
            archive(
                "demo-x",
                &[
                    ("Cargo.toml", "[package]\nname = \"demo\"\n"),
                    (
                        "src/lib.rs",
                        "mod header;\nmod retry;\npub use header::parse_header;\n",
                    ),
                    ("src/header.rs", header),
                    ("src/retry.rs", retry),
                    ("tests/t.rs", "#[test]\nfn t() {}\n"),
                ],
            )
        };
        let header0 = "pub fn parse_header(s: &str) -> bool {\n    !s.ends_with(' ')\n}\n";
        let header1 = "pub fn parse_header(s: &str) -> bool {\n    !s.trim_end().is_empty()\n}\n";
        let retry0 = "pub fn delay(n: u32) -> u32 {\n    n\n}\n";
        let retry1 = "pub fn delay(n: u32) -> u32 {\n    1 << n\n}\n";
        let served: BTreeMap<String, Vec<u8>> = [
            ("0.1.0", v(header0, retry0)),
            ("0.1.1", v(header1, retry0)),
            ("0.1.2", v(header1, retry1)),
        ]
        .into_iter()
        .map(|(ver, bytes)| {
            (
                format!("https://static.crates.io/crates/demo/demo-{ver}.crate"),
                bytes,
            )
        })
        .collect();
        let fetch = |url: &str| served.get(url).cloned().ok_or(format!("404 {url}"));
        let cache = tempfile::tempdir().unwrap();
        let mut progress = Vec::new();
        let report = run(&tasks(), cache.path(), &fetch, &mut progress).unwrap();
        let progress = String::from_utf8(progress).unwrap();
        assert!(progress.contains("[2/2] demo 0.1.1 → 0.1.2"), "{progress}");

        let first = &report.tasks[0];
        // Both methods rank what the map indexes, the test file too; it is never an answer.
        assert_eq!(first.indexed, 4, "{first:?}");
        assert_eq!(first.identifiers, ["parse_header"]);
        assert_eq!(first.defined, ["parse_header"]);
        assert_eq!(first.warning, None);
        assert_eq!(first.map.first, Some(1), "{first:?}");
        assert_eq!(first.baseline.first, Some(1), "{first:?}");
        // The second task's answer is wrong on purpose (retry.rs changed, not lib.rs).
        let second = &report.tasks[1];
        assert!(
            second
                .warning
                .as_deref()
                .is_some_and(|w| w.contains(r#"["src/retry.rs"]"#)),
            "{second:?}"
        );
        assert_eq!(report.map.hit_at_5, 1.0);

        let mut table = Vec::new();
        print(&report, &mut table).unwrap();
        let table = String::from_utf8(table).unwrap();
        assert!(table.contains("demo 0.1.0→0.1.1"), "{table}");
        assert!(table.contains("recall@1"), "{table}");
        assert!(table.contains("with a defined identifier (1)"), "{table}");
        assert_eq!(
            (report.with_focus.tasks, report.without_focus.tasks),
            (1, 1)
        );

        // The archives are cached: no network needed again.
        let offline = |_: &str| -> Result<Vec<u8>, String> { Err("offline".into()) };
        let again = run(&tasks(), cache.path(), &offline, &mut Vec::new()).unwrap();
        assert_eq!(again.tasks.len(), 2);
        // An empty cache and no network: an error naming the URL.
        let empty = tempfile::tempdir().unwrap();
        let err = run(&tasks(), empty.path(), &offline, &mut Vec::new()).unwrap_err();
        assert!(
            matches!(&err, LocaliseError::Fetch { url, .. } if url.ends_with("demo-0.1.0.crate")),
            "{err}"
        );
    }
}
