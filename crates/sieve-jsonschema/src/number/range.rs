//! Spellings of non-negative numbers in an interval, as compact expressions.
//!
//! The language built here is the set of spellings `(0|[1-9][0-9]*)(\.[0-9]+)?` (or without the
//! fraction for integers) whose value lies in `[lo, hi]`, bounds inclusive or exclusive, `hi`
//! possibly absent. It is built the classic way, by digit counts and then by prefixes:
//!
//! - integer parts: lengths strictly between the bounds' lengths are one `[1-9][0-9]{m,n}`;
//!   equal-length ranges split at the first differing digit into "≥ x", a middle class
//!   followed by `[0-9]{k}`, and "≤ y", with runs of one digit compressed so the nesting
//!   depth is the number of digit runs, not the number of digits;
//! - fractions: digit strings `t` compared as `0.t`, so unbounded in length, split the same
//!   way (`[0-9]*` tails, `0{0,k}` runs).
//!
//! Invariant: every string of the language spells a value inside the interval, and every
//! such spelling is in it. The size is linear in the bounds' digit runs, whatever their
//! magnitude (`1e308` costs one `[0-9]{308}`).

use std::cmp::Ordering;

use sieve_ir::{ByteClass, Expr};

use super::decimal::{cmp_int, dec, inc};
use super::Bound;

fn class(lo: u8, hi: u8) -> Expr {
    Expr::class(ByteClass::range(lo, hi)).expect("lo <= hi")
}

fn digit() -> Expr {
    class(b'0', b'9')
}

fn digits_exactly(n: usize) -> Expr {
    Expr::repeat(digit(), n as u32, Some(n as u32)).expect("n <= n")
}

fn repeat_byte(b: u8, min: usize, max: Option<usize>) -> Expr {
    Expr::repeat(Expr::bytes([b]), min as u32, max.map(|m| m as u32)).expect("min <= max")
}

/// `(\.[0-9]+)?`.
pub(crate) fn any_fraction() -> Expr {
    Expr::optional(Expr::seq([Expr::bytes(*b"."), Expr::plus(digit())]))
}

fn run_len(s: &[u8]) -> usize {
    s.iter().take_while(|&&b| b == s[0]).count()
}

/// Strings `t` of length `x.len()` with `x <= t <= y` (lexicographically, equal lengths).
fn fixed(x: &[u8], y: &[u8]) -> Expr {
    debug_assert_eq!(x.len(), y.len());
    let n = x.len();
    if n == 0 {
        return Expr::empty();
    }
    let p = x.iter().zip(y).take_while(|(a, b)| a == b).count();
    if p > 0 {
        return Expr::seq([Expr::bytes(&x[..p]), fixed(&x[p..], &y[p..])]);
    }
    let lo_full = x.iter().all(|&b| b == b'0');
    let hi_full = y.iter().all(|&b| b == b'9');
    if lo_full && hi_full {
        return digits_exactly(n);
    }
    if hi_full {
        return at_least(x);
    }
    if lo_full {
        return at_most(y);
    }
    let (x0, y0) = (x[0], y[0]);
    let mut alts = Vec::new();
    let tail_lo_full = x[1..].iter().all(|&b| b == b'0');
    let tail_hi_full = y[1..].iter().all(|&b| b == b'9');
    if !tail_lo_full {
        alts.push(Expr::seq([Expr::bytes([x0]), at_least(&x[1..])]));
    }
    let mid_lo = if tail_lo_full { x0 } else { x0 + 1 };
    let mid_hi = if tail_hi_full { y0 } else { y0 - 1 };
    if mid_lo <= mid_hi {
        alts.push(Expr::seq([class(mid_lo, mid_hi), digits_exactly(n - 1)]));
    }
    if !tail_hi_full {
        alts.push(Expr::seq([Expr::bytes([y0]), at_most(&y[1..])]));
    }
    Expr::choice(alts).expect("x < y leaves an alternative")
}

/// Strings of length `x.len()` that are `>= x`.
fn at_least(x: &[u8]) -> Expr {
    let n = x.len();
    if x.iter().all(|&b| b == b'0') {
        return digits_exactly(n);
    }
    let c = x[0];
    let k = run_len(x);
    let mut alts = Vec::new();
    let mut bigger = k;
    if k == n {
        // All one digit: the last position takes `[c-9]`.
        alts.push(Expr::seq([Expr::bytes(&x[..k - 1]), class(c, b'9')]));
        bigger = k - 1;
    } else {
        alts.push(Expr::seq([Expr::bytes(&x[..k]), at_least(&x[k..])]));
    }
    if c < b'9' {
        for j in 0..bigger {
            alts.push(Expr::seq([
                Expr::bytes(&x[..j]),
                class(c + 1, b'9'),
                digits_exactly(n - 1 - j),
            ]));
        }
    }
    Expr::choice(alts).expect("one alternative")
}

