//! API keys in a real OS keychain: on Linux, GNOME Keyring as the Secret Service, on a session bus
//! of the test's own (`dbus-run-session`) with a keyring in a temporary home, so the developer's
//! keyring is never touched; and with no keychain at all. Each test re-runs itself in a process
//! of its own, because the bus address reaches the keychain client only through the environment.
//!
//! Needs `dbus-run-session`, `gnome-keyring-daemon` and `secret-tool`: `scripts/setup` installs
//! them (Debian/Ubuntu packages `dbus`, `gnome-keyring`, `libsecret-tools`).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bosun_app::secrets;
use bosun_app::settings::{self, ProviderInput};
use pretty_assertions::assert_eq;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Set in a re-run of a test: the temporary root of its home (and keyring).
const RERUN: &str = "BOSUN_KEYCHAIN_TEST_ROOT";
const KEY: &str = "sk-bosun-test-5b1e-not-a-real-key";

#[test]
fn a_key_saved_in_settings_lands_in_the_system_keyring_and_is_forgotten_with_its_provider() {
    if let Some(root) = std::env::var_os(RERUN) {
        inside_the_session(Path::new(&root));
        return;
    }
    let missing: Vec<&str> = ["dbus-run-session", "gnome-keyring-daemon", "secret-tool"]
        .into_iter()
        .filter(|tool| which(tool).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "{} not installed: run scripts/setup (it installs the packages dbus, gnome-keyring and libsecret-tools)",
        missing.join(", ")
    );
    let root = tempfile::tempdir().unwrap();
    // dbus-run-session gives the re-run the address of its own bus.
    let mut session = Command::new("dbus-run-session");
    session.arg("--").arg(std::env::current_exe().unwrap());
    rerun(
        session,
        "a_key_saved_in_settings_lands_in_the_system_keyring_and_is_forgotten_with_its_provider",
        root.path(),
    );
}

#[test]
fn without_a_keychain_settings_say_so_and_refuse_the_key_instead_of_writing_it_down() {
    if let Some(root) = std::env::var_os(RERUN) {
        let status = secrets::status();
        assert!(!status.available, "{status:?}");
        assert!(
            status.message.contains("environment variable"),
            "{status:?}"
        );
        let home = Path::new(&root).join("bosun");
        let provider = ProviderInput {
            api: "openai-chat".into(),
            base_url: None,
            model: "test-model".into(),
            api_key_env: None,
            limits: Default::default(),
            profile: None,
        };
        let err = settings::save_provider(
            &home,
            "bosun-test-nokeychain",
            provider,
            Some(KEY.into()),
            None,
        )
        .unwrap_err();
        assert!(err.message.contains("keychain"), "{err}");
        let plain = files_containing(Path::new(&root), KEY);
        assert!(plain.is_empty(), "the key was written to {plain:?}");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let mut alone = Command::new(std::env::current_exe().unwrap());
    // A session bus that is not there.
    alone.env(
        "DBUS_SESSION_BUS_ADDRESS",
        format!("unix:path={}", root.path().join("no-bus").display()),
    );
    rerun(
        alone,
        "without_a_keychain_settings_say_so_and_refuse_the_key_instead_of_writing_it_down",
        root.path(),
    );
}

/// Runs `test` of this binary again with `command` (the binary, or a wrapper of it), in a home
/// of its own under `root`, and fails with its output if it fails.
fn rerun(mut command: Command, test: &str, root: &Path) {
    let runtime = root.join("run");
    std::fs::create_dir(&runtime).unwrap();
    std::fs::set_permissions(
        &runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let out = command
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(RERUN, root)
        .env("HOME", root)
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("XDG_DATA_HOME", root.join("share"))
        .env("XDG_CONFIG_HOME", root.join("config"))
        .env_remove("DISPLAY")
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the re-run failed:\n{said}");
    assert!(
        said.contains("1 passed"),
        "the test did not re-run:\n{said}"
    );
}

/// The real test, on the session bus of `dbus-run-session` with GNOME Keyring unlocked.
fn inside_the_session(root: &Path) {
    unlock_keyring();
    let status = secrets::status();
    assert!(status.available, "{}", status.message);

    let home = root.join("bosun");
    let name = format!("bosun-test-keychain-{}", std::process::id());
    let provider = ProviderInput {
        api: "openai-chat".into(),
        base_url: Some("http://127.0.0.1:9/v1".into()),
        model: "test-model".into(),
        api_key_env: None,
        limits: Default::default(),
        profile: None,
    };
    settings::save_provider(&home, &name, provider, Some(KEY.into()), None).unwrap();

    // Read back through the app, and found by the system's own tool in the keyring.
    assert_eq!(secrets::read(&name).as_deref(), Some(KEY));
    let found = secret_tool_search(&name);
    assert!(found.contains(&format!("secret = {KEY}")), "{found}");
    assert!(found.contains("attribute.service = bosun"), "{found}");
    let view = settings::settings(&home, status).unwrap();
    assert_eq!(
        view.providers
            .iter()
            .map(|p| (p.name.as_str(), p.key_in_keychain))
            .collect::<Vec<_>>(),
        [(name.as_str(), true)]
    );
    // In no file in plain text: not in Bosun's config, nor in the keyring's own (encrypted) file.
    assert!(root.join("share/keyrings").is_dir(), "no keyring file");
    let plain = files_containing(root, KEY);
    assert!(plain.is_empty(), "the key is in plain text in {plain:?}");

    settings::remove_provider(&home, &name).unwrap();
    assert_eq!(secrets::read(&name), None);
    let found = secret_tool_search(&name);
    assert!(!found.contains(KEY), "still in the keyring: {found}");
}

/// Starts GNOME Keyring's Secret Service with its login keyring unlocked (created with a
/// password on first use, so nothing prompts), and waits until it answers on the bus.
fn unlock_keyring() {
    let mut daemon = Command::new("gnome-keyring-daemon")
        .args(["--unlock", "--components=secrets"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    daemon
        .stdin
        .take()
        .unwrap()
        .write_all(b"bosun-test-password")
        .unwrap();
    // It forks: the process started here returns once the daemon runs.
    assert!(
        daemon.wait().unwrap().success(),
        "gnome-keyring-daemon failed"
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while !secret_service_on_bus() {
        assert!(
            Instant::now() < deadline,
            "the Secret Service never appeared on the bus"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn secret_service_on_bus() -> bool {
    let out = Command::new("dbus-send")
        .args([
            "--session",
            "--print-reply",
            "--dest=org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.NameHasOwner",
            "string:org.freedesktop.secrets",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).contains("boolean true")
}

fn secret_tool_search(account: &str) -> String {
    let out = Command::new("secret-tool")
        .args([
            "search",
            "--all",
            "service",
            secrets::SERVICE,
            "username",
            account,
        ])
        .output()
        .unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn files_containing(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            found.extend(files_containing(&path, needle));
        } else if kind.is_file()
            && let Ok(bytes) = std::fs::read(&path)
            && bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
        {
            found.push(path);
        }
    }
    found
}

fn which(tool: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(tool))
        .find(|p| p.is_file())
}
