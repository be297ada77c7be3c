//! The layered budget of the first request (and of each request after the map or the task's
//! files change): the target files (named in the prompt, changed by the task, or defining what it
//! names), their related tests, their siblings' definitions, the repository map and the recent
//! changes to the targets, each layer capped as a share of one budget. What a layer leaves
//! unused goes to the map. Shares are configurable (`[context.shares]`); `bosun bench context`
//! measures them.

use crate::map::{RepoMap, estimate_tokens};
use bosun_syntax::Role;
use std::path::Path;

/// Shares of the budget per layer (normalised to sum 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shares {
    pub targets: f64,
    pub tests: f64,
    pub siblings: f64,
    pub symbols: f64,
    pub recent: f64,
}

impl Default for Shares {
    /// 30 / 10 / 5 / 50 / 5, measured with `bosun bench context` (36 releases, 4,000 tokens):
    /// the share of the changed files the context shows was 0.678 at 35/15/10/30/10, 0.692 at
    /// the articles' 25/15/15/30/15 and 0.706 here, as with more for the map (15/10/5/65/5),
    /// while the task files keep more room to be shown whole.
    fn default() -> Self {
        Shares {
            targets: 0.30,
            tests: 0.10,
            siblings: 0.05,
            symbols: 0.50,
            recent: 0.05,
        }
    }
}

impl Shares {
    /// The articles' split: 25 / 15 / 15 / 30 / 15.
    pub const ARTICLES: Shares = Shares {
        targets: 0.25,
        tests: 0.15,
        siblings: 0.15,
        symbols: 0.30,
        recent: 0.15,
    };

    fn normalised(&self) -> Shares {
        let parts = [
            self.targets,
            self.tests,
            self.siblings,
            self.symbols,
            self.recent,
        ]
        .map(|x| if x.is_finite() && x > 0.0 { x } else { 0.0 });
        let sum: f64 = parts.iter().sum();
        if sum <= 0.0 {
            return Shares::default();
        }
        Shares {
            targets: parts[0] / sum,
            tests: parts[1] / sum,
            siblings: parts[2] / sum,
            symbols: parts[3] / sum,
            recent: parts[4] / sum,
        }
    }
}

/// What a piece of the assembled context is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    Target,
    Test,
    Sibling,
    Map,
    Recent,
}

/// One piece of the assembled context.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    pub layer: Layer,
    pub path: Option<String>,
    pub reason: String,
    /// Estimated tokens of its text.
    pub tokens: usize,
}

/// The assembled context: its text (sections starting `# `) and its pieces.
#[derive(Debug, Clone, Default)]
pub struct Assembled {
    pub text: String,
    pub pieces: Vec<Piece>,
}

/// A recent change: commit, subject, patch.
pub type Change = (String, String, String);

/// What the assembly reads.
pub struct Inputs<'a> {
    pub root: &'a Path,
    pub map: &'a RepoMap,
    pub prompt: &'a str,
    /// Files the task changed (they are targets).
    pub touched: &'a [String],
    pub readable: &'a dyn Fn(&str) -> bool,
    /// Recent changes to these files, within this many bytes.
    pub recent: &'a dyn Fn(&[String], usize) -> Vec<Change>,
}

/// At most this many target files, related tests.
const MAX_TARGETS: usize = 3;
const MAX_TESTS: usize = 2;
const BYTES_PER_TOKEN: f64 = 3.5;

