//! Token limits: rules whose occurrences may span at most `k` tokens (`Rule::max_tokens`).
//!
//! A normalised grammar's limited rule references no rule, so its occurrence is the run of
//! Earley items of its own automaton that share one origin. The parser counts token ends
//! (`SetInfo::tokens`, advanced by [`Parser::end_token`](crate::Parser::end_token)); an item
//! of a limited rule with origin `o`, at a token end after `n` tokens, has *touched*
//! `n − T(o)` tokens (`T(o)`: the tokens ended at or before set `o`; its first byte is in
//! token `T(o) + 1`), so `a = k − touched` tokens remain for it.
//!
//! What "honoured exactly" means — `rest`, which threads a token end keeps, and which limits
//! are refused — is the rule every backend shares, in [`sieve_backend::token_limits`]; this
//! module applies it to Earley items (an item of a limited rule with allowance `a` is kept iff
//! `keeps(rest[s], a)`) and keeps the per-vocabulary table. Classifications that run through
//! a limited rule from its caller are made without the limit, which is exact because the
//! refused limits are exactly those under which an item entered mid-token could be dropped.
//!
//! # Keys
//!
//! An item with `a ≤ M` is *tight*: its tokens are those of its state minus the ones that end
//! inside the rule at a state with `rest ≥ a` (not accepting), unless the token could leave
//! the rule inside it (an accepting state on the way followed by a byte of the rule's
//! FOLLOW: the occurrence may end there and the caller go on; such tokens become uncertain
//! and are fed). It is reported under its own key, `tight_id(s, a)`, numbered after
//! the grammar's states; a non-tight item keeps its state's key, whose classification needs
//! no change. `M ≤` [`MAX_TIGHT`] keeps the numbering small.

use std::ops::Range;
use std::sync::OnceLock;

use sieve_backend::token_limits::{check_limit, keeps, token_rest, walk_within, RuleBytes};
pub use sieve_backend::token_limits::{TokenLimitError, MAX_TIGHT};
use sieve_backend::{Classification, TokenSet};
use sieve_vocab::TokenTrie;

use crate::grammar::EarleyGrammar;

const NONE: u32 = u32::MAX;

/// The limited rules of one grammar, and their vocabulary-dependent table.
#[derive(Debug, Default)]
pub(crate) struct Limits {
    /// Per rule, its limit, `0` for none.
    per_rule: Vec<u32>,
    /// The global ids of the states of limited rules, ascending.
    states: Vec<u32>,
    /// Per global state, its index in `states`, or [`NONE`].
    index: Vec<u32>,
    /// The states of the grammar (where tight ids start).
    base: u32,
    /// Built by [`EarleyGrammar::prepare_token_limits`].
    table: OnceLock<Table>,
}

impl Clone for Limits {
    fn clone(&self) -> Limits {
        Limits {
            per_rule: self.per_rule.clone(),
            states: self.states.clone(),
            index: self.index.clone(),
            base: self.base,
            table: self.table.clone(),
        }
    }
}

/// `rest` per limited state and `M` per rule, for one vocabulary.
#[derive(Clone, Debug)]
struct Table {
    /// Per entry of `Limits::states`.
    rest: Vec<u32>,
    /// Per rule (limited ones only meaningful).
    max_rest: Vec<u32>,
    /// The trie it was made for (its size, to catch a mismatched trie).
    trie_len: usize,
}

impl Limits {
    /// The limits of `g`'s rules (`per_rule[r]`, 0 for none).
    pub(crate) fn new(g: &EarleyGrammar, per_rule: Vec<u32>) -> Limits {
        let mut states = Vec::new();
        let mut index = vec![NONE; g.states.len()];
        if per_rule.iter().any(|&k| k > 0) {
            for (s, info) in g.states.iter().enumerate() {
                if per_rule[info.rule as usize] > 0 {
                    index[s] = states.len() as u32;
                    states.push(s as u32);
                }
            }
        }
        Limits {
            per_rule,
            states,
            index,
            base: g.states.len() as u32,
            table: OnceLock::new(),
        }
    }

    /// Whether the grammar has a limited rule.
    pub(crate) fn any(&self) -> bool {
        !self.states.is_empty()
    }

    /// The number of tight keys.
    pub(crate) fn tight_count(&self) -> usize {
        self.states.len() * MAX_TIGHT as usize
    }

    /// The limit of `rule`, or `0`.
    pub(crate) fn of_rule(&self, rule: u32) -> u32 {
        self.per_rule[rule as usize]
    }

    /// The state and allowance of tight key `id`, or `None` for a grammar state.
    pub(crate) fn tight(&self, id: u32) -> Option<(u32, u32)> {
        let offset = id.checked_sub(self.base)?;
        let state = self.states[(offset / MAX_TIGHT) as usize];
        Some((state, offset % MAX_TIGHT + 1))
    }

    /// The grammar state of key `id`: the state of a tight key, else `id` itself.
    pub(crate) fn state_of(&self, id: u32) -> u32 {
        self.tight(id).map_or(id, |(state, _)| state)
    }

    fn tight_id(&self, state: u32, allowance: u32) -> u32 {
        self.base + self.index[state as usize] * MAX_TIGHT + (allowance - 1)
    }

    /// `rest` of a limited state, once the table is built; `None` for other states.
    pub(crate) fn rest(&self, state: u32) -> Option<u32> {
        let table = self.table.get()?;
        let index = *self.index.get(state as usize)?;
        (index != NONE).then(|| table.rest[index as usize])
    }

