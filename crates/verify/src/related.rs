//! The tests related to the files a task changed, as a narrowed command that runs first (the
//! full command follows): test files named after a changed module, test files that import it,
//! and changed files that are tests themselves.
//!
//! | runner | narrowed command |
//! |---|---|
//! | pytest | `python3 -m pytest 'tests/test_calc.py'` |
//! | unittest | `python3 -m unittest tests.test_calc` (every directory down to the file has `__init__.py`), else `python3 -m unittest discover -s 'tests' -p 'test_calc.py'` |
//! | node --test | `node --test 'test/calc.test.js'` |
//! | cargo test | `cargo test calc::` for `src/calc.rs` (`-p <crate>` in a workspace member), `cargo test --test calc` for `tests/calc.rs` |
//! | go test | `go test './pkg/calc'`: the package directories of the changed `.go` files |
//!
//! Only a plain runner command is narrowed (its own words and `-flags`); one with positional
//! arguments or shell operators is not (there is no telling what its arguments select).

use crate::files::shell_quote;
use crate::re;
use crate::runner::{Runner, parse};
use bosun_protocol::CheckSpec;
use regex::Regex;
use std::path::Path;
use std::sync::LazyLock;

/// Directories never searched for tests.
const SKIP_DIRS: &[&str] = &[
    "node_modules",
    "target",
    "venv",
    "__pycache__",
    "dist",
    "build",
    "vendor",
];
const MAX_DEPTH: usize = 8;
const MAX_ENTRIES: usize = 20_000;
/// Test files larger than this are not scanned for imports.
const MAX_SCAN_BYTES: u64 = 512 * 1024;

/// Is a test file; is named after a source; imports a source (text, test path, source path).
type Matchers = (
    fn(&str) -> bool,
    fn(&str, &str) -> bool,
    fn(&str, &str, &str) -> bool,
);

/// The command running only the tests related to `changed` (paths relative to `root`), or
/// `None` when none are found or `spec`'s command cannot be narrowed. `npm test` whose script
/// is `node --test` is narrowed as `node --test`.
pub fn related_command(
    spec: &CheckSpec,
    runner: Runner,
    changed: &[String],
    root: &Path,
) -> Option<String> {
    let command = match parse(&spec.command) {
        Some(p) if p.runner == runner => spec.command.clone(),
        _ => crate::runner::npm_script(&spec.command, root)
            .filter(|s| parse(s).is_some_and(|p| p.runner == runner))?,
    };
    let parsed = parse(&command)?;
    let changed: Vec<String> = changed
        .iter()
        .map(|c| c.trim_start_matches("./").to_string())
        .filter(|c| !c.is_empty() && !c.starts_with('/') && !c.split('/').any(|p| p == ".."))
        .collect();
    if changed.is_empty() {
        return None;
    }
    match runner {
        Runner::Pytest | Runner::Unittest | Runner::NodeTest => {
            let (is_test, named, imports): Matchers = if runner == Runner::NodeTest {
                (is_js_test, js_named_after, js_imports)
            } else {
                (is_py_test, py_named_after, py_imports)
            };
            if !plain_flags(&parsed.args, runner) {
                return None;
            }
            let tests = related_tests(root, &changed, is_test, named, imports);
            if tests.is_empty() {
                return None;
            }
            let prefix = words(&parsed.prefix, &parsed.args);
            Some(if runner == Runner::Unittest {
                unittest_command(&parsed.prefix, root, &tests)
            } else {
                let files: Vec<String> = tests.iter().map(|t| shell_quote(t)).collect();
                format!("{prefix} {}", files.join(" "))
            })
        }
        Runner::CargoTest => cargo_command(&parsed.prefix, &parsed.args, &changed, root),
        Runner::GoTest => go_command(&parsed.prefix, &parsed.args, &changed),
    }
}

