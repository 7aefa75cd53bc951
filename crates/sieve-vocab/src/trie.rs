//! [`TokenTrie`]: the text tokens of a vocabulary sorted by bytes, with the arrays a mask
//! walker needs to share work across common prefixes and to skip a rejected prefix at once.
//!
//! It is a trie flattened into sorted order: position `i` (0-based, `0..len()`) holds
//!
//! - `token(i)`: the id; positions are sorted by `(bytes, id)`, so tokens with equal bytes
//!   (e.g. SentencePiece's `<0x41>` and `A`) are adjacent, lower id first;
//! - `bytes_at(i)`: its bytes (a copy laid out in sorted order, for locality);
//! - `lcp(i)`: the length of the longest common prefix of `bytes_at(i)` and
//!   `bytes_at(i - 1)`; `lcp(0) == 0`;
//! - `subtree_end(i)`: the first position `j > i` whose bytes do not start with `bytes_at(i)`
//!   (or `len()`), so `i..subtree_end(i)` are exactly the tokens extending token `i` (itself
//!   and its duplicates included).
//!
//! Invariants, checked by the property tests on random vocabularies:
//! - the tokens starting with any byte string form one contiguous run of positions;
//! - `subtree_end(i) == min { j > i : lcp(j) < len(bytes_at(i)) }` (or `len()`);
//! - the common prefix of `bytes_at(i)` and `bytes_at(j)`, `i < j`, is
//!   `min(lcp(i + 1..=j))` long;
//! - every *defined* token (text, named special, EOS; not an unused id) is listed once under
//!   its token-terminal encoding (`sieve_ir::token::encode`: the marker byte `0xFF` and the
//!   id), after all text; a text token is listed a second time under its bytes, unless they
//!   hold `0xFF` (no grammar's text matches that byte, so such a token is never text-readable).
//!   So position `i` is a token *reading*: [`TokenTrie::is_encoding`] tells which kind.
//!
//! [`TokenTrie::walk`] visits the positions in order and lets the visitor skip every token that
//! shares a rejected prefix; [`TokenTrie::skip_to`] is the same skip as a function.
//!
//! The same trie is also laid out as *nodes* ([`TokenTrie::nodes`]), one per distinct non-empty
//! prefix of a text token, in depth-first pre-order (children by byte): a walker keeps one
//! state per depth and spends one step per node, and skips a node's subtree by jumping to
//! [`TrieNode::end`]. Invariants (property-tested):
//! - node `n`'s prefix is its parent's prefix plus [`TrieNode::byte`]; its parent is the
//!   nearest node before it of depth `depth - 1`;
//! - the nodes of `n`'s subtree are exactly `n + 1 .. end`;
//! - the trie positions whose bytes start with `n`'s prefix are exactly
//!   `pos .. node_pos_end(n)`; those equal to the prefix come first
//!   ([`TrieNode::token`] is the lowest id among them; [`TokenTrie::tokens_at_node`] lists
//!   them all).

mod kept;
mod loops;
mod text;

pub use text::{TextDepths, TextExit, TextRegion, Utf8State};

use crate::{TokenId, Vocabulary};

/// What a [`TokenTrie::walk`] visitor wants next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Visit the next position.
    Next,
    /// Skip every following token whose first `k` bytes equal this token's first `k` bytes
    /// (`k` is at most this token's length; `k = 0` ends the walk). Used when the prefix of
    /// length `k` is rejected, or when `k` is the whole length and the subtree is decided.
    SkipPrefix(usize),
    /// End the walk.
    Stop,
}

/// One distinct token prefix (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrieNode {
    /// The first trie position whose bytes start with this prefix.
    pub pos: u32,
    /// The node after this node's subtree.
    pub end: u32,
    /// The lowest id of a text token whose bytes are exactly this prefix, or
    /// [`TrieNode::NO_TOKEN`]. Its position is `pos`.
    pub token: u32,
    /// The prefix's length.
    pub depth: u32,
    /// The last byte of the prefix.
    pub byte: u8,
    /// Whether more than one text token has exactly this prefix as its bytes (positions
    /// `pos..`, see [`TokenTrie::tokens_at_node`]).
    pub shared: bool,
    /// Whether the subtree below this node has at least [`WIDE_SUBTREE`] nodes: a walker
    /// may treat it apart ([`TokenTrie::loop_exits`]) where a node-by-node step would cost
    /// more.
    pub wide: bool,
}

