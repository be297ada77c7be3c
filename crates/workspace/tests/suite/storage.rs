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

/// The blob git would store for `bytes` with no filter at all.
fn raw_blob(dir: &std::path::Path, bytes: &str) -> String {
    let tmp = dir.join(".raw-blob");
    std::fs::write(&tmp, bytes).unwrap();
    let id = git(dir, &["hash-object", "--no-filters", tmp.to_str().unwrap()]);
    std::fs::remove_file(tmp).unwrap();
    id.trim().to_string()
}

fn blob_at(repo: &std::path::Path, rev: &str, path: &str) -> String {
    git(repo, &["rev-parse", &format!("{rev}:{path}")])
        .trim()
        .to_string()
}

#[test]
fn line_ending_attributes_do_not_change_what_is_stored() {
    let f = fixture();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let wt = task.worktree.clone();
    write(
        &wt,
        "text/.gitattributes",
        "*.txt text eol=lf\n*.id ident\n*.enc working-tree-encoding=UTF-16\n",
    );
    write(&wt, "text/a.txt", "one\r\ntwo\r\n");
    write(&wt, "text/deeper/b.txt", "three\r\n");
    write(&wt, "text/c.id", "$Id$\n");
    write(&wt, "text/d.enc", "plain\n");
    let hint = paths(&[
        "text/.gitattributes",
        "text/a.txt",
        "text/deeper/b.txt",
        "text/c.id",
        "text/d.enc",
    ]);
    task.checkpoint(&hint, "attributes").unwrap().unwrap();
    // What is stored is what is on disk, byte for byte (the README says so).
    for (path, bytes) in [
        ("text/a.txt", "one\r\ntwo\r\n"),
        ("text/deeper/b.txt", "three\r\n"),
        ("text/c.id", "$Id$\n"),
        ("text/d.enc", "plain\n"),
    ] {
        assert_eq!(
            blob_at(&f.repo, "refs/bosun/t1/1", path),
            raw_blob(&f.repo, bytes),
            "{path}"
        );
    }
    // The same after a command (the other scan) and after a restore and re-checkout.
    write(&wt, "text/a.txt", "four\r\n");
    task.checkpoint(&ChangeHint::Unknown, "command")
        .unwrap()
        .unwrap();
    assert_eq!(
        blob_at(&f.repo, "refs/bosun/t1/2", "text/a.txt"),
        raw_blob(&f.repo, "four\r\n")
    );
    task.restore(1).unwrap();
    assert_eq!(
        std::fs::read(wt.join("text/a.txt")).unwrap(),
        b"one\r\ntwo\r\n"
    );
}

#[test]
fn core_autocrlf_does_not_change_what_is_stored() {
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
        blob_at(&f.repo, "refs/bosun/t1/1", "crlf/f1.txt"),
        raw_blob(&f.repo, "line 1\r\nline 1\r\n")
    );
}

#[test]
fn a_filter_driver_in_the_users_config_never_runs_and_lfs_pointers_stay_pointers() {
    let f = fixture();
    let ran = f.home.join("filter-ran");
    std::fs::create_dir_all(&f.home).unwrap();
    // The user's repository has a filter configured (as `git lfs install --local` does) and a
    // file tracked through it; the task writes an attributes file that routes everything
    // through that filter.
    let script = format!("sh -c 'touch {}; cat'", ran.display());
    for (key, value) in [
        ("filter.lfs.clean", script.as_str()),
        ("filter.lfs.smudge", script.as_str()),
        ("filter.lfs.process", script.as_str()),
        ("filter.lfs.required", "true"),
    ] {
        git(&f.repo, &["config", key, value]);
    }
    let pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n";
    write(&f.repo, "big.bin", pointer);
    git(&f.repo, &["add", "--no-all", "big.bin"]);
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let wt = task.worktree.clone();
    write(&wt, ".gitattributes", "* filter=lfs diff=lfs merge=lfs\n");
    write(&wt, "big.bin", pointer);
    write(&wt, "src/lib.rs", "changed\n");
    task.checkpoint(&ChangeHint::Unknown, "command")
        .unwrap()
        .unwrap();
    task.release().unwrap();
    let t2 = TaskWorktree::create(&f.home, &f.repo, "t2", &f.base).unwrap();
    drop(t2);
    assert!(!ran.exists(), "a filter program ran");
    assert_eq!(
        blob_at(&f.repo, "refs/bosun/t1/1", "big.bin"),
        raw_blob(&f.repo, pointer),
        "an LFS pointer is checkpointed as the pointer"
    );
}
