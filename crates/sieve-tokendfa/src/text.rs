//! Text shapes: DFA states that read well-formed UTF-8 text character by character (a JSON
//! string's contents), so a walk from them takes the trie's [`TextRegion`] at once.
//!
//! A JSON string in the whole-constraint DFA is not one state looping on a byte class: a
//! multi-byte character passes through one state per [`Utf8State`] of the decoder, an escape
//! through others. A [`TextShape`] records, from a start state, the DFA state after `c`
//! characters have started in each decoder state (`rows[c][d]`), for as many counts as the
//! states change (a string with a `maxLength` is a chain of counted states), and how the
//! chain ends: it loops (a count's rows repeat), dies (no character can start), or stays open
//! past [`CHAIN_DEPTH`] characters. Then every token of the region's inside (or of its
//! [`sieve_vocab::TextDepths`] cut, when the chain does not loop) is accepted without a walk,
//! and each exit — the node whose byte leaves the ASCII class or breaks UTF-8 — is walked
//! from the row of the decoder state before that byte.
//!
//! # Invariants
//!
//! - For every count `c` below the last and every well-formed step `d —b→ d'` of the decoder
//!   with ASCII bytes from `class`, the DFA steps `rows[c][d]` on `b` to the row of `d'` (in
//!   count `c + 1` when `b` starts a character, `c` otherwise); so a token whose bytes are
//!   well-formed text of the class, starting at most the chain's characters (any number when
//!   it loops), is accepted, and a prefix of it ends in the row of its decoder state.
//! - When the chain dies, no character (class byte or lead byte) can start after the last
//!   count: tokens starting more characters are rejected.
//! - A shape may list *odd first bytes*: the start leads elsewhere than the rows say on them
//!   (the first byte of a text that must not begin with a given word, free text after a `<`
//!   that may open a tag). Tokens starting with one are not in the bulk: their subtrees are
//!   walked whole from the start. At most [`MAX_ODD_FIRST_BYTES`] of them.

use sieve_vocab::{TextRegion, TokenTrie, Utf8State, CHAIN_DEPTH};

use crate::dfa::{ByteDfa, DEAD};

/// The fewest ASCII bytes a text shape's class needs (fewer: the plain walk is as cheap).
pub(crate) const MIN_TEXT_CLASS: u32 = 32;

/// The most first bytes a shape walks apart from its text region.
const MAX_ODD_FIRST_BYTES: usize = 16;

/// No row (yet) for this decoder state.
const NO_ROW: u32 = u32::MAX - 1;

/// How a [`TextShape`]'s chain goes on after its last count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TextEnd {
    /// The last count's rows repeat for every later count.
    Loops,
    /// No character can start after the last count.
    Dies,
    /// The rows still change after [`CHAIN_DEPTH`] characters: deeper tokens are walked.
    Open,
}

/// The rows of a state that reads UTF-8 text (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TextShape {
    /// The ASCII bytes that are characters of the text.
    pub(crate) class: [u64; 4],
    /// `rows[c][d]`: the DFA state after `c` characters started, in decoder state `d` (its
    /// `repr`); `rows[0]` has only the start, at the boundary.
    pub(crate) rows: Vec<[u32; 8]>,
    pub(crate) end: TextEnd,
    /// First bytes whose subtrees are walked whole from the start, ascending.
    pub(crate) odd_first_bytes: Vec<u8>,
}

impl TextShape {
    /// The text shape from `start`, if it reads text (see the module docs): the chain of
    /// counted states from `start`, or the loop of the state most of its ASCII bytes lead to
    /// with the start's disagreeing first bytes as odd ones, whichever has the larger class.
    pub(crate) fn detect(dfa: &ByteDfa, start: u32) -> Option<TextShape> {
        let chain = TextShape::chain(dfa, start);
        let entered = TextShape::entered_loop(dfa, start);
        match (chain, entered) {
            (Some(chain), Some(entered))
                if class_size(&entered.class) > class_size(&chain.class) =>
            {
                Some(entered)
            }
            (Some(chain), _) => Some(chain),
            (None, entered) => entered,
        }
    }

