//! A lexer for inline Python, JavaScript, Perl and Ruby: just enough to tell names, string
//! literals, commands in backticks and comments apart. It never guesses: what it cannot read
//! (a here-document inside the code, a string that never closes) is an error, and the caller
//! then asks.

use super::Language;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok {
    /// A name; Perl and Ruby `::` paths and sigils are kept (`IPC::Open3`, `$cmd`, `:system`).
    Name(String),
    /// A string literal after escapes; `dynamic` when part of it is only known when the code
    /// runs (interpolation, an escape Bosun does not decode).
    Str {
        text: String,
        dynamic: bool,
    },
    /// A literal list of words: `qw(curl x)`, `%w(curl x)`.
    Words(Vec<String>),
    /// A command in backticks, `qx{…}` or `%x{…}` (Perl, Ruby).
    Shell {
        text: String,
        dynamic: bool,
    },
    Punct(char),
    Newline,
    Comment(String),
}

/// How a quoted text treats backslashes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Escapes {
    /// Python raw strings: a backslash stays, and keeps the next character from closing.
    Raw,
    /// Perl and Ruby single quotes: only `\\` and an escaped delimiter are escapes.
    Single,
    /// `\n`, `\t`, `\\`, quotes and the delimiter are decoded; any other escape could spell
    /// anything, so the text becomes dynamic.
    Cooked,
}

/// What counts as interpolation inside a quoted text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Interpolation {
    None,
    /// Python f-strings: `{…}` (`{{` is a brace).
    PythonF,
    /// JavaScript template literals: `${…}`.
    Template,
    /// Perl double quotes: `$name`, `@name`, `${…}`.
    Perl,
    /// Ruby double quotes: `#{…}`, `#@var`, `#$var`.
    Ruby,
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    out: Vec<Tok>,
}

fn is_name_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn closing(open: char) -> Option<char> {
    match open {
        '(' => Some(')'),
        '[' => Some(']'),
        '{' => Some('}'),
        '<' => Some('>'),
        _ => None,
    }
}

/// Splits inline code into tokens, or says why it cannot be read.
pub(crate) fn lex(language: Language, code: &str) -> Result<Vec<Tok>, String> {
    let mut lexer = Lexer {
        chars: code.chars().collect(),
        pos: 0,
        out: Vec::new(),
    };
    match language {
        Language::Python => lexer.python()?,
        Language::JavaScript => lexer.javascript()?,
        Language::Perl => lexer.perl()?,
        Language::Ruby => lexer.ruby()?,
    }
    Ok(lexer.out)
}

mod perl;
mod ruby;

impl Lexer {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    fn name(&mut self, joins: bool) -> String {
        let start = self.pos;
        loop {
            while self.peek().is_some_and(is_name_char) {
                self.pos += 1;
            }
            if joins && self.starts_with("::") && self.peek_at(2).is_some_and(is_name_start) {
                self.pos += 2;
                continue;
            }
            break;
        }
        self.chars[start..self.pos].iter().collect()
    }

    fn comment_to_eol(&mut self) {
        let start = self.pos;
        while self.peek().is_some_and(|c| c != '\n') {
            self.pos += 1;
        }
        let text = self.chars[start..self.pos].iter().collect();
        self.out.push(Tok::Comment(text));
    }

    /// Common whitespace handling; true when the character was consumed.
    fn blank(&mut self, c: char) -> bool {
        match c {
            ' ' | '\t' | '\r' => self.pos += 1,
            '\\' if self.peek_at(1) == Some('\n') => self.pos += 2,
            '\n' => {
                self.pos += 1;
                self.out.push(Tok::Newline);
            }
            _ => return false,
        }
        true
    }

