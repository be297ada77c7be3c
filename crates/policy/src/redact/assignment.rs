//! High-entropy values assigned to secret-looking names: `API_KEY=…`, `"client_secret": "…"`,
//! `password: …`. The value must look random (letters and digits, Shannon entropy over a
//! threshold), and code that merely mentions a `token` or `password` variable is left alone.

use regex::Regex;

use super::formats::{Span, is_placeholder};

pub(crate) const KIND: &str = "high_entropy_secret";

/// Words that make a name secret-looking wherever they appear in it.
const SECRET_WORDS: &[&str] = &[
    "secret",
    "password",
    "passwd",
    "passphrase",
    "credential",
    "apikey",
    "api_key",
    "privatekey",
    "private_key",
    "accesskey",
    "access_key",
    "authkey",
    "auth_key",
    "signingkey",
    "signing_key",
    "encryptionkey",
    "encryption_key",
    "masterkey",
    "master_key",
    "sessionkey",
    "session_key",
    "_pwd",
];

/// Names ending like this hold something about a secret (where it is, how long it lives), not it.
const NOT_SECRET_SUFFIXES: &[&str] = &[
    "path",
    "file",
    "filename",
    "dir",
    "url",
    "uri",
    "name",
    "id",
    "type",
    "count",
    "length",
    "len",
    "size",
    "limit",
    "env",
    "var",
    "header",
    "field",
    "ttl",
    "expiry",
    "expires",
    "expires_at",
    "timeout",
    "prefix",
    "hash",
    "policy",
    "format",
];

pub(crate) struct Assignments {
    regex: Regex,
}

impl Assignments {
    pub(crate) fn new() -> Result<Assignments, regex::Error> {
        let regex = Regex::new(
            r#"(?i)[A-Za-z0-9_.-]*(?:secret|passw(?:or)?d|passphrase|credential|api[_-]?key|(?:private|access|auth|signing|encryption|master|session)[_-]?key|_pwd|token)[A-Za-z0-9_.-]*\\?["']?[ \t]*(?::=|=>|=|:)[ \t]*"#,
        )?;
        Ok(Assignments { regex })
    }

    pub(crate) fn regex(&self) -> &Regex {
        &self.regex
    }

    pub(crate) fn find(&self, text: &str, out: &mut Vec<Span<'_>>) {
        for all in self.regex.find_iter(text) {
            // The name is the match up to the first character a name cannot hold.
            let matched = all.as_str();
            let name_len = matched
                .find(|c: char| !(c.is_ascii_alphanumeric() || "_.-".contains(c)))
                .unwrap_or(matched.len());
            if !is_secret_name(&matched[..name_len]) {
                continue;
            }
            // `refresh_token::h0a1…` is a path, `token: https://…` a URL, not a value.
            let after = &text[all.end()..];
            if after.starts_with(':') || after.starts_with("//") {
                continue;
            }
            if let Some((start, end)) = value_at(text, all.end()) {
                out.push(Span {
                    start,
                    end,
                    kind: KIND,
                });
            }
        }
    }
}

/// Whether a key or variable name says its value is a secret.
pub(crate) fn is_secret_name(name: &str) -> bool {
    let name = name.trim_matches(|c| c == '-' || c == '.');
    let lower = name.to_ascii_lowercase().replace(['-', '.'], "_");
    let about_a_secret = NOT_SECRET_SUFFIXES.iter().any(|suffix| {
        let Some(at) = lower.len().checked_sub(suffix.len()).filter(|&at| at > 0) else {
            return false;
        };
        // `password_path`, `secretName`: a word of its own, not the end of `wallet`.
        lower.ends_with(suffix)
            && (lower.as_bytes()[at - 1] == b'_' || name.as_bytes()[at].is_ascii_uppercase())
    });
    !about_a_secret
        && (SECRET_WORDS.iter().any(|w| lower.contains(w))
            || lower.ends_with("token")
            || lower.ends_with("tokens"))
}

/// The value after an assignment operator, if it looks like a secret: quoted (`"…"`, `'…'`,
/// `\"…\"`) or bare up to whitespace or punctuation that ends a value.
fn value_at(text: &str, at: usize) -> Option<(usize, usize)> {
    let rest = &text[at..];
    let unescaped = rest.strip_prefix('\\').unwrap_or(rest);
    let quote = unescaped
        .chars()
        .next()
        .filter(|c| matches!(c, '"' | '\'' | '`'));
    let (start, value) = match quote {
        Some(q) => {
            let start = at + (rest.len() - unescaped.len()) + 1;
            let body = &text[start..];
            (start, &body[..quoted_len(body, q)])
        }
        None => {
            let len = rest
                .find(|c: char| c.is_whitespace() || "\"'`,;)}]\\".contains(c))
                .unwrap_or(rest.len());
            let value = &rest[..len];
            if looks_like_code(value) {
                return None;
            }
            (at, value)
        }
    };
    (!value.chars().any(char::is_whitespace) && is_secret_value(value))
        .then_some((start, start + value.len()))
}

