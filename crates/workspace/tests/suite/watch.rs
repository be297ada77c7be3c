//! The worktree watcher: a command checkpoint from its events records exactly what a stat walk
//! of the whole tree records, it falls back to the walk whenever its events cannot be trusted,
//! it never watches `.git` or ignored directories, and it stops with the task.

use super::fixture::*;
use bosun_workspace::{
    ChangeHint, CommandScan, TaskWorktree, WalkReason, WatchCoverage, WatchLimits, tree_id,
};
use pretty_assertions::assert_eq;
use std::collections::BTreeSet;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const ROOMY: WatchLimits = WatchLimits { max_dirs: 10_000 };

/// Two tasks on the same base: one watched, one whose command checkpoints walk the tree.
struct Pair {
    f: Fixture,
    watched: TaskWorktree,
    walked: TaskWorktree,
}

impl Pair {
    fn new(limits: WatchLimits) -> Pair {
        let f = fixture();
        let mut watched = TaskWorktree::create(&f.home, &f.repo, "watched", &f.base).unwrap();
        let walked = TaskWorktree::create(&f.home, &f.repo, "walked", &f.base).unwrap();
        let report = watched.watch_with(limits);
        assert!(report.setup < Duration::from_secs(10));
        Pair { f, watched, walked }
    }

    /// Does the same to both worktrees.
    fn both(&self, change: impl Fn(&Path)) {
        change(&self.watched.worktree);
        change(&self.walked.worktree);
    }

    /// A command checkpoint of each; their trees, and how the watched one found its changes.
    fn checkpoint(&mut self) -> (String, String, CommandScan) {
        self.watched
            .checkpoint(&ChangeHint::Unknown, "command")
            .unwrap();
        self.walked
            .checkpoint(&ChangeHint::Unknown, "command")
            .unwrap();
        assert_eq!(
            self.walked.last_command_scan(),
            Some(CommandScan::Walk(WalkReason::NoWatcher))
        );
        let scan = self.watched.last_command_scan().unwrap();
        (
            tree_id(&self.f.repo, &self.watched.latest_commit()).unwrap(),
            tree_id(&self.f.repo, &self.walked.latest_commit()).unwrap(),
            scan,
        )
    }

    /// The first command checkpoint after the watcher starts walks; later ones follow events.
    fn first_checkpoint_walks(&mut self) {
        let (a, b, scan) = self.checkpoint();
        assert_eq!(scan, CommandScan::Walk(WalkReason::Starting));
        assert_eq!(a, b);
    }
}

fn is_events(scan: CommandScan) -> bool {
    matches!(scan, CommandScan::Events { .. })
}

/// xorshift64*: the same edits on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a>(&mut self, items: &'a [String]) -> Option<&'a String> {
        (!items.is_empty()).then(|| &items[self.below(items.len())])
    }
}

/// Files (and symlinks) and directories of a worktree, `.git` left out, sorted.
fn listing(wt: &Path) -> (Vec<String>, Vec<String>) {
    let (mut files, mut dirs) = (Vec::new(), Vec::new());
    let mut stack = vec![wt.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            if entry.file_name() == ".git" {
                continue;
            }
            let path = entry.path();
            let rel = path.strip_prefix(wt).unwrap().to_str().unwrap().to_string();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
                dirs.push(rel);
            } else {
                files.push(rel);
            }
        }
    }
    files.sort();
    dirs.sort();
    (files, dirs)
}

#[derive(Debug, Clone)]
enum Edit {
    Write(String, String),
    Delete(String),
    Rename(String, String),
    RemoveDir(String),
    Chmod(String, bool),
    FileToDir(String),
    DirToFile(String),
    Symlink(String, String),
}

