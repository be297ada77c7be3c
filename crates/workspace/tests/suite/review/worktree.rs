//! What review does to the task's worktree and the user's repository: undoing a reject, stable
//! ids, provenance, rebase, removal — and the user's checkout left alone throughout.

use super::super::fixture::{fixture, user_state};
use super::*;
use bosun_protocol::MergeMode;
use bosun_workspace::{DiffPoint, MergePlan, TaskHistory, WorkspaceError, delete_history};
use pretty_assertions::assert_eq;
use std::collections::BTreeMap;

fn edit_lines(base: &[String], edits: &[(usize, &str)]) -> Vec<u8> {
    let mut out = base.to_vec();
    for (line, text) in edits {
        out[line - 1] = text.to_string();
    }
    join(&out)
}

#[test]
fn unreject_right_after_a_reject_restores_the_file_byte_exactly() {
    let base = lines(30);
    let r = repo_with(&[("old.txt", &join(&base))]);
    let mut t = task(&r, "t1");
    std::fs::remove_file(t.worktree.join("old.txt")).unwrap();
    let latest = edit_lines(&base, &[(3, "L3\r\n"), (20, "L20")]);
    put(&t.worktree, "new.txt", &latest);
    chmod(&t.worktree, "new.txt", 0o755);
    step(&mut t, "move");
    let ids = hunk_ids(&t, "new.txt");
    assert_eq!(ids.len(), 4, "rename, mode, two text hunks");
    let before = tree(&r.repo, "refs/bosun/t1/1");
    let rejection = t
        .reject_hunks(
            "new.txt",
            &[ids[0].clone(), ids[1].clone(), ids[3].clone()],
            "r",
        )
        .unwrap();
    let n = rejection.checkpoint.as_ref().unwrap().n;
    assert!(t.worktree.join("old.txt").exists());
    let cp = t
        .unreject_hunks("new.txt", &rejection.hunks, Some(n), "undo")
        .unwrap()
        .unwrap();
    assert_eq!(tree(&r.repo, &cp.commit), before);
    assert_eq!(std::fs::read(t.worktree.join("new.txt")).unwrap(), latest);
    assert!(!t.worktree.join("old.txt").exists());
    assert_eq!(hunk_ids(&t, "new.txt"), ids);
}

#[test]
fn unreject_after_the_agent_edited_elsewhere_puts_the_hunk_back_where_it_fits() {
    let base = lines(30);
    let r = repo_with(&[("f.txt", &join(&base))]);
    let mut t = task(&r, "t1");
    put(&t.worktree, "f.txt", &edit_lines(&base, &[(20, "L20\n")]));
    step(&mut t, "edit");
    let ids = hunk_ids(&t, "f.txt");
    let rejection = t.reject_hunks("f.txt", &ids, "reject").unwrap();
    let n = rejection.checkpoint.as_ref().unwrap().n;
    // The agent inserts two lines at the top: the hunk's lines move down.
    let mut shifted = vec!["new a\n".to_string(), "new b\n".to_string()];
    shifted.extend(base.iter().cloned());
    put(&t.worktree, "f.txt", &join(&shifted));
    step(&mut t, "agent");
    t.unreject_hunks("f.txt", &rejection.hunks, Some(n), "undo")
        .unwrap()
        .unwrap();
    let mut expected = shifted.clone();
    expected[21] = "L20\n".to_string();
    assert_eq!(
        std::fs::read(t.worktree.join("f.txt")).unwrap(),
        join(&expected)
    );

    // When the agent rewrote those lines, the hunk no longer fits.
    let rejection = t.reject_hunks("f.txt", &hunk_ids(&t, "f.txt")[1..], "again");
    let rejection = rejection.unwrap();
    let n = rejection.checkpoint.as_ref().unwrap().n;
    put(&t.worktree, "f.txt", b"rewritten\n");
    step(&mut t, "rewrite");
    let err = t
        .unreject_hunks("f.txt", &rejection.hunks, Some(n), "undo")
        .unwrap_err();
    assert!(
        matches!(err, WorkspaceError::HunkDoesNotApply { .. }),
        "{err:?}"
    );
    assert_eq!(
        std::fs::read(t.worktree.join("f.txt")).unwrap(),
        b"rewritten\n"
    );
}

