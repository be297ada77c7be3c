//! Review selectors as a user types them — nothing, `PATH`, `PATH:N[,N…]`, `--all` — against
//! every kind of change: a file modified in two places, added, deleted, renamed (named by its
//! old or its new path), binary, mode-only and a symlink. Each picks exactly what `bosun review`
//! listed; one that picks nothing exits 2 and says what it could have meant.

use super::support::*;
use bosun_testkit::MockModelServer;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Forty numbered lines: changing the 2nd and the 35th makes two hunks.
fn big() -> String {
    (1..=40).map(|i| format!("line {i}\n")).collect()
}

fn big_edited() -> String {
    big()
        .replace("line 2\n", "line two\n")
        .replace("line 35\n", "line thirty-five\n")
}

/// `big.txt` as it is with only its first hunk applied.
fn big_first_hunk_only() -> String {
    big().replace("line 2\n", "line two\n")
}

const OLD_NAME: &str =
    "name 1\nname 2\nname 3\nname 4\nname 5\nname 6\nname 7\nname 8\nname 9\nname 10\n";
const IMAGE: &[u8] = b"\x89PNG\x00\x01\x02\x03";

/// The user's repository gets one file of each kind, committed: the task's base.
fn commit_base(repo: &Path) {
    std::fs::write(repo.join("big.txt"), big()).unwrap();
    std::fs::create_dir_all(repo.join("old")).unwrap();
    std::fs::write(repo.join("old/gone.txt"), "bye\n").unwrap();
    std::fs::write(repo.join("old_name.txt"), OLD_NAME).unwrap();
    std::fs::write(repo.join("image.bin"), IMAGE).unwrap();
    std::fs::write(repo.join("run.sh"), "#!/bin/sh\necho hi\n").unwrap();
    std::os::unix::fs::symlink("big.txt", repo.join("link")).unwrap();
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "--quiet", "-m", "One of each"]);
}

/// A finished task that changed every kind of file.
fn task_of_every_kind(env: &Env) -> (MockModelServer, String) {
    commit_base(&env.repo);
    let server = MockModelServer::start_blocking(vec![
        tools(vec![
            call(
                "w1",
                "write_file",
                json!({"path": "big.txt", "content": big_edited()}),
            ),
            call(
                "w2",
                "write_file",
                json!({"path": "new.txt", "content": "new\n"}),
            ),
            call(
                "c1",
                "run_command",
                json!({"command": "rm old/gone.txt && mv old_name.txt new_name.txt && sed -i 's/name 10/name ten/' new_name.txt && printf '\\211PNG\\000\\377' > image.bin && chmod +x run.sh && ln -sfn new.txt link"}),
            ),
        ]),
        text("Changed one of each."),
    ])
    .unwrap();
    let run = env.run(&server, "Change one of each", &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    (server, run.task_id())
}

/// path → the states of its hunks, in the listed order.
fn states(env: &Env, task: &str) -> BTreeMap<String, Vec<String>> {
    let review = env.json(&["review", task, "--json"]);
    files(&review)
        .map(|f| {
            let hunks = f["hunks"].as_array().unwrap();
            let states = hunks
                .iter()
                .map(|h| h["state"].as_str().unwrap().to_string());
            (f["path"].as_str().unwrap().to_string(), states.collect())
        })
        .collect()
}

fn files(review: &Value) -> impl Iterator<Item = &Value> {
    review["files"].as_array().unwrap().iter()
}

/// Every file's hunks in one state, but `changes` (path → states).
fn all_but(state: &str, changes: &[(&str, &[&str])]) -> BTreeMap<String, Vec<String>> {
    let mut map: BTreeMap<String, Vec<String>> = [
        ("big.txt", 2),
        ("image.bin", 1),
        ("link", 1),
        ("new.txt", 1),
        ("new_name.txt", 2),
        ("old/gone.txt", 1),
        ("run.sh", 1),
    ]
    .into_iter()
    .map(|(p, n)| (p.to_string(), vec![state.to_string(); n]))
    .collect();
    for (path, s) in changes {
        map.insert(path.to_string(), s.iter().map(|s| s.to_string()).collect());
    }
    map
}

/// `bosun ARGS`: exit code, stdout, stderr.
fn bosun(env: &Env, args: &[&str]) -> (Option<i32>, String, String) {
    let out = env.bosun().args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(env: &Env, args: &[&str]) -> String {
    let (code, out, err) = bosun(env, args);
    assert_eq!(code, Some(0), "bosun {args:?}: {err}\n{out}");
    out
}

/// Exits 2; returns what it said.
fn refused(env: &Env, args: &[&str]) -> String {
    let (code, out, err) = bosun(env, args);
    assert_eq!(code, Some(2), "bosun {args:?} should exit 2: {err}\n{out}");
    err
}

fn worktree(env: &Env, task: &str) -> PathBuf {
    let tasks = env.json(&["tasks", "--json"]);
    let row = tasks.as_array().unwrap().iter().find(|t| t["id"] == task);
    PathBuf::from(row.unwrap()["worktree"].as_str().unwrap())
}

#[test]
fn the_review_lists_one_file_per_change_and_one_hunk_for_what_is_not_lines() {
    let env = Env::new();
    let (_server, task) = task_of_every_kind(&env);
    let review = env.json(&["review", &task, "--json"]);
    let listed: BTreeMap<String, (String, Option<String>, usize)> = files(&review)
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                (
                    f["status"].as_str().unwrap().to_string(),
                    f["old_path"].as_str().map(String::from),
                    f["hunks"].as_array().unwrap().len(),
                ),
            )
        })
        .collect();
    let expected: BTreeMap<String, (String, Option<String>, usize)> = [
        ("big.txt", "modified", None, 2),
        ("image.bin", "modified", None, 1),
        ("link", "modified", None, 1),
        ("new.txt", "added", None, 1),
        ("new_name.txt", "renamed", Some("old_name.txt"), 2),
        ("old/gone.txt", "deleted", None, 1),
        ("run.sh", "mode_changed", None, 1),
    ]
    .into_iter()
    .map(|(p, s, o, n)| (p.into(), (s.into(), o.map(String::from), n)))
    .collect();
    assert_eq!(listed, expected);
}

