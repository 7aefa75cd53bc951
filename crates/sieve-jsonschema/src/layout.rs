//! The JSON text layout: whitespace gaps, separators, literal values (`const`, `enum`) and
//! object keys that avoid a finite set of names.
//!
//! Layout rules (the same everywhere in a grammar):
//!
//! - a *gap* is the whitespace allowed between two tokens: nothing under
//!   [`Whitespace::Compact`], up to [`Options::max_whitespace`] bytes of `' '`, `\t`, `\n`,
//!   `\r` under [`Whitespace::Flexible`];
//! - the whole text is `gap value gap`; an object is `{ gap }` or
//!   `{ gap member (gap sep gap member)* gap }` with `member = key gap key-sep gap value`; an
//!   array is `[ gap ]` or `[ gap item (gap sep gap item)* gap ]` — so every gap between two
//!   tokens holds exactly one gap expression, never two in a row;
//! - literal values are printed in that layout, object members in the value's own order and
//!   numbers as `serde_json` prints them (`1.5`, `1e100`), integral values below 2^53 also
//!   as `2` and `2.0`: an instance spelling the same number otherwise (`1e0`, `2.00`, an
//!   object's members in another order) is rejected — a rejected-valid gap, never an
//!   accepted-invalid one.
//!
//! Invariant of [`string_except`]: its language is JSON strings whose *decoded* value is not
//! in the excluded set; every spelling [`Escapes`] allows is accepted.

use serde_json::Value;
use sieve_ir::{ByteClass, Expr};

use crate::string::{any_char, canonical as canonical_char, string_literal};
use crate::{Error, ErrorKind, Escapes, Options, Whitespace};

/// The gap and separator expressions of one compilation.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    /// One gap.
    pub gap: Expr,
    /// `gap item-separator gap`.
    pub item_sep: Expr,
    /// `gap key-separator gap`.
    pub key_sep: Expr,
    /// How string characters may be written.
    pub escapes: Escapes,
}

impl Layout {
    pub(crate) fn new(options: &Options) -> Layout {
        let gap = match options.whitespace {
            Whitespace::Compact => Expr::empty(),
            Whitespace::Flexible => Expr::repeat(
                Expr::class(ByteClass::from_ranges([
                    (b' ', b' '),
                    (b'\t', b'\t'),
                    (b'\n', b'\n'),
                    (b'\r', b'\r'),
                ]))
                .expect("four bytes"),
                0,
                Some(options.max_whitespace),
            )
            .expect("0 <= max"),
        };
        Layout {
            item_sep: Expr::seq([
                gap.clone(),
                Expr::bytes(options.item_separator.as_bytes()),
                gap.clone(),
            ]),
            key_sep: Expr::seq([
                gap.clone(),
                Expr::bytes(options.key_separator.as_bytes()),
                gap.clone(),
            ]),
            gap,
            escapes: options.escapes,
        }
    }

    /// `open gap close` when `items` is empty, else
    /// `open gap item (sep item)* gap close`.
    pub(crate) fn bracket(&self, open: u8, items: Vec<Expr>, close: u8) -> Expr {
        let mut out = vec![Expr::bytes([open]), self.gap.clone()];
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                out.push(self.item_sep.clone());
            }
            out.push(item);
        }
        if out.len() > 2 {
            out.push(self.gap.clone());
        }
        out.push(Expr::bytes([close]));
        Expr::seq(out)
    }

    /// `key key-sep value`.
    pub(crate) fn member(&self, key: Expr, value: Expr) -> Expr {
        Expr::seq([key, self.key_sep.clone(), value])
    }

    /// The JSON value `value` printed in this layout (see the module docs). `depth` bounds the
    /// nesting followed; `pointer` locates the keyword for errors.
    pub(crate) fn literal(
        &self,
        value: &Value,
        max_depth: usize,
        pointer: &str,
        keyword: &str,
    ) -> Result<Expr, Error> {
        self.literal_at(value, max_depth, pointer, keyword)
    }

    fn literal_at(
        &self,
        value: &Value,
        depth: usize,
        pointer: &str,
        keyword: &str,
    ) -> Result<Expr, Error> {
        if depth == 0 {
            return Err(Error::new(
                ErrorKind::Limit,
                pointer,
                keyword,
                "the value nests deeper than the depth limit",
            ));
        }
        Ok(match value {
            Value::Null => Expr::bytes(*b"null"),
            Value::Bool(true) => Expr::bytes(*b"true"),
            Value::Bool(false) => Expr::bytes(*b"false"),
            Value::Number(n) => number_literal(n),
            Value::String(s) => string_literal(s, self.escapes),
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(self.literal_at(item, depth - 1, pointer, keyword)?);
                }
                self.bracket(b'[', out, b']')
            }
            Value::Object(map) => {
                let mut out = Vec::with_capacity(map.len());
                for (key, item) in map {
                    let item = self.literal_at(item, depth - 1, pointer, keyword)?;
                    out.push(self.member(string_literal(key, self.escapes), item));
                }
                self.bracket(b'{', out, b'}')
            }
        })
    }
}

