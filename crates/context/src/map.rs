//! The repository map: each source file's definitions and references (tree-sitter tags from
//! `bosun-syntax`), a graph of files (a file points at the files that define what it uses),
//! ranked by a personalised PageRank towards the files and identifiers a task names, and
//! rendered as the top files' definition signatures within a token budget.
//!
//! **What is left out:** what `.gitignore` (and `.ignore`, git's global excludes) ignores;
//! hidden directories; dependency and build directories (`node_modules`, `vendor`,
//! `third_party`, `target`, `dist`, `build`, virtual environments); files over 512 KB; binary
//! files (a NUL byte in the first 8 KB); generated files (`*.min.js`, `*.pb.go`, `*_pb2.py`,
//! a first line that says "generated" or "DO NOT EDIT"); symlinks. At most 200,000 files.

use bosun_syntax::{Language, Role, Tag};
use std::collections::HashMap;
use std::path::Path;

/// How much of a file's restart share (what the task points at) is added to its rank.
/// (Measured with `bosun bench localise`: 0 → recall@1 0.222, 0.5 → 0.301, 1 → 0.366, 2 → 0.366.)
pub const FOCUS_BLEND: f64 = 1.0;

/// Files bigger than this are left out.
pub const MAP_FILE_MAX_BYTES: u64 = 512 * 1024;
/// At most this many files are read.
pub const MAP_MAX_FILES: usize = 200_000;
/// A name defined in more files than this links none of them.
const MAX_DEFINING: usize = 50;
const SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "vendor",
    "third_party",
    "target",
    "dist",
    "build",
    "venv",
    "__pycache__",
];

/// One file of the map.
#[derive(Debug, Clone, PartialEq)]
pub struct MapFile {
    /// Worktree-relative, `/` separators.
    pub path: String,
    pub tags: Vec<Tag>,
}

/// The tags of a repository's source files.
#[derive(Debug, Clone, Default)]
pub struct RepoMap {
    pub files: Vec<MapFile>,
}

/// A file of the ranking.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedFile {
    pub path: String,
    pub rank: f64,
}

/// The map as rendered: its text, what it holds, and its estimated tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub text: String,
    pub files: Vec<RankedFile>,
    pub tokens: usize,
}

/// What a build did: files in the map, parsed now, taken from the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BuildStats {
    pub files: usize,
    pub parsed: usize,
    pub cached: usize,
}

/// A tag as the cache keeps it.
#[derive(serde::Serialize, serde::Deserialize)]
struct CachedTag {
    n: String,
    d: bool,
    k: String,
    l: u32,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    s: String,
    /// The definition's last line (0: its first).
    #[serde(default, skip_serializing_if = "is_zero")]
    e: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Git's blob id of `bytes` (what `git hash-object` prints).
pub fn blob_id(bytes: &[u8]) -> String {
    let mut h = sha1_smol::Sha1::new();
    h.update(format!("blob {}\0", bytes.len()).as_bytes());
    h.update(bytes);
    h.digest().to_string()
}

impl RepoMap {
    /// Reads `root`'s source files (see the module's rules) and tags them.
    pub fn build(root: &Path) -> RepoMap {
        Self::build_cached(root, None).0
    }

    /// [`RepoMap::build`], with the tags of files whose (blob, language) the store has cached
    /// at [`bosun_syntax::TAGS_VERSION`] taken from it, and the others parsed and cached.
    pub fn build_cached(root: &Path, store: Option<&bosun_store::Store>) -> (RepoMap, BuildStats) {
        Self::build_keeping(root, store, &|_| true)
    }

    /// [`RepoMap::build_cached`] of the files `keep` says yes to (by worktree-relative path):
    /// the others (read-denied ones) are neither read nor parsed nor cached.
    pub fn build_keeping(
        root: &Path,
        store: Option<&bosun_store::Store>,
        keep: &dyn Fn(&str) -> bool,
    ) -> (RepoMap, BuildStats) {
        let mut stats = BuildStats::default();
        let mut files = tag_files(Self::sources(root, keep), store, &mut stats);
        files.sort_by(|a, b| a.path.cmp(&b.path));
        stats.files = files.len();
        (RepoMap { files }, stats)
    }

