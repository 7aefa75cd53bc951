//! Token terminals: a grammar position that takes one *token* — chosen by id, not by the
//! text it spells — such as a special token (`<|im_end|>`, `<[128009]>`) or any token but a
//! few (`<[^128009]>`).
//!
//! The IR stays over bytes. A token is written as four bytes: [`TOKEN_MARKER`] and then its
//! id, big-endian in three bytes ([`encode`]). No text ever holds the marker — `0xFF` is not
//! in UTF-8, and the front-ends leave it out of every byte class they build — so a byte-level
//! rule (a string, a class, `.`) can never match a token terminal, and a token terminal never
//! matches text. Everything below the front-ends (normalisation, automata, every backend)
//! sees ordinary bytes; the token trie lists every token a second time under its encoding
//! (`sieve_vocab::TokenTrie`), and the matcher feeds a token as its encoding when the grammar
//! takes it that way and as its text otherwise. So masks stay exact with no layer knowing
//! about tokens except the front-ends, the trie and the matcher's feed rule.
//!
//! A set of tokens ([`TokenSet`]: ids, id ranges, names, possibly negated) is resolved
//! against a vocabulary ([`TokenNames`]) into sorted id ranges, then written as a choice of
//! fixed-width encodings ([`ids_expr`]), at most five byte-class sequences per range.
//!
//! # Invariants
//!
//! - [`encode`] is injective on ids below [`ID_LIMIT`], and every encoding starts with
//!   [`TOKEN_MARKER`].
//! - [`ids_expr`] matches exactly the encodings of the ids in its ranges.
//! - A negated set never holds an end-of-sequence id or an id the vocabulary does not define:
//!   EOS stays "the output is complete", never a token to write in the middle of one.

use std::fmt;
use std::sync::Arc;

use crate::{ByteClass, Expr};

/// The byte that starts a token's encoding. It never occurs in UTF-8 text.
pub const TOKEN_MARKER: u8 = 0xFF;

/// Ids are below this (they fit in the three bytes after the marker).
pub const ID_LIMIT: u32 = 1 << 24;

/// The four bytes a token terminal matches for token `id` (below [`ID_LIMIT`]).
pub fn encode(id: u32) -> [u8; 4] {
    debug_assert!(id < ID_LIMIT);
    [TOKEN_MARKER, (id >> 16) as u8, (id >> 8) as u8, id as u8]
}

/// The id whose encoding `bytes` is, if it is one.
pub fn decode(bytes: &[u8]) -> Option<u32> {
    match *bytes {
        [TOKEN_MARKER, a, b, c] => Some(u32::from(a) << 16 | u32::from(b) << 8 | u32::from(c)),
        _ => None,
    }
}

/// What resolving token names needs from a vocabulary.
pub trait TokenNames: fmt::Debug + Send + Sync {
    /// The number of ids (all ids are below it).
    fn n_vocab(&self) -> u32;
    /// The id of the special token named `name` (e.g. `<|im_end|>`).
    fn special_id(&self, name: &str) -> Option<u32>;
    /// The id of the text token whose bytes are exactly `text` (the lowest such id).
    fn text_id(&self, text: &[u8]) -> Option<u32>;
    /// Whether `id` is a token of the vocabulary (text or a named special), not an unused id.
    fn is_defined(&self, id: u32) -> bool;
    /// The ids a negated set never holds, sorted: the end-of-sequence ids and the unused ids.
    fn eos_and_unused(&self) -> Vec<u32>;
}

/// One member of a [`TokenSet`] as written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TokenItem {
    /// `lo..=hi` by id (a single id has `lo == hi`).
    Ids(u32, u32),
    /// A token by its name or text, e.g. `<|im_end|>` or `<think>`: the special token with
    /// that name, else the text token with exactly those bytes.
    Named(String),
}

/// A set of tokens as a grammar writes it: `<[1,5-9]>`, `<|im_end|>`, `<[^128009]>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TokenSet {
    /// The members.
    pub items: Vec<TokenItem>,
    /// Every defined non-EOS token *except* the members.
    pub negated: bool,
}

impl<T: TokenNames + ?Sized> TokenNames for &T {
    fn n_vocab(&self) -> u32 {
        (**self).n_vocab()
    }
    fn special_id(&self, name: &str) -> Option<u32> {
        (**self).special_id(name)
    }
    fn text_id(&self, text: &[u8]) -> Option<u32> {
        (**self).text_id(text)
    }
    fn is_defined(&self, id: u32) -> bool {
        (**self).is_defined(id)
    }
    fn eos_and_unused(&self) -> Vec<u32> {
        (**self).eos_and_unused()
    }
}

/// A shared [`TokenNames`] for front-end options: compared by identity.
#[derive(Clone, Debug)]
pub struct SharedNames(pub Arc<dyn TokenNames>);