/// Whether `edit` makes, changes, moves or removes something named `.gitignore` (a symlink to
/// one changes no rule).
fn touches_gitignore(edit: &Edit) -> bool {
    let rule = |p: &String| p == ".gitignore" || p.ends_with("/.gitignore");
    match edit {
        Edit::Write(p, _)
        | Edit::Delete(p)
        | Edit::Chmod(p, _)
        | Edit::FileToDir(p)
        | Edit::Symlink(_, p)
        | Edit::RemoveDir(p)
        | Edit::DirToFile(p) => rule(p),
        Edit::Rename(from, to) => rule(from) || rule(to),
    }
}

fn apply(wt: &Path, edit: &Edit) {
    let at = |rel: &str| wt.join(rel);
    match edit {
        Edit::Write(rel, text) => {
            std::fs::create_dir_all(at(rel).parent().unwrap()).unwrap();
            std::fs::write(at(rel), text).unwrap();
        }
        Edit::Delete(rel) => std::fs::remove_file(at(rel)).unwrap(),
        Edit::Rename(from, to) => {
            std::fs::create_dir_all(at(to).parent().unwrap()).unwrap();
            std::fs::rename(at(from), at(to)).unwrap();
        }
        Edit::RemoveDir(rel) => std::fs::remove_dir_all(at(rel)).unwrap(),
        Edit::Chmod(rel, exec) => {
            let mode = if *exec { 0o755 } else { 0o644 };
            std::fs::set_permissions(at(rel), std::fs::Permissions::from_mode(mode)).unwrap();
        }
        Edit::FileToDir(rel) => {
            std::fs::remove_file(at(rel)).unwrap();
            std::fs::create_dir(at(rel)).unwrap();
            std::fs::write(at(rel).join("inside.txt"), "was a file\n").unwrap();
        }
        Edit::DirToFile(rel) => {
            std::fs::remove_dir_all(at(rel)).unwrap();
            std::fs::write(at(rel), "was a directory\n").unwrap();
        }
        Edit::Symlink(target, rel) => {
            std::fs::create_dir_all(at(rel).parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(target, at(rel)).unwrap();
        }
    }
}

/// A path that can be created: nothing there, and no file where one of its directories goes.
fn free(wt: &Path, rel: &str) -> bool {
    if std::fs::symlink_metadata(wt.join(rel)).is_ok() {
        return false;
    }
    let mut at = Path::new(rel);
    while let Some(parent) = at.parent().filter(|p| !p.as_os_str().is_empty()) {
        if let Ok(meta) = std::fs::symlink_metadata(wt.join(parent))
            && !meta.is_dir()
        {
            return false;
        }
        at = parent;
    }
    true
}

/// A new path somewhere: in an existing directory, in new nested ones, or where git ignores it.
fn new_path(rng: &mut Rng, wt: &Path, dirs: &[String], n: usize) -> Option<String> {
    for _ in 0..8 {
        let name = match rng.below(10) {
            0 => format!("x{n}.log"),
            1 => format!("f{n}.sh"),
            _ => format!("f{n}.txt"),
        };
        let dir = match rng.below(6) {
            0 => String::new(),
            1 => format!("n{n}/m{}", rng.below(3)),
            2 => "target/out".to_string(),
            _ => rng.pick(dirs).cloned().unwrap_or_default(),
        };
        let rel = if dir.is_empty() {
            name
        } else {
            format!("{dir}/{name}")
        };
        if free(wt, &rel) {
            return Some(rel);
        }
    }
    None
}

fn random_edit(rng: &mut Rng, wt: &Path, n: usize) -> Option<Edit> {
    let (files, dirs) = listing(wt);
    let regular: Vec<String> = files
        .iter()
        .filter(|f| std::fs::symlink_metadata(wt.join(f)).is_ok_and(|m| m.is_file()))
        .cloned()
        .collect();
    Some(match rng.below(12) {
        0 | 1 => Edit::Write(new_path(rng, wt, &dirs, n)?, format!("new {n}\n")),
        2 | 3 => Edit::Write(rng.pick(&regular)?.clone(), format!("modified {n}\n")),
        4 => Edit::Delete(rng.pick(&files)?.clone()),
        5 => Edit::Rename(rng.pick(&files)?.clone(), new_path(rng, wt, &dirs, n)?),
        6 => {
            // A directory moved to the top, or into another one.
            let from = rng.pick(&dirs)?.clone();
            let into = rng.pick(&dirs).filter(|_| rng.below(2) == 0);
            let to = match into {
                Some(d) if !d.starts_with(&from) => format!("{d}/moved{n}"),
                _ => format!("moved{n}"),
            };
            Edit::Rename(from, to)
        }
        7 => Edit::RemoveDir(rng.pick(&dirs)?.clone()),
        8 => Edit::Chmod(rng.pick(&regular)?.clone(), rng.below(2) == 0),
        9 => Edit::FileToDir(rng.pick(&regular)?.clone()),
        10 => Edit::DirToFile(rng.pick(&dirs)?.clone()),
        _ => Edit::Symlink(rng.pick(&files)?.clone(), new_path(rng, wt, &dirs, n)?),
    })
}

#[test]
fn command_checkpoints_from_events_equal_the_stat_walks_on_random_edits() {
    // More sequences for a stress run: BOSUN_WATCH_SEEDS=20 cargo nextest run random_edits
    let seeds: u64 = std::env::var("BOSUN_WATCH_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    for seed in 0..seeds {
        random_edits(0x005E_ED0F_B05A ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    }
}

fn random_edits(seed: u64) {
    let mut pair = Pair::new(ROOMY);
    pair.first_checkpoint_walks();
    let mut rng = Rng(seed);
    let mut n = 0;
    let mut recorded = 0;
    for step in 0..60 {
        let mut edits = Vec::new();
        for _ in 0..1 + rng.below(5) {
            n += 1;
            // Chosen on one worktree, done to both, one after the other.
            if let Some(edit) = random_edit(&mut rng, &pair.watched.worktree, n) {
                pair.both(|wt| apply(wt, &edit));
                edits.push(edit);
            }
        }
        let before = pair.watched.latest_commit();
        let (watched, walked, scan) = pair.checkpoint();
        assert_eq!(
            watched, walked,
            "seed {seed:x} step {step} after {edits:#?}"
        );
        // Ignore rules that changed are followed by a walk (with the watches set up again).
        if edits.iter().any(touches_gitignore) {
            assert_eq!(scan, CommandScan::Walk(WalkReason::IgnoreRulesChanged));
        } else {
            assert!(
                is_events(scan),
                "seed {seed:x} step {step}: {scan:?} after {edits:?}"
            );
        }
        recorded += usize::from(pair.watched.latest_commit() != before);
    }
    // The edits were recorded, not merely equally missed.
    assert!(
        recorded > 40,
        "only {recorded} of 60 steps changed the tree"
    );
    assert_eq!(
        tree_id(&pair.f.repo, &pair.watched.latest_commit()).unwrap(),
        independent_tree(&pair.watched.worktree, &pair.f.base)
    );
}

#[test]
fn after_an_injected_overflow_the_checkpoint_walks_and_still_equals_the_stat_walk() {
    let mut pair = Pair::new(ROOMY);
    pair.first_checkpoint_walks();
    pair.both(|wt| write(wt, "src/lib.rs", "before the overflow\n"));
    let (a, b, scan) = pair.checkpoint();
    assert!(is_events(scan));
    assert_eq!(a, b);

    // Lost events: what changed then is known only from a walk.
    pair.watched.watcher().unwrap().inject_overflow();
    pair.both(|wt| {
        write(wt, "src/deep/after.rs", "after\n");
        write(wt, "fresh/dir/file.txt", "new\n");
        std::fs::remove_file(wt.join("README.md")).unwrap();
    });
    let (a, b, scan) = pair.checkpoint();
    assert_eq!(scan, CommandScan::Walk(WalkReason::EventsLost));
    assert_eq!(a, b);
    assert_eq!(
        pair.watched.watcher().unwrap().coverage(),
        &WatchCoverage::Full {
            watched: pair.watched.watcher().unwrap().watched_dirs().len()
        }
    );

    // The watches were set up again before that walk: events are trusted again, new
    // directories included.
    pair.both(|wt| {
        write(wt, "fresh/dir/file.txt", "changed\n");
        write(wt, "fresh/dir/deeper/more.txt", "more\n");
    });
    let (a, b, scan) = pair.checkpoint();
    assert!(
        matches!(scan, CommandScan::Events { paths: 2, .. }),
        "{scan:?}"
    );
    assert_eq!(a, b);
    assert!(
        pair.watched
            .watcher()
            .unwrap()
            .watched_dirs()
            .contains(&"fresh/dir/deeper".to_string())
    );
}

#[test]
fn at_the_watch_cap_coverage_is_partial_reported_and_checkpoints_still_correct() {
    let f = fixture();
    let mut watched = TaskWorktree::create(&f.home, &f.repo, "capped", &f.base).unwrap();
    let mut walked = TaskWorktree::create(&f.home, &f.repo, "walked", &f.base).unwrap();
    for wt in [&watched.worktree, &walked.worktree] {
        write(wt, "a/b/c/file.txt", "three more directories\n");
    }
    // root, src, src/deep, a, a/b, a/b/c
    let report = watched.watch_with(WatchLimits { max_dirs: 3 });
    assert_eq!(
        report.coverage,
        WatchCoverage::Partial {
            watched: 3,
            total: 6
        }
    );
    assert_eq!(watched.take_watch_notice(), None, "the report said it");
    for wt in [&watched.worktree, &walked.worktree] {
        write(wt, "a/b/c/file.txt", "changed\n");
        write(wt, "src/deep/new.rs", "new\n");
    }
    for _ in 0..2 {
        watched.checkpoint(&ChangeHint::Unknown, "command").unwrap();
        walked.checkpoint(&ChangeHint::Unknown, "command").unwrap();
        assert_eq!(
            watched.last_command_scan(),
            Some(CommandScan::Walk(WalkReason::Partial))
        );
        assert_eq!(
            tree_id(&f.repo, &watched.latest_commit()).unwrap(),
            tree_id(&f.repo, &walked.latest_commit()).unwrap()
        );
    }
}

#[test]
fn new_directories_past_the_cap_make_coverage_partial_with_a_notice() {
    let mut pair = Pair::new(WatchLimits { max_dirs: 4 });
    assert_eq!(
        pair.watched.watcher().unwrap().coverage(),
        &WatchCoverage::Full { watched: 3 }
    );
    pair.first_checkpoint_walks();
    pair.both(|wt| write(wt, "one/two/file.txt", "two new directories\n"));
    let (a, b, scan) = pair.checkpoint();
    assert_eq!(scan, CommandScan::Walk(WalkReason::Partial));
    assert_eq!(a, b);
    assert_eq!(
        pair.watched.take_watch_notice(),
        Some(WatchCoverage::Partial {
            watched: 3,
            total: 5
        })
    );
    assert_eq!(pair.watched.take_watch_notice(), None, "once");
    pair.both(|wt| write(wt, "one/two/file.txt", "still walked\n"));
    let (a, b, scan) = pair.checkpoint();
    assert_eq!(scan, CommandScan::Walk(WalkReason::Partial));
    assert_eq!(a, b);
}

#[test]
fn the_cap_comes_from_bosun_watch_max_and_the_kernels_limit() {
    let limits = |env, kernel| WatchLimits::from_values(env, kernel).max_dirs;
    assert_eq!(limits(None, None), bosun_workspace::DEFAULT_WATCH_MAX);
    assert_eq!(limits(Some("3"), Some(100_000)), 3);
    assert_eq!(limits(Some("not a number"), None), 8192);
    // The kernel's limit less a tenth (at least 1024) for the user's other watchers.
    assert_eq!(limits(Some("500000"), Some(100_000)), 90_000);
    assert_eq!(limits(None, Some(8192)), 7168);
}

/// The inode numbers an inotify descriptor of this process watches.
fn watched_inodes() -> BTreeSet<u64> {
    let mut inodes = BTreeSet::new();
    for fd in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let is_inotify = std::fs::read_link(fd.path())
            .is_ok_and(|target| target.to_string_lossy() == "anon_inode:inotify");
        if !is_inotify {
            continue;
        }
        let info = std::fs::read_to_string(format!(
            "/proc/self/fdinfo/{}",
            fd.file_name().to_string_lossy()
        ))
        .unwrap_or_default();
        // `inotify wd:1 ino:5d2a sdev:800001 mask:...`, one line a watch.
        for line in info.lines().filter(|l| l.starts_with("inotify ")) {
            for word in line.split_whitespace() {
                if let Some(hex) = word.strip_prefix("ino:") {
                    inodes.insert(u64::from_str_radix(hex, 16).unwrap());
                }
            }
        }
    }
    inodes
}

fn inode(path: &Path) -> u64 {
    std::fs::symlink_metadata(path).unwrap().ino()
}

#[test]
fn git_and_ignored_directories_are_never_watched() {
    let f = fixture();
    // A file git tracks although its directory is ignored.
    write(&f.repo, ".gitignore", "target/\n*.log\nbuild/\n");
    write(&f.repo, "build/keep/kept.txt", "tracked anyway\n");
    git(&f.repo, &["add", "-f", ".gitignore", "build/keep/kept.txt"]);
    git(&f.repo, &["commit", "-q", "-m", "kept"]);
    // The user's own exclude file counts too.
    write(&f.repo, ".git/info/exclude", "scratch/\n");
    let base = git(&f.repo, &["rev-parse", "HEAD"]).trim().to_string();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "ignored", &base).unwrap();
    let wt = task.worktree.clone();
    write(&wt, "scratch/notes/x.md", "excluded\n");
    write(&wt, "target/debug/deps/x.o", "ignored\n");
    write(&wt, "build/cache/x", "ignored\n");
    write(&wt, "vendor/lib/src/a.c", "nested\n");
    git(&wt.join("vendor/lib"), &["init", "-q"]);
    task.watch_with(ROOMY);
    let mut expected: Vec<String> = [
        "",
        "build",
        "build/keep",
        "src",
        "src/deep",
        "vendor",
        "vendor/lib",
        "vendor/lib/src",
    ]
    .map(String::from)
    .to_vec();
    let watcher = task.watcher().unwrap();
    assert_eq!(watcher.watched_dirs(), expected);
    // And so says the kernel.
    let inodes = watched_inodes();
    for watched in ["src", "build/keep", "vendor/lib"] {
        assert!(inodes.contains(&inode(&wt.join(watched))), "{watched}");
    }
    for never in [
        ".git",
        "vendor/lib/.git",
        "vendor/lib/.git/objects",
        "target",
        "target/debug",
        "build/cache",
        "scratch",
        "scratch/notes",
    ] {
        let path = wt.join(never);
        if std::fs::symlink_metadata(&path).is_ok() {
            assert!(!inodes.contains(&inode(&path)), "{never} is watched");
        }
    }

    // Directories made later: the ignored ones and `.git` stay unwatched.
    task.checkpoint(&ChangeHint::Unknown, "first").unwrap();
    write(&wt, "src/target/gen.rs", "ignored\n");
    write(&wt, "src/new/mod.rs", "watched\n");
    git(&wt.join("src/new"), &["init", "-q"]);
    // Neither an ignored directory nor a nested repository is recorded (nor walked by git).
    let later = task.checkpoint(&ChangeHint::Unknown, "later").unwrap();
    assert!(is_events(task.last_command_scan().unwrap()));
    assert_eq!(later, None);
    expected.insert(5, "src/new".into());
    assert_eq!(task.watcher().unwrap().watched_dirs(), expected);
    let inodes = watched_inodes();
    for never in ["src/target", "src/new/.git", "src/new/.git/refs"] {
        assert!(
            !inodes.contains(&inode(&wt.join(never))),
            "{never} is watched"
        );
    }

    // What changes inside a nested repository is the walk's to judge.
    write(
        &wt,
        "src/new/mod.rs",
        "changed inside the nested repository
",
    );
    assert_eq!(
        task.checkpoint(&ChangeHint::Unknown, "nested").unwrap(),
        None
    );
    assert_eq!(
        task.last_command_scan(),
        Some(CommandScan::Walk(WalkReason::NestedRepository))
    );

    // The tracked file below the ignored directory is followed by its events.
    write(&wt, "build/keep/kept.txt", "changed\n");
    let cp = task
        .checkpoint(&ChangeHint::Unknown, "kept")
        .unwrap()
        .unwrap();
    assert!(is_events(task.last_command_scan().unwrap()));
    assert_eq!(cp.files, vec!["build/keep/kept.txt".to_string()]);
}

