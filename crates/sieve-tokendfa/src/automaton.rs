//! [`TokenAutomaton`]: the token-level automaton (Koo et al.'s detokenising transducer
//! composed with the DFA), built ahead of time: for every DFA state, the text tokens it
//! accepts and the state each leads to, so a mask or a transition is a table look-up.
//!
//! # Invariants
//!
//! - `next(s, t)` is `Some(q)` iff feeding token `t`'s bytes to the DFA from `s` succeeds and
//!   ends in `q`; [`TokenAutomaton::fill_mask`] sets exactly those tokens.
//! - A state that loops on a large byte class keeps the class's region (shared with the trie,
//!   Koo et al.'s terminal-label mask): its tokens lead back to the state and are not listed
//!   as edges; every other accepted token is one explicit edge. A state that loops on UTF-8
//!   text (a JSON string's characters, [`crate::text::TextShape::is_plain_loop`]) keeps the
//!   tokens of its text region that end on a character boundary (they lead back to it); the
//!   region's tokens that end inside a character are explicit edges to the state of their
//!   decoder state, as are the tokens found below the region's exits. Edges are kept by trie
//!   position, in the order the walk finds them (ascending), so building needs no sort; a
//!   token id is mapped to its position by one look-up.
//! - Each state also keeps its explicit edges' tokens as a [`TokenSet`] (a bitmask or an id
//!   list, whichever is smaller), so [`TokenAutomaton::fill_mask`] is one look-up and a copy.
//! - The explicit edges, the offsets, the token sets and the distinct regions' bitmasks take
//!   at most [`crate::Config::get_token_automaton_bytes`] heap bytes.

use std::sync::Arc;

use sieve_backend::TokenSet;
use sieve_vocab::{ClassRegion, TextRegion, TokenTrie, Utf8State};

use crate::dfa::ByteDfa;
use crate::text::TextShape;
use crate::walk::{walk, walk_text, Bulk, Visit};
use crate::TokenDfaError;

/// The tokens that lead from a state back to itself without being listed as edges.
#[derive(Clone, Debug)]
enum Loop {
    /// A class region's inside (shared with the trie).
    Class(Arc<ClassRegion>),
    /// A text region's inside less its tokens that end inside a character.
    Text(Arc<Vec<u32>>),
}

impl Loop {
    fn bits(&self) -> &[u32] {
        match self {
            Loop::Class(region) => &region.inside,
            Loop::Text(bits) => bits,
        }
    }
}

/// The text tokens that end inside a character, whatever the ASCII bytes: by trie position
/// (ascending) with the decoder state they end in, and as a bitmask by id (see
/// [`MidCharacter::new`]).
struct MidCharacter {
    tokens: Vec<(u32, Utf8State)>,
    bits: Vec<u32>,
}

impl MidCharacter {
    /// Reads each token's last bytes only: a token whose bytes are a well-formed prefix ends
    /// inside a character iff its last lead byte is followed by fewer continuation bytes
    /// than it needs. Tokens that are not well-formed are listed too (with a state computed
    /// the same way); no text region holds them, so they are never looked up.
    fn new(trie: &TokenTrie) -> MidCharacter {
        let mut tokens = Vec::new();
        let mut bits = vec![0u32; trie.n_vocab().div_ceil(32)];
        for pos in 0..trie.len() {
            let bytes = trie.bytes_at(pos);
            // A token's encoding (a token-terminal reading) is not text.
            if trie.is_encoding(pos) || bytes.last().is_none_or(|&b| b < 0x80) {
                continue;
            }
            let Some(state) = partial_character(bytes) else {
                continue;
            };
            tokens.push((pos as u32, state));
            let id = trie.token(pos).index();
            bits[id / 32] |= 1 << (id % 32);
        }
        MidCharacter { tokens, bits }
    }
}

/// The decoder state after `bytes` when they end inside a character whose lead byte is
/// among their last four bytes and whose bytes so far are well-formed; `None` otherwise.
fn partial_character(bytes: &[u8]) -> Option<Utf8State> {
    let lead = bytes
        .iter()
        .rev()
        .take(4)
        .position(|&b| !(0x80..=0xbf).contains(&b))?;
    let start = bytes.len() - 1 - lead;
    let all_ascii = [u64::MAX, u64::MAX, 0, 0];
    let mut state = Utf8State::Boundary;
    for &b in &bytes[start..] {
        state = state.step(b, &all_ascii)?;
    }
    (state != Utf8State::Boundary).then_some(state)
}