/// How many nodes a subtree has at least for its node to be [`TrieNode::wide`].
pub const WIDE_SUBTREE: usize = 64;

/// A node of depth 1 ([`TokenTrie::first_bytes`]): a first byte and its subtree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirstByte {
    /// The byte.
    pub byte: u8,
    /// The node.
    pub node: u32,
    /// The node after its subtree ([`TrieNode::end`]).
    pub end: u32,
}

impl TrieNode {
    /// The [`TrieNode::token`] of a node that is only a prefix.
    pub const NO_TOKEN: u32 = u32::MAX;

    /// Whether some text token's bytes are exactly this prefix.
    #[inline]
    pub fn has_token(&self) -> bool {
        self.token != TrieNode::NO_TOKEN
    }
}

/// The tokens made only of bytes of one byte class, and where the others first leave it: what
/// a walk from an automaton state that loops on the class needs (see
/// [`TokenTrie::class_region`]).
#[derive(Debug)]
pub struct ClassRegion {
    /// Bit `t % 32` of word `t / 32` is set iff every byte of text token `t` is in the class
    /// (`ceil(n_vocab / 32)` words).
    pub inside: Vec<u32>,
    /// In pre-order, the nodes whose byte is not in the class while every byte of their
    /// parent's prefix is: the subtrees a walk must still visit.
    pub exits: Vec<u32>,
    class: [u64; 4],
    depths: std::sync::OnceLock<RegionDepths>,
    /// `shallow[d]`: the inside tokens of at most `d` bytes, for `d` up to [`CHAIN_DEPTH`],
    /// each computed on its own when the whole [`RegionDepths`] has not been.
    shallow: [std::sync::OnceLock<Vec<u32>>; CHAIN_DEPTH + 1],
    /// [`RegionDepths::deep`], when the whole [`RegionDepths`] has not been computed.
    deep: std::sync::OnceLock<Vec<u32>>,
}

/// How many leading bytes of the class [`RegionDepths`] tells apart.
pub const CHAIN_DEPTH: usize = 16;

/// A [`ClassRegion`]'s inside cut by length, for walks whose state changes with each of the
/// first bytes of the class but not with which byte it is (a bounded string's characters):
/// see [`TokenTrie::region_depths`].
#[derive(Debug)]
pub struct RegionDepths {
    /// `upto[d]` for `d` in `0..=CHAIN_DEPTH`: the inside tokens of at most `d` bytes, laid out
    /// as [`ClassRegion::inside`].
    pub upto: Vec<Vec<u32>>,
    /// In pre-order, the inside nodes of depth `CHAIN_DEPTH + 1`: their subtrees hold every
    /// inside token longer than [`CHAIN_DEPTH`] and every exit deeper than `CHAIN_DEPTH + 1`.
    pub deep: Vec<u32>,
}

/// `upto[d]`, the union of `exact[0..=d]`, each cut to `words` words (the spare word dropped).
/// Each depth's set becomes its union in place, from the one below it: no copies.
fn cumulative(mut exact: Vec<Vec<u32>>, words: usize) -> Vec<Vec<u32>> {
    for d in 1..exact.len() {
        let (below, rest) = exact.split_at_mut(d);
        for (word, &under) in rest[0].iter_mut().zip(&below[d - 1]) {
            *word |= under;
        }
    }
    for bits in &mut exact {
        bits.truncate(words);
    }
    exact
}

/// At most this many class regions, and as many text regions, are kept per trie (each about
/// `n_vocab / 8` bytes plus its exits and length cuts); past it the least recently used one
/// is dropped to make room.
pub const MAX_CLASS_REGIONS: usize = 64;

