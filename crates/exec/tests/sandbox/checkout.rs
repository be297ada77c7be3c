//! The user's checkout is out of reach: its files cannot be read however a path to them is
//! spelled, and git inside the worktree works on the task's own git dir only.

use super::fixture::*;

#[tokio::test]
async fn the_user_checkout_s_dotenv_cannot_be_read_through_a_glob_or_any_other_spelling() {
    let Some(fx) = Fixture::new() else { return };
    let repo = fx.repo.display();
    let attempts = [
        format!("cat {repo}/.en?"),
        format!("cat {repo}/.e*"),
        format!("cat '{repo}/.env'"),
        format!("cat '{repo}/./.env'"),
        "cat ../repo/.env".to_string(),
        format!("cd '{repo}' && cat .env"),
        format!("grep -r user-checkout-secret '{repo}'"),
        format!("find '{repo}' -name '.en*' -exec cat {{}} +"),
        format!("cp '{repo}/.env' stolen; cat stolen"),
        format!("ln -s '{repo}/.env' link; cat link"),
    ];
    for attempt in &attempts {
        let (_, text) = fx.run(&format!("{attempt} 2>&1; true")).await;
        assert!(
            !text.contains("user-checkout-secret"),
            "`{attempt}` read the user's .env: {text}"
        );
    }
    // Nor the user's other files (the task has its own copy of the tracked ones).
    let (_, text) = fx.run(&format!("cat '{repo}/README.md' 2>&1; true")).await;
    assert!(!text.starts_with("hello"), "{text}");
    let (outcome, text) = fx.run("cat README.md").await;
    assert!(outcome.success(), "{text}");
    assert_eq!(text, "hello\n");
}

#[tokio::test]
async fn git_status_add_and_commit_work_on_the_task_s_own_branch_only() {
    let Some(fx) = Fixture::new() else { return };
    let (outcome, text) = fx
        .run("echo change >> README.md && git status --short && git add README.md && git -c user.name=Agent -c user.email=agent@example.com commit -qm 'agent change' && git log --oneline | wc -l")
        .await;
    assert!(outcome.success(), "{text}");
    assert!(text.starts_with(" M README.md\n"), "{text}");
    assert!(text.ends_with("\n2\n"), "{text}");
    let tg = fx.task_git.to_str().unwrap();
    assert_eq!(
        git(
            &fx.base,
            &["--git-dir", tg, "log", "-1", "--format=%s", "bosun/t1"]
        ),
        "agent change"
    );
    // The user's repository did not move: not its branch of the same name, not main.
    assert_eq!(git(&fx.repo, &["rev-parse", "bosun/t1"]), fx.base_commit);
    assert_eq!(git(&fx.repo, &["rev-parse", "main"]), fx.base_commit);
    assert_eq!(git(&fx.repo, &["status", "--short"]), "");
    let new_commit = git(&fx.base, &["--git-dir", tg, "rev-parse", "bosun/t1"]);
    let in_user_store = std::process::Command::new("git")
        .args(["cat-file", "-e", &new_commit])
        .current_dir(&fx.repo)
        .status()
        .unwrap();
    assert!(
        !in_user_store.success(),
        "the task's commit went into the user's object store"
    );
}
