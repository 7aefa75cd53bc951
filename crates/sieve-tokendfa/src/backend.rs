//! [`TokenDfa`] behind the backend seam: keys are DFA states (bare, no contexts), and
//! [`TokenDfaRecognizer`] is a stack of DFA states.
//!
//! # Invariants
//!
//! - A recogniser's stack holds the start state and then the state after each consumed
//!   byte (after its token end, when a token ended there); a push adds one state or changes
//!   nothing, a pop truncates. `ended` says per entry whether that token end was applied
//!   (the start counts as one: no token is open there).
//! - [`Backend::classify`] leaves nothing uncertain, so the token cache never walks the trie
//!   with the recogniser: a mask is the union of one stored classification.

use std::sync::{Arc, OnceLock};

use sieve_backend::token_limits::RuleLimit;
use sieve_backend::{Backend, Classification, Fingerprint, Key, LimitError, Recognizer, TokenSet};
use sieve_fsm::GrammarFsms;
use sieve_ir::ByteClass;
use sieve_vocab::TokenTrie;

use crate::automaton::TokenAutomaton;
use crate::chain::ClassChain;
use crate::completion::{CompletionTable, UNREACHABLE};
use crate::dfa::{ByteDfa, DEAD};
use crate::text::TextShape;
use crate::walk::{chain_bulk, loop_class, walk, walk_chain, walk_text, Bulk, Visit, WILDCARD_MIN};
use crate::{Config, TokenDfaError};

/// The compiled whole-constraint DFA (see the crate docs): the tables shared by every
/// [`TokenDfaRecognizer`] made from it.
#[derive(Debug)]
pub struct TokenDfa {
    dfa: ByteDfa,
    /// Per state: the bytes with a transition.
    allowed: Vec<ByteClass>,
    /// Per state, detected on first use: the text shape a classification takes.
    text: Vec<OnceLock<Option<Box<TextShape>>>>,
    /// Per state, detected on first use when it has no text shape: its class chain.
    chains: Vec<OnceLock<Option<Box<ClassChain>>>>,
    config: Config,
    /// The number of trie positions of the vocabulary token limits were counted in, when the
    /// grammar has any.
    limits_trie_len: Option<usize>,
}

impl TokenDfa {
    /// The minimal DFA of `fsms`'s root rule, every reference inlined.
    ///
    /// # Errors
    /// [`TokenDfaError::Recursive`] when a rule the root reaches references itself, directly
    /// or not, other than in tail position; [`TokenDfaError::StateLimit`] when an automaton
    /// would exceed [`Config::state_limit`]; [`TokenDfaError::Unsupported`] for a kind of
    /// rule automaton this backend does not know; [`TokenDfaError::NeedsVocabulary`] when a
    /// rule has a token limit (build with [`TokenDfa::with_token_limits`]).
    pub fn new(fsms: &GrammarFsms, config: Config) -> Result<TokenDfa, TokenDfaError> {
        if let Some(rule) = sieve_backend::token_limits::first_limited(fsms) {
            return Err(TokenDfaError::NeedsVocabulary {
                rule: fsms.name(rule).to_owned(),
            });
        }
        let limits = vec![None; fsms.rule_count()];
        TokenDfa::build(fsms, config, &limits, None)
    }

    /// As [`TokenDfa::new`], counting the tokens of `trie` for the rules with a token limit
    /// (`max_tokens`): every token end is a step of the DFA too, so masks and transitions
    /// honour the limits exactly as the other backends do ([`sieve_backend::token_limits`]).
    /// Masks must then come from `trie`'s vocabulary.
    ///
    /// # Errors
    /// As [`TokenDfa::new`] (but for [`TokenDfaError::NeedsVocabulary`]), and
    /// [`TokenDfaError::TokenLimit`] when a limit cannot be honoured with this vocabulary.
    pub fn with_token_limits(
        fsms: &GrammarFsms,
        config: Config,
        trie: &TokenTrie,
    ) -> Result<TokenDfa, TokenDfaError> {
        let limits = sieve_backend::token_limits::rule_limits(fsms, trie)
            .map_err(TokenDfaError::TokenLimit)?;
        let trie_len = limits.iter().any(Option::is_some).then_some(trie.len());
        TokenDfa::build(fsms, config, &limits, trie_len)
    }

    fn build(
        fsms: &GrammarFsms,
        config: Config,
        limits: &[Option<RuleLimit>],
        limits_trie_len: Option<usize>,
    ) -> Result<TokenDfa, TokenDfaError> {
        let dfa = crate::compose::whole_dfa(fsms, &config, limits)?;
        let allowed = (0..dfa.state_count() as u32)
            .map(|s| {
                let mut class = ByteClass::default();
                for b in 0..=255u8 {
                    if dfa.next(s, b) != DEAD {
                        class.insert(b);
                    }
                }
                class
            })
            .collect();
        let text = (0..dfa.state_count()).map(|_| OnceLock::new()).collect();
        let chains = (0..dfa.state_count()).map(|_| OnceLock::new()).collect();
        Ok(TokenDfa {
            dfa,
            allowed,
            text,
            chains,
            config,
            limits_trie_len,
        })
    }

