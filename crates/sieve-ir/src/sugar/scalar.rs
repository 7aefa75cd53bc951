//! `QUOTED_TEXT` and `UNQUOTED_TEXT`: the two spellings of a text value.
//!
//! - **Quoted text** is a JSON string literal (RFC 8259 §7): `"`, then any number of
//!   characters other than `"`, `\` and the control characters U+0000–U+001F, or escapes
//!   `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t` and `\uXXXX` (four hex digits, either
//!   case; any value, as the RFC's grammar allows), then `"`. The text is valid UTF-8.
//! - **Unquoted text** is a YAML 1.2 one-line plain scalar in block context
//!   (`ns-plain-one-line(flow-out)`, YAML 1.2.2 §7.3.3): non-empty; made of printable
//!   characters (`c-printable` less line breaks and the byte order mark) with no tab or space
//!   at either end; it does not start with an indicator (``- ? : , [ ] { } # & * ! | > ' " % @ ` ``)
//!   except `-`, `?` or `:` followed by a non-space; it contains no `: ` or ` #`, and does not
//!   end with `:`. Only the syntax: YAML may still resolve such a scalar to a number, a
//!   boolean or null.

use crate::sugar::automaton::Automaton;
use crate::sugar::utf8::CharSet;
use crate::{ByteClass, Expr};

/// One JSON string literal, quotes included.
pub(crate) fn quoted_text() -> Expr {
    let plain = CharSet::from_ranges([('\u{20}', char::MAX)])
        .minus(&CharSet::from_ranges([('"', '"'), ('\\', '\\')]))
        .to_expr()
        .expect("non-empty");
    let hex = Expr::class(ByteClass::from_ranges([
        (b'0', b'9'),
        (b'a', b'f'),
        (b'A', b'F'),
    ]))
    .expect("non-empty");
    let simple = Expr::class(ByteClass::from_ranges(
        b"\"\\/bfnrt".iter().map(|&b| (b, b)),
    ))
    .expect("non-empty");
    let unicode = Expr::seq([
        Expr::bytes("u"),
        Expr::repeat(hex, 4, Some(4)).expect("4 <= 4"),
    ]);
    let escape = Expr::seq([
        Expr::bytes("\\"),
        Expr::choice([simple, unicode]).expect("non-empty"),
    ]);
    Expr::seq([
        Expr::bytes("\""),
        Expr::star(Expr::choice([plain, escape]).expect("non-empty")),
        Expr::bytes("\""),
    ])
}

/// YAML's `ns-char`: printable, not a line break, not white space, not the byte order mark.
pub(crate) fn ns_char() -> CharSet {
    CharSet::from_ranges([
        ('\u{21}', '\u{7E}'),
        ('\u{85}', '\u{85}'),
        ('\u{A0}', '\u{D7FF}'),
        ('\u{E000}', '\u{FFFD}'),
        ('\u{10000}', char::MAX),
    ])
    .minus(&CharSet::from_ranges([('\u{FEFF}', '\u{FEFF}')]))
}

/// YAML's indicator characters.
pub(crate) const INDICATORS: &str = "-?:,[]{}#&*!|>'\"%@`";

/// The scanner for a one-line plain scalar, start state 0. States: 0 start; 1 after a
/// non-space character that may end the scalar; 2 after white space; 3 after a character
/// that must be followed by a non-space (a leading `-`, `?`, `:`, or any `:`).
pub(crate) fn unquoted_automaton(char_rule: Expr) -> Automaton {
    let set = |s: &str| CharSet::from_ranges(s.chars().map(|c| (c, c)));
    let ns = ns_char();
    // The common case, "any non-space but `:` and `#`", is the shared rule `char_rule`.
    let label = |c: &CharSet| c.to_expr().expect("non-empty");
    let colon = Expr::bytes(":");
    let hash = Expr::bytes("#");
    let white =
        Expr::class(ByteClass::from_ranges([(b' ', b' '), (b'\t', b'\t')])).expect("two bytes");
    let mut a = Automaton::default();
    let start = a.add_state(false);
    let end = a.add_state(true);
    let space = a.add_state(false);
    let need = a.add_state(false);
    debug_assert_eq!((start, end, space, need), (0, 1, 2, 3));
    a.add_edge(start, label(&ns.minus(&set(INDICATORS))), end);
    a.add_edge(start, label(&set("-?:")), need);
    // After a non-space: anything non-space but `:` (a `#` is a comment only after space).
    for from in [end, need] {
        a.add_edge(from, char_rule.clone(), end);
        a.add_edge(from, hash.clone(), end);
        a.add_edge(from, colon.clone(), need);
    }
    a.add_edge(end, white.clone(), space);
    a.add_edge(space, white, space);
    a.add_edge(space, char_rule, end);
    a.add_edge(space, colon, need);
    a
}

/// `ns-char` less `:` and `#`, the label shared by most edges of [`unquoted_automaton`].
pub(crate) fn plain_char() -> Expr {
    ns_char()
        .minus(&CharSet::from_ranges([(':', ':'), ('#', '#')]))
        .to_expr()
        .expect("non-empty")
}
