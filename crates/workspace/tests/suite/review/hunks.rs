//! Hunks on tricky diffs: what is listed, what a reject leaves in the worktree and what a merge
//! writes, each against a file built by hand.

use super::*;
use bosun_protocol::{FileStatus, HunkKind, LineKind, MergeMode};
use bosun_workspace::{DiffPoint, MergePlan};
use pretty_assertions::assert_eq;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;

fn plan(into: &str) -> MergePlan {
    MergePlan {
        into: into.to_string(),
        mode: MergeMode::Squash,
        message: "Accepted changes".to_string(),
        step_messages: BTreeMap::new(),
    }
}

fn replaced(base: &[String], edits: &[(usize, &str)]) -> Vec<String> {
    let mut out = base.to_vec();
    for (line, text) in edits {
        out[line - 1] = text.to_string();
    }
    out
}

#[test]
fn adjacent_and_overlapping_changes_form_git_hunks_that_reject_and_merge_one_by_one() {
    let base = lines(30);
    let r = repo_with(&[("f.txt", &join(&base))]);
    let mut t = task(&r, "t1");
    let latest = replaced(
        &base,
        &[(2, "L2\n"), (10, "L10\n"), (15, "L15\n"), (25, "L25\n")],
    );
    put(&t.worktree, "f.txt", &join(&latest));
    step(&mut t, "edit");

    let files = t.history().unwrap().review_files(true).unwrap();
    assert_eq!(files.len(), 1);
    let headers: Vec<&str> = files[0].hunks.iter().map(|h| h.header.as_str()).collect();
    // 7 unchanged lines between two changes: two hunks; 4 between: one.
    assert_eq!(
        headers,
        ["@@ -1,5 +1,5 @@", "@@ -7,12 +7,12 @@", "@@ -22,7 +22,7 @@"]
    );
    assert_eq!((files[0].added, files[0].removed), (4, 4));
    let h = &files[0].hunks[1];
    assert_eq!((h.added, h.removed, h.number), (2, 2, 2));
    assert_eq!(h.lines.first().unwrap().text, "l7");
    assert_eq!(h.lines.first().unwrap().old_line, Some(7));

    let ids = hunk_ids(&t, "f.txt");
    let rejection = t
        .reject_hunks("f.txt", &[ids[1].clone()], "reject")
        .unwrap();
    assert_eq!(rejection.hunks.len(), 1);
    assert_eq!(rejection.hunks[0].hunk.removed, 2);
    assert!(rejection.checkpoint.is_some());
    let kept = join(&replaced(&base, &[(2, "L2\n"), (25, "L25\n")]));
    assert_eq!(std::fs::read(t.worktree.join("f.txt")).unwrap(), kept);
    assert_eq!(hunk_ids(&t, "f.txt"), vec![ids[0].clone(), ids[2].clone()]);

    // Hunk 1 accepted, hunk 3 left unreviewed: only hunk 1 reaches the branch.
    let outcome = t
        .history()
        .unwrap()
        .merge(&plan("review"), &set(&[&ids[0]]))
        .unwrap();
    assert_eq!((outcome.hunks, outcome.left_out, outcome.files), (1, 1, 1));
    assert!(outcome.created);
    let expected = join(&replaced(&base, &[(2, "L2\n")]));
    assert_eq!(show(&r.repo, "review", "f.txt"), expected);
    assert_eq!(
        tree(&r.repo, "review"),
        expected_tree(&r.repo, &r.base, &[("f.txt", Some((&expected, "100644")))])
    );
}

#[test]
fn crlf_lines_keep_their_carriage_return_through_reject_and_merge() {
    let base = b"a\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\ni\r\nj\r\n";
    let r = repo_with(&[("win.txt", base)]);
    let mut t = task(&r, "t1");
    put(
        &t.worktree,
        "win.txt",
        b"a\r\nB\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\ni\r\nJ\n",
    );
    step(&mut t, "edit");
    let files = t.history().unwrap().review_files(true).unwrap();
    let hunks = &files[0].hunks;
    assert_eq!(hunks.len(), 2);
    let changed: Vec<(LineKind, &str)> = hunks[1]
        .lines
        .iter()
        .filter(|l| l.kind != LineKind::Context)
        .map(|l| (l.kind, l.text.as_str()))
        .collect();
    assert_eq!(
        changed,
        [(LineKind::Removed, "j\r"), (LineKind::Added, "J")]
    );
    let ids = hunk_ids(&t, "win.txt");
    t.reject_hunks("win.txt", &[ids[1].clone()], "reject")
        .unwrap();
    let kept = b"a\r\nB\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\ni\r\nj\r\n".to_vec();
    assert_eq!(std::fs::read(t.worktree.join("win.txt")).unwrap(), kept);
    t.history()
        .unwrap()
        .merge(&plan("review"), &set(&[&ids[0]]))
        .unwrap();
    assert_eq!(show(&r.repo, "review", "win.txt"), kept);
}