/// The spellings of the number `n`: as `serde_json` prints it and, for an integral value
/// below 2^53, both `2` and `2.0` (equal numbers, so both are instances of a `const: 2`).
fn number_literal(n: &serde_json::Number) -> Expr {
    let printed = n.to_string();
    let integral = match (n.as_i64(), n.as_u64(), n.as_f64()) {
        (Some(i), _, _) => Some(i.to_string()),
        (_, Some(u), _) => Some(u.to_string()),
        (_, _, Some(f)) if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0 => {
            Some(format!("{}", f as i64))
        }
        _ => None,
    };
    match integral {
        Some(int) => {
            let mut spellings = vec![int.clone(), format!("{int}.0")];
            if !spellings.contains(&printed) {
                spellings.push(printed);
            }
            Expr::choice(spellings.into_iter().map(|s| Expr::bytes(s.into_bytes())))
                .expect("two spellings")
        }
        None => Expr::bytes(printed.into_bytes()),
    }
}

/// A whole JSON string (quotes included) whose decoded value is none of `names`.
///
/// A trie of the names is walked character by character, each character in every spelling
/// `escapes` allows; a character that leaves the trie leads to any further characters, and
/// the closing quote is allowed except at the end of a name.
/// `share` turns an expression used in many places into a reference to one rule.
pub(crate) fn string_except(
    names: &[&str],
    escapes: Escapes,
    share: &mut dyn FnMut(Expr) -> Result<Expr, Error>,
) -> Result<Expr, Error> {
    // The trie: children (char, node) per node, and which nodes end a name.
    let mut children: Vec<Vec<(char, usize)>> = vec![Vec::new()];
    let mut terminal = vec![false];
    for name in names {
        let mut node = 0;
        for c in name.chars() {
            node = match children[node].iter().find(|(k, _)| *k == c) {
                Some(&(_, next)) => next,
                None => {
                    children.push(Vec::new());
                    terminal.push(false);
                    let next = children.len() - 1;
                    children[node].push((c, next));
                    next
                }
            };
        }
        terminal[node] = true;
    }
    let free = share(Expr::seq([
        Expr::star(any_char(escapes)),
        Expr::bytes(*b"\""),
    ]))?;
    let mut others: std::collections::HashMap<Vec<char>, Option<Expr>> =
        std::collections::HashMap::new();
    // Children are created after their parents, so a reverse sweep sees children first.
    let mut exprs: Vec<Option<Expr>> = vec![None; children.len()];
    for node in (0..children.len()).rev() {
        let mut alternatives = Vec::new();
        if !terminal[node] {
            alternatives.push(Expr::bytes(*b"\""));
        }
        let mut used: Vec<char> = children[node].iter().map(|(c, _)| *c).collect();
        used.sort_unstable();
        for &(c, next) in &children[node] {
            let rest = exprs[next].take().expect("children come later");
            alternatives.push(Expr::seq([char_spellings(c, escapes), rest]));
        }
        let other = match others.get(&used) {
            Some(other) => other.clone(),
            None => {
                let mut chars: Vec<Expr> = canonical_char_except(&used).into_iter().collect();
                if escapes == Escapes::Any {
                    chars.extend(escaped_except(&used));
                }
                let other = match Expr::choice(chars) {
                    Some(other) => Some(share(Expr::seq([other, free.clone()]))?),
                    None => None,
                };
                others.insert(used, other.clone());
                other
            }
        };
        alternatives.extend(other);
        let mut expr = Expr::choice(alternatives);
        // A rule every 16 nodes keeps expressions shallow along long names.
        if node % 16 == 15 {
            if let Some(e) = expr {
                expr = Some(share(e)?);
            }
        }
        exprs[node] = expr;
    }
    Ok(Expr::seq([
        Expr::bytes(*b"\""),
        exprs[0]
            .take()
            .expect("the root always has other characters"),
    ]))
}

