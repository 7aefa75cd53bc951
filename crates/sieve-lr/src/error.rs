//! [`LrError`]: why a grammar has no LR(1) tables — a conflict (the grammar is not LR(1)),
//! an automaton this backend does not take, a construction limit, or a token limit that
//! cannot be honoured.

use std::fmt;

/// What one item of a [`Conflict`] would do on the look-ahead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConflictAction {
    /// Shift the look-ahead byte (the item's automaton state has an edge for it).
    Shift,
    /// End the item's rule here (its automaton state is accepting).
    Reduce,
    /// Go on as one of two instances of the same rule in the same automaton state, started
    /// at different places, with the look-ahead in common: they can only end together, a
    /// reduce/reduce conflict ahead.
    Duplicate,
}

/// One LR item involved in a conflict: a rule instance in one state of its automaton.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConflictItem {
    /// The rule's name (`START` is the augmented rule `START ::= root`).
    pub rule: String,
    /// The state of the rule's automaton (its number in `sieve_fsm`'s canonical order; for
    /// an expanded counted rule, the count; for a rule with a token limit, the state whatever
    /// the tokens counted, and the automaton's state count for an occurrence that has used its
    /// last token and can only end).
    pub state: u32,
    /// What the item would do.
    pub action: ConflictAction,
}

/// Two items of one LR state that want different actions on one look-ahead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The look-ahead byte; `None` for end of input.
    pub lookahead: Option<u8>,
    /// The items involved (at least two).
    pub items: Vec<ConflictItem>,
    /// A byte string that reaches the conflicting state (cut at 200 bytes).
    pub prefix: Vec<u8>,
}

/// Why [`crate::LrGrammar::new`] failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LrError {
    /// The grammar is not LR(1): an LR state has two actions on one look-ahead.
    Conflict(Box<Conflict>),
    /// A rule's automaton is of a kind this backend does not take.
    Unsupported {
        /// The rule's name.
        rule: String,
        /// Why, in words.
        reason: String,
    },
    /// A [`crate::Config`] limit was reached while building the tables.
    Limit {
        /// The configuration field.
        name: &'static str,
        /// Its value.
        limit: usize,
        /// What exceeded it.
        what: String,
    },
    /// A rule has a token limit (`max_tokens`) and no vocabulary was given to count it in
    /// (build with [`crate::LrGrammar::with_token_limits`]).
    NeedsVocabulary {
        /// The limited rule.
        rule: String,
    },
    /// A rule's token limit cannot be honoured with the vocabulary.
    TokenLimit(sieve_backend::token_limits::TokenLimitError),
}

impl LrError {
    pub(crate) fn unsupported(rule: &str, reason: impl Into<String>) -> LrError {
        LrError::Unsupported {
            rule: rule.to_owned(),
            reason: reason.into(),
        }
    }

    pub(crate) fn limit(name: &'static str, limit: usize, what: impl Into<String>) -> LrError {
        LrError::Limit {
            name,
            limit,
            what: what.into(),
        }
    }
}

/// A byte as a grammar would write it.
fn show_byte(b: u8) -> String {
    match b {
        b'"' => "'\"'".to_owned(),
        0x20..=0x7e => format!("'{}'", b as char),
        _ => format!("'\\x{b:02X}'"),
    }
}

impl fmt::Display for LrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LrError::Conflict(c) => {
                let la = c.lookahead.map_or("end of input".to_owned(), show_byte);
                write!(f, "the grammar is not LR(1): on look-ahead {la}")?;
                for (i, item) in c.items.iter().enumerate() {
                    let sep = if i == 0 { " " } else { " vs " };
                    let action = match item.action {
                        ConflictAction::Shift => "shift",
                        ConflictAction::Reduce => "end",
                        ConflictAction::Duplicate => "one of two instances of",
                    };
                    write!(
                        f,
                        "{sep}{action} `{}` (automaton state {})",
                        item.rule, item.state
                    )?;
                }
                write!(f, ", after {:?}", String::from_utf8_lossy(&c.prefix))
            }
            LrError::Unsupported { rule, reason } => {
                write!(
                    f,
                    "rule `{rule}` is not supported by the LR backend: {reason}"
                )
            }
            LrError::Limit { name, limit, what } => {
                write!(f, "{what} would exceed the LR backend's {name} ({limit})")
            }
            LrError::NeedsVocabulary { rule } => write!(
                f,
                "rule `{rule}` has a token limit, which the LR backend counts only when built \
                 with a vocabulary"
            ),
            LrError::TokenLimit(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for LrError {}