#[test]
fn a_gitignore_change_sets_the_watches_up_again_and_walks() {
    let mut pair = Pair::new(ROOMY);
    pair.both(|wt| write(wt, "target/out/app.bin", "ignored for now\n"));
    pair.first_checkpoint_walks();
    assert!(
        !pair
            .watched
            .watcher()
            .unwrap()
            .watched_dirs()
            .contains(&"target".to_string())
    );
    pair.both(|wt| write(wt, ".gitignore", "*.log\n"));
    let (a, b, scan) = pair.checkpoint();
    assert_eq!(scan, CommandScan::Walk(WalkReason::IgnoreRulesChanged));
    assert_eq!(a, b);
    assert!(
        pair.watched
            .watcher()
            .unwrap()
            .watched_dirs()
            .contains(&"target/out".to_string())
    );
    pair.both(|wt| write(wt, "target/out/app.bin", "no longer ignored\n"));
    let (a, b, scan) = pair.checkpoint();
    assert!(is_events(scan), "{scan:?}");
    assert_eq!(a, b);
}

#[test]
fn a_changed_exclude_file_of_the_user_is_noticed() {
    let mut pair = Pair::new(ROOMY);
    pair.first_checkpoint_walks();
    write(&pair.f.repo, ".git/info/exclude", "fresh/\n");
    // Before each command Bosun brings its own git directory up to date.
    pair.watched.verify().unwrap();
    pair.walked.verify().unwrap();
    pair.both(|wt| write(wt, "fresh/a.txt", "excluded\n"));
    let (a, b, scan) = pair.checkpoint();
    assert_eq!(scan, CommandScan::Walk(WalkReason::IgnoreRulesChanged));
    assert_eq!(a, b);
    assert!(
        !pair
            .watched
            .watcher()
            .unwrap()
            .watched_dirs()
            .contains(&"fresh".to_string())
    );

    // No longer excluded: the directory is found, and followed from then on.
    write(&pair.f.repo, ".git/info/exclude", "");
    pair.watched.verify().unwrap();
    pair.walked.verify().unwrap();
    let (a, b, scan) = pair.checkpoint();
    assert_eq!(scan, CommandScan::Walk(WalkReason::IgnoreRulesChanged));
    assert_eq!(a, b);
    pair.both(|wt| write(wt, "fresh/a.txt", "followed\n"));
    let (a, b, scan) = pair.checkpoint();
    assert!(is_events(scan), "{scan:?}");
    assert_eq!(a, b);
    assert!(ls_tree(&pair.f.repo, &pair.watched.latest_commit()).contains("\tfresh/a.txt\n"));
}