fn words(prefix: &[String], args: &[String]) -> String {
    prefix
        .iter()
        .chain(args.iter())
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Only `-flags` follow the runner (and, for unittest, its own `discover -s DIR`).
fn plain_flags(args: &[String], runner: Runner) -> bool {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match (runner, args.as_slice()) {
        (Runner::Unittest, ["discover", rest @ ..]) => rest
            .chunks(2)
            .all(|pair| matches!(pair, ["-s" | "-t", _] | ["-v" | "-q"])),
        _ => args
            .iter()
            .all(|a| a.starts_with('-') && !a.contains("...")),
    }
}

fn related_tests(
    root: &Path,
    changed: &[String],
    is_test: fn(&str) -> bool,
    named_after: fn(&str, &str) -> bool,
    imports: fn(&str, &str, &str) -> bool,
) -> Vec<String> {
    let mut tests: Vec<String> = changed
        .iter()
        .filter(|c| is_test(c) && crate::discover::inside(root, c).is_some_and(|p| p.is_file()))
        .cloned()
        .collect();
    let sources: Vec<&String> = changed.iter().filter(|c| !is_test(c)).collect();
    if sources.is_empty() {
        return tests;
    }
    for candidate in test_files(root, is_test) {
        if tests.contains(&candidate) {
            continue;
        }
        let text = std::fs::metadata(root.join(&candidate))
            .ok()
            .filter(|m| m.len() <= MAX_SCAN_BYTES)
            .and_then(|_| std::fs::read_to_string(root.join(&candidate)).ok())
            .unwrap_or_default();
        if sources
            .iter()
            .any(|s| named_after(&candidate, s) || imports(&text, &candidate, s))
        {
            tests.push(candidate);
        }
    }
    tests
}

/// Test files under `root`, relative, sorted; hidden and build directories are skipped and
/// symlinks are not followed.
fn test_files(root: &Path, is_test: fn(&str) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    let mut seen = 0;
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                break;
            }
            let name = entry.file_name().to_string_lossy().to_string();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                if depth < MAX_DEPTH
                    && !name.starts_with('.')
                    && !SKIP_DIRS.contains(&name.as_str())
                {
                    stack.push((path, depth + 1));
                }
            } else if kind.is_file()
                && let Ok(rel) = path.strip_prefix(root)
            {
                let rel = rel.to_string_lossy().to_string();
                if is_test(&rel) {
                    out.push(rel);
                }
            }
        }
    }
    out.sort();
    out
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `calc.py` for `src/pkg/calc.py`; `pkg` for `pkg/__init__.py`.
fn py_module(path: &str) -> Option<&str> {
    let stem = file_name(path).strip_suffix(".py")?;
    if stem == "__init__" {
        let dir = path.rsplit_once('/')?.0;
        return Some(file_name(dir));
    }
    Some(stem)
}

fn is_py_test(path: &str) -> bool {
    let name = file_name(path);
    name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
}

fn py_named_after(test: &str, source: &str) -> bool {
    let Some(module) = py_module(source) else {
        return false;
    };
    let name = file_name(test);
    name == format!("test_{module}.py") || name == format!("{module}_test.py")
}