    /// The text shape classifications from `state` take (detected on first request): none
    /// when the state loops on a large class with non-ASCII bytes, whose class region holds
    /// the multi-byte tokens already.
    pub(crate) fn text_shape(&self, state: u32) -> Option<&TextShape> {
        self.text[state as usize]
            .get_or_init(|| {
                let (class, count) = loop_class(&self.dfa, state);
                let bytes_loop = count >= WILDCARD_MIN && class[2] | class[3] != 0;
                (!bytes_loop)
                    .then(|| TextShape::detect(&self.dfa, state))
                    .flatten()
                    .filter(|shape| shape.rows.iter().flatten().all(|&r| self.ends_alive(r)))
                    .map(Box::new)
            })
            .as_deref()
    }

    /// Whether a token end keeps `state` (a DFA state, or a shape's marker for no state)
    /// alive: a classification takes a shape's tokens in bulk only if so for all its rows.
    fn ends_alive(&self, state: u32) -> bool {
        state as usize >= self.dfa.state_count() || self.dfa.token_end(state) != DEAD
    }

    /// Whether a token end leaves `state` (as above) where it is: the token automaton takes
    /// a shape's tokens as a loop only if so for all its rows.
    fn ends_in_place(&self, state: u32) -> bool {
        state as usize >= self.dfa.state_count() || self.dfa.token_end(state) == state
    }

    /// The class chain classifications from `state` take when it has no text shape.
    fn class_chain(&self, state: u32) -> Option<&ClassChain> {
        self.chains[state as usize]
            .get_or_init(|| {
                ClassChain::detect(&self.dfa, state)
                    .filter(|chain| chain.rows.iter().all(|&r| self.ends_alive(r)))
                    .map(Box::new)
            })
            .as_deref()
    }

    /// When a classification from `state` takes the trie's class region along a class chain
    /// (most bytes step through states that depend only on how many came: a bounded run of
    /// a byte class, or a loop entered by its first byte) and `state` has no text shape, the
    /// number of states along it after the start (0 when the state loops on the class
    /// itself, at most [`sieve_vocab::CHAIN_DEPTH`]).
    ///
    /// # Panics
    /// When `state` is not below [`TokenDfa::dfa_state_count`].
    pub fn reads_class_chain(&self, state: u32) -> Option<usize> {
        if self.text_shape(state).is_some() {
            return None;
        }
        self.class_chain(state).map(|chain| chain.rows.len() - 1)
    }

    /// When a classification from `state` takes the trie's text region (the state reads
    /// UTF-8 text, as in a JSON string), the number of character counts its chain of states
    /// tells apart: 1 when one state loops on every character, more for a string with a
    /// bounded length (at most [`sieve_vocab::CHAIN_DEPTH`]).
    ///
    /// # Panics
    /// When `state` is not below [`TokenDfa::dfa_state_count`].
    pub fn reads_text(&self, state: u32) -> Option<usize> {
        self.text_shape(state).map(|shape| shape.rows.len() - 1)
    }

    /// The start state (always `0`).
    pub fn start(&self) -> u32 {
        0
    }

    /// The number of DFA states.
    pub fn dfa_state_count(&self) -> usize {
        self.dfa.state_count()
    }

    /// The number of byte classes the DFA's table is laid out over.
    pub fn class_count(&self) -> usize {
        self.dfa.class_count()
    }

    /// Whether `state` accepts.
    ///
    /// # Panics
    /// When `state` is not below [`TokenDfa::dfa_state_count`].
    pub fn is_accepting(&self, state: u32) -> bool {
        self.dfa.is_accepting(state)
    }

    /// The state after `byte` from `state`, or `None` when no sentence continues that way.
    ///
    /// # Panics
    /// When `state` is not below [`TokenDfa::dfa_state_count`].
    pub fn next_state(&self, state: u32, byte: u8) -> Option<u32> {
        let t = self.dfa.next(state, byte);
        (t != DEAD).then_some(t)
    }

    /// Heap bytes of the DFA's tables and of its per-state shape slots (the shapes detected
    /// so far, boxed, a few words each, are not counted).
    pub fn heap_bytes(&self) -> usize {
        let shapes = self.text.len() * std::mem::size_of::<OnceLock<Option<Box<TextShape>>>>()
            + self.chains.len() * std::mem::size_of::<OnceLock<Option<Box<ClassChain>>>>();
        self.dfa.heap_bytes() + self.allowed.len() * std::mem::size_of::<ByteClass>() + shapes
    }