/// The text tokens of a [`Vocabulary`] sorted by bytes, with common-prefix lengths and subtree
/// ends (see the module docs for the invariants).
#[derive(Clone, Debug)]
pub struct TokenTrie {
    /// The class regions computed so far; a clone of the trie starts without them.
    regions: kept::KeptRegions<ClassRegion>,
    text_regions: text::TextRegionCache,
    /// [`TokenTrie::ascii_first`].
    ascii_first: Vec<u32>,
    nodes: Vec<TrieNode>,
    /// The byte of every node, apart ([`TokenTrie::node_bytes`]).
    node_bytes: Vec<u8>,
    /// The nodes of depth 1 ([`TokenTrie::first_bytes`]).
    first_bytes: Vec<FirstByte>,
    max_len: usize,
    n_vocab: usize,
    ids: Vec<TokenId>,
    lcp: Vec<u32>,
    subtree_end: Vec<u32>,
    bytes: Vec<u8>,
    offsets: Vec<u32>,
}

impl TokenTrie {
    /// Builds the trie of `vocab`'s token readings: the text-readable tokens by bytes, then
    /// every defined token by its encoding. `O(n log n)` comparisons.
    pub fn new(vocab: &Vocabulary) -> TokenTrie {
        let encodings: Vec<[u8; 4]> = (0..vocab.n_vocab())
            .map(TokenId::from_index)
            .filter(|&t| vocab.is_defined(t))
            .map(|t| sieve_ir::token::encode(t.index() as u32))
            .collect();
        let mut sorted: Vec<(&[u8], TokenId)> = (0..vocab.n_vocab())
            .map(TokenId::from_index)
            .filter(|&t| vocab.is_text_readable(t))
            .map(|t| (vocab.bytes(t), t))
            .collect();
        sorted.sort_unstable();
        // Encodings start with the marker, which no listed text holds: they sort last, in id
        // order.
        sorted.extend(encodings.iter().map(|e| {
            (
                &e[..],
                TokenId::from_index(sieve_ir::token::decode(e).unwrap_or(0) as usize),
            )
        }));
        let n = sorted.len();
        let ids: Vec<TokenId> = sorted.iter().map(|&(_, t)| t).collect();
        let mut bytes = Vec::with_capacity(sorted.iter().map(|(b, _)| b.len()).sum());
        let mut offsets = Vec::with_capacity(n + 1);
        let mut lcp = Vec::with_capacity(n);
        offsets.push(0u32);
        let mut prev: &[u8] = &[];
        for &(b, _) in &sorted {
            lcp.push(common_prefix(prev, b) as u32);
            bytes.extend_from_slice(b);
            offsets.push(bytes.len() as u32);
            prev = b;
        }
        // Open positions on the stack have non-decreasing lengths; position j closes every
        // open subtree whose token is longer than what j shares with its predecessor.
        let mut subtree_end = vec![n as u32; n];
        let mut open: Vec<u32> = Vec::new();
        for (j, &shared) in lcp.iter().enumerate() {
            while let Some(&top) = open.last() {
                let len = offsets[top as usize + 1] - offsets[top as usize];
                if len > shared {
                    subtree_end[top as usize] = j as u32;
                    open.pop();
                } else {
                    break;
                }
            }
            open.push(j as u32);
        }
        let nodes = build_nodes(&ids, &offsets, &bytes, &lcp);
        let node_bytes = nodes.iter().map(|node| node.byte).collect();
        let first_bytes = first_bytes(&nodes);
        let max_len = offsets
            .windows(2)
            .map(|w| (w[1] - w[0]) as usize)
            .max()
            .unwrap_or(0);
        TokenTrie {
            regions: kept::KeptRegions::default(),
            text_regions: text::TextRegionCache::default(),
            ascii_first: ascii_first(&ids, &offsets, &bytes, vocab.n_vocab()),
            nodes,
            node_bytes,
            first_bytes,
            max_len,
            n_vocab: vocab.n_vocab(),
            ids,
            lcp,
            subtree_end,
            bytes,
            offsets,
        }
    }

    /// The size of the vocabulary the trie was built from (ids are below it); a bitmask
    /// over its ids has `n_vocab().div_ceil(32)` words.
    #[inline]
    pub fn n_vocab(&self) -> usize {
        self.n_vocab
    }