#[test]
fn accepting_new_txt_by_path_or_hunk_touches_only_new_txt_and_the_merge_leaves_out_the_rejected_hunk()
 {
    let env = Env::new();
    std::fs::write(env.repo.join("big.txt"), big()).unwrap();
    git(&env.repo, &["add", "big.txt"]);
    git(&env.repo, &["commit", "--quiet", "-m", "Add big.txt"]);
    let server = MockModelServer::start_blocking(vec![
        tools(vec![
            call(
                "w1",
                "write_file",
                json!({"path": "big.txt", "content": big_edited()}),
            ),
            call(
                "w2",
                "write_file",
                json!({"path": "new.txt", "content": "new\n"}),
            ),
        ]),
        text("Edited big.txt and added new.txt."),
    ])
    .unwrap();
    let run = env.run(&server, "Edit and add", &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let task = run.task_id();
    let wt = worktree(&env, &task);
    let by_path = |pairs: &[(&str, &[&str])]| -> BTreeMap<String, Vec<String>> {
        pairs
            .iter()
            .map(|(p, s)| (p.to_string(), s.iter().map(|s| s.to_string()).collect()))
            .collect()
    };

    ok(&env, &["reject", &task, "big.txt:2"]);
    assert_eq!(
        std::fs::read_to_string(wt.join("big.txt")).unwrap(),
        big_first_hunk_only()
    );

    let out = ok(&env, &["accept", &task, "new.txt"]);
    assert!(out.contains("accepted new.txt:1"), "{out}");
    assert_eq!(
        states(&env, &task),
        by_path(&[
            ("big.txt", &["unreviewed", "rejected"]),
            ("new.txt", &["accepted"])
        ])
    );

    // Naming its hunk again changes nothing, and never reaches into big.txt.
    let out = ok(&env, &["accept", &task, "new.txt:1"]);
    assert!(out.contains("nothing to change"), "{out}");
    assert_eq!(
        states(&env, &task),
        by_path(&[
            ("big.txt", &["unreviewed", "rejected"]),
            ("new.txt", &["accepted"])
        ])
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("big.txt")).unwrap(),
        big_first_hunk_only(),
        "the rejected hunk stays out of the worktree"
    );

    ok(&env, &["accept", &task, "big.txt:1"]);
    let out = ok(&env, &["merge", &task, "--into", "feature"]);
    assert!(out.contains("merged 2 hunks in 2 files"), "{out}");
    assert_eq!(
        git(&env.repo, &["show", "feature:big.txt"]),
        big_first_hunk_only()
    );
    assert_eq!(git(&env.repo, &["show", "feature:new.txt"]), "new\n");
}