    /// The token-level automaton of this DFA and `trie`'s text tokens, built ahead of time.
    ///
    /// # Errors
    /// [`TokenDfaError::TokenAutomatonTooLarge`] past [`Config::token_automaton_bytes`];
    /// masks then come state by state from [`Backend::classify`] through the token cache.
    pub fn token_automaton(&self, trie: &TokenTrie) -> Result<TokenAutomaton, TokenDfaError> {
        TokenAutomaton::build(
            &self.dfa,
            |state| {
                self.text_shape(state)
                    .filter(|shape| shape.rows.iter().flatten().all(|&r| self.ends_in_place(r)))
            },
            trie,
            self.config.get_token_automaton_bytes(),
        )
    }

    /// Whether the DFA counts token limits (some rule has `max_tokens`).
    pub fn has_token_limits(&self) -> bool {
        self.limits_trie_len.is_some()
    }

    /// The completion table read off a token automaton of this DFA (equal to
    /// [`Backend::completion_table`] for the same trie, without walking it again).
    ///
    /// # Panics
    /// When `automaton` was built from another DFA (its state count differs).
    pub fn completion_table_from(&self, automaton: &TokenAutomaton) -> CompletionTable {
        assert_eq!(automaton.state_count(), self.dfa.state_count());
        CompletionTable::from_automaton(&self.dfa, automaton)
    }
}

/// The per-request state of a [`TokenDfa`]: the DFA state after each consumed byte.
#[derive(Clone, Debug)]
pub struct TokenDfaRecognizer {
    dfa: Arc<TokenDfa>,
    /// The start state, then one state per consumed byte.
    stack: Vec<u32>,
    /// Per entry of `stack`: whether a token ended there (the start: yes).
    ended: Vec<bool>,
}

impl TokenDfaRecognizer {
    /// The current DFA state.
    pub fn state(&self) -> u32 {
        *self.stack.last().expect("the start state is never popped")
    }

    /// The state once the token that ends here has ended (the current one if it already
    /// has), `None` when its end kills the input.
    fn after_token_end(&self) -> Option<u32> {
        let state = self.state();
        if *self.ended.last().expect("one flag per state") {
            return Some(state);
        }
        let next = self.dfa.dfa.token_end(state);
        (next != DEAD).then_some(next)
    }
}

impl Recognizer for TokenDfaRecognizer {
    type Completion = CompletionTable;
    /// The bound reads only the current state: nothing to keep.
    type CompletionMemo = ();

    fn push_byte(&mut self, byte: u8) -> Result<bool, LimitError> {
        let next = self.dfa.dfa.next(self.state(), byte);
        if next == DEAD {
            return Ok(false);
        }
        self.stack.push(next);
        self.ended.push(false);
        Ok(true)
    }

    fn pop_bytes(&mut self, n: usize) {
        assert!(n <= self.len(), "popping {n} of {} bytes", self.len());
        self.stack.truncate(self.stack.len() - n);
        self.ended.truncate(self.stack.len());
    }

    /// One step of the DFA on `⊥`: threads of limited rules move up a level or die.
    fn end_token(&mut self) -> bool {
        let Some(next) = self.after_token_end() else {
            return false;
        };
        *self
            .stack
            .last_mut()
            .expect("the start state is never popped") = next;
        *self.ended.last_mut().expect("one flag per state") = true;
        true
    }

    fn can_end_token(&self) -> bool {
        self.after_token_end().is_some()
    }

    fn len(&self) -> usize {
        self.stack.len() - 1
    }

    fn can_finish(&self) -> bool {
        self.dfa.dfa.is_accepting(self.state())
    }

    fn allowed_bytes(&self) -> ByteClass {
        self.dfa.allowed[self.state() as usize]
    }

    fn states(&self, out: &mut Vec<u32>) {
        out.push(self.state());
    }

    /// A DFA state decides every token by itself: the bare key.
    fn contexts(&self, state: u32, out: &mut Vec<Key>) {
        out.push(Key::bare(state));
    }

    /// The distance of the state after the current token's end (the bound reads the
    /// recogniser as if its last token ended here).
    fn completion_bound(&self, table: &CompletionTable) -> Option<u32> {
        let d = table.distance(self.after_token_end()?);
        (d != UNREACHABLE).then_some(d)
    }

    fn completion_memo(&self, _: &CompletionTable) {}

    fn completion_bound_from(&self, table: &CompletionTable, _: &()) -> Option<u32> {
        self.completion_bound(table)
    }