/// Assembles the layers within `budget_tokens`.
pub fn assemble(inputs: &Inputs, budget_tokens: usize, shares: &Shares) -> Assembled {
    let shares = shares.normalised();
    let bytes = |share: f64| (budget_tokens as f64 * share * BYTES_PER_TOKEN) as usize;
    let map = inputs.map;
    let (focus_files, focus_idents) = map.task_focus(inputs.prompt);
    let names: Vec<String> = focus_idents.iter().map(|(x, _)| x.clone()).collect();

    // Targets: changed by the task, named in the prompt, else defining a name written as code.
    let mut targets: Vec<(String, String)> = Vec::new();
    let add = |path: &str, why: &str, targets: &mut Vec<(String, String)>| {
        if targets.len() < MAX_TARGETS
            && !targets.iter().any(|(p, _)| p == path)
            && (inputs.readable)(path)
            && inputs.root.join(path).is_file()
        {
            targets.push((path.to_string(), why.to_string()));
        }
    };
    for t in inputs.touched {
        add(t, "changed by the task", &mut targets);
    }
    let mut listed = Vec::new();
    crate::repo::list(inputs.root, "", 0, inputs.readable, &mut listed);
    listed.sort();
    for f in crate::repo::named_files(inputs.prompt, &listed) {
        add(&f, "named in the prompt", &mut targets);
    }
    let coded = crate::identifiers(inputs.prompt);
    for x in &coded {
        for f in &map.files {
            if !crate::is_test_name(&f.path)
                && f.tags
                    .iter()
                    .any(|t| t.role == Role::Definition && &t.name == x)
            {
                add(
                    &f.path,
                    &format!("defines `{x}`, named in the prompt"),
                    &mut targets,
                );
            }
        }
    }

    let mut out = Assembled::default();
    let mut left_over = 0usize;

    // The targets, whole or as much as fits.
    let cap = bytes(shares.targets);
    let mut used = 0;
    let mut section = String::new();
    for (path, why) in &targets {
        let Some(text) =
            crate::read_in_worktree(inputs.root, path).and_then(|b| String::from_utf8(b).ok())
        else {
            continue;
        };
        let room = cap.saturating_sub(used);
        if room < 200 {
            break;
        }
        let block = file_block(path, why, &text, room);
        used += block.len();
        out.pieces.push(Piece {
            layer: Layer::Target,
            path: Some(path.clone()),
            reason: why.clone(),
            tokens: estimate_tokens(&block),
        });
        section.push_str(&block);
    }
    if !section.is_empty() {
        out.text.push_str("# Task files\n");
        out.text.push_str(&section);
    }
    left_over += cap.saturating_sub(used);

    // Tests of the targets: test files that use what a target defines, or named after it.
    let target_paths: Vec<String> = targets.iter().map(|(p, _)| p.clone()).collect();
    let defined: Vec<&str> = map
        .files
        .iter()
        .filter(|f| target_paths.contains(&f.path))
        .flat_map(|f| f.tags.iter())
        .filter(|t| t.role == Role::Definition && t.name.len() > 2)
        .map(|t| t.name.as_str())
        .collect();
    let stems: Vec<String> = target_paths.iter().map(|p| stem(p)).collect();
    let mut tests: Vec<(usize, &str)> = map
        .files
        .iter()
        .filter(|f| crate::is_test_name(&f.path) && !target_paths.contains(&f.path))
        .filter(|f| (inputs.readable)(&f.path))
        .map(|f| {
            let uses = f
                .tags
                .iter()
                .filter(|t| t.role == Role::Reference && defined.contains(&t.name.as_str()))
                .count();
            let named = stems
                .iter()
                .any(|s| s.len() > 2 && f.path.contains(s.as_str()));
            (uses + if named { 10 } else { 0 }, f.path.as_str())
        })
        .filter(|(score, _)| *score > 0)
        .collect();
    tests.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let cap = bytes(shares.tests);
    let mut used = 0;
    let mut section = String::new();
    let mut shown_tests: Vec<String> = Vec::new();
    for (_, path) in tests.into_iter().take(MAX_TESTS) {
        let Some(text) =
            crate::read_in_worktree(inputs.root, path).and_then(|b| String::from_utf8(b).ok())
        else {
            continue;
        };
        let room = cap.saturating_sub(used);
        if room < 200 {
            break;
        }
        let why = "tests what a task file defines";
        let block = file_block(path, why, &text, room);
        used += block.len();
        out.pieces.push(Piece {
            layer: Layer::Test,
            path: Some(path.to_string()),
            reason: why.into(),
            tokens: estimate_tokens(&block),
        });
        shown_tests.push(path.to_string());
        section.push_str(&block);
    }
    if !section.is_empty() {
        out.text.push_str("# Related tests\n");
        out.text.push_str(&section);
    }
    left_over += cap.saturating_sub(used);

    // Siblings: the definitions of the other source files next to the targets.
    let dirs: Vec<&str> = target_paths
        .iter()
        .map(|p| p.rsplit_once('/').map_or("", |(d, _)| d))
        .collect();
    let cap = bytes(shares.siblings);
    let mut used = 0;
    let mut section = String::new();
    for f in &map.files {
        let dir = f.path.rsplit_once('/').map_or("", |(d, _)| d);
        if !dirs.contains(&dir)
            || target_paths.contains(&f.path)
            || shown_tests.contains(&f.path)
            || !(inputs.readable)(&f.path)
        {
            continue;
        }
        let lines = crate::outline_lines(&f.tags);
        if lines.is_empty() {
            continue;
        }
        let mut block = format!("{}:\n", f.path);
        for l in lines.iter().take(12) {
            block.push_str(l);
        }
        if lines.len() > 12 {
            block.push_str(&format!("    ⋮ {} more\n", lines.len() - 12));
        }
        if used + block.len() > cap {
            continue;
        }
        used += block.len();
        out.pieces.push(Piece {
            layer: Layer::Sibling,
            path: Some(f.path.clone()),
            reason: "next to a task file".into(),
            tokens: estimate_tokens(&block),
        });
        section.push_str(&block);
    }
    if !section.is_empty() {
        out.text
            .push_str("# Next to the task files (definitions as `line│ signature`)\n");
        out.text.push_str(&section);
    }
    left_over += cap.saturating_sub(used);

    // Recent changes to the targets.
    let cap = bytes(shares.recent);
    let mut used = 0;
    let mut section = String::new();
    if !target_paths.is_empty() && cap >= 300 {
        for (commit, subject, patch) in (inputs.recent)(&target_paths, cap) {
            let block = format!("## {commit} {subject}\n```diff\n{patch}```\n");
            if used + block.len() > cap + 200 {
                break;
            }
            used += block.len();
            out.pieces.push(Piece {
                layer: Layer::Recent,
                path: None,
                reason: format!("{commit} {subject}"),
                tokens: estimate_tokens(&block),
            });
            section.push_str(&block);
        }
    }
    if !section.is_empty() {
        out.text.push_str("# Recent changes to the task files\n");
        out.text.push_str(&section);
    }
    left_over += cap.saturating_sub(used);

    // The map, with what the other layers left, without the files already shown whole.
    let map_bytes = bytes(shares.symbols) + left_over;
    let mut weighted = focus_files.clone();
    for t in &target_paths {
        if !weighted.iter().any(|(f, _)| f == t) {
            weighted.push((t.clone(), 1.0));
        }
    }
    let ranked: Vec<_> = map
        .rank_weighted(&weighted, &focus_idents)
        .into_iter()
        .filter(|r| {
            !target_paths.contains(&r.path)
                && !shown_tests.contains(&r.path)
                && (inputs.readable)(&r.path)
        })
        .collect();
    let rendered = map.render_focused(
        &ranked,
        (map_bytes as f64 / BYTES_PER_TOKEN) as usize,
        &names,
    );
    if !rendered.text.is_empty() {
        out.text.push_str(crate::MAP_HEADING);
        for (i, block) in split_blocks(&rendered.text).into_iter().enumerate() {
            let path = block.0;
            let reason = if focus_files.iter().any(|(f, w)| *f == path && *w < 1.0) {
                "its path or names share the prompt's words".to_string()
            } else {
                let defines: Vec<String> = map
                    .files
                    .iter()
                    .find(|f| f.path == path)
                    .map(|f| {
                        names
                            .iter()
                            .filter(|x| {
                                f.tags
                                    .iter()
                                    .any(|t| t.role == Role::Definition && &t.name == *x)
                            })
                            .take(3)
                            .map(|x| format!("`{x}`"))
                            .collect()
                    })
                    .unwrap_or_default();
                if defines.is_empty() {
                    format!("ranked {} by the map", i + 1)
                } else {
                    format!("defines {}, named in the prompt", defines.join(", "))
                }
            };
            out.pieces.push(Piece {
                layer: Layer::Map,
                path: Some(path),
                reason,
                tokens: estimate_tokens(&block.1),
            });
        }
        out.text.push_str(&rendered.text);
    }
    out
}