#[test]
fn ids_stay_stable_when_another_hunk_is_rejected_and_unknown_ids_are_refused() {
    let base = lines(40);
    let r = repo_with(&[("f.txt", &join(&base))]);
    let mut t = task(&r, "t1");
    put(
        &t.worktree,
        "f.txt",
        &edit_lines(&base, &[(2, "A\n"), (15, "B\n"), (30, "A\n")]),
    );
    step(&mut t, "edit");
    let ids = hunk_ids(&t, "f.txt");
    assert_eq!(ids.len(), 3);
    assert_ne!(ids[0], ids[2], "identical changes are told apart");
    t.reject_hunks("f.txt", &[ids[1].clone()], "r").unwrap();
    assert_eq!(hunk_ids(&t, "f.txt"), vec![ids[0].clone(), ids[2].clone()]);
    let err = t
        .reject_hunks("f.txt", &["nope".to_string()], "r")
        .unwrap_err();
    assert!(
        matches!(&err, WorkspaceError::NoSuchHunk { available: 2, .. }),
        "{err:?}"
    );
    let err = t.reject_hunks("other.txt", &[], "r").unwrap_err();
    assert!(matches!(err, WorkspaceError::NotChanged { .. }), "{err:?}");
}

#[test]
fn provenance_names_the_checkpoints_that_made_each_hunk() {
    let base = lines(30);
    let r = repo_with(&[("f.txt", &join(&base))]);
    let mut t = task(&r, "t1");
    put(
        &t.worktree,
        "f.txt",
        &edit_lines(&base, &[(2, "L2\n"), (20, "L20\n")]),
    );
    step(&mut t, "one");
    put(
        &t.worktree,
        "f.txt",
        &edit_lines(&base, &[(2, "L2\n"), (10, "L10\n"), (20, "M20\n")]),
    );
    step(&mut t, "two");
    let files = t.history().unwrap().review_files(false).unwrap();
    let provenance: Vec<(String, Vec<u32>)> = files[0]
        .hunks
        .iter()
        .map(|h| {
            (
                h.header.clone(),
                h.provenance.iter().map(|p| p.checkpoint).collect(),
            )
        })
        .collect();
    assert_eq!(
        provenance,
        [
            ("@@ -1,5 +1,5 @@".to_string(), vec![1]),
            ("@@ -7,7 +7,7 @@".to_string(), vec![2]),
            // l20 went in checkpoint 1, M20 came in checkpoint 2.
            ("@@ -17,7 +17,7 @@".to_string(), vec![1, 2]),
        ]
    );
}

#[test]
fn comments_are_resolved_only_by_later_changes_to_their_lines() {
    let base = lines(30);
    let r = repo_with(&[("f.txt", &join(&base))]);
    let mut t = task(&r, "t1");
    put(&t.worktree, "f.txt", &edit_lines(&base, &[(1, "L1\n")]));
    step(&mut t, "one");
    let h = t.history().unwrap();
    // Comment on lines 5-6 as of checkpoint 1, sent then.
    assert!(
        !h.lines_changed_after("f.txt", Some(1), 5, 6, Some(1))
            .unwrap()
    );
    // Three lines inserted at the top, then line 20 edited: lines 5-6 untouched.
    let mut shifted = vec!["x\n".to_string(), "y\n".to_string(), "z\n".to_string()];
    shifted.extend(base.iter().cloned());
    put(&t.worktree, "f.txt", &join(&shifted));
    step(&mut t, "two");
    assert!(
        !h.lines_changed_after("f.txt", Some(1), 5, 6, Some(1))
            .unwrap()
    );
    // Line 6 (now line 9) edited.
    shifted[8] = "changed\n".to_string();
    put(&t.worktree, "f.txt", &join(&shifted));
    step(&mut t, "three");
    assert!(
        h.lines_changed_after("f.txt", Some(1), 5, 6, Some(1))
            .unwrap()
    );
    // Sent after that change: not resolved by it.
    assert!(
        !h.lines_changed_after("f.txt", Some(1), 5, 6, Some(3))
            .unwrap()
    );
}

