//! Ruby: sigils and symbols, `%` literals (`%q`, `%w`, `%x` …), character literals and
//! backticks.

use super::{Escapes, Interpolation, Lexer, Tok, closing, is_name_char, is_name_start};

impl Lexer {
    pub(super) fn ruby(&mut self) -> Result<(), String> {
        while let Some(c) = self.peek() {
            if self.blank(c) {
                continue;
            }
            match c {
                '#' => self.comment_to_eol(),
                '$' | '@' | ':' if self.ruby_sigil_name(c) => {}
                '\'' | '"' | '`' => {
                    self.pos += 1;
                    let (escapes, interpolation) = if c == '\'' {
                        (Escapes::Single, Interpolation::None)
                    } else {
                        (Escapes::Cooked, Interpolation::Ruby)
                    };
                    let (text, dynamic) = self.quoted(None, c, 1, escapes, interpolation)?;
                    self.out.push(if c == '`' {
                        Tok::Shell { text, dynamic }
                    } else {
                        Tok::Str { text, dynamic }
                    });
                }
                '%' if self.ruby_percent_literal()? => {}
                '<' => {
                    self.inner_heredoc("Ruby")?;
                    self.pos += 1;
                    self.out.push(Tok::Punct('<'));
                }
                '?' if self.peek_at(1).is_some_and(|n| !n.is_whitespace())
                    && !self.peek_at(2).is_some_and(is_name_char) =>
                {
                    // A character literal such as `?#`.
                    let text = self.peek_at(1).map(String::from).unwrap_or_default();
                    self.pos += 2;
                    self.out.push(Tok::Str {
                        text,
                        dynamic: false,
                    });
                }
                c if is_name_start(c) => {
                    let mut name = self.name(true);
                    if let Some(mark @ ('?' | '!')) = self.peek()
                        && self.peek_at(1) != Some('=')
                    {
                        self.pos += 1;
                        name.push(mark);
                    }
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

    /// `$stdout`, `@x`, `@@x`, `:symbol`; false when the character is an operator here.
    fn ruby_sigil_name(&mut self, sigil: char) -> bool {
        let mut at = 1;
        if sigil == '@' && self.peek_at(1) == Some('@') {
            at = 2;
        }
        if !self.peek_at(at).is_some_and(is_name_start) {
            return false;
        }
        let start = self.pos;
        self.pos += at;
        self.name(false);
        if sigil == ':' && matches!(self.peek(), Some('?' | '!')) {
            self.pos += 1;
        }
        let text = self.chars[start..self.pos].iter().collect();
        self.out.push(Tok::Name(text));
        true
    }

    /// `%q(…)`, `%Q(…)`, `%w(…)`, `%W(…)`, `%i(…)`, `%x(…)`, `%r(…)`, `%s(…)`; false when the
    /// `%` is an operator.
    fn ruby_percent_literal(&mut self) -> Result<bool, String> {
        let Some(kind) = self.peek_at(1) else {
            return Ok(false);
        };
        if !matches!(kind, 'q' | 'Q' | 'w' | 'W' | 'i' | 'I' | 'x' | 'r' | 's') {
            return Ok(false);
        }
        let Some(open) = self.peek_at(2) else {
            return Ok(false);
        };
        if open.is_alphanumeric() || open.is_whitespace() || open == '=' {
            return Ok(false);
        }
        self.pos += 3;
        let close = closing(open).unwrap_or(open);
        let nest = closing(open).map(|_| open);
        let (escapes, interpolation) = match kind {
            'q' | 'w' | 'i' | 's' => (Escapes::Single, Interpolation::None),
            _ => (Escapes::Cooked, Interpolation::Ruby),
        };
        let (text, dynamic) = self.quoted(nest, close, 1, escapes, interpolation)?;
        match kind {
            'q' | 'Q' => self.out.push(Tok::Str { text, dynamic }),
            'w' | 'W' if !dynamic => {
                let words = text.split_whitespace().map(str::to_string).collect();
                self.out.push(Tok::Words(words));
            }
            'w' | 'W' => self.out.push(Tok::Str { text, dynamic }),
            'x' => self.out.push(Tok::Shell { text, dynamic }),
            // Symbols and patterns run nothing.
            _ => {}
        }
        if kind == 'r' {
            while self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
                self.pos += 1;
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
    fn ruby_percent_literals_symbols_and_interpolation() {
        let toks = lex(
            Language::Ruby,
            "%x{curl x}; %w(a b); send(:system, \"#{c}\"); x = ?#; y",
        )
        .unwrap();
        assert!(toks.contains(&Tok::Shell {
            text: "curl x".into(),
            dynamic: false
        }));
        assert!(toks.contains(&Tok::Words(vec!["a".into(), "b".into()])));
        assert!(toks.contains(&Tok::Name(":system".into())));
        assert!(toks.contains(&Tok::Name("y".into())));
        assert!(!toks.iter().any(|t| matches!(t, Tok::Comment(_))));
    }
}