#[test]
fn a_resumed_task_walks_first_then_follows_events() {
    let f = fixture();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "resumed", &f.base).unwrap();
    let wt = task.worktree.clone();
    task.watch_with(ROOMY);
    write(&wt, "src/lib.rs", "before the restart\n");
    task.checkpoint(&ChangeHint::Unknown, "one").unwrap();
    drop(task);
    // Changed while no Bosun was watching.
    write(&wt, "src/deep/while_down.rs", "unseen by any watcher\n");

    let mut task = TaskWorktree::open(&f.home, &f.repo, "resumed", &wt, &f.base).unwrap();
    task.watch_with(ROOMY);
    let cp = task
        .checkpoint(&ChangeHint::Unknown, "resumed")
        .unwrap()
        .unwrap();
    assert_eq!(
        task.last_command_scan(),
        Some(CommandScan::Walk(WalkReason::Starting))
    );
    assert_eq!(cp.files, vec!["src/deep/while_down.rs".to_string()]);
    write(&wt, "src/lib.rs", "after the restart\n");
    let cp = task
        .checkpoint(&ChangeHint::Unknown, "two")
        .unwrap()
        .unwrap();
    assert!(is_events(task.last_command_scan().unwrap()));
    assert_eq!(cp.files, vec!["src/lib.rs".to_string()]);
    assert_eq!(
        tree_id(&f.repo, &task.latest_commit()).unwrap(),
        independent_tree(&wt, &f.base)
    );
}

