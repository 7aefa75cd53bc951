//! JSON numbers: `integer` and `number` schemas, with bounds and `multipleOf`.
//!
//! Invariant: every expression built here is in RFC 8259 number syntax,
//! `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, and denotes a number the schema accepts.
//! Bounds and divisors are exact decimals read from the schema's text ([`decimal`]), never
//! binary floats: `maximum: 0.1` admits `0.1` and nothing above it.
//!
//! # Which spellings are accepted
//!
//! A schema may accept some values only through fewer spellings than RFC 8259 allows; it
//! never accepts a spelling of a forbidden value. Exactly:
//!
//! - `integer`: `-?(0|[1-9][0-9]*)` — no fraction (`1.0`) and no exponent (`1e2`), although
//!   JSON Schema counts their values as integers. One spelling per value (plus `-0`), which is
//!   also what keeps a model from wandering into `1.000000…`.
//! - `number` without bounds or `multipleOf`: the full syntax, exponents included.
//! - `number` with a bound: every spelling `-?(0|[1-9][0-9]*)(\.[0-9]+)?` of every accepted
//!   value, and the exponent spellings in scientific form, `-?[1-9](\.[0-9]+)?[eE]X` or
//!   `-?0(\.0+)?[eE]X` with `X` any spelling of an exponent that fits ([`scientific`]).
//!   Other exponent spellings (`12e3`, `0.05e1`) are not accepted: with bounds, a
//!   leading-zero fraction times a large exponent (`0.000…01e100`) makes them non-regular in
//!   general, so the class is left out whole.
//! - `number` with `multipleOf`: `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, no exponent at all.
//! - `-0`, `-0.0`, … are zero, accepted wherever zero is.
//!
//! # How
//!
//! (The design note is `docs/json-schema-numbers.md`.)
//!
//! Bounds: the tighter of `minimum`/`exclusiveMinimum` and of `maximum`/`exclusiveMaximum`
//! make one interval, split at zero into a non-negative side and a negative side (`-` and a
//! magnitude); each side is built by [`range`] as a compact expression by digit counts and
//! prefixes. `multipleOf` = `m × 10^e` (`m` a positive integer, no trailing zero) is built
//! by [`modulo`] as a minimised automaton (interval × residue mod `m` × trailing zeros up to
//! `e` when `e > 0`) emitted as right-linear rules; for `integer` a fractional divisor first
//! becomes `m / gcd(m, 10^-e)`, and a divisor that reduces to 1 costs nothing.
//!
//! Refused: `multipleOf` whose significant digits `m` exceed [`MAX_DIVISOR`] (`Unsupported`:
//! `0.123456789`; `1e300` is fine), or whose automaton exceeds [`modulo::MAX_STATES`] states
//! (`Limit`); an empty interval or no multiple inside it is `Unsatisfiable`;
//! `multipleOf <= 0` is `Invalid`.

mod decimal;
mod modulo;
mod range;
mod scientific;
#[cfg(test)]
mod tests;

use std::cmp::Ordering;

use sieve_ir::{ByteClass, Expr, GrammarBuilder};

use crate::{Error, ErrorKind};
use decimal::{cmp_int, Decimal};

/// The largest integer `m` of a divisor `m × 10^-s` that `multipleOf` supports.
pub(crate) const MAX_DIVISOR: u64 = 100_000;

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

/// A bound on a magnitude: integer part (canonical digits), fraction digits (no trailing
/// zero), and whether the bound itself is excluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Bound {
    pub int: Vec<u8>,
    pub frac: Vec<u8>,
    pub strict: bool,
}

impl Bound {
    fn of(magnitude: &Decimal, strict: bool) -> Bound {
        Bound {
            int: magnitude.int_part(),
            frac: magnitude.frac_part(),
            strict,
        }
    }

    fn zero() -> Bound {
        Bound::of(&Decimal::zero(), false)
    }

    /// Compares the values, ignoring strictness.
    pub(crate) fn cmp_value(&self, other: &Bound) -> Ordering {
        cmp_int(&self.int, &other.int).then_with(|| self.frac.cmp(&other.frac))
    }
}

/// The magnitudes of one side: lower bound, optional upper bound.
type Interval = (Bound, Option<Bound>);

/// One end of the interval: its value, whether excluded, and the keyword that set it.
#[derive(Clone, Debug)]
struct End {
    value: Decimal,
    strict: bool,
    keyword: &'static str,
}

fn read(
    spec: &NumberSpec<'_>,
    keyword: &'static str,
    n: Option<&serde_json::Number>,
) -> Result<Option<Decimal>, Error> {
    let Some(n) = n else { return Ok(None) };
    match Decimal::from_json(n) {
        Some(d) => Ok(Some(d)),
        None => Err(Error::new(
            ErrorKind::Invalid,
            spec.pointer,
            keyword,
            format!("`{n}` is not a number sieve can read exactly"),
        )),
    }
}