/// The token-level automaton of a [`crate::TokenDfa`] and a vocabulary (see the module docs).
#[derive(Clone, Debug)]
pub struct TokenAutomaton {
    n_vocab: usize,
    /// `ids[p]`: the token id at trie position `p`.
    ids: Vec<u32>,
    /// `position[id]`: the trie positions of token `id`'s readings, `[text, encoding]`,
    /// [`NOT_TEXT`] where it has none.
    position: Vec<[u32; 2]>,
    /// `edges[offsets[s]..offsets[s + 1]]`: state `s`'s explicit `(trie position, target)`
    /// edges, ascending.
    offsets: Vec<usize>,
    edges: Vec<(u32, u32)>,
    /// Per state: the tokens that loop on it unlisted, if a region was taken.
    loops: Vec<Option<Loop>>,
    /// Per state: the tokens of its explicit edges, as a bitmask or an id list (whichever is
    /// smaller), so a mask is one look-up and a copy.
    masks: Vec<TokenSet>,
    heap_bytes: usize,
}

/// The position of a reading a token does not have (no text for a special token, no
/// encoding for an unused id).
const NOT_TEXT: u32 = u32::MAX;

/// Collects a walk's tokens as edges by trie position.
struct Edges<'a>(&'a mut Vec<(u32, u32)>);

impl Visit for Edges<'_> {
    #[inline]
    fn node(&mut self, trie: &TokenTrie, node: usize, state: u32) {
        let n = trie.nodes()[node];
        if n.shared {
            for pos in trie.tokens_at_node(node) {
                self.0.push((pos as u32, state));
            }
        } else {
            self.0.push((n.pos, state));
        }
    }
}

/// The tokens of `edges` (one state's, distinct tokens) in the cheaper form of
/// [`TokenSet::from_bits`], built without a bitmask when the list is the smaller.
fn token_set(trie: &TokenTrie, edges: &[(u32, u32)], words: usize) -> TokenSet {
    if edges.len() < words {
        let mut ids: Vec<u32> = edges
            .iter()
            .map(|&(pos, _)| trie.token(pos as usize).index() as u32)
            .collect();
        ids.sort_unstable();
        return TokenSet::Ids(ids);
    }
    let mut bits = vec![0u32; words];
    for &(pos, _) in edges {
        let id = trie.token(pos as usize).index();
        bits[id / 32] |= 1 << (id % 32);
    }
    TokenSet::Bits(bits)
}

