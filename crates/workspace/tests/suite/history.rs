use super::fixture::*;
use bosun_workspace::{ChangeHint, DiffPoint, TaskWorktree};
use pretty_assertions::assert_eq;
use std::os::unix::fs::MetadataExt;

fn paths(p: &[&str]) -> ChangeHint {
    ChangeHint::Paths(p.iter().map(|s| s.to_string()).collect())
}

#[test]
fn diff_and_stat_between_any_two_states() {
    let f = fixture();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let wt = task.worktree.clone();
    write(
        &wt,
        "src/lib.rs",
        "pub fn one() -> u32 { 1 }\npub fn two() -> u32 { 22 }\n",
    );
    task.checkpoint(&paths(&["src/lib.rs"]), "two")
        .unwrap()
        .unwrap();
    write(&wt, "docs/guide.md", "hello\n");
    task.checkpoint(&paths(&["docs/guide.md"]), "docs")
        .unwrap()
        .unwrap();

    let first = task
        .diff(DiffPoint::Base, DiffPoint::Checkpoint(1), false)
        .unwrap();
    assert!(
        first.starts_with("diff --git a/src/lib.rs b/src/lib.rs\n"),
        "{first}"
    );
    assert!(
        first.contains("--- a/src/lib.rs\n+++ b/src/lib.rs\n"),
        "{first}"
    );
    assert!(
        first.contains("-pub fn two() -> u32 { 2 }\n+pub fn two() -> u32 { 22 }\n"),
        "{first}"
    );
    let second = task
        .diff(DiffPoint::Checkpoint(1), DiffPoint::Latest, false)
        .unwrap();
    assert!(
        second.contains("+++ b/docs/guide.md\n@@ -0,0 +1 @@\n+hello\n"),
        "{second}"
    );
    assert!(!second.contains("src/lib.rs"), "{second}");
    // The same text git prints for the same two commits.
    let git_text = git(&f.repo, &["diff", "refs/bosun/t1/1", "refs/bosun/t1/2"]);
    assert_eq!(second, git_text);
    let stat = task.diff(DiffPoint::Base, DiffPoint::Latest, true).unwrap();
    assert!(stat.contains("docs/guide.md | 1 +"), "{stat}");
    assert!(
        stat.contains("2 files changed, 2 insertions(+), 1 deletion(-)"),
        "{stat}"
    );
    assert_eq!(
        task.diff(DiffPoint::Latest, DiffPoint::Latest, false)
            .unwrap(),
        ""
    );
}

#[test]
fn restore_touches_only_the_paths_that_differ_and_keeps_history() {
    let f = fixture();
    let before = user_state(&f.repo);
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let wt = task.worktree.clone();
    write(&wt, "a.txt", "one\n");
    task.checkpoint(&paths(&["a.txt"]), "1").unwrap().unwrap();
    write(&wt, "a.txt", "two\n");
    write(&wt, "b.txt", "new\n");
    std::fs::remove_file(wt.join("run.sh")).unwrap();
    task.checkpoint(&paths(&["a.txt", "b.txt", "run.sh"]), "2")
        .unwrap()
        .unwrap();
    // Uncommitted work from a command, then the user asks to go back to checkpoint 1.
    write(&wt, "c.txt", "pending\n");
    let untouched = std::fs::metadata(wt.join("src/lib.rs")).unwrap();

    let preview = task.restore_preview(1).unwrap();
    assert_eq!(preview, vec!["a.txt", "b.txt", "c.txt", "run.sh"]);
    let restored = task.restore_to(1).unwrap();
    assert_eq!(restored.paths, preview);
    assert_eq!(std::fs::read_to_string(wt.join("a.txt")).unwrap(), "one\n");
    assert!(!wt.join("b.txt").exists() && !wt.join("c.txt").exists());
    assert_eq!(
        std::fs::metadata(wt.join("run.sh")).unwrap().mode() & 0o111,
        0o111
    );
    let after = std::fs::metadata(wt.join("src/lib.rs")).unwrap();
    assert_eq!(
        (after.ino(), after.mtime_nsec()),
        (untouched.ino(), untouched.mtime_nsec())
    );
    // The pending work was saved first (checkpoint 3), the restored state is checkpoint 4.
    let cps = task.checkpoints().unwrap();
    assert_eq!(
        cps.iter().map(|c| c.n).collect::<Vec<_>>(),
        vec![1, 2, 3, 4]
    );
    assert_eq!(cps[2].files, vec!["c.txt"]);
    assert_eq!(
        tree_of(&f.repo, "refs/bosun/t1/4"),
        tree_of(&f.repo, "refs/bosun/t1/1")
    );
    assert_eq!(
        tree_of(&f.repo, "refs/bosun/t1/4"),
        independent_tree(&wt, &f.base)
    );
    assert_eq!(task.restore_preview(1).unwrap(), Vec::<String>::new());
    assert_eq!(task.restore(1).unwrap(), Vec::<String>::new());
    // The next edit builds on the restored state.
    write(&wt, "d.txt", "d\n");
    let cp = task
        .checkpoint(&paths(&["d.txt"]), "after restore")
        .unwrap()
        .unwrap();
    assert_eq!(cp.files, vec!["d.txt"]);
    assert_eq!(
        tree_of(&f.repo, "refs/bosun/t1/5"),
        independent_tree(&wt, &f.base)
    );
    assert_eq!(user_state(&f.repo), before);
}