    /// Whether an item of a limited rule in `state`, with `allowance` tokens left after a token
    /// end, is kept (see the module docs). Without a table (no vocabulary) nothing is dropped.
    pub(crate) fn keeps(&self, state: u32, allowance: i64) -> bool {
        self.rest(state).is_none_or(|rest| keeps(rest, allowance))
    }

    /// The key of an item of a limited rule in `state` with `allowance` tokens left: its
    /// tight key when `allowance ≤ M` of its rule, else the state.
    pub(crate) fn key(&self, g: &EarleyGrammar, state: u32, allowance: i64) -> u32 {
        let Some(table) = self.table.get() else {
            return state;
        };
        let m = table.max_rest[g.states[state as usize].rule as usize];
        if allowance >= 1 && allowance <= i64::from(m) {
            self.tight_id(state, allowance as u32)
        } else {
            state
        }
    }
}

impl EarleyGrammar {
    /// Whether some rule has a token limit (`sieve_ir::Rule::max_tokens`).
    pub fn has_token_limits(&self) -> bool {
        self.limits.any()
    }

    /// Computes what token limits read for `trie` (once; later calls check that the trie
    /// matches). Fails, naming the rule, when a limit cannot be honoured with this
    /// vocabulary (see the module docs).
    ///
    /// # Errors
    /// A [`TokenLimitError`]: a state no token sequence finishes, a rule needing more than
    /// [`MAX_TIGHT`] tokens to close, or a limit not above what the rule may need.
    pub fn prepare_token_limits(&self, trie: &TokenTrie) -> Result<(), TokenLimitError> {
        let limits = &self.limits;
        if !limits.any() {
            return Ok(());
        }
        if let Some(table) = limits.table.get() {
            assert_eq!(
                table.trie_len,
                trie.len(),
                "token limits prepared for another trie"
            );
            return Ok(());
        }
        let mut rest = vec![0; limits.states.len()];
        let mut max_rest = vec![0u32; self.start.len()];
        for (rule, &k) in limits.per_rule.iter().enumerate() {
            if k == 0 {
                continue;
            }
            let view = RuleView::new(self, rule);
            let local = token_rest(&view, trie);
            max_rest[rule] =
                check_limit(&self.rule_names[rule], k, &local, |s| view.is_accepting(s))?;
            for (s, r) in local.into_iter().enumerate() {
                rest[limits.index[(view.base + s as u32) as usize] as usize] = r;
            }
        }
        let _ = limits.table.set(Table {
            rest,
            max_rest,
            trie_len: trie.len(),
        });
        Ok(())
    }
}

/// One rule's states as [`RuleBytes`] reads them: local state `s` is global state
/// `base + s` (a rule's states are numbered contiguously, its start first).
struct RuleView<'g> {
    g: &'g EarleyGrammar,
    base: u32,
    len: usize,
}

impl<'g> RuleView<'g> {
    fn new(g: &'g EarleyGrammar, rule: usize) -> RuleView<'g> {
        let base = g.start[rule];
        let end = g
            .start
            .get(rule + 1)
            .map_or(g.states.len(), |&e| e as usize);
        RuleView {
            g,
            base,
            len: end - base as usize,
        }
    }
}

impl RuleBytes for RuleView<'_> {
    fn state_count(&self) -> usize {
        self.len
    }

    fn is_accepting(&self, s: u32) -> bool {
        self.g.states[(self.base + s) as usize].accepting
    }

    fn for_each_edge(&self, s: u32, edge: &mut dyn FnMut(u8, u8, u32)) {
        for e in self.g.byte_edges(&self.g.states[(self.base + s) as usize]) {
            edge(e.lo, e.hi, e.target - self.base);
        }
    }
}

/// The classification of tight key `(state, allowance)` from `plain`, the classification of
/// the state with the same context: the tokens that end inside the rule where it needs at
/// least `allowance` more tokens are rejected (or uncertain, when the occurrence could end
/// inside them).
pub(crate) fn tighten(
    g: &EarleyGrammar,
    trie: &TokenTrie,
    state: u32,
    allowance: u32,
    plain: Classification,
) -> Classification {
    let limits = &g.limits;
    let table = limits
        .table
        .get()
        .expect("tight keys exist only once the limits are prepared");
    let mut bits = vec![0u32; trie.n_vocab().div_ceil(32)];
    plain.accepted.or_into(&mut bits);
    let mut uncertain: Vec<Range<u32>> = plain.uncertain;
    let mut added = false;
    let rule = g.states[state as usize].rule as usize;
    let view = RuleView::new(g, rule);
    let local = state - view.base;
    walk_within(
        &view,
        trie,
        local,
        &g.follow[rule],
        |position, _, end, passed| {
            let finishes = end.iter().any(|&t| {
                let t = (view.base + t) as usize;
                g.states[t].accepting || table.rest[limits.index[t] as usize] < allowance
            });
            if !finishes {
                let id = trie.token(position).index();
                if bits[id / 32] & (1 << (id % 32)) != 0 {
                    bits[id / 32] &= !(1 << (id % 32));
                    if passed {
                        uncertain.push(position as u32..position as u32 + 1);
                        added = true;
                    }
                }
            }
            true
        },
    );
    if added {
        uncertain = sieve_backend::merge_ranges(uncertain);
    }
    Classification {
        accepted: TokenSet::from_bits(bits),
        uncertain,
    }
}
