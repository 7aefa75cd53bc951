//! The regex front-end's error type.
//!
//! Every variant carries a [`Span`] of byte offsets into the pattern given to
//! [`crate::compile`] (never past its end, always on character boundaries as regex-syntax
//! reports them), and its `Display` text is a message an end user can act on without knowing
//! sieve's internals. Render one with [`sieve_diagnostics::SourceFile::render_error`].

use sieve_diagnostics::{Located, Span};

/// Why a regex could not become a grammar.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The pattern is not valid regex syntax, or names an unknown Unicode class. The message is
    /// regex-syntax's.
    #[error("{message}")]
    Syntax {
        /// Where regex-syntax located the problem.
        span: Span,
        /// regex-syntax's description of it.
        message: String,
    },
    /// A look-around group, `(?=…)`, `(?!…)`, `(?<=…)` or `(?<!…)`.
    #[error("{kind} assertions `{}…)` are not supported", kind.syntax())]
    LookAround {
        /// The group's opening, e.g. `(?=`.
        span: Span,
        /// Which of the four.
        kind: LookAround,
    },
    /// A back-reference such as `\1`, `\k<name>` or `(?P=name)`: the language would not be
    /// context-free, let alone regular.
    #[error("back-references (`{text}`) are not supported")]
    BackReference {
        /// The back-reference.
        span: Span,
        /// Its text as written.
        text: String,
    },
    /// A word-boundary assertion (`\b`, `\B`, `\<`, `\>`, `\b{start}`, …).
    #[error("word-boundary assertions (`{text}`) are not supported")]
    WordBoundary {
        /// The assertion.
        span: Span,
        /// Its text as written.
        text: String,
    },
    /// A start or end anchor somewhere it could constrain the match: sieve matches the whole
    /// output, so anchors are only allowed where they are always true.
    #[error(
        "{} `{text}` is only allowed at the {} of the pattern or of a top-level alternative",
        if *multi_line { "the multi-line anchor" } else { "the anchor" },
        if *at_start { "start" } else { "end" }
    )]
    MisplacedAnchor {
        /// The anchor.
        span: Span,
        /// Its text as written, e.g. `^` or `\z`.
        text: String,
        /// Whether it is a start anchor (`^`, `\A`) rather than an end anchor (`$`, `\z`).
        at_start: bool,
        /// Whether it is a line anchor under the `m` flag.
        multi_line: bool,
    },
    /// The regex matches no string at all (for example an empty class such as `[^\x00-\x{10FFFF}]`);
    /// a grammar cannot express the empty language.
    #[error("{}", if *whole { "the regex matches nothing" } else { "this class matches no character, so the regex matches nothing" })]
    MatchesNothing {
        /// The empty class that makes the language empty, or the whole pattern.
        span: Span,
        /// Whether `span` is the whole pattern rather than one empty class.
        whole: bool,
    },
    /// The pattern is longer than [`crate::Limits::max_pattern_len`].
    #[error("the pattern is {len} bytes long, over the limit of {limit}")]
    PatternTooLong {
        /// From the limit to the end of the pattern.
        span: Span,
        /// The pattern's length in bytes.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// Groups, classes or repetitions nest deeper than [`crate::Limits::nest_limit`].
    #[error("the pattern nests deeper than the limit of {limit}")]
    NestTooDeep {
        /// Where the limit was crossed.
        span: Span,
        /// The limit.
        limit: u32,
    },
    /// A counted repetition's bound is over [`crate::Limits::max_repeat`].
    #[error("the repetition bound {bound} is over the limit of {limit}")]
    RepeatTooLarge {
        /// The repetition operator, e.g. `{2,99999}`.
        span: Span,
        /// The largest bound written.
        bound: u32,
        /// The limit.
        limit: u32,
    },
    /// The grammar would have more expression nodes than
    /// [`crate::Limits::max_grammar_size`] (large Unicode classes are the usual cause).
    #[error("the regex needs a grammar of more than {limit} nodes")]
    GrammarTooLarge {
        /// The whole pattern.
        span: Span,
        /// The limit.
        limit: usize,
    },
    /// An extension group's content is not what the extension takes (see the crate docs).
    #[error("`{name}` takes {expected}")]
    ExtensionContent {
        /// The offending content (or the whole group when it is empty).
        span: Span,
        /// The extension's name, e.g. `TEXT_UNTIL`.
        name: &'static str,
        /// What it takes instead.
        expected: &'static str,
    },
    /// An all-capitals capture name that is not an extension but is close to one's name: a
    /// likely typo. (Other names are ordinary capture groups.)
    #[error("unknown extension `{name}`; did you mean `{suggestion}`? (rename the group to use it as an ordinary capture)")]
    UnknownExtension {
        /// The name.
        span: Span,
        /// The name as written.
        name: String,
        /// The nearest extension name.
        suggestion: String,
    },
    /// `TEXT_TOKEN`, `PARAGRAPH_TOKEN` or `IMAGE`: in Koo et al. these are labels for a mask over
    /// the model's vocabulary (one token, one newline-free token, an image), which no language
    /// of bytes can express.
    #[error("`{name}` is a token-level label (it stands for a set of the model's tokens, not for text), so a byte-level grammar cannot express it")]
    TokenLevelExtension {
        /// The name.
        span: Span,
        /// The name as written.
        name: String,
    },
    /// A `DELIMITER` group anywhere but at the end of a `DELIMITED_LIST` or
    /// `DELIMITED_SUBSEQUENCE_OF` group's content.
    #[error("a `DELIMITER` group is only allowed as the last part of a `DELIMITED_LIST` or `DELIMITED_SUBSEQUENCE_OF` group")]
    MisplacedDelimiter {
        /// The group.
        span: Span,
    },
    /// The text of a `SUBSTRING_OF`, or the stop phrases of a `TEXT_UNTIL` together, are longer
    /// than [`crate::Limits::max_extension_text`].
    #[error("the text of `{name}` is {len} bytes long, over the limit of {limit}")]
    ExtensionTooLarge {
        /// The extension group.
        span: Span,
        /// The extension's name.
        name: &'static str,
        /// The text's length in bytes.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// [`crate::Options::rule_name`] is empty.
    #[error("the rule name must not be empty")]
    EmptyRuleName {
        /// The empty span at the start of the pattern.
        span: Span,
    },
}

/// The four kinds of look-around group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LookAround {
    /// `(?=…)`
    LookAhead,
    /// `(?!…)`
    NegativeLookAhead,
    /// `(?<=…)`
    LookBehind,
    /// `(?<!…)`
    NegativeLookBehind,
}

