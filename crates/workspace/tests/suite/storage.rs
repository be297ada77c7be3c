//! How checkpoints store their objects: exactly as `git add` would (clean filters included), in
//! a repository that git's own tools read and check without complaint.

use super::fixture::*;
use bosun_workspace::{ChangeHint, TaskWorktree};
use pretty_assertions::assert_eq;
use std::path::Path;

fn paths(p: &[&str]) -> ChangeHint {
    ChangeHint::Paths(p.iter().map(|s| s.to_string()).collect())
}

fn pack_count(repo: &Path) -> usize {
    std::fs::read_dir(repo.join(".git/objects/pack"))
        .map(|dir| {
            dir.flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".pack"))
                .count()
        })
        .unwrap_or(0)
}

fn content(i: usize, version: usize) -> String {
    format!("generated file {i}, version {version}\n").repeat(i * 40 + 1)
}

#[test]
fn a_large_edit_checkpoint_lands_in_one_pack_that_git_reads_and_checks() {
    many_files(true);
}

#[test]
fn a_large_command_checkpoint_without_the_git_cli_does_the_same() {
    many_files(false);
}

fn many_files(git_cli: bool) {
    let f = fixture();
    let before = user_state(&f.repo);
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    task.use_git_cli(git_cli);
    let wt = task.worktree.clone();
    let packs = pack_count(&f.repo);
    let mut names = Vec::new();
    for i in 0..40 {
        let rel = format!("gen/d{}/file{i}.txt", i % 4);
        write(&wt, &rel, &content(i, 1));
        names.push(rel);
    }
    write(&wt, "src/lib.rs", "changed\n");
    names.push("src/lib.rs".to_string());
    let hint = if git_cli {
        ChangeHint::Paths(names.clone())
    } else {
        ChangeHint::Unknown
    };
    let cp = task.checkpoint(&hint, "many files").unwrap().unwrap();
    assert_eq!(cp.files.len(), 41);
    assert_eq!(pack_count(&f.repo), packs + 1);
    assert_eq!(
        tree_of(&f.repo, "refs/bosun/t1/1"),
        independent_tree(&wt, &f.base)
    );
    // git reads the objects back: contents, diffs and history.
    assert_eq!(
        git(
            &f.repo,
            &["cat-file", "-p", "refs/bosun/t1/1:gen/d3/file39.txt"]
        ),
        content(39, 1)
    );
    let stat = git(&f.repo, &["diff", "--stat", &f.base, "refs/bosun/t1/1"]);
    assert!(stat.contains("41 files changed"), "{stat}");
    assert_eq!(
        git(&f.repo, &["log", "--format=%s", "-1", "refs/bosun/t1/1"]).trim(),
        "many files"
    );

    // A command rewrites some of them, one back to what the base held, and adds more.
    for i in (0..40).step_by(3) {
        write(&wt, &format!("gen/d{}/file{i}.txt", i % 4), &content(i, 2));
    }
    write(
        &wt,
        "src/lib.rs",
        "pub fn one() -> u32 { 1 }\npub fn two() -> u32 { 2 }\n",
    );
    write(&wt, "gen/extra.txt", &content(7, 1));
    let cp = task
        .checkpoint(&ChangeHint::Unknown, "command")
        .unwrap()
        .unwrap();
    assert_eq!(cp.files.len(), 16, "{:?}", cp.files);
    assert_eq!(
        tree_of(&f.repo, "refs/bosun/t1/2"),
        independent_tree(&wt, &f.base)
    );
    assert_eq!(
        git(
            &f.repo,
            &["cat-file", "-p", "refs/bosun/t1/2:gen/extra.txt"]
        ),
        content(7, 1)
    );
    let fsck = git(&f.repo, &["fsck", "--no-dangling", "--no-progress"]);
    assert_eq!(fsck, "");
    let log = git(&f.repo, &["log", "--format=%s", "refs/bosun/t1/2"]);
    assert!(log.starts_with("command\nmany files\nsecond\n"), "{log}");
    assert_eq!(user_state(&f.repo), before);
}

#[test]
fn line_ending_attributes_are_applied_as_git_add_applies_them() {
    let f = fixture();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let wt = task.worktree.clone();
    write(&wt, "text/.gitattributes", "*.txt text\n*.keep -text\n");
    write(&wt, "text/a.txt", "one\r\ntwo\r\n");
    write(&wt, "text/deeper/b.txt", "three\r\n");
    write(&wt, "text/c.keep", "one\r\ntwo\r\n");
    write(&wt, "plain/d.txt", "one\r\ntwo\r\n");
    let hint = paths(&[
        "text/.gitattributes",
        "text/a.txt",
        "text/deeper/b.txt",
        "text/c.keep",
        "plain/d.txt",
    ]);
    task.checkpoint(&hint, "attributes").unwrap().unwrap();
    assert_eq!(
        tree_of(&f.repo, "refs/bosun/t1/1"),
        independent_tree(&wt, &f.base)
    );
    let show = |path: &str| {
        git(
            &f.repo,
            &["cat-file", "-p", &format!("refs/bosun/t1/1:{path}")],
        )
    };
    assert_eq!(show("text/a.txt"), "one\ntwo\n");
    assert_eq!(show("text/deeper/b.txt"), "three\n");
    assert_eq!(show("text/c.keep"), "one\r\ntwo\r\n");
    assert_eq!(show("plain/d.txt"), "one\r\ntwo\r\n");
}

#[test]
fn core_autocrlf_is_applied_as_git_add_applies_it() {
    let f = fixture();
    git(&f.repo, &["config", "core.autocrlf", "true"]);
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let wt = task.worktree.clone();
    let mut names = Vec::new();
    for i in 0..12 {
        let rel = format!("crlf/f{i}.txt");
        write(&wt, &rel, &format!("line {i}\r\n").repeat(i + 1));
        names.push(rel);
    }
    let hint = ChangeHint::Paths(names);
    task.checkpoint(&hint, "crlf").unwrap().unwrap();
    assert_eq!(
        tree_of(&f.repo, "refs/bosun/t1/1"),
        independent_tree(&wt, &f.base)
    );
    assert_eq!(
        git(&f.repo, &["cat-file", "-p", "refs/bosun/t1/1:crlf/f1.txt"]),
        "line 1\nline 1\n"
    );
}