    /// Brings the map up to date for `paths` (worktree-relative) that changed in `root`: each
    /// is tagged again (through the cache), added when it became a source file the map reads,
    /// and removed when it was deleted or left out now. `.gitignore` is not consulted here: a
    /// file the task creates in an ignored directory stays in the map until the next build.
    pub fn update(
        &mut self,
        root: &Path,
        paths: &[String],
        store: Option<&bosun_store::Store>,
    ) -> BuildStats {
        self.update_keeping(root, paths, store, &|_| true)
    }

    /// [`RepoMap::update`], leaving out (and never reading) what `keep` says no to.
    pub fn update_keeping(
        &mut self,
        root: &Path,
        paths: &[String],
        store: Option<&bosun_store::Store>,
        keep: &dyn Fn(&str) -> bool,
    ) -> BuildStats {
        let mut stats = BuildStats::default();
        let mut sources = Vec::new();
        for rel in paths {
            let rel = rel.trim_start_matches("./");
            self.files.retain(|f| f.path != rel);
            if !keep(rel) {
                continue;
            }
            if let Some((lang, bytes)) = source_at(root, rel) {
                sources.push((rel.to_string(), lang, bytes));
            }
        }
        self.files.extend(tag_files(sources, store, &mut stats));
        self.files.sort_by(|a, b| a.path.cmp(&b.path));
        stats.files = self.files.len();
        stats
    }

    /// Drops the files `keep` says no to (read-denied ones).
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        self.files.retain(|f| keep(&f.path));
    }

    /// Up to three defined names near `x`: containing it or contained in it, or at most two
    /// edits away, case-insensitively.
    pub fn nearest_names(&self, x: &str) -> Vec<String> {
        let lower = x.to_lowercase();
        let mut out: Vec<String> = Vec::new();
        for t in self.files.iter().flat_map(|f| f.tags.iter()) {
            if t.role != Role::Definition || out.contains(&t.name) {
                continue;
            }
            let name = t.name.to_lowercase();
            let near = (name.len() > 2 && (name.contains(&lower) || lower.contains(&name)))
                || edits(&name, &lower) <= 2;
            if near {
                out.push(t.name.clone());
                if out.len() == 3 {
                    break;
                }
            }
        }
        out
    }

    /// The source files the map reads, with their language and bytes.
    fn sources(root: &Path, keep: &dyn Fn(&str) -> bool) -> Vec<(String, Language, Vec<u8>)> {
        let mut files = Vec::new();
        let walker = ignore::WalkBuilder::new(root)
            .hidden(true)
            .git_ignore(true)
            .git_global(true)
            .git_exclude(true)
            .require_git(false)
            .follow_links(false)
            .filter_entry(|e| {
                !(e.file_type().is_some_and(|t| t.is_dir())
                    && skipped_dir(&e.file_name().to_string_lossy()))
            })
            .build();
        for entry in walker.flatten() {
            if files.len() >= MAP_MAX_FILES {
                break;
            }
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(root) else {
                continue;
            };
            let rel = rel.to_string_lossy().replace('\\', "/");
            if unshowable(&rel) || !keep(&rel) {
                continue;
            }
            if let Some((lang, bytes)) = source_file(entry.path(), &rel) {
                files.push((rel, lang, bytes));
            }
        }
        files
    }

    /// The files ranked by a personalised PageRank towards `focus_files` and the files that
    /// define `focus_idents` (uniform when there is no focus): [`RepoMap::rank_weighted`] with
    /// every focus at weight 1.
    pub fn rank(&self, focus_files: &[String], focus_idents: &[String]) -> Vec<RankedFile> {
        let one = |xs: &[String]| xs.iter().map(|x| (x.clone(), 1.0)).collect::<Vec<_>>();
        self.rank_weighted(&one(focus_files), &one(focus_idents))
    }

