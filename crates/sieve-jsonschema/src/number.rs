//! JSON numbers: `integer` and `number` schemas, with bounds and `multipleOf`.
//!
//! Invariant: every expression built here is in RFC 8259 number syntax,
//! `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, and denotes a number the schema accepts.

use sieve_ir::{ByteClass, Expr, GrammarBuilder};

use crate::{Error, ErrorKind};

/// The constraints of one numeric schema.
#[derive(Clone, Debug, Default)]
pub(crate) struct NumberSpec<'a> {
    /// `type: integer` rather than `number`.
    pub integer: bool,
    /// `minimum`, `exclusiveMinimum`, `maximum`, `exclusiveMaximum`, `multipleOf`: the JSON
    /// values as written in the schema (draft-04 style boolean exclusives are the caller's
    /// business: they arrive here already turned into numbers).
    pub minimum: Option<&'a serde_json::Number>,
    /// See [`NumberSpec::minimum`].
    pub exclusive_minimum: Option<&'a serde_json::Number>,
    /// See [`NumberSpec::minimum`].
    pub maximum: Option<&'a serde_json::Number>,
    /// See [`NumberSpec::minimum`].
    pub exclusive_maximum: Option<&'a serde_json::Number>,
    /// See [`NumberSpec::minimum`].
    pub multiple_of: Option<&'a serde_json::Number>,
    /// The JSON pointer of the schema object; errors append the keyword.
    pub pointer: &'a str,
}

/// A JSON number meeting `spec`.
pub(crate) fn number_schema(
    builder: &mut GrammarBuilder,
    spec: &NumberSpec<'_>,
) -> Result<Expr, Error> {
    let _ = builder;
    for (keyword, present) in [
        ("minimum", spec.minimum.is_some()),
        ("exclusiveMinimum", spec.exclusive_minimum.is_some()),
        ("maximum", spec.maximum.is_some()),
        ("exclusiveMaximum", spec.exclusive_maximum.is_some()),
        ("multipleOf", spec.multiple_of.is_some()),
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
    let c = |lo: u8, hi: u8| Expr::class(ByteClass::range(lo, hi)).expect("not empty");
    let int = Expr::seq([
        Expr::optional(Expr::bytes(*b"-")),
        Expr::choice([
            Expr::bytes(*b"0"),
            Expr::seq([c(b'1', b'9'), Expr::star(c(b'0', b'9'))]),
        ])
        .expect("two alternatives"),
    ]);
    if spec.integer {
        return Ok(int);
    }
    let fraction = Expr::optional(Expr::seq([Expr::bytes(*b"."), Expr::plus(c(b'0', b'9'))]));
    let exponent = Expr::optional(Expr::seq([
        Expr::class(ByteClass::from_ranges([(b'e', b'e'), (b'E', b'E')])).expect("not empty"),
        Expr::optional(
            Expr::class(ByteClass::from_ranges([(b'+', b'+'), (b'-', b'-')])).expect("not empty"),
        ),
        Expr::plus(c(b'0', b'9')),
    ]));
    Ok(Expr::seq([int, fraction, exponent]))
}
