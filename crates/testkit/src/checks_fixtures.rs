//! Real git repositories with checks to discover and run: a Python package tested with
//! unittest, a tiny Rust crate, a Node module tested with `node:test`. Each is committed on
//! branch `main` with a fixed author and date.

use crate::fixture::commit_all;
use std::io;
use std::path::{Path, PathBuf};

const CALC_PY: &str = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";
const CALC_PY_SUB_BROKEN: &str =
    "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n";
const TEST_CALC_PY: &str = "import unittest\n\nfrom calc import add, sub\n\n\nclass CalcTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n\n    def test_sub(self):\n        self.assertEqual(sub(3, 1), 2)\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n";
const PY_GITIGNORE: &str = "__pycache__/\n";

const CARGO_TOML: &str =
    "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n";
const LIB_RS: &str = "/// `a + b`.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n/// `a - b`.\npub fn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n\n    #[test]\n    fn subtracts() {\n        assert_eq!(sub(3, 1), 2);\n    }\n}\n";
const RUST_GITIGNORE: &str = "target/\n";

const CALC_JS: &str = "function add(a, b) {\n  return a + b;\n}\n\nfunction sub(a, b) {\n  return a - b;\n}\n\nmodule.exports = { add, sub };\n";
const CALC_TEST_JS: &str = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add, sub } = require('../calc');\n\ntest('adds', () => {\n  assert.strictEqual(add(1, 2), 3);\n});\n\ntest('subtracts', () => {\n  assert.strictEqual(sub(3, 1), 2);\n});\n";
const PACKAGE_JSON: &str = "{\n  \"name\": \"calc\",\n  \"version\": \"1.0.0\",\n  \"private\": true,\n  \"scripts\": {\n    \"test\": \"node --test\"\n  }\n}\n";
const NODE_GITIGNORE: &str = "node_modules/\n";

/// `dir/python-calc`: `calc.py` (`add`, `sub`) and `tests/test_calc.py` (unittest, with
/// `tests/__init__.py`); both tests pass at HEAD.
pub fn python_calc_repo(dir: &Path) -> io::Result<PathBuf> {
    python_repo(dir, "python-calc", CALC_PY)
}

/// Like [`python_calc_repo`] (`dir/python-calc-failing`), but `sub` adds: `test_sub` already
/// fails at HEAD — the base of a task whose checks should call it "failing before this task".
pub fn python_calc_repo_failing_at_base(dir: &Path) -> io::Result<PathBuf> {
    python_repo(dir, "python-calc-failing", CALC_PY_SUB_BROKEN)
}

fn python_repo(dir: &Path, name: &str, calc: &str) -> io::Result<PathBuf> {
    let repo = dir.join(name);
    write_all(
        &repo,
        &[
            ("calc.py", calc),
            ("tests/__init__.py", ""),
            ("tests/test_calc.py", TEST_CALC_PY),
            (".gitignore", PY_GITIGNORE),
        ],
    )?;
    commit_all(&repo)?;
    Ok(repo)
}

/// `dir/rust-calc`: a crate with no dependencies (it builds offline), `src/lib.rs` with `add`,
/// `sub` and two passing unit tests.
pub fn rust_calc_repo(dir: &Path) -> io::Result<PathBuf> {
    let repo = dir.join("rust-calc");
    write_all(
        &repo,
        &[
            ("Cargo.toml", CARGO_TOML),
            ("src/lib.rs", LIB_RS),
            (".gitignore", RUST_GITIGNORE),
        ],
    )?;
    commit_all(&repo)?;
    Ok(repo)
}

/// `dir/node-calc`: `calc.js` and `test/calc.test.js` (`node:test` + `node:assert`), a
/// package.json whose `test` script is `node --test`, no dependencies; both tests pass.
pub fn node_calc_repo(dir: &Path) -> io::Result<PathBuf> {
    let repo = dir.join("node-calc");
    write_all(
        &repo,
        &[
            ("calc.js", CALC_JS),
            ("test/calc.test.js", CALC_TEST_JS),
            ("package.json", PACKAGE_JSON),
            (".gitignore", NODE_GITIGNORE),
        ],
    )?;
    commit_all(&repo)?;
    Ok(repo)
}

fn write_all(repo: &Path, files: &[(&str, &str)]) -> io::Result<()> {
    for (path, text) in files {
        let path = repo.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, text)?;
    }
    Ok(())
}
