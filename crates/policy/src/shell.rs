//! A small POSIX-shell parser: enough to see every command a line would run.
//!
//! It splits compound commands (`&&`, `||`, `;`, `|`, `&`, newlines, subshells, `{ …; }`), follows
//! quotes and escapes, records redirections, and parses command substitutions (`$(…)`, backticks,
//! `<(…)`) as commands of their own. Anything it cannot follow is an error, which the policy turns
//! into "ask".

/// One word of a command line after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    /// The word contains an expansion (`$VAR`, `$(…)`, `` `…` ``) whose value is only known when
    /// the command runs.
    pub dynamic: bool,
}

/// Whether a redirection reads or writes its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    Read,
    Write,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub kind: RedirectKind,
    pub target: Word,
}

/// What a here-document (`<<EOF`) or here-string (`<<<word`) feeds a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub text: String,
    /// The body expands variables (an unquoted delimiter with `$` in it), so what the command
    /// reads is only known when it runs.
    pub dynamic: bool,
}

/// A command with its arguments (leading `VAR=value` assignments and shell keywords removed).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleCommand {
    pub argv: Vec<Word>,
    pub redirects: Vec<Redirect>,
    /// Leading `NAME=value` words, which set the environment of this command.
    pub assignments: Vec<Word>,
    /// Its standard input when a here-document or here-string gives it (the last one wins).
    pub stdin: Option<Input>,
    /// The here-document whose body, read after the line ends, becomes `stdin`.
    heredoc: Option<usize>,
}

const MAX_DEPTH: usize = 24;
const KEYWORDS: &[&str] = &[
    "!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until",
];

/// Parses a shell command line into every simple command it would run, in source order
/// (commands inside substitutions come before the command that uses their output).
#[cfg(test)]
pub fn parse(src: &str) -> Result<Vec<SimpleCommand>, String> {
    parse_at_depth(src, 0)
}

pub(crate) fn parse_at_depth(src: &str, depth: usize) -> Result<Vec<SimpleCommand>, String> {
    if depth > MAX_DEPTH {
        return Err("the command nests too deeply to follow".into());
    }
    let mut parser = Parser {
        chars: src.chars().collect(),
        pos: 0,
        out: Vec::new(),
        depth,
        heredocs: Vec::new(),
        bodies: Vec::new(),
    };
    parser.list(false)?;
    let mut out = parser.out;
    for cmd in &mut out {
        if let Some(body) = cmd
            .heredoc
            .take()
            .and_then(|i| parser.bodies.get(i).cloned())
        {
            cmd.stdin = Some(body);
        }
    }
    Ok(out)
}

struct Heredoc {
    delimiter: String,
    strip_tabs: bool,
    quoted: bool,
    /// Where its body goes in `Parser::bodies`.
    slot: usize,
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    out: Vec<SimpleCommand>,
    depth: usize,
    heredocs: Vec<Heredoc>,
    /// Here-document bodies, in the order their `<<` appeared.
    bodies: Vec<Input>,
}

