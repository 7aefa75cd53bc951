//! Errors users see: every variant has a [`Span`] into the grammar text and a message that says
//! what is wrong and, where it helps, what to write instead.
//!
//! Invariants: messages are one line, start lower-case, name the offending text in backticks,
//! and never dump parser-internal token names. [`Errors`] is never empty and is sorted by
//! position when produced by this crate.

use std::fmt;

use sieve_diagnostics::{Located, SourceFile, Span};

/// One problem in a grammar, located in its text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The text is longer than [`crate::Limits::max_input_bytes`].
    #[error("the grammar is {len} bytes long, over the limit of {limit} bytes")]
    InputTooLarge {
        /// The part of the text past the limit.
        span: Span,
        /// The text's length in bytes.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// A character that cannot start any token.
    #[error("unexpected character {}{}", describe_char(*.ch), char_hint(*.ch))]
    UnexpectedChar {
        /// The character.
        span: Span,
        /// The character.
        ch: char,
    },
    /// A string literal without its closing quote on the same line.
    #[error(
        "unterminated string literal: the closing quote is missing before the end of the line"
    )]
    UnterminatedString {
        /// The opening quote.
        span: Span,
    },
    /// A character class without its `]` on the same line.
    #[error("unterminated character class: `]` is missing before the end of the line")]
    UnterminatedClass {
        /// The opening `[`.
        span: Span,
    },
    /// A `(` (or `(=`) that is never closed in its rule.
    #[error("unclosed `(`: add a `)` before the end of the rule")]
    UnclosedParen {
        /// The opening parenthesis.
        span: Span,
    },
    /// A `)` without an open `(`.
    #[error("unmatched `)`: there is no `(` open here")]
    UnmatchedParen {
        /// The parenthesis.
        span: Span,
    },
    /// A token the grammar does not allow here.
    #[error("expected {expected}, found {found}")]
    UnexpectedToken {
        /// The token.
        span: Span,
        /// The token, in words.
        found: String,
        /// What would be allowed, in words.
        expected: String,
    },
    /// The text ends where more is needed.
    #[error("unexpected end of input: expected {expected}")]
    UnexpectedEnd {
        /// The end of the text.
        span: Span,
        /// What would be allowed, in words.
        expected: String,
    },
    /// An escape sequence that is not one of the accepted ones.
    #[error("bad escape `{escape}`: {reason}")]
    BadEscape {
        /// The escape sequence.
        span: Span,
        /// Its text.
        escape: String,
        /// What is wrong and what is accepted.
        reason: String,
    },
    /// An escape denoting a surrogate or a value above U+10FFFF.
    #[error("escape `{escape}` is not a Unicode scalar value (surrogates and values above U+10FFFF are not characters)")]
    InvalidCodePoint {
        /// The escape sequence.
        span: Span,
        /// Its text.
        escape: String,
    },
    /// A class range whose start is after its end, like `[z-a]`.
    #[error("class range `{}-{}` is reversed: its start U+{:04X} is after its end U+{:04X}", .lo.escape_debug(), .hi.escape_debug(), u32::from(*.lo), u32::from(*.hi))]
    ReversedRange {
        /// The range.
        span: Span,
        /// Its start.
        lo: char,
        /// Its end.
        hi: char,
    },
    /// A character class that matches no character: `[]`, or a negation of everything.
    #[error("character class matches no character")]
    EmptyClass {
        /// The class.
        span: Span,
    },
    /// `{m,n}` with `m > n`.
    #[error("repetition `{{{min},{max}}}`: the minimum is greater than the maximum")]
    RepeatMinOverMax {
        /// The braces.
        span: Span,
        /// The minimum.
        min: u32,
        /// The maximum.
        max: u32,
    },
    /// A repetition bound that does not fit in 32 bits.
    #[error(
        "repetition bound `{number}` is too large (the most a bound can be is {})",
        u32::MAX
    )]
    RepeatOverflow {
        /// The number.
        span: Span,
        /// Its text.
        number: String,
    },
    /// A repetition bound over [`crate::Limits::max_repeat`].
    #[error("repetition bound {bound} is over the limit of {limit}")]
    RepeatOverLimit {
        /// The number (or the whole repetition).
        span: Span,
        /// The bound.
        bound: u32,
        /// The limit.
        limit: u32,
    },
    /// Groups nested deeper than [`crate::Limits::max_depth`].
    #[error("groups are nested too deeply (the limit is {limit} levels)")]
    TooDeep {
        /// The first `(` past the limit.
        span: Span,
        /// The limit.
        limit: usize,
    },
    /// More rules than [`crate::Limits::max_rules`].
    #[error("too many rules (the limit is {limit})")]
    TooManyRules {
        /// The name of the first rule past the limit.
        span: Span,
        /// The limit.
        limit: usize,
    },
    /// A reference to a rule that is not defined.
    #[error("undefined rule `{name}`")]
    UndefinedRule {
        /// The reference.
        span: Span,
        /// The rule name.
        name: String,
    },
    /// A second definition of a rule.
    #[error("rule `{name}` is defined twice (first defined on line {first_line}); merge the definitions with `|`")]
    DuplicateRule {
        /// The second definition's name.
        span: Span,
        /// The rule name.
        name: String,
        /// The 1-based line of the first definition (0 when unknown).
        first_line: usize,
    },
    /// The root rule is not defined.
    #[error(
        "the grammar has no rule named `{name}`, which is its root rule; define `{name} ::= …`"
    )]
    MissingRoot {
        /// The start of the text.
        span: Span,
        /// The expected root name.
        name: String,
    },
    /// An XGrammar lookahead assertion `(= …)`, which is parsed but cannot be enforced.
    #[error("lookahead assertions are not supported; remove the `(= …)` part")]
    LookaheadUnsupported {
        /// The assertion.
        span: Span,
    },
    /// A rule attribute block `name[…] ::=` that is malformed or names an attribute sieve
    /// does not enforce.
    #[error("{message}")]
    BadRuleAttribute {
        /// The offending attribute.
        span: Span,
        /// What is wrong.
        message: String,
    },
    /// A built-in call with arguments it does not take.
    #[error("`{function}` takes {expected}")]
    BadArguments {
        /// The offending argument, or the whole call for a wrong number of arguments.
        span: Span,
        /// The built-in's name.
        function: &'static str,
        /// What it takes, with an example.
        expected: &'static str,
    },
    /// The text of `substring_of`, or the stop phrases of `text_until` together, are longer
    /// than [`crate::Limits::max_call_text`].
    #[error("the text of `{function}` is {len} bytes long, over the limit of {limit}")]
    CallTextTooLong {
        /// The call.
        span: Span,
        /// The built-in's name.
        function: &'static str,
        /// The text's length in bytes.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// A token terminal that is malformed.
    #[error("{message}")]
    BadToken {
        /// The token terminal.
        span: Span,
        /// What is wrong.
        message: String,
    },
    /// A token terminal the tokenizer cannot resolve (an unknown name or id, or no
    /// tokenizer given).
    #[error("token `{text}`: {reason}")]
    UnresolvedToken {
        /// The token terminal.
        span: Span,
        /// It as written.
        text: String,
        /// Why.
        reason: sieve_ir::token::TokenError,
    },
    /// A bug in this crate: the IR rejected what lowering built. Please report it.
    #[error("internal error (please report this bug): {message}")]
    Internal {
        /// The start of the grammar.
        span: Span,
        /// What the IR reported.
        message: String,
    },
}