    /// The files ranked by a personalised PageRank. An edge goes from a file to each file
    /// defining a name it references, weighted by how often it does; a name the task names
    /// weighs up to 10× (by its focus weight), a private one (`_x`) or one defined in more than
    /// five files 0.1×, one defined in more than 50 links nothing. The random walk restarts at
    /// the focus files and the files defining the focus names, by weight; the score is the
    /// walk's rank plus [`FOCUS_BLEND`] of the restart share, so a file the task points at
    /// keeps its place rather than passing it all to what it uses. Highest first; ties by path.
    pub fn rank_weighted(
        &self,
        focus_files: &[(String, f64)],
        focus_idents: &[(String, f64)],
    ) -> Vec<RankedFile> {
        let n = self.files.len();
        if n == 0 {
            return Vec::new();
        }
        let index: HashMap<&str, usize> = self
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.path.as_str(), i))
            .collect();
        let mut defined_in: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, f) in self.files.iter().enumerate() {
            for t in f.tags.iter().filter(|t| t.role == Role::Definition) {
                // Files come in order: a file already listed is the last one (a linear
                // `contains` made a name defined in 25,000 files quadratic).
                let files = defined_in.entry(t.name.as_str()).or_default();
                if files.last() != Some(&i) {
                    files.push(i);
                }
            }
        }
        // Weighted edges, per source file.
        let mut edges: Vec<HashMap<usize, f64>> = vec![HashMap::new(); n];
        for (i, f) in self.files.iter().enumerate() {
            let mut counts: HashMap<&str, usize> = HashMap::new();
            for t in f.tags.iter().filter(|t| t.role == Role::Reference) {
                *counts.entry(t.name.as_str()).or_default() += 1;
            }
            for (name, count) in counts {
                // A name defined in more than MAX_DEFINING files (`new`, `fmt`) says nothing
                // about which file is meant.
                let Some(defs) = defined_in.get(name).filter(|d| d.len() <= MAX_DEFINING) else {
                    continue;
                };
                let mut weight = (count as f64).sqrt();
                if let Some((_, w)) = focus_idents.iter().find(|(x, _)| x == name) {
                    weight *= 1.0 + 9.0 * w.clamp(0.0, 1.0);
                }
                if name.starts_with('_') || defs.len() > 5 {
                    weight *= 0.1;
                }
                for &d in defs {
                    if d != i {
                        *edges[i].entry(d).or_default() += weight / defs.len() as f64;
                    }
                }
            }
        }
        // Personalisation: the focus files and the files defining the focus identifiers.
        let mut personal = vec![0.0; n];
        for (f, w) in focus_files {
            if let Some(&i) = index.get(f.as_str()) {
                personal[i] += w;
            }
        }
        for (x, w) in focus_idents {
            if let Some(defs) = defined_in.get(x.as_str()) {
                for &d in defs {
                    personal[d] += w;
                }
            }
        }
        let focused = personal.iter().any(|p| *p > 0.0);
        let total: f64 = personal.iter().sum();
        if total == 0.0 {
            personal.iter_mut().for_each(|p| *p = 1.0 / n as f64);
        } else {
            personal.iter_mut().for_each(|p| *p /= total);
        }
        let edges: Vec<Vec<(usize, f64)>> =
            edges.into_iter().map(|e| e.into_iter().collect()).collect();
        let out_weight: Vec<f64> = edges
            .iter()
            .map(|e| e.iter().map(|(_, w)| w).sum())
            .collect();
        let damping = 0.85;
        let mut rank = personal.clone();
        for _ in 0..40 {
            let dangling: f64 = (0..n)
                .filter(|&i| out_weight[i] == 0.0)
                .map(|i| rank[i])
                .sum();
            let mut next: Vec<f64> = personal
                .iter()
                .map(|p| (1.0 - damping) * p + damping * dangling * p)
                .collect();
            for (i, e) in edges.iter().enumerate() {
                if out_weight[i] == 0.0 {
                    continue;
                }
                let share = damping * rank[i] / out_weight[i];
                for &(d, w) in e {
                    next[d] += share * w;
                }
            }
            rank = next;
        }
        let blend = if focused { FOCUS_BLEND } else { 0.0 };
        let mut ranked: Vec<RankedFile> = self
            .files
            .iter()
            .zip(rank)
            .zip(&personal)
            .map(|((f, rank), p)| RankedFile {
                path: f.path.clone(),
                rank: rank + blend * p,
            })
            .collect();
        ranked.sort_by(|a, b| b.rank.total_cmp(&a.rank).then_with(|| a.path.cmp(&b.path)));
        ranked
    }

    /// The ranked files' definitions as signatures within their enclosing scopes (`path:` then
    /// `  line│ signature` lines, a method indented under its class), in rank order, within
    /// `budget_tokens` (estimated as bytes / 3.5). A file that does not fit whole shows its
    /// first definitions and how many more it has, when that much fits.
    pub fn render(&self, ranked: &[RankedFile], budget_tokens: usize) -> Rendered {
        self.render_focused(ranked, budget_tokens, &[])
    }

    /// [`RepoMap::render`], where a file that does not fit whole shows the definitions named
    /// `focus` first (and the ones enclosing them), then its others in order.
    pub fn render_focused(
        &self,
        ranked: &[RankedFile],
        budget_tokens: usize,
        focus: &[String],
    ) -> Rendered {
        let by_path: HashMap<&str, &MapFile> =
            self.files.iter().map(|f| (f.path.as_str(), f)).collect();
        let mut text = String::new();
        let mut files = Vec::new();
        for r in ranked {
            let Some(f) = by_path.get(r.path.as_str()) else {
                continue;
            };
            let entries = outline_entries(&f.tags);
            if entries.is_empty() {
                continue;
            }
            let head = format!("{}:\n", f.path);
            let left = budget_tokens.saturating_sub(estimate_tokens(&text));
            let whole: String = entries.iter().map(|e| e.text.as_str()).collect();
            if estimate_tokens(&head) + estimate_tokens(&whole) <= left {
                text.push_str(&head);
                text.push_str(&whole);
                files.push(r.clone());
                continue;
            }
            // Part of the file: the focused definitions and what encloses them first, then
            // the others in order, as many as fit with the header and the count.
            let mut order: Vec<usize> = Vec::new();
            for (i, e) in entries.iter().enumerate() {
                if focus.contains(&e.name) {
                    for &p in &e.parents {
                        if !order.contains(&p) {
                            order.push(p);
                        }
                    }
                    if !order.contains(&i) {
                        order.push(i);
                    }
                }
            }
            for i in 0..entries.len() {
                if !order.contains(&i) {
                    order.push(i);
                }
            }
            let mut chosen: Vec<usize> = Vec::new();
            let mut used = estimate_tokens(&head);
            for i in order {
                let more = format!("    ⋮ {} more\n", entries.len() - chosen.len() - 1);
                let cost = estimate_tokens(&entries[i].text);
                if used + cost + estimate_tokens(&more) > left {
                    break;
                }
                used += cost;
                chosen.push(i);
            }
            if chosen.len() >= 2 || (chosen.len() == 1 && !focus.is_empty()) {
                chosen.sort_unstable();
                let mut block = head;
                let mut last: Option<usize> = None;
                for &i in &chosen {
                    if last.is_some_and(|l| i > l + 1) {
                        block.push_str("    ⋮\n");
                    }
                    block.push_str(&entries[i].text);
                    last = Some(i);
                }
                block.push_str(&format!("    ⋮ {} more\n", entries.len() - chosen.len()));
                text.push_str(&block);
                files.push(r.clone());
            }
        }
        let tokens = estimate_tokens(&text);
        Rendered {
            text,
            files,
            tokens,
        }
    }

    /// The file's definitions as the map shows them (signatures within their scopes), or None
    /// when the map does not hold it.
    pub fn outline(&self, path: &str) -> Option<String> {
        let f = self.files.iter().find(|f| f.path == path)?;
        Some(outline_lines(&f.tags).concat())
    }
}

