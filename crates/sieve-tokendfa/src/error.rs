//! [`TokenDfaError`]: why a constraint has no token-level DFA here.

use std::fmt;

/// Why [`crate::TokenDfa::new`] or [`crate::TokenDfa::token_automaton`] failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenDfaError {
    /// The grammar references itself other than in tail position (`a ::= "x" a | "y"` is
    /// fine, `a ::= "(" a ")" | "y"` is not): its language need not be regular, and this
    /// backend builds one finite automaton. `cycle` names the rules on one reference cycle,
    /// in order, the first repeated at the end (`a → b → a`).
    Recursive {
        /// The rule names along the cycle.
        cycle: Vec<String>,
    },
    /// A DFA (of `rule`, references inlined) would have more than `limit` states, the NFA
    /// it is determinised from more than four times that, or the subset construction's
    /// state sets more than 256 NFA states per allowed DFA state in all.
    StateLimit {
        /// The rule whose automaton was being built (the root for the whole constraint).
        rule: String,
        /// [`crate::Config::state_limit`].
        limit: usize,
    },
    /// The rule's automaton is of a kind this backend does not know (sieve-fsm's
    /// automaton kinds are open to additions).
    Unsupported {
        /// The rule's name.
        rule: String,
    },
    /// A rule's token limit (`max_tokens`) cannot be honoured with the vocabulary (see
    /// [`sieve_backend::token_limits`]).
    TokenLimit(sieve_backend::token_limits::TokenLimitError),
    /// The grammar has token limits and no vocabulary was given to count tokens in
    /// ([`crate::TokenDfa::with_token_limits`] takes one).
    NeedsVocabulary {
        /// A limited rule.
        rule: String,
    },
    /// The token-level automaton would take more than `limit` bytes.
    TokenAutomatonTooLarge {
        /// [`crate::Config::token_automaton_bytes`].
        limit: usize,
        /// How many states had been composed with the vocabulary when the bound was hit.
        states_done: usize,
    },
}

impl fmt::Display for TokenDfaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenDfaError::Recursive { cycle } => write!(
                f,
                "the grammar is recursive ({}); the token-DFA backend takes only regular constraints",
                cycle.join(" → ")
            ),
            TokenDfaError::StateLimit { rule, limit } => write!(
                f,
                "the automaton of rule `{rule}` with its references inlined exceeds the state limit of {limit}"
            ),
            TokenDfaError::Unsupported { rule } => write!(
                f,
                "the automaton of rule `{rule}` is of a kind the token-DFA backend does not support"
            ),
            TokenDfaError::TokenLimit(error) => write!(f, "{error}"),
            TokenDfaError::NeedsVocabulary { rule } => write!(
                f,
                "rule `{rule}` has a token limit, which the token-DFA backend counts only when built with the vocabulary"
            ),
            TokenDfaError::TokenAutomatonTooLarge { limit, states_done } => write!(
                f,
                "the token-level automaton exceeds its memory bound of {limit} bytes (after {states_done} states)"
            ),
        }
    }
}

impl std::error::Error for TokenDfaError {}
