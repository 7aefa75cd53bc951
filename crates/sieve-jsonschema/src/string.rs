//! JSON strings: literals (for `const`, `enum` and property names) and string schemas.
//!
//! Invariants: every expression built here is a whole JSON string, quotes included, in
//! RFC 8259 syntax (no raw `"`, `\` or U+0000–U+001F; escapes per [`Escapes`]; under
//! [`Escapes::Any`] a `\uD800`–`\uDBFF` escape is always followed by a `\uDC00`–`\uDFFF` one and
//! a low surrogate never stands alone). Lengths count Unicode scalar values, so a surrogate
//! pair or a multi-byte UTF-8 sequence is one character.

use sieve_ir::{ByteClass, Expr, GrammarBuilder};

use crate::{Error, ErrorKind, Escapes};

/// The constraints of one string schema.
#[derive(Clone, Debug, Default)]
pub(crate) struct StringSpec<'a> {
    /// `minLength`, in characters.
    pub min_length: u64,
    /// `maxLength`, in characters.
    pub max_length: Option<u64>,
    /// `pattern` (ECMA-262 syntax), unanchored as JSON Schema specifies.
    pub pattern: Option<&'a str>,
    /// `format`.
    pub format: Option<&'a str>,
    /// The JSON pointer of the schema object; errors append the keyword.
    pub pointer: &'a str,
}

/// A whole JSON string (quotes included) whose value meets `spec`.
pub(crate) fn string_schema(
    builder: &mut GrammarBuilder,
    spec: &StringSpec<'_>,
    escapes: Escapes,
) -> Result<Expr, Error> {
    let _ = builder;
    for (keyword, present) in [
        ("minLength", spec.min_length > 0),
        ("maxLength", spec.max_length.is_some()),
        ("pattern", spec.pattern.is_some()),
        ("format", spec.format.is_some()),
    ] {
        if present {
            return Err(Error::new(
                ErrorKind::Unsupported,
                spec.pointer,
                keyword,
                "not supported yet",
            ));
        }
    }
    Ok(Expr::seq([
        Expr::bytes(*b"\""),
        Expr::star(any_char(escapes)),
        Expr::bytes(*b"\""),
    ]))
}

/// Every spelling, under `escapes`, of the JSON string whose value is `value` (quotes
/// included).
pub(crate) fn string_literal(value: &str, escapes: Escapes) -> Expr {
    let mut items = vec![Expr::bytes(*b"\"")];
    for c in value.chars() {
        items.push(match escapes {
            Escapes::Canonical => Expr::bytes(canonical(c)),
            Escapes::Any => spellings(c),
        });
    }
    items.push(Expr::bytes(*b"\""));
    Expr::seq(items)
}

/// The one spelling of `c` under [`Escapes::Canonical`].
fn canonical(c: char) -> Vec<u8> {
    match c {
        '"' => b"\\\"".to_vec(),
        '\\' => b"\\\\".to_vec(),
        '\u{8}' => b"\\b".to_vec(),
        '\u{c}' => b"\\f".to_vec(),
        '\n' => b"\\n".to_vec(),
        '\r' => b"\\r".to_vec(),
        '\t' => b"\\t".to_vec(),
        c if (c as u32) < 0x20 => format!("\\u{:04x}", c as u32).into_bytes(),
        c => c.to_string().into_bytes(),
    }
}

/// Every spelling of `c` under [`Escapes::Any`]: raw (when allowed), its short escape, `\/`
/// for `/`, and `\uXXXX` (a surrogate pair outside the BMP) with hex digits in either case.
fn spellings(c: char) -> Expr {
    let mut alternatives = Vec::new();
    let short = canonical(c);
    if short.first() != Some(&b'\\') || short.get(1) != Some(&b'u') {
        alternatives.push(Expr::bytes(short));
    }
    if c == '/' {
        alternatives.push(Expr::bytes(*b"\\/"));
    }
    let mut units = [0u16; 2];
    let mut escape = Vec::new();
    for unit in c.encode_utf16(&mut units).iter() {
        escape.push(Expr::bytes(*b"\\u"));
        for shift in [12, 8, 4, 0] {
            let digit = (unit >> shift) & 0xf;
            escape.push(hex_digit_any_case(digit as u8));
        }
    }
    alternatives.push(Expr::seq(escape));
    Expr::choice(alternatives).expect("at least the \\u spelling")
}