/// A file's definitions in source order as `  line│ signature` lines, each indented under the
/// definitions that enclose it.
pub fn outline_lines(tags: &[Tag]) -> Vec<String> {
    outline_entries(tags).into_iter().map(|e| e.text).collect()
}

/// One line of a file's outline: the definition's name, its line as shown, and the indices of
/// the lines that enclose it.
struct OutlineEntry {
    name: String,
    text: String,
    parents: Vec<usize>,
}

fn outline_entries(tags: &[Tag]) -> Vec<OutlineEntry> {
    let mut defs: Vec<&Tag> = tags
        .iter()
        .filter(|t| t.role == Role::Definition && !t.signature.is_empty())
        .collect();
    defs.sort_by_key(|t| (t.line, std::cmp::Reverse(t.end_line)));
    // (end line, index of its entry) of the definitions still open.
    let mut open: Vec<(u32, usize)> = Vec::new();
    let mut out: Vec<OutlineEntry> = Vec::new();
    let mut last_line = 0;
    for t in defs {
        while open.last().is_some_and(|(end, _)| *end < t.line) {
            open.pop();
        }
        // The same line twice (a name captured by two patterns) is shown once.
        if !out.is_empty() && last_line == t.line {
            continue;
        }
        last_line = t.line;
        let indent = "    ".repeat(open.len().min(6));
        out.push(OutlineEntry {
            name: t.name.clone(),
            text: format!("{:>5}│ {indent}{}\n", t.line, cut(&t.signature, 160)),
            parents: open.iter().map(|(_, i)| *i).collect(),
        });
        if t.end_line > t.line {
            open.push((t.end_line, out.len() - 1));
        }
    }
    out
}

