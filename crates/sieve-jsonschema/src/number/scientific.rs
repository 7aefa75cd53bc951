//! Exponent spellings of bounded numbers, in scientific form: `M[eE]X` where the mantissa
//! `M` is normalised, `[1-9](\.[0-9]+)?`, or zero, `0(\.0+)?`.
//!
//! With a normalised mantissa a spelling's exponent says its order of magnitude: the value
//! lies in `[10^x, 10^(x+1))`. So for magnitudes in `[a, b]`, with `a` in
//! `[10^ea, 10^(ea+1))` and `b` in `[10^eb, 10^(eb+1))`, the exponents strictly between
//! `ea` and `eb` take every normalised mantissa, `ea` takes the mantissas `>= a / 10^ea`,
//! `eb` those `<= b / 10^eb` — a finite union of regular pieces whatever the bounds, with
//! the exponent written in any of its RFC 8259 spellings (`e5`, `E+05`, `e-0`, …).
//!
//! Invariant: every spelling built here has a value in the interval, and every scientific
//! spelling (as above) of such a value is built. Other exponent spellings (`12e3`,
//! `0.5e-2`) are not: with bounds they make the language non-regular in general
//! (`0.0…01e100`), so the whole class is left out.

use std::cmp::Ordering;

use sieve_ir::{ByteClass, Expr};

use super::range::{any_fraction, int_range, nonneg};
use super::Bound;

/// `floor(log10 v)` and the mantissa `v / 10^that`, for `v > 0`; `None` for zero.
fn normalise(b: &Bound) -> Option<(i64, Bound)> {
    let (exponent, digits): (i64, Vec<u8>) = if b.int != b"0" {
        let mut d = b.int.clone();
        d.extend_from_slice(&b.frac);
        (b.int.len() as i64 - 1, d)
    } else {
        let zeros = b.frac.iter().take_while(|&&c| c == b'0').count();
        if zeros == b.frac.len() {
            return None;
        }
        (-(zeros as i64) - 1, b.frac[zeros..].to_vec())
    };
    let mut frac = digits[1..].to_vec();
    while frac.last() == Some(&b'0') {
        frac.pop();
    }
    Some((
        exponent,
        Bound {
            int: vec![digits[0]],
            frac,
            strict: b.strict,
        },
    ))
}

fn class(pairs: &[(u8, u8)]) -> Expr {
    Expr::class(ByteClass::from_ranges(pairs.iter().copied())).expect("not empty")
}

/// `[eE]` followed by every spelling of every integer in `[p, q]` (`None`: unbounded).
fn exponents(p: Option<i64>, q: Option<i64>) -> Option<Expr> {
    let zeros = || Expr::star(Expr::bytes(*b"0"));
    let digits = |v: i64| v.unsigned_abs().to_string().into_bytes();
    let mut alts = Vec::new();
    if q.is_none_or(|q| q >= 0) {
        let lo = digits(p.unwrap_or(0).max(0));
        let hi = q.map(digits);
        if let Some(mags) = int_range(&lo, hi.as_deref()) {
            alts.push(Expr::seq([
                Expr::optional(Expr::bytes(*b"+")),
                zeros(),
                mags,
            ]));
        }
    }
    if p.is_none_or(|p| p <= 0) {
        let lo = digits(q.unwrap_or(0).min(0));
        let hi = p.map(digits);
        if let Some(mags) = int_range(&lo, hi.as_deref()) {
            alts.push(Expr::seq([Expr::bytes(*b"-"), zeros(), mags]));
        }
    }
    let signed = Expr::choice(alts)?;
    Some(Expr::seq([class(&[(b'e', b'e'), (b'E', b'E')]), signed]))
}

/// Scientific spellings of the magnitudes in `[lo, hi]`; `None` when there are none.
pub(crate) fn scientific(lo: &Bound, hi: Option<&Bound>) -> Option<Expr> {
    if let Some(hi) = hi {
        match lo.cmp_value(hi) {
            Ordering::Greater => return None,
            Ordering::Equal if lo.strict || hi.strict => return None,
            _ => {}
        }
    }
    let mut alts = Vec::new();
    let lo_norm = normalise(lo);
    if lo_norm.is_none() && !lo.strict {
        // Zero, in any exponent.
        let zero = Expr::seq([
            Expr::bytes(*b"0"),
            Expr::optional(Expr::seq([
                Expr::bytes(*b"."),
                Expr::plus(Expr::bytes(*b"0")),
            ])),
        ]);
        alts.push(Expr::seq([zero, exponents(None, None)?]));
    }
    let hi_norm = match hi {
        None => None,
        Some(h) => match normalise(h) {
            Some(n) => Some(n),
            // The upper bound is zero: nothing normalised.
            None => return Expr::choice(alts),
        },
    };
    let ten = Bound {
        int: b"10".to_vec(),
        frac: Vec::new(),
        strict: true,
    };
    let one = Bound {
        int: b"1".to_vec(),
        frac: Vec::new(),
        strict: false,
    };
    let mut piece = |mantissas: Option<Expr>, p: Option<i64>, q: Option<i64>| {
        if let (Some(m), Some(e)) = (mantissas, exponents(p, q)) {
            alts.push(Expr::seq([m, e]));
        }
    };
    match (&lo_norm, &hi_norm) {
        (Some((ea, ma)), Some((eb, mb))) if ea == eb => {
            piece(nonneg(ma, Some(mb), false), Some(*ea), Some(*ea));
        }
        _ => {
            if let Some((ea, ma)) = &lo_norm {
                piece(nonneg(ma, Some(&ten), false), Some(*ea), Some(*ea));
            }
            let p = lo_norm.as_ref().map(|(ea, _)| ea + 1);
            let q = hi_norm.as_ref().map(|(eb, _)| eb - 1);
            if p.zip(q).is_none_or(|(p, q)| p <= q) {
                let normal = Expr::seq([class(&[(b'1', b'9')]), any_fraction()]);
                piece(Some(normal), p, q);
            }
            if let Some((eb, mb)) = &hi_norm {
                piece(nonneg(&one, Some(mb), false), Some(*eb), Some(*eb));
            }
        }
    }
    Expr::choice(alts)
}