#[test]
fn a_missing_newline_at_the_end_is_a_change_of_its_own_line() {
    let mut base = lines(12);
    base[11] = "l12".to_string();
    let r = repo_with(&[("eof.txt", &join(&base))]);
    let mut t = task(&r, "t1");
    let mut latest = replaced(&base, &[(1, "L1\n"), (12, "l12\n")]);
    latest.push("l13\n".to_string());
    put(&t.worktree, "eof.txt", &join(&latest));
    step(&mut t, "edit");
    let files = t.history().unwrap().review_files(true).unwrap();
    let last = &files[0].hunks[1];
    let changed: Vec<(LineKind, &str, bool)> = last
        .lines
        .iter()
        .filter(|l| l.kind != LineKind::Context)
        .map(|l| (l.kind, l.text.as_str(), l.no_newline))
        .collect();
    assert_eq!(
        changed,
        [
            (LineKind::Removed, "l12", true),
            (LineKind::Added, "l12", false),
            (LineKind::Added, "l13", false)
        ]
    );
    let ids = hunk_ids(&t, "eof.txt");
    t.reject_hunks("eof.txt", &[ids[1].clone()], "reject")
        .unwrap();
    let rejected = join(&replaced(&base, &[(1, "L1\n")]));
    assert_eq!(std::fs::read(t.worktree.join("eof.txt")).unwrap(), rejected);

    // The end-of-file hunk alone (as listed before the reject) merges onto the base.
    let r2 = repo_with(&[("eof.txt", &join(&base))]);
    let mut t2 = task(&r2, "t2");
    put(&t2.worktree, "eof.txt", &join(&latest));
    step(&mut t2, "edit");
    let ids = hunk_ids(&t2, "eof.txt");
    t2.history()
        .unwrap()
        .merge(&plan("review"), &set(&[&ids[1]]))
        .unwrap();
    let mut expected = base.clone();
    expected[11] = "l12\n".to_string();
    expected.push("l13\n".to_string());
    assert_eq!(show(&r2.repo, "review", "eof.txt"), join(&expected));
}

#[test]
fn a_rename_with_edits_is_a_rename_hunk_plus_text_hunks() {
    let base = lines(30);
    let r = repo_with(&[("old.txt", &join(&base))]);
    let mut t = task(&r, "t1");
    std::fs::remove_file(t.worktree.join("old.txt")).unwrap();
    let latest = replaced(&base, &[(1, "L1\n"), (30, "L30\n")]);
    put(&t.worktree, "new.txt", &join(&latest));
    step(&mut t, "move");
    let files = t.history().unwrap().review_files(true).unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].status, FileStatus::Renamed);
    assert_eq!(files[0].old_path.as_deref(), Some("old.txt"));
    let kinds: Vec<HunkKind> = files[0].hunks.iter().map(|h| h.kind).collect();
    assert_eq!(kinds, [HunkKind::Rename, HunkKind::Text, HunkKind::Text]);
    assert_eq!(files[0].hunks[0].header, "rename old.txt → new.txt");
    let ids = hunk_ids(&t, "new.txt");

    // Rename and the first edit accepted; the second left out.
    let history = t.history().unwrap();
    history
        .merge(&plan("review"), &set(&[&ids[0], &ids[1]]))
        .unwrap();
    let expected = join(&replaced(&base, &[(1, "L1\n")]));
    assert_eq!(
        tree(&r.repo, "review"),
        expected_tree(
            &r.repo,
            &r.base,
            &[("old.txt", None), ("new.txt", Some((&expected, "100644")))]
        )
    );

    // Rejecting only the rename moves the file back with both edits; the edits keep their ids.
    t.reject_hunks("new.txt", &[ids[0].clone()], "keep the name")
        .unwrap();
    assert!(!t.worktree.join("new.txt").exists());
    assert_eq!(
        std::fs::read(t.worktree.join("old.txt")).unwrap(),
        join(&latest)
    );
    assert_eq!(hunk_ids(&t, "old.txt"), ids[1..].to_vec());
}