#[test]
fn every_kind_of_change_is_named_by_its_path_and_its_hunks_by_number() {
    let env = Env::new();
    let (_server, task) = task_of_every_kind(&env);

    // One hunk of a file with two.
    ok(&env, &["accept", &task, "big.txt:2"]);
    assert_eq!(
        states(&env, &task),
        all_but("unreviewed", &[("big.txt", &["unreviewed", "accepted"])])
    );
    // The only hunk of each one-hunk kind, by number.
    for path in ["new.txt", "old/gone.txt", "image.bin", "run.sh", "link"] {
        ok(&env, &["accept", &task, &format!("{path}:1")]);
    }
    assert_eq!(
        states(&env, &task),
        all_but(
            "accepted",
            &[
                ("big.txt", &["unreviewed", "accepted"]),
                ("new_name.txt", &["unreviewed", "unreviewed"])
            ]
        )
    );
    ok(&env, &["unmark", &task, "--all"]);
    assert_eq!(states(&env, &task), all_but("unreviewed", &[]));

    // Each kind by its path: all its hunks, nothing else.
    for path in [
        "big.txt",
        "new.txt",
        "old/gone.txt",
        "image.bin",
        "run.sh",
        "link",
    ] {
        let before = states(&env, &task);
        ok(&env, &["reject", &task, path]);
        let mut expected = before;
        let n = expected[path].len();
        expected.insert(path.to_string(), vec!["rejected".to_string(); n]);
        assert_eq!(states(&env, &task), expected, "reject {path}");
    }
    // Two hunk numbers at once; a rejected one comes back when named.
    ok(&env, &["accept", &task, "big.txt:1,2"]);
    assert_eq!(
        states(&env, &task),
        all_but(
            "rejected",
            &[
                ("big.txt", &["accepted", "accepted"]),
                ("new_name.txt", &["unreviewed", "unreviewed"])
            ]
        )
    );
    assert_eq!(
        std::fs::read_to_string(worktree(&env, &task).join("big.txt")).unwrap(),
        big_edited()
    );
}

#[test]
fn a_rename_is_named_by_its_new_or_its_old_path() {
    let env = Env::new();
    let (_server, task) = task_of_every_kind(&env);
    let review = env.json(&["review", &task, "--json"]);
    let renamed = files(&review)
        .find(|f| f["path"] == "new_name.txt")
        .unwrap();
    assert_eq!(renamed["hunks"][0]["kind"], "rename", "{renamed:#}");
    assert_eq!(renamed["hunks"][1]["kind"], "text", "{renamed:#}");

    ok(&env, &["accept", &task, "old_name.txt:2"]);
    assert_eq!(
        states(&env, &task),
        all_but(
            "unreviewed",
            &[("new_name.txt", &["unreviewed", "accepted"])]
        )
    );
    ok(&env, &["accept", &task, "new_name.txt:1"]);
    assert_eq!(
        states(&env, &task),
        all_but("unreviewed", &[("new_name.txt", &["accepted", "accepted"])])
    );
    ok(&env, &["unmark", &task, "old_name.txt"]);
    assert_eq!(states(&env, &task), all_but("unreviewed", &[]));
    ok(&env, &["accept", &task, "new_name.txt"]);
    assert_eq!(
        states(&env, &task),
        all_but("unreviewed", &[("new_name.txt", &["accepted", "accepted"])])
    );
    let err = refused(&env, &["accept", &task, "old_name.txt:3"]);
    assert!(
        err.contains("new_name.txt has no hunk 3: its hunks are 1 and 2"),
        "{err}"
    );
}

#[test]
fn reject_all_puts_every_kind_back_to_the_base_and_unmark_all_brings_the_task_s_version_back() {
    let env = Env::new();
    let (_server, task) = task_of_every_kind(&env);
    let wt = worktree(&env, &task);
    ok(&env, &["accept", &task, "new.txt"]);

    // --all: every hunk of every file, the accepted one too.
    ok(&env, &["reject", &task, "--all"]);
    assert_eq!(states(&env, &task), all_but("rejected", &[]));
    assert_eq!(std::fs::read_to_string(wt.join("big.txt")).unwrap(), big());
    assert!(!wt.join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(wt.join("old/gone.txt")).unwrap(),
        "bye\n"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("old_name.txt")).unwrap(),
        OLD_NAME
    );
    assert!(!wt.join("new_name.txt").exists());
    assert_eq!(std::fs::read(wt.join("image.bin")).unwrap(), IMAGE);
    let mode = |p: &str| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(wt.join(p)).unwrap().permissions().mode() & 0o111
    };
    assert_eq!(mode("run.sh"), 0, "not executable again");
    assert_eq!(
        std::fs::read_link(wt.join("link")).unwrap(),
        Path::new("big.txt")
    );

    // Accepting every file by path leaves the rejected hunks rejected, and says so.
    let err = refused(&env, &["accept", &task, "--all"]);
    assert!(err.contains("9 hunks are rejected"), "{err}");
    assert!(
        err.contains(&format!(
            "`bosun accept {task} big.txt:1,2 image.bin:1 link:1 new.txt:1 new_name.txt:1,2`, and so on for 2 more files"
        )),
        "names them: {err}"
    );

    ok(&env, &["unmark", &task, "--all"]);
    assert_eq!(states(&env, &task), all_but("unreviewed", &[]));
    assert_eq!(
        std::fs::read_to_string(wt.join("big.txt")).unwrap(),
        big_edited()
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("new.txt")).unwrap(),
        "new\n"
    );
    assert!(!wt.join("old/gone.txt").exists());
    assert!(!wt.join("old_name.txt").exists());
    assert!(wt.join("new_name.txt").exists());
    assert_eq!(mode("run.sh"), 0o111);
    assert_eq!(
        std::fs::read_link(wt.join("link")).unwrap(),
        Path::new("new.txt")
    );
}

