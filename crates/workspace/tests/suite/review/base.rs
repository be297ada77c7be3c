//! Whether the branch a task is based on moved: commits on it since the task started, a reset
//! or force-push that took the task's base off it, and the branch left alone.

use super::*;
use bosun_protocol::BaseMoved;
use bosun_workspace::TaskHistory;
use pretty_assertions::assert_eq;

fn user_commit(r: &Repo, path: &str, text: &str) -> String {
    put(&r.repo, path, text.as_bytes());
    git(&r.repo, &["add", path]);
    git(&r.repo, &["commit", "-q", "-m", &format!("user: {path}")]);
    git(&r.repo, &["rev-parse", "main"]).trim().to_string()
}

fn moved(r: &Repo, branch: &str) -> Option<BaseMoved> {
    TaskHistory::open(&r.repo, "t1", &r.base)
        .unwrap()
        .base_moved(branch)
        .unwrap()
}

#[test]
fn commits_to_main_after_the_task_started_are_counted() {
    let r = repo_with(&[("a.txt", b"one\n")]);
    let mut t = task(&r, "t1");
    put(&t.worktree, "a.txt", b"ONE\n");
    step(&mut t, "edit");
    let tip = user_commit(&r, "b.txt", "bee\n");
    assert_eq!(
        moved(&r, "main"),
        Some(BaseMoved {
            branch: "main".into(),
            base_commit: r.base.clone(),
            tip,
            ahead: 1,
            rewritten: false,
        })
    );
    user_commit(&r, "c.txt", "sea\n");
    // Packed refs are the user's refs too.
    git(&r.repo, &["pack-refs", "--all"]);
    let tip = user_commit(&r, "d.txt", "dee\n");
    let m = moved(&r, "refs/heads/main").unwrap();
    assert_eq!((m.ahead, m.rewritten, m.tip), (3, false, tip));
}

#[test]
fn a_main_reset_or_force_pushed_past_the_base_is_rewritten() {
    let r = repo_with(&[("a.txt", b"one\n")]);
    let _t = task(&r, "t1");
    // The base itself goes: main is reset to its parent-less replacement.
    git(&r.repo, &["checkout", "-q", "--orphan", "other"]);
    git(&r.repo, &["commit", "-q", "-m", "replacement"]);
    let replacement = git(&r.repo, &["rev-parse", "HEAD"]).trim().to_string();
    git(&r.repo, &["branch", "-f", "main", "HEAD"]);
    let m = moved(&r, "main").unwrap();
    assert_eq!((m.ahead, m.rewritten, m.tip), (1, true, replacement));

    // Reset behind the base: nothing new on main, and still the base is not on it.
    let r = repo_with(&[("a.txt", b"one\n")]);
    let first = r.base.clone();
    let tip = user_commit(&r, "b.txt", "bee\n");
    let r = Repo { base: tip, ..r };
    let _t = task(&r, "t1");
    git(&r.repo, &["reset", "-q", "--hard", &first]);
    let m = moved(&r, "main").unwrap();
    assert_eq!((m.ahead, m.rewritten, m.tip), (0, true, first));
}

#[test]
fn an_unchanged_branch_a_missing_one_and_a_task_rebased_onto_the_tip_have_not_moved() {
    let r = repo_with(&[("a.txt", b"one\n")]);
    let mut t = task(&r, "t1");
    put(&t.worktree, "a.txt", b"ONE\n");
    step(&mut t, "edit");
    assert_eq!(moved(&r, "main"), None);
    assert_eq!(moved(&r, "no-such-branch"), None);
    assert_eq!(moved(&r, "../main"), None, "not a branch name");

    user_commit(&r, "b.txt", "bee\n");
    t.rebase("main").unwrap();
    let history = t.history().unwrap();
    assert_eq!(history.base_moved("main").unwrap(), None);
}

#[test]
fn a_main_the_agent_moves_in_its_own_git_directory_is_not_the_users_main() {
    let r = repo_with(&[("a.txt", b"one\n")]);
    let mut t = task(&r, "t1");
    put(&t.worktree, "a.txt", b"agent\n");
    // The agent commits in the worktree and points a `main` of its own there.
    git(&t.worktree, &["commit", "-q", "-am", "agent"]);
    git(&t.worktree, &["branch", "-f", "main", "HEAD"]);
    step(&mut t, "agent");
    assert_eq!(moved(&r, "main"), None);
    assert_eq!(git(&r.repo, &["rev-parse", "main"]).trim(), r.base);
}
