#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;

fn policy(write: &[&str], deny: &[&str], read_only: &[&str], network: bool) -> SandboxPolicy {
    let paths = |list: &[&str]| list.iter().map(PathBuf::from).collect();
    SandboxPolicy {
        worktree: PathBuf::from("/Users/u/wt"),
        write_paths: paths(write),
        read_deny: paths(deny),
        read_only_paths: paths(read_only),
        network,
        ..SandboxPolicy::default()
    }
}

/// The profile's lines that start with `prefix`, in order.
fn rules(profile: &str, prefix: &str) -> Vec<String> {
    profile
        .lines()
        .filter(|l| l.starts_with(prefix))
        .map(str::to_string)
        .collect()
}

fn position(profile: &str, line: &str) -> usize {
    profile
        .lines()
        .position(|l| l == line)
        .unwrap_or_else(|| panic!("missing line {line}\n{profile}"))
}

/// Reads the profile as SBPL's reader would: strings end at an unescaped `"`, `#"…"` regexes
/// likewise, `;` starts a comment. Returns the string literals, and fails unless every
/// parenthesis outside strings is balanced.
fn sbpl_strings(profile: &str) -> Vec<String> {
    let mut depth = 0i32;
    let mut strings = Vec::new();
    let mut chars = profile.chars();
    while let Some(c) = chars.next() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                assert!(depth >= 0, "unbalanced ) in\n{profile}");
            }
            ';' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '"' => {
                let mut s = String::new();
                loop {
                    match chars.next().expect("unterminated string") {
                        '\\' => s.push(chars.next().expect("dangling escape")),
                        '"' => break,
                        c => s.push(c),
                    }
                }
                strings.push(s);
            }
            _ => {}
        }
    }
    assert_eq!(depth, 0, "unbalanced ( in\n{profile}");
    strings
}