fn is_meta(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | '\r' | ';' | '&' | '|' | '(' | ')' | '<' | '>'
    )
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn skip_blanks(&mut self) {
        while let Some(c) = self.peek() {
            if c == ' ' || c == '\t' || c == '\r' {
                self.pos += 1;
            } else if c == '\\' && self.peek_at(1) == Some('\n') {
                self.pos += 2;
            } else {
                break;
            }
        }
    }

    /// Parses commands until the end of input, or until a `)` when `in_parens`.
    fn list(&mut self, in_parens: bool) -> Result<(), String> {
        let mut cur = SimpleCommand::default();
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else {
                if in_parens {
                    return Err("a `(` is never closed".into());
                }
                self.finish(&mut cur)?;
                return Ok(());
            };
            match c {
                ')' if in_parens => {
                    self.pos += 1;
                    self.finish(&mut cur)?;
                    return Ok(());
                }
                ')' => return Err("a `)` closes nothing".into()),
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '\n' => {
                    self.pos += 1;
                    self.finish(&mut cur)?;
                    self.heredoc_bodies()?;
                }
                '&' if self.peek_at(1) == Some('>') => {
                    self.pos += if self.peek_at(2) == Some('>') { 3 } else { 2 };
                    let target = self.target()?;
                    cur.redirects.push(Redirect {
                        kind: RedirectKind::Write,
                        target,
                    });
                }
                ';' | '&' | '|' => {
                    self.pos += 1;
                    if matches!(self.peek(), Some('&' | '|' | ';')) {
                        self.pos += 1;
                    }
                    self.finish(&mut cur)?;
                }
                '(' => {
                    if !cur.argv.is_empty() {
                        return Err("function definitions are not followed".into());
                    }
                    self.pos += 1;
                    self.nested_list()?;
                }
                '<' | '>' if self.peek_at(1) == Some('(') => {
                    let word = self.process_substitution()?;
                    cur.argv.push(word);
                }
                '<' | '>' => self.redirect(&mut cur)?,
                d if d.is_ascii_digit() && self.fd_redirect_ahead() => {
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.pos += 1;
                    }
                    self.redirect(&mut cur)?;
                }
                _ => {
                    let word = self.word()?;
                    cur.argv.push(word);
                }
            }
        }
    }

    fn fd_redirect_ahead(&self) -> bool {
        let mut i = self.pos;
        while self.chars.get(i).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
        }
        matches!(self.chars.get(i), Some('<' | '>'))
    }

    fn finish(&mut self, cur: &mut SimpleCommand) -> Result<(), String> {
        let mut cmd = std::mem::take(cur);
        while let Some(first) = cmd.argv.first() {
            let is_assignment = !first.text.starts_with('=')
                && first.text.split_once('=').is_some_and(|(name, _)| {
                    name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                        && !name.starts_with(|c: char| c.is_ascii_digit())
                });
            if !KEYWORDS.contains(&first.text.as_str()) && !is_assignment {
                break;
            }
            let word = cmd.argv.remove(0);
            if is_assignment {
                cmd.assignments.push(word);
            }
        }
        match cmd.argv.first().map(|w| w.text.as_str()) {
            Some("for" | "select") => return Ok(()),
            Some("case" | "function" | "coproc") => {
                return Err(format!(
                    "`{}` blocks are not followed",
                    cmd.argv[0].text.as_str()
                ));
            }
            _ => {}
        }
        if !cmd.argv.is_empty() || !cmd.redirects.is_empty() || !cmd.assignments.is_empty() {
            self.out.push(cmd);
        }
        Ok(())
    }

    fn target(&mut self) -> Result<Word, String> {
        self.skip_blanks();
        match self.peek() {
            Some(c) if !is_meta(c) => self.word(),
            _ => Err("a redirection has no target".into()),
        }
    }

    fn redirect(&mut self, cur: &mut SimpleCommand) -> Result<(), String> {
        let first = self.peek();
        self.pos += 1;
        if first == Some('<') {
            match self.peek() {
                Some('<') if self.peek_at(1) == Some('<') => {
                    self.pos += 2;
                    let word = self.target()?;
                    cur.heredoc = None;
                    cur.stdin = Some(Input {
                        text: word.text,
                        dynamic: word.dynamic,
                    });
                }
                Some('<') => {
                    self.pos += 1;
                    let strip_tabs = self.peek() == Some('-');
                    if strip_tabs {
                        self.pos += 1;
                    }
                    self.skip_blanks();
                    let start = self.pos;
                    let word = self.target()?;
                    let raw: String = self.chars[start..self.pos].iter().collect();
                    let slot = self.bodies.len();
                    self.bodies.push(Input {
                        text: String::new(),
                        dynamic: false,
                    });
                    cur.heredoc = Some(slot);
                    self.heredocs.push(Heredoc {
                        delimiter: word.text,
                        strip_tabs,
                        quoted: raw.contains(['\'', '"', '\\']),
                        slot,
                    });
                }
                Some('&') => {
                    self.pos += 1;
                    self.target()?;
                }
                Some('>') => {
                    self.pos += 1;
                    let target = self.target()?;
                    cur.redirects.push(Redirect {
                        kind: RedirectKind::Write,
                        target,
                    });
                }
                _ => {
                    let target = self.target()?;
                    cur.redirects.push(Redirect {
                        kind: RedirectKind::Read,
                        target,
                    });
                }
            }
            return Ok(());
        }
        // `>`, `>>`, `>|`, `>&`
        if matches!(self.peek(), Some('>' | '|')) {
            self.pos += 1;
        } else if self.peek() == Some('&') {
            self.pos += 1;
            let target = self.target()?;
            if target.text == "-" || target.text.chars().all(|c| c.is_ascii_digit()) {
                return Ok(());
            }
            cur.redirects.push(Redirect {
                kind: RedirectKind::Write,
                target,
            });
            return Ok(());
        }
        let target = self.target()?;
        cur.redirects.push(Redirect {
            kind: RedirectKind::Write,
            target,
        });
        Ok(())
    }

    fn heredoc_bodies(&mut self) -> Result<(), String> {
        for doc in std::mem::take(&mut self.heredocs) {
            let mut body = Input {
                text: String::new(),
                dynamic: false,
            };
            while self.peek().is_some() {
                let start = self.pos;
                while self.peek().is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                let line: String = self.chars[start..self.pos].iter().collect();
                self.pos += 1;
                let line = if doc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if line.trim_end_matches('\r') == doc.delimiter {
                    break;
                }
                if !doc.quoted && (line.contains("$(") || line.contains('`')) {
                    return Err("a here-document runs command substitutions".into());
                }
                if !doc.quoted && (line.contains('$') || line.contains('\\')) {
                    body.dynamic = true;
                }
                body.text.push_str(line);
                body.text.push('\n');
            }
            if let Some(slot) = self.bodies.get_mut(doc.slot) {
                *slot = body;
            }
        }
        Ok(())
    }

    fn process_substitution(&mut self) -> Result<Word, String> {
        let start = self.pos;
        self.pos += 2;
        self.nested_list()?;
        Ok(Word {
            text: self.chars[start..self.pos].iter().collect(),
            dynamic: true,
        })
    }

    /// Parses the commands of a `$(…)`-like group (the opening is consumed) into `self.out`.
    fn nested_list(&mut self) -> Result<(), String> {
        if self.depth >= MAX_DEPTH {
            return Err("the command nests too deeply to follow".into());
        }
        self.depth += 1;
        let pending = std::mem::take(&mut self.heredocs);
        let result = self.list(true);
        self.heredocs = pending;
        self.depth -= 1;
        result
    }

    fn word(&mut self) -> Result<Word, String> {
        let mut text = String::new();
        let mut dynamic = false;
        while let Some(c) = self.peek() {
            if is_meta(c) {
                break;
            }
            self.pos += 1;
            match c {
                '\\' => match self.peek() {
                    Some('\n') => self.pos += 1,
                    Some(n) => {
                        text.push(n);
                        self.pos += 1;
                    }
                    None => {}
                },
                '\'' => loop {
                    match self.peek() {
                        None => return Err("a `'` quote is never closed".into()),
                        Some('\'') => {
                            self.pos += 1;
                            break;
                        }
                        Some(q) => {
                            text.push(q);
                            self.pos += 1;
                        }
                    }
                },
                '"' => loop {
                    match self.peek() {
                        None => return Err("a `\"` quote is never closed".into()),
                        Some('"') => {
                            self.pos += 1;
                            break;
                        }
                        Some('\\') => {
                            self.pos += 1;
                            match self.peek() {
                                Some('\n') => self.pos += 1,
                                Some(n @ ('$' | '`' | '"' | '\\')) => {
                                    text.push(n);
                                    self.pos += 1;
                                }
                                _ => text.push('\\'),
                            }
                        }
                        Some('$') => {
                            self.pos += 1;
                            self.dollar(&mut text, &mut dynamic)?;
                        }
                        Some('`') => {
                            self.pos += 1;
                            self.backtick(&mut text)?;
                            dynamic = true;
                        }
                        Some(q) => {
                            text.push(q);
                            self.pos += 1;
                        }
                    }
                },
                '$' => self.dollar(&mut text, &mut dynamic)?,
                '`' => {
                    self.backtick(&mut text)?;
                    dynamic = true;
                }
                _ => text.push(c),
            }
        }
        Ok(Word { text, dynamic })
    }

    /// Handles what follows a `$` (already consumed).
    fn dollar(&mut self, text: &mut String, dynamic: &mut bool) -> Result<(), String> {
        let start = self.pos - 1;
        match self.peek() {
            Some('(') if self.peek_at(1) == Some('(') => {
                self.pos += 2;
                let mut open = 2usize;
                while open > 0 {
                    match self.peek() {
                        None => return Err("a `$((` is never closed".into()),
                        Some('(') => open += 1,
                        Some(')') => open -= 1,
                        Some('`') => return Err("arithmetic runs a command substitution".into()),
                        Some('$')
                            if self.peek_at(1) == Some('(') && self.peek_at(2) != Some('(') =>
                        {
                            return Err("arithmetic runs a command substitution".into());
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
                *dynamic = true;
            }
            Some('(') => {
                self.pos += 1;
                self.nested_list()?;
                *dynamic = true;
            }
            Some('{') => {
                let mut open = 0usize;
                loop {
                    match self.peek() {
                        None => return Err("a `${` is never closed".into()),
                        Some('{') => open += 1,
                        Some('}') => {
                            open -= 1;
                            if open == 0 {
                                self.pos += 1;
                                break;
                            }
                        }
                        Some('`') => return Err("`${…}` runs a command substitution".into()),
                        Some('$') if self.peek_at(1) == Some('(') => {
                            return Err("`${…}` runs a command substitution".into());
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
                *dynamic = true;
            }
            Some('\'') => {
                // ANSI-C quoting: escapes can spell anything, so any backslash makes it dynamic.
                self.pos += 1;
                loop {
                    match self.peek() {
                        None => return Err("a `$'` quote is never closed".into()),
                        Some('\'') => {
                            self.pos += 1;
                            break;
                        }
                        Some('\\') => {
                            *dynamic = true;
                            self.pos += 2;
                        }
                        Some(q) => {
                            text.push(q);
                            self.pos += 1;
                        }
                    }
                }
                return Ok(());
            }
            Some(c) if c.is_ascii_alphanumeric() || "_@*#?$!-".contains(c) => {
                self.pos += 1;
                if c.is_ascii_alphabetic() || c == '_' {
                    while self
                        .peek()
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        self.pos += 1;
                    }
                }
                *dynamic = true;
            }
            _ => {
                text.push('$');
                return Ok(());
            }
        }
        let end = self.pos.min(self.chars.len());
        text.extend(&self.chars[start..end]);
        Ok(())
    }

    /// Handles a backtick substitution (the opening backtick is consumed).
    fn backtick(&mut self, text: &mut String) -> Result<(), String> {
        let mut inner = String::new();
        loop {
            match self.peek() {
                None => return Err("a backtick substitution is never closed".into()),
                Some('`') => {
                    self.pos += 1;
                    break;
                }
                Some('\\') if matches!(self.peek_at(1), Some('`' | '\\' | '$')) => {
                    if let Some(n) = self.peek_at(1) {
                        inner.push(n);
                    }
                    self.pos += 2;
                }
                Some(c) => {
                    inner.push(c);
                    self.pos += 1;
                }
            }
        }
        let nested = parse_at_depth(&inner, self.depth + 1)?;
        self.out.extend(nested);
        text.push('`');
        text.push_str(&inner);
        text.push('`');
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn argvs(src: &str) -> Vec<Vec<String>> {
        parse(src)
            .unwrap()
            .into_iter()
            .map(|c| c.argv.into_iter().map(|w| w.text).collect())
            .collect()
    }

    #[test]
    fn splits_compound_commands_and_keeps_quoted_separators() {
        assert_eq!(
            argvs("make && curl x || a; b | c & d\ne"),
            vec![
                vec!["make"],
                vec!["curl", "x"],
                vec!["a"],
                vec!["b"],
                vec!["c"],
                vec!["d"],
                vec!["e"]
            ]
        );
        assert_eq!(argvs("echo 'a && curl'"), vec![vec!["echo", "a && curl"]]);
        assert_eq!(
            argvs(r#"echo "a;b" c\ d"#),
            vec![vec!["echo", "a;b", "c d"]]
        );
    }

    #[test]
    fn substitutions_and_subshells_are_commands_too() {
        assert_eq!(
            argvs("echo $(curl x) `wget y`; (cd a; rm b)"),
            vec![
                vec!["curl", "x"],
                vec!["wget", "y"],
                vec!["echo", "$(curl x)", "`wget y`"],
                vec!["cd", "a"],
                vec!["rm", "b"]
            ]
        );
        assert_eq!(
            argvs("diff <(git show a) b"),
            vec![vec!["git", "show", "a"], vec!["diff", "<(git show a)", "b"]]
        );
    }

    #[test]
    fn redirections_are_recorded() {
        let cmds = parse("npm test > /etc/x 2>&1 < in.txt 2>>err.log").unwrap();
        let targets: Vec<_> = cmds[0]
            .redirects
            .iter()
            .map(|r| (r.kind, r.target.text.as_str()))
            .collect();
        assert_eq!(
            targets,
            vec![
                (RedirectKind::Write, "/etc/x"),
                (RedirectKind::Read, "in.txt"),
                (RedirectKind::Write, "err.log")
            ]
        );
        assert_eq!(cmds[0].argv.len(), 2);
    }

    #[test]
    fn assignments_keywords_and_heredocs() {
        assert_eq!(argvs("FOO=1 BAR=2 git push"), vec![vec!["git", "push"]]);
        assert_eq!(
            argvs("if true; then rm x; fi"),
            vec![vec!["true"], vec!["rm", "x"]]
        );
        assert_eq!(
            argvs("cat <<'EOF' > a.txt\n$(curl x)\nEOF\nls"),
            vec![vec!["cat"], vec!["ls"]]
        );
        assert!(parse("cat <<EOF\n$(curl x)\nEOF\n").is_err());
    }

    #[test]
    fn unparseable_input_is_an_error_not_a_panic() {
        for bad in [
            "echo 'open",
            "echo \"open",
            "(ls",
            "ls )",
            "echo $(ls",
            "case x in a) ;; esac",
            "f() { ls; }",
            "echo >",
            "`",
            "$((",
            "${",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let deep = "$(".repeat(100) + &")".repeat(100);
        assert!(parse(&deep).is_err());
        let deep = "(".repeat(100_000) + &")".repeat(100_000);
        assert!(parse(&deep).is_err());
    }
}