#[test]
fn deletions_are_rejected_back_byte_exactly_or_merged() {
    let r = repo_with(&[("a.txt", b"alpha\nbeta\n"), ("b.txt", b"gamma\n")]);
    let mut t = task(&r, "t1");
    std::fs::remove_file(t.worktree.join("a.txt")).unwrap();
    std::fs::remove_file(t.worktree.join("b.txt")).unwrap();
    step(&mut t, "delete");
    let files = t.history().unwrap().review_files(true).unwrap();
    assert_eq!(
        files
            .iter()
            .map(|f| (f.path.as_str(), f.status, f.removed))
            .collect::<Vec<_>>(),
        [
            ("a.txt", FileStatus::Deleted, 2),
            ("b.txt", FileStatus::Deleted, 1)
        ]
    );
    let a = hunk_ids(&t, "a.txt");
    t.reject_hunks("a.txt", &a, "keep a").unwrap();
    assert_eq!(
        std::fs::read(t.worktree.join("a.txt")).unwrap(),
        b"alpha\nbeta\n"
    );
    let b = hunk_ids(&t, "b.txt");
    t.history()
        .unwrap()
        .merge(&plan("review"), &set(&[&b[0]]))
        .unwrap();
    assert_eq!(
        tree(&r.repo, "review"),
        expected_tree(&r.repo, &r.base, &[("b.txt", None)])
    );
}

#[test]
fn a_mode_change_is_its_own_hunk() {
    let r = repo_with(&[("run.sh", b"#!/bin/sh\necho hi\n")]);
    let mut t = task(&r, "t1");
    put(&t.worktree, "run.sh", b"#!/bin/sh\necho hello\n");
    chmod(&t.worktree, "run.sh", 0o755);
    step(&mut t, "exec");
    let files = t.history().unwrap().review_files(true).unwrap();
    let kinds: Vec<(HunkKind, &str)> = files[0]
        .hunks
        .iter()
        .map(|h| (h.kind, h.header.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            (HunkKind::Mode, "mode 100644 → 100755"),
            (HunkKind::Text, "@@ -1,2 +1,2 @@")
        ]
    );
    let ids = hunk_ids(&t, "run.sh");
    t.history()
        .unwrap()
        .merge(&plan("review"), &set(&[&ids[0]]))
        .unwrap();
    assert_eq!(
        tree(&r.repo, "review"),
        expected_tree(
            &r.repo,
            &r.base,
            &[("run.sh", Some((b"#!/bin/sh\necho hi\n", "100755")))]
        )
    );
    t.reject_hunks("run.sh", &[ids[0].clone()], "no exec")
        .unwrap();
    let meta = std::fs::metadata(t.worktree.join("run.sh")).unwrap();
    assert_eq!(meta.permissions().mode() & 0o111, 0);
    assert_eq!(
        std::fs::read(t.worktree.join("run.sh")).unwrap(),
        b"#!/bin/sh\necho hello\n"
    );

    // A mode change alone.
    let r2 = repo_with(&[("run.sh", b"x\n")]);
    let mut t2 = task(&r2, "t2");
    chmod(&t2.worktree, "run.sh", 0o755);
    step(&mut t2, "exec");
    let files = t2.history().unwrap().review_files(false).unwrap();
    assert_eq!(files[0].status, FileStatus::ModeChanged);
    assert_eq!(files[0].hunks.len(), 1);
}