/// Tokens of `text`, estimated as bytes / 3.5 (until a provider's tokenizer counts them).
pub fn estimate_tokens(text: &str) -> usize {
    (text.len() as f64 / 3.5).ceil() as usize
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push('…');
    out
}

fn generated_name(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.contains(".min.")
        || name.ends_with(".pb.go")
        || name.ends_with("_pb2.py")
        || name.ends_with(".generated.ts")
        || name.ends_with(".d.ts")
}

/// A path the map cannot show as it is: a control character (a newline) in a name would
/// write lines of its own into the request.
pub(crate) fn unshowable(rel: &str) -> bool {
    rel.chars().any(char::is_control)
}

/// Secrets in signatures (`API_KEY = "sk-…"`) are replaced before the map caches or shows
/// them: the known formats, and the values of this process's secret-looking variables.
fn redactor() -> &'static bosun_policy::redact::Redactor {
    static REDACTOR: std::sync::OnceLock<bosun_policy::redact::Redactor> =
        std::sync::OnceLock::new();
    REDACTOR.get_or_init(|| {
        let env: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        bosun_policy::redact::Redactor::new(&env)
    })
}

/// A directory the map never enters (besides hidden ones).
fn skipped_dir(name: &str) -> bool {
    SKIPPED_DIRS.contains(&name) || name.ends_with(".egg-info")
}

/// `rel` in `root` when it is a file the map reads: no hidden or skipped directory on its way,
/// not a symlink, and what [`source_file`] accepts.
fn source_at(root: &Path, rel: &str) -> Option<(Language, Vec<u8>)> {
    if unshowable(rel) {
        return None;
    }
    let parts: Vec<&str> = rel.split('/').collect();
    let (name, dirs) = parts.split_last()?;
    if name.starts_with('.')
        || dirs
            .iter()
            .any(|d| d.is_empty() || *d == ".." || d.starts_with('.') || skipped_dir(d))
    {
        return None;
    }
    let path = root.join(rel);
    if !std::fs::symlink_metadata(&path).ok()?.is_file() {
        return None;
    }
    source_file(&path, rel)
}

/// The language and bytes of the file at `path` (shown as `rel`) when the map reads it: a
/// language with tags, not generated, at most [`MAP_FILE_MAX_BYTES`], not binary.
fn source_file(path: &Path, rel: &str) -> Option<(Language, Vec<u8>)> {
    let lang = Language::for_path(rel)?;
    if !bosun_syntax::has_tags(lang) || generated_name(rel) {
        return None;
    }
    if std::fs::metadata(path).ok()?.len() > MAP_FILE_MAX_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    if bytes.iter().take(8192).any(|b| *b == 0) || generated_header(&bytes) {
        return None;
    }
    Some((lang, bytes))
}