impl PartialEq for SharedNames {
    fn eq(&self, other: &SharedNames) -> bool {
        std::ptr::addr_eq(Arc::as_ptr(&self.0), Arc::as_ptr(&other.0))
    }
}

impl Eq for SharedNames {}

/// Why a [`TokenSet`] does not resolve.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// A name that is neither a special token nor one text token.
    #[error("`{0}` is not a token of this tokenizer (neither a special token's name nor the text of one token)")]
    UnknownName(String),
    /// An id the vocabulary does not define.
    #[error("token id {id} is not in this tokenizer (it has {n_vocab} ids)")]
    UnknownId {
        /// The id.
        id: u32,
        /// The vocabulary's size.
        n_vocab: u32,
    },
    /// A range written high to low.
    #[error("token id range {lo}-{hi} is empty (the first id is greater than the last)")]
    EmptyRange {
        /// The first id.
        lo: u32,
        /// The last id.
        hi: u32,
    },
    /// A set that holds no token (e.g. a negation of everything).
    #[error("the token set holds no token")]
    Empty,
    /// Token terminals were written but no tokenizer was given to resolve them.
    #[error("token terminals need a tokenizer to resolve them, and none was given")]
    NoTokenizer,
}

impl TokenSet {
    /// The set's ids, as sorted disjoint inclusive ranges.
    ///
    /// # Errors
    /// A [`TokenError`] for a name or id the vocabulary does not have, a reversed range, or a
    /// set left empty.
    pub fn resolve(&self, names: &dyn TokenNames) -> Result<Vec<(u32, u32)>, TokenError> {
        let n_vocab = names.n_vocab();
        let mut ranges = Vec::with_capacity(self.items.len());
        for item in &self.items {
            match item {
                &TokenItem::Ids(lo, hi) => {
                    if lo > hi {
                        return Err(TokenError::EmptyRange { lo, hi });
                    }
                    for id in [lo, hi] {
                        if id >= n_vocab || (lo == hi && !names.is_defined(id)) {
                            return Err(TokenError::UnknownId { id, n_vocab });
                        }
                    }
                    ranges.push((lo, hi));
                }
                TokenItem::Named(name) => {
                    let id = names
                        .special_id(name)
                        .or_else(|| names.text_id(name.as_bytes()))
                        .ok_or_else(|| TokenError::UnknownName(name.clone()))?;
                    ranges.push((id, id));
                }
            }
        }
        let members = merge(ranges);
        let ranges = if self.negated {
            let mut out = Vec::new();
            let mut next = 0u32;
            for &(lo, hi) in &members {
                if next < lo {
                    out.push((next, lo - 1));
                }
                next = hi.saturating_add(1);
            }
            if next < n_vocab {
                out.push((next, n_vocab - 1));
            }
            // Drop EOS and unused ids: split the complement around them.
            let holes = names.eos_and_unused();
            let mut kept = Vec::with_capacity(out.len() + holes.len());
            let mut holes = holes.into_iter().peekable();
            for (lo, hi) in out {
                let mut start = lo;
                while let Some(&id) = holes.peek() {
                    if id > hi {
                        break;
                    }
                    holes.next();
                    if id < start {
                        continue;
                    }
                    if start < id {
                        kept.push((start, id - 1));
                    }
                    start = id + 1;
                }
                if start <= hi {
                    kept.push((start, hi));
                }
            }
            kept
        } else {
            members
        };
        if ranges.is_empty() {
            return Err(TokenError::Empty);
        }
        Ok(ranges)
    }
}

/// Reads the token syntax the front-ends share (llguidance's and llama.cpp's): `<[12]>`,
/// `<[1,5-9]>` and `<[^128009]>` by id, `<|im_end|>` or `<think>` by name (the whole text, angle
/// brackets included, is the name), and `!` before either for "any token but these".
///
/// # Errors
/// A message (one line, naming the offending part) when `text` is not such a token.
pub fn parse_syntax(text: &str) -> Result<TokenSet, String> {
    let (bang, body) = match text.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let Some(inner) = body.strip_prefix('<').and_then(|b| b.strip_suffix('>')) else {
        return Err(format!(
            "`{text}` is not a token: write `<name>` or `<[ids]>`"
        ));
    };
    if let Some(list) = inner.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
        let (caret, list) = match list.trim_start().strip_prefix('^') {
            Some(rest) => (true, rest),
            None => (false, list),
        };
        if caret && bang {
            return Err(format!("`{text}` negates twice: write `<[…]>` or `!<[…]>`"));
        }
        let mut items = Vec::new();
        for part in list.split(',') {
            let part = part.trim();
            let id = |s: &str| {
                s.trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|&id| id < ID_LIMIT)
                    .ok_or_else(|| {
                        format!(
                            "`{}` in `{text}` is not a token id (a number below {ID_LIMIT})",
                            s.trim()
                        )
                    })
            };
            let item = match part.split_once('-') {
                Some((lo, hi)) => TokenItem::Ids(id(lo)?, id(hi)?),
                None => {
                    let id = id(part)?;
                    TokenItem::Ids(id, id)
                }
            };
            items.push(item);
        }
        return Ok(TokenSet {
            items,
            negated: caret || bang,
        });
    }
    if inner.is_empty() || inner.contains(|c: char| c.is_whitespace() || c == '<' || c == '>') {
        return Err(format!(
            "`{text}` is not a token name: a name has no spaces or inner `<`/`>`"
        ));
    }
    Ok(TokenSet {
        items: vec![TokenItem::Named(body.to_owned())],
        negated: bang,
    })
}

