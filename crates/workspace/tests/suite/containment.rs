//! The worktree is hostile: whatever a task writes into it (its `.git` file, a fake git
//! directory, `.gitattributes`, symlinks) must not make Bosun's own git work run a program, move
//! the user's HEAD, or write outside the worktree. One test per escape, named by the escape.

use super::fixture::*;
use bosun_testkit::Trap;
use bosun_workspace::{ChangeHint, DiffPoint, TaskWorktree};
use pretty_assertions::assert_eq;
use std::path::Path;

fn trap(dir: &Path) -> Trap {
    Trap::new(dir).unwrap()
}

/// What an attacker-minded task writes: a fake git directory whose config names `config_extra`
/// (with `EVIL` standing for the trap's program), an attributes file routing everything through
/// it, and a `.git` file pointing at the fake directory.
fn plant_fake_git_dir(wt: &Path, trap: &Trap, config_extra: &str, attributes: &str) {
    let evil = trap.script.display().to_string();
    write(wt, ".fakegit/HEAD", "ref: refs/heads/main\n");
    write(
        wt,
        ".fakegit/config",
        &format!(
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n{}",
            config_extra.replace("EVIL", &evil)
        ),
    );
    write(wt, ".fakegit/refs/heads/.keep", "");
    write(wt, ".fakegit/objects/.keep", "");
    write(
        wt,
        ".fakegit/evil-include",
        &format!("[filter \"x\"]\n\tclean = {evil}\n\tsmudge = {evil}\n\tprocess = {evil}\n"),
    );
    write(wt, ".gitattributes", attributes);
    std::fs::remove_file(wt.join(".git")).unwrap();
    write(wt, ".git", "gitdir: .fakegit\n");
}

/// Every git operation Bosun performs on a task, after the task planted its trap.
fn exercise_every_git_operation(f: &Fixture, task: &mut TaskWorktree) {
    let wt = task.worktree.clone();
    write(&wt, "src/lib.rs", "changed by a command\n");
    // Stat data that matches the private index but racily: git compares content then.
    write(&wt, "README.md", "# project\n");
    task.checkpoint(&ChangeHint::Unknown, "after the command")
        .unwrap();
    task.checkpoint(
        &ChangeHint::Paths(vec!["src/lib.rs".into(), ".gitattributes".into()]),
        "edit",
    )
    .unwrap();
    task.diff(DiffPoint::Base, DiffPoint::Latest, false)
        .unwrap();
    let history = task.history().unwrap();
    history.review_files(true).unwrap();
    task.restore_preview(1).unwrap();
    task.restore(1).unwrap();
    task.verify().unwrap();
    let _ = f;
}

fn filter_attempt(config_extra: &str, attributes: &str) {
    let f = fixture();
    let before = user_state(&f.repo);
    let trap = trap(&f.home.join("trap"));
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    plant_fake_git_dir(&task.worktree, &trap, config_extra, attributes);
    exercise_every_git_operation(&f, &mut task);
    task.release().unwrap();
    // A later task recycles the released worktree, the first comes back, both are discarded.
    let t2 = TaskWorktree::create(&f.home, &f.repo, "t2", &f.base).unwrap();
    t2.remove().unwrap();
    let t1 = TaskWorktree::open(
        &f.home,
        &f.repo,
        "t1",
        &repo_dir(&f.home, "worktrees").join("t1"),
        &f.base,
    )
    .unwrap();
    t1.remove().unwrap();
    assert!(
        !trap.sprung(),
        "a program the task named ran outside the sandbox"
    );
    assert_eq!(user_state(&f.repo), before);
}

#[test]
fn a_filter_in_a_fake_git_dir_never_runs() {
    filter_attempt(
        "[filter \"x\"]\n\tclean = EVIL\n\tsmudge = EVIL\n\tprocess = EVIL\n\trequired = true\n",
        "* filter=x\n",
    );
}

