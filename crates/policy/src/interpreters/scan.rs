//! Reading inline code for its doors: every call that starts a program, runs code or calls a
//! function by name, wherever it is written — also when a door's name only appears in a
//! comment or a string, since that is how a misread or a call by name would hide it.

use std::collections::{HashMap, HashSet};

use super::Language;
use super::calls::{Arg, Finding, Found, runs};
use super::doors::{Door, Style::*, distinctive, doors};
use super::lex::{Tok, lex};

/// Every door in `code` and what it runs.
pub(crate) fn findings(language: Language, code: &str) -> Vec<Finding> {
    let tokens = match lex(language, code) {
        Ok(t) => t,
        Err(e) => {
            return vec![Finding {
                found: Found::Unreadable(format!("could not be read ({e})")),
                via: "the lexer".into(),
            }];
        }
    };
    Scan::new(language, tokens).run()
}

struct Scan {
    language: Language,
    tokens: Vec<Tok>,
    /// Strings used as a door's arguments (so not read again as names).
    used: HashSet<usize>,
    /// Python: `import subprocess as sp` → `sp` is `subprocess`.
    aliases: HashMap<String, String>,
    /// Python: modules whose names were imported bare (`from subprocess import run`).
    imported_from: HashSet<String>,
    out: Vec<Finding>,
}

fn render(tokens: &[Tok]) -> String {
    let mut s = String::new();
    for t in tokens {
        match t {
            Tok::Name(n) => {
                if s.ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                    s.push(' ');
                }
                s.push_str(n);
            }
            Tok::Str { text, .. } => s.push_str(&format!("{text:?}")),
            Tok::Words(w) => s.push_str(&format!("qw({})", w.join(" "))),
            Tok::Shell { text, .. } => s.push_str(&format!("`{text}`")),
            Tok::Punct(c) => s.push(*c),
            Tok::Newline | Tok::Comment(_) => {}
        }
    }
    if s.chars().count() > 60 {
        let cut: String = s.chars().take(57).collect();
        s = format!("{cut}…");
    }
    s
}

impl Scan {
    fn new(language: Language, tokens: Vec<Tok>) -> Scan {
        Scan {
            language,
            tokens,
            used: HashSet::new(),
            aliases: HashMap::new(),
            imported_from: HashSet::new(),
            out: Vec::new(),
        }
    }

    fn unreadable(&mut self, via: &str, why: String) {
        self.out.push(Finding {
            found: Found::Unreadable(why),
            via: via.to_string(),
        });
    }

    fn found(&mut self, via: &str, found: Found) {
        self.out.push(Finding {
            found,
            via: via.to_string(),
        });
    }

    /// The next token that is not a comment (nor, with `newlines`, a newline).
    fn next_sig(&self, from: usize, newlines: bool) -> Option<usize> {
        (from..self.tokens.len()).find(|&i| match self.tokens[i] {
            Tok::Comment(_) => false,
            Tok::Newline => !newlines,
            _ => true,
        })
    }

    fn prev_sig(&self, before: usize) -> Option<usize> {
        (0..before)
            .rev()
            .find(|&i| !matches!(self.tokens[i], Tok::Comment(_)))
    }

    fn punct_at(&self, i: Option<usize>, c: char) -> bool {
        i.and_then(|i| self.tokens.get(i)) == Some(&Tok::Punct(c))
    }

    fn name_at(&self, i: Option<usize>) -> Option<&str> {
        match i.and_then(|i| self.tokens.get(i)) {
            Some(Tok::Name(n)) => Some(n),
            _ => None,
        }
    }

    fn run(mut self) -> Vec<Finding> {
        if self.language == Language::Python {
            self.python_imports();
        }
        let mut i = 0;
        while i < self.tokens.len() {
            i = self.token(i);
        }
        // A door named by a whole string: a call by name (`getattr(os, "system")`,
        // `cp["execSync"]`, `send(:system, …)`) that Bosun cannot follow.
        for (i, t) in self.tokens.iter().enumerate() {
            let text = match t {
                Tok::Str { text, .. } if !self.used.contains(&i) => text.as_str(),
                Tok::Name(n) if n.starts_with(':') => &n[1..],
                _ => continue,
            };
            if let Some(d) = doors(self.language)
                .iter()
                .find(|d| d.name == text && distinctive(d))
            {
                self.out.push(Finding {
                    found: Found::Unreadable(format!(
                        "names `{}` in a string or symbol, which is how code calls a function by name; Bosun cannot follow that",
                        d.name
                    )),
                    via: d.name.to_string(),
                });
            }
        }
        self.out
    }

