//! The same check on the task's base commit, cached per base commit and command, and which of
//! a task's failures were there before it.

use crate::{VerifyError, failure_key};
use bosun_protocol::{CheckFailure, CheckStatus};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::PathBuf;

/// What a check reported on a base commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseResult {
    pub status: CheckStatus,
    /// [`failure_key`] of each failure, one per failure (a key twice for two alike).
    pub failure_keys: Vec<String>,
    pub exit_code: Option<i32>,
}

/// The file as stored: the result, and what it is the result of (so a hash collision, or a
/// file copied by hand, is never taken for the wrong base).
#[derive(Serialize, Deserialize)]
struct Stored {
    base_commit: String,
    command: String,
    result: BaseResult,
}

/// Base-commit results as small JSON files in one directory, named by a hash of the base
/// commit and the command. A file that cannot be read is a miss; writes are atomic.
#[derive(Debug, Clone)]
pub struct BaseCache {
    dir: PathBuf,
}

impl BaseCache {
    pub fn new(dir: PathBuf) -> BaseCache {
        BaseCache { dir }
    }

    fn path(&self, base_commit: &str, command: &str) -> PathBuf {
        let mut hash = sha1_smol::Sha1::new();
        hash.update(base_commit.as_bytes());
        hash.update(&[0]);
        hash.update(command.as_bytes());
        self.dir.join(format!("{}.json", hash.digest()))
    }

    pub fn get(&self, base_commit: &str, command: &str) -> Option<BaseResult> {
        let text = std::fs::read_to_string(self.path(base_commit, command)).ok()?;
        let stored: Stored = serde_json::from_str(&text).ok()?;
        (stored.base_commit == base_commit && stored.command == command).then_some(stored.result)
    }

    pub fn put(
        &self,
        base_commit: &str,
        command: &str,
        result: &BaseResult,
    ) -> Result<(), VerifyError> {
        let path = self.path(base_commit, command);
        let write_err = |source| VerifyError::CacheWrite {
            path: self.dir.clone(),
            source,
        };
        std::fs::create_dir_all(&self.dir).map_err(write_err)?;
        let json = serde_json::to_vec_pretty(&Stored {
            base_commit: base_commit.to_string(),
            command: command.to_string(),
            result: result.clone(),
        })?;
        let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
        std::fs::write(&tmp, json).map_err(write_err)?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            write_err(e)
        })
    }
}

/// Marks each failure whose [`failure_key`] the base had too as `before_task`, and says
/// whether every failure was. Keys are counted: with one `mismatched types` in a file on the
/// base and two now, one of the two is new.
pub fn mark_before_task(failures: &mut [CheckFailure], base: &BaseResult) -> bool {
    let mut left: HashMap<&str, usize> = HashMap::new();
    for key in &base.failure_keys {
        *left.entry(key.as_str()).or_default() += 1;
    }
    let mut all = true;
    for failure in failures.iter_mut() {
        let key = failure_key(failure);
        match left.get_mut(key.as_str()) {
            Some(n) if *n > 0 => {
                *n -= 1;
                failure.before_task = true;
            }
            _ => {
                failure.before_task = false;
                all = false;
            }
        }
    }
    all && !failures.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn result(keys: &[&str]) -> BaseResult {
        BaseResult {
            status: CheckStatus::Failed,
            failure_keys: keys.iter().map(|k| k.to_string()).collect(),
            exit_code: Some(1),
        }
    }

    fn test_failure(name: &str) -> CheckFailure {
        CheckFailure {
            path: Some("tests/test_calc.py".into()),
            line: Some(3),
            message: format!("{name} — AssertionError"),
            before_task: false,
        }
    }

    #[test]
    fn a_result_is_cached_per_base_commit_and_command() {
        let dir = tempfile::tempdir().unwrap();
        let cache = BaseCache::new(dir.path().join("checks"));
        assert_eq!(cache.get("abc", "cargo test"), None);
        let r = result(&["test: a"]);
        cache.put("abc", "cargo test", &r).unwrap();
        assert_eq!(cache.get("abc", "cargo test"), Some(r.clone()));
        assert_eq!(cache.get("abd", "cargo test"), None);
        assert_eq!(cache.get("abc", "cargo test --release"), None);
        // A second cache on the same directory (another process) sees it.
        assert_eq!(
            BaseCache::new(dir.path().join("checks")).get("abc", "cargo test"),
            Some(r)
        );
        let files: Vec<_> = std::fs::read_dir(dir.path().join("checks"))
            .unwrap()
            .collect();
        assert_eq!(files.len(), 1, "no temporary file is left behind");
    }

    #[test]
    fn a_corrupt_or_foreign_file_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = BaseCache::new(dir.path().to_path_buf());
        cache.put("abc", "make", &result(&[])).unwrap();
        let file = std::fs::read_dir(dir.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        std::fs::write(&file, "{not json").unwrap();
        assert_eq!(cache.get("abc", "make"), None);
        let other =
            serde_json::json!({"base_commit": "zzz", "command": "make", "result": result(&[])});
        std::fs::write(&file, other.to_string()).unwrap();
        assert_eq!(cache.get("abc", "make"), None);
    }

    #[test]
    fn an_unwritable_cache_says_where() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), "").unwrap();
        let cache = BaseCache::new(dir.path().join("file"));
        let err = cache.put("abc", "make", &result(&[])).unwrap_err();
        assert!(err.to_string().contains("deleting it is safe"), "{err}");
    }

    #[test]
    fn failures_the_base_had_are_marked_and_new_ones_are_not() {
        let base = result(&["test: tests.test_calc.CalcTest.test_sub"]);
        let mut failures = vec![
            test_failure("tests.test_calc.CalcTest.test_sub"),
            test_failure("tests.test_calc.CalcTest.test_add"),
        ];
        assert!(!mark_before_task(&mut failures, &base));
        assert_eq!(
            failures.iter().map(|f| f.before_task).collect::<Vec<_>>(),
            vec![true, false]
        );
        let mut only_old = vec![test_failure("tests.test_calc.CalcTest.test_sub")];
        assert!(mark_before_task(&mut only_old, &base));
    }

    #[test]
    fn a_second_copy_of_an_old_error_is_new() {
        let error = CheckFailure {
            path: Some("src/lib.rs".into()),
            line: Some(2),
            message: "error[E0308]: mismatched types".into(),
            before_task: false,
        };
        let base = result(&[&failure_key(&error)]);
        let mut shifted = error.clone();
        shifted.line = Some(9);
        let mut failures = vec![shifted.clone(), shifted];
        assert!(!mark_before_task(&mut failures, &base));
        assert_eq!(failures.iter().filter(|f| f.before_task).count(), 1);
    }

    #[test]
    fn no_failures_are_not_all_before_the_task() {
        assert!(!mark_before_task(&mut [], &result(&["test: a"])));
    }
}