#[test]
fn rebase_moves_the_task_onto_the_new_base_with_conflict_markers_where_needed() {
    let r = repo_with(&[("a.txt", b"one\ntwo\nthree\n"), ("b.txt", b"bee\n")]);
    let mut t = task(&r, "t1");
    put(&t.worktree, "a.txt", b"ONE\ntwo\nthree\n");
    put(&t.worktree, "c.txt", b"new\n");
    step(&mut t, "edit");
    put(&r.repo, "b.txt", b"BEE\n");
    git(&r.repo, &["commit", "-q", "-am", "user"]);
    let main = git(&r.repo, &["rev-parse", "main"]).trim().to_string();
    let before = checkout(&r.repo);

    let rebased = t.rebase("main").unwrap();
    assert_eq!(rebased.new_base, main);
    assert_eq!(rebased.old_base, r.base);
    assert!(rebased.conflicts.is_empty());
    assert_eq!(t.base_commit, main);
    assert_eq!(checkout(&r.repo), before);
    assert_eq!(git(&t.worktree, &["rev-parse", "HEAD"]).trim(), main);
    assert_eq!(
        git(&t.worktree, &["status", "--porcelain"]),
        " M a.txt\n?? c.txt\n"
    );
    assert_eq!(std::fs::read(t.worktree.join("b.txt")).unwrap(), b"BEE\n");
    let cp = rebased.checkpoint.unwrap();
    assert_eq!(
        git(&r.repo, &["rev-parse", &format!("{}~1", cp.commit)]).trim(),
        git(&r.repo, &["rev-parse", "refs/bosun/t1/1"]).trim(),
        "the checkpoint chain continues"
    );
    let files = t
        .history()
        .unwrap()
        .diff_files(DiffPoint::Base, DiffPoint::Latest, false)
        .unwrap();
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["a.txt", "c.txt"]);

    // Now the user changes the task's line: conflict markers in the worktree.
    put(&r.repo, "a.txt", b"uno\ntwo\nthree\n");
    git(&r.repo, &["commit", "-q", "-am", "user edits a"]);
    let rebased = t.rebase("main").unwrap();
    assert_eq!(rebased.conflicts, ["a.txt"]);
    let text = std::fs::read_to_string(t.worktree.join("a.txt")).unwrap();
    assert!(
        text.starts_with("<<<<<<< base\nuno\n=======\nONE\n>>>>>>> task\n"),
        "{text}"
    );
    assert_eq!(
        git(&t.worktree, &["status", "--porcelain"]),
        " M a.txt\n?? c.txt\n"
    );
}

#[test]
fn remove_deletes_worktree_and_branch_but_keeps_checkpoints_until_history_is_deleted() {
    let r = repo_with(&[("a.txt", b"one\n")]);
    let mut t = task(&r, "t1");
    put(&t.worktree, "a.txt", b"ONE\n");
    step(&mut t, "edit");
    let wt = t.worktree.clone();
    let freed = t.remove().unwrap();
    assert!(freed > 0);
    assert!(!wt.exists());
    assert_eq!(git(&r.repo, &["branch", "--list", "bosun/t1"]), "");
    // (The worktree's path, not "t1": a temporary directory's random name may contain that.)
    assert!(!git(&r.repo, &["worktree", "list"]).contains(wt.to_str().unwrap()));
    assert_eq!(
        git(
            &r.repo,
            &["for-each-ref", "--format=%(refname)", "refs/bosun/t1"]
        ),
        "refs/bosun/t1/1\n"
    );
    let history = TaskHistory::open(&r.repo, "t1", &r.base).unwrap();
    assert_eq!(history.review_files(false).unwrap().len(), 1);
    delete_history(&r.home, &r.repo, "t1").unwrap();
    assert_eq!(
        git(&r.repo, &["for-each-ref", "refs/bosun/t1"]),
        "",
        "checkpoints deleted"
    );
}