/// Strings of length `y.len()` that are `<= y`.
fn at_most(y: &[u8]) -> Expr {
    let n = y.len();
    if y.iter().all(|&b| b == b'9') {
        return digits_exactly(n);
    }
    let c = y[0];
    let k = run_len(y);
    let mut alts = Vec::new();
    let mut smaller = k;
    if k == n {
        // All one digit: the last position takes `[0-c]`.
        alts.push(Expr::seq([Expr::bytes(&y[..k - 1]), class(b'0', c)]));
        smaller = k - 1;
    } else {
        alts.push(Expr::seq([Expr::bytes(&y[..k]), at_most(&y[k..])]));
    }
    if c > b'0' {
        for j in 0..smaller {
            alts.push(Expr::seq([
                Expr::bytes(&y[..j]),
                class(b'0', c - 1),
                digits_exactly(n - 1 - j),
            ]));
        }
    }
    Expr::choice(alts).expect("one alternative")
}

/// Canonical integer spellings (`0|[1-9][0-9]*`) of the integers in `[lo, hi]`; `None` when
/// the range is empty.
pub(crate) fn int_range(lo: &[u8], hi: Option<&[u8]>) -> Option<Expr> {
    if let Some(hi) = hi {
        if cmp_int(lo, hi) == Ordering::Greater {
            return None;
        }
        if lo.len() == hi.len() {
            return Some(fixed(lo, hi));
        }
    }
    let nx = lo.len();
    let mut alts = Vec::new();
    // Length nx, at least lo ("0" is the only spelling with a leading zero, of length one).
    alts.push(if nx == 1 {
        class(lo[0], b'9')
    } else {
        fixed(lo, &vec![b'9'; nx])
    });
    let lead = class(b'1', b'9');
    match hi {
        None => alts.push(Expr::seq([
            lead,
            Expr::repeat(digit(), nx as u32, None).expect("unbounded"),
        ])),
        Some(hi) => {
            let ny = hi.len();
            if ny >= nx + 2 {
                alts.push(Expr::seq([
                    lead,
                    Expr::repeat(digit(), nx as u32, Some(ny as u32 - 2)).expect("nx <= ny - 2"),
                ]));
            }
            let mut low = vec![b'0'; ny];
            low[0] = b'1';
            alts.push(fixed(&low, hi));
        }
    }
    Expr::choice(alts)
}

/// Digit strings `t`, each read as the fraction `0.t`: whether `""` is in the set, and
/// alternatives for its non-empty members.
#[derive(Default)]
struct Frac {
    eps: bool,
    plus: Vec<Expr>,
}

impl Frac {
    fn empty() -> Frac {
        Frac::default()
    }

    fn is_empty(&self) -> bool {
        !self.eps && self.plus.is_empty()
    }

    /// The whole set, `""` included when it belongs.
    fn full(self) -> Option<Expr> {
        let eps = self.eps.then(Expr::empty);
        Expr::choice(eps.into_iter().chain(self.plus))
    }

    /// `prefix` followed by the whole set (non-empty members only, as `prefix` is not empty).
    fn prefixed(prefix: &[u8], rest: Frac) -> Frac {
        match rest.full() {
            Some(rest) => Frac {
                eps: false,
                plus: vec![Expr::seq([Expr::bytes(prefix), rest])],
            },
            None => Frac::empty(),
        }
    }

    fn union(mut self, other: Frac) -> Frac {
        self.eps |= other.eps;
        self.plus.extend(other.plus);
        self
    }

    /// As a JSON fraction: `""` or `.` followed by a non-empty member.
    fn spelling(self) -> Option<Expr> {
        let eps = self.eps.then(Expr::empty);
        let dot = Expr::choice(self.plus).map(|p| Expr::seq([Expr::bytes(*b"."), p]));
        Expr::choice(eps.into_iter().chain(dot))
    }
}

/// `0*[1-9][0-9]*`: fractions above zero.
fn nonzero_tail() -> Expr {
    Expr::seq([
        Expr::star(Expr::bytes(*b"0")),
        class(b'1', b'9'),
        Expr::star(digit()),
    ])
}

/// Fractions `0.t >= 0.lo` (`>` when `strict`).
fn frac_at_least(lo: &[u8], strict: bool) -> Frac {
    if lo.is_empty() {
        return if strict {
            Frac {
                eps: false,
                plus: vec![nonzero_tail()],
            }
        } else {
            Frac {
                eps: true,
                plus: vec![Expr::plus(digit())],
            }
        };
    }
    let c = lo[0];
    let k = run_len(lo);
    let mut out = Frac::prefixed(&lo[..k], frac_at_least(&lo[k..], strict));
    if c < b'9' {
        out.plus.push(Expr::seq([
            repeat_byte(c, 0, Some(k - 1)),
            class(c + 1, b'9'),
            Expr::star(digit()),
        ]));
    }
    out
}