#[test]
fn the_profile_is_closed_by_default_and_reads_everywhere_but_the_denied_paths() {
    let p = seatbelt_profile(&policy(
        &["/Users/u/wt"],
        &["/Users/u/.ssh", "/Users/u/wt/.env"],
        &[],
        false,
    ));
    let lines: Vec<&str> = p.lines().collect();
    assert_eq!(lines[..2], ["(version 1)", "(deny default)"]);
    assert!(!p.contains("(allow default)"), "{p}");
    assert_eq!(rules(&p, "(allow file-read*)"), ["(allow file-read*)"]);
    assert_eq!(
        rules(&p, "(deny file-read*"),
        [
            r#"(deny file-read* file-write* (subpath "/Users/u/.ssh"))"#,
            r#"(deny file-read* file-write* (subpath "/Users/u/wt/.env"))"#,
        ]
    );
    // Last match wins in Seatbelt: the denials must come after every grant.
    let read_all = position(&p, "(allow file-read*)");
    let write = position(&p, r#"(allow file-write* (subpath "/Users/u/wt"))"#);
    let deny = position(
        &p,
        r#"(deny file-read* file-write* (subpath "/Users/u/wt/.env"))"#,
    );
    assert!(read_all < deny && write < deny, "{p}");
    sbpl_strings(&p);
}

#[test]
fn writes_are_granted_only_under_the_write_paths_and_standard_devices() {
    let p = seatbelt_profile(&policy(&["/Users/u/wt", "/Users/u/tmp"], &[], &[], false));
    assert_eq!(
        rules(&p, "(allow file-write*"),
        [
            r#"(allow file-write* file-ioctl (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty"))"#,
            r#"(allow file-write* (subpath "/dev/fd"))"#,
            r#"(allow file-write* (subpath "/Users/u/wt"))"#,
            r#"(allow file-write* (subpath "/Users/u/tmp"))"#,
        ]
    );
    // Only ptys the command opened itself are writable terminals, nothing else at all.
    let every_write_grant: Vec<String> = p
        .lines()
        .filter(|l| l.starts_with("(allow") && l.contains("file-write"))
        .map(str::to_string)
        .collect();
    assert_eq!(every_write_grant.len(), 6, "{p}");
    assert!(!p.contains("file-link") && !p.contains("file-clone"), "{p}");
    // Neither root may be removed or renamed: their parents are not writable.
    assert_eq!(
        rules(&p, "(deny file-write-unlink"),
        [
            r#"(deny file-write-unlink (literal "/Users/u/wt"))"#,
            r#"(deny file-write-unlink (literal "/Users/u/tmp"))"#,
        ]
    );
}

#[test]
fn the_user_git_dir_stays_read_only_except_the_worktrees_own_state() {
    let git = "/Users/u/repo/.git";
    let p = seatbelt_profile(&policy(
        &[
            "/Users/u/wt",
            "/Users/u/repo", // contains .git: dropped, as on Linux
            git,             // is .git: dropped
            "/Users/u/repo/.git/worktrees/wt",
            "/Users/u/repo/.git/objects",
            "/Users/u/repo/.git/refs/heads/bosun",
            "/Users/u/repo/.git/logs/refs/heads/bosun",
        ],
        &[],
        &[git],
        false,
    ));
    assert_eq!(
        rules(&p, "(allow file-write* (subpath \"/Users"),
        [
            r#"(allow file-write* (subpath "/Users/u/wt"))"#,
            r#"(allow file-write* (subpath "/Users/u/repo/.git/worktrees/wt"))"#,
            r#"(allow file-write* (subpath "/Users/u/repo/.git/objects"))"#,
            r#"(allow file-write* (subpath "/Users/u/repo/.git/refs/heads/bosun"))"#,
            r#"(allow file-write* (subpath "/Users/u/repo/.git/logs/refs/heads/bosun"))"#,
        ]
    );
    // The object store and the ref dirs cannot be moved out of .git (`mv .git/objects wt/`),
    // exactly as Landlock refuses removing a directory from a read-only parent.
    assert_eq!(
        rules(&p, "(deny file-write-unlink"),
        [
            r#"(deny file-write-unlink (literal "/Users/u/wt"))"#,
            r#"(deny file-write-unlink (literal "/Users/u/repo/.git/worktrees/wt"))"#,
            r#"(deny file-write-unlink (literal "/Users/u/repo/.git/objects"))"#,
            r#"(deny file-write-unlink (literal "/Users/u/repo/.git/refs/heads/bosun"))"#,
            r#"(deny file-write-unlink (literal "/Users/u/repo/.git/logs/refs/heads/bosun"))"#,
        ]
    );
}

#[test]
fn a_denied_path_inside_a_write_path_cannot_be_moved_out_from_under_its_rule() {
    let p = seatbelt_profile(&policy(
        &["/Users/u/wt", "/Users/u/wt/tmp"],
        &["/Users/u/wt/config/secrets/key", "/Users/u/.aws"],
        &[],
        false,
    ));
    assert_eq!(
        rules(&p, "(deny file-write-unlink"),
        [
            // wt/tmp's parent is writable, so it may go, as on Linux.
            r#"(deny file-write-unlink (literal "/Users/u/wt"))"#,
            r#"(deny file-write-unlink (literal "/Users/u/wt/config/secrets"))"#,
            r#"(deny file-write-unlink (literal "/Users/u/wt/config"))"#,
        ]
    );
}

#[test]
fn without_network_only_unix_sockets_under_the_write_paths_are_reachable() {
    let p = seatbelt_profile(&policy(&["/Users/u/wt"], &[], &[], false));
    let network: Vec<String> = p
        .lines()
        .filter(|l| l.contains("network") || l.contains("socket"))
        .map(str::to_string)
        .collect();
    assert_eq!(
        network,
        [
            "(allow system-socket (socket-domain AF_UNIX))",
            r#"(allow network-bind (local unix-socket (subpath "/Users/u/wt")))"#,
            r#"(allow network-outbound (remote unix-socket (subpath "/Users/u/wt")))"#,
        ],
        "no IP networking, loopback included"
    );
    assert!(!p.contains("com.apple.SystemConfiguration"), "{p}");
}

#[test]
fn with_network_everything_network_is_allowed() {
    let p = seatbelt_profile(&policy(&["/Users/u/wt"], &[], &[], true));
    assert_eq!(rules(&p, "(allow network"), ["(allow network*)"]);
    assert_eq!(rules(&p, "(allow system-socket"), ["(allow system-socket)"]);
    assert!(
        p.contains(r#"  (global-name "com.apple.SystemConfiguration.DNSConfiguration")"#),
        "{p}"
    );
    assert!(!p.contains("unix-socket"), "{p}");
    sbpl_strings(&p);
}

#[test]
fn tricky_paths_are_escaped_and_read_back_unchanged() {
    let tricky = [
        r#"/Users/u/my "quoted" dir"#,
        r"/Users/u/back\slash\",
        "/Users/u/(parens) and ; semicolons",
        "/Users/u/ünïcödé and spaces",
    ];
    let p = seatbelt_profile(&policy(&tricky, &tricky, &[], false));
    assert!(
        p.contains(r#"(allow file-write* (subpath "/Users/u/my \"quoted\" dir"))"#),
        "{p}"
    );
    assert!(
        p.contains(r#"(deny file-read* file-write* (subpath "/Users/u/back\\slash\\"))"#),
        "{p}"
    );
    assert!(
        p.contains(r#"(allow file-write* (subpath "/Users/u/(parens) and ; semicolons"))"#),
        "{p}"
    );
    // Read back as SBPL does, each path comes out exactly as it went in.
    let strings = sbpl_strings(&p);
    for path in tricky {
        assert_eq!(
            strings.iter().filter(|s| *s == path).count(),
            5,
            "{path}: write, two unix-socket rules, deny, unlink\n{p}"
        );
    }
}

#[test]
fn paths_under_tmp_var_and_etc_are_written_in_both_forms() {
    let p = seatbelt_profile(&policy(
        &["/tmp/bosun/wt/", "/private/var/folders/x/T/task"],
        &["/etc/secret", "/tmpfiles/key", "/var"],
        &[],
        false,
    ));
    assert_eq!(
        rules(&p, "(allow file-write* (subpath \"/"),
        [
            r#"(allow file-write* (subpath "/dev/fd"))"#,
            r#"(allow file-write* (subpath "/tmp/bosun/wt"))"#,
            r#"(allow file-write* (subpath "/private/tmp/bosun/wt"))"#,
            r#"(allow file-write* (subpath "/private/var/folders/x/T/task"))"#,
            r#"(allow file-write* (subpath "/var/folders/x/T/task"))"#,
        ]
    );
    assert_eq!(
        rules(&p, "(deny file-read*"),
        [
            r#"(deny file-read* file-write* (subpath "/etc/secret"))"#,
            r#"(deny file-read* file-write* (subpath "/private/etc/secret"))"#,
            r#"(deny file-read* file-write* (subpath "/tmpfiles/key"))"#,
            r#"(deny file-read* file-write* (subpath "/var"))"#,
            r#"(deny file-read* file-write* (subpath "/private/var"))"#,
        ]
    );
}

#[test]
fn a_read_only_path_in_its_other_form_still_drops_the_write_path_containing_it() {
    let p = seatbelt_profile(&policy(
        &["/tmp/repo", "/tmp/repo/.git/objects"],
        &[],
        &["/private/tmp/repo/.git"],
        false,
    ));
    assert_eq!(
        rules(&p, "(allow file-write* (subpath \"/"),
        [
            r#"(allow file-write* (subpath "/dev/fd"))"#,
            r#"(allow file-write* (subpath "/tmp/repo/.git/objects"))"#,
            r#"(allow file-write* (subpath "/private/tmp/repo/.git/objects"))"#,
        ]
    );
}

#[test]
fn sandbox_exec_arguments_add_resolved_paths_and_run_bash() {
    let root = tempfile::tempdir().unwrap();
    let real = root.path().canonicalize().unwrap();
    std::fs::create_dir_all(real.join("keys")).unwrap();
    std::os::unix::fs::symlink(real.join("keys"), real.join("ssh")).unwrap();
    let wt = real.join("wt");
    let mut policy = policy(&[], &[], &[], false);
    policy.write_paths = vec![wt.clone()];
    policy.read_deny = vec![real.join("ssh")];
    let args = seatbelt_args(&policy, "echo 'hi'").unwrap();
    assert_eq!(args[0], "-p");
    assert_eq!(args[2..], ["--", "bash", "-c", "echo 'hi'"]);
    let deny = rules(&args[1], "(deny file-read*");
    assert!(
        deny.contains(&format!(
            "(deny file-read* file-write* (subpath \"{}\"))",
            real.join("ssh").display()
        )) && deny.contains(&format!(
            "(deny file-read* file-write* (subpath \"{}\"))",
            real.join("keys").display()
        )),
        "the symlink and what it points to are both denied: {deny:?}"
    );
    assert!(args[1].contains(&format!(
        "(allow file-write* (subpath \"{}\"))",
        wt.display()
    )));
}

#[test]
fn paths_a_profile_cannot_name_are_refused() {
    use std::os::unix::ffi::OsStrExt;
    let bad = [
        PathBuf::from("relative/wt"),
        PathBuf::from("/Users/u/line\nbreak"),
        PathBuf::from(std::ffi::OsStr::from_bytes(b"/Users/u/\xff")),
    ];
    for path in bad {
        let mut p = policy(&[], &[], &[], false);
        p.read_deny = vec![path.clone()];
        let err = seatbelt_args(&p, "true").unwrap_err();
        assert!(
            matches!(&err, SandboxError::SeatbeltPath(refused) if *refused == path),
            "{err}"
        );
    }
}
