use super::fixture::*;
use bosun_workspace::{ChangeHint, TaskWorktree, worktree_disk_usage};
use pretty_assertions::assert_eq;

fn paths(p: &[&str]) -> ChangeHint {
    ChangeHint::Paths(p.iter().map(|s| s.to_string()).collect())
}

fn worktree_list(repo: &std::path::Path) -> Vec<(String, String)> {
    let text = git(repo, &["worktree", "list", "--porcelain"]);
    let mut out = Vec::new();
    let mut path = String::new();
    for line in text.lines() {
        if let Some(p) = line.strip_prefix("worktree ") {
            path = p.to_string();
        } else if let Some(b) = line.strip_prefix("branch ") {
            out.push((path.clone(), b.to_string()));
        }
    }
    out
}

#[test]
fn a_later_task_recycles_a_released_worktree_and_the_first_can_come_back() {
    let f = fixture();
    let before = user_state(&f.repo);
    let first_commit = git(&f.repo, &["rev-parse", "HEAD~1"]).trim().to_string();
    let mut t1 = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let wt1 = t1.worktree.clone();
    write(&wt1, "feature.rs", "fn feature() {}\n");
    t1.checkpoint(&paths(&["feature.rs"]), "feature")
        .unwrap()
        .unwrap();
    write(&wt1, "target/cache", "ignored build output\n");
    write(&wt1, "late.txt", "written after the last checkpoint\n");
    let t1_tree_expected = independent_tree(&wt1, &f.base);
    t1.release().unwrap();
    // Release saved the final state.
    assert_eq!(tree_of(&f.repo, "refs/bosun/t1/2"), t1_tree_expected);
    let usage = worktree_disk_usage(&f.home).unwrap();
    assert_eq!((usage.idle_count, usage.in_use_count), (1, 0));
    assert!(usage.idle_bytes > 0);

    // A later task on another base reuses that worktree.
    let mut t2 = TaskWorktree::create(&f.home, &f.repo, "t2", &first_commit).unwrap();
    assert!(!wt1.exists());
    assert_eq!(t2.worktree.file_name().unwrap(), "t2");
    assert_eq!(
        git(&t2.worktree, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "bosun/t2"
    );
    assert_eq!(
        git(&t2.worktree, &["rev-parse", "HEAD"]).trim(),
        first_commit
    );
    assert_eq!(git(&t2.worktree, &["status", "--porcelain"]), "");
    assert_eq!(
        independent_tree(&t2.worktree, &first_commit),
        tree_of(&f.repo, &first_commit)
    );
    assert!(!t2.worktree.join("feature.rs").exists());
    assert_eq!(
        t2.checkpoint(&ChangeHint::Unknown, "nothing").unwrap(),
        None
    );
    // Task worktrees are not linked worktrees of the user's repository: nothing of them is
    // registered in its .git, so `git worktree list`/`prune` there never see them.
    let list = worktree_list(&f.repo);
    assert_eq!(list.len(), 1, "only the user's own checkout: {list:?}");
    assert_eq!(
        git(&t2.worktree, &["rev-parse", "--git-dir"]).trim(),
        repo_dir(&f.home, "workspace")
            .join("tasks/t2/git")
            .display()
            .to_string()
    );
    write(&t2.worktree, "t2.txt", "t2\n");
    t2.checkpoint(&paths(&["t2.txt"]), "t2").unwrap().unwrap();
    assert_eq!(
        tree_of(&f.repo, "refs/bosun/t2/1"),
        independent_tree(&t2.worktree, &first_commit)
    );

    // Opening the first task again re-materialises its worktree from its latest checkpoint.
    let mut t1 = TaskWorktree::open(&f.home, &f.repo, "t1", &wt1, &f.base).unwrap();
    assert_eq!(
        std::fs::read_to_string(wt1.join("late.txt")).unwrap(),
        "written after the last checkpoint\n"
    );
    assert_eq!(independent_tree(&wt1, &f.base), t1_tree_expected);
    assert_eq!(
        git(&wt1, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "bosun/t1"
    );
    assert_eq!(
        t1.checkpoint(&ChangeHint::Unknown, "nothing").unwrap(),
        None
    );
    assert_eq!(t1.checkpoints().unwrap().len(), 2);
    assert_eq!(user_state(&f.repo), before);
}

#[test]
fn idle_worktrees_are_bounded_per_repository() {
    let f = fixture();
    // Three tasks alive at once, so none recycles another's worktree; then all finish.
    let mut tasks = Vec::new();
    for id in ["a", "b", "c"] {
        let mut t = TaskWorktree::create(&f.home, &f.repo, id, &f.base).unwrap();
        write(&t.worktree, "x.txt", id);
        t.checkpoint(&paths(&["x.txt"]), "x").unwrap();
        tasks.push(t);
    }
    for t in tasks {
        t.release().unwrap();
    }
    let usage = worktree_disk_usage(&f.home).unwrap();
    assert_eq!((usage.idle_count, usage.in_use_count), (2, 0));
    assert_eq!(
        worktree_list(&f.repo).len(),
        1,
        "nothing registered in the user's repo"
    );
    // The removed one's history is intact.
    assert_eq!(git(&f.repo, &["show", "refs/bosun/a/1:x.txt"]), "a");
}