    /// The [`ClassRegion`] of the byte class `class` (bit `b % 64` of word `b / 64` is set
    /// iff byte `b` is in it), computed on first request (one walk over the nodes inside the
    /// class) and kept with the trie, shared by every grammar and thread, among the
    /// [`MAX_CLASS_REGIONS`] most recently requested.
    pub fn class_region(&self, class: &[u64; 4]) -> std::sync::Arc<ClassRegion> {
        self.regions
            .get_or_build(*class, || self.compute_region(class))
    }

    fn compute_region(&self, class: &[u64; 4]) -> ClassRegion {
        // One spare word: nodes without a token set a bit there, so the loop has no branch
        // on whether a node spells a token.
        let mut inside = vec![0u32; self.n_vocab.div_ceil(32) + 1];
        let spare = inside.len() * 32 - 1;
        let mut exits = Vec::new();
        let mut n = 0;
        while n < self.nodes.len() {
            let node = self.nodes[n];
            if class[node.byte as usize / 64] & (1 << (node.byte % 64)) == 0 {
                exits.push(n as u32);
                n = node.end as usize;
                continue;
            }
            self.set_node_tokens(n, &mut inside, spare);
            n += 1;
        }
        inside.pop();
        ClassRegion {
            inside,
            exits,
            class: *class,
            depths: std::sync::OnceLock::new(),
            shallow: std::array::from_fn(|_| std::sync::OnceLock::new()),
            deep: std::sync::OnceLock::new(),
        }
    }

