#![allow(clippy::unwrap_used, clippy::expect_used)]
//! TEMPORARY profiling harness (to be removed).
use bosun_workspace::{ChangeHint, TaskWorktree};
use std::path::Path;
use std::time::Instant;

fn file_path(i: usize) -> String {
    let dir = i / 100;
    format!("d{:02}/d{:02}/f{i:06}.txt", dir / 100, dir % 100)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let files: usize = args[1].parse().unwrap();
    let count: usize = args[2].parse().unwrap();
    let reps: usize = args[3].parse().unwrap();
    let dir = Path::new("/var/tmp/bosun-bench");
    let repo = bosun_workspace::bench::generate_repo(files, dir).unwrap();
    let home = Path::new("/var/tmp/ws-prof-home");
    let head = String::from_utf8(
        std::process::Command::new("git")
            .current_dir(&repo)
            .args(["rev-parse", "HEAD"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_string();
    let t = Instant::now();
    let wt = home.join("wt-path");
    let mut task = match std::fs::read_to_string(home.join("wt")) {
        Ok(p) => TaskWorktree::open(home, &repo, "prof", Path::new(p.trim()), &head).unwrap(),
        Err(_) => {
            let t = TaskWorktree::create(home, &repo, "prof", &head).unwrap();
            std::fs::write(home.join("wt"), t.worktree.to_string_lossy().as_bytes()).unwrap();
            t
        }
    };
    let _ = wt;
    if std::env::var_os("CLEANUP").is_some() {
        task.release_keeping(0).unwrap();
        return;
    }
    eprintln!("open {:.1} ms", t.elapsed().as_secs_f64() * 1000.0);
    let mut next = std::fs::read_to_string(home.join("next"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0usize);
    let unknown = args.get(4).is_some_and(|a| a == "unknown");
    for rep in 0..reps {
        let mut touched = Vec::new();
        for _ in 0..count {
            let i = next % files;
            next += 1;
            let rel = file_path(i);
            std::fs::write(
                task.worktree.join(&rel),
                format!("file {i} v {next} {rep}\n").repeat(60),
            )
            .unwrap();
            touched.push(rel);
        }
        let hint = if unknown {
            ChangeHint::Unknown
        } else {
            ChangeHint::Paths(touched)
        };
        let t = Instant::now();
        let cp = task.checkpoint(&hint, "prof").unwrap();
        eprintln!(
            "checkpoint {count} files: {:.1} ms ({:?})",
            t.elapsed().as_secs_f64() * 1000.0,
            cp.map(|c| c.files.len())
        );
        if std::env::var_os("SHADOW").is_some() {
            for _ in 0..count {
                let i = next % files;
                next += 1;
                std::fs::write(
                    task.worktree.join(file_path(i)),
                    format!("shadow {i} {next}\n").repeat(60),
                )
                .unwrap();
            }
            let t = Instant::now();
            let sh = "cp $(git rev-parse --git-path index) /tmp/shadow-idx && GIT_INDEX_FILE=/tmp/shadow-idx git add -A && GIT_INDEX_FILE=/tmp/shadow-idx git write-tree >/dev/null";
            std::process::Command::new("bash")
                .arg("-c")
                .arg(sh)
                .current_dir(&task.worktree)
                .status()
                .unwrap();
            eprintln!("shadow {:.1}", t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    std::fs::write(home.join("next"), next.to_string()).unwrap();
    let t = Instant::now();
    drop(task);
    eprintln!("drop {:.1} ms", t.elapsed().as_secs_f64() * 1000.0);
}