/// `import calc`, `import pkg.calc as c`, `from calc import add`, `from pkg import calc`,
/// `from .calc import add`, `from . import calc`.
fn py_imports(text: &str, _test: &str, source: &str) -> bool {
    static IMPORT: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*import\s+(.+)$"));
    static FROM: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*from\s+(\S+)\s+import\s+\(?([^)#]+)"));
    let Some(module) = py_module(source) else {
        return false;
    };
    let names_it = |dotted: &str| dotted.trim_start_matches('.').rsplit('.').next() == Some(module);
    text.lines().any(|line| {
        if let Some(c) = IMPORT.captures(line) {
            return c[1]
                .split(',')
                .filter_map(|part| part.split_whitespace().next())
                .any(names_it);
        }
        if let Some(c) = FROM.captures(line) {
            let from = &c[1];
            return (!from.trim_start_matches('.').is_empty() && names_it(from))
                || c[2]
                    .split(',')
                    .filter_map(|part| part.split_whitespace().next())
                    .any(|name| name == module);
        }
        false
    })
}

const JS_EXTENSIONS: &[&str] = &["js", "mjs", "cjs", "ts", "mts", "cts", "jsx", "tsx"];

fn js_stem(path: &str) -> Option<(&str, &str)> {
    let name = file_name(path);
    let (stem, ext) = name.rsplit_once('.')?;
    JS_EXTENSIONS.contains(&ext).then_some((stem, ext))
}

/// What `node --test` runs by default: `*.test.js`, `*-test.js`, `*_test.js`, `test-*.js`,
/// `test.js`, and any script under a `test/` directory.
fn is_js_test(path: &str) -> bool {
    let Some((stem, _)) = js_stem(path) else {
        return false;
    };
    stem.ends_with(".test")
        || stem.ends_with(".spec")
        || stem.ends_with("-test")
        || stem.ends_with("_test")
        || stem.starts_with("test-")
        || stem == "test"
        || path.starts_with("test/")
        || path.contains("/test/")
}

fn js_named_after(test: &str, source: &str) -> bool {
    let (Some((module, _)), Some((stem, _))) = (js_stem(source), js_stem(test)) else {
        return false;
    };
    [".test", ".spec", "-test", "_test"]
        .iter()
        .any(|s| stem.strip_suffix(s) == Some(module))
        || stem.strip_prefix("test-") == Some(module)
        || (stem == module && (test.starts_with("test/") || test.contains("/test/")))
}

/// `require('../calc')`, `import … from './calc.js'`, `import('../src/calc')`: a relative
/// specifier that resolves to the changed file (with or without its extension, or its
/// directory's `index`).
fn js_imports(text: &str, test: &str, source: &str) -> bool {
    static SPEC: LazyLock<Regex> = LazyLock::new(|| {
        re(r#"(?:require\s*\(\s*|from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}/[^'"]+)['"]"#)
    });
    let dir = test.rsplit_once('/').map_or("", |(d, _)| d);
    let source_bare = strip_js_ext(source);
    let source_index = source_bare.strip_suffix("/index");
    SPEC.captures_iter(text).any(|c| {
        let resolved = join_relative(dir, &c[1]);
        let bare = strip_js_ext(&resolved);
        bare == source_bare || Some(bare) == source_index
    })
}

fn strip_js_ext(path: &str) -> &str {
    match path.rsplit_once('.') {
        Some((bare, ext)) if JS_EXTENSIONS.contains(&ext) && !bare.ends_with('/') => bare,
        _ => path,
    }
}

/// `dir` joined with a `./` or `../` specifier, normalised.
fn join_relative(dir: &str, spec: &str) -> String {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in spec.split('/') {
        match part {
            "." | "" => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// Dotted modules where every directory down to the test has `__init__.py`, `discover` for
/// the others, one after the other.
fn unittest_command(prefix: &[String], root: &Path, tests: &[String]) -> String {
    let base = prefix.join(" ");
    let mut dotted = Vec::new();
    let mut discover = Vec::new();
    for test in tests {
        let (dir, name) = test.rsplit_once('/').unwrap_or(("", test.as_str()));
        let packaged = {
            let mut d = String::new();
            dir.is_empty()
                || dir.split('/').all(|part| {
                    d = if d.is_empty() {
                        part.to_string()
                    } else {
                        format!("{d}/{part}")
                    };
                    root.join(&d).join("__init__.py").is_file()
                })
        };
        let module = test.trim_end_matches(".py").replace('/', ".");
        let identifier = module
            .split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'));
        if packaged && identifier {
            dotted.push(module);
        } else {
            let dir = if dir.is_empty() { "." } else { dir };
            discover.push(format!(
                "{base} discover -s {} -p {}",
                shell_quote(dir),
                shell_quote(name)
            ));
        }
    }
    let mut commands = Vec::new();
    if !dotted.is_empty() {
        commands.push(format!("{base} {}", dotted.join(" ")));
    }
    commands.extend(discover);
    commands.join(" && ")
}

/// `cargo test [-p crate] mod::path::` for changed sources, `cargo test --test name` for
/// changed integration tests and those named after a changed module.
fn cargo_command(
    prefix: &[String],
    args: &[String],
    changed: &[String],
    root: &Path,
) -> Option<String> {
    if !args.iter().all(|a| a.starts_with('-')) || args.iter().any(|a| a == "--") {
        return None;
    }
    let workspace_wide = args.iter().any(|a| a == "--workspace" || a == "--all");
    let mut commands: Vec<String> = Vec::new();
    let mut filters: Vec<(Option<String>, String)> = Vec::new();
    let mut integration: Vec<(Option<String>, String)> = Vec::new();
    for path in changed {
        if !path.ends_with(".rs") {
            continue;
        }
        let Some((krate_dir, within)) = crate_of(root, path) else {
            continue;
        };
        let package = if krate_dir.is_empty() || workspace_wide {
            None
        } else {
            package_name(root, &krate_dir)
        };
        let within_rs = within.trim_end_matches(".rs");
        if let Some(test) = within_rs.strip_prefix("tests/") {
            if !test.contains('/') {
                integration.push((package, test.to_string()));
            }
            continue;
        }
        let Some(module) = within_rs.strip_prefix("src/") else {
            continue;
        };
        let module = module.trim_end_matches("/mod");
        if matches!(module, "lib" | "main") || module.starts_with("bin/") {
            continue;
        }
        let dotted = module.replace('/', "::");
        let leaf = dotted.rsplit("::").next().unwrap_or(&dotted).to_string();
        let tests_dir = if krate_dir.is_empty() {
            "tests".to_string()
        } else {
            format!("{krate_dir}/tests")
        };
        if root.join(&tests_dir).join(format!("{leaf}.rs")).is_file() {
            integration.push((package.clone(), leaf));
        }
        filters.push((package, format!("{dotted}::")));
    }
    let base = words(prefix, args);
    let mut packages: Vec<Option<String>> = filters.iter().map(|f| f.0.clone()).collect();
    packages.dedup();
    for package in packages {
        let mut names: Vec<String> = filters
            .iter()
            .filter(|f| f.0 == package)
            .map(|f| f.1.clone())
            .collect();
        names.dedup();
        let p = package
            .map(|p| format!(" -p {}", shell_quote(&p)))
            .unwrap_or_default();
        let names: Vec<String> = names.iter().map(|n| shell_quote(n)).collect();
        commands.push(if names.len() == 1 {
            format!("{base}{p} {}", names[0])
        } else {
            format!("{base}{p} -- {}", names.join(" "))
        });
    }
    integration.dedup();
    for (package, test) in integration {
        let p = package
            .map(|p| format!(" -p {}", shell_quote(&p)))
            .unwrap_or_default();
        let command = format!("{base}{p} --test {}", shell_quote(&test));
        if !commands.contains(&command) {
            commands.push(command);
        }
    }
    (!commands.is_empty()).then(|| commands.join(" && "))
}

/// The directory (relative to `root`, "" for the root) of the crate `path` belongs to, and
/// `path` relative to it.
fn crate_of(root: &Path, path: &str) -> Option<(String, String)> {
    let mut dir = path.rsplit_once('/').map(|(d, _)| d.to_string());
    while let Some(d) = dir {
        if root.join(&d).join("Cargo.toml").is_file() {
            return Some((d.clone(), path[d.len() + 1..].to_string()));
        }
        dir = d.rsplit_once('/').map(|(p, _)| p.to_string());
    }
    root.join("Cargo.toml")
        .is_file()
        .then(|| (String::new(), path.to_string()))
}

fn package_name(root: &Path, krate_dir: &str) -> Option<String> {
    let text = std::fs::read_to_string(root.join(krate_dir).join("Cargo.toml")).ok()?;
    let table = text.parse::<toml::Table>().ok()?;
    table
        .get("package")?
        .get("name")?
        .as_str()
        .map(str::to_string)
}

/// `go test [flags] './pkg/calc' …`: the packages of the changed `.go` files.
fn go_command(prefix: &[String], args: &[String], changed: &[String]) -> Option<String> {
    let flags: Vec<String> = args
        .iter()
        .filter(|a| a.starts_with('-'))
        .cloned()
        .collect();
    if args.iter().any(|a| !a.starts_with('-') && a != "./...") {
        return None;
    }
    let mut dirs: Vec<String> = changed
        .iter()
        .filter(|c| c.ends_with(".go"))
        .map(|c| match c.rsplit_once('/') {
            Some((d, _)) => format!("./{d}"),
            None => ".".to_string(),
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    if dirs.is_empty() {
        return None;
    }
    let dirs: Vec<String> = dirs.iter().map(|d| shell_quote(d)).collect();
    Some(format!("{} {}", words(prefix, &flags), dirs.join(" ")))
}

#[cfg(test)]
mod tests;
