use super::fixture::*;
use bosun_workspace::{
    ChangeHint, DiffPoint, TaskWorktree, WorkspaceError, resolve_base, resolve_repo,
};

#[test]
fn resolving_repositories_and_bases() {
    let f = fixture();
    assert_eq!(resolve_repo(&f.repo.join("src/deep")).unwrap(), f.repo);
    assert_eq!(resolve_base(&f.repo, None).unwrap(), f.base);
    assert_eq!(resolve_base(&f.repo, Some("main")).unwrap(), f.base);
    assert_eq!(resolve_base(&f.repo, Some(&f.base[..8])).unwrap(), f.base);

    let tmp = tempfile::tempdir().unwrap();
    let err = resolve_repo(tmp.path()).unwrap_err();
    assert!(
        matches!(err, WorkspaceError::NotARepository { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("not inside a git repository"));

    let bare = tmp.path().join("bare.git");
    std::fs::create_dir(&bare).unwrap();
    git(&bare, &["init", "-q", "--bare"]);
    assert!(matches!(
        resolve_repo(&bare),
        Err(WorkspaceError::BareRepository { .. })
    ));

    let err = resolve_base(&f.repo, Some("no-such-branch")).unwrap_err();
    assert!(matches!(err, WorkspaceError::UnknownBase { .. }), "{err}");
    assert!(err.to_string().contains("no-such-branch"));

    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    git(&empty, &["init", "-q"]);
    assert!(matches!(
        resolve_base(&empty, None),
        Err(WorkspaceError::UnbornHead { .. })
    ));
    assert!(matches!(
        TaskWorktree::create(
            &f.home,
            &empty,
            "t",
            "0123456789abcdef0123456789abcdef01234567"
        ),
        Err(WorkspaceError::UnknownBase { .. })
    ));
}

#[test]
fn bad_task_ids_paths_and_checkpoint_numbers_are_refused() {
    let f = fixture();
    assert!(matches!(
        TaskWorktree::create(&f.home, &f.repo, "../escape", &f.base),
        Err(WorkspaceError::InvalidTaskId(_))
    ));
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    for bad in ["../outside", "/etc/passwd", ".git/config"] {
        let err = task
            .checkpoint(&ChangeHint::Paths(vec![bad.into()]), "x")
            .unwrap_err();
        assert!(
            matches!(err, WorkspaceError::InvalidPath { .. }),
            "{bad}: {err}"
        );
    }
    let err = task.restore(7).unwrap_err();
    assert!(
        matches!(
            err,
            WorkspaceError::NoSuchCheckpoint {
                n: 7,
                available: 0,
                ..
            }
        ),
        "{err}"
    );
    assert!(
        task.diff(DiffPoint::Checkpoint(3), DiffPoint::Latest, false)
            .is_err()
    );
    assert!(matches!(
        TaskWorktree::create(&f.home, &f.repo, "t1", &f.base),
        Err(WorkspaceError::TaskExists { .. })
    ));
}

#[test]
fn a_vanished_worktree_is_reported_and_reopening_brings_it_back() {
    let f = fixture();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "t1", &f.base).unwrap();
    let wt = task.worktree.clone();
    write(&wt, "keep.txt", "kept\n");
    task.checkpoint(&ChangeHint::Paths(vec!["keep.txt".into()]), "keep")
        .unwrap()
        .unwrap();
    std::fs::remove_dir_all(&wt).unwrap();
    let err = task.checkpoint(&ChangeHint::Unknown, "x").unwrap_err();
    assert!(
        matches!(err, WorkspaceError::WorktreeVanished { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("open the task again"));
    drop(task);
    let task = TaskWorktree::open(&f.home, &f.repo, "t1", &wt, &f.base).unwrap();
    assert_eq!(
        std::fs::read_to_string(wt.join("keep.txt")).unwrap(),
        "kept\n"
    );
    assert_eq!(task.checkpoints().unwrap().len(), 1);
}
