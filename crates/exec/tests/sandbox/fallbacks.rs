//! Each fallback (forced with `BOSUN_SANDBOX_DISABLE`, as on a kernel that lacks the part)
//! keeps the guarantees `SandboxSupport` claims for it.

use super::fixture::*;
use super::sockets::{serve_pong, write_probe};
use std::net::TcpListener;

/// Runs `command` with `disabled` parts of the sandbox off (and the worktree's `.env` not
/// denied, since only a mount namespace can hide it).
async fn run_without(fx: &Fixture, disabled: &str, command: &str) -> (bool, String) {
    let spec = fx.spec_without(disabled, command, fx.policy_without_worktree_dotenv());
    let (outcome, text) = run_spec(&spec).await;
    (outcome.success(), text)
}

async fn assert_setsid_job_dies(fx: &Fixture, disabled: &str) {
    let (ok, text) = run_without(
        fx,
        disabled,
        "setsid nohup sh -c 'sleep 2; echo escaped > escaped' >/dev/null 2>&1 & echo started",
    )
    .await;
    assert!(ok, "{text}");
    assert!(
        !appears_later(&fx.worktree.join("escaped")).await,
        "without {disabled}, the setsid job outlived its command"
    );
}

async fn assert_tcp_cut(fx: &Fixture, disabled: &str) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (_, text) = run_without(
        fx,
        disabled,
        &format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"),
    )
    .await;
    assert!(!text.contains("connected\n"), "without {disabled}: {text}");
}

async fn assert_outside_socket_refused(fx: &Fixture, disabled: &str) {
    if !tool_exists("python3") {
        return;
    }
    let socket = fx
        .outside
        .join(format!("{}.sock", disabled.replace(',', "-")));
    serve_pong(&socket);
    write_probe(fx);
    let (_, text) = run_without(
        fx,
        disabled,
        &format!("python3 probe.py '{}'", socket.display()),
    )
    .await;
    assert!(text.starts_with("refused"), "without {disabled}: {text}");
}

async fn assert_setuid_refused(fx: &Fixture, disabled: &str) {
    let (_, text) = run_without(
        fx,
        disabled,
        "cp /bin/true s && chmod u+s s 2>&1; stat -c %a s",
    )
    .await;
    assert!(
        text.trim_end().ends_with("755"),
        "without {disabled}: {text}"
    );
}

#[tokio::test]
async fn without_a_pid_namespace_jobs_still_die_and_the_namespaces_still_hold() {
    let Some(fx) = Fixture::new() else { return };
    assert_setsid_job_dies(&fx, "pidns").await;
    assert_tcp_cut(&fx, "pidns").await;
    assert_outside_socket_refused(&fx, "pidns").await;
    assert_setuid_refused(&fx, "pidns").await;
}

#[tokio::test]
async fn without_namespaces_jobs_die_and_seccomp_refuses_sockets_and_setuid() {
    let Some(fx) = Fixture::new() else { return };
    assert_setsid_job_dies(&fx, "netns").await;
    assert_tcp_cut(&fx, "netns").await;
    assert_outside_socket_refused(&fx, "netns").await;
    assert_setuid_refused(&fx, "netns").await;
    if tool_exists("python3") {
        // UDP, which Landlock does not cover, is refused by seccomp.
        let (_, text) = run_without(
            &fx,
            "netns",
            "python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print('udp open')\" 2>&1",
        )
        .await;
        assert!(!text.contains("udp open"), "{text}");
    }
    // Denied paths still cannot be read, writes outside still fail.
    let (_, text) = run_without(
        &fx,
        "netns",
        &format!(
            "cat ~/.ssh/id_rsa {}/.en? 2>&1; echo x > '{}/x'",
            fx.repo.display(),
            fx.outside.display()
        ),
    )
    .await;
    assert!(!text.contains("fake-key-material"), "{text}");
    assert!(!text.contains("user-checkout-secret"), "{text}");
    assert!(!fx.outside.join("x").exists());
}

#[tokio::test]
async fn without_seccomp_the_namespaces_still_contain_network_sockets_and_jobs() {
    let Some(fx) = Fixture::new() else { return };
    assert_setsid_job_dies(&fx, "seccomp").await;
    assert_tcp_cut(&fx, "seccomp").await;
    assert_outside_socket_refused(&fx, "seccomp").await;
}

#[tokio::test]
async fn without_namespaces_and_seccomp_tcp_is_cut_but_udp_is_open_so_the_network_is_not_contained()
{
    let Some(fx) = Fixture::new() else { return };
    assert_setsid_job_dies(&fx, "netns,seccomp").await;
    assert_tcp_cut(&fx, "netns,seccomp").await;
    if tool_exists("python3") {
        // What `SandboxSupport::network_contained()` is false for: Bosun then asks for
        // every command (see crates/cli/tests/suite/containment.rs).
        let (_, text) = run_without(
            &fx,
            "netns,seccomp",
            "python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print('udp open')\" 2>&1",
        )
        .await;
        assert!(text.contains("udp open"), "{text}");
    }
}

#[tokio::test]
async fn without_namespaces_a_job_that_outlives_kill_9_of_bosun_and_the_trampoline_is_swept_later()
{
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let Some(fx) = Fixture::new() else { return };
    let policy = serde_json::to_string(&fx.policy_without_worktree_dotenv()).unwrap();
    // The trampoline as run_command starts it, minus run_command (which plays Bosun).
    let mut trampoline = Command::new(env!("CARGO_BIN_EXE_bosun-sandbox"))
        .args([bosun_exec::SANDBOX_ARG, &policy, "--", "bash", "-c"])
        .arg("setsid sleep 31 >/dev/null 2>&1 & sleep 0.2; echo started; sleep 32")
        .env(bosun_exec::sandbox::DISABLE_ENV, "netns")
        .current_dir(&fx.worktree)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(trampoline.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "started\n");
    // SIGKILL leaves the trampoline no chance to end the job it does not know it has.
    trampoline.kill().unwrap();
    trampoline.wait().unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let swept = bosun_exec::sweep_leftovers();
    let job = swept
        .iter()
        .find(|l| l.command == "sleep 31")
        .unwrap_or_else(|| panic!("the job was not swept: {swept:?}"));
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let state = std::fs::read_to_string(format!("/proc/{}/stat", job.pid)).unwrap_or_default();
    let state = state.rsplit(')').next().unwrap_or("").trim_start();
    assert!(
        state.is_empty() || state.starts_with('Z'),
        "the swept job still runs: {state}"
    );
    assert!(
        bosun_exec::sweep_leftovers()
            .iter()
            .all(|l| l.pid != job.pid),
        "swept twice"
    );
}