#[test]
fn a_new_directory_is_looked_at_whole_and_by_its_name_not_as_a_pattern() {
    let mut pair = Pair::new(ROOMY);
    pair.both(|wt| {
        write(wt, "pages/i/index.tsx", "i\n");
        write(wt, "pages/d/index.tsx", "d\n");
    });
    pair.first_checkpoint_walks();
    // `[id]` as a pattern would also match `pages/i` and `pages/d`.
    pair.both(|wt| write(wt, "pages/[id]/deep/page.tsx", "by id\n"));
    let cp = pair
        .watched
        .checkpoint(&ChangeHint::Unknown, "new directory")
        .unwrap()
        .unwrap();
    assert!(is_events(pair.watched.last_command_scan().unwrap()));
    assert_eq!(cp.files, vec!["pages/[id]/deep/page.tsx".to_string()]);
    pair.walked
        .checkpoint(&ChangeHint::Unknown, "new directory")
        .unwrap();
    assert_eq!(
        tree_id(&pair.f.repo, &pair.watched.latest_commit()).unwrap(),
        tree_id(&pair.f.repo, &pair.walked.latest_commit()).unwrap()
    );
}

#[test]
fn the_last_writes_before_a_checkpoint_are_in_it() {
    let mut pair = Pair::new(ROOMY);
    pair.first_checkpoint_walks();
    for round in 0..5 {
        // Many events just before the checkpoint: the drain waits for all of them.
        pair.both(|wt| {
            for i in 0..400 {
                write(
                    wt,
                    &format!("burst/d{}/f{i}.txt", i % 7),
                    &format!("{round}\n"),
                );
            }
        });
        let (a, b, scan) = pair.checkpoint();
        assert!(is_events(scan), "{scan:?}");
        assert_eq!(a, b, "round {round}");
    }
}

