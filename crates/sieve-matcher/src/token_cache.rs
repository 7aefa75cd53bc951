//! The token-mask cache: for each automaton state, which tokens an item in that state accepts
//! on its own, which it cannot accept, and which depend on the rest of the Earley set
//! (XGrammar's adaptive token-mask cache, seed xgrammar2 §3.2–3.4, computed lazily per state).
//!
//! # Invariants
//!
//! For a scan item in state `s` (see `sieve_earley::StaticWalk` for the argument):
//!
//! - every token in `accepted` is accepted whenever an item in `s` is in the top set;
//! - every text token in neither `accepted` nor `uncertain` gets nothing from items in `s`;
//! - `uncertain` is a sorted list of disjoint ranges of trie positions.
//!
//! So the mask of a set is the union of its scan states' `accepted` sets, plus the tokens of
//! their `uncertain` ranges that the recogniser accepts when fed in full — exactly the
//! brute-force mask. Entries are computed on first use and never change; a
//! [`TokenCache`] belongs to one compiled grammar and one trie. The bytes it keeps are
//! bounded: once the budget is spent, further states are classified afresh at each use.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use sieve_earley::{EarleyGrammar, Frontier, StaticWalk};
use sieve_vocab::TokenTrie;

/// Tokens, as a bitmask over ids when many, else as a sorted id list.
#[derive(Clone, Debug)]
enum TokenSet {
    Bits(Vec<u32>),
    Ids(Vec<u32>),
}

impl TokenSet {
    fn from_ids(ids: Vec<u32>, words: usize) -> TokenSet {
        // A list costs a word per token; a bitmask a word per 32 ids.
        if ids.len() < words {
            return TokenSet::Ids(ids);
        }
        let mut bits = vec![0u32; words];
        for id in ids {
            bits[id as usize / 32] |= 1 << (id % 32);
        }
        TokenSet::Bits(bits)
    }

    fn heap_bytes(&self) -> usize {
        match self {
            TokenSet::Bits(words) | TokenSet::Ids(words) => words.len() * 4,
        }
    }

    fn or_into(&self, mask: &mut [u32]) {
        match self {
            TokenSet::Bits(bits) => {
                for (m, b) in mask.iter_mut().zip(bits) {
                    *m |= b;
                }
            }
            TokenSet::Ids(ids) => {
                for &id in ids {
                    mask[id as usize / 32] |= 1 << (id % 32);
                }
            }
        }
    }
}

/// What one state decides about the text tokens.
#[derive(Clone, Debug)]
pub(crate) struct StateTokens {
    accepted: TokenSet,
    uncertain: Vec<Range<u32>>,
}

impl StateTokens {
    /// Sets the bits of the tokens accepted from this state.
    pub(crate) fn or_accepted_into(&self, mask: &mut [u32]) {
        self.accepted.or_into(mask);
    }

    /// The trie ranges whose tokens depend on the rest of the set.
    pub(crate) fn uncertain(&self) -> &[Range<u32>] {
        &self.uncertain
    }

    fn heap_bytes(&self) -> usize {
        self.accepted.heap_bytes() + self.uncertain.len() * std::mem::size_of::<Range<u32>>()
    }
}

/// One lazily computed [`StateTokens`] per global state of a compiled grammar.
#[derive(Debug)]
pub(crate) struct TokenCache {
    states: Vec<OnceLock<StateTokens>>,
    words: usize,
    /// Bytes of the entries stored so far, and the most that may be stored.
    used: AtomicUsize,
    budget: usize,
}

impl TokenCache {
    /// An empty cache for `grammar`, with masks of `words` words, keeping at most `budget`
    /// bytes of entries.
    pub(crate) fn new(grammar: &EarleyGrammar, words: usize, budget: usize) -> TokenCache {
        TokenCache {
            states: (0..grammar.state_count())
                .map(|_| OnceLock::new())
                .collect(),
            words,
            used: AtomicUsize::new(0),
            budget,
        }
    }

    /// The entry of `state`: stored on first use while the budget lasts, computed afresh
    /// (and not kept) after that.
    pub(crate) fn get(
        &self,
        grammar: &EarleyGrammar,
        trie: &TokenTrie,
        state: u32,
    ) -> Cow<'_, StateTokens> {
        let slot = &self.states[state as usize];
        if let Some(entry) = slot.get() {
            return Cow::Borrowed(entry);
        }
        let entry = classify(grammar, trie, state, self.words);
        let size = entry.heap_bytes();
        let reserved = self
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                (used + size <= self.budget).then_some(used + size)
            })
            .is_ok();
        if !reserved {
            return Cow::Owned(entry);
        }
        if slot.set(entry).is_err() {
            // Another thread stored this state first; give the reservation back.
            self.used.fetch_sub(size, Ordering::Relaxed);
        }
        Cow::Borrowed(slot.get().expect("set above or by another thread"))
    }
}

/// Classifies every text token of `trie` from `state` by walking the trie with a
/// [`StaticWalk`], one frontier per byte depth, sharing prefixes and skipping subtrees that
/// die.
fn classify(grammar: &EarleyGrammar, trie: &TokenTrie, state: u32, words: usize) -> StateTokens {
    let mut walk = StaticWalk::new(grammar);
    // levels[..live] are the frontiers of the current token's prefix; the rest are spare
    // allocations.
    let mut levels: Vec<Frontier> = vec![walk.start(state)];
    let mut live = 1;
    let mut accepted = Vec::new();
    let mut uncertain: Vec<Range<u32>> = Vec::new();
    let mut i = 0;
    'tokens: while i < trie.len() {
        let bytes = trie.bytes_at(i);
        live = 1 + (live - 1).min(trie.lcp(i));
        while live <= bytes.len() {
            let depth = live - 1;
            if levels.len() == live {
                levels.push(Frontier::default());
            }
            let (done, spare) = levels.split_at_mut(live);
            let next = &mut spare[0];
            walk.step_into(&done[depth], bytes[depth], depth == 0, next);
            if next.is_dead() {
                // Every token starting with bytes[..=depth] ends the same way.
                let end = trie.skip_to(i + 1, depth + 1);
                if next.left() {
                    push_range(&mut uncertain, i as u32..end as u32);
                }
                i = end;
                continue 'tokens;
            }
            live += 1;
        }
        accepted.push(trie.token(i).as_u32());
        i += 1;
    }
    accepted.sort_unstable();
    StateTokens {
        accepted: TokenSet::from_ids(accepted, words),
        uncertain,
    }
}

/// Appends `range`, merging it with the last range when they touch.
fn push_range(ranges: &mut Vec<Range<u32>>, range: Range<u32>) {
    match ranges.last_mut() {
        Some(last) if last.end == range.start => last.end = range.end,
        _ => ranges.push(range),
    }
}
