//! Which backend recognises a grammar: the names the library, the CLI (`--backend`) and the
//! benchmark protocol share, and the `auto` policy.
//!
//! # Invariant
//!
//! [`BackendKind::name`] and [`BackendKind::from_str`] round-trip, and so do
//! [`BackendChoice`]'s (`auto` added).

use std::fmt;
use std::str::FromStr;

/// One backend behind the seam.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BackendKind {
    /// The byte-level Earley recogniser over the rule automata (`sieve-earley`): every
    /// context-free grammar.
    Earley,
    /// The LR(1) parser run as a deterministic pushdown automaton (`sieve-lr`): grammars
    /// that are LR(1) over bytes.
    Lr,
    /// One DFA for the whole constraint with its token-level transitions (`sieve-tokendfa`):
    /// regular constraints (no recursion) within its state limit.
    TokenDfa,
}

impl BackendKind {
    /// Every backend, the default first.
    pub const ALL: [BackendKind; 3] = [BackendKind::Earley, BackendKind::Lr, BackendKind::TokenDfa];

    /// The backend's name (`earley`, `lr`, `token-dfa`).
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Earley => "earley",
            BackendKind::Lr => "lr",
            BackendKind::TokenDfa => "token-dfa",
        }
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A backend name that is not one of [`BackendChoice`]'s.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown backend {given:?}: expected one of earley, lr, token-dfa, auto")]
pub struct UnknownBackend {
    /// The name given.
    pub given: String,
}

impl FromStr for BackendKind {
    type Err = UnknownBackend;

    fn from_str(s: &str) -> Result<BackendKind, UnknownBackend> {
        BackendKind::ALL
            .into_iter()
            .find(|kind| kind.name() == s)
            .ok_or_else(|| UnknownBackend {
                given: s.to_owned(),
            })
    }
}

/// Which backend a compile uses ([`crate::Options::backend`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BackendChoice {
    /// The Earley backend (the default: it accepts every grammar).
    #[default]
    Earley,
    /// The LR(1) backend; a grammar that is not LR(1) is refused with the conflict.
    Lr,
    /// The token-DFA backend; a recursive grammar, or one past its state limit, is refused.
    TokenDfa,
    /// The fastest backend for the caller's mode that accepts the grammar (see
    /// [`BackendChoice::candidates`]).
    Auto,
}

/// What `auto` tries for a grammar classified just in time (the default): the Earley
/// backend. Measured on the peer harness's workloads (o200k_base, `cargo xtask compare`,
/// `docs/backends.md`), its cold cost per request — compile plus the first walk's masks — is
/// the lowest of the three on 13 of 16 (the token DFA's is lower on two free-text-heavy ones,
/// higher on every schema): the other tables cost more to build than their steps win back
/// over one request.
pub const AUTO_JUST_IN_TIME: [BackendKind; 1] = [BackendKind::Earley];

/// What `auto` tries, in order, when the caller classifies ahead of time
/// ([`crate::AheadOfTime`] other than `Off`: compile is hidden behind prefill or reused):
/// the token DFA, whose masks are then table look-ups with no step over 2 ms on any harness
/// workload it takes, if the constraint is regular and its DFA stays within
/// [`AUTO_TOKEN_DFA_STATES`]; else Earley.
pub const AUTO_AHEAD_OF_TIME: [BackendKind; 2] = [BackendKind::TokenDfa, BackendKind::Earley];

/// The DFA state limit `auto` gives the token DFA: past it (a large schema's DFA, hundreds
/// of milliseconds to build) Earley is cheaper even ahead of time.
pub const AUTO_TOKEN_DFA_STATES: usize = 4096;

impl BackendChoice {
    /// The choice's name (`auto` or a backend's).
    pub fn name(self) -> &'static str {
        match self {
            BackendChoice::Earley => BackendKind::Earley.name(),
            BackendChoice::Lr => BackendKind::Lr.name(),
            BackendChoice::TokenDfa => BackendKind::TokenDfa.name(),
            BackendChoice::Auto => "auto",
        }
    }

    /// The backends to try, in order: the chosen one, or for `auto`
    /// [`AUTO_AHEAD_OF_TIME`] when `ahead_of_time` and [`AUTO_JUST_IN_TIME`] otherwise.
    pub fn candidates(self, ahead_of_time: bool) -> &'static [BackendKind] {
        match self {
            BackendChoice::Earley => &[BackendKind::Earley],
            BackendChoice::Lr => &[BackendKind::Lr],
            BackendChoice::TokenDfa => &[BackendKind::TokenDfa],
            BackendChoice::Auto if ahead_of_time => &AUTO_AHEAD_OF_TIME,
            BackendChoice::Auto => &AUTO_JUST_IN_TIME,
        }
    }
}

impl From<BackendKind> for BackendChoice {
    fn from(kind: BackendKind) -> BackendChoice {
        match kind {
            BackendKind::Earley => BackendChoice::Earley,
            BackendKind::Lr => BackendChoice::Lr,
            BackendKind::TokenDfa => BackendChoice::TokenDfa,
        }
    }
}

impl fmt::Display for BackendChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BackendChoice {
    type Err = UnknownBackend;

    fn from_str(s: &str) -> Result<BackendChoice, UnknownBackend> {
        if s == "auto" {
            return Ok(BackendChoice::Auto);
        }
        BackendKind::from_str(s).map(BackendChoice::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for kind in BackendKind::ALL {
            assert_eq!(kind.name().parse::<BackendKind>(), Ok(kind));
            let choice = BackendChoice::from(kind);
            assert_eq!(choice.name().parse::<BackendChoice>(), Ok(choice));
            assert_eq!(choice.candidates(false), &[kind]);
            assert_eq!(choice.candidates(true), &[kind]);
        }
        assert_eq!("auto".parse::<BackendChoice>(), Ok(BackendChoice::Auto));
        assert!("auto".parse::<BackendKind>().is_err());
        assert_eq!(
            "lalr".parse::<BackendChoice>().unwrap_err().to_string(),
            "unknown backend \"lalr\": expected one of earley, lr, token-dfa, auto"
        );
    }

    #[test]
    fn auto_ends_with_the_backend_that_accepts_everything() {
        for ahead_of_time in [false, true] {
            let order = BackendChoice::Auto.candidates(ahead_of_time);
            assert_eq!(order.last(), Some(&BackendKind::Earley));
        }
    }
}
