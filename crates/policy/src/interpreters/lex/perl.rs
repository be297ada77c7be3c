//! Perl: sigils, quote-like operators (`q`, `qq`, `qw`, `qx`, `m`, `s`, `tr`, `y`) and
//! backticks.

use super::{Escapes, Interpolation, Lexer, Tok, closing, is_name_char, is_name_start};

impl Lexer {
    pub(super) fn perl(&mut self) -> Result<(), String> {
        while let Some(c) = self.peek() {
            if self.blank(c) {
                continue;
            }
            match c {
                '#' => self.comment_to_eol(),
                '$' | '@' | '%' => self.perl_variable(c),
                '\'' | '"' | '`' => {
                    self.pos += 1;
                    let (escapes, interpolation) = if c == '\'' {
                        (Escapes::Single, Interpolation::None)
                    } else {
                        (Escapes::Cooked, Interpolation::Perl)
                    };
                    let (text, dynamic) = self.quoted(None, c, 1, escapes, interpolation)?;
                    self.out.push(if c == '`' {
                        Tok::Shell { text, dynamic }
                    } else {
                        Tok::Str { text, dynamic }
                    });
                }
                '<' => {
                    self.inner_heredoc("Perl")?;
                    self.pos += 1;
                    self.out.push(Tok::Punct('<'));
                }
                c if is_name_start(c) => {
                    let name = self.name(true);
                    if !self.perl_quote_like(&name)? {
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

    fn perl_variable(&mut self, sigil: char) {
        let start = self.pos;
        self.pos += 1;
        match self.peek() {
            Some('#') if sigil == '$' => {
                self.pos += 1;
                if self.peek().is_some_and(is_name_start) {
                    self.name(true);
                }
            }
            Some('{') => {
                let _ = self.skip_braces_from_open();
            }
            Some(':') if self.peek_at(1) == Some(':') => {
                self.pos += 2;
                self.name(true);
            }
            Some(c) if is_name_char(c) => {
                self.name(true);
            }
            Some(c) if sigil == '$' && !c.is_whitespace() => self.pos += 1,
            _ => {
                self.out.push(Tok::Punct(sigil));
                return;
            }
        }
        let text = self.chars[start..self.pos].iter().collect();
        self.out.push(Tok::Name(text));
    }

    fn skip_braces_from_open(&mut self) -> Result<(), String> {
        self.pos += 1;
        self.skip_braces()
    }

    /// `q`, `qq`, `qw`, `qx`, `m`, `qr`, `s`, `tr`, `y` followed by a delimiter; true when the
    /// name was one of them and the construct was consumed.
    fn perl_quote_like(&mut self, name: &str) -> Result<bool, String> {
        if !matches!(
            name,
            "q" | "qq" | "qw" | "qx" | "m" | "qr" | "s" | "tr" | "y"
        ) {
            return Ok(false);
        }
        let mut at = 0;
        while matches!(self.peek_at(at), Some(' ' | '\t')) {
            at += 1;
        }
        let Some(open) = self.peek_at(at) else {
            return Ok(false);
        };
        let spaced = at > 0;
        let usable = if spaced {
            matches!(open, '{' | '(' | '[' | '<')
        } else {
            !open.is_alphanumeric()
                && !open.is_whitespace()
                && !matches!(open, '_' | ',' | ';' | ')' | ']' | '}' | '>' | '=')
        };
        if !usable {
            return Ok(false);
        }
        self.pos += at + 1;
        let close = closing(open).unwrap_or(open);
        let nest = closing(open).map(|_| open);
        let quoting = |q: char| {
            if q == '\'' {
                Escapes::Single
            } else {
                Escapes::Cooked
            }
        };
        let interpolating = |q: char| {
            if q == '\'' {
                Interpolation::None
            } else {
                Interpolation::Perl
            }
        };
        match name {
            "q" => {
                let (text, _) =
                    self.quoted(nest, close, 1, Escapes::Single, Interpolation::None)?;
                self.out.push(Tok::Str {
                    text,
                    dynamic: false,
                });
            }
            "qq" => {
                let (text, dynamic) =
                    self.quoted(nest, close, 1, quoting(open), interpolating(open))?;
                self.out.push(Tok::Str { text, dynamic });
            }
            "qw" => {
                let (text, _) =
                    self.quoted(nest, close, 1, Escapes::Single, Interpolation::None)?;
                let words = text.split_whitespace().map(str::to_string).collect();
                self.out.push(Tok::Words(words));
            }
            "qx" => {
                let (text, dynamic) =
                    self.quoted(nest, close, 1, quoting(open), interpolating(open))?;
                self.out.push(Tok::Shell { text, dynamic });
            }
            _ => {
                // A pattern (and for s/tr/y its replacement), then modifiers.
                self.quoted(nest, close, 1, Escapes::Raw, Interpolation::None)?;
                if matches!(name, "s" | "tr" | "y") {
                    if nest.is_some() {
                        while matches!(self.peek(), Some(' ' | '\t' | '\n')) {
                            self.pos += 1;
                        }
                        let Some(second) = self.peek() else {
                            return Err(format!("a Perl `{name}` has no replacement"));
                        };
                        self.pos += 1;
                        let close = closing(second).unwrap_or(second);
                        let nest = closing(second).map(|_| second);
                        self.quoted(nest, close, 1, Escapes::Raw, Interpolation::None)?;
                    } else {
                        self.quoted(None, close, 1, Escapes::Raw, Interpolation::None)?;
                    }
                }
                while self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
                    self.pos += 1;
                }
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::super::{Tok, lex};
    use crate::interpreters::Language;

    #[test]
    fn perl_quote_like_operators() {
        let toks = lex(
            Language::Perl,
            "s#a#b#g; qx{curl x}; system qw(curl y); $h{s} = q(it's); \"$v\"",
        )
        .unwrap();
        assert!(toks.contains(&Tok::Shell {
            text: "curl x".into(),
            dynamic: false
        }));
        assert!(toks.contains(&Tok::Words(vec!["curl".into(), "y".into()])));
        assert!(toks.contains(&Tok::Str {
            text: "it's".into(),
            dynamic: false
        }));
        assert!(toks.contains(&Tok::Str {
            text: "$v".into(),
            dynamic: true
        }));
        assert!(!toks.iter().any(|t| matches!(t, Tok::Comment(_))));
        assert!(lex(Language::Perl, "print <<\"EOF\";\nx\nEOF\n").is_err());
    }
}