/// Tags `sources`, taking from `store` what it has cached at [`bosun_syntax::TAGS_VERSION`]
/// and caching what was parsed.
fn tag_files(
    sources: Vec<(String, Language, Vec<u8>)>,
    store: Option<&bosun_store::Store>,
    stats: &mut BuildStats,
) -> Vec<MapFile> {
    let keys: Vec<(String, String)> = sources
        .iter()
        .map(|(_, lang, bytes)| (blob_id(bytes), lang.name().to_string()))
        .collect();
    let version = bosun_syntax::TAGS_VERSION;
    let cached = store
        .filter(|_| !keys.is_empty())
        .and_then(|s| s.cached_tags(&keys, version).ok())
        .unwrap_or_default();
    let mut fresh = Vec::new();
    let mut files = Vec::new();
    for ((rel, lang, bytes), (blob, language)) in sources.into_iter().zip(keys) {
        let from_cache = cached
            .get(&blob)
            .and_then(|json| serde_json::from_str::<Vec<CachedTag>>(json).ok());
        let tags = match from_cache {
            Some(tags) => {
                stats.cached += 1;
                tags.into_iter()
                    .map(|t| Tag {
                        end_line: t.e.max(t.l),
                        name: t.n,
                        role: if t.d {
                            Role::Definition
                        } else {
                            Role::Reference
                        },
                        kind: t.k,
                        line: t.l,
                        signature: t.s,
                    })
                    .collect()
            }
            None => {
                let Some(mut tags) = bosun_syntax::tags(lang, &bytes) else {
                    continue;
                };
                for t in tags.iter_mut().filter(|t| !t.signature.is_empty()) {
                    let redacted = redactor().redact(&t.signature);
                    if redacted.count > 0 {
                        t.signature = redacted.text.into_owned();
                    }
                }
                stats.parsed += 1;
                let kept: Vec<CachedTag> = tags
                    .iter()
                    .map(|t| CachedTag {
                        n: t.name.clone(),
                        d: t.role == Role::Definition,
                        k: t.kind.clone(),
                        l: t.line,
                        s: t.signature.clone(),
                        e: if t.end_line > t.line { t.end_line } else { 0 },
                    })
                    .collect();
                if let Ok(json) = serde_json::to_string(&kept) {
                    fresh.push((blob, language, json));
                }
                tags
            }
        };
        files.push(MapFile { path: rel, tags });
    }
    if let Some(store) = store.filter(|_| !fresh.is_empty()) {
        // A cache that cannot be written costs a parse next time, nothing more.
        let _ = store.cache_tags(&fresh, version);
    }
    files
}

/// The Levenshtein distance of two short strings (by chars); `usize::MAX` past two apart in
/// length.
fn edits(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > 2 {
        return usize::MAX;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut row = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            row[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(row[j] + 1);
        }
        prev = row;
    }
    prev[b.len()]
}

