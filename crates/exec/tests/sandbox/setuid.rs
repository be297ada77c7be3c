//! A set-id file made in the worktree does not stay set-id on the host.

use super::fixture::*;
use std::os::unix::fs::PermissionsExt;

#[tokio::test]
async fn setuid_and_setgid_bits_made_in_the_worktree_do_not_reach_the_host() {
    let Some(fx) = Fixture::new() else { return };
    let mut attempts = vec![
        ("chmod", "cp /bin/true chmod && chmod u+s chmod"),
        ("chmod-g", "cp /bin/true chmod-g && chmod g+s chmod-g"),
        (
            "chmod-octal",
            "cp /bin/true chmod-octal && chmod 6755 chmod-octal",
        ),
        ("install", "install -m 4755 /bin/true install"),
        ("mkdir", "mkdir -m 2755 mkdir"),
    ];
    if tool_exists("python3") {
        attempts.push((
            "python",
            "python3 -c \"import os; os.close(os.open('python', os.O_CREAT | os.O_WRONLY, 0o4755))\"",
        ));
        attempts.push((
            "python-chmod",
            "python3 -c \"import os; open('python-chmod', 'w').close(); os.chmod('python-chmod', 0o4755)\"",
        ));
    }
    for (name, command) in &attempts {
        let (_, text) = fx.run(&format!("{command} 2>&1; true")).await;
        let path = fx.worktree.join(name);
        if let Ok(meta) = std::fs::metadata(&path) {
            let mode = meta.permissions().mode();
            assert_eq!(
                mode & 0o6000,
                0,
                "`{command}` left mode {mode:o} on the host: {text}"
            );
        }
    }
    // Ordinary modes still work.
    let (outcome, text) = fx
        .run("cp /bin/true plain && chmod 755 plain && mkdir -m 700 d && ./plain")
        .await;
    assert!(outcome.success(), "{text}");
}
