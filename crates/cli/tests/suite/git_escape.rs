//! Escapes through Bosun's own git work, tried the way an attacker-minded model would, through
//! `bosun run` as a user types it: a task that plants a fake git directory and attributes, or
//! re-points its worktree at the user's repository, must not get a program run outside the
//! sandbox or move the user's HEAD. One test per escape.

use super::support::*;
use bosun_protocol::{EventMsg, TaskStatus};
use bosun_testkit::MockModelServer;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::path::{Path, PathBuf};

/// A program that records its environment when run (and passes stdin through, as a filter).
fn trap(dir: &Path) -> (PathBuf, PathBuf) {
    let trap = bosun_testkit::Trap::new(dir).unwrap();
    (trap.script, trap.marker)
}

fn write_call(id: &str, path: &str, content: &str) -> bosun_testkit::MockToolCall {
    call(id, "write_file", json!({"path": path, "content": content}))
}

#[test]
fn a_fake_git_dir_planted_in_auto_edit_runs_no_program_outside_the_sandbox() {
    if !bosun_exec::probe().is_available() {
        eprintln!("SKIPPED: {}", bosun_exec::probe().describe());
        return;
    }
    let env = Env::new();
    let before = checkout_state(&env.repo);
    let (script, marker) = trap(&env.dir.path().join("trap"));
    let evil = script.display().to_string();
    let config = format!(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = {evil}\n\thooksPath = .fakegit/hooks\n[filter \"x\"]\n\tclean = {evil}\n\tsmudge = {evil}\n\tprocess = {evil}\n\trequired = true\n[diff \"x\"]\n\ttextconv = {evil}\n[diff]\n\texternal = {evil}\n"
    );
    let server = MockModelServer::start_blocking(vec![
        tools(vec![
            write_call("w1", ".fakegit/config", &config),
            write_call("w2", ".fakegit/HEAD", "ref: refs/heads/main\n"),
            write_call("w3", ".fakegit/refs/heads/.keep", ""),
            write_call("w4", ".fakegit/objects/.keep", ""),
            write_call(
                "w5",
                ".fakegit/hooks/post-index-change",
                &format!("#!/bin/sh\n{evil}\n"),
            ),
            write_call("w6", ".gitattributes", "* filter=x diff=x\n"),
        ]),
        tools(vec![call(
            "c1",
            "run_command",
            json!({"command": "printf 'gitdir: .fakegit\\n' > .git; cat .git"}),
        )]),
        tools(vec![call(
            "c2",
            "run_command",
            json!({"command": "echo touched >> README.md; cat .git"}),
        )]),
        tools(vec![write_call(
            "w7",
            "src/extra.rs",
            "pub fn extra() {}\n",
        )]),
        text("done"),
    ])
    .unwrap();
    let run = env.run_with_env(
        &server,
        "plant a trap",
        &["--mode", "auto-edit", "--api-key-env", "MOCK_PROVIDER_KEY"],
        &[("MOCK_PROVIDER_KEY", "sk-mock-provider-key-0123456789")],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Completed);
    let task = run.task_id();
    // Every later git step Bosun takes on the task: diff, review, merge preview, continue.
    for args in [
        vec!["diff", task.as_str()],
        vec!["review", task.as_str(), "--lines"],
        vec!["checkpoints", task.as_str()],
    ] {
        let (ok, _, err) = env.text(&args);
        assert!(ok, "bosun {args:?}: {err}");
    }
    assert!(
        !marker.exists(),
        "a program the task named ran outside the sandbox; it saw: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
    assert_eq!(checkout_state(&env.repo), before);
    // The command's `.git` was put back before the next command, and the user was told.
    let warned = run
        .events
        .iter()
        .any(|e| matches!(&e.msg, EventMsg::Warning(w) if w.code == "worktree_git_repaired"));
    assert!(warned, "{:?}", run.kinds());
    let git_file = std::fs::read_to_string(run.worktree().join(".git")).unwrap();
    assert!(
        git_file.contains(&format!("tasks/{task}/git")),
        "{git_file}"
    );
    // What the task wrote is recorded as the bytes it wrote.
    let last = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::CheckpointCreated(c) => Some(c.checkpoint),
            _ => None,
        })
        .max()
        .unwrap();
    let stored = git(
        &env.repo,
        &["show", &format!("refs/bosun/{task}/{last}:.gitattributes")],
    );
    assert_eq!(stored, "* filter=x diff=x\n");
}