#[test]
fn restore_brings_back_symlinks_exec_bits_and_deleted_directories() {
    let f = fixture();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let wt = task.worktree.clone();
    // A command turns the symlink into a file, drops the exec bit and deletes a directory.
    std::fs::remove_file(wt.join("link")).unwrap();
    write(&wt, "link", "plain file\n");
    std::fs::set_permissions(
        wt.join("run.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    std::fs::remove_dir_all(wt.join("src/deep")).unwrap();
    let cp = task
        .checkpoint(&ChangeHint::Unknown, "command")
        .unwrap()
        .unwrap();
    assert_eq!(cp.files, vec!["link", "run.sh", "src/deep/mod.rs"]);
    assert_eq!(
        tree_of(&f.repo, "refs/bosun/t1/1"),
        independent_tree(&wt, &f.base)
    );
    write(&wt, "later.txt", "x\n");
    task.checkpoint(&paths(&["later.txt"]), "later").unwrap();

    let restored = task
        .diff(DiffPoint::Checkpoint(1), DiffPoint::Base, true)
        .unwrap();
    assert!(restored.contains("src/deep/mod.rs | 1 +"), "{restored}");
    // Back to checkpoint 1 first, then to the base through a fresh open of the task.
    task.restore(1).unwrap();
    assert!(!wt.join("later.txt").exists());
    drop(task);
    let mut task = TaskWorktree::open(&f.home, &f.repo, "t1", &wt, &f.base).unwrap();
    let n = task.checkpoints().unwrap().len() as u32;
    assert_eq!(n, 3);
    // Checkpoint 1's parent is the base: restore "the base" by making it a checkpoint first.
    let base_paths = task
        .diff(DiffPoint::Latest, DiffPoint::Base, false)
        .unwrap();
    assert!(
        base_paths.contains("diff --git a/link b/link"),
        "{base_paths}"
    );
    std::fs::remove_file(wt.join("link")).unwrap();
    std::os::unix::fs::symlink("README.md", wt.join("link")).unwrap();
    task.checkpoint(&paths(&["link"]), "relink")
        .unwrap()
        .unwrap();
    assert!(
        std::fs::symlink_metadata(wt.join("link"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    task.restore(1).unwrap();
    assert!(
        std::fs::symlink_metadata(wt.join("link"))
            .unwrap()
            .is_file()
    );
    task.restore(4).unwrap();
    assert_eq!(
        std::fs::read_link(wt.join("link")).unwrap().to_str(),
        Some("README.md")
    );
    assert_eq!(
        tree_of(&f.repo, "refs/bosun/t1/4"),
        independent_tree(&wt, &f.base)
    );
    assert!(!wt.join("src/deep").exists());
    task.restore(2).unwrap();
    assert_eq!(
        std::fs::read_to_string(wt.join("later.txt")).unwrap(),
        "x\n"
    );
}

#[test]
fn the_base_files_matching_rules_are_found_once_per_base_and_rules() {
    let f = fixture();
    let task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let rs = |p: &str| p.ends_with(".rs");
    assert_eq!(
        task.base_files_matching("*.rs", rs).unwrap(),
        vec!["src/deep/mod.rs", "src/lib.rs"]
    );
    // The same base and rules: answered without walking the tree again.
    let never = |_: &str| -> bool { panic!("the tree was walked again") };
    assert_eq!(
        task.base_files_matching("*.rs", never).unwrap(),
        vec!["src/deep/mod.rs", "src/lib.rs"]
    );
    // Other rules: walked again.
    assert_eq!(
        task.base_files_matching("*.sh", |p| p.ends_with(".sh"))
            .unwrap(),
        vec!["run.sh"]
    );
    assert_eq!(
        task.base_files_matching("none", |_| false).unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(
        task.base_files_matching("none", never).unwrap(),
        Vec::<String>::new()
    );
}

#[test]
fn merge_in_takes_another_task_s_changes_three_way_and_a_conflict_writes_nothing() {
    let f = fixture();
    let mut parent = TaskWorktree::create(&f.home, &f.repo, "p1", &f.base).unwrap();
    let fork = parent.latest_commit();
    // Two children from the same state: one edits lib.rs's first line, one adds a file.
    let mut a = TaskWorktree::create(&f.home, &f.repo, "c1", &fork).unwrap();
    write(
        &a.worktree,
        "src/lib.rs",
        "pub fn one() -> u32 { 11 }\npub fn two() -> u32 { 2 }\n",
    );
    let a_end = a.checkpoint(&paths(&["src/lib.rs"]), "a").unwrap().unwrap();
    let mut b = TaskWorktree::create(&f.home, &f.repo, "c2", &fork).unwrap();
    write(&b.worktree, "docs/new.md", "new\n");
    let b_end = b
        .checkpoint(&paths(&["docs/new.md"]), "b")
        .unwrap()
        .unwrap();
    for (end, file) in [(&a_end, "src/lib.rs"), (&b_end, "docs/new.md")] {
        match parent.merge_in(&fork, &end.commit, "merge").unwrap() {
            bosun_workspace::MergedIn::Merged { files, checkpoint } => {
                assert_eq!(files, [file]);
                assert!(checkpoint.is_some());
            }
            other => panic!("{other:?}"),
        }
    }
    let wt = parent.worktree.clone();
    assert_eq!(
        std::fs::read_to_string(wt.join("src/lib.rs")).unwrap(),
        "pub fn one() -> u32 { 11 }\npub fn two() -> u32 { 2 }\n"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("docs/new.md")).unwrap(),
        "new\n"
    );
    // A third child changed the same line from the fork: a conflict, and nothing written.
    let mut c = TaskWorktree::create(&f.home, &f.repo, "c3", &fork).unwrap();
    write(
        &c.worktree,
        "src/lib.rs",
        "pub fn one() -> u32 { 99 }\npub fn two() -> u32 { 2 }\n",
    );
    write(&c.worktree, "docs/other.md", "other\n");
    let c_end = c
        .checkpoint(&paths(&["src/lib.rs", "docs/other.md"]), "c")
        .unwrap()
        .unwrap();
    let before = parent.latest_commit();
    assert_eq!(
        parent.merge_in(&fork, &c_end.commit, "merge").unwrap(),
        bosun_workspace::MergedIn::Conflicts(vec!["src/lib.rs".into()])
    );
    assert_eq!(parent.latest_commit(), before);
    assert!(!wt.join("docs/other.md").exists(), "half merged");
    assert!(
        std::fs::read_to_string(wt.join("src/lib.rs"))
            .unwrap()
            .contains("{ 11 }")
    );
}

#[test]
fn put_back_restores_paths_from_an_earlier_state_and_deletes_what_it_did_not_hold() {
    let f = fixture();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let start = task.latest_commit();
    let wt = task.worktree.clone();
    write(&wt, "src/lib.rs", "changed\n");
    write(&wt, "stray.txt", "stray\n");
    write(&wt, "kept.txt", "kept\n");
    task.checkpoint(&ChangeHint::Unknown, "cmd")
        .unwrap()
        .unwrap();
    let (rewritten, cp) = task
        .put_back(
            &start,
            &["src/lib.rs".into(), "stray.txt".into()],
            "put back",
        )
        .unwrap();
    assert_eq!(rewritten, ["src/lib.rs", "stray.txt"]);
    assert!(cp.is_some());
    assert!(!wt.join("stray.txt").exists());
    assert_eq!(
        std::fs::read_to_string(wt.join("src/lib.rs")).unwrap(),
        "pub fn one() -> u32 { 1 }\npub fn two() -> u32 { 2 }\n"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("kept.txt")).unwrap(),
        "kept\n"
    );
}