/// Every spelling of `c` under `escapes`: canonical, and under [`Escapes::Any`] also `\/`
/// for `/` and `\uXXXX` in either case (a surrogate pair outside the BMP).
fn char_spellings(c: char, escapes: Escapes) -> Expr {
    let canonical = Expr::bytes(canonical_char(c));
    if escapes == Escapes::Canonical {
        return canonical;
    }
    let mut alternatives = vec![canonical];
    if c == '/' {
        alternatives.push(Expr::bytes(*b"\\/"));
    }
    let mut units = [0u16; 2];
    let mut escape = Vec::new();
    for unit in c.encode_utf16(&mut units).iter() {
        escape.push(Expr::bytes(*b"\\u"));
        for seq in hex_sequences(u32::from(*unit), u32::from(*unit), 4) {
            escape.extend(seq.into_iter().map(hex_digits));
        }
    }
    alternatives.push(Expr::seq(escape));
    Expr::choice(alternatives).expect("at least two spellings")
}

/// The escape spellings of the characters other than `used` that [`canonical_char_except`]
/// does not cover: `\/`, and `\uXXXX` (either case) or surrogate pairs.
fn escaped_except(used: &[char]) -> Option<Expr> {
    let mut alternatives = Vec::new();
    if !used.contains(&'/') {
        alternatives.push(Expr::bytes(*b"\\/"));
    }
    let u = || Expr::bytes(*b"\\u");
    let hex = |lo: u32, hi: u32| {
        hex_sequences(lo, hi, 4)
            .into_iter()
            .map(|seq| Expr::seq(seq.into_iter().map(hex_digits)))
            .collect::<Vec<_>>()
    };
    // BMP characters, surrogates excluded.
    let mut excluded: Vec<u32> = used
        .iter()
        .map(|&c| c as u32)
        .filter(|&c| c <= 0xffff)
        .collect();
    excluded.extend(0xd800..=0xdfff);
    let mut bmp = Vec::new();
    for (lo, hi) in complement(&mut excluded, 0, 0xffff) {
        bmp.extend(hex(lo, hi));
    }
    if let Some(bmp) = Expr::choice(bmp) {
        alternatives.push(Expr::seq([u(), bmp]));
    }
    // Surrogate pairs, grouped by their high half.
    let mut pairs: Vec<(u32, u32)> = used
        .iter()
        .filter(|&&c| c as u32 > 0xffff)
        .map(|&c| {
            let v = c as u32 - 0x10000;
            (0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff))
        })
        .collect();
    pairs.sort_unstable();
    let mut highs: Vec<u32> = pairs.iter().map(|p| p.0).collect();
    highs.dedup();
    let any_low = Expr::choice(hex(0xdc00, 0xdfff)).expect("not empty");
    for (lo, hi) in complement(&mut highs.clone(), 0xd800, 0xdbff) {
        for high in hex(lo, hi) {
            alternatives.push(Expr::seq([u(), high, u(), any_low.clone()]));
        }
    }
    for high in highs {
        let mut lows: Vec<u32> = pairs.iter().filter(|p| p.0 == high).map(|p| p.1).collect();
        let mut allowed = Vec::new();
        for (lo, hi) in complement(&mut lows, 0xdc00, 0xdfff) {
            allowed.extend(hex(lo, hi));
        }
        if let Some(allowed) = Expr::choice(allowed) {
            let high = Expr::choice(hex(high, high)).expect("one value");
            alternatives.push(Expr::seq([u(), high, u(), allowed]));
        }
    }
    Expr::choice(alternatives)
}

