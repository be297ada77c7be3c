//! Interpreters are doors: `python -c`, `node -e`, `perl -e`, `ruby -e` and a here-document
//! fed to them run code that can start any program. The string literals that code passes to
//! the calls that start programs (`os.system`, `subprocess.*`, `child_process.*`, Perl and Ruby
//! `system`/`exec`, backticks, `qx{}`, `%x{}`, `IO.popen`, …) are judged as shell commands;
//! a call Bosun cannot read (an argument built at run time, an alias, a call by name) asks; and
//! the code as a whole is a [`Part::Inline`], which asks when a policy file denies a command
//! (see `judge`). Script files (`python tool.py`) are not read: see `scripts`.

mod calls;
mod doors;
mod lex;
mod scan;

use crate::commands::{self, Part};
use crate::shell::{Input, Word};

use calls::Found;
use scan::findings;

/// A language whose inline code Bosun reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Language {
    Python,
    JavaScript,
    Perl,
    Ruby,
}

impl Language {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Language::Python => "Python",
            Language::JavaScript => "JavaScript",
            Language::Perl => "Perl",
            Language::Ruby => "Ruby",
        }
    }

    /// The language a program (a base name: `python3.12`, `node`) runs.
    pub(crate) fn of(program: &str) -> Option<Language> {
        let versioned = |stem: &str| {
            program
                .strip_prefix(stem)
                .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
        };
        if versioned("python") || versioned("pypy") {
            Some(Language::Python)
        } else if program == "node" || program == "nodejs" {
            Some(Language::JavaScript)
        } else if versioned("perl") {
            Some(Language::Perl)
        } else if versioned("ruby") {
            Some(Language::Ruby)
        } else {
            None
        }
    }
}

/// Where an interpreter takes its program from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    /// Inline code: after `flag` (`-c`, `-e`) or a here-document (`<<`).
    Code { code: String, flag: String },
    /// Inline code only known when the command runs (`python -c "$CODE"`).
    Dynamic { flag: String },
    /// Standard input that is not a here-document (a pipe, a file).
    Stdin,
    /// A script file or a module, which Bosun does not read (what it is, e.g. "the script file
    /// `tool.py`"), or no program at all (`--version`).
    Elsewhere(Option<String>),
}

fn from_stdin(stdin: Option<&Input>) -> Source {
    match stdin {
        Some(input) if input.dynamic => Source::Dynamic { flag: "<<".into() },
        Some(input) => Source::Code {
            code: input.text.clone(),
            flag: "<<".into(),
        },
        None => Source::Stdin,
    }
}

fn code_word(word: Option<&Word>, flag: &str) -> Source {
    match word {
        Some(w) if w.dynamic => Source::Dynamic { flag: flag.into() },
        Some(w) => Source::Code {
            code: w.text.clone(),
            flag: flag.into(),
        },
        None => Source::Elsewhere(None),
    }
}

fn script(word: Option<&Word>) -> Source {
    Source::Elsewhere(word.map(|w| format!("the script file `{}`", w.text)))
}

/// `python [options] (-c CODE | -m MODULE | SCRIPT | - | nothing)`.
fn python(args: &[Word], stdin: Option<&Input>) -> Source {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        if t == "-" {
            return from_stdin(stdin);
        }
        if t == "--" {
            return match args.get(i + 1) {
                Some(w) => script(Some(w)),
                None => from_stdin(stdin),
            };
        }
        if let Some(long) = t.strip_prefix("--") {
            if long == "version" || long.starts_with("help") {
                return Source::Elsewhere(None);
            }
            i += if long == "check-hash-based-pycs" {
                2
            } else {
                1
            };
            continue;
        }
        let Some(cluster) = t.strip_prefix('-') else {
            return script(Some(w));
        };
        let mut skip_value = false;
        for (k, c) in cluster.char_indices() {
            let rest = &cluster[k + c.len_utf8()..];
            match c {
                'c' if rest.is_empty() => return code_word(args.get(i + 1), "-c"),
                'c' => {
                    return code_word(
                        Some(&Word {
                            text: rest.to_string(),
                            dynamic: w.dynamic,
                        }),
                        "-c",
                    );
                }
                'm' => {
                    let module = if rest.is_empty() {
                        args.get(i + 1).map_or("", |w| w.text.as_str())
                    } else {
                        rest
                    };
                    return Source::Elsewhere(Some(format!("the module `{module}`")));
                }
                'V' | 'h' | '?' => return Source::Elsewhere(None),
                'W' | 'X' => {
                    skip_value = rest.is_empty();
                    break;
                }
                _ => {}
            }
        }
        i += if skip_value { 2 } else { 1 };
    }
    from_stdin(stdin)
}

