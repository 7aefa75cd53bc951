//! Errors users see: each has a [`Span`] into the Lark text and a one-line message that says
//! what is wrong and, where it helps, what to write instead.
//!
//! Invariants: spans lie inside the text and on character boundaries; messages start
//! lower-case and name the offending text in backticks.

use sieve_diagnostics::{Located, Span};

/// What kind of problem an [`Error`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The text is not Lark syntax.
    Syntax,
    /// A name that is defined twice, never defined, or used where it cannot be.
    Name,
    /// Valid Lark that sieve does not compile (yet): templates, `%declare`…
    Unsupported,
    /// A special token the tokenizer does not have (or no tokenizer to resolve it).
    Token,
    /// A regex inside `/…/` that sieve's regex front-end refuses.
    Regex,
    /// An inline `%json` schema that sieve's JSON Schema front-end refuses.
    Json,
    /// A terminal whose language is empty (`A & ~A`), so nothing could ever match it.
    Empty,
    /// A size limit of [`crate::Limits`].
    Limit,
}

/// One problem in a Lark grammar.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    /// What kind of problem.
    pub kind: ErrorKind,
    /// Where in the text.
    pub span: Span,
    /// The message for the user.
    pub message: String,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, span: Span, message: impl Into<String>) -> Error {
        Error {
            kind,
            span,
            message: message.into(),
        }
    }
}

impl Located for Error {
    fn span(&self) -> Span {
        self.span
    }
}

/// The errors of one compilation: never empty, sorted by position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Errors(Vec<Error>);

impl Errors {
    /// Wraps a non-empty list, sorting it by position.
    pub(crate) fn new(mut errors: Vec<Error>) -> Errors {
        debug_assert!(!errors.is_empty());
        errors.sort_by_key(|e| (e.span.start, e.span.end));
        Errors(errors)
    }

    /// The errors, by position.
    pub fn as_slice(&self) -> &[Error] {
        &self.0
    }

    /// The first error.
    pub fn first(&self) -> &Error {
        &self.0[0]
    }
}

impl From<Error> for Errors {
    fn from(error: Error) -> Errors {
        Errors(vec![error])
    }
}

impl std::fmt::Display for Errors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Errors {}