#[test]
fn a_filter_in_the_users_global_config_is_not_triggered_by_task_attributes() {
    if !bosun_exec::probe().is_available() {
        eprintln!("SKIPPED: {}", bosun_exec::probe().describe());
        return;
    }
    let env = Env::new();
    let (script, marker) = trap(&env.dir.path().join("trap"));
    // The user's global git config has a filter (as `git lfs install` writes one).
    let user_home = env.dir.path().join("user-home");
    std::fs::create_dir_all(&user_home).unwrap();
    let evil = script.display().to_string();
    std::fs::write(
        user_home.join(".gitconfig"),
        format!("[filter \"lfs\"]\n\tclean = {evil}\n\tsmudge = {evil}\n\tprocess = {evil}\n\trequired = true\n[user]\n\tname = U\n\temail = u@example.com\n"),
    )
    .unwrap();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![write_call("w1", ".gitattributes", "* filter=lfs\n")]),
        tools(vec![call(
            "c1",
            "run_command",
            json!({"command": "echo more >> README.md"}),
        )]),
        text("done"),
    ])
    .unwrap();
    let home = user_home.display().to_string();
    let run = env.run_with_env(&server, "attributes", &[], &[("HOME", &home)]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let task = run.task_id();
    let (ok, _, err) = env.text(&["diff", &task]);
    assert!(ok, "{err}");
    assert!(
        !marker.exists(),
        "the user's filter ran on the task's files"
    );
}

#[test]
fn the_users_head_is_not_moved_through_a_recycled_worktree() {
    if !bosun_exec::probe().is_available() {
        eprintln!("SKIPPED: {}", bosun_exec::probe().describe());
        return;
    }
    let env = Env::new();
    let before = checkout_state(&env.repo);
    let head_file = std::fs::read_to_string(env.repo.join(".git/HEAD")).unwrap();
    let user_git = env.repo.join(".git").display().to_string();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "c1",
            "run_command",
            json!({"command": format!("printf 'gitdir: {user_git}\\n' > .git")}),
        )]),
        text("first done"),
    ])
    .unwrap();
    let first = env.run(&server, "re-point the worktree", &[]);
    // 6: answered, the task changed nothing.
    assert_eq!(first.code(), Some(6), "{}", first.stderr());
    // The next task recycles that worktree.
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "c1",
            "run_command",
            json!({"command": "git status --short; git rev-parse --abbrev-ref HEAD"}),
        )]),
        text("second done"),
    ])
    .unwrap();
    let second = env.run(&server, "work", &[]);
    assert_eq!(second.code(), Some(6), "{}", second.stderr());
    assert_eq!(second.finished().0, TaskStatus::Answered);
    assert_eq!(
        checkout_state(&env.repo),
        before,
        "the user's HEAD, index and branches"
    );
    assert_eq!(
        std::fs::read_to_string(env.repo.join(".git/HEAD")).unwrap(),
        head_file
    );
    let output = second.tool_ends()[0].output.clone();
    assert!(
        output.contains(&format!("bosun/{}", second.task_id())),
        "git inside the recycled worktree is on the task's own branch: {output}"
    );
}