#[test]
fn a_writer_still_running_during_checkpoints_leaves_nothing_for_a_walk_to_find() {
    let f = fixture();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "racing", &f.base).unwrap();
    let wt = task.worktree.clone();
    task.watch_with(ROOMY);
    task.checkpoint(&ChangeHint::Unknown, "first").unwrap();
    // A background job of a command run without the sandbox: it outlives its command.
    let writer = {
        let wt = wt.clone();
        std::thread::spawn(move || {
            for i in 0..600 {
                let dir = format!("job/d{}/e{}/f{}", i % 5, i % 7, i % 3);
                write(&wt, &format!("{dir}/out{i}.txt"), &format!("{i}\n"));
                if i % 50 == 49 {
                    let _ = std::fs::remove_dir_all(wt.join(format!("job/d{}", i % 5)));
                }
                std::thread::sleep(Duration::from_micros(300));
            }
        })
    };
    while !writer.is_finished() {
        task.checkpoint(&ChangeHint::Unknown, "while it writes")
            .unwrap();
    }
    writer.join().unwrap();
    task.checkpoint(&ChangeHint::Unknown, "after it stopped")
        .unwrap();
    assert!(is_events(task.last_command_scan().unwrap()));
    task.unwatch();
    let walked = task.checkpoint(&ChangeHint::Unknown, "walk").unwrap();
    assert_eq!(walked, None, "the watcher missed what the walk found");
    assert_eq!(
        task.last_command_scan(),
        Some(CommandScan::Walk(WalkReason::NoWatcher))
    );
}

