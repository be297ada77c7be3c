//! Merging the accepted hunks into a branch, and exporting them as a patch.

use super::*;
use bosun_protocol::MergeMode;
use bosun_workspace::{MergePlan, WorkspaceError};
use pretty_assertions::assert_eq;
use std::collections::BTreeMap;

fn plan(into: &str, mode: MergeMode) -> MergePlan {
    MergePlan {
        into: into.to_string(),
        mode,
        message: "Accepted changes".to_string(),
        step_messages: BTreeMap::new(),
    }
}

#[test]
fn merging_into_the_checked_out_branch_needs_a_clean_checkout_and_then_updates_it() {
    let r = repo_with(&[("a.txt", b"one\n"), ("b.txt", b"two\n")]);
    let mut t = task(&r, "t1");
    put(&t.worktree, "a.txt", b"ONE\n");
    step(&mut t, "edit");
    let history = t.history().unwrap();
    let accepted: std::collections::HashSet<String> = hunk_ids(&t, "a.txt").into_iter().collect();

    // An unstaged edit, then a staged one: refused, nothing touched.
    for staged in [false, true] {
        put(&r.repo, "b.txt", b"user's own edit\n");
        if staged {
            git(&r.repo, &["add", "b.txt"]);
        }
        let before = checkout(&r.repo);
        let err = history
            .merge(&plan("main", MergeMode::Squash), &accepted)
            .unwrap_err();
        match &err {
            WorkspaceError::DirtyCheckout { branch, paths, .. } => {
                assert_eq!(branch, "main");
                assert_eq!(paths, &["b.txt".to_string()]);
            }
            other => panic!("expected DirtyCheckout, got {other:?}"),
        }
        assert!(err.to_string().contains("uncommitted changes"), "{err}");
        assert_eq!(checkout(&r.repo), before);
        git(&r.repo, &["reset", "-q", "--hard"]);
    }

    let outcome = history
        .merge(&plan("main", MergeMode::Squash), &accepted)
        .unwrap();
    assert!(outcome.checked_out);
    assert!(!outcome.created);
    assert_eq!(outcome.commits.len(), 1);
    assert_eq!(
        git(&r.repo, &["rev-parse", "HEAD"]).trim(),
        outcome.commits[0]
    );
    assert_eq!(git(&r.repo, &["rev-parse", "HEAD~1"]).trim(), r.base);
    assert_eq!(git(&r.repo, &["status", "--porcelain"]), "");
    assert_eq!(std::fs::read(r.repo.join("a.txt")).unwrap(), b"ONE\n");
    assert_eq!(
        std::fs::read_to_string(r.repo.join(".git/HEAD")).unwrap(),
        "ref: refs/heads/main\n"
    );
    assert_eq!(
        git(&r.repo, &["log", "-1", "--format=%s"]).trim(),
        "Accepted changes"
    );
}

#[test]
fn a_moved_base_merges_when_the_change_still_applies_and_refuses_on_conflict() {
    let r = repo_with(&[("a.txt", b"one\ntwo\nthree\n"), ("b.txt", b"bee\n")]);
    let mut t = task(&r, "t1");
    put(&t.worktree, "a.txt", b"ONE\ntwo\nthree\n");
    step(&mut t, "edit");
    let accepted: std::collections::HashSet<String> = hunk_ids(&t, "a.txt").into_iter().collect();
    let history = t.history().unwrap();

    // The user commits on `other` (not checked out) something unrelated.
    git(&r.repo, &["branch", "other"]);
    git(&r.repo, &["checkout", "-q", "other"]);
    put(&r.repo, "b.txt", b"BEE\n");
    git(&r.repo, &["commit", "-q", "-am", "user"]);
    let tip = git(&r.repo, &["rev-parse", "HEAD"]).trim().to_string();
    git(&r.repo, &["checkout", "-q", "main"]);
    let before = checkout(&r.repo);
    let outcome = history
        .merge(&plan("other", MergeMode::Squash), &accepted)
        .unwrap();
    assert!(!outcome.checked_out);
    assert_eq!(
        tree(&r.repo, "other"),
        expected_tree(
            &r.repo,
            &tip,
            &[("a.txt", Some((b"ONE\ntwo\nthree\n", "100644")))]
        )
    );
    assert_eq!(git(&r.repo, &["rev-parse", "other~1"]).trim(), tip);
    assert_eq!(checkout(&r.repo), before);

    // The user changes the same line on main: a conflict, main untouched.
    put(&r.repo, "a.txt", b"uno\ntwo\nthree\n");
    git(&r.repo, &["commit", "-q", "-am", "user edits a"]);
    let before = checkout(&r.repo);
    let err = history
        .merge(&plan("main", MergeMode::Squash), &accepted)
        .unwrap_err();
    match &err {
        WorkspaceError::MergeConflict { branch, paths } => {
            assert_eq!(branch, "main");
            assert_eq!(paths, &["a.txt".to_string()]);
        }
        other => panic!("expected MergeConflict, got {other:?}"),
    }
    assert!(err.to_string().contains("Rebase the task"), "{err}");
    assert_eq!(checkout(&r.repo), before);
}

