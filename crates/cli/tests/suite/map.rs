//! `bosun map`: the repository map, ranked towards a focus, within a budget; a focus that
//! matches nothing is exit 2 with what it could have meant.

use super::support::*;
use pretty_assertions::assert_eq;

fn repo(env: &Env) {
    let w = |rel: &str, text: &str| {
        let p = env.repo.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    w(
        "pricing.py",
        "def calc_total(lines):\n    return sum(lines)\n",
    );
    w(
        "invoice.py",
        "from pricing import calc_total\n\n\ndef invoice(lines):\n    return calc_total(lines)\n",
    );
    w("util.py", "def helper():\n    return 1\n");
    w("vendor/lib.py", "def vendored():\n    pass\n");
    git(&env.repo, &["add", "-A"]);
    git(&env.repo, &["commit", "-q", "-m", "py"]);
}

#[test]
fn the_map_is_ranked_towards_the_focus_and_fits_its_budget() {
    let env = Env::new();
    repo(&env);
    let (ok, out, err) = env.text(&["map", "--repo", path_str(&env.repo)]);
    assert!(ok, "{err}");
    assert!(
        out.starts_with("pricing.py:\n    1│ def calc_total(lines):\n"),
        "{out}"
    );
    assert!(
        out.contains("src/lib.rs:") && !out.contains("vendored"),
        "{out}"
    );
    // A symbol and a file as the focus.
    let j = env.json(&[
        "map",
        "--repo",
        path_str(&env.repo),
        "--focus",
        "helper",
        "--json",
    ]);
    assert_eq!(j["files"][0]["path"], "util.py", "{j:#}");
    assert_eq!(
        j["files"][0]["definitions"][0]["signature"],
        "def helper():"
    );
    let j = env.json(&[
        "map",
        "--repo",
        path_str(&env.repo),
        "--focus",
        "./invoice.py",
        "--json",
    ]);
    assert_eq!(j["files"][0]["path"], "invoice.py", "{j:#}");
    // The tags were cached by the first run: the later ones parse nothing.
    assert_eq!(j["parsed"], 0, "{j:#}");
    assert_eq!(j["cached"], j["files_read"], "{j:#}");
    // The budget holds.
    let j = env.json(&[
        "map",
        "--repo",
        path_str(&env.repo),
        "--budget",
        "12",
        "--json",
    ]);
    assert!(j["tokens"].as_u64().unwrap() <= 12, "{j:#}");
    assert!(j["files"].as_array().unwrap().len() < j["files_read"].as_u64().unwrap() as usize);
}

#[test]
fn a_focus_or_a_budget_that_makes_no_sense_is_a_usage_error() {
    let env = Env::new();
    repo(&env);
    let run = |args: &[&str]| {
        let out = env.bosun().args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let repo = path_str(&env.repo);
    let (code, err) = run(&["map", "--repo", repo, "--focus", "calc_totl"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("did you mean calc_total?"), "{err}");
    let (code, err) = run(&["map", "--repo", repo, "--focus", "README.md"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("not in the map"), "{err}");
    let (code, _) = run(&["map", "--repo", repo, "--budget", "0"]);
    assert_eq!(code, Some(2));
    let (code, err) = run(&["map", "--repo", "/nonexistent/x"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("not a directory"), "{err}");
    // A file's typo suggests files; a directory, `..`, a path outside and "" say what they are.
    let (code, err) = run(&["map", "--repo", repo, "--focus", "pricing.pyy"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("did you mean pricing.py?"), "{err}");
    let (code, err) = run(&["map", "--repo", repo, "--focus", "vendor"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("a directory"), "{err}");
    let (code, err) = run(&["map", "--repo", repo, "--focus", "../x.py"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("without `..`"), "{err}");
    let (code, err) = run(&["map", "--repo", repo, "--focus", "/etc/hostname"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("not inside the repository"), "{err}");
    let (code, err) = run(&["map", "--repo", repo, "--focus", ""]);
    assert_eq!(code, Some(2));
    assert!(err.contains("not an empty string"), "{err}");
    // An absolute path inside the repository is its file.
    let abs = env.repo.join("util.py");
    let (code, err) = run(&["map", "--repo", repo, "--focus", path_str(&abs)]);
    assert_eq!(code, Some(0), "{err}");
    // Benchmarks: a --path that is not a directory, a task list that cannot be read or holds
    // no task.
    let (code, err) = run(&["bench", "map", "--path", "/nonexistent/x"]);
    assert_eq!(code, Some(2), "{err}");
    let (code, err) = run(&["bench", "localise", "--tasks", "/nonexistent/t.toml"]);
    assert_eq!(code, Some(2), "{err}");
    let empty = env.repo.join("empty.toml");
    std::fs::write(&empty, "task = []\n").unwrap();
    let (code, err) = run(&["bench", "localise", "--tasks", path_str(&empty)]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no [[task]]"), "{err}");
}
