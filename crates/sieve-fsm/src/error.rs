//! The engine's one error type.
//!
//! [`BuildError`] is opaque: callers read its message and a few accessors, and the private kind
//! can grow without breaking them. Every variant names the rule it is about.

use std::fmt;

/// An error building the automata of a grammar: the grammar breaks the normalised-form contract
/// (see [`crate::Builder::build`]) or a size limit of [`crate::Config`] was hit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError {
    kind: ErrorKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum ErrorKind {
    /// A repetition with bounds other than `?`, `*`, `+` that is not a rule's whole body, or a
    /// whole-body counted repetition of something other than a rule reference.
    CountedRepetition {
        rule: String,
        min: u32,
        max: Option<u32>,
    },
    /// A rule other than the root derives the empty string.
    Nullable { rule: String },
    /// The automata would hold more than `limit` states in total.
    StateLimit { rule: String, limit: usize },
    /// The automata would hold more than `limit` edges in total.
    EdgeLimit { rule: String, limit: usize },
}

impl BuildError {
    pub(crate) fn counted_repetition(rule: &str, min: u32, max: Option<u32>) -> BuildError {
        BuildError {
            kind: ErrorKind::CountedRepetition {
                rule: rule.to_owned(),
                min,
                max,
            },
        }
    }

    pub(crate) fn nullable(rule: &str) -> BuildError {
        BuildError {
            kind: ErrorKind::Nullable {
                rule: rule.to_owned(),
            },
        }
    }

    pub(crate) fn state_limit(rule: &str, limit: usize) -> BuildError {
        BuildError {
            kind: ErrorKind::StateLimit {
                rule: rule.to_owned(),
                limit,
            },
        }
    }

    pub(crate) fn edge_limit(rule: &str, limit: usize) -> BuildError {
        BuildError {
            kind: ErrorKind::EdgeLimit {
                rule: rule.to_owned(),
                limit,
            },
        }
    }

    /// The name of the rule the error is about.
    pub fn rule_name(&self) -> &str {
        match &self.kind {
            ErrorKind::CountedRepetition { rule, .. }
            | ErrorKind::Nullable { rule }
            | ErrorKind::StateLimit { rule, .. }
            | ErrorKind::EdgeLimit { rule, .. } => rule,
        }
    }

    /// Whether the grammar is not in the normalised form the builder consumes (as opposed to
    /// being too large for the configured limits).
    pub fn is_contract_violation(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::CountedRepetition { .. } | ErrorKind::Nullable { .. }
        )
    }

    /// The configured limit that was exceeded, when the error is about size.
    pub fn size_limit(&self) -> Option<usize> {
        match self.kind {
            ErrorKind::StateLimit { limit, .. } | ErrorKind::EdgeLimit { limit, .. } => Some(limit),
            _ => None,
        }
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::CountedRepetition { rule, min, max } => {
                let bounds = match max {
                    Some(max) => format!("{{{min},{max}}}"),
                    None => format!("{{{min},}}"),
                };
                write!(
                    f,
                    "rule `{rule}`: counted repetition {bounds} is only allowed as a rule's whole \
                     body, applied to a rule reference (normalise the grammar first)"
                )
            }
            ErrorKind::Nullable { rule } => write!(
                f,
                "rule `{rule}` derives the empty string; only the root may (normalise the \
                 grammar first)"
            ),
            ErrorKind::StateLimit { rule, limit } => write!(
                f,
                "rule `{rule}`: the automata would exceed the limit of {limit} states"
            ),
            ErrorKind::EdgeLimit { rule, limit } => write!(
                f,
                "rule `{rule}`: the automata would exceed the limit of {limit} edges"
            ),
        }
    }
}

impl std::error::Error for BuildError {}
