//! Values of secret-looking environment variables, redacted wherever they appear.

/// Name fragments that make an environment variable secret-looking.
const SECRET_NAME_WORDS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "PRIVATE",
    "_PAT",
    "_PWD",
];

/// Variables whose names match a secret word but which hold a location or a setting.
const NOT_SECRET_NAME_WORDS: &[&str] = &["KEYBOARD", "KEYMAP", "KEYCHAIN", "SSH_AUTH_SOCK"];
const NOT_SECRET_NAME_SUFFIXES: &[&str] = &[
    "_FILE",
    "_PATH",
    "_DIR",
    "_SOCK",
    "_HOME",
    "_ID",
    "_TTL",
    "_TIMEOUT",
    "_URL",
    "_TYPE",
    "_REGION",
    "_NAME",
    "_EMAIL",
    "_USER",
    "_USERNAME",
    "_HOST",
    "_PORT",
];

/// Whether an environment variable's name says its value is a secret.
pub(crate) fn is_secret_env_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAME_WORDS.iter().any(|w| upper.contains(w))
        && !NOT_SECRET_NAME_WORDS.iter().any(|w| upper.contains(w))
        && !NOT_SECRET_NAME_SUFFIXES.iter().any(|s| upper.ends_with(s))
}

/// Whether a secret variable's value is worth redacting everywhere: at least 8 characters, not a
/// path, a number, or a short plain word (`development`, `localhost`) that prose is full of.
pub(crate) fn is_redactable_env_value(value: &str) -> bool {
    let len = value.chars().count();
    len >= 8
        && !value.starts_with('/')
        && !value.starts_with('~')
        && !value.bytes().all(|b| b.is_ascii_digit())
        && (len >= 16 || !value.bytes().all(|b| b.is_ascii_lowercase()))
        && !matches!(value.to_ascii_lowercase().as_str(), "true" | "false")
}

/// `(value, kind)` pairs to redact, longest value first so a value containing another wins.
pub(crate) fn secret_values(env: &[(String, String)]) -> Vec<(String, String)> {
    let mut values: Vec<(String, String)> = Vec::new();
    for (name, value) in env {
        let value = value.trim();
        if is_secret_env_name(name)
            && is_redactable_env_value(value)
            && !values.iter().any(|(v, _)| v == value)
        {
            values.push((value.to_string(), format!("env:{name}")));
        }
    }
    values.sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_env_names() {
        for name in [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "DB_PASSWORD",
            "AWS_SECRET_ACCESS_KEY",
            "GH_PAT",
            "NPM_AUTH_TOKEN",
            "GOOGLE_APPLICATION_CREDENTIALS_JSON",
        ] {
            assert!(is_secret_env_name(name), "{name}");
        }
        for name in [
            "HOME",
            "PATH",
            "PWD",
            "OLDPWD",
            "SSH_AUTH_SOCK",
            "KEYBOARD_LAYOUT",
            "AWS_ACCESS_KEY_ID",
            "SSL_KEY_FILE",
            "PATHEXT",
        ] {
            assert!(!is_secret_env_name(name), "{name}");
        }
    }

    #[test]
    fn boring_values_are_skipped() {
        for v in [
            "short",
            "development",
            "/home/me/.ssh/id_ed25519",
            "12345678",
            "true",
        ] {
            assert!(!is_redactable_env_value(v), "{v}");
        }
        for v in ["hunter2hunter2", "correcthorsebatterystaple", "sk-abc"] {
            assert_eq!(is_redactable_env_value(v), v.len() >= 8, "{v}");
        }
    }
}