/// Up to the closing quote (`"` or an escaped `\"`) or the end of the line.
fn quoted_len(body: &str, quote: char) -> usize {
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let escaped_quote = c == '\\' && chars.peek().is_some_and(|&(_, next)| next == quote);
        if c == quote || c == '\n' || escaped_quote {
            return i;
        }
    }
    body.len()
}

/// Bare values in code are expressions: calls, generics, references, member access.
fn looks_like_code(value: &str) -> bool {
    value.contains(['(', '<', '>', '{', '['])
        || value.starts_with(['&', '*', '#', '@', '!'])
        || is_member_access(value)
}

/// `self.token`, `e.apiKey`, `config.auth.password`.
fn is_member_access(value: &str) -> bool {
    let mut parts = value.split('.');
    let is_ident = |p: &str| {
        p.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
    };
    value.contains('.') && parts.all(is_ident)
}

/// Random enough to be a credential: at least 8 characters, letters and digits, no path, and a
/// Shannon entropy over a threshold that grows with the length.
pub(crate) fn is_secret_value(value: &str) -> bool {
    let len = value.chars().count();
    if !(8..=4096).contains(&len) || is_placeholder(value) {
        return false;
    }
    if !(value.bytes().any(|b| b.is_ascii_digit())
        && value.bytes().any(|b| b.is_ascii_alphabetic()))
    {
        return false;
    }
    if value.starts_with('/') || value.starts_with("./") || value.starts_with("~/") {
        return false;
    }
    if is_readable_slug(value) {
        return false;
    }
    let threshold = if len < 16 { 2.5 } else { 3.0 };
    shannon_entropy(value) >= threshold
}

/// `test-token-123`, `my_secret_2`: lowercase words and numbers, written by a person, e.g. a
/// test fixture. Random credentials mix letters and digits within one segment.
fn is_readable_slug(value: &str) -> bool {
    let mut segments = value
        .split(['-', '_', '.'])
        .filter(|s| !s.is_empty())
        .peekable();
    value.contains(['-', '_', '.'])
        && segments.peek().is_some()
        && segments.all(|s| {
            s.bytes().all(|b| b.is_ascii_lowercase()) || s.bytes().all(|b| b.is_ascii_digit())
        })
}

/// Bits per character of the value's own character distribution.
pub(crate) fn shannon_entropy(value: &str) -> f64 {
    let mut counts = std::collections::HashMap::<char, usize>::new();
    let mut total = 0usize;
    for c in value.chars() {
        *counts.entry(c).or_default() += 1;
        total += 1;
    }
    if total == 0 {
        return 0.0;
    }
    let total = total as f64;
    counts
        .values()
        .map(|&n| {
            let p = n as f64 / total;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn entropy_of_repeated_and_random_strings() {
        assert_eq!(shannon_entropy("aaaaaaaa"), 0.0);
        assert!((shannon_entropy("abcdefgh") - 3.0).abs() < 1e-9);
        assert!(shannon_entropy("q8Zr3LkP0wVx7NmT2bYc") > 4.0);
    }

    #[test]
    fn secret_names() {
        for name in [
            "API_KEY",
            "client_secret",
            "password",
            "DB_PASSWORD",
            "apiKey",
            "accessToken",
            "GITHUB_TOKEN",
            "--password",
            "aws_secret_access_key",
            "SECRET_KEY_BASE",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "tokenizer",
            "max_tokens_used_total",
            "password_path",
            "secretName",
            "token_type",
            "SSL_KEY_FILE",
            "monkey",
            "TOKEN_TTL",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn secret_values() {
        for v in [
            "s3cr3tP@ssw0rd!",
            "Summer2024!",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "9f86d081884c7d659a2feaa0c55ad015",
        ] {
            assert!(is_secret_value(v), "{v}");
        }
        for v in [
            "test-token-123",
            "my_secret_2",
            "password",
            "hunter2",
            "12345678",
            "${DB_PASSWORD}",
            "********",
            "aaaa1111",
            "/etc/ssl/key1.pem",
            "String",
        ] {
            assert!(!is_secret_value(v), "{v}");
        }
    }

    #[test]
    fn a_quoted_value_runs_to_its_closing_quote() {
        assert_eq!(quoted_len(r#"a\b9Zq"x"#, '"'), 6);
        assert_eq!(quoted_len(r#"a\b9Zq\"x"#, '"'), 6);
        assert_eq!(quoted_len("a1b2\nnext \"", '"'), 4);
        let mut spans = Vec::new();
        let text = r#"{"password": "Zq9\\xL2mP7wR4"}"#;
        Assignments::new().unwrap().find(text, &mut spans);
        assert_eq!(&text[spans[0].start..spans[0].end], r"Zq9\\xL2mP7wR4");
    }

    #[test]
    fn code_mentioning_a_secret_variable_is_not_a_value() {
        let a = Assignments::new().unwrap();
        let mut spans = Vec::new();
        for code in [
            "let token = config.token.clone();",
            "fn login(password: &str) -> Result<Session, Error>",
            "const t={token:e.token,password:n,apiKey:o.apiKey||\"\"};",
            "password: Option<String>,",
            "let api_key = std::env::var(\"OPENAI_API_KEY\")?;",
        ] {
            a.find(code, &mut spans);
            assert!(spans.is_empty(), "{code}: {spans:?}");
        }
    }
}