#[test]
fn a_read_denied_path_cannot_be_printed_from_the_object_store() {
    let env = Env::new();
    // The user committed a `.env` (read-denied by the built-in policy).
    std::fs::write(env.repo.join(".env"), "DB_PASSWORD=committed-hunter2\n").unwrap();
    git(&env.repo, &["add", "-f", ".env"]);
    git(&env.repo, &["commit", "-qm", "oops, a secret"]);
    let attempts = [
        ("show", "git show HEAD:.env"),
        ("show_index", "git show :.env"),
        ("cat_file", "git cat-file -p HEAD:.env"),
        ("log_p", "git log -p"),
        ("diff", "git diff HEAD~1 HEAD"),
        ("blob", "git cat-file --batch-all-objects --batch"),
        ("archive", "git archive HEAD | tar -xO"),
    ];
    let mut calls: Vec<_> = attempts
        .iter()
        .map(|(id, cmd)| call(id, "run_command", json!({"command": cmd})))
        .collect();
    calls.push(call(
        "ok",
        "run_command",
        json!({"command": "git status --short && git log --oneline | head -3"}),
    ));
    let server = MockModelServer::start_blocking(vec![tools(calls), text("done")]).unwrap();
    let run = env.run(&server, "look for secrets", &[]);
    // 6: answered, the task changed nothing.
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    let warning = run
        .events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::Warning(w) if w.code == "committed_secrets" => Some(w.message.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no committed_secrets warning: {:?}", run.kinds()));
    assert!(warning.contains(".env"), "{warning}");
    let ends = run.tool_ends();
    for (i, (id, cmd)) in attempts.iter().enumerate() {
        assert_eq!(
            ends[i].status,
            bosun_protocol::ToolCallStatus::Denied,
            "{id}: `{cmd}` ran: {}",
            ends[i].output
        );
    }
    let ok = ends[attempts.len()];
    assert_eq!(
        ok.status,
        bosun_protocol::ToolCallStatus::Success,
        "{}",
        ok.output
    );
    assert!(ok.output.contains("oops, a secret"), "{}", ok.output);
    let journal = env.text(&["show", &run.task_id(), "--json"]).1;
    assert!(
        !journal.contains("committed-hunter2"),
        "the secret reached the journal"
    );
    for req in server.requests() {
        assert!(!req.body.to_string().contains("committed-hunter2"));
    }
}

#[test]
fn git_inside_the_sandbox_commits_on_its_own_branch_and_touches_nothing_of_the_users() {
    if !bosun_exec::probe().is_available() {
        eprintln!("SKIPPED: {}", bosun_exec::probe().describe());
        return;
    }
    let env = Env::new();
    // Another task of the same repository, finished, with its branch.
    let server = MockModelServer::start_blocking(vec![text("nothing to do")]).unwrap();
    let other = env.run(&server, "other", &[]);
    let other_id = other.task_id();
    let before = checkout_state(&env.repo);
    let refs_before = git(
        &env.repo,
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    );
    let objects = env.repo.join(".git/objects");
    let an_object = std::fs::read_dir(&objects)
        .unwrap()
        .flatten()
        .find(|d| d.file_name().len() == 2)
        .and_then(|d| std::fs::read_dir(d.path()).unwrap().flatten().next())
        .unwrap()
        .path();
    let user_repo = env.repo.display().to_string();
    let steps = [
        ("other_branch", format!("git update-ref refs/heads/bosun/{other_id} HEAD")),
        ("new_branch", "git branch evil && git branch --list evil".to_string()),
        ("user_ref", format!("git -C {user_repo} update-ref refs/heads/evil HEAD")),
        ("user_object", format!("rm -f {}", an_object.display())),
        ("user_objects_gc", format!("git -C {user_repo} gc --prune=now")),
        (
            "work",
            "echo more >> README.md && git status --short && git add -A && git -c user.name=A -c user.email=a@example.com commit -qm 'agent work' && git log --oneline | head -1".to_string(),
        ),
    ];
    let calls = steps
        .iter()
        .map(|(id, cmd)| call(id, "run_command", json!({"command": cmd})))
        .collect();
    let server = MockModelServer::start_blocking(vec![tools(calls), text("done")]).unwrap();
    let run = env.run(&server, "use git", &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let ends = run.tool_ends();
    let work = &ends[steps.len() - 1];
    assert_eq!(work.exit_code, Some(0), "{}", work.output);
    assert!(
        work.output.contains(" M README.md") && work.output.contains("agent work"),
        "{}",
        work.output
    );
    // Nothing of the user's changed: checkout, refs (another task's branch included), objects.
    assert_eq!(checkout_state(&env.repo), before);
    assert!(
        an_object.exists(),
        "a command deleted one of the user's objects"
    );
    let refs_after = git(
        &env.repo,
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    );
    let new_refs: Vec<&str> = refs_after
        .lines()
        .filter(|l| !refs_before.contains(l))
        .filter(|l| !l.starts_with(&format!("refs/bosun/{}/", run.task_id())))
        .filter(|l| !l.starts_with(&format!("refs/heads/bosun/{} ", run.task_id())))
        .collect();
    assert_eq!(
        new_refs,
        Vec::<&str>::new(),
        "refs written in the user's repository"
    );
    for (i, (id, _)) in steps[..steps.len() - 1].iter().enumerate() {
        if id.starts_with("user") {
            assert_ne!(ends[i].exit_code, Some(0), "{id}: {}", ends[i].output);
        }
    }
    // Refs a command made in the task's own git directory besides its branch are removed (and
    // the user is told), so nothing but the task's branch survives a command.
    assert!(run.events.iter().any(|e| matches!(&e.msg,
        EventMsg::Warning(w) if w.code == "worktree_git_repaired" && w.message.contains("refs/heads/evil"))));
    let wt = run.worktree();
    assert_eq!(
        git(&wt, &["for-each-ref", "--format=%(refname)", "refs/heads"]).trim(),
        format!("refs/heads/bosun/{}", run.task_id())
    );
}