fn describe_char(ch: char) -> String {
    if ch.is_control() || ch.is_whitespace() {
        format!("U+{:04X}", u32::from(ch))
    } else {
        format!("`{ch}`")
    }
}

fn char_hint(ch: char) -> &'static str {
    match ch {
        '=' | ':' => "; a rule is written `name ::= …`",
        '-' => "; rule names cannot start with `-`",
        '\\' => "; escapes are only allowed inside strings and classes",
        _ => "",
    }
}

impl Located for Error {
    fn span(&self) -> Span {
        match self {
            Error::InputTooLarge { span, .. }
            | Error::UnexpectedChar { span, .. }
            | Error::UnterminatedString { span }
            | Error::UnterminatedClass { span }
            | Error::UnclosedParen { span }
            | Error::UnmatchedParen { span }
            | Error::UnexpectedToken { span, .. }
            | Error::UnexpectedEnd { span, .. }
            | Error::BadEscape { span, .. }
            | Error::InvalidCodePoint { span, .. }
            | Error::ReversedRange { span, .. }
            | Error::EmptyClass { span }
            | Error::RepeatMinOverMax { span, .. }
            | Error::RepeatOverflow { span, .. }
            | Error::RepeatOverLimit { span, .. }
            | Error::TooDeep { span, .. }
            | Error::TooManyRules { span, .. }
            | Error::UndefinedRule { span, .. }
            | Error::DuplicateRule { span, .. }
            | Error::MissingRoot { span, .. }
            | Error::LookaheadUnsupported { span }
            | Error::BadRuleAttribute { span, .. }
            | Error::BadArguments { span, .. }
            | Error::CallTextTooLong { span, .. }
            | Error::BadToken { span, .. }
            | Error::UnresolvedToken { span, .. }
            | Error::Internal { span, .. } => *span,
        }
    }
}

/// Every error found in a grammar, in text order; never empty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Errors(Vec<Error>);

impl Errors {
    /// Wraps a non-empty list of errors, sorting it by position.
    ///
    /// # Panics
    /// When `errors` is empty.
    pub(crate) fn new(mut errors: Vec<Error>) -> Errors {
        assert!(!errors.is_empty(), "Errors holds at least one error");
        errors.sort_by_key(|e| (e.span().start, e.span().end));
        Errors(errors)
    }

    /// The errors, in text order.
    pub fn as_slice(&self) -> &[Error] {
        &self.0
    }

    /// The errors, in text order.
    pub fn into_vec(self) -> Vec<Error> {
        self.0
    }

    /// The first error in the text.
    pub fn first(&self) -> &Error {
        &self.0[0]
    }

    /// Renders every error against its source text with [`SourceFile::render_error`].
    pub fn render(&self, source: &SourceFile<'_>) -> String {
        self.0.iter().map(|e| source.render_error(e)).collect()
    }
}

impl fmt::Display for Errors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Errors {}

impl<'a> IntoIterator for &'a Errors {
    type Item = &'a Error;
    type IntoIter = std::slice::Iter<'a, Error>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}
