use super::fixture::*;
use bosun_workspace::{ChangeHint, TaskWorktree};
use pretty_assertions::assert_eq;
use std::os::unix::fs::PermissionsExt;

fn paths(p: &[&str]) -> ChangeHint {
    ChangeHint::Paths(p.iter().map(|s| s.to_string()).collect())
}

#[test]
fn create_gives_a_worktree_on_its_branch_at_the_base_outside_the_checkout() {
    let f = fixture();
    let before = user_state(&f.repo);
    let task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    assert_eq!(task.branch, "bosun/t1");
    assert!(task.worktree.starts_with(&f.home));
    assert!(!task.worktree.starts_with(&f.repo));
    assert_eq!(
        git(&task.worktree, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "bosun/t1"
    );
    assert_eq!(git(&task.worktree, &["rev-parse", "HEAD"]).trim(), f.base);
    assert_eq!(git(&task.worktree, &["status", "--porcelain"]), "");
    assert_eq!(
        std::fs::read_to_string(task.worktree.join("src/lib.rs")).unwrap(),
        "pub fn one() -> u32 { 1 }\npub fn two() -> u32 { 2 }\n"
    );
    assert_eq!(user_state(&f.repo), before);
}

#[test]
fn edit_checkpoints_record_exactly_the_worktree_with_modes_and_symlinks() {
    let f = fixture();
    let before = user_state(&f.repo);
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let wt = task.worktree.clone();
    write(&wt, "src/new/file.rs", "fn new() {}\n");
    write(&wt, "src/lib.rs", "changed\n");
    std::fs::remove_file(wt.join("README.md")).unwrap();
    std::fs::set_permissions(
        wt.join("src/deep/mod.rs"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::os::unix::fs::symlink("src/lib.rs", wt.join("lib-link")).unwrap();
    std::fs::remove_file(wt.join("link")).unwrap();
    write(&wt, "link", "now a file\n");
    let hint = paths(&[
        "src/new/file.rs",
        "src/lib.rs",
        "README.md",
        "src/deep/mod.rs",
        "lib-link",
        "link",
    ]);
    let cp = task.checkpoint(&hint, "edit").unwrap().unwrap();
    assert_eq!(cp.n, 1);
    assert_eq!(
        cp.files,
        vec![
            "README.md",
            "lib-link",
            "link",
            "src/deep/mod.rs",
            "src/lib.rs",
            "src/new/file.rs"
        ]
    );
    let ind = independent_tree(&wt, &f.base);
    assert_eq!(ls_tree(&f.repo, "refs/bosun/t1/1"), ls_tree(&f.repo, &ind));
    let listing = ls_tree(&f.repo, "refs/bosun/t1/1");
    assert!(
        listing.contains("100755 blob") && listing.contains("src/deep/mod.rs"),
        "{listing}"
    );
    assert!(
        listing.contains("120000 blob") && listing.contains("lib-link"),
        "{listing}"
    );
    assert_eq!(
        git(&f.repo, &["rev-parse", "refs/bosun/t1/1^"]).trim(),
        f.base
    );

    // A second edit: a directory replaced by a file, the parent is checkpoint 1.
    std::fs::remove_dir_all(wt.join("src/new")).unwrap();
    write(&wt, "src/new", "a file where a directory was\n");
    let cp2 = task
        .checkpoint(&paths(&["src/new"]), "dir to file")
        .unwrap()
        .unwrap();
    assert_eq!(cp2.n, 2);
    assert_eq!(cp2.files, vec!["src/new", "src/new/file.rs"]);
    let ind = independent_tree(&wt, &f.base);
    assert_eq!(ls_tree(&f.repo, "refs/bosun/t1/2"), ls_tree(&f.repo, &ind));
    assert_eq!(
        git(&f.repo, &["rev-parse", "refs/bosun/t1/2^"]).trim(),
        cp.commit
    );
    assert_eq!(user_state(&f.repo), before);
}

#[test]
fn a_command_checkpoint_finds_changes_from_stat_data_and_skips_ignored_files() {
    command_checkpoint(true);
}

#[test]
fn a_command_checkpoint_without_the_git_cli_finds_the_same() {
    command_checkpoint(false);
}

fn command_checkpoint(git_cli: bool) {
    let f = fixture();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    task.use_git_cli(git_cli);
    let wt = task.worktree.clone();
    std::fs::write(f.repo.join(".git/info/exclude"), "secret.env\n").unwrap();
    // Before each command the task's own git directory is brought up to date (its copy of the
    // user's info/exclude included), so git inside the task ignores what the user's git does.
    assert_eq!(task.verify().unwrap(), Vec::<String>::new());
    write(&wt, "src/lib.rs", "rewritten by a command\n");
    write(&wt, "generated/out.txt", "new untracked\n");
    write(&wt, "target/debug/bin", "ignored build output\n");
    write(&wt, "build.log", "ignored log\n");
    write(&wt, "secret.env", "excluded via info/exclude\n");
    std::fs::remove_file(wt.join("run.sh")).unwrap();
    let cp = task
        .checkpoint(&ChangeHint::Unknown, "command")
        .unwrap()
        .unwrap();
    assert_eq!(cp.files, vec!["generated/out.txt", "run.sh", "src/lib.rs"]);
    assert_eq!(
        tree_of(&f.repo, "refs/bosun/t1/1"),
        independent_tree(&wt, &f.base)
    );
    // An edit tool naming an ignored path does not put it in the checkpoint either.
    write(&wt, "target/debug/bin", "ignored again\n");
    assert_eq!(
        task.checkpoint(&paths(&["target/debug/bin"]), "edit")
            .unwrap(),
        None
    );
}

#[test]
fn nothing_changed_means_no_checkpoint() {
    let f = fixture();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    assert_eq!(
        task.checkpoint(&ChangeHint::Unknown, "nothing").unwrap(),
        None
    );
    // Rewriting a file with the same content (new mtime) is not a change.
    let wt = task.worktree.clone();
    let own_index =
        std::path::PathBuf::from(git(&wt, &["rev-parse", "--git-path", "index"]).trim());
    let own_index = if own_index.is_absolute() {
        own_index
    } else {
        wt.join(own_index)
    };
    let own_before = std::fs::read(&own_index).unwrap();
    let same = std::fs::read(wt.join("src/lib.rs")).unwrap();
    std::fs::write(wt.join("src/lib.rs"), &same).unwrap();
    assert_eq!(
        task.checkpoint(&paths(&["src/lib.rs"]), "same").unwrap(),
        None
    );
    assert_eq!(task.checkpoint(&ChangeHint::Unknown, "same").unwrap(), None);
    assert_eq!(task.checkpoints().unwrap(), vec![]);
    // The agent's own git index in the worktree is not Bosun's to change.
    assert_eq!(std::fs::read(&own_index).unwrap(), own_before);
}

#[test]
fn checkpoints_survive_reopening_and_keep_counting() {
    let f = fixture();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let wt = task.worktree.clone();
    write(&wt, "a.txt", "a\n");
    task.checkpoint(&paths(&["a.txt"]), "a").unwrap().unwrap();
    drop(task);
    // Changed while nobody had it open.
    write(&wt, "a.txt", "a2\n");
    let mut task = TaskWorktree::open(&f.home, &f.repo, "t1", &wt, &f.base).unwrap();
    let cp = task
        .checkpoint(&ChangeHint::Unknown, "after reopen")
        .unwrap()
        .unwrap();
    assert_eq!((cp.n, cp.files), (2, vec!["a.txt".to_string()]));
    let listed: Vec<u32> = task.checkpoints().unwrap().iter().map(|c| c.n).collect();
    assert_eq!(listed, vec![1, 2]);
    assert_eq!(
        tree_of(&f.repo, "refs/bosun/t1/2"),
        independent_tree(&wt, &f.base)
    );
}

#[test]
fn a_task_can_move_between_threads() {
    fn assert_send<T: Send>() {}
    assert_send::<TaskWorktree>();
    let f = fixture();
    let task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let mut task = std::thread::spawn(move || task).join().unwrap();
    write(&task.worktree.clone(), "moved.txt", "x\n");
    assert!(
        task.checkpoint(&paths(&["moved.txt"]), "m")
            .unwrap()
            .is_some()
    );
}

#[test]
fn a_command_that_undoes_an_edit_is_recorded() {
    let f = fixture();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let wt = task.worktree.clone();
    let original = std::fs::read_to_string(wt.join("src/lib.rs")).unwrap();
    write(&wt, "src/lib.rs", "edited by a tool\n");
    task.checkpoint(&paths(&["src/lib.rs"]), "edit")
        .unwrap()
        .unwrap();
    // e.g. `git checkout -- src/lib.rs`: the file is back to what the base holds.
    write(&wt, "src/lib.rs", &original);
    let cp = task
        .checkpoint(&ChangeHint::Unknown, "undo")
        .unwrap()
        .unwrap();
    assert_eq!(cp.files, vec!["src/lib.rs"]);
    assert_eq!(
        tree_of(&f.repo, "refs/bosun/t1/2"),
        tree_of(&f.repo, &f.base)
    );
}