    /// The plain loop of the state `q` most of `start`'s ASCII bytes lead to, entered from
    /// `start`: the bytes on which `start` does not step to `q`'s row of the decoder state
    /// after them are odd first bytes.
    fn entered_loop(dfa: &ByteDfa, start: u32) -> Option<TextShape> {
        let mut all = [u64::MAX, u64::MAX, 0, 0];
        let q = most_common_target(dfa, start, &mut all)?;
        if q == DEAD || q == start {
            return None;
        }
        let mut shape = TextShape::chain(dfa, q).filter(TextShape::is_plain_loop)?;
        let rows = shape.rows[1];
        let mut odd = Vec::new();
        for b in 0..=0xf4u8 {
            if let Some(after) = Utf8State::Boundary.step(b, &shape.class) {
                if dfa.next(start, b) != rows[after as usize] {
                    odd.push(b);
                }
            }
        }
        if odd.len() > MAX_ODD_FIRST_BYTES {
            return None;
        }
        shape.rows[0][Utf8State::Boundary as usize] = start;
        shape.odd_first_bytes = odd;
        Some(shape)
    }

    /// The chain of counted states from `start` (see the module docs).
    fn chain(dfa: &ByteDfa, start: u32) -> Option<TextShape> {
        let mut class = [0u64; 4];
        for b in 0..128u8 {
            class[b as usize / 64] |= 1 << (b % 64);
        }
        let mut first = [NO_ROW; 8];
        first[Utf8State::Boundary as usize] = start;
        let mut rows = vec![first];
        loop {
            let count = rows.len() - 1;
            if count == CHAIN_DEPTH {
                return Some(TextShape {
                    class,
                    rows,
                    end: TextEnd::Open,
                    odd_first_bytes: Vec::new(),
                });
            }
            let from = rows[count][Utf8State::Boundary as usize];
            let target = most_common_target(dfa, from, &mut class)?;
            let mut next = [NO_ROW; 8];
            if target == DEAD {
                if count == 0 || (0xc2..=0xf4).any(|b| dfa.next(from, b) != DEAD) {
                    return None;
                }
                return Some(TextShape {
                    class,
                    rows,
                    end: TextEnd::Dies,
                    odd_first_bytes: Vec::new(),
                });
            }
            next[Utf8State::Boundary as usize] = target;
            // Lead bytes, then the continuation bytes of the character in progress.
            let mut todo = Vec::new();
            for b in 0xc2..=0xf4u8 {
                let state = Utf8State::Boundary.step(b, &class)?;
                let t = dfa.next(from, b);
                if t == DEAD {
                    return None;
                }
                if set_row(&mut next, state, t)? {
                    todo.push(state);
                }
            }
            while let Some(state) = todo.pop() {
                let row = next[state as usize];
                for b in 0x80..=0xbfu8 {
                    let Some(after) = state.step(b, &class) else {
                        continue;
                    };
                    let t = dfa.next(row, b);
                    if t == DEAD {
                        return None;
                    }
                    if set_row(&mut next, after, t)? && after != Utf8State::Boundary {
                        todo.push(after);
                    }
                }
            }
            if next.contains(&NO_ROW) {
                return None;
            }
            rows.push(next);
            if target == from {
                return Some(TextShape {
                    class,
                    rows,
                    end: TextEnd::Loops,
                    odd_first_bytes: Vec::new(),
                });
            }
        }
    }

    /// Whether the shape is one state looping on every character (no count matters, no odd
    /// first byte).
    pub(crate) fn is_plain_loop(&self) -> bool {
        self.end == TextEnd::Loops
            && self.rows.len() == 2
            && self.rows[1][Utf8State::Boundary as usize]
                == self.rows[0][Utf8State::Boundary as usize]
    }