/// `node [options] (-e CODE | -p CODE | SCRIPT | - | nothing)`.
fn node(args: &[Word], stdin: Option<&Input>) -> Source {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        match t {
            "-" => return from_stdin(stdin),
            "--" => {
                return match args.get(i + 1) {
                    Some(w) => script(Some(w)),
                    None => from_stdin(stdin),
                };
            }
            "-e" | "--eval" | "-p" | "--print" | "-pe" | "-ep" => {
                return code_word(args.get(i + 1), t);
            }
            "-v" | "--version" | "-h" | "--help" | "-c" | "--check" | "--v8-options" => {
                return Source::Elsewhere(None);
            }
            "-r"
            | "--require"
            | "--import"
            | "--loader"
            | "--experimental-loader"
            | "-C"
            | "--conditions"
            | "--input-type"
            | "--title"
            | "--env-file" => i += 2,
            _ => {
                for flag in ["--eval=", "--print="] {
                    if let Some(code) = t.strip_prefix(flag) {
                        let word = Word {
                            text: code.to_string(),
                            dynamic: w.dynamic,
                        };
                        return code_word(Some(&word), flag.trim_end_matches('='));
                    }
                }
                if !t.starts_with('-') {
                    return script(Some(w));
                }
                i += 1;
            }
        }
    }
    from_stdin(stdin)
}

/// Perl and Ruby: `-e CODE` (several are joined by newlines), in clusters too (`-lne`).
fn perl_or_ruby(ruby: bool, args: &[Word], stdin: Option<&Input>) -> Source {
    let mut codes: Vec<&Word> = Vec::new();
    let mut attached: Vec<Word> = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        let have_code = !codes.is_empty() || !attached.is_empty();
        if t == "--" || (!t.starts_with('-') && have_code) {
            break;
        }
        if t == "-" {
            return from_stdin(stdin);
        }
        if let Some(long) = t.strip_prefix("--") {
            if long == "version" || long == "help" {
                return Source::Elsewhere(None);
            }
            i += 1;
            continue;
        }
        let Some(cluster) = t.strip_prefix('-') else {
            return script(Some(w));
        };
        let mut next = i + 1;
        for (k, c) in cluster.char_indices() {
            let rest = &cluster[k + c.len_utf8()..];
            let code = c == 'e' || (c == 'E' && !ruby);
            if code && rest.is_empty() {
                match args.get(next) {
                    Some(word) => codes.push(word),
                    None => return Source::Elsewhere(None),
                }
                next += 1;
                break;
            }
            if code {
                attached.push(Word {
                    text: rest.to_string(),
                    dynamic: w.dynamic,
                });
                break;
            }
            match c {
                'v' | 'V' | 'h' if codes.is_empty() => return Source::Elsewhere(None),
                'S' if ruby => {
                    return Source::Elsewhere(Some("a script found on PATH".into()));
                }
                // Options whose value follows in the same word or, when empty, the next one.
                'I' if rest.is_empty() => {
                    next += 1;
                    break;
                }
                'r' | 'C' | 'E' if ruby && rest.is_empty() => {
                    next += 1;
                    break;
                }
                // Options that take the rest of the word as their value.
                'I' | 'C' | 'i' | 'x' | 'F' => break,
                'M' | 'm' | 'd' | 'D' if !ruby => break,
                'W' | 'K' | 'T' | 'E' | 'r' if ruby => break,
                // Flags, and the digits of `-l`/`-0`.
                _ => {}
            }
        }
        i = next;
    }
    let words: Vec<&Word> = codes.into_iter().chain(attached.iter()).collect();
    if words.is_empty() {
        return match args.get(i) {
            Some(w) if !w.text.starts_with('-') => script(Some(w)),
            _ => from_stdin(stdin),
        };
    }
    if words.iter().any(|w| w.dynamic) {
        return Source::Dynamic { flag: "-e".into() };
    }
    let code = words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    Source::Code {
        code,
        flag: "-e".into(),
    }
}