    /// Reads a quoted text whose opening delimiter is consumed, up to `close` (nesting `open`
    /// when the delimiters are brackets, and ending after `close_len` closes in a row for
    /// Python's triple quotes).
    fn quoted(
        &mut self,
        open: Option<char>,
        close: char,
        close_len: usize,
        escapes: Escapes,
        interpolation: Interpolation,
    ) -> Result<(String, bool), String> {
        let mut text = String::new();
        let mut dynamic = false;
        let mut depth = 0usize;
        loop {
            let Some(c) = self.peek() else {
                return Err(format!("a `{close}` string is never closed"));
            };
            if c == close && depth == 0 && (1..close_len).all(|i| self.peek_at(i) == Some(close)) {
                self.pos += close_len;
                return Ok((text, dynamic));
            }
            self.pos += 1;
            if Some(c) == open {
                depth += 1;
            } else if c == close && depth > 0 {
                depth -= 1;
            }
            match c {
                '\\' => {
                    let Some(n) = self.peek() else {
                        return Err(format!("a `{close}` string is never closed"));
                    };
                    self.pos += 1;
                    match escapes {
                        Escapes::Raw => {
                            text.push('\\');
                            text.push(n);
                        }
                        Escapes::Single if n == '\\' || n == close || Some(n) == open => {
                            text.push(n)
                        }
                        Escapes::Single => {
                            text.push('\\');
                            text.push(n);
                        }
                        Escapes::Cooked => match n {
                            'n' => text.push('\n'),
                            't' => text.push('\t'),
                            '\n' => {}
                            '\\' | '\'' | '"' | '`' | '$' | '@' | '#' | '{' | '}' => text.push(n),
                            n if n == close || Some(n) == open => text.push(n),
                            _ => dynamic = true,
                        },
                    }
                }
                '{' if interpolation == Interpolation::PythonF => {
                    if self.peek() == Some('{') {
                        self.pos += 1;
                        text.push('{');
                    } else {
                        dynamic = true;
                        self.skip_braces()?;
                    }
                }
                '$' if interpolation == Interpolation::Template && self.peek() == Some('{') => {
                    self.pos += 1;
                    dynamic = true;
                    self.skip_braces()?;
                }
                '#' if interpolation == Interpolation::Ruby
                    && matches!(self.peek(), Some('{' | '@' | '$')) =>
                {
                    dynamic = true;
                    if self.peek() == Some('{') {
                        self.pos += 1;
                        self.skip_braces()?;
                    }
                }
                '$' | '@'
                    if interpolation == Interpolation::Perl
                        && self
                            .peek()
                            .is_some_and(|n| is_name_char(n) || matches!(n, '{' | ':' | '$')) =>
                {
                    dynamic = true;
                    text.push(c);
                }
                _ => text.push(c),
            }
        }
    }

    /// Skips to the `}` that closes an interpolation (the `{` is consumed).
    fn skip_braces(&mut self) -> Result<(), String> {
        let mut depth = 1usize;
        while depth > 0 {
            match self.peek() {
                None => return Err("an interpolation `{` is never closed".into()),
                Some('{') => depth += 1,
                Some('}') => depth -= 1,
                _ => {}
            }
            self.pos += 1;
        }
        Ok(())
    }

    fn python(&mut self) -> Result<(), String> {
        while let Some(c) = self.peek() {
            if self.blank(c) {
                continue;
            }
            match c {
                '#' => self.comment_to_eol(),
                '\'' | '"' => self.python_string("")?,
                c if is_name_start(c) => {
                    let name = self.name(false);
                    let prefix = name.to_ascii_lowercase();
                    let is_prefix = matches!(
                        prefix.as_str(),
                        "r" | "u" | "b" | "f" | "br" | "rb" | "fr" | "rf"
                    );
                    if is_prefix && matches!(self.peek(), Some('\'' | '"')) {
                        self.python_string(&prefix)?;
                    } else {
                        self.out.push(Tok::Name(name));
                    }
                }
                c if c.is_ascii_digit() => {
                    let name = self.name(false);
                    self.out.push(Tok::Name(name));
                }
                c => {
                    self.pos += 1;
                    self.out.push(Tok::Punct(c));
                }
            }
        }
        Ok(())
    }

