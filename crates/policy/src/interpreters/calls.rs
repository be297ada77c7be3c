//! What a door runs, given the arguments it was called with: a literal string is a command
//! line, a list of literals is argv, anything else is only known when the code runs.

use super::Language;
use super::doors::{Door, Style::*};
use crate::shell::Word;

/// What a door in inline code runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// A shell command line.
    Line(String),
    /// A program and its arguments (a word may be only known when the code runs).
    Argv(Vec<Word>),
    /// Code in the same language, run by `eval` and the like.
    Code(String),
    /// Something Bosun cannot follow; the text completes "the inline code …".
    Unreadable(String),
}

/// A finding and the door it came through (`os.system`, backticks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub found: Found,
    pub via: String,
}

/// One argument of a call, as far as a literal goes.
#[derive(Debug, Clone)]
pub(super) enum Arg {
    Literal {
        text: String,
        dynamic: bool,
    },
    List(Vec<String>),
    /// A keyword argument or an options hash: the command's words are over.
    Options,
    /// Anything else, shown as written (shortened).
    Other(String),
}

/// What a door called with these positional arguments runs, or why that is unknown.
pub(super) fn runs(
    language: Language,
    door: &Door,
    via: &str,
    positional: &[&Arg],
) -> Result<Vec<Found>, String> {
    let first = positional.first().copied();
    let unknown = |what: Option<&Arg>| {
        format!(
            "calls `{via}` with {}, a command only known when the code runs",
            shown(what)
        )
    };
    match door.style {
        First => match first {
            None => Ok(Vec::new()),
            Some(Arg::Literal {
                text,
                dynamic: false,
            }) => Ok(vec![Found::Line(text.clone())]),
            Some(Arg::List(words)) => Ok(vec![argv(words)]),
            other => Err(unknown(other)),
        },
        ProgramThenList => match (first, positional.get(1).copied()) {
            (None, _) => Ok(Vec::new()),
            (
                Some(Arg::Literal {
                    text,
                    dynamic: false,
                }),
                rest,
            ) => match rest {
                None => Ok(vec![argv(std::slice::from_ref(text))]),
                Some(Arg::List(words)) => {
                    let mut all = vec![text.clone()];
                    all.extend(words.iter().cloned());
                    Ok(vec![argv(&all)])
                }
                other => Err(unknown(other)),
            },
            (other, _) => Err(unknown(other)),
        },
        List | ListAfterEnv | OpenN => {
            let skip = if door.style == OpenN {
                positional
                    .iter()
                    .position(|a| matches!(a, Arg::Literal { .. } | Arg::List(_)))
                    .unwrap_or(positional.len())
            } else {
                0
            };
            words_of(&positional[skip..]).map_err(|bad| unknown(bad.as_ref()))
        }
        NodeFile => match first {
            None => Ok(Vec::new()),
            Some(Arg::Literal {
                text,
                dynamic: false,
            }) => Ok(vec![argv(&["node".to_string(), text.clone()])]),
            other => Err(unknown(other)),
        },
        Code => {
            let codes: Vec<Found> = positional
                .iter()
                .map_while(|a| match a {
                    Arg::Literal {
                        text,
                        dynamic: false,
                    } => Some(Found::Code(text.clone())),
                    _ => None,
                })
                .collect();
            match (codes.is_empty(), first) {
                (false, _) | (true, None) => Ok(codes),
                (true, other) => Err(format!(
                    "calls `{via}` with {}, code only known when it runs",
                    shown(other)
                )),
            }
        }
        Module => match first {
            None | Some(Arg::Literal { dynamic: false, .. }) => Ok(Vec::new()),
            Some(Arg::Other(bareword))
                if language == Language::Perl
                    && bareword
                        .chars()
                        .all(|c| c.is_alphanumeric() || c == ':' || c == '_') =>
            {
                Ok(Vec::new())
            }
            other => Err(format!(
                "loads {} with `{via}`, a module only known when the code runs",
                shown(other)
            )),
        },
        PerlOpen => perl_open(positional).map_err(|bad| {
            format!(
                "calls `open` with {}, which runs a command when its mode has a `|`",
                shown(bad.as_ref())
            )
        }),
        RubyOpen => match first {
            None => Ok(Vec::new()),
            Some(Arg::Literal {
                text,
                dynamic: false,
            }) => Ok(text
                .strip_prefix('|')
                .map(|c| vec![Found::Line(c.to_string())])
                .unwrap_or_default()),
            other => Err(format!(
                "calls `open` with {}, which runs a command when it starts with `|`",
                shown(other)
            )),
        },
        Unfollowable => Err(format!("uses `{via}`, which Bosun cannot follow")),
    }
}

/// An argument as a reason shows it.
fn shown(arg: Option<&Arg>) -> String {
    match arg {
        Some(Arg::Other(text)) => format!("`{text}`"),
        Some(Arg::Literal { text, .. }) => format!("{text:?}"),
        Some(Arg::List(words)) => format!("{words:?}"),
        Some(Arg::Options) => "options".to_string(),
        None => "no arguments".to_string(),
    }
}

fn argv(words: &[String]) -> Found {
    Found::Argv(
        words
            .iter()
            .map(|w| Word {
                text: w.clone(),
                dynamic: false,
            })
            .collect(),
    )
}

/// Perl/Ruby list calls: one literal is a command line, several are argv. The first argument
/// that is not a literal is returned as the error.
fn words_of(args: &[&Arg]) -> Result<Vec<Found>, Option<Arg>> {
    if let [
        Arg::Literal {
            text,
            dynamic: false,
        },
    ] = args
    {
        return Ok(vec![Found::Line(text.clone())]);
    }
    let mut words = Vec::new();
    for a in args {
        match a {
            Arg::Literal { text, dynamic } => words.push(Word {
                text: text.clone(),
                dynamic: *dynamic,
            }),
            Arg::List(list) => words.extend(list.iter().map(|w| Word {
                text: w.clone(),
                dynamic: false,
            })),
            other => return Err(Some((*other).clone())),
        }
    }
    match words.first() {
        Some(first) if !first.dynamic => Ok(vec![Found::Argv(words)]),
        Some(_) => Err(args.first().map(|a| (*a).clone())),
        None => Err(None),
    }
}

/// Perl `open(FH, MODE, LIST)` and `open(FH, EXPR)`.
fn perl_open(args: &[&Arg]) -> Result<Vec<Found>, Option<Arg>> {
    let rest = args.get(1..).unwrap_or(&[]);
    match rest {
        [] => Ok(Vec::new()),
        [
            Arg::Literal {
                text,
                dynamic: false,
            },
        ] => {
            let t = text.trim();
            if let Some(cmd) = t.strip_prefix('|') {
                Ok(vec![Found::Line(cmd.trim().to_string())])
            } else if let Some(cmd) = t.strip_suffix('|') {
                Ok(vec![Found::Line(cmd.trim().to_string())])
            } else {
                Ok(Vec::new())
            }
        }
        [other] => Err(Some((*other).clone())),
        [
            Arg::Literal {
                text: mode,
                dynamic: false,
            },
            command @ ..,
        ] => {
            if matches!(mode.trim(), "-|" | "|-") {
                words_of(command)
            } else {
                Ok(Vec::new())
            }
        }
        [mode, ..] => Err(Some((*mode).clone())),
    }
}