#[test]
fn the_users_checkout_is_untouched_by_reject_merge_elsewhere_export_rebase_and_remove() {
    let f = fixture();
    let before = user_state(&f.repo);
    let mut t = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    put(
        &t.worktree,
        "src/lib.rs",
        b"pub fn one() -> u32 { 11 }\npub fn two() -> u32 { 2 }\n",
    );
    put(&t.worktree, "README.md", b"# task\n");
    step(&mut t, "edit");
    let ids = hunk_ids(&t, "README.md");
    t.reject_hunks("README.md", &ids, "reject").unwrap();
    let history = t.history().unwrap();
    let accepted = hunk_ids(&t, "src/lib.rs").into_iter().collect();
    history.export_patch(&accepted).unwrap();
    history.accepted_tree(&accepted).unwrap();
    t.rebase(&f.base).unwrap();
    let plan = MergePlan {
        into: "bosun-review".to_string(),
        mode: MergeMode::Squash,
        message: "m".to_string(),
        step_messages: BTreeMap::new(),
    };
    let outcome = history.merge(&plan, &accepted).unwrap();
    assert!(!outcome.checked_out && outcome.created);
    git(&f.repo, &["branch", "-D", "bosun-review"]);
    t.remove().unwrap();
    assert_eq!(user_state(&f.repo), before);
}

#[test]
fn after_a_rebase_the_task_merges_onto_the_moved_branch_keeping_the_users_commit() {
    let r = repo_with(&[("a.txt", b"one\n"), ("b.txt", b"bee\n")]);
    let mut t = task(&r, "t1");
    put(&t.worktree, "a.txt", b"ONE\n");
    step(&mut t, "edit");
    put(&r.repo, "b.txt", b"BEE\n");
    git(&r.repo, &["commit", "-q", "-am", "user"]);
    let main = git(&r.repo, &["rev-parse", "main"]).trim().to_string();
    t.rebase("main").unwrap();
    let history = t.history().unwrap();
    assert_eq!(history.base_commit, main);
    let files = history.review_files(false).unwrap();
    assert_eq!(files.len(), 1, "only the task's own change is listed");
    let accepted = hunk_ids(&t, "a.txt").into_iter().collect();
    let plan = MergePlan {
        into: "main".to_string(),
        mode: MergeMode::Squash,
        message: "task".to_string(),
        step_messages: BTreeMap::new(),
    };
    let outcome = history.merge(&plan, &accepted).unwrap();
    assert!(outcome.checked_out);
    assert_eq!(git(&r.repo, &["rev-parse", "main~1"]).trim(), main);
    assert_eq!(
        tree(&r.repo, "main"),
        expected_tree(&r.repo, &main, &[("a.txt", Some((b"ONE\n", "100644")))])
    );
}

#[test]
fn diff_files_compares_any_two_checkpoints() {
    let r = repo_with(&[("a.txt", b"one\n")]);
    let mut t = task(&r, "t1");
    put(&t.worktree, "a.txt", b"two\n");
    step(&mut t, "one");
    put(&t.worktree, "b.txt", b"bee\n");
    step(&mut t, "two");
    let history = t.history().unwrap();
    let between = history
        .diff_files(DiffPoint::Checkpoint(1), DiffPoint::Checkpoint(2), true)
        .unwrap();
    assert_eq!(between.len(), 1);
    assert_eq!(between[0].path, "b.txt");
    assert_eq!(between[0].hunks[0].lines[0].text, "bee");
    let err = history
        .diff_files(DiffPoint::Base, DiffPoint::Checkpoint(9), false)
        .unwrap_err();
    assert!(
        matches!(
            err,
            WorkspaceError::NoSuchCheckpoint {
                n: 9,
                available: 2,
                ..
            }
        ),
        "{err:?}"
    );
}