    /// Handles the token at `i`; returns the index to continue from.
    fn token(&mut self, i: usize) -> usize {
        let shell_name = match self.language {
            Language::Perl => "backticks or qx",
            _ => "backticks or %x",
        };
        match self.tokens[i].clone() {
            Tok::Shell { text, dynamic } => {
                if dynamic {
                    self.unreadable(
                        shell_name,
                        format!("runs `{text}` in {shell_name}, with parts only known when the code runs"),
                    );
                } else {
                    self.found(shell_name, Found::Line(text));
                }
                i + 1
            }
            Tok::Comment(text) => {
                if let Some(name) = self.comment_call(&text) {
                    self.unreadable(
                        name,
                        format!(
                            "has `{name}(` in a comment; Bosun cannot tell it from code it misread, so it does not follow it"
                        ),
                    );
                }
                i + 1
            }
            Tok::Name(name) => self.name(i, &name),
            _ => i + 1,
        }
    }

    fn comment_call(&self, text: &str) -> Option<&'static str> {
        let names = doors(self.language).iter().filter(|d| distinctive(d));
        names.map(|d| d.name).find(|name| {
            text.match_indices(name).any(|(at, _)| {
                let before = text[..at].chars().next_back();
                let after = text[at + name.len()..].trim_start().chars().next();
                !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    && matches!(after, Some('(' | '"' | '\'' | '`'))
            })
        })
    }

    fn python_imports(&mut self) {
        let mut at_start = true;
        let mut i = 0;
        while i < self.tokens.len() {
            match &self.tokens[i] {
                Tok::Name(n) if at_start && n == "from" => {
                    if let Some(Tok::Name(module)) = self.tokens.get(i + 1) {
                        self.imported_from.insert(module.clone());
                    }
                }
                Tok::Name(n) if at_start && n == "import" => {
                    // import a.b as x, c as y
                    let mut j = i + 1;
                    while let Some(Tok::Name(module)) = self.tokens.get(j) {
                        let mut end = j + 1;
                        while self.tokens.get(end) == Some(&Tok::Punct('.')) {
                            end += 2;
                        }
                        if let (Some(Tok::Name(as_)), Some(Tok::Name(alias))) =
                            (self.tokens.get(end), self.tokens.get(end + 1))
                            && as_ == "as"
                        {
                            self.aliases.insert(alias.clone(), module.clone());
                            end += 2;
                        }
                        if self.tokens.get(end) != Some(&Tok::Punct(',')) {
                            break;
                        }
                        j = end + 1;
                    }
                }
                _ => {}
            }
            at_start = matches!(
                self.tokens[i],
                Tok::Newline | Tok::Punct(';') | Tok::Punct(':')
            );
            i += 1;
        }
    }

    /// Whether the Python name at `i` sits in an `import` or `from` statement.
    fn in_python_import(&self, i: usize) -> bool {
        let start = (0..i)
            .rev()
            .find(|&j| matches!(self.tokens[j], Tok::Newline | Tok::Punct(';')))
            .map_or(0, |j| j + 1);
        matches!(self.name_at(Some(start)), Some("import" | "from"))
    }

    fn receiver(&self, i: usize, name: &str) -> Receiver {
        if let Some((path, _)) = name.rsplit_once("::") {
            return Receiver::Named(path.trim_start_matches(':').to_string());
        }
        let prev = self.prev_sig(i);
        if !self.punct_at(prev, '.') {
            return Receiver::Bare;
        }
        match prev.and_then(|p| self.prev_sig(p)).map(|p| &self.tokens[p]) {
            Some(Tok::Name(r)) => {
                let r = r.rsplit("::").next().unwrap_or(r).trim_start_matches(':');
                let r = self.aliases.get(r).map_or(r, String::as_str);
                Receiver::Named(r.to_string())
            }
            _ => Receiver::Computed,
        }
    }

    fn accepts(&self, door: &Door, receiver: &Receiver) -> bool {
        match (door.receivers, receiver) {
            (None, _) | (Some(_), Receiver::Computed) => true,
            (Some(list), Receiver::Named(r)) => list.contains(&r.as_str()),
            (Some(list), Receiver::Bare) => {
                door.bare || list.iter().any(|m| self.imported_from.contains(*m))
            }
        }
    }

    fn name(&mut self, i: usize, name: &str) -> usize {
        let base = name.rsplit("::").next().unwrap_or(name);
        let Some(door) = doors(self.language).iter().find(|d| d.name == base) else {
            return i + 1;
        };
        let receiver = self.receiver(i, name);
        if !self.accepts(door, &receiver) {
            return i + 1;
        }
        let via = match &receiver {
            Receiver::Named(r) => format!("{r}.{base}"),
            _ => base.to_string(),
        };
        let prev = self.prev_sig(i);
        if matches!(
            self.name_at(prev),
            Some("def" | "function" | "sub" | "class")
        ) {
            return i + 1;
        }
        if door.style == Unfollowable {
            self.unreadable(
                &via,
                format!(
                    "uses `{via}`, which can call any function by name or load native code; Bosun cannot follow it"
                ),
            );
            return i + 1;
        }
        let paren_less = matches!(self.language, Language::Perl | Language::Ruby);
        let next = self.next_sig(i + 1, !paren_less);
        let called = self.punct_at(next, '(');
        // Blocks and statements that share a door's name.
        let block = self.punct_at(next, '{') && matches!(base, "eval" | "do");
        let import_statement = self.language == Language::JavaScript && base == "import" && !called;
        if block || import_statement {
            return i + 1;
        }
        if self.language == Language::Python && self.in_python_import(i) {
            if self.name_at(next) == Some("as") {
                self.unreadable(
                    &via,
                    format!("imports `{base}` under another name, which Bosun does not follow"),
                );
            }
            return i + 1;
        }
        if !called && !paren_less {
            let listed = self.punct_at(prev, '{') || self.punct_at(prev, ',');
            let ends = next.is_none_or(|n| {
                matches!(self.tokens[n], Tok::Punct(',' | '}' | ';') | Tok::Newline)
            });
            let assigned = self.punct_at(next, '=')
                && !self.punct_at(next.map(|n| n + 1), '=')
                && !self.punct_at(prev, '.');
            if (listed && ends) || assigned {
                // `const { execSync } = require(…)`, `from os import system, popen`.
                return i + 1;
            }
            self.unreadable(
                &via,
                format!(
                    "uses `{via}` without calling it with literal arguments (an alias or a callback), which Bosun cannot follow"
                ),
            );
            return i + 1;
        }
        let (args, end) = match (called, next) {
            (true, Some(open)) => self.paren_args(open),
            _ => self.bare_args(i + 1),
        };
        self.apply(door, &via, &args);
        end
    }

    /// Arguments between the `(` at `open` and its `)`; returns them and the index after.
    fn paren_args(&mut self, open: usize) -> (Vec<Arg>, usize) {
        let mut depth = 0usize;
        let mut end = self.tokens.len();
        for j in open..self.tokens.len() {
            match self.tokens[j] {
                Tok::Punct('(' | '[' | '{') => depth += 1,
                Tok::Punct(')' | ']' | '}') => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = j;
                        break;
                    }
                }
                _ => {}
            }
        }
        let args = self.split_args(open + 1, end);
        (args, open + 1)
    }

    /// Perl and Ruby calls without parentheses: `system "curl x" or die`.
    fn bare_args(&mut self, from: usize) -> (Vec<Arg>, usize) {
        let mut depth = 0usize;
        let mut end = self.tokens.len();
        for j in from..self.tokens.len() {
            let stop = match &self.tokens[j] {
                Tok::Punct('(' | '[' | '{') => {
                    depth += 1;
                    false
                }
                Tok::Punct(')' | ']' | '}') if depth == 0 => true,
                Tok::Punct(')' | ']' | '}') => {
                    depth -= 1;
                    false
                }
                Tok::Newline | Tok::Punct(';') => depth == 0,
                Tok::Punct('|' | '&') => {
                    depth == 0 && self.tokens.get(j + 1) == Some(&self.tokens[j])
                }
                Tok::Name(n) => {
                    depth == 0
                        && matches!(
                            n.as_str(),
                            "or" | "and"
                                | "if"
                                | "unless"
                                | "while"
                                | "until"
                                | "for"
                                | "foreach"
                                | "do"
                                | "then"
                        )
                }
                _ => false,
            };
            if stop {
                end = j;
                break;
            }
        }
        let args = self.split_args(from, end);
        (args, from)
    }

    fn split_args(&mut self, from: usize, to: usize) -> Vec<Arg> {
        let mut pieces: Vec<Vec<usize>> = vec![Vec::new()];
        let mut depth = 0usize;
        for j in from..to.min(self.tokens.len()) {
            match self.tokens[j] {
                Tok::Punct('(' | '[' | '{') => depth += 1,
                Tok::Punct(')' | ']' | '}') => depth = depth.saturating_sub(1),
                Tok::Punct(',') if depth == 0 => {
                    pieces.push(Vec::new());
                    continue;
                }
                Tok::Newline | Tok::Comment(_) => continue,
                _ => {}
            }
            if let Some(last) = pieces.last_mut() {
                last.push(j);
            }
        }
        pieces
            .into_iter()
            .filter(|p| !p.is_empty())
            .map(|p| self.arg(&p))
            .collect()
    }

    fn arg(&mut self, idx: &[usize]) -> Arg {
        let toks: Vec<Tok> = idx.iter().map(|&k| self.tokens[k].clone()).collect();
        // Adjacent string literals concatenate (Python).
        if toks.iter().all(|t| matches!(t, Tok::Str { .. })) {
            let mut text = String::new();
            let mut dynamic = false;
            for t in &toks {
                if let Tok::Str {
                    text: s,
                    dynamic: d,
                } = t
                {
                    text.push_str(s);
                    dynamic |= d;
                }
            }
            self.used.extend(idx.iter().copied());
            return Arg::Literal { text, dynamic };
        }
        if let [Tok::Words(w)] = toks.as_slice() {
            return Arg::List(w.clone());
        }
        if let (Some(Tok::Punct('[')), Some(Tok::Punct(']'))) = (toks.first(), toks.last()) {
            let inner = &toks[1..toks.len() - 1];
            let mut words = Vec::new();
            let mut literal = true;
            for (n, t) in inner.iter().enumerate() {
                match (n % 2, t) {
                    (
                        0,
                        Tok::Str {
                            text,
                            dynamic: false,
                        },
                    ) => words.push(text.clone()),
                    (1, Tok::Punct(',')) => {}
                    _ => literal = false,
                }
            }
            if literal {
                self.used.extend(idx.iter().copied());
                return Arg::List(words);
            }
            return Arg::Other(render(&toks));
        }
        let options = match toks.as_slice() {
            [Tok::Name(_), Tok::Punct('='), next, ..] => *next != Tok::Punct('='),
            [Tok::Name(_), Tok::Punct(':'), ..] => true,
            [Tok::Punct('{'), .., Tok::Punct('}')] => true,
            _ => false,
        };
        if options {
            return Arg::Options;
        }
        Arg::Other(render(&toks))
    }

    fn apply(&mut self, door: &Door, via: &str, args: &[Arg]) {
        let mut positional: Vec<&Arg> = Vec::new();
        for (n, a) in args.iter().enumerate() {
            match a {
                Arg::Options if n == 0 && door.style == ListAfterEnv => continue,
                Arg::Options => break,
                a => positional.push(a),
            }
        }
        match runs(self.language, door, via, &positional) {
            Ok(list) => {
                for f in list {
                    self.found(via, f);
                }
            }
            Err(why) => self.unreadable(via, why),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Receiver {
    /// Called without a receiver: `system(…)`.
    Bare,
    /// On a name: `os.system`, `Open3.capture2`, `IPC::Open3::open3`.
    Named(String),
    /// On something computed: `require("child_process").exec`, `f().run`.
    Computed,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn lines(language: Language, code: &str) -> Vec<String> {
        findings(language, code)
            .into_iter()
            .map(|f| match f.found {
                Found::Line(l) => format!("line {l}"),
                Found::Argv(w) => format!(
                    "argv {}",
                    w.iter()
                        .map(|w| w.text.as_str())
                        .collect::<Vec<_>>()
                        .join("|")
                ),
                Found::Code(c) => format!("code {c}"),
                Found::Unreadable(_) => format!("unreadable {}", f.via),
            })
            .collect()
    }

    #[test]
    fn python_doors() {
        let py = |c| lines(Language::Python, c);
        assert_eq!(py("import os; os.system(\"curl x\")"), vec!["line curl x"]);
        assert_eq!(
            py("import subprocess\nsubprocess.run(['curl', 'x'], check=True)"),
            vec!["argv curl|x"]
        );
        assert_eq!(
            py("import subprocess as sp; sp.call('ls')"),
            vec!["line ls"]
        );
        assert_eq!(py("from subprocess import run; run('ls')"), vec!["line ls"]);
        assert_eq!(
            py("import asyncio; asyncio.run(main())"),
            Vec::<String>::new()
        );
        assert_eq!(py("os.system(cmd)"), vec!["unreadable os.system"]);
        assert_eq!(py("os.system('cu' + 'rl x')"), vec!["unreadable os.system"]);
        assert_eq!(py("os.system(f'curl {u}')"), vec!["unreadable os.system"]);
        assert_eq!(py("f = os.system; f('x')"), vec!["unreadable os.system"]);
        assert_eq!(
            py("getattr(os, 'sys' + 'tem')('x')"),
            vec!["unreadable getattr"]
        );
        assert_eq!(py("exec('import os')"), vec!["code import os"]);
        assert_eq!(
            py("os.execvp('curl', ['curl', 'x'])"),
            vec!["argv curl|curl|x"]
        );
        assert_eq!(py("print('system ready')"), Vec::<String>::new());
        assert_eq!(py("print(1) # os.system('x')"), vec!["unreadable system"]);
    }

    #[test]
    fn node_perl_and_ruby_doors() {
        let js = |c| lines(Language::JavaScript, c);
        assert_eq!(
            js("const {execSync} = require('child_process'); execSync('curl x')"),
            vec!["line curl x"]
        );
        assert_eq!(
            js("require('child_process').spawn('curl', ['-s', 'x'], {stdio: 'inherit'})"),
            vec!["argv curl|-s|x"]
        );
        assert_eq!(js("cp.exec(`curl ${u}`)"), vec!["unreadable cp.exec"]);
        assert_eq!(js("cp['exec' + 'Sync']('x')"), vec!["unreadable exec"]);
        let pl = |c| lines(Language::Perl, c);
        assert_eq!(pl("system('curl x') == 0 or die"), vec!["line curl x"]);
        assert_eq!(pl("system 'curl', 'x';"), vec!["argv curl|x"]);
        assert_eq!(pl("my $o = `curl x`;"), vec!["line curl x"]);
        assert_eq!(pl("open(my $f, '-|', 'curl', 'x')"), vec!["argv curl|x"]);
        assert_eq!(pl("open(F, 'curl x |')"), vec!["line curl x"]);
        assert_eq!(pl("open(my $f, '<', 'a.txt')"), Vec::<String>::new());
        assert_eq!(pl("system $cmd"), vec!["unreadable system"]);
        assert_eq!(pl("eval { 1 }; print 2"), Vec::<String>::new());
        let rb = |c| lines(Language::Ruby, c);
        assert_eq!(rb("puts `curl x`"), vec!["line curl x"]);
        assert_eq!(rb("system 'curl', 'x'"), vec!["argv curl|x"]);
        assert_eq!(rb("Kernel.system(\"curl x\")"), vec!["line curl x"]);
        assert_eq!(rb("IO.popen(['curl', 'x']).read"), vec!["argv curl|x"]);
        assert_eq!(rb("%x{curl x}"), vec!["line curl x"]);
        assert_eq!(rb("system({'A' => '1'}, 'ls')"), vec!["line ls"]);
        assert_eq!(rb("db.exec('SELECT 1')"), Vec::<String>::new());
        assert_eq!(
            rb("send(:system, 'x')"),
            vec!["unreadable send", "unreadable system"]
        );
    }
}