/// The ranges of `lo..=hi` not in `excluded` (sorted and deduplicated here).
fn complement(excluded: &mut Vec<u32>, lo: u32, hi: u32) -> Vec<(u32, u32)> {
    excluded.sort_unstable();
    excluded.dedup();
    let mut out = Vec::new();
    let mut next = lo;
    for &x in excluded.iter().filter(|&&x| lo <= x && x <= hi) {
        if x > next {
            out.push((next, x - 1));
        }
        next = x + 1;
    }
    if next <= hi {
        out.push((next, hi));
    }
    out
}

/// The `width`-digit hexadecimal numerals of `lo..=hi`, as sequences of digit-value ranges.
fn hex_sequences(lo: u32, hi: u32, width: u32) -> Vec<Vec<(u8, u8)>> {
    if width == 1 {
        return vec![vec![(lo as u8, hi as u8)]];
    }
    let unit = 16u32.pow(width - 1);
    let (lt, lr) = (lo / unit, lo % unit);
    let (ht, hr) = (hi / unit, hi % unit);
    let prefixed = |digit: u32, rest: Vec<Vec<(u8, u8)>>| {
        rest.into_iter()
            .map(|mut seq| {
                seq.insert(0, (digit as u8, digit as u8));
                seq
            })
            .collect::<Vec<_>>()
    };
    if lt == ht {
        return prefixed(lt, hex_sequences(lr, hr, width - 1));
    }
    let mut out = Vec::new();
    let (mut mid_lo, mut mid_hi) = (lt, ht);
    if lr != 0 {
        out.extend(prefixed(lt, hex_sequences(lr, unit - 1, width - 1)));
        mid_lo += 1;
    }
    let mut tail = Vec::new();
    if hr != unit - 1 {
        tail = prefixed(ht, hex_sequences(0, hr, width - 1));
        mid_hi -= 1;
    }
    if mid_lo <= mid_hi {
        let mut seq = vec![(mid_lo as u8, mid_hi as u8)];
        seq.extend(std::iter::repeat_n((0u8, 15u8), (width - 1) as usize));
        out.push(seq);
    }
    out.extend(tail);
    out
}

/// The hex digits with values `lo..=hi`, in either case.
fn hex_digits((lo, hi): (u8, u8)) -> Expr {
    let mut class = ByteClass::default();
    for v in lo..=hi {
        let lower = b"0123456789abcdef"[v as usize];
        class.insert(lower);
        class.insert(lower.to_ascii_uppercase());
    }
    Expr::class(class).expect("at least one digit")
}

/// One character other than `used`, spelled canonically.
fn canonical_char_except(used: &[char]) -> Option<Expr> {
    let mut alternatives = Vec::new();
    // Characters that must be escaped: `"`, `\` and the controls.
    for c in (0u32..0x20).chain([0x22, 0x5c]) {
        let c = char::from_u32(c).expect("ASCII");
        if !used.contains(&c) {
            alternatives.push(Expr::bytes(canonical_char(c)));
        }
    }
    // Raw characters: U+0020.. less `"`, `\`, the surrogates and `used`.
    let mut excluded: Vec<u32> = used.iter().map(|&c| c as u32).collect();
    excluded.extend([0x22, 0x5c]);
    excluded.sort_unstable();
    excluded.dedup();
    let mut ranges = Vec::new();
    let mut lo = 0x20u32;
    for &x in excluded.iter().filter(|&&x| x >= 0x20) {
        if x > lo {
            ranges.push((lo, x - 1));
        }
        lo = x + 1;
    }
    if lo <= 0x10ffff {
        ranges.push((lo, 0x10ffff));
    }
    for (lo, hi) in ranges {
        for (lo, hi) in [(lo, hi.min(0xd7ff)), (lo.max(0xe000), hi)] {
            if lo <= hi {
                for seq in utf8_sequences(lo, hi) {
                    alternatives
                        .push(Expr::seq(seq.into_iter().map(|(a, b)| {
                            Expr::class(ByteClass::range(a, b)).expect("a <= b")
                        })));
                }
            }
        }
    }
    Expr::choice(alternatives)
}

