//! The runtime's error type.

/// Why a [`crate::Matcher`] call was refused. The matcher is unchanged after any of these.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MatcherError {
    /// The id is not below the vocabulary size.
    #[error("unknown token id {id}: the vocabulary has {n_vocab} ids")]
    UnknownToken {
        /// The id given.
        id: u32,
        /// The vocabulary size.
        n_vocab: usize,
    },
    /// The token would take the output outside the grammar.
    #[error("token {id} ({text}) is not allowed after {offset} bytes of output")]
    TokenNotAllowed {
        /// The token.
        id: u32,
        /// Its bytes, escaped for display.
        text: String,
        /// The output length when it was offered.
        offset: usize,
    },
    /// A special token other than an allowed EOS.
    #[error(
        "special token {id} is never text, and EOS is only allowed once the output is complete"
    )]
    SpecialNotAllowed {
        /// The token.
        id: u32,
    },
    /// The bytes would take the output outside the grammar.
    #[error("byte {offset} of the given bytes cannot extend the output")]
    BytesRejected {
        /// The offset, within the bytes given, of the first byte that was rejected.
        offset: usize,
    },
    /// The matcher already accepted EOS.
    #[error("the matcher is terminated: it accepted EOS; roll back or reset to continue")]
    Terminated,
    /// `rollback(n)` with `n` over the number of accepted steps.
    #[error("cannot roll back {requested} steps: only {available} were accepted")]
    RollbackTooFar {
        /// Steps asked for.
        requested: usize,
        /// Steps accepted so far.
        available: usize,
    },
    /// The bitmask slice is shorter than the vocabulary needs.
    #[error("bitmask has {given} words, the vocabulary needs {needed}")]
    BitmaskTooSmall {
        /// Words given.
        given: usize,
        /// Words needed: `ceil(n_vocab / 32)`.
        needed: usize,
    },
    /// A budgeted matcher cannot be created: no complete output is guaranteed to fit.
    #[error("{}", budget_too_small(*max_tokens, *needed))]
    BudgetTooSmall {
        /// The budget asked for (tokens, EOS included).
        max_tokens: u32,
        /// The tokens (EOS included) the grammar's bound needs, or `None` when no complete
        /// output can be bounded in this vocabulary's tokens.
        needed: Option<u32>,
    },
    /// The token (or bytes) would leave no complete output within the remaining budget.
    #[error(
        "{what} would leave no complete output within the {remaining} tokens left of the budget"
    )]
    OverBudget {
        /// What was offered: `token <id> (<text>)`, or `the given bytes`.
        what: String,
        /// The tokens left (EOS included) before it.
        remaining: u32,
    },
    /// The recogniser hit one of its configured limits.
    #[error("{0}")]
    Limit(#[from] sieve_backend::LimitError),
}

pub(crate) fn escape(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    out.extend(bytes.escape_ascii().map(char::from));
    out.push('"');
    out
}

fn budget_too_small(max_tokens: u32, needed: Option<u32>) -> String {
    match needed {
        Some(needed) => format!(
            "a budget of {max_tokens} tokens cannot guarantee a complete output: the shortest bound is {needed} tokens (EOS included)"
        ),
        None => format!(
            "a budget of {max_tokens} tokens cannot guarantee a complete output: no complete output can be bounded in this vocabulary's tokens"
        ),
    }
}