fn generated_header(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(512)];
    let first = String::from_utf8_lossy(head)
        .lines()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    first.contains("generated") || first.contains("do not edit")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::fs;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let w = |rel: &str, text: &str| {
            let path = p.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        };
        w(
            "pricing.py",
            "TAX = 0.2\n\n\ndef calc_total(lines):\n    return sum(lines)\n",
        );
        w(
            "invoice.py",
            "from pricing import calc_total\n\n\ndef invoice(lines):\n    return calc_total(lines)\n",
        );
        w(
            "report.py",
            "from pricing import calc_total\n\n\ndef report(days):\n    return [calc_total(d) for d in days]\n",
        );
        w("util.py", "def helper():\n    return 1\n");
        w("node_modules/x/index.js", "function vendored() {}\n");
        w(
            "gen.py",
            "# Code generated by protoc. DO NOT EDIT.\ndef gen():\n    pass\n",
        );
        w("app.min.js", "function m(){}\n");
        w("blob.py", "def x():\n    pass\n\0\0\0");
        w("ignored/skip.py", "def skip():\n    pass\n");
        w(".gitignore", "ignored/\n");
        w("src/lib.rs", "pub fn calc_total() -> u32 {\n    0\n}\n");
        dir
    }

    #[test]
    fn the_cache_is_shared_across_worktrees_and_only_changed_blobs_are_parsed_again() {
        let home = tempfile::tempdir().unwrap();
        let store = bosun_store::Store::open(&home.path().join("bosun.db")).unwrap();
        let one = repo();
        let (first, stats) = RepoMap::build_cached(one.path(), Some(&store));
        assert_eq!((stats.parsed, stats.cached), (5, 0), "{stats:?}");
        // Another worktree with the same files: nothing parsed, the same map.
        let two = repo();
        let (second, stats) = RepoMap::build_cached(two.path(), Some(&store));
        assert_eq!((stats.parsed, stats.cached), (0, 5), "{stats:?}");
        assert_eq!(first.files, second.files);
        // One file changed: that one is parsed.
        fs::write(two.path().join("util.py"), "def helper2():\n    return 2\n").unwrap();
        let (third, stats) = RepoMap::build_cached(two.path(), Some(&store));
        assert_eq!((stats.parsed, stats.cached), (1, 4), "{stats:?}");
        let util = third.files.iter().find(|f| f.path == "util.py").unwrap();
        assert_eq!(util.tags[0].name, "helper2");
        assert_eq!(
            blob_id(b"hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
    }

    #[test]
    fn a_file_shown_in_part_shows_the_named_definition_within_its_scope() {
        let dir = tempfile::tempdir().unwrap();
        let mut big = String::new();
        for i in 0..300 {
            big.push_str(&format!("def func_{i}(x):\n    return x\n\n\n"));
        }
        big.push_str("class Tail:\n    def wag(self):\n        return 1\n");
        fs::write(dir.path().join("big.py"), &big).unwrap();
        fs::write(dir.path().join("a\nb.py"), "def injected():\n    pass\n").unwrap();
        let map = RepoMap::build(dir.path());
        // A name with a newline would write its own lines into the request: left out.
        assert_eq!(
            map.files.len(),
            1,
            "{:?}",
            map.files.iter().map(|f| &f.path).collect::<Vec<_>>()
        );
        let ranked = map.rank(&[], &["wag".to_string()]);
        let plain = map.render(&ranked, 100);
        assert!(!plain.text.contains("wag"), "{}", plain.text);
        let focused = map.render_focused(&ranked, 100, &["wag".to_string()]);
        assert!(
            focused
                .text
                .contains("│ class Tail:\n 1202│     def wag(self):\n"),
            "{}",
            focused.text
        );
        assert!(
            focused.text.starts_with("big.py:\n    1│ def func_0(x):\n"),
            "{}",
            focused.text
        );
        assert!(focused.text.contains("    ⋮\n"), "{}", focused.text);
        assert!(focused.tokens <= 100, "{focused:?}");
    }

    #[test]
    fn the_map_leaves_out_what_is_ignored_vendored_generated_and_binary() {
        let dir = repo();
        let map = RepoMap::build(dir.path());
        let paths: Vec<&str> = map.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "invoice.py",
                "pricing.py",
                "report.py",
                "src/lib.rs",
                "util.py"
            ]
        );
    }

    #[test]
    fn the_file_defining_what_the_task_names_ranks_first_and_the_map_fits_its_budget() {
        let dir = repo();
        let map = RepoMap::build(dir.path());
        let ranked = map.rank(&[], &["calc_total".to_string()]);
        assert!(
            ranked[0].path == "pricing.py" || ranked[0].path == "src/lib.rs",
            "{ranked:?}"
        );
        // Without a focus, the file everything uses ranks first.
        let ranked = map.rank(&[], &[]);
        assert_eq!(ranked[0].path, "pricing.py", "{ranked:?}");
        // A focus file ranks first.
        let ranked = map.rank(&["util.py".to_string()], &[]);
        assert_eq!(ranked[0].path, "util.py", "{ranked:?}");
        let all = map.render(&map.rank(&[], &[]), 10_000);
        assert!(
            all.text
                .starts_with("pricing.py:\n    1│ TAX = 0.2\n    4│ def calc_total(lines):\n"),
            "{}",
            all.text
        );
        assert_eq!(all.files.len(), 5);
        let small = map.render(&map.rank(&[], &[]), 20);
        assert!(small.tokens <= 20, "{small:?}");
        assert!(
            small.files.len() < 5 && !small.files.is_empty(),
            "{small:?}"
        );
    }
}