#[test]
fn nothing_accepted_is_nothing_to_merge() {
    let r = repo_with(&[("a.txt", b"one\n")]);
    let mut t = task(&r, "t1");
    put(&t.worktree, "a.txt", b"ONE\n");
    step(&mut t, "edit");
    let err = t
        .history()
        .unwrap()
        .merge(&plan("review", MergeMode::Squash), &Default::default())
        .unwrap_err();
    assert!(matches!(err, WorkspaceError::NothingToMerge), "{err:?}");
    assert_eq!(
        git(&r.repo, &["branch", "--list", "review"]),
        "",
        "no branch created"
    );
}

#[test]
fn per_step_merge_writes_a_commit_per_checkpoint_with_its_hunks() {
    let base = lines(30);
    let r = repo_with(&[("f.txt", &join(&base)), ("g.txt", b"g\n")]);
    git(&r.repo, &["config", "user.name", "Ada"]);
    git(&r.repo, &["config", "user.email", "ada@example.com"]);
    let mut t = task(&r, "t1");
    let mut first = base.clone();
    first[1] = "L2\n".to_string();
    put(&t.worktree, "f.txt", &join(&first));
    step(&mut t, "one");
    let mut second = first.clone();
    second[24] = "L25\n".to_string();
    put(&t.worktree, "f.txt", &join(&second));
    put(&t.worktree, "g.txt", b"G\n");
    step(&mut t, "two");
    let files = t.history().unwrap().review_files(false).unwrap();
    let provenance: Vec<Vec<u32>> = files
        .iter()
        .flat_map(|f| f.hunks.iter())
        .map(|h| h.provenance.iter().map(|p| p.checkpoint).collect())
        .collect();
    assert_eq!(provenance, [vec![1], vec![2], vec![2]]);

    let mut accepted: std::collections::HashSet<String> =
        hunk_ids(&t, "f.txt").into_iter().collect();
    accepted.extend(hunk_ids(&t, "g.txt"));
    let mut p = plan("review", MergeMode::PerStep);
    p.step_messages.insert(1, "Step one".to_string());
    p.step_messages.insert(2, "Step two".to_string());
    let outcome = t.history().unwrap().merge(&p, &accepted).unwrap();
    assert_eq!(outcome.commits.len(), 2);
    assert_eq!(
        git(&r.repo, &["log", "--format=%s|%an <%ae>", "main..review"]),
        "Step two|Ada <ada@example.com>\nStep one|Ada <ada@example.com>\n"
    );
    assert_eq!(
        tree(&r.repo, &outcome.commits[0]),
        expected_tree(
            &r.repo,
            &r.base,
            &[("f.txt", Some((&join(&first), "100644")))]
        )
    );
    assert_eq!(
        tree(&r.repo, &outcome.commits[1]),
        expected_tree(
            &r.repo,
            &r.base,
            &[
                ("f.txt", Some((&join(&second), "100644"))),
                ("g.txt", Some((b"G\n", "100644")))
            ]
        )
    );
}

