//! Spare worktrees prepared before a task exists.

use super::fixture::*;
use bosun_workspace::{ChangeHint, TaskWorktree, drop_spares, prepare_spare, worktree_disk_usage};
use pretty_assertions::assert_eq;

#[test]
fn a_prepared_spare_becomes_the_next_tasks_worktree_at_its_base() {
    let f = fixture();
    let first = git(&f.repo, &["rev-list", "--max-parents=0", "HEAD"])
        .trim()
        .to_string();
    let spare = prepare_spare(&f.home, &f.repo, &first).unwrap();
    assert!(spare.join("src/lib.rs").exists());
    // The base changes in the form: the same spare follows it.
    let again = prepare_spare(&f.home, &f.repo, &f.base).unwrap();
    assert!(!spare.exists() && again.exists());
    assert_eq!(worktree_disk_usage(&f.home).unwrap().idle_count, 1);
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    assert!(!again.exists(), "the task took the spare's worktree");
    assert_eq!(
        std::fs::read_to_string(task.worktree.join("src/lib.rs")).unwrap(),
        "pub fn one() -> u32 { 1 }\npub fn two() -> u32 { 2 }\n"
    );
    assert_eq!(git(&task.worktree, &["status", "--porcelain"]), "");
    assert_eq!(git(&task.worktree, &["rev-parse", "HEAD"]).trim(), f.base);
    assert_eq!(task.checkpoint(&ChangeHint::Unknown, "x").unwrap(), None);
    let tasks_dir = repo_dir(&f.home, "workspace").join("tasks");
    let left: Vec<String> = tasks_dir
        .read_dir()
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["t1"], "nothing of the spares is left");
}

#[test]
fn a_spare_nobody_used_is_removed_but_a_pool_worktree_goes_back_to_the_pool() {
    let f = fixture();
    let spare = prepare_spare(&f.home, &f.repo, &f.base).unwrap();
    assert_eq!(drop_spares(&f.home, &f.repo).unwrap(), vec![spare.clone()]);
    assert!(!spare.exists());
    assert_eq!(worktree_disk_usage(&f.home).unwrap().worktrees.len(), 0);
    // A released worktree switched to the form's base stays warm in the pool.
    let t = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    t.release().unwrap();
    let from_pool = prepare_spare(&f.home, &f.repo, &f.base).unwrap();
    assert_eq!(
        drop_spares(&f.home, &f.repo).unwrap(),
        Vec::<std::path::PathBuf>::new()
    );
    assert!(from_pool.exists());
    assert_eq!(worktree_disk_usage(&f.home).unwrap().idle_count, 1);
}
