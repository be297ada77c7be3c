//! `{files}` in a `when = "edit"` check, and shell quoting.

/// The placeholder an edit check's command may contain.
pub const FILES_PLACEHOLDER: &str = "{files}";

/// `s` as one bash word: in single quotes, a `'` written as `'\''`. A path that starts with `-`
/// gets `./` in front, so the command never reads it as an option.
pub fn shell_quote(s: &str) -> String {
    let prefixed;
    let s = if s.starts_with('-') {
        prefixed = format!("./{s}");
        prefixed.as_str()
    } else {
        s
    };
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `command` with every `{files}` replaced by the paths, each shell-quoted and separated by a
/// space. A command without `{files}` comes back unchanged; with no paths, `{files}` becomes
/// nothing (the caller decides whether an edit check runs when no file was edited).
pub fn expand_files(command: &str, files: &[String]) -> String {
    if !command.contains(FILES_PLACEHOLDER) {
        return command.to_string();
    }
    let quoted: Vec<String> = files.iter().map(|f| shell_quote(f)).collect();
    command.replace(FILES_PLACEHOLDER, &quoted.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn files_are_quoted_one_word_each() {
        let files = vec!["src/a b.py".to_string(), "it's.py".to_string()];
        assert_eq!(
            expand_files("ruff check {files}", &files),
            r"ruff check 'src/a b.py' 'it'\''s.py'"
        );
    }

    #[test]
    fn a_command_without_the_placeholder_is_unchanged() {
        assert_eq!(
            expand_files("cargo check", &["a.rs".to_string()]),
            "cargo check"
        );
    }

    #[test]
    fn a_path_like_an_option_is_not_read_as_one() {
        assert_eq!(
            expand_files("black {files}", &["-rf".to_string()]),
            "black './-rf'"
        );
    }

    #[test]
    fn quoted_paths_survive_bash_word_splitting_and_expansion() {
        let files = vec!["a b".to_string(), "$HOME".to_string(), "x'y".to_string()];
        let cmd = expand_files("printf '%s\\n' {files}", &files);
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(&cmd)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "a b\n$HOME\nx'y\n");
    }
}