#[test]
fn what_inotify_cannot_see_is_caught_by_the_final_checkpoint_which_walks() {
    let f = fixture();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "linked", &f.base).unwrap();
    let wt = task.worktree.clone();
    task.watch_with(ROOMY);
    task.checkpoint(&ChangeHint::Unknown, "first").unwrap();
    // Written through a hard link outside the worktree: no event names src/lib.rs.
    let outside = f.home.join("outside-link");
    std::fs::hard_link(wt.join("src/lib.rs"), &outside).unwrap();
    std::fs::write(&outside, "changed behind the watcher's back\n").unwrap();
    task.checkpoint(&ChangeHint::Unknown, "command").unwrap();
    task.release().unwrap();
    let last = bosun_workspace::latest_checkpoint_commit(&f.repo, "linked")
        .unwrap()
        .unwrap();
    assert_eq!(
        git(&f.repo, &["show", &format!("{last}:src/lib.rs")]),
        "changed behind the watcher's back\n"
    );
}

/// Inotify descriptors of this process that watch `dir`.
fn watching(dir: &Path) -> bool {
    watched_inodes().contains(&inode(dir))
}

fn eventually(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Threads of this process named by notify's inotify event loop.
fn notify_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|comm| comm.starts_with("notify-rs inoti"))
        })
        .count()
}