#[test]
fn binary_files_are_one_hunk_rejected_and_merged_whole() {
    let old = b"\x89PNG\0\x01\x02".to_vec();
    let new = b"\x89PNG\0\x03\x04\x05\x06".to_vec();
    let r = repo_with(&[("img.png", &old)]);
    let mut t = task(&r, "t1");
    put(&t.worktree, "img.png", &new);
    put(&t.worktree, "data.bin", b"\0\0\x01");
    step(&mut t, "binaries");
    let files = t.history().unwrap().review_files(true).unwrap();
    let summary: Vec<(&str, bool, HunkKind, &str)> = files
        .iter()
        .map(|f| {
            (
                f.path.as_str(),
                f.binary,
                f.hunks[0].kind,
                f.hunks[0].header.as_str(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("data.bin", true, HunkKind::Binary, "binary none → 3 B"),
            ("img.png", true, HunkKind::Binary, "binary 7 B → 9 B")
        ]
    );
    let img = hunk_ids(&t, "img.png");
    let data = hunk_ids(&t, "data.bin");
    t.reject_hunks("img.png", &img, "keep image").unwrap();
    assert_eq!(std::fs::read(t.worktree.join("img.png")).unwrap(), old);
    t.history()
        .unwrap()
        .merge(&plan("review"), &set(&[&data[0]]))
        .unwrap();
    assert_eq!(
        tree(&r.repo, "review"),
        expected_tree(
            &r.repo,
            &r.base,
            &[("data.bin", Some((b"\0\0\x01", "100644")))]
        )
    );
}

#[test]
fn non_utf8_text_is_diffed_as_bytes_and_shown_lossily() {
    // Latin-1: é is the one byte 0xE9.
    let latin = |i: usize, tail: &str| {
        let mut line = b"caf".to_vec();
        line.push(0xE9);
        line.extend_from_slice(format!(" {i}{tail}\n").as_bytes());
        line
    };
    let base: Vec<u8> = (1..=20).flat_map(|i| latin(i, "")).collect();
    let latest: Vec<u8> = (1..=20)
        .flat_map(|i| latin(i, if i == 2 || i == 18 { " changed" } else { "" }))
        .collect();
    let r = repo_with(&[("latin1.txt", &base)]);
    let mut t = task(&r, "t1");
    put(&t.worktree, "latin1.txt", &latest);
    step(&mut t, "edit");
    let files = t.history().unwrap().review_files(true).unwrap();
    assert!(files[0].non_utf8);
    assert!(!files[0].binary);
    assert_eq!(files[0].hunks.len(), 2);
    let added = files[0].hunks[0]
        .lines
        .iter()
        .find(|l| l.kind == LineKind::Added)
        .unwrap();
    assert_eq!(added.text, "caf\u{fffd} 2 changed");
    let ids = hunk_ids(&t, "latin1.txt");
    t.history()
        .unwrap()
        .merge(&plan("review"), &set(&[&ids[1]]))
        .unwrap();
    let expected: Vec<u8> = (1..=20)
        .flat_map(|i| latin(i, if i == 18 { " changed" } else { "" }))
        .collect();
    assert_eq!(show(&r.repo, "review", "latin1.txt"), expected);
}

#[test]
fn empty_files_added_or_deleted_are_empty_hunks() {
    let r = repo_with(&[("gone.txt", b""), ("keep.txt", b"k\n")]);
    let mut t = task(&r, "t1");
    put(&t.worktree, "new-empty.txt", b"");
    std::fs::remove_file(t.worktree.join("gone.txt")).unwrap();
    step(&mut t, "empties");
    let files = t.history().unwrap().review_files(true).unwrap();
    let summary: Vec<(&str, FileStatus, HunkKind, &str)> = files
        .iter()
        .map(|f| {
            (
                f.path.as_str(),
                f.status,
                f.hunks[0].kind,
                f.hunks[0].header.as_str(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "gone.txt",
                FileStatus::Deleted,
                HunkKind::Empty,
                "empty file deleted"
            ),
            (
                "new-empty.txt",
                FileStatus::Added,
                HunkKind::Empty,
                "empty file added"
            )
        ]
    );
    let gone = hunk_ids(&t, "gone.txt");
    let added = hunk_ids(&t, "new-empty.txt");
    t.reject_hunks("gone.txt", &gone, "keep it").unwrap();
    assert_eq!(std::fs::read(t.worktree.join("gone.txt")).unwrap(), b"");
    t.history()
        .unwrap()
        .merge(&plan("review"), &set(&[&added[0]]))
        .unwrap();
    assert_eq!(
        tree(&r.repo, "review"),
        expected_tree(
            &r.repo,
            &r.base,
            &[("new-empty.txt", Some((b"", "100644")))]
        )
    );
}

#[test]
fn a_file_changed_by_the_agent_after_a_reject_then_rejected_again() {
    let base = lines(30);
    let r = repo_with(&[("f.txt", &join(&base))]);
    let mut t = task(&r, "t1");
    put(
        &t.worktree,
        "f.txt",
        &join(&replaced(&base, &[(2, "L2\n"), (20, "L20\n")])),
    );
    step(&mut t, "first edit");
    let first = hunk_ids(&t, "f.txt");
    t.reject_hunks("f.txt", &[first[0].clone()], "reject L2")
        .unwrap();
    // The agent edits the same file again, elsewhere.
    let now = std::fs::read_to_string(t.worktree.join("f.txt")).unwrap();
    put(
        &t.worktree,
        "f.txt",
        now.replace("l10\n", "L10\n").as_bytes(),
    );
    step(&mut t, "second edit");
    let second = hunk_ids(&t, "f.txt");
    assert_eq!(second.len(), 2);
    assert_eq!(second[1], first[1], "the L20 hunk keeps its id");
    t.reject_hunks("f.txt", &[second[1].clone()], "reject L20")
        .unwrap();
    let expected = join(&replaced(&base, &[(10, "L10\n")]));
    assert_eq!(std::fs::read(t.worktree.join("f.txt")).unwrap(), expected);
    t.history()
        .unwrap()
        .merge(&plan("review"), &set(&[&second[0]]))
        .unwrap();
    assert_eq!(show(&r.repo, "review", "f.txt"), expected);
}

#[test]
fn a_large_file_is_listed_with_counts_and_opens_with_its_lines_on_demand() {
    let base = lines(12_000);
    let r = repo_with(&[("big.txt", &join(&base)), ("small.txt", b"s\n")]);
    let mut t = task(&r, "t1");
    let latest: Vec<String> = base.iter().map(|l| l.to_uppercase()).collect();
    put(&t.worktree, "big.txt", &join(&latest));
    put(&t.worktree, "small.txt", b"S\n");
    step(&mut t, "rewrite");
    let history = t.history().unwrap();
    let files = history.review_files(true).unwrap();
    let big = &files[0];
    assert!(big.large);
    assert_eq!((big.added, big.removed), (12_000, 12_000));
    assert!(!big.hunks.is_empty());
    assert!(big.hunks.iter().all(|h| h.lines.is_empty()));
    assert!(!files[1].large);
    assert!(!files[1].hunks[0].lines.is_empty());
    let opened = history.review_file("big.txt").unwrap();
    assert_eq!(
        opened
            .file
            .hunks
            .iter()
            .map(|h| h.lines.len())
            .sum::<usize>(),
        24_000
    );
    assert_eq!(opened.new_text.unwrap().len(), join(&latest).len());

    // Between two checkpoints (the timeline's compare) it opens with its lines too.
    let mut again = latest.clone();
    again[5] = "sixth, edited\n".into();
    put(&t.worktree, "big.txt", &join(&again));
    step(&mut t, "edit one line");
    let history = t.history().unwrap();
    let between = history
        .diff_file(
            DiffPoint::Checkpoint(1),
            DiffPoint::Checkpoint(2),
            "big.txt",
        )
        .unwrap();
    assert_eq!((between.file.added, between.file.removed), (1, 1));
    let changed: Vec<&str> = between.file.hunks[0]
        .lines
        .iter()
        .filter(|l| l.kind != LineKind::Context)
        .map(|l| l.text.as_str())
        .collect();
    assert_eq!(changed, vec![latest[5].trim_end(), "sixth, edited"]);
    assert!(matches!(
        history.diff_file(
            DiffPoint::Checkpoint(1),
            DiffPoint::Checkpoint(2),
            "small.txt"
        ),
        Err(bosun_workspace::WorkspaceError::NotChanged { .. })
    ));
}

#[test]
fn a_file_that_became_a_symlink_is_one_whole_file_hunk() {
    let r = repo_with(&[("target.txt", b"t\n"), ("link", b"was a file\n")]);
    let mut t = task(&r, "t1");
    std::fs::remove_file(t.worktree.join("link")).unwrap();
    std::os::unix::fs::symlink("target.txt", t.worktree.join("link")).unwrap();
    step(&mut t, "link");
    let files = t.history().unwrap().review_files(true).unwrap();
    assert_eq!(files[0].status, FileStatus::TypeChanged);
    assert_eq!(files[0].hunks.len(), 1);
    assert_eq!(files[0].hunks[0].kind, HunkKind::Binary);
    let ids = hunk_ids(&t, "link");
    t.history()
        .unwrap()
        .merge(&plan("review"), &set(&[&ids[0]]))
        .unwrap();
    assert_eq!(
        tree(&r.repo, "review"),
        expected_tree(
            &r.repo,
            &r.base,
            &[("link", Some((b"target.txt", "120000")))]
        )
    );
    t.reject_hunks("link", &ids, "keep the file").unwrap();
    let meta = std::fs::symlink_metadata(t.worktree.join("link")).unwrap();
    assert!(meta.is_file());
    assert_eq!(
        std::fs::read(t.worktree.join("link")).unwrap(),
        b"was a file\n"
    );
}