    /// Decides every token: one walk of the trie from the current state gives each accepted
    /// token's next state, whose distance is read off the table.
    fn completion_decide(
        &self,
        table: &CompletionTable,
        _: &(),
        trie: &TokenTrie,
        limit: u32,
        fits: &mut [u32],
        exceeds: &mut [u32],
    ) {
        let mut decide = Decide {
            table,
            limit,
            fits: &mut *fits,
            exceeds: &mut *exceeds,
        };
        let state = self.state();
        let mut stack = Vec::new();
        let dfa = &self.dfa.dfa;
        if let Some(region) = walk(dfa, trie, state, Bulk::Alive, &mut stack, &mut decide) {
            let into = if table.distance(dfa.token_end(state)) <= limit {
                fits
            } else {
                exceeds
            };
            for (word, bits) in into.iter_mut().zip(&region.inside) {
                *word |= bits;
            }
        }
    }

    fn completion_caps(&self, table: &CompletionTable, caps: &mut [u32]) {
        table.caps(&self.dfa.dfa, self.state(), caps);
    }
}

/// Sorts a walk's tokens by the distance of the state they lead to.
struct Decide<'a> {
    table: &'a CompletionTable,
    limit: u32,
    fits: &'a mut [u32],
    exceeds: &'a mut [u32],
}

impl Visit for Decide<'_> {
    fn node(&mut self, trie: &TokenTrie, node: usize, state: u32) {
        let into = if self.table.distance(state) <= self.limit {
            &mut *self.fits
        } else {
            &mut *self.exceeds
        };
        for pos in trie.tokens_at_node(node) {
            let id = trie.token(pos).index();
            into[id / 32] |= 1 << (id % 32);
        }
    }
}

/// Collects a walk's tokens into a bitmask.
struct Bits<'a>(&'a mut [u32]);

impl Visit for Bits<'_> {
    fn node(&mut self, trie: &TokenTrie, node: usize, _: u32) {
        for pos in trie.tokens_at_node(node) {
            let id = trie.token(pos).index();
            self.0[id / 32] |= 1 << (id % 32);
        }
    }
}

impl Backend for TokenDfa {
    type Recognizer = TokenDfaRecognizer;

    fn recognizer(self: &Arc<Self>) -> TokenDfaRecognizer {
        TokenDfaRecognizer {
            dfa: self.clone(),
            stack: vec![0],
            ended: vec![true],
        }
    }

    fn state_count(&self) -> usize {
        self.dfa.state_count()
    }

    /// States with a transition (every state but a final one with no way on).
    fn is_scannable(&self, state: u32) -> bool {
        !self.allowed[state as usize].is_empty()
    }

    /// Exact: the tokens the DFA accepts from the state, nothing uncertain.
    fn classify(&self, key: Key, trie: &TokenTrie) -> Classification {
        let mut bits = vec![0u32; trie.n_vocab().div_ceil(32)];
        let mut stack = Vec::new();
        let taken = if let Some(shape) = self.text_shape(key.state) {
            let (region, odd) = walk_text(&self.dfa, trie, shape, &mut stack, &mut Bits(&mut bits));
            shape.add_bulk(trie, &region, &odd, &mut bits);
            true
        } else if let Some(chain) = self.class_chain(key.state) {
            let region = walk_chain(&self.dfa, trie, chain, &mut stack, &mut Bits(&mut bits));
            for (b, r) in bits.iter_mut().zip(chain_bulk(trie, chain, &region)) {
                *b |= r;
            }
            true
        } else {
            false
        };
        if taken {
            return Classification {
                accepted: TokenSet::from_bits(bits),
                uncertain: Vec::new(),
            };
        }
        let bits_of = &mut Bits(&mut bits);
        if let Some(region) = walk(&self.dfa, trie, key.state, Bulk::Alive, &mut stack, bits_of) {
            for (b, r) in bits.iter_mut().zip(&region.inside) {
                *b |= r;
            }
        }
        Classification {
            accepted: TokenSet::from_bits(bits),
            uncertain: Vec::new(),
        }
    }

    /// The number of bytes the state has transitions for.
    fn cost_hint(&self, state: u32) -> u32 {
        self.allowed[state as usize].len() as u32
    }

    fn fingerprint(&self, state: u32) -> Option<Fingerprint> {
        crate::fingerprint::fingerprint(&self.dfa, state)
    }

    /// Token limits were counted when the DFA was built; this checks the vocabulary is the
    /// one they were counted in.
    fn prepare_token_limits(&self, trie: &TokenTrie) -> Result<(), String> {
        match self.limits_trie_len {
            Some(len) if len != trie.len() => Err(format!(
                "the token-DFA's token limits were counted in a vocabulary of {len} trie \
                 positions, not this one of {}",
                trie.len()
            )),
            _ => Ok(()),
        }
    }

    /// Walks the trie from every state (the token automaton without its token lists).
    fn completion_table(&self, trie: &TokenTrie) -> CompletionTable {
        CompletionTable::new(&self.dfa, trie)
    }
}