impl TokenSet {
    /// The expression matching the set's tokens (see [`ids_expr`]). Without `names`, only
    /// plain ids and ranges can be written (unchecked against a vocabulary).
    ///
    /// # Errors
    /// [`TokenError::NoTokenizer`] for a name or a negation without `names`, else as
    /// [`TokenSet::resolve`].
    pub fn expr(&self, names: Option<&dyn TokenNames>) -> Result<Expr, TokenError> {
        let ranges = match names {
            Some(names) => self.resolve(names)?,
            None if self.negated => return Err(TokenError::NoTokenizer),
            None => {
                let mut ranges = Vec::with_capacity(self.items.len());
                for item in &self.items {
                    match *item {
                        TokenItem::Ids(lo, hi) if lo > hi => {
                            return Err(TokenError::EmptyRange { lo, hi })
                        }
                        TokenItem::Ids(lo, hi) => ranges.push((lo, hi)),
                        TokenItem::Named(_) => return Err(TokenError::NoTokenizer),
                    }
                }
                merge(ranges)
            }
        };
        ids_expr(&ranges).ok_or(TokenError::Empty)
    }
}

fn merge(mut ranges: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    ranges.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
    for (lo, hi) in ranges {
        match merged.last_mut() {
            Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    merged
}

/// The expression matching exactly the encodings of the ids in `ranges` (inclusive, below
/// [`ID_LIMIT`]); `None` when `ranges` is empty.
pub fn ids_expr(ranges: &[(u32, u32)]) -> Option<Expr> {
    let mut alternatives = Vec::new();
    for &(lo, hi) in ranges {
        debug_assert!(lo <= hi && hi < ID_LIMIT);
        split(lo, hi, 3, &mut Vec::new(), &mut alternatives);
    }
    let body = Expr::choice(alternatives)?;
    Some(Expr::seq([Expr::bytes([TOKEN_MARKER]), body]))
}

/// Appends the class sequences for ids `lo..=hi` that agree on the bytes above the last
/// `width` (already in `prefix`): the usual split of a fixed-width range into a head, a
/// middle of full ranges and a tail.
fn split(lo: u32, hi: u32, width: u32, prefix: &mut Vec<Expr>, out: &mut Vec<Expr>) {
    let shift = 8 * (width - 1);
    let (lo_top, hi_top) = ((lo >> shift) as u8, (hi >> shift) as u8);
    let rest_mask = if shift == 0 { 0 } else { (1u32 << shift) - 1 };
    let (lo_rest, hi_rest) = (lo & rest_mask, hi & rest_mask);
    let class = |a: u8, b: u8| Expr::class(ByteClass::range(a, b)).expect("non-empty range");
    if width == 1 {
        out.push(Expr::seq(
            prefix.iter().cloned().chain([class(lo_top, hi_top)]),
        ));
        return;
    }
    let full = |a: u8, b: u8, prefix: &[Expr], out: &mut Vec<Expr>| {
        let tail = (1..width).map(|_| class(0, 0xFF));
        out.push(Expr::seq(
            prefix.iter().cloned().chain([class(a, b)]).chain(tail),
        ));
    };
    if lo_top == hi_top {
        prefix.push(class(lo_top, lo_top));
        split(lo_rest, hi_rest, width - 1, prefix, out);
        prefix.pop();
        return;
    }
    let mut first_full = lo_top;
    if lo_rest != 0 {
        prefix.push(class(lo_top, lo_top));
        split(lo_rest, rest_mask, width - 1, prefix, out);
        prefix.pop();
        first_full += 1;
    }
    let mut last_full = hi_top;
    if hi_rest != rest_mask {
        last_full -= 1;
    }
    if first_full <= last_full {
        full(first_full, last_full, prefix, out);
    }
    if hi_rest != rest_mask {
        prefix.push(class(hi_top, hi_top));
        split(0, hi_rest, width - 1, prefix, out);
        prefix.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{reference::Recognizer, GrammarBuilder};

    #[derive(Debug)]
    struct Names;
    impl TokenNames for Names {
        fn n_vocab(&self) -> u32 {
            70_000
        }
        fn special_id(&self, name: &str) -> Option<u32> {
            (name == "<|end|>").then_some(69_999)
        }
        fn text_id(&self, text: &[u8]) -> Option<u32> {
            (text == b"<think>").then_some(12)
        }
        fn is_defined(&self, id: u32) -> bool {
            id != 500 && id < 70_000
        }
        fn eos_and_unused(&self) -> Vec<u32> {
            vec![500, 69_999]
        }
    }

    fn accepts(ranges: &[(u32, u32)], id: u32) -> bool {
        let mut b = GrammarBuilder::new();
        let root = b.declare("root").unwrap();
        b.define(root, ids_expr(ranges).unwrap());
        let grammar = b.build(root).unwrap();
        Recognizer::new(&grammar).unwrap().accepts(&encode(id))
    }

    #[test]
    fn encodings_round_trip() {
        for id in [0, 1, 255, 256, 65_535, 65_536, 200_018, ID_LIMIT - 1] {
            assert_eq!(decode(&encode(id)), Some(id));
        }
        assert_eq!(decode(b"abcd"), None);
    }

    #[test]
    fn ids_expr_matches_exactly_its_ranges() {
        let cases: &[&[(u32, u32)]] = &[
            &[(7, 7)],
            &[(0, 255)],
            &[(250, 70_000)],
            &[(1, 2), (300, 65_600), (131_000, 131_071)],
            &[(65_535, 65_536)],
        ];
        for ranges in cases {
            let inside = |id: u32| ranges.iter().any(|&(lo, hi)| lo <= id && id <= hi);
            let mut probes: Vec<u32> = ranges
                .iter()
                .flat_map(|&(lo, hi)| [lo.saturating_sub(1), lo, lo + 1, hi - 1, hi, hi + 1])
                .collect();
            probes.extend([0, 255, 256, 65_535, 65_536, 131_072, 200_000]);
            for id in probes {
                assert_eq!(accepts(ranges, id), inside(id), "{ranges:?} at {id}");
            }
        }
    }

    #[test]
    fn syntax_reads_ids_ranges_names_and_negations() {
        let ids = |items: &[(u32, u32)], negated| TokenSet {
            items: items.iter().map(|&(a, b)| TokenItem::Ids(a, b)).collect(),
            negated,
        };
        assert_eq!(parse_syntax("<[12]>"), Ok(ids(&[(12, 12)], false)));
        assert_eq!(
            parse_syntax("<[1, 5-9]>"),
            Ok(ids(&[(1, 1), (5, 9)], false))
        );
        assert_eq!(parse_syntax("<[^7]>"), Ok(ids(&[(7, 7)], true)));
        assert_eq!(parse_syntax("!<[7]>"), Ok(ids(&[(7, 7)], true)));
        let named = parse_syntax("<|im_end|>").unwrap();
        assert_eq!(named.items, [TokenItem::Named("<|im_end|>".into())]);
        assert!(parse_syntax("!</think>").unwrap().negated);
        for bad in [
            "<[x]>",
            "<[]>",
            "!<[^1]>",
            "<a b>",
            "<>",
            "abc",
            "<[16777216]>",
        ] {
            assert!(parse_syntax(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sets_resolve_names_ranges_and_negations() {
        let set = |items: Vec<TokenItem>, negated| TokenSet { items, negated };
        let named = set(vec![TokenItem::Named("<|end|>".into())], false);
        assert_eq!(named.resolve(&Names), Ok(vec![(69_999, 69_999)]));
        let text = set(vec![TokenItem::Named("<think>".into())], false);
        assert_eq!(text.resolve(&Names), Ok(vec![(12, 12)]));
        let negated = set(vec![TokenItem::Ids(10, 20)], true);
        // Undefined 500 and EOS 69_999 are never in a negation.
        assert_eq!(
            negated.resolve(&Names),
            Ok(vec![(0, 9), (21, 499), (501, 69_998)])
        );
        let unknown = set(vec![TokenItem::Named("<nope>".into())], false);
        assert_eq!(
            unknown.resolve(&Names),
            Err(TokenError::UnknownName("<nope>".into()))
        );
        let reversed = set(vec![TokenItem::Ids(9, 3)], false);
        assert_eq!(
            reversed.resolve(&Names),
            Err(TokenError::EmptyRange { lo: 9, hi: 3 })
        );
        let outside = set(vec![TokenItem::Ids(70_000, 70_000)], false);
        assert!(matches!(
            outside.resolve(&Names),
            Err(TokenError::UnknownId { id: 70_000, .. })
        ));
        let everything = set(vec![TokenItem::Ids(0, 69_999)], true);
        assert_eq!(everything.resolve(&Names), Err(TokenError::Empty));
    }
}