    /// Sets in `bits` the tokens accepted without a walk: `region`'s inside, cut by
    /// character count unless the chain loops, less the subtrees of the odd first bytes
    /// (`odd`, from [`TextShape::odd_subtrees`]). `region` is `trie`'s text region of
    /// [`TextShape::class`].
    pub(crate) fn add_bulk(
        &self,
        trie: &TokenTrie,
        region: &TextRegion,
        odd: &[(usize, usize)],
        bits: &mut [u32],
    ) {
        let bulk: &[u32] = match self.end {
            TextEnd::Loops => &region.inside,
            TextEnd::Dies | TextEnd::Open => trie.text_upto(region, self.rows.len() - 1),
        };
        if odd.is_empty() {
            for (b, r) in bits.iter_mut().zip(bulk) {
                *b |= r;
            }
            return;
        }
        let mut taken = bulk.to_vec();
        for &(from, _) in odd {
            for pos in trie.nodes()[from].pos as usize..trie.node_pos_end(from) {
                let id = trie.token(pos).index();
                taken[id / 32] &= !(1 << (id % 32));
            }
        }
        for (b, r) in bits.iter_mut().zip(&taken) {
            *b |= r;
        }
    }

    /// The depth-1 subtrees of the odd first bytes, as node ranges in pre-order.
    pub(crate) fn odd_subtrees(&self, trie: &TokenTrie) -> Vec<(usize, usize)> {
        let mut odd = Vec::new();
        if self.odd_first_bytes.is_empty() {
            return odd;
        }
        let nodes = trie.nodes();
        let mut n = 0;
        while n < nodes.len() {
            let node = nodes[n];
            if self.odd_first_bytes.binary_search(&node.byte).is_ok() {
                odd.push((n, node.end as usize));
            }
            n = node.end as usize;
        }
        odd
    }

    /// The state a walk resumes from at an exit after `chars` started characters in decoder
    /// state `state`, or `None` when the prefix was already rejected (the chain died) or lies
    /// in a deep subtree (walked whole).
    pub(crate) fn resume(&self, chars: u8, state: Utf8State) -> Option<u32> {
        let last = self.rows.len() - 1;
        let chars = chars as usize;
        if chars > last && self.end != TextEnd::Loops {
            return None;
        }
        Some(self.rows[chars.min(last)][state as usize])
    }
}

/// The DFA target most of `class`'s bytes have from `from` (`DEAD` included); `class` shrinks
/// to the bytes that have it. `None` when fewer than [`MIN_TEXT_CLASS`] bytes agree.
fn most_common_target(dfa: &ByteDfa, from: u32, class: &mut [u64; 4]) -> Option<u32> {
    let before = *class;
    let in_class = |b: u8| before[b as usize / 64] & (1 << (b % 64)) != 0;
    let mut targets: Vec<u32> = (0..128u8)
        .filter(|&b| in_class(b))
        .map(|b| dfa.next(from, b))
        .collect();
    targets.sort_unstable();
    let target = *targets
        .chunk_by(|a, b| a == b)
        .max_by_key(|run| run.len())?
        .first()?;
    let mut size = 0;
    for b in 0..128u8 {
        if in_class(b) && dfa.next(from, b) != target {
            class[b as usize / 64] &= !(1 << (b % 64));
        } else if in_class(b) {
            size += 1;
        }
    }
    (size >= MIN_TEXT_CLASS).then_some(target)
}

/// The number of bytes in `class`.
fn class_size(class: &[u64; 4]) -> u32 {
    class.iter().map(|w| w.count_ones()).sum()
}

/// Records `t` as the row of `state`: `Some(true)` when new, `Some(false)` when it was
/// already `t`, `None` when it already has another one.
fn set_row(rows: &mut [u32; 8], state: Utf8State, t: u32) -> Option<bool> {
    let slot = &mut rows[state as usize];
    if *slot == NO_ROW {
        *slot = t;
        return Some(true);
    }
    (*slot == t).then_some(false)
}