/// The tighter of two ends; `lower` picks the greater value, else the smaller. On a tie the
/// exclusive one wins.
fn tighter(a: Option<End>, b: Option<End>, lower: bool) -> Option<End> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(a), Some(b)) => {
            let ord = a.value.cmp(&b.value);
            let a_wins = match ord {
                Ordering::Equal => a.strict || !b.strict,
                Ordering::Greater => lower,
                Ordering::Less => !lower,
            };
            Some(if a_wins { a } else { b })
        }
    }
}

/// The divisor as `m × 10^k` (an integer) or `m × 10^-s`, `m` not a multiple of ten.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Divisor {
    m: u64,
    k: u32,
    s: u32,
}

fn divisor(spec: &NumberSpec<'_>, d: &Decimal) -> Result<Divisor, Error> {
    let err = |kind, message: String| Error::new(kind, spec.pointer, "multipleOf", message);
    if d.is_zero() || d.is_negative() {
        return Err(err(
            ErrorKind::Invalid,
            format!("must be greater than 0, not {d}"),
        ));
    }
    let too_big = || {
        err(
            ErrorKind::Unsupported,
            format!("{d}: sieve supports divisors m × 10^e with m up to {MAX_DIVISOR}"),
        )
    };
    let mut m: u64 = 0;
    for &b in d.digits() {
        m = m * 10 + u64::from(b - b'0');
        if m > MAX_DIVISOR {
            return Err(too_big());
        }
    }
    let (mut k, mut s) = (0u32, 0u32);
    if d.exponent() >= 0 {
        k = u32::try_from(d.exponent()).map_err(|_| too_big())?;
    } else {
        s = u32::try_from(-d.exponent()).map_err(|_| too_big())?;
    }
    if spec.integer {
        // An integer is a multiple of m × 10^-s iff it is one of m / gcd(m, 10^s).
        for _ in 0..s {
            if m % 10 == 0 {
                m /= 10;
            } else if m % 5 == 0 {
                m /= 5;
            } else if m % 2 == 0 {
                m /= 2;
            }
        }
        s = 0;
    }
    Ok(Divisor { m, k, s })
}

/// Spellings of the magnitudes in `[lo, hi]` meeting the divisor: `Ok(None)` when there
/// are none.
fn side(
    builder: &mut GrammarBuilder,
    spec: &NumberSpec<'_>,
    lo: &Bound,
    hi: Option<&Bound>,
    div: Option<Divisor>,
) -> Result<Option<Expr>, Error> {
    match div {
        None if spec.integer => Ok(range::nonneg(lo, hi, true)),
        None => Ok(Expr::choice(
            range::nonneg(lo, hi, false)
                .into_iter()
                .chain(scientific::scientific(lo, hi)),
        )),
        Some(Divisor { m: 1, k: 0, s: 0 }) => {
            let ints = range::nonneg(lo, hi, true);
            if spec.integer {
                return Ok(ints);
            }
            let zeros = Expr::optional(Expr::seq([
                Expr::bytes(*b"."),
                Expr::plus(Expr::bytes(*b"0")),
            ]));
            Ok(ints.map(|i| Expr::seq([i, zeros])))
        }
        Some(Divisor { m, k, s }) => {
            let problem = modulo::Multiples {
                lo,
                hi,
                m: m as u32,
                k,
                s,
                fraction: !spec.integer,
            };
            match modulo::multiples(builder, &problem) {
                modulo::Outcome::Expr(e) => Ok(Some(e)),
                modulo::Outcome::Empty => Ok(None),
                modulo::Outcome::TooLarge => Err(Error::new(
                    ErrorKind::Limit,
                    spec.pointer,
                    "multipleOf",
                    format!(
                        "the multiples within these bounds need more than {} automaton states",
                        modulo::MAX_STATES
                    ),
                )),
            }
        }
    }
}

fn unbounded(integer: bool) -> Expr {
    let c = |lo: u8, hi: u8| Expr::class(ByteClass::range(lo, hi)).expect("not empty");
    let int = Expr::seq([
        Expr::optional(Expr::bytes(*b"-")),
        Expr::choice([
            Expr::bytes(*b"0"),
            Expr::seq([c(b'1', b'9'), Expr::star(c(b'0', b'9'))]),
        ])
        .expect("two alternatives"),
    ]);
    if integer {
        return int;
    }
    let exponent = Expr::optional(Expr::seq([
        Expr::class(ByteClass::from_ranges([(b'e', b'e'), (b'E', b'E')])).expect("not empty"),
        Expr::optional(
            Expr::class(ByteClass::from_ranges([(b'+', b'+'), (b'-', b'-')])).expect("not empty"),
        ),
        Expr::plus(c(b'0', b'9')),
    ]));
    Expr::seq([int, range::any_fraction(), exponent])
}

