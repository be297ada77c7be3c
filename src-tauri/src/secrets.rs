//! API keys in the OS keychain (Secret Service on Linux, Keychain on macOS, Credential Manager on
//! Windows), one entry per provider under the service `bosun`. A key is never written to the
//! journal, to config.toml or to a log: only the keychain holds it.

use serde::Serialize;

/// The keychain service every Bosun key is stored under; the account is the provider's name.
pub const SERVICE: &str = "bosun";

/// Whether keys can be stored, and if not, why (shown in the UI next to the key field).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeychainStatus {
    pub available: bool,
    pub message: String,
}

/// Probes the keychain with a read of an entry that does not exist.
pub fn status() -> KeychainStatus {
    let probe = keyring::Entry::new(SERVICE, "bosun-keychain-probe").and_then(|e| e.get_password());
    match probe {
        Ok(_) | Err(keyring::Error::NoEntry) => KeychainStatus {
            available: true,
            message: "Keys are stored in the system keychain.".into(),
        },
        Err(err) => KeychainStatus {
            available: false,
            message: format!(
                "No system keychain answers here, so keys cannot be stored (on Linux Bosun needs \
                 a Secret Service such as GNOME Keyring or KeePassXC). Put the key in an \
                 environment variable instead and give its name. Detail: {}",
                short(&err)
            ),
        },
    }
}

/// Stores `key` as the provider's key.
pub fn store(provider: &str, key: &str) -> Result<(), String> {
    keyring::Entry::new(SERVICE, provider)
        .and_then(|e| e.set_password(key))
        .map_err(|e| format!("could not store the key in the keychain: {}", short(&e)))
}

/// The provider's key, if the keychain holds one.
pub fn read(provider: &str) -> Option<String> {
    keyring::Entry::new(SERVICE, provider)
        .and_then(|e| e.get_password())
        .ok()
        .filter(|k| !k.is_empty())
}

/// Forgets the provider's key; a missing entry or keychain is not an error.
pub fn forget(provider: &str) {
    if let Ok(entry) = keyring::Entry::new(SERVICE, provider) {
        let _ = entry.delete_credential();
    }
}

fn short(err: &keyring::Error) -> String {
    let text = err.to_string();
    match text.split_once('\n') {
        Some((first, _)) => first.to_string(),
        None => text,
    }
}