impl TokenAutomaton {
    /// Composes `trie` with every state of `dfa`, within `limit` heap bytes; `shape` gives
    /// each state's text shape.
    pub(crate) fn build<'a>(
        dfa: &ByteDfa,
        shape: impl Fn(u32) -> Option<&'a TextShape>,
        trie: &TokenTrie,
        limit: usize,
    ) -> Result<TokenAutomaton, TokenDfaError> {
        let n = dfa.state_count();
        let mut offsets = Vec::with_capacity(n + 1);
        let mut edges: Vec<(u32, u32)> = Vec::new();
        let mut loops: Vec<Option<Loop>> = Vec::with_capacity(n);
        let mut mid_character: Option<MidCharacter> = None;
        // The text loops made so far, by region (a trie keeps at most 64 regions).
        let mut text_loops: Vec<(Arc<TextRegion>, Arc<Vec<u32>>)> = Vec::new();
        let mut masks: Vec<TokenSet> = Vec::with_capacity(n);
        let mut mask_bytes = 0;
        let words = trie.n_vocab().div_ceil(32);
        let mut stack = Vec::new();
        let mut region_bytes = 0;
        // The distinct class regions met so far (a trie keeps at most 64).
        let mut distinct: Vec<Arc<ClassRegion>> = Vec::new();
        let ids: Vec<u32> = trie.tokens().iter().map(|t| t.index() as u32).collect();
        let mut position = vec![[NOT_TEXT; 2]; trie.n_vocab()];
        for (p, &id) in ids.iter().enumerate() {
            position[id as usize][usize::from(trie.is_encoding(p))] = p as u32;
        }
        let fixed = (ids.len() + 2 * position.len()) * 4
            + (n + 1) * std::mem::size_of::<usize>()
            + n * (std::mem::size_of::<Option<Loop>>() + std::mem::size_of::<TokenSet>());
        for s in 0..n {
            offsets.push(edges.len());
            let start = edges.len();
            let text = shape(s as u32).filter(|shape| shape.is_plain_loop());
            let text = text.map(|shape| {
                let (region, _) = walk_text(dfa, trie, shape, &mut stack, &mut Edges(&mut edges));
                let mid = mid_character.get_or_insert_with(|| MidCharacter::new(trie));
                let inside = &region.inside;
                for &(pos, state) in &mid.tokens {
                    let id = trie.token(pos as usize).index();
                    if inside[id / 32] & (1 << (id % 32)) != 0 {
                        edges.push((pos, shape.rows[1][state as usize]));
                    }
                }
                edges[start..].sort_unstable_by_key(|&(pos, _)| pos);
                if let Some((_, bits)) = text_loops.iter().find(|(r, _)| Arc::ptr_eq(r, &region)) {
                    return Loop::Text(bits.clone());
                }
                let bits: Vec<u32> = inside.iter().zip(&mid.bits).map(|(i, m)| i & !m).collect();
                region_bytes += bits.len() * 4;
                let bits = Arc::new(bits);
                text_loops.push((region, bits.clone()));
                Loop::Text(bits)
            });
            let found = match text {
                Some(found) => Some(found),
                None => {
                    let region = walk(
                        dfa,
                        trie,
                        s as u32,
                        Bulk::InPlace,
                        &mut stack,
                        &mut Edges(&mut edges),
                    );
                    region.map(|region| {
                        if !distinct.iter().any(|r| Arc::ptr_eq(r, &region)) {
                            region_bytes += region.inside.len() * 4;
                            distinct.push(region.clone());
                        }
                        Loop::Class(region)
                    })
                }
            };
            let mask = token_set(trie, &edges[start..], words);
            mask_bytes += mask.heap_bytes();
            masks.push(mask);
            loops.push(found);
            let bytes =
                fixed + region_bytes + mask_bytes + edges.len() * std::mem::size_of::<(u32, u32)>();
            if bytes > limit {
                return Err(TokenDfaError::TokenAutomatonTooLarge {
                    limit,
                    states_done: s + 1,
                });
            }
        }
        offsets.push(edges.len());
        edges.shrink_to_fit();
        let heap_bytes =
            fixed + region_bytes + mask_bytes + edges.len() * std::mem::size_of::<(u32, u32)>();
        Ok(TokenAutomaton {
            n_vocab: trie.n_vocab(),
            ids,
            position,
            offsets,
            edges,
            loops,
            masks,
            heap_bytes,
        })
    }

    /// The number of states (those of the DFA).
    pub fn state_count(&self) -> usize {
        self.loops.len()
    }

    /// The size of the vocabulary (a mask has `n_vocab().div_ceil(32)` words).
    pub fn n_vocab(&self) -> usize {
        self.n_vocab
    }

    /// The explicit edges of `state`: `(token id, target state)`, in the trie's byte order
    /// of the tokens.
    pub fn edges(&self, state: u32) -> impl ExactSizeIterator<Item = (u32, u32)> + '_ {
        self.positioned(state)
            .iter()
            .map(|&(p, t)| (self.ids[p as usize], t))
    }

    fn positioned(&self, state: u32) -> &[(u32, u32)] {
        let s = state as usize;
        &self.edges[self.offsets[s]..self.offsets[s + 1]]
    }

    /// The tokens that lead from `state` back to itself without being listed as edges (a
    /// bitmask by token id, `n_vocab().div_ceil(32)` words), when the state loops on a large
    /// byte class or on UTF-8 text.
    pub fn loop_tokens(&self, state: u32) -> Option<&[u32]> {
        self.loops[state as usize].as_ref().map(Loop::bits)
    }

    /// The state token `token` leads to from `state`, or `None` when `state` rejects it. A
    /// token the state takes as a token terminal is read so (`sieve_ir::token`), else as
    /// text.
    pub fn next(&self, state: u32, token: u32) -> Option<u32> {
        let [text, encoding] = *self.position.get(token as usize)?;
        let edges = self.positioned(state);
        for pos in [encoding, text] {
            if pos == NOT_TEXT {
                continue;
            }
            if let Ok(i) = edges.binary_search_by_key(&pos, |&(p, _)| p) {
                return Some(edges[i].1);
            }
        }
        if text == NOT_TEXT {
            return None;
        }
        let bits = self.loop_tokens(state)?;
        let word = bits.get(token as usize / 32)?;
        (word & (1 << (token % 32)) != 0).then_some(state)
    }

    /// Sets in `mask` (bit `t % 32` of word `t / 32`) every token `state` accepts.
    pub fn fill_mask(&self, state: u32, mask: &mut [u32]) {
        if let Some(bits) = self.loop_tokens(state) {
            for (m, b) in mask.iter_mut().zip(bits) {
                *m |= b;
            }
        }
        self.masks[state as usize].or_into(mask);
    }

    /// The number of explicit edges over all states.
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    /// Heap bytes used (the distinct loop regions' bitmasks counted once, though the trie
    /// shares them).
    pub fn heap_bytes(&self) -> usize {
        self.heap_bytes
    }
}