/// The hex digit `value` (0–15), in either case.
fn hex_digit_any_case(value: u8) -> Expr {
    let lower = b"0123456789abcdef"[value as usize];
    let mut class = ByteClass::byte(lower);
    class.insert(lower.to_ascii_uppercase());
    Expr::class(class).expect("not empty")
}

/// One character of string content, any spelling allowed by `escapes`.
pub(crate) fn any_char(escapes: Escapes) -> Expr {
    let c = |ranges: &[(u8, u8)]| {
        Expr::class(ByteClass::from_ranges(ranges.iter().copied())).expect("not empty")
    };
    let cont = || c(&[(0x80, 0xbf)]);
    let raw = [
        c(&[(0x20, 0x21), (0x23, 0x5b), (0x5d, 0x7f)]),
        Expr::seq([c(&[(0xc2, 0xdf)]), cont()]),
        Expr::seq([c(&[(0xe0, 0xe0)]), c(&[(0xa0, 0xbf)]), cont()]),
        Expr::seq([c(&[(0xe1, 0xec), (0xee, 0xef)]), cont(), cont()]),
        Expr::seq([c(&[(0xed, 0xed)]), c(&[(0x80, 0x9f)]), cont()]),
        Expr::seq([c(&[(0xf0, 0xf0)]), c(&[(0x90, 0xbf)]), cont(), cont()]),
        Expr::seq([c(&[(0xf1, 0xf3)]), cont(), cont(), cont()]),
        Expr::seq([c(&[(0xf4, 0xf4)]), c(&[(0x80, 0x8f)]), cont(), cont()]),
    ];
    let hex = || c(&[(b'0', b'9'), (b'a', b'f'), (b'A', b'F')]);
    let escapes_expr = match escapes {
        Escapes::Canonical => Expr::choice([
            Expr::seq([Expr::bytes(*b"\\"), c(&[(b'"', b'"'), (b'\\', b'\\')])]),
            Expr::seq([
                Expr::bytes(*b"\\"),
                c(&[
                    (b'b', b'b'),
                    (b'f', b'f'),
                    (b'n', b'n'),
                    (b'r', b'r'),
                    (b't', b't'),
                ]),
            ]),
            // The other control characters: \u0000–\u001f less the five with short forms.
            Expr::seq([
                Expr::bytes(*b"\\u00"),
                Expr::choice([
                    Expr::seq([
                        Expr::bytes(*b"0"),
                        c(&[(b'0', b'7'), (b'b', b'b'), (b'e', b'f')]),
                    ]),
                    Expr::seq([Expr::bytes(*b"1"), c(&[(b'0', b'9'), (b'a', b'f')])]),
                ])
                .expect("two alternatives"),
            ]),
        ])
        .expect("three alternatives"),
        Escapes::Any => {
            let u = |first: Expr, second: Expr| {
                Expr::seq([Expr::bytes(*b"\\u"), first, second, hex(), hex()])
            };
            let d = || c(&[(b'd', b'd'), (b'D', b'D')]);
            let not_surrogate = Expr::choice([
                Expr::seq([
                    Expr::bytes(*b"\\u"),
                    c(&[
                        (b'0', b'9'),
                        (b'a', b'c'),
                        (b'A', b'C'),
                        (b'e', b'f'),
                        (b'E', b'F'),
                    ]),
                    hex(),
                    hex(),
                    hex(),
                ]),
                u(d(), c(&[(b'0', b'7')])),
            ])
            .expect("two alternatives");
            let high = u(d(), c(&[(b'8', b'9'), (b'a', b'b'), (b'A', b'B')]));
            let low = u(d(), c(&[(b'c', b'f'), (b'C', b'F')]));
            Expr::choice([
                Expr::seq([
                    Expr::bytes(*b"\\"),
                    c(&[
                        (b'"', b'"'),
                        (b'\\', b'\\'),
                        (b'/', b'/'),
                        (b'b', b'b'),
                        (b'f', b'f'),
                        (b'n', b'n'),
                        (b'r', b'r'),
                        (b't', b't'),
                    ]),
                ]),
                not_surrogate,
                Expr::seq([high, low]),
            ])
            .expect("three alternatives")
        }
    };
    Expr::choice(raw.into_iter().chain([escapes_expr])).expect("alternatives")
}
