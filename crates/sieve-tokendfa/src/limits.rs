//! The token limits of a grammar's rules (`max_tokens`) with a vocabulary: per limited rule,
//! `rest` of each state of its automaton, checked by the rule every backend shares
//! ([`sieve_backend::token_limits`]); [`crate::compose`] builds the limited rules from them.

use sieve_backend::token_limits::{check_limit, token_rest, RuleBytes};
use sieve_fsm::{Fsm, GrammarFsms, Label, StateId};
use sieve_ir::RuleId;
use sieve_vocab::TokenTrie;

use crate::TokenDfaError;

/// A rule's token limit with the vocabulary's `rest` of each of its automaton's states.
#[derive(Clone, Debug)]
pub(crate) struct RuleLimit {
    pub(crate) k: u32,
    pub(crate) rest: Vec<u32>,
}

/// Per rule of `fsms`, its limit and `rest` for `trie`, `None` for an unlimited rule.
///
/// # Errors
/// [`TokenDfaError::TokenLimit`] when a limit cannot be honoured with this vocabulary;
/// [`TokenDfaError::Unsupported`] for a limited rule that is not a plain byte automaton.
pub(crate) fn rule_limits(
    fsms: &GrammarFsms,
    trie: &TokenTrie,
) -> Result<Vec<Option<RuleLimit>>, TokenDfaError> {
    (0..fsms.rule_count())
        .map(|r| {
            let rule = RuleId::new(r).expect("rule ids fit");
            let Some(k) = fsms.token_limit(rule) else {
                return Ok(None);
            };
            let fsm = fsms
                .automaton(rule)
                .fsm()
                .ok_or_else(|| TokenDfaError::Unsupported {
                    rule: fsms.name(rule).to_owned(),
                })?;
            let bytes = FsmBytes(fsm);
            let rest = token_rest(&bytes, trie);
            check_limit(fsms.name(rule), k, &rest, |s| bytes.is_accepting(s))
                .map_err(TokenDfaError::TokenLimit)?;
            Ok(Some(RuleLimit { k, rest }))
        })
        .collect()
}

/// The first rule of `fsms` with a token limit.
pub(crate) fn first_limited(fsms: &GrammarFsms) -> Option<RuleId> {
    (0..fsms.rule_count())
        .filter_map(RuleId::new)
        .find(|&rule| fsms.token_limit(rule).is_some())
}

/// A rule automaton as [`RuleBytes`] reads it (its byte edges; a limited rule has no others).
struct FsmBytes<'a>(&'a Fsm);

impl FsmBytes<'_> {
    fn id(s: u32) -> StateId {
        StateId::new(s as usize).expect("a state of the automaton")
    }
}

impl RuleBytes for FsmBytes<'_> {
    fn state_count(&self) -> usize {
        self.0.state_count()
    }

    fn is_accepting(&self, s: u32) -> bool {
        self.0.is_accepting(FsmBytes::id(s))
    }

    fn for_each_edge(&self, s: u32, edge: &mut dyn FnMut(u8, u8, u32)) {
        for e in self.0.edges(FsmBytes::id(s)) {
            if let Label::Bytes { lo, hi } = e.label {
                edge(lo, hi, e.target.index() as u32);
            }
        }
    }
}