#[test]
fn a_hooks_path_in_a_fake_git_dir_never_runs() {
    let hooks = "[core]\n\thooksPath = .fakegit/hooks\n";
    let f = fixture();
    let trap = trap(&f.home.join("trap"));
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    plant_fake_git_dir(&task.worktree, &trap, hooks, "");
    for hook in [
        "post-index-change",
        "post-checkout",
        "pre-commit",
        "reference-transaction",
        "pre-auto-gc",
    ] {
        let path = task.worktree.join(".fakegit/hooks").join(hook);
        write(
            &task.worktree,
            &format!(".fakegit/hooks/{hook}"),
            &format!("#!/bin/sh\n{}\n", trap.script.display()),
        );
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    exercise_every_git_operation(&f, &mut task);
    task.release().unwrap();
    TaskWorktree::create(&f.home, &f.repo, "t2", &f.base).unwrap();
    assert!(!trap.sprung());
}

#[test]
fn an_fsmonitor_in_a_fake_git_dir_never_runs() {
    filter_attempt("[core]\n\tfsmonitor = EVIL\n", "");
}

#[test]
fn an_external_diff_in_a_fake_git_dir_never_runs() {
    filter_attempt("[diff]\n\texternal = EVIL\n", "");
}

#[test]
fn an_include_path_in_a_fake_git_dir_never_runs() {
    filter_attempt("[include]\n\tpath = evil-include\n", "* filter=x\n");
}

#[test]
fn a_textconv_in_a_fake_git_dir_never_runs() {
    filter_attempt(
        "[diff \"x\"]\n\ttextconv = EVIL\n\tcommand = EVIL\n",
        "* diff=x\n",
    );
}

#[test]
fn a_filter_configured_in_the_users_repository_is_not_triggered_by_task_attributes() {
    let f = fixture();
    let before_head = std::fs::read(f.repo.join(".git/HEAD")).unwrap();
    let trap = trap(&f.home.join("trap"));
    let evil = trap.script.display().to_string();
    for key in ["filter.x.clean", "filter.x.smudge", "filter.x.process"] {
        git(&f.repo, &["config", key, &evil]);
    }
    git(&f.repo, &["config", "filter.x.required", "true"]);
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    write(&task.worktree, ".gitattributes", "* filter=x\n");
    exercise_every_git_operation(&f, &mut task);
    task.release().unwrap();
    TaskWorktree::create(&f.home, &f.repo, "t2", &f.base).unwrap();
    assert!(!trap.sprung());
    assert_eq!(
        std::fs::read(f.repo.join(".git/HEAD")).unwrap(),
        before_head
    );
}

#[test]
fn the_users_head_is_not_moved_through_a_recycled_worktree() {
    let f = fixture();
    let before = user_state(&f.repo);
    let user_git = f.repo.join(".git");
    let mut t1 = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    write(&t1.worktree, "work.txt", "t1's work\n");
    t1.checkpoint(&ChangeHint::Unknown, "work")
        .unwrap()
        .unwrap();
    // A command re-points the worktree at the user's own repository.
    std::fs::write(
        t1.worktree.join(".git"),
        format!("gitdir: {}\n", user_git.display()),
    )
    .unwrap();
    t1.release().unwrap();
    let t2 = TaskWorktree::create(&f.home, &f.repo, "t2", &f.base).unwrap();
    assert_eq!(
        user_state(&f.repo),
        before,
        "the user's HEAD, index and branches"
    );
    assert_eq!(
        git(&t2.worktree, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "bosun/t2"
    );
    assert_eq!(git(&t2.worktree, &["status", "--porcelain"]), "");
    assert!(!t2.worktree.join("work.txt").exists());
    // And the user's repository still works as before.
    assert_eq!(
        git(&f.repo, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "main"
    );
}

#[test]
fn a_gitdir_pointing_outside_is_never_written_or_removed() {
    let f = fixture();
    let outside = f.home.join("outside-admin");
    std::fs::create_dir_all(&outside).unwrap();
    for name in ["HEAD", "index", "gitdir", "commondir"] {
        std::fs::write(outside.join(name), "precious\n").unwrap();
    }
    let mut t1 = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    std::fs::write(
        t1.worktree.join(".git"),
        format!("gitdir: {}\n", outside.display()),
    )
    .unwrap();
    t1.checkpoint(&ChangeHint::Unknown, "x").unwrap();
    t1.release().unwrap();
    let t2 = TaskWorktree::create(&f.home, &f.repo, "t2", &f.base).unwrap();
    t2.remove().unwrap();
    for name in ["HEAD", "index", "gitdir", "commondir"] {
        assert_eq!(
            std::fs::read_to_string(outside.join(name)).unwrap(),
            "precious\n"
        );
    }
}

#[test]
fn symlinks_inside_the_task_git_dir_do_not_lead_bosun_into_the_users_refs() {
    let f = fixture();
    let before = user_state(&f.repo);
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let git_dir = task.task_git().git_dir;
    // A command swaps the task git dir's refs and HEAD for links into the user's repository.
    std::fs::remove_dir_all(git_dir.join("refs")).unwrap();
    std::os::unix::fs::symlink(f.repo.join(".git/refs"), git_dir.join("refs")).unwrap();
    std::fs::remove_file(git_dir.join("HEAD")).unwrap();
    std::os::unix::fs::symlink(f.repo.join(".git/HEAD"), git_dir.join("HEAD")).unwrap();
    std::os::unix::fs::symlink(
        f.repo.join(".git/config"),
        git_dir.join(".config.bosun-tmp"),
    )
    .unwrap();
    let repaired = task.verify().unwrap();
    assert!(!repaired.is_empty(), "the changes are reported");
    assert_eq!(user_state(&f.repo), before);
    assert!(
        !f.repo.join(".git/refs/heads/bosun/t1").exists() || {
            // The user's repo has the task branch Bosun made itself at the base, unchanged.
            git(&f.repo, &["rev-parse", "bosun/t1"]).trim() == f.base
        }
    );
    assert!(
        std::fs::symlink_metadata(git_dir.join("refs"))
            .unwrap()
            .is_dir()
    );
    assert_eq!(
        git(&task.worktree, &["rev-parse", "HEAD"]).trim(),
        f.base,
        "git inside the worktree works again"
    );
}

#[test]
fn a_symlinked_directory_does_not_lead_a_restore_into_the_users_checkout() {
    let f = fixture();
    let before = user_state(&f.repo);
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let wt = task.worktree.clone();
    write(&wt, "src/lib.rs", "task version\n");
    task.checkpoint(&ChangeHint::Paths(vec!["src/lib.rs".into()]), "edit")
        .unwrap()
        .unwrap();
    // A command replaces `src` with a link to the user's own `src`.
    std::fs::remove_dir_all(wt.join("src")).unwrap();
    std::os::unix::fs::symlink(f.repo.join("src"), wt.join("src")).unwrap();
    task.checkpoint(&ChangeHint::Unknown, "linked")
        .unwrap()
        .unwrap();
    task.restore(1).unwrap();
    assert_eq!(
        user_state(&f.repo),
        before,
        "the user's files are untouched"
    );
    assert!(std::fs::symlink_metadata(wt.join("src")).unwrap().is_dir());
    assert_eq!(
        std::fs::read_to_string(wt.join("src/lib.rs")).unwrap(),
        "task version\n"
    );
}

#[test]
fn a_file_behind_a_symlinked_directory_is_not_read_into_a_checkpoint() {
    let f = fixture();
    let secret_dir = f.home.join("secrets");
    std::fs::create_dir_all(&secret_dir).unwrap();
    std::fs::write(secret_dir.join("key"), "hunter2\n").unwrap();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    std::os::unix::fs::symlink(&secret_dir, task.worktree.join("escape")).unwrap();
    let hint = ChangeHint::Paths(vec!["escape/key".into(), "escape".into()]);
    task.checkpoint(&hint, "edit").unwrap().unwrap();
    let listing = git(&f.repo, &["ls-tree", "-r", "refs/bosun/t1/1"]);
    assert!(listing.contains("\tescape\n"), "{listing}");
    assert!(!listing.contains("escape/key"), "{listing}");
    assert!(!git(&f.repo, &["log", "-p", "refs/bosun/t1/1"]).contains("hunter2"));
}

#[test]
fn setuid_and_setgid_bits_do_not_survive_a_checkpoint() {
    use std::os::unix::fs::PermissionsExt;
    let f = fixture();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let wt = task.worktree.clone();
    write(&wt, "bin/tool", "#!/bin/sh\n");
    write(&wt, "target/ignored-tool", "#!/bin/sh\n");
    for (path, mode) in [
        ("bin/tool", 0o4755),
        ("run.sh", 0o2755),
        ("target/ignored-tool", 0o6755),
    ] {
        std::fs::set_permissions(wt.join(path), std::fs::Permissions::from_mode(mode)).unwrap();
    }
    task.checkpoint(&ChangeHint::Unknown, "command")
        .unwrap()
        .unwrap();
    let mode = |path: &str| {
        std::fs::metadata(wt.join(path))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    assert_eq!(
        mode("bin/tool"),
        0o755,
        "a file the checkpoint records is cleared"
    );
    // A file git does not record (ignored) is cleared by the sweep run where the sandbox cannot
    // refuse the bits; so is a tracked file whose content did not change when its new ctime fell
    // in the second the index was written (git then does not list it, set-id bits being no part
    // of git's mode), which the checkpoint may or may not have seen.
    let swept = task.strip_set_id_bits().unwrap();
    assert!(
        swept.contains(&"target/ignored-tool".to_string()),
        "{swept:?}"
    );
    assert!(!swept.contains(&"bin/tool".to_string()), "{swept:?}");
    for path in ["bin/tool", "run.sh", "target/ignored-tool"] {
        assert_eq!(mode(path), 0o755, "{path}");
    }
}

#[test]
fn a_deleted_or_replaced_dot_git_is_put_back_before_use() {
    let f = fixture();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let wt = task.worktree.clone();
    std::fs::remove_file(wt.join(".git")).unwrap();
    std::fs::create_dir_all(wt.join(".git/objects")).unwrap();
    write(&wt, ".git/HEAD", "ref: refs/heads/elsewhere\n");
    let repaired = task.verify().unwrap();
    assert_eq!(repaired, vec!["its .git file was changed".to_string()]);
    assert_eq!(
        git(&wt, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "bosun/t1"
    );
    assert_eq!(task.verify().unwrap(), Vec::<String>::new());
}

#[test]
fn refs_a_command_makes_besides_its_own_branch_are_removed() {
    let f = fixture();
    let other = TaskWorktree::create(&f.home, &f.repo, "other", &f.base).unwrap();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let wt = task.worktree.clone();
    // What a command inside the task could do with its own git directory.
    git(
        &wt,
        &["commit", "-q", "--allow-empty", "-m", "agent commit"],
    );
    let agent_head = git(&wt, &["rev-parse", "HEAD"]).trim().to_string();
    git(&wt, &["update-ref", "refs/heads/bosun/other", "HEAD"]);
    git(&wt, &["branch", "evil"]);
    git(&wt, &["tag", "v9"]);
    git(&wt, &["stash", "list"]);
    let repaired = task.verify().unwrap();
    assert_eq!(
        repaired,
        vec![
            "refs other than its branch bosun/t1 were made and are removed: refs/heads/bosun/other, refs/heads/evil, refs/tags/v9"
                .to_string()
        ]
    );
    assert_eq!(
        git(&wt, &["for-each-ref", "--format=%(refname)"]).trim(),
        "refs/heads/bosun/t1"
    );
    assert_eq!(
        git(&wt, &["rev-parse", "HEAD"]).trim(),
        agent_head,
        "its own branch keeps its commits"
    );
    // The other task's branch, in the user's repository and in its own git directory, never moved.
    assert_eq!(git(&f.repo, &["rev-parse", "bosun/other"]).trim(), f.base);
    assert_eq!(git(&other.worktree, &["rev-parse", "HEAD"]).trim(), f.base);
    assert!(git(&f.repo, &["branch", "--list", "evil"]).is_empty());
}

#[test]
fn git_files_that_point_elsewhere_are_removed_from_the_task_git_dir() {
    let f = fixture();
    let before = user_state(&f.repo);
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let git_dir = task.task_git().git_dir;
    let user_git = f.repo.join(".git").display().to_string();
    for (rel, content) in [
        ("commondir", user_git.as_str()),
        ("gitdir", "/elsewhere/.git"),
        ("config.worktree", "[core]\n\tfsmonitor = /bin/false\n"),
        ("shallow", "0000000000000000000000000000000000000000\n"),
        ("info/grafts", "x\n"),
        ("hooks/pre-commit", "#!/bin/sh\necho hi\n"),
        ("worktrees/x/gitdir", "/elsewhere\n"),
    ] {
        write(&git_dir, rel, content);
    }
    let repaired = task.verify().unwrap();
    assert_eq!(repaired.len(), 1, "{repaired:?}");
    for rel in [
        "commondir",
        "gitdir",
        "config.worktree",
        "shallow",
        "info/grafts",
        "hooks",
        "worktrees",
    ] {
        assert!(!git_dir.join(rel).exists(), "{rel} stayed");
    }
    assert_eq!(git(&task.worktree, &["status", "--porcelain"]), "");
    assert_eq!(user_state(&f.repo), before);
}

#[test]
fn a_rebase_does_not_write_the_users_index_through_a_symlinked_task_index() {
    let f = fixture();
    let before = user_state(&f.repo);
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    write(&task.worktree, "task.txt", "work\n");
    task.checkpoint(&ChangeHint::Unknown, "work")
        .unwrap()
        .unwrap();
    let own = task.task_git().git_dir.join("index");
    std::fs::remove_file(&own).unwrap();
    std::os::unix::fs::symlink(f.repo.join(".git/index"), &own).unwrap();
    std::os::unix::fs::symlink(f.repo.join(".git/HEAD"), own.with_extension("lock")).unwrap();
    let first = git(&f.repo, &["rev-list", "--max-parents=0", "HEAD"])
        .trim()
        .to_string();
    task.rebase(&first).unwrap();
    assert_eq!(user_state(&f.repo), before, "the user's index and HEAD");
    assert!(std::fs::symlink_metadata(&own).unwrap().is_file());
}

#[test]
fn task_attributes_cannot_hide_a_change_from_the_diff_or_steer_a_rebase_merge() {
    let f = fixture();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let wt = task.worktree.clone();
    write(&wt, ".gitattributes", "* -diff merge=union\n");
    write(
        &wt,
        "src/lib.rs",
        "pub fn one() -> u32 { 111 }\npub fn two() -> u32 { 2 }\n",
    );
    task.checkpoint(&ChangeHint::Unknown, "edit")
        .unwrap()
        .unwrap();
    let diff = task
        .diff(DiffPoint::Base, DiffPoint::Latest, false)
        .unwrap();
    assert!(diff.contains("+pub fn one() -> u32 { 111 }"), "{diff}");
    assert!(!diff.contains("Binary files"), "{diff}");
    // The user changes the same line on a branch; a rebase must conflict, not union both sides.
    let user_wt = tempfile::tempdir().unwrap();
    let at = user_wt.path().join("wt");
    let at_str = at.to_str().unwrap().to_string();
    git(
        &f.repo,
        &["worktree", "add", "-q", "-b", "feature", &at_str, "main"],
    );
    write(
        &at,
        "src/lib.rs",
        "pub fn one() -> u32 { 999 }\npub fn two() -> u32 { 2 }\n",
    );
    git(&at, &["commit", "-qam", "user change"]);
    let rebased = task.rebase("feature").unwrap();
    assert_eq!(rebased.conflicts, vec!["src/lib.rs".to_string()]);
    let text = std::fs::read_to_string(wt.join("src/lib.rs")).unwrap();
    assert!(
        text.contains("<<<<<<<") && text.contains(">>>>>>>"),
        "{text}"
    );
}