    /// `region`'s inside cut by length ([`RegionDepths`]), computed on first request (one
    /// walk over the inside nodes up to depth `CHAIN_DEPTH + 1`) and kept with the region.
    /// `region` must come from this trie's [`TokenTrie::class_region`].
    pub fn region_depths<'r>(&self, region: &'r ClassRegion) -> &'r RegionDepths {
        region.depths.get_or_init(|| {
            let words = self.n_vocab.div_ceil(32);
            // exact[d]: the inside tokens of exactly d bytes; one spare word as in
            // set_node_tokens.
            let mut exact = vec![vec![0u32; words + 1]; CHAIN_DEPTH + 1];
            let spare = words * 32 + 31;
            let mut deep = Vec::new();
            self.walk_class_prefixes(
                &region.class,
                CHAIN_DEPTH,
                |n, depth| self.set_node_tokens(n, &mut exact[depth], spare),
                |n| deep.push(n as u32),
            );
            RegionDepths {
                upto: cumulative(exact, words),
                deep,
            }
        })
    }

    /// The inside tokens of `region` of at most `depth` bytes ([`RegionDepths::upto`]
    /// `[depth]`, `depth` ≤ [`CHAIN_DEPTH`]). Unless the whole [`RegionDepths`] is already
    /// there, only the nodes up to that depth are walked, and only that depth's set is made
    /// (at [`CHAIN_DEPTH`], with [`TokenTrie::region_deep`] in the same walk): a walk that
    /// needs one cut does not pay for seventeen.
    pub fn region_upto<'r>(&self, region: &'r ClassRegion, depth: usize) -> &'r [u32] {
        let depth = depth.min(CHAIN_DEPTH);
        if let Some(depths) = region.depths.get() {
            return &depths.upto[depth];
        }
        if depth == CHAIN_DEPTH {
            self.region_open_cut(region);
        }
        region.shallow[depth].get_or_init(|| {
            self.node_tokens(|visit| {
                self.walk_class_prefixes(&region.class, depth, |n, _| visit(n), |_| {});
            })
        })
    }

    /// [`RegionDepths::deep`] of `region`: the inside nodes of depth `CHAIN_DEPTH + 1`, found
    /// (with the cut at [`CHAIN_DEPTH`]) by one walk, unless the whole [`RegionDepths`] is
    /// already there.
    pub fn region_deep<'r>(&self, region: &'r ClassRegion) -> &'r [u32] {
        if let Some(depths) = region.depths.get() {
            return &depths.deep;
        }
        self.region_open_cut(region);
        region.deep.get().expect("set by the open cut")
    }

    /// Sets `region`'s cut at [`CHAIN_DEPTH`] and its deep nodes, by one walk, if not set.
    fn region_open_cut(&self, region: &ClassRegion) {
        self.open_cut(
            &region.shallow[CHAIN_DEPTH],
            &region.deep,
            |inside, deep| {
                self.walk_class_prefixes(&region.class, CHAIN_DEPTH, |n, _| inside(n), deep);
            },
        );
    }

    /// Sets a region's cut at [`CHAIN_DEPTH`] (`upto`) and its deep nodes (`deep`) from one
    /// `walk`, which reports the inside nodes up to the cut to its first visitor and the deep
    /// nodes to its second; nothing is done when `deep` is set. Another thread may set either
    /// first: both compute the same sets, and the first kept wins.
    fn open_cut(
        &self,
        upto: &std::sync::OnceLock<Vec<u32>>,
        deep: &std::sync::OnceLock<Vec<u32>>,
        walk: impl FnOnce(&mut dyn FnMut(usize), &mut dyn FnMut(usize)),
    ) {
        if deep.get().is_some() {
            return;
        }
        let mut found = Vec::new();
        let bits = self.node_tokens(|visit| walk(visit, &mut |n| found.push(n as u32)));
        let _ = upto.set(bits);
        let _ = deep.set(found);
    }

    /// The tokens (`ceil(n_vocab / 32)` words, as [`ClassRegion::inside`]) spelled by the
    /// nodes `walk` reports to the visitor it is given.
    fn node_tokens(&self, walk: impl FnOnce(&mut dyn FnMut(usize))) -> Vec<u32> {
        let words = self.n_vocab.div_ceil(32);
        let mut bits = vec![0u32; words + 1];
        let spare = words * 32 + 31;
        walk(&mut |n| self.set_node_tokens(n, &mut bits, spare));
        bits.truncate(words);
        bits
    }

    /// Visits in pre-order the nodes of depth at most `max_depth` whose prefix is made of
    /// `class` bytes (`inside`, with the depth), and the nodes of depth `max_depth + 1` below
    /// such a prefix whose byte is in the class (`deep`), whose subtrees it skips.
    fn walk_class_prefixes(
        &self,
        class: &[u64; 4],
        max_depth: usize,
        mut inside: impl FnMut(usize, usize),
        mut deep: impl FnMut(usize),
    ) {
        let mut n = 0;
        while n < self.nodes.len() {
            let node = self.nodes[n];
            let depth = node.depth as usize;
            if class[node.byte as usize / 64] & (1 << (node.byte % 64)) == 0 {
                n = node.end as usize;
                continue;
            }
            if depth > max_depth {
                deep(n);
                n = node.end as usize;
                continue;
            }
            inside(n, depth);
            n += 1;
        }
    }

    /// Sets the bits of the tokens whose bytes are node `n`'s prefix in `bits`, which has one
    /// spare word past the vocabulary: a node that is only a prefix sets bit `spare` there,
    /// so callers set a bit at every node without a branch on whether it spells a token.
    #[inline(always)]
    fn set_node_tokens(&self, n: usize, bits: &mut [u32], spare: usize) {
        let node = self.nodes[n];
        if node.shared {
            for pos in self.tokens_at_node(n) {
                let id = self.ids[pos].index();
                bits[id / 32] |= 1 << (id % 32);
            }
        } else {
            let id = (node.token as usize).min(spare);
            bits[id / 32] |= 1 << (id % 32);
        }
    }

    /// The text tokens whose first byte is ASCII (`ceil(n_vocab / 32)` words, as
    /// [`ClassRegion::inside`]), computed with the trie from the positions, which sort them
    /// first (computed on first request instead, it cost a cold step 0.45 ms on o200k_base):
    /// a classification whose start rejects every first byte of a multi-byte character takes
    /// the others out of a text region with one pass over the words, not a bit per token (a
    /// sixth of o200k's text tokens start with one).
    pub fn ascii_first(&self) -> &[u32] {
        &self.ascii_first
    }

    /// The length of the longest text token (the deepest node).
    #[inline]
    pub fn max_token_len(&self) -> usize {
        self.max_len
    }

    /// The nodes of depth 1, in order (at most 256, in a few kilobytes): a walk that rejects
    /// most first bytes reads them here rather than jumping across the whole node array,
    /// a page apart, to each.
    #[inline]
    pub fn first_bytes(&self) -> &[FirstByte] {
        &self.first_bytes
    }

    /// The distinct token prefixes in depth-first pre-order (see the module docs).
    #[inline]
    pub fn nodes(&self) -> &[TrieNode] {
        &self.nodes
    }

    /// The end of the trie positions under node `n`: `nodes[n].pos .. node_pos_end(n)` are
    /// the positions whose bytes start with `n`'s prefix.
    #[inline]
    pub fn node_pos_end(&self, n: usize) -> usize {
        match self.nodes.get(self.nodes[n].end as usize) {
            Some(after) => after.pos as usize,
            None => self.len(),
        }
    }

    /// The positions of the tokens whose bytes are exactly node `n`'s prefix (empty unless
    /// [`TrieNode::has_token`]).
    #[inline]
    pub fn tokens_at_node(&self, n: usize) -> std::ops::Range<usize> {
        let node = self.nodes[n];
        let start = node.pos as usize;
        if !node.has_token() {
            return start..start;
        }
        // A later position has the same bytes iff it shares all of them with its predecessor
        // and has no more.
        let mut end = start + 1;
        while end < self.len()
            && self.lcp[end] == node.depth
            && self.offsets[end + 1] - self.offsets[end] == node.depth
        {
            end += 1;
        }
        start..end
    }

    /// The number of positions (text tokens).
    #[inline]
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there are no text tokens.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The token at position `i`.
    #[inline]
    pub fn token(&self, i: usize) -> TokenId {
        self.ids[i]
    }

    /// The bytes of the token at position `i`.
    #[inline]
    pub fn bytes_at(&self, i: usize) -> &[u8] {
        &self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The common prefix length of positions `i - 1` and `i` (0 for `i = 0`).
    #[inline]
    pub fn lcp(&self, i: usize) -> usize {
        self.lcp[i] as usize
    }

    /// The first position after `i` whose bytes do not start with `bytes_at(i)`.
    #[inline]
    pub fn subtree_end(&self, i: usize) -> usize {
        self.subtree_end[i] as usize
    }

    /// The positions in sorted order (ids); `tokens()[i] == token(i)`.
    pub fn tokens(&self) -> &[TokenId] {
        &self.ids
    }

    /// The first position `j >= i` whose common prefix with position `i - 1` is shorter than
    /// `prefix_len` (or `len()`): after rejecting the first `prefix_len` bytes of token
    /// `i - 1`, the next token that does not start with them. Jumps whole subtrees, so it
    /// costs about one step per distinct extension, not one per token.
    #[inline]
    pub fn skip_to(&self, mut i: usize, prefix_len: usize) -> usize {
        let n = self.len();
        while i < n && self.lcp[i] as usize >= prefix_len {
            // Everything in i's subtree extends bytes_at(i), which shares the prefix.
            i = self.subtree_end[i] as usize;
        }
        i
    }

    /// Visits positions in sorted order. `visit(common, bytes, id)` gets the common prefix
    /// length of this token's bytes with the previously *visited* token's bytes (0 for the
    /// first), so a walker keeping a stack of states per byte depth can pop back to `common`
    /// and feed only `bytes[common..]`. Its [`Step`] says whether to skip a prefix.
    pub fn walk(&self, mut visit: impl FnMut(usize, &[u8], TokenId) -> Step) {
        let n = self.len();
        let mut i = 0;
        let mut common = 0;
        while i < n {
            let bytes = self.bytes_at(i);
            match visit(common, bytes, self.ids[i]) {
                Step::Next => i += 1,
                Step::SkipPrefix(k) => i = self.skip_to(i + 1, k.min(bytes.len())),
                Step::Stop => return,
            }
            // After a skip from p to i, the skipped positions all share more than lcp(i)
            // bytes with p, so lcp(i) is also i's common prefix with p.
            if i < n {
                common = self.lcp[i] as usize;
            }
        }
    }

    /// Whether position `i` is a token's encoding (a token-terminal reading) rather than
    /// its text.
    #[inline]
    pub fn is_encoding(&self, i: usize) -> bool {
        self.bytes_at(i).first() == Some(&sieve_ir::token::TOKEN_MARKER)
    }

    /// The lowest id whose bytes are exactly `bytes`, if any text token has them.
    pub fn find(&self, bytes: &[u8]) -> Option<TokenId> {
        let i = self.lower_bound(bytes);
        (i < self.len() && self.bytes_at(i) == bytes).then(|| self.ids[i])
    }

    /// The positions of the tokens whose bytes start with `prefix` (a contiguous range).
    pub fn prefix_range(&self, prefix: &[u8]) -> std::ops::Range<usize> {
        let start = self.lower_bound(prefix);
        let mut end = start;
        while end < self.len() && self.bytes_at(end).starts_with(prefix) {
            end = self.subtree_end(end);
        }
        start..end
    }

    /// The first position whose bytes are not less than `key`.
    fn lower_bound(&self, key: &[u8]) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.bytes_at(mid) < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// The nodes of depth 1 of `nodes` ([`TokenTrie::first_bytes`]).
fn first_bytes(nodes: &[TrieNode]) -> Vec<FirstByte> {
    let mut first = Vec::new();
    let mut n = 0;
    while n < nodes.len() {
        let node = nodes[n];
        first.push(FirstByte {
            byte: node.byte,
            node: n as u32,
            end: node.end,
        });
        n = node.end as usize;
    }
    first
}

/// The text tokens whose first byte is ASCII, as a bitmask over ids
/// ([`TokenTrie::ascii_first`]); positions are sorted by bytes, so they come first.
fn ascii_first(ids: &[TokenId], offsets: &[u32], bytes: &[u8], n_vocab: usize) -> Vec<u32> {
    let mut bits = vec![0u32; n_vocab.div_ceil(32)];
    for (pos, id) in ids.iter().enumerate() {
        let (start, end) = (offsets[pos] as usize, offsets[pos + 1] as usize);
        match bytes[start..end].first() {
            Some(&byte) if byte >= 0x80 => break,
            Some(_) => bits[id.index() / 32] |= 1 << (id.index() % 32),
            None => {}
        }
    }
    bits
}

/// The nodes of the sorted tokens (`offsets`/`bytes` per position, `lcp` to the previous
/// one): position `i` opens one node per byte past `lcp(i)`, and a node ends where a later
/// position shares less than its depth.
fn build_nodes(ids: &[TokenId], offsets: &[u32], bytes: &[u8], lcp: &[u32]) -> Vec<TrieNode> {
    let mut nodes: Vec<TrieNode> = Vec::new();
    // open[d]: the node of depth d + 1 on the current path.
    let mut open: Vec<u32> = Vec::new();
    for (i, &shared) in lcp.iter().enumerate() {
        let token = &bytes[offsets[i] as usize..offsets[i + 1] as usize];
        let shared = shared as usize;
        for closed in open.drain(shared.min(open.len())..) {
            nodes[closed as usize].end = nodes.len() as u32;
        }
        if token.len() == shared {
            // The same bytes as the previous token: no new node.
            if let Some(&last) = open.last() {
                nodes[last as usize].shared = true;
            }
            continue;
        }
        for depth in shared..token.len() {
            open.push(nodes.len() as u32);
            nodes.push(TrieNode {
                pos: i as u32,
                end: 0,
                depth: (depth + 1) as u32,
                byte: token[depth],
                token: if depth + 1 == token.len() {
                    ids[i].as_u32()
                } else {
                    TrieNode::NO_TOKEN
                },
                shared: false,
                wide: false,
            });
        }
    }
    for closed in open {
        nodes[closed as usize].end = nodes.len() as u32;
    }
    for (n, node) in nodes.iter_mut().enumerate() {
        node.wide = node.end as usize - n > WIDE_SUBTREE;
    }
    nodes
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