#[test]
fn the_watcher_stops_when_the_task_is_released_or_dropped() {
    let f = fixture();
    // Other tests of this binary may run watchers on threads of their own; nextest runs each
    // test in a process of its own, where the count of notify's threads is this test's alone.
    let own_process = std::env::var_os("NEXTEST").is_some();
    let threads_before = notify_threads();
    let mut task = TaskWorktree::create(&f.home, &f.repo, "stopped", &f.base).unwrap();
    let wt: PathBuf = task.worktree.clone();
    let barrier_dir = f.home.join("workspace");
    task.watch_with(ROOMY);
    assert!(watching(&wt));
    if own_process {
        assert_eq!(notify_threads(), threads_before + 1);
    }
    write(&wt, "src/lib.rs", "last change\n");
    task.release().unwrap();
    eventually("the inotify descriptor is closed", || !watching(&wt));
    if own_process {
        eventually("notify's thread ends", || {
            notify_threads() == threads_before
        });
    }
    // The final checkpoint was recorded; the barrier directory went with the watcher.
    let leftover: Vec<PathBuf> = walk_dirs(&barrier_dir)
        .into_iter()
        .filter(|d| d.ends_with("watch"))
        .collect();
    assert_eq!(leftover, Vec::<PathBuf>::new());

    let mut task = TaskWorktree::create(&f.home, &f.repo, "dropped", &f.base).unwrap();
    let wt = task.worktree.clone();
    task.watch_with(ROOMY);
    assert!(watching(&wt));
    task.unwatch();
    eventually("unwatch closes the descriptor", || !watching(&wt));
    task.watch_with(ROOMY);
    assert!(watching(&wt));
    drop(task);
    eventually("dropping the task closes the descriptor", || !watching(&wt));
}

fn walk_dirs(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                out.push(entry.path());
                stack.push(entry.path());
            }
        }
    }
    out
}