    fn python_string(&mut self, prefix: &str) -> Result<(), String> {
        let Some(quote) = self.peek() else {
            return Ok(());
        };
        let triple = self.peek_at(1) == Some(quote) && self.peek_at(2) == Some(quote);
        self.pos += if triple { 3 } else { 1 };
        let escapes = if prefix.contains('r') {
            Escapes::Raw
        } else {
            Escapes::Cooked
        };
        let interpolation = if prefix.contains('f') {
            Interpolation::PythonF
        } else {
            Interpolation::None
        };
        let len = if triple { 3 } else { 1 };
        let (text, dynamic) = self.quoted(None, quote, len, escapes, interpolation)?;
        self.out.push(Tok::Str { text, dynamic });
        Ok(())
    }

    fn javascript(&mut self) -> Result<(), String> {
        while let Some(c) = self.peek() {
            if self.blank(c) {
                continue;
            }
            match c {
                '/' if self.peek_at(1) == Some('/') => self.comment_to_eol(),
                '/' if self.peek_at(1) == Some('*') => {
                    let start = self.pos;
                    self.pos += 2;
                    while self.peek().is_some() && !self.starts_with("*/") {
                        self.pos += 1;
                    }
                    self.pos = (self.pos + 2).min(self.chars.len());
                    let text = self.chars[start..self.pos].iter().collect();
                    self.out.push(Tok::Comment(text));
                }
                '\'' | '"' | '`' => {
                    self.pos += 1;
                    let interpolation = if c == '`' {
                        Interpolation::Template
                    } else {
                        Interpolation::None
                    };
                    let (text, dynamic) =
                        self.quoted(None, c, 1, Escapes::Cooked, interpolation)?;
                    self.out.push(Tok::Str { text, dynamic });
                }
                c if is_name_start(c) || c == '$' => {
                    let start = self.pos;
                    while self.peek().is_some_and(|c| is_name_char(c) || c == '$') {
                        self.pos += 1;
                    }
                    let name = self.chars[start..self.pos].iter().collect();
                    self.out.push(Tok::Name(name));
                }
                c if c.is_ascii_digit() => {
                    let name = self.name(false);
                    self.out.push(Tok::Name(name));
                }
                c => {
                    self.pos += 1;
                    self.out.push(Tok::Punct(c));
                }
            }
        }
        Ok(())
    }

    /// A here-document inside the code (`<<"EOF"`, `<<~EOS`) is not read.
    fn inner_heredoc(&self, language: &str) -> Result<(), String> {
        if self.starts_with("<<")
            && self
                .peek_at(2)
                .is_some_and(|c| matches!(c, '"' | '\'' | '~' | '-') || c.is_ascii_uppercase())
        {
            return Err(format!(
                "{language} here-documents inside the code are not read"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn strs(language: Language, code: &str) -> Vec<(String, bool)> {
        lex(language, code)
            .unwrap()
            .into_iter()
            .filter_map(|t| match t {
                Tok::Str { text, dynamic } => Some((text, dynamic)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn python_strings_prefixes_and_escapes() {
        let got = strs(
            Language::Python,
            r#"a = "x\"y" + 'it\'s' + r"\d" + f"{u}" + f"{{" + """tri"ple""" + "\x63""#,
        );
        assert_eq!(
            got,
            vec![
                ("x\"y".to_string(), false),
                ("it's".into(), false),
                ("\\d".into(), false),
                ("".into(), true),
                ("{".into(), false),
                ("tri\"ple".into(), false),
                ("63".into(), true),
            ]
        );
        assert!(lex(Language::Python, "'open").is_err());
    }

    #[test]
    fn javascript_templates_and_comments() {
        let toks = lex(Language::JavaScript, "x(`a ${b} c`) // exec('y')\n/* z */").unwrap();
        assert!(toks.contains(&Tok::Str {
            text: "a  c".into(),
            dynamic: true
        }));
        assert!(toks.contains(&Tok::Comment("// exec('y')".into())));
        assert!(toks.contains(&Tok::Comment("/* z */".into())));
    }
}