impl LookAround {
    /// The group's opening, e.g. `(?=`.
    pub fn syntax(self) -> &'static str {
        match self {
            LookAround::LookAhead => "(?=",
            LookAround::NegativeLookAhead => "(?!",
            LookAround::LookBehind => "(?<=",
            LookAround::NegativeLookBehind => "(?<!",
        }
    }
}

impl std::fmt::Display for LookAround {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LookAround::LookAhead => "look-ahead",
            LookAround::NegativeLookAhead => "negative look-ahead",
            LookAround::LookBehind => "look-behind",
            LookAround::NegativeLookBehind => "negative look-behind",
        })
    }
}

impl Located for Error {
    fn span(&self) -> Span {
        match self {
            Error::Syntax { span, .. }
            | Error::LookAround { span, .. }
            | Error::BackReference { span, .. }
            | Error::WordBoundary { span, .. }
            | Error::MisplacedAnchor { span, .. }
            | Error::MatchesNothing { span, .. }
            | Error::PatternTooLong { span, .. }
            | Error::NestTooDeep { span, .. }
            | Error::RepeatTooLarge { span, .. }
            | Error::GrammarTooLarge { span, .. }
            | Error::ExtensionContent { span, .. }
            | Error::UnknownExtension { span, .. }
            | Error::TokenLevelExtension { span, .. }
            | Error::MisplacedDelimiter { span }
            | Error::ExtensionTooLarge { span, .. }
            | Error::EmptyRuleName { span } => *span,
        }
    }
}

/// A regex-syntax span as a sieve span.
pub(crate) fn span(s: &regex_syntax::ast::Span) -> Span {
    Span::new(s.start.offset, s.end.offset)
}

/// Classifies a regex-syntax parse error: unsupported features get their own variants.
pub(crate) fn from_parse(pattern: &str, err: &regex_syntax::ast::Error) -> Error {
    use regex_syntax::ast::ErrorKind;
    let at = span(err.span());
    let text = pattern.get(at.start..at.end).unwrap_or("");
    match err.kind() {
        ErrorKind::UnsupportedLookAround => {
            // The span covers `(?=`, `(?<!` and so on, possibly with whitespace under `x`.
            let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            let kind = match compact.as_str() {
                "(?!" => LookAround::NegativeLookAhead,
                "(?<=" => LookAround::LookBehind,
                "(?<!" => LookAround::NegativeLookBehind,
                _ => LookAround::LookAhead,
            };
            Error::LookAround { span: at, kind }
        }
        ErrorKind::UnsupportedBackreference => Error::BackReference {
            span: at,
            text: text.to_owned(),
        },
        ErrorKind::NestLimitExceeded(limit) => Error::NestTooDeep {
            span: at,
            limit: *limit,
        },
        ErrorKind::EscapeUnrecognized if text.starts_with("\\k") => {
            // `\k<name>`, `\k{name}`, `\k'name'`: named back-references in other dialects.
            let end = named_reference_end(pattern, at.start + 2).unwrap_or(at.end);
            Error::BackReference {
                span: Span::new(at.start, end),
                text: pattern[at.start..end].to_owned(),
            }
        }
        kind => {
            // `(?P=name)`: Python's named back-reference; regex-syntax calls `P` a bad flag.
            let python = matches!(kind, ErrorKind::FlagUnrecognized)
                && at.start >= 2
                && pattern
                    .get(at.start - 2..)
                    .is_some_and(|g| g.starts_with("(?P="));
            if python {
                let start = at.start - 2;
                let end = pattern[start..]
                    .find(')')
                    .map_or(pattern.len(), |i| start + i + 1);
                return Error::BackReference {
                    span: Span::new(start, end),
                    text: pattern[start..end].to_owned(),
                };
            }
            Error::Syntax {
                span: at,
                message: kind.to_string(),
            }
        }
    }
}

/// The end of a `<name>`, `{name}` or `'name'` starting at `open`, if it closes.
fn named_reference_end(pattern: &str, open: usize) -> Option<usize> {
    let close = match pattern.get(open..)?.chars().next()? {
        '<' => '>',
        '{' => '}',
        '\'' => '\'',
        _ => return None,
    };
    let rest = &pattern[open + 1..];
    rest.find(close).map(|i| open + 1 + i + 1)
}

/// A regex-syntax translation error (unknown Unicode class and the like) as a sieve error.
pub(crate) fn from_translate(err: &regex_syntax::hir::Error) -> Error {
    Error::Syntax {
        span: span(err.span()),
        message: err.kind().to_string(),
    }
}