/// The UTF-8 encodings of the scalar values `lo..=hi` (no surrogates inside), as sequences
/// of byte ranges (the algorithm of regex-syntax's `Utf8Sequences`).
pub(crate) fn utf8_sequences(lo: u32, hi: u32) -> Vec<Vec<(u8, u8)>> {
    let mut out = Vec::new();
    let mut stack = vec![(lo, hi)];
    'next: while let Some((lo, hi)) = stack.pop() {
        if lo > hi {
            continue;
        }
        for boundary in [0x7f, 0x7ff, 0xffff] {
            if lo <= boundary && hi > boundary {
                stack.push((boundary + 1, hi));
                stack.push((lo, boundary));
                continue 'next;
            }
        }
        if hi <= 0x7f {
            out.push(vec![(lo as u8, hi as u8)]);
            continue;
        }
        let len = char::from_u32(lo).map_or(4, char::len_utf8);
        for i in 1..len {
            let m = (1u32 << (6 * i)) - 1;
            if lo & !m != hi & !m {
                if lo & m != 0 {
                    stack.push(((lo | m) + 1, hi));
                    stack.push((lo, lo | m));
                    continue 'next;
                }
                if hi & m != m {
                    stack.push((hi & !m, hi));
                    stack.push((lo, (hi & !m) - 1));
                    continue 'next;
                }
            }
        }
        let (mut a, mut b) = ([0u8; 4], [0u8; 4]);
        let a = char::from_u32(lo)
            .expect("scalar")
            .encode_utf8(&mut a)
            .as_bytes()
            .to_vec();
        let b = char::from_u32(hi)
            .expect("scalar")
            .encode_utf8(&mut b)
            .as_bytes()
            .to_vec();
        out.push(a.into_iter().zip(b).collect());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_sequences_cover_exactly() {
        for (lo, hi) in [
            (0, 0xffff),
            (0x12, 0x34),
            (0xd7ff, 0xe000),
            (0x0fff, 0x1000),
            (0x5, 0x5),
        ] {
            let seqs = hex_sequences(lo, hi, 4);
            for v in 0u32..=0xffff {
                let digits = [v >> 12, (v >> 8) & 15, (v >> 4) & 15, v & 15];
                let hits = seqs
                    .iter()
                    .filter(|s| {
                        s.iter()
                            .zip(digits)
                            .all(|(&(a, b), d)| a as u32 <= d && d <= b as u32)
                    })
                    .count();
                assert_eq!(
                    hits,
                    usize::from(lo <= v && v <= hi),
                    "{lo:x}-{hi:x} at {v:x}"
                );
            }
        }
    }

    #[test]
    fn utf8_sequences_cover_exactly() {
        for (lo, hi) in [
            (0x20, 0x10ffff),
            (0x80, 0x7ff),
            (0x61, 0x62),
            (0x800, 0xd7ff),
        ] {
            for seq in utf8_sequences(lo, hi) {
                assert!(seq.iter().all(|(a, b)| a <= b));
            }
        }
        let seqs = utf8_sequences(0x20, 0xd7ff);
        for c in ['a', 'é', '€', ' '] {
            let mut buf = [0u8; 4];
            let bytes = c.encode_utf8(&mut buf).as_bytes();
            let hits = seqs
                .iter()
                .filter(|s| {
                    s.len() == bytes.len()
                        && s.iter().zip(bytes).all(|(&(a, b), &x)| a <= x && x <= b)
                })
                .count();
            assert_eq!(hits, 1, "{c}");
        }
    }
}