fn source(language: Language, args: &[Word], stdin: Option<&Input>) -> Source {
    match language {
        Language::Python => python(args, stdin),
        Language::JavaScript => node(args, stdin),
        Language::Perl => perl_or_ruby(false, args, stdin),
        Language::Ruby => perl_or_ruby(true, args, stdin),
    }
}

/// What an interpreter runs that Bosun does not read: a script file or a module ("the script
/// file `tool.py`"), or `None` for inline code, standard input or no program.
pub(crate) fn unread_program(language: Language, argv: &[String]) -> Option<String> {
    let words: Vec<Word> = argv
        .iter()
        .skip(1)
        .map(|a| Word {
            text: a.clone(),
            dynamic: false,
        })
        .collect();
    match source(language, &words, None) {
        Source::Elsewhere(what) => what,
        _ => None,
    }
}

/// The parts an interpreter's command runs: the interpreter itself, and for inline code the
/// commands its doors run, what Bosun cannot read in it, and the code as a whole.
pub(crate) fn parts(
    language: Language,
    words: &[Word],
    stdin: Option<&Input>,
    depth: usize,
    out: &mut Vec<Part>,
) {
    let argv: Vec<String> = words.iter().map(|w| w.text.clone()).collect();
    let program = argv.first().cloned().unwrap_or_default();
    out.push(Part::Run {
        argv: argv.clone(),
        via: None,
    });
    match source(language, words.get(1..).unwrap_or(&[]), stdin) {
        Source::Code { code, flag } => {
            // The code's own findings first: on a tie they say more than the code as a whole.
            code_parts(language, &code, &program, depth, out);
            out.push(Part::Inline {
                argv,
                flag,
                language: language.name(),
            });
        }
        Source::Dynamic { flag } => out.push(Part::Opaque {
            reason: format!(
                "`{program} {flag}` runs {} code only known when the command runs",
                language.name()
            ),
        }),
        Source::Stdin => out.push(Part::Opaque {
            reason: format!(
                "`{program}` reads its program from standard input, which Bosun cannot see (a here-document it can read)"
            ),
        }),
        Source::Elsewhere(_) => {}
    }
}

/// The parts the doors of `code` run (and, for `eval` and the like, of the code they run).
fn code_parts(language: Language, code: &str, program: &str, depth: usize, out: &mut Vec<Part>) {
    if depth > 16 {
        out.push(Part::Opaque {
            reason: "the inline code evaluates code too deeply to follow".into(),
        });
        return;
    }
    for finding in findings(language, code) {
        let via = format!(
            "run by `{}` in the inline {} code of `{program}`",
            finding.via,
            language.name()
        );
        let mut inner = Vec::new();
        match finding.found {
            Found::Line(line) => inner.extend(commands::parts_at(&line, depth + 1)),
            Found::Argv(words) => commands::unwrap(&words, depth + 1, &mut inner, None),
            Found::Code(code) => code_parts(language, &code, program, depth + 1, &mut inner),
            Found::Unreadable(why) => inner.push(Part::Opaque {
                reason: format!("the inline {} code of `{program}` {why}", language.name()),
            }),
        }
        for part in &mut inner {
            if let Part::Run { via: v @ None, .. } = part {
                *v = Some(via.clone());
            }
        }
        out.extend(inner);
    }
}