/// Fractions `0.t <= 0.hi` (`<` when `strict`).
fn frac_at_most(hi: &[u8], strict: bool) -> Frac {
    if hi.is_empty() {
        return if strict {
            Frac::empty()
        } else {
            Frac {
                eps: true,
                plus: vec![Expr::plus(Expr::bytes(*b"0"))],
            }
        };
    }
    let c = hi[0];
    let k = run_len(hi);
    let mut out = Frac::prefixed(&hi[..k], frac_at_most(&hi[k..], strict));
    out.eps = true;
    if k >= 2 {
        out.plus.push(repeat_byte(c, 1, Some(k - 1)));
    }
    if c > b'0' {
        out.plus.push(Expr::seq([
            repeat_byte(c, 0, Some(k - 1)),
            class(b'0', c - 1),
            Expr::star(digit()),
        ]));
    }
    out
}

/// Fractions between `0.lo` and `0.hi`.
fn frac_between(lo: &[u8], lo_strict: bool, hi: &[u8], hi_strict: bool) -> Frac {
    if lo == hi {
        if lo_strict || hi_strict {
            return Frac::empty();
        }
        let zeros = Expr::star(Expr::bytes(*b"0"));
        return if lo.is_empty() {
            Frac {
                eps: true,
                plus: vec![Expr::plus(Expr::bytes(*b"0"))],
            }
        } else {
            Frac {
                eps: false,
                plus: vec![Expr::seq([Expr::bytes(lo), zeros])],
            }
        };
    }
    let p = lo.iter().zip(hi).take_while(|(a, b)| a == b).count();
    if p > 0 {
        return Frac::prefixed(
            &lo[..p],
            frac_between(&lo[p..], lo_strict, &hi[p..], hi_strict),
        );
    }
    // lo < hi, so hi is not empty; they differ in their first digit or lo is empty.
    let h0 = hi[0];
    if lo.is_empty() && h0 == b'0' {
        if !lo_strict {
            return frac_at_most(hi, hi_strict);
        }
        // Above zero and at most 0.0…0r: the zeros of hi come first.
        let k = run_len(hi);
        return Frac::prefixed(&hi[..k], frac_between(&[], true, &hi[k..], hi_strict));
    }
    let mut out = Frac {
        eps: lo.is_empty() && !lo_strict,
        plus: Vec::new(),
    };
    let l0 = lo.first().copied().unwrap_or(b'0');
    let lo_rest = lo.get(1..).unwrap_or(&[]);
    out = out.union(Frac::prefixed(&[l0], frac_at_least(lo_rest, lo_strict)));
    if l0 + 1 < h0 {
        out.plus
            .push(Expr::seq([class(l0 + 1, h0 - 1), Expr::star(digit())]));
    }
    out.union(Frac::prefixed(&[h0], frac_at_most(&hi[1..], hi_strict)))
}

/// Spellings of non-negative numbers in `[lo, hi]` (integers only when `integer`); `None`
/// when there are none.
pub(crate) fn nonneg(lo: &Bound, hi: Option<&Bound>, integer: bool) -> Option<Expr> {
    if let Some(hi) = hi {
        match lo.cmp_value(hi) {
            Ordering::Greater => return None,
            Ordering::Equal if lo.strict || hi.strict => return None,
            _ => {}
        }
    }
    if integer {
        let (lo_int, hi_int) = int_bounds(lo, hi)?;
        return int_range(&lo_int, hi_int.as_deref());
    }
    let a = &lo.int;
    let lo_whole = lo.frac.is_empty() && !lo.strict;
    let first = || {
        Frac::spelling(frac_at_least(&lo.frac, lo.strict))
            .map(|f| Expr::seq([Expr::bytes(a.as_slice()), f]))
    };
    let Some(hi) = hi else {
        if lo_whole {
            return Some(Expr::seq([int_range(a, None)?, any_fraction()]));
        }
        let rest = int_range(&inc(a), None).map(|i| Expr::seq([i, any_fraction()]));
        return Expr::choice(first().into_iter().chain(rest));
    };
    let b = &hi.int;
    if a == b {
        let f = frac_between(&lo.frac, lo.strict, &hi.frac, hi.strict);
        if f.is_empty() {
            return None;
        }
        return Some(Expr::seq([Expr::bytes(a.as_slice()), f.spelling()?]));
    }
    let mut alts = Vec::new();
    let mid_lo = if lo_whole {
        a.clone()
    } else {
        alts.extend(first());
        inc(a)
    };
    let mid_hi = dec(b).expect("b > a >= 0");
    if let Some(mid) = int_range(&mid_lo, Some(&mid_hi)) {
        alts.push(Expr::seq([mid, any_fraction()]));
    }
    if let Some(f) = frac_at_most(&hi.frac, hi.strict).spelling() {
        alts.push(Expr::seq([Expr::bytes(b.as_slice()), f]));
    }
    Expr::choice(alts)
}

/// The least and greatest integers in `[lo, hi]` (non-negative); `None` when `hi` is an
/// exclusive zero.
pub(crate) fn int_bounds(lo: &Bound, hi: Option<&Bound>) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
    let lo_int = if lo.frac.is_empty() && !lo.strict {
        lo.int.clone()
    } else {
        inc(&lo.int)
    };
    let hi_int = match hi {
        None => None,
        Some(hi) if !hi.frac.is_empty() || !hi.strict => Some(hi.int.clone()),
        Some(hi) => Some(dec(&hi.int)?),
    };
    Some((lo_int, hi_int))
}
