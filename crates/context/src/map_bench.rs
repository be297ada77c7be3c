//! `bosun bench map`: the repository map's cold build (every file parsed), a build from the
//! cache, and the update after one edit, with the map's size, next to a baseline that only
//! reads every file the map reads (the floor any map pays).

use crate::map::RepoMap;
use std::io::{self, Write};
use std::path::Path;
use std::time::Instant;

/// Generates `files` source files (Python, Rust, TypeScript and Go, calling each other) in
/// `dir` when it does not hold them yet.
pub fn generate(dir: &Path, files: usize) -> io::Result<()> {
    let marker = dir.join(format!(".bosun-map-bench-{files}"));
    if marker.exists() {
        return Ok(());
    }
    for i in 0..files {
        let sub = dir.join(format!("pkg{:03}", i / 500));
        std::fs::create_dir_all(&sub)?;
        let next = (i + 1) % files;
        let (name, text) = match i % 4 {
            0 => (
                format!("m{i}.py"),
                format!(
                    "import m{next}\n\n\nclass Box{i}:\n    def size(self):\n        return f{next}(1)\n\n\ndef f{i}(x):\n    \"\"\"Doc.\"\"\"\n    return x + {i}\n"
                ),
            ),
            1 => (
                format!("m{i}.rs"),
                format!(
                    "pub struct Shape{i} {{\n    w: f64,\n}}\n\npub fn f{i}(x: u32) -> u32 {{\n    f{next}(x) + {i}\n}}\n"
                ),
            ),
            2 => (
                format!("m{i}.ts"),
                format!(
                    "export interface Item{i} {{\n  price: number;\n}}\n\nexport function f{i}(x: number): number {{\n  return f{next}(x) + {i};\n}}\n"
                ),
            ),
            _ => (
                format!("m{i}.go"),
                format!(
                    "package pkg\n\ntype T{i} struct {{\n\tN int\n}}\n\nfunc F{i}(x int) int {{\n\treturn F{next}(x) + {i}\n}}\n"
                ),
            ),
        };
        std::fs::write(sub.join(name), text)?;
    }
    std::fs::write(marker, "")?;
    Ok(())
}

/// Prints the figures for the tree at `root` (a scratch journal under `scratch`); `edit`, when
/// given, is a file of the tree to change by one line for the incremental figure (it is put
/// back after).
pub fn run(
    root: &Path,
    scratch: &Path,
    edit: Option<&Path>,
    out: &mut dyn Write,
) -> io::Result<()> {
    std::fs::create_dir_all(scratch)?;
    let db = scratch.join("map-bench.db");
    let _ = std::fs::remove_file(&db);
    let store = bosun_store::Store::open(&db).map_err(io::Error::other)?;
    // Once untimed: the queries compiled, the files in the page cache, the list of files.
    let map = RepoMap::build(root);
    // The baseline: read every file the map reads.
    let t = Instant::now();
    let mut bytes = 0usize;
    for f in &map.files {
        bytes += std::fs::read(root.join(&f.path))
            .map(|b| b.len())
            .unwrap_or(0);
    }
    let read = t.elapsed();
    let t = Instant::now();
    let _ = RepoMap::build(root);
    let parse_only = t.elapsed();
    let t = Instant::now();
    let (_, cold) = RepoMap::build_cached(root, Some(&store));
    let cold_t = t.elapsed();
    let t = Instant::now();
    let (map, warm) = RepoMap::build_cached(root, Some(&store));
    let warm_t = t.elapsed();
    let tags: usize = map.files.iter().map(|f| f.tags.len()).sum();
    let ranked = map.rank(&[], &[]);
    let t = Instant::now();
    let ranked_again = map.rank(&[], &[]);
    let rank_t = t.elapsed();
    let rendered = map.render(&ranked, 4096);
    writeln!(
        out,
        "map of {}: {} files ({} MB), {} tags, rendered top {} files in {} tokens (budget 4096)",
        root.display(),
        map.files.len(),
        bytes / (1 << 20),
        tags,
        rendered.files.len(),
        rendered.tokens
    )?;
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    writeln!(out, "  read every file (baseline):  {:>9.1} ms", ms(read))?;
    writeln!(
        out,
        "  cold build (all parsed):     {:>9.1} ms  ({:.1}× the baseline; {} parsed; {:.1} ms without writing the cache)",
        ms(cold_t),
        ms(cold_t) / ms(read).max(0.001),
        cold.parsed,
        ms(parse_only)
    )?;
    writeln!(
        out,
        "  build from the cache:        {:>9.1} ms  ({:.1}× the baseline; {} cached)",
        ms(warm_t),
        ms(warm_t) / ms(read).max(0.001),
        warm.cached
    )?;
    writeln!(out, "  rank (PageRank):             {:>9.1} ms", ms(rank_t))?;
    drop(ranked_again);
    if let Some(edit) = edit {
        let path = root.join(edit);
        let before = std::fs::read(&path)?;
        let mut changed = before.clone();
        changed.extend_from_slice(b"\n");
        std::fs::write(&path, &changed)?;
        let t = Instant::now();
        let (_, inc) = RepoMap::build_cached(root, Some(&store));
        let inc_t = t.elapsed();
        // What a task does after an edit tool: the edited file (changed again, so it is not
        // in the cache) folded into its map.
        changed.extend_from_slice(b"\n");
        std::fs::write(&path, &changed)?;
        let mut live = map.clone();
        let t = Instant::now();
        let upd = live.update(
            root,
            &[edit.to_string_lossy().replace('\\', "/")],
            Some(&store),
        );
        let upd_t = t.elapsed();
        std::fs::write(&path, &before)?;
        writeln!(
            out,
            "  after one edit, whole tree:  {:>9.1} ms  ({} parsed, {} cached; what a command costs)",
            ms(inc_t),
            inc.parsed,
            inc.cached
        )?;
        writeln!(
            out,
            "  after one edit, that file:   {:>9.1} ms  ({} parsed, {} cached; what an edit tool costs)",
            ms(upd_t),
            upd.parsed,
            upd.cached
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_bench_prints_every_figure_and_puts_the_edited_file_back() {
        let dir = tempfile::tempdir().unwrap();
        generate(dir.path(), 40).unwrap();
        let edited = dir.path().join("pkg000/m0.py");
        let before = std::fs::read(&edited).unwrap();
        let mut out = Vec::new();
        run(
            dir.path(),
            &dir.path().join("scratch"),
            Some(Path::new("pkg000/m0.py")),
            &mut out,
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        for figure in [
            "40 files",
            "read every file (baseline)",
            "cold build (all parsed)",
            "40 parsed",
            "build from the cache",
            "40 cached",
            "after one edit, whole tree",
            "(1 parsed, 39 cached; what a command costs)",
            "after one edit, that file",
            "(1 parsed, 0 cached; what an edit tool costs)",
        ] {
            assert!(text.contains(figure), "{figure} in {text}");
        }
        assert_eq!(std::fs::read(&edited).unwrap(), before);
    }
}
