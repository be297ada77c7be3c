//! The environment a sandboxed command sees: everything except variables whose names look
//! secret, plus the proxy variables when it reaches the network through Bosun's proxy.

/// Name fragments that make a variable look secret (matched on the upper-cased name).
const SECRET_FRAGMENTS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "PRIVATE",
    "COOKIE",
    "SESSION",
    "AUTH",
];

/// Fragments that contain a secret-looking one but are harmless (`GIT_AUTHOR_NAME`).
const HARMLESS_FRAGMENTS: &[&str] = &["AUTHOR"];

/// Whole names that carry credentials without saying so.
const SECRET_NAMES: &[&str] = &[
    "DATABASE_URL",
    "REDIS_URL",
    "MONGODB_URI",
    "MONGO_URL",
    "AMQP_URL",
    "SENTRY_DSN",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "KUBECONFIG",
    "DOCKER_CONFIG",
    "PGPASS",
    "PGPASSFILE",
];

/// True when a variable called `name` would be dropped by [`scrub_env`] (absent an allowance).
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if SECRET_NAMES.contains(&upper.as_str()) {
        return true;
    }
    // AUTHORIZATION is secret, AUTHOR is not.
    let mut cleaned = upper
        .replace("AUTHORIZ", "AUTH")
        .replace("AUTHORIS", "AUTH");
    for harmless in HARMLESS_FRAGMENTS {
        cleaned = cleaned.replace(harmless, "_");
    }
    SECRET_FRAGMENTS.iter().any(|f| cleaned.contains(f))
}

/// Drops variables whose names look secret (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`,
/// `*PASSWD*`, `*CREDENTIAL*`, `*AUTH*` but not `*AUTHOR*`, `*SESSION*`, `*COOKIE*`, connection
/// URLs such as `DATABASE_URL`, `SSH_AUTH_SOCK`), keeping any name listed in `allow` (compared
/// exactly). Order is preserved.
pub fn scrub_env(
    vars: impl Iterator<Item = (String, String)>,
    allow: &[String],
) -> Vec<(String, String)> {
    vars.filter(|(name, _)| allow.iter().any(|a| a == name) || !looks_secret(name))
        .collect()
}

/// The port the proxy forwarder (see `forwarder.rs`) listens on inside the command's network namespace (private to the
/// command, so always free).
pub const PROXY_PORT: u16 = 3128;

/// The variables that point a command's HTTP clients at the forwarder: `HTTP_PROXY`,
/// `HTTPS_PROXY`, `ALL_PROXY` (and their lower-case forms) = `http://127.0.0.1:3128`, and
/// `NO_PROXY`/`no_proxy` for loopback, so the command's own local servers are reached
/// directly.
pub fn proxy_env() -> Vec<(String, String)> {
    let url = format!("http://127.0.0.1:{PROXY_PORT}");
    let mut vars: Vec<(String, String)> = [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ]
    .iter()
    .map(|k| (k.to_string(), url.clone()))
    .collect();
    for key in ["NO_PROXY", "no_proxy"] {
        vars.push((key.to_string(), "localhost,127.0.0.1,::1".to_string()));
    }
    vars
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(kept: Vec<(String, String)>) -> Vec<String> {
        kept.into_iter().map(|(k, _)| k).collect()
    }

    #[test]
    fn provider_keys_tokens_and_passwords_are_dropped_and_ordinary_variables_kept() {
        let vars = [
            "PATH",
            "HOME",
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "PGPASSWORD",
            "MYSQL_PWD_PASSWD",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "NPM_AUTH",
            "HTTP_AUTHORIZATION",
            "DATABASE_URL",
            "SSH_AUTH_SOCK",
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "LANG",
            "CARGO_HOME",
            "TERM",
        ]
        .map(|n| (n.to_string(), "v".to_string()));
        let kept = names(scrub_env(vars.into_iter(), &[]));
        assert_eq!(
            kept,
            [
                "PATH",
                "HOME",
                "GIT_AUTHOR_NAME",
                "GIT_AUTHOR_EMAIL",
                "LANG",
                "CARGO_HOME",
                "TERM"
            ]
        );
    }

    #[test]
    fn an_allowed_name_is_kept_even_though_it_looks_secret() {
        let vars = [("NPM_TOKEN", "x"), ("GITHUB_TOKEN", "y")]
            .map(|(k, v)| (k.to_string(), v.to_string()));
        let kept = names(scrub_env(vars.into_iter(), &["NPM_TOKEN".to_string()]));
        assert_eq!(kept, ["NPM_TOKEN"]);
    }

    #[test]
    fn matching_ignores_case() {
        assert!(looks_secret("my_api_key"));
        assert!(looks_secret("Github_Token"));
        assert!(!looks_secret("git_author_date"));
    }
}