#[test]
fn the_exported_patch_applies_with_git_apply_to_give_the_accepted_tree() {
    let base = lines(30);
    let r = repo_with(&[
        ("f.txt", &join(&base)),
        ("old.txt", &join(&lines(20))),
        ("run.sh", b"#!/bin/sh\n"),
        ("img.bin", b"\0\x01\x02"),
        ("gone.txt", b"bye\n"),
        ("link", b"a file\n"),
    ]);
    let mut t = task(&r, "t1");
    let wt = t.worktree.clone();
    let mut edited = base.clone();
    edited[1] = "L2\n".to_string();
    edited[24] = "L25\n".to_string();
    put(&wt, "f.txt", &join(&edited));
    std::fs::remove_file(wt.join("old.txt")).unwrap();
    let mut moved = lines(20);
    moved[0] = "first\n".to_string();
    put(&wt, "new.txt", &join(&moved));
    chmod(&wt, "run.sh", 0o755);
    put(&wt, "img.bin", b"\0\x09\x09\x09");
    put(&wt, "added.bin", b"\x01\0\x02");
    put(&wt, "empty.txt", b"");
    std::fs::remove_file(wt.join("gone.txt")).unwrap();
    std::fs::remove_file(wt.join("link")).unwrap();
    std::os::unix::fs::symlink("f.txt", wt.join("link")).unwrap();
    step(&mut t, "everything");
    let history = t.history().unwrap();
    let mut accepted = std::collections::HashSet::new();
    for f in history.review_files(false).unwrap() {
        for h in f.hunks {
            // Leave the second hunk of f.txt unreviewed.
            if !(f.path == "f.txt" && h.number == 2) {
                accepted.insert(h.id);
            }
        }
    }
    let accepted_tree = history.accepted_tree(&accepted).unwrap();
    assert_eq!(accepted_tree.left_out, 1);
    let patch = history.export_patch(&accepted).unwrap();
    let text = String::from_utf8_lossy(&patch);
    assert!(text.contains("GIT binary patch"), "{text}");
    assert!(text.contains("rename from old.txt"), "{text}");

    let tmp = tempfile::tempdir().unwrap();
    let clone = tmp.path().join("clone");
    git(
        tmp.path(),
        &["clone", "-q", r.repo.to_str().unwrap(), "clone"],
    );
    let file = tmp.path().join("task.patch");
    std::fs::write(&file, &patch).unwrap();
    git(&clone, &["apply", "--index", file.to_str().unwrap()]);
    assert_eq!(git(&clone, &["write-tree"]).trim(), accepted_tree.tree);
    let mut expected = base.clone();
    expected[1] = "L2\n".to_string();
    assert_eq!(std::fs::read(clone.join("f.txt")).unwrap(), join(&expected));
}

#[test]
fn a_branch_checked_out_in_a_linked_worktree_is_updated_there_only_when_clean() {
    let r = repo_with(&[("a.txt", b"one\n")]);
    let mut t = task(&r, "t1");
    put(&t.worktree, "a.txt", b"ONE\n");
    step(&mut t, "edit");
    let accepted: std::collections::HashSet<String> = hunk_ids(&t, "a.txt").into_iter().collect();
    let tmp = tempfile::tempdir().unwrap();
    let linked = tmp.path().join("linked");
    git(
        &r.repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feature",
            linked.to_str().unwrap(),
        ],
    );
    put(&linked, "a.txt", b"dirty\n");
    let err = t
        .history()
        .unwrap()
        .merge(&plan("feature", MergeMode::Squash), &accepted)
        .unwrap_err();
    assert!(
        matches!(err, WorkspaceError::DirtyCheckout { .. }),
        "{err:?}"
    );
    git(&linked, &["checkout", "-q", "--", "a.txt"]);
    let before = checkout(&r.repo);
    let outcome = t
        .history()
        .unwrap()
        .merge(&plan("feature", MergeMode::Squash), &accepted)
        .unwrap();
    assert!(outcome.checked_out);
    assert_eq!(std::fs::read(linked.join("a.txt")).unwrap(), b"ONE\n");
    assert_eq!(git(&linked, &["status", "--porcelain"]), "");
    assert_eq!(checkout(&r.repo), before, "the main checkout is untouched");
}

#[test]
fn an_untracked_file_where_the_merge_writes_refuses_the_merge_into_the_checkout() {
    let r = repo_with(&[("a.txt", b"one\n")]);
    let mut t = task(&r, "t1");
    put(&t.worktree, "new.txt", b"from the task\n");
    step(&mut t, "add");
    put(&r.repo, "new.txt", b"the user's own, untracked\n");
    let before = checkout(&r.repo);
    let accepted: std::collections::HashSet<String> = hunk_ids(&t, "new.txt").into_iter().collect();
    let err = t
        .history()
        .unwrap()
        .merge(&plan("main", MergeMode::Squash), &accepted)
        .unwrap_err();
    match &err {
        WorkspaceError::DirtyCheckout { paths, .. } => assert_eq!(paths, &["new.txt".to_string()]),
        other => panic!("expected DirtyCheckout, got {other:?}"),
    }
    assert_eq!(checkout(&r.repo), before);
}