/// A JSON number meeting `spec`.
pub(crate) fn number_schema(
    builder: &mut GrammarBuilder,
    spec: &NumberSpec<'_>,
) -> Result<Expr, Error> {
    let end = |keyword, n, strict| -> Result<Option<End>, Error> {
        Ok(read(spec, keyword, n)?.map(|value| End {
            value,
            strict,
            keyword,
        }))
    };
    let lo = tighter(
        end("minimum", spec.minimum, false)?,
        end("exclusiveMinimum", spec.exclusive_minimum, true)?,
        true,
    );
    let hi = tighter(
        end("maximum", spec.maximum, false)?,
        end("exclusiveMaximum", spec.exclusive_maximum, true)?,
        false,
    );
    let div = match read(spec, "multipleOf", spec.multiple_of)? {
        Some(d) => Some(divisor(spec, &d)?),
        None => None,
    };
    if lo.is_none() && hi.is_none() && div.is_none() {
        return Ok(unbounded(spec.integer));
    }
    let kind = if spec.integer { "integer" } else { "number" };
    let interval = || {
        format!(
            "{}{}, {}{}",
            match &lo {
                Some(e) if e.strict => "(",
                _ => "[",
            },
            lo.as_ref().map_or("-∞".to_owned(), |e| e.value.to_string()),
            hi.as_ref().map_or("∞".to_owned(), |e| e.value.to_string()),
            match &hi {
                Some(e) if e.strict => ")",
                _ => "]",
            },
        )
    };
    let bound_keyword = hi
        .as_ref()
        .or(lo.as_ref())
        .map_or("multipleOf", |e| e.keyword);
    if let (Some(l), Some(h)) = (&lo, &hi) {
        match l.value.cmp(&h.value) {
            Ordering::Greater => {
                return Err(Error::new(
                    ErrorKind::Unsatisfiable,
                    spec.pointer,
                    h.keyword,
                    format!("the interval {} is empty", interval()),
                ))
            }
            Ordering::Equal if l.strict || h.strict => {
                return Err(Error::new(
                    ErrorKind::Unsatisfiable,
                    spec.pointer,
                    h.keyword,
                    format!("the interval {} is empty", interval()),
                ))
            }
            _ => {}
        }
    }
    // The non-negative side: magnitudes in [max(lo, 0), hi].
    let pos = match (&lo, &hi) {
        (_, Some(h)) if h.value.is_negative() => None,
        _ => {
            let low = match &lo {
                Some(l) if !l.value.is_negative() => Bound::of(&l.value, l.strict),
                _ => Bound::zero(),
            };
            let high = hi.as_ref().map(|h| Bound::of(&h.value, h.strict));
            Some((low, high))
        }
    };
    // The negative side: magnitudes in [max(-hi, 0), -lo].
    let neg = match &lo {
        Some(l) if !l.value.is_negative() && (!l.value.is_zero() || l.strict) => None,
        _ => {
            let low = match &hi {
                Some(h) if h.value.is_negative() || h.value.is_zero() => {
                    Bound::of(&h.value.abs(), h.strict)
                }
                _ => Bound::zero(),
            };
            let high = lo.as_ref().map(|l| Bound::of(&l.value.abs(), l.strict));
            Some((low, high))
        }
    };
    let mut alts = Vec::new();
    let mut plain_nonempty = false;
    // Symmetric sides (no bounds, or -x..x) share one expression, and so their rules.
    let mut built: Option<(Interval, Option<Expr>)> = None;
    for (negative, bounds) in [(false, pos), (true, neg)] {
        let Some((low, high)) = bounds else { continue };
        let e = match &built {
            Some((key, e)) if key.0 == low && key.1 == high => e.clone(),
            _ => {
                let e = side(builder, spec, &low, high.as_ref(), div)?;
                built = Some(((low.clone(), high.clone()), e.clone()));
                e
            }
        };
        if let Some(e) = e {
            alts.push(if negative {
                Expr::seq([Expr::bytes(*b"-"), e])
            } else {
                e
            });
        } else if div.is_some() && range::nonneg(&low, high.as_ref(), spec.integer).is_some() {
            plain_nonempty = true;
        }
    }
    match Expr::choice(alts) {
        Some(e) => Ok(e),
        None if plain_nonempty => Err(Error::new(
            ErrorKind::Unsatisfiable,
            spec.pointer,
            "multipleOf",
            format!("no multiple of the divisor lies in {}", interval()),
        )),
        None => Err(Error::new(
            ErrorKind::Unsatisfiable,
            spec.pointer,
            bound_keyword,
            format!("no {kind} lies in {}", interval()),
        )),
    }
}