#[test]
fn a_bare_accept_takes_every_undecided_hunk_and_with_none_left_exits_2() {
    let env = Env::new();
    let (_server, task) = task_of_every_kind(&env);
    ok(&env, &["reject", &task, "big.txt:1"]);
    // Undecided only: the rejected hunk stays rejected.
    let out = ok(&env, &["accept", &task]);
    assert!(out.contains("accepted big.txt:2 "), "{out}");
    assert_eq!(
        states(&env, &task),
        all_but("accepted", &[("big.txt", &["rejected", "accepted"])])
    );
    let err = refused(&env, &["accept", &task]);
    assert!(
        err.contains("nothing is undecided") && err.contains("8 accepted, 1 rejected"),
        "{err}"
    );
    assert!(
        err.contains(&format!("`bosun accept {task} big.txt:1`")),
        "{err}"
    );
    let err = refused(&env, &["reject", &task]);
    assert!(err.contains("nothing is undecided"), "{err}");
    assert!(
        err.contains(&format!("`bosun reject {task} big.txt:2`")),
        "{err}"
    );
    // Unmark needs to be told what to take back.
    let err = refused(&env, &["unmark", &task]);
    assert!(err.contains("--all"), "{err}");
    assert_eq!(
        states(&env, &task),
        all_but("accepted", &[("big.txt", &["rejected", "accepted"])]),
        "nothing changed"
    );
}

#[test]
fn a_selector_that_matches_nothing_exits_2_and_names_what_it_could_have_meant() {
    let env = Env::new();
    let (_server, task) = task_of_every_kind(&env);
    let untouched = states(&env, &task);

    let err = refused(&env, &["accept", &task, "bg.txt"]);
    assert!(err.contains("did you mean big.txt?"), "{err}");
    let err = refused(&env, &["accept", &task, "gone.txt"]);
    assert!(err.contains("did you mean old/gone.txt?"), "{err}");
    let err = refused(&env, &["accept", &task, "README.md"]);
    assert!(err.contains("is not a file task"), "{err}");
    assert!(
        err.contains("the changed files: big.txt, image.bin"),
        "{err}"
    );

    let err = refused(&env, &["accept", &task, "new.txt:2"]);
    assert!(
        err.contains("new.txt has no hunk 2: it has one hunk, 1"),
        "{err}"
    );
    let err = refused(&env, &["reject", &task, "run.sh:0"]);
    assert!(
        err.contains("run.sh has no hunk 0: it has one hunk, 1"),
        "{err}"
    );
    let err = refused(&env, &["accept", &task, "big.txt:1,3"]);
    assert!(
        err.contains("big.txt has no hunk 3: its hunks are 1 and 2"),
        "{err}"
    );

    for dir in ["old", "old/"] {
        let err = refused(&env, &["accept", &task, dir]);
        assert!(
            err.contains("is a directory, and directories are not selectors")
                && err.contains("the changed files in it: old/gone.txt"),
            "{err}"
        );
    }
    let err = refused(&env, &["reject", &task, "*.txt"]);
    assert!(err.contains("globs are not selectors"), "{err}");
    assert!(
        err.contains("it matches: big.txt, new.txt, new_name.txt, old_name.txt"),
        "{err}"
    );
    let err = refused(&env, &["accept", &task, "big.txt", "--all"]);
    assert!(err.contains("not both"), "{err}");
    let err = refused(&env, &["accept", &task, ":1"]);
    assert!(err.contains("names no file"), "{err}");

    assert_eq!(states(&env, &task), untouched, "no verdict was given");
}

#[test]
fn accepting_a_file_whose_hunks_were_rejected_asks_for_their_numbers() {
    let env = Env::new();
    let (_server, task) = task_of_every_kind(&env);
    let wt = worktree(&env, &task);
    ok(&env, &["reject", &task, "new.txt"]);
    assert!(!wt.join("new.txt").exists());
    let err = refused(&env, &["accept", &task, "new.txt"]);
    assert!(
        err.contains("new.txt:1 is rejected")
            && err.contains(&format!("`bosun accept {task} new.txt:1`")),
        "{err}"
    );
    assert!(!wt.join("new.txt").exists(), "still rejected");
    ok(&env, &["accept", &task, "new.txt:1"]);
    assert_eq!(
        std::fs::read_to_string(wt.join("new.txt")).unwrap(),
        "new\n"
    );
    assert_eq!(
        states(&env, &task),
        all_but("unreviewed", &[("new.txt", &["accepted"])])
    );
}