/// `## path (why)` and the file in a fence, cut to `room` bytes (at a line, saying so).
fn file_block(path: &str, why: &str, text: &str, room: usize) -> String {
    let head = format!("## {path} ({why})\n```\n");
    let room = room.saturating_sub(head.len() + 64);
    let mut body = String::new();
    let mut cut = false;
    for line in text.split_inclusive('\n') {
        if body.len() + line.len() > room {
            cut = true;
            break;
        }
        body.push_str(line);
    }
    if !body.ends_with('\n') && !body.is_empty() {
        body.push('\n');
    }
    let mut block = format!("{head}{body}```\n");
    if cut {
        let shown = body.lines().count();
        block.push_str(&format!(
            "[… cut after line {shown}: read_file {path} with offset={} for the rest]\n",
            shown + 1
        ));
    }
    block
}

/// A path's file name without its extension and a `test_` / `_test` mark.
fn stem(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    let name = name.split('.').next().unwrap_or(name);
    name.trim_start_matches("test_")
        .trim_end_matches("_test")
        .trim_end_matches("_spec")
        .to_lowercase()
}

/// The rendered map's blocks: (path, text).
fn split_blocks(text: &str) -> Vec<(String, String)> {
    let mut blocks: Vec<(String, String)> = Vec::new();
    for line in text.split_inclusive('\n') {
        let head = line.trim_end();
        if !line.starts_with(' ') && head.ends_with(':') {
            blocks.push((head.trim_end_matches(':').to_string(), String::new()));
        }
        if let Some((_, b)) = blocks.last_mut() {
            b.push_str(line);
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::fs;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let w = |rel: &str, text: &str| {
            let path = dir.path().join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        };
        w(
            "shop/pricing.py",
            "TAX = 0.2\n\n\ndef calc_total(lines):\n    return round(sum(lines), 2)\n",
        );
        w(
            "shop/invoice.py",
            "from shop.pricing import calc_total\n\n\ndef invoice(lines):\n    return calc_total(lines)\n",
        );
        w("shop/stock.py", "def reserve(item):\n    return True\n");
        w(
            "tests/test_pricing.py",
            "from shop.pricing import calc_total\n\n\ndef test_total():\n    assert calc_total([1, 2]) == 3\n",
        );
        w(
            "tests/test_stock.py",
            "def test_reserve():\n    assert True\n",
        );
        w("util/log.py", "def log(msg):\n    print(msg)\n");
        dir
    }

    fn inputs<'a>(
        root: &'a Path,
        map: &'a RepoMap,
        prompt: &'a str,
        recent: &'a dyn Fn(&[String], usize) -> Vec<Change>,
    ) -> Inputs<'a> {
        Inputs {
            root,
            map,
            prompt,
            touched: &[],
            readable: &|p: &str| p != "util/log.py",
            recent,
        }
    }

    #[test]
    fn each_layer_holds_what_it_should_within_its_share() {
        let dir = repo();
        let map = RepoMap::build(dir.path());
        let recent = |paths: &[String], _cap: usize| -> Vec<Change> {
            assert_eq!(paths, ["shop/pricing.py"]);
            vec![("abc1234".into(), "pricing: round".into(), "-x\n+y\n".into())]
        };
        let got = assemble(
            &inputs(
                dir.path(),
                &map,
                "Fix the rounding in calc_total()",
                &recent,
            ),
            3_000,
            &Shares::default(),
        );
        let of = |layer: Layer| -> Vec<String> {
            got.pieces
                .iter()
                .filter(|p| p.layer == layer)
                .map(|p| p.path.clone().unwrap_or_else(|| p.reason.clone()))
                .collect()
        };
        assert_eq!(of(Layer::Target), ["shop/pricing.py"]);
        assert_eq!(of(Layer::Test), ["tests/test_pricing.py"]);
        assert_eq!(of(Layer::Sibling), ["shop/invoice.py", "shop/stock.py"]);
        assert_eq!(of(Layer::Recent), ["abc1234 pricing: round"]);
        let map_files = of(Layer::Map);
        assert!(
            !map_files.contains(&"shop/pricing.py".to_string()),
            "{map_files:?}"
        );
        assert!(
            !map_files.contains(&"util/log.py".to_string()),
            "read-denied: {map_files:?}"
        );
        assert!(got.text.starts_with("# Task files\n## shop/pricing.py (defines `calc_total`, named in the prompt)\n```\nTAX = 0.2\n"), "{}", got.text);
        assert!(
            got.text
                .contains("# Related tests\n## tests/test_pricing.py"),
            "{}",
            got.text
        );
        assert!(got.text.contains("# Recent changes to the task files\n## abc1234 pricing: round\n```diff\n-x\n+y\n```\n"), "{}", got.text);
        assert!(
            estimate_tokens(&got.text) <= 3_000 + 100,
            "{}",
            estimate_tokens(&got.text)
        );
    }

    #[test]
    fn a_small_budget_cuts_a_target_and_says_how_to_read_on_and_shares_are_normalised() {
        let dir = repo();
        let big: String = (0..400).map(|i| format!("V{i} = {i}\n")).collect();
        fs::write(
            dir.path().join("shop/pricing.py"),
            format!("{big}def calc_total(x):\n    return x\n"),
        )
        .unwrap();
        let map = RepoMap::build(dir.path());
        let recent = |_: &[String], _: usize| Vec::new();
        let got = assemble(
            &inputs(dir.path(), &map, "Fix calc_total", &recent),
            500,
            &Shares {
                targets: 5.0,
                tests: 0.0,
                siblings: 0.0,
                symbols: 5.0,
                recent: 0.0,
            },
        );
        assert!(got.text.contains("[… cut after line "), "{}", got.text);
        assert!(
            got.text.contains("read_file shop/pricing.py with offset="),
            "{}",
            got.text
        );
        assert!(
            got.pieces.iter().all(|p| p.layer != Layer::Test),
            "{:?}",
            got.pieces
        );
        let target = got
            .pieces
            .iter()
            .find(|p| p.layer == Layer::Target)
            .unwrap();
        assert!(target.tokens <= 300, "{target:?}");
    }
}
