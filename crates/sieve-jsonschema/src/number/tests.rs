//! Number schemas against a brute-force oracle.
//!
//! The oracle is written independently of the implementation: it parses a candidate with
//! its own RFC 8259 reader into `mantissa × 10^exponent` (i128) and compares rationals
//! exactly. Every candidate string up to a few characters is checked: an accepted string
//! must be a valid number meeting the schema (no exceptions), and a rejected valid one must
//! belong to a documented spelling class (exponents when bounded, fractions for integers).

use std::cmp::Ordering;
use std::collections::HashSet;

use sieve_ir::reference::Recognizer;
use sieve_ir::GrammarBuilder;

use super::{number_schema, NumberSpec};
use crate::{Error, ErrorKind};

/// `mantissa × 10^exponent`.
type Value = (i128, i64);

/// The value of an RFC 8259 number, `None` for anything else.
fn value(s: &[u8]) -> Option<Value> {
    let mut i = 0;
    let negative = s.first() == Some(&b'-');
    if negative {
        i += 1;
    }
    let digits_from = |i: usize| s[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    let n = digits_from(i);
    if n == 0 || (n > 1 && s[i] == b'0') {
        return None;
    }
    let mut mantissa: i128 = 0;
    for &b in &s[i..i + n] {
        mantissa = mantissa * 10 + i128::from(b - b'0');
    }
    i += n;
    let mut exponent: i64 = 0;
    if s.get(i) == Some(&b'.') {
        let f = digits_from(i + 1);
        if f == 0 {
            return None;
        }
        for &b in &s[i + 1..i + 1 + f] {
            mantissa = mantissa * 10 + i128::from(b - b'0');
        }
        exponent -= f as i64;
        i += 1 + f;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        let mut sign = 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            if s[i] == b'-' {
                sign = -1;
            }
            i += 1;
        }
        let e = digits_from(i);
        if e == 0 {
            return None;
        }
        let text = std::str::from_utf8(&s[i..i + e]).ok()?;
        exponent += sign * text.parse::<i64>().ok()?;
        i += e;
    }
    if i != s.len() {
        return None;
    }
    Some((if negative { -mantissa } else { mantissa }, exponent))
}

fn digit_count(mut n: i128) -> i64 {
    let mut k = 0;
    while n != 0 {
        n /= 10;
        k += 1;
    }
    k
}

fn pow10(k: i64) -> i128 {
    (0..k).fold(1i128, |acc, _| acc * 10)
}

/// Exact comparison of two values.
fn cmp_values(a: Value, b: Value) -> Ordering {
    let sign = |v: Value| v.0.signum();
    if sign(a) != sign(b) || sign(a) == 0 {
        return sign(a).cmp(&sign(b));
    }
    let adj = |v: Value| digit_count(v.0) + v.1;
    if adj(a) != adj(b) {
        let ord = adj(a).cmp(&adj(b));
        return if sign(a) < 0 { ord.reverse() } else { ord };
    }
    let e = a.1.min(b.1);
    (a.0 * pow10(a.1 - e)).cmp(&(b.0 * pow10(b.1 - e)))
}

/// Whether `v` is an integer multiple of `d > 0`.
fn is_multiple(v: Value, d: Value) -> bool {
    if v.0 == 0 {
        return true;
    }
    if v.1 >= d.1 {
        digit_count(v.0) + v.1 - d.1 > 38 || (v.0 * pow10(v.1 - d.1)) % d.0 == 0
    } else {
        v.1 - d.1 >= -30 && v.0 % (d.0 * pow10(d.1 - v.1)) == 0
    }
}

/// A schema in test form: bounds and divisor as JSON text.
#[derive(Clone, Debug, Default)]
struct Schema {
    integer: bool,
    min: Option<String>,
    xmin: Option<String>,
    max: Option<String>,
    xmax: Option<String>,
    mult: Option<String>,
}

fn num(s: &str) -> serde_json::Number {
    serde_json::from_str(s).expect("a JSON number")
}

fn compile(s: &Schema) -> Result<Recognizer, Error> {
    let nums: Vec<Option<serde_json::Number>> = [&s.min, &s.xmin, &s.max, &s.xmax, &s.mult]
        .iter()
        .map(|o| o.as_deref().map(num))
        .collect();
    let spec = NumberSpec {
        integer: s.integer,
        minimum: nums[0].as_ref(),
        exclusive_minimum: nums[1].as_ref(),
        maximum: nums[2].as_ref(),
        exclusive_maximum: nums[3].as_ref(),
        multiple_of: nums[4].as_ref(),
        pointer: "/x",
    };
    let mut b = GrammarBuilder::new();
    let root = b.declare("root").expect("fresh builder");
    let e = number_schema(&mut b, &spec)?;
    b.define(root, e);
    let g = b.build(root).expect("valid grammar");
    Ok(Recognizer::new(&g).expect("small repeats"))
}

/// What the schema says about `s`: `None` when it is not a number at all.
fn oracle(schema: &Schema, s: &[u8]) -> Option<bool> {
    let v = value(s)?;
    let bound = |t: &Option<String>| t.as_deref().map(|t| value(t.as_bytes()).expect("bound"));
    let mut ok = true;
    if let Some(b) = bound(&schema.min) {
        ok &= cmp_values(v, b) != Ordering::Less;
    }
    if let Some(b) = bound(&schema.xmin) {
        ok &= cmp_values(v, b) == Ordering::Greater;
    }
    if let Some(b) = bound(&schema.max) {
        ok &= cmp_values(v, b) != Ordering::Greater;
    }
    if let Some(b) = bound(&schema.xmax) {
        ok &= cmp_values(v, b) == Ordering::Less;
    }
    if let Some(d) = bound(&schema.mult) {
        ok &= is_multiple(v, d);
    }
    if schema.integer {
        ok &= is_multiple(v, (1, 0));
    }
    Some(ok)
}

/// Whether rejecting the valid spelling `s` is documented.
fn documented_rejection(schema: &Schema, s: &[u8]) -> bool {
    let bounded = schema.min.is_some()
        || schema.xmin.is_some()
        || schema.max.is_some()
        || schema.xmax.is_some()
        || schema.mult.is_some();
    let exponent = s.iter().any(|&b| b == b'e' || b == b'E');
    let fraction = s.contains(&b'.');
    (schema.integer && (exponent || fraction)) || (bounded && exponent)
}

/// Every string over `alphabet` of length 1 to `max_len`.
fn candidates(alphabet: &[u8], max_len: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut layer: Vec<Vec<u8>> = vec![Vec::new()];
    for _ in 0..max_len {
        let mut next = Vec::new();
        for s in &layer {
            for &c in alphabet {
                let mut t = s.clone();
                t.push(c);
                next.push(t);
            }
        }
        out.extend(next.iter().cloned());
        layer = next;
    }
    out
}

/// Checks `schema` on every candidate: returns how many valid spellings are accepted.
fn check_on(schema: &Schema, cands: &[Vec<u8>]) -> usize {
    let r = match compile(schema) {
        Ok(r) => r,
        Err(e) => {
            assert_eq!(e.kind, ErrorKind::Unsatisfiable, "{schema:?}: {e}");
            for s in cands {
                assert_ne!(oracle(schema, s), Some(true), "{schema:?}: {e} but {s:?}");
            }
            return 0;
        }
    };
    // Walk the candidates as a trie: a rejected prefix rejects all its extensions.
    let mut accepted = 0;
    let mut dead: HashSet<Vec<u8>> = HashSet::new();
    for s in cands {
        let grammar = if (1..s.len()).any(|k| dead.contains(&s[..k])) {
            false
        } else if !r.accepts_prefix(s) {
            dead.insert(s.clone());
            false
        } else {
            r.accepts(s)
        };
        let want = oracle(schema, s);
        let text = String::from_utf8_lossy(s);
        if grammar {
            assert_eq!(want, Some(true), "{schema:?} accepts {text}");
            accepted += 1;
        } else if want == Some(true) {
            assert!(
                documented_rejection(schema, s),
                "{schema:?} rejects valid {text}"
            );
        }
    }
    accepted
}

/// A small PRNG (SplitMix64) so the random cases are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A short decimal over the digits the candidates use, as JSON text.
    fn decimal(&mut self) -> String {
        const DIGITS: &[u8] = b"0159";
        let mut s = String::new();
        if self.below(2) == 0 {
            s.push('-');
        }
        let int_len = 1 + self.below(2) as usize;
        for k in 0..int_len {
            let d = DIGITS[self.below(4) as usize];
            s.push(if k == 0 && int_len > 1 && d == b'0' {
                '1'
            } else {
                d as char
            });
        }
        let frac_len = self.below(3) as usize;
        if frac_len > 0 {
            s.push('.');
            for _ in 0..frac_len {
                s.push(DIGITS[self.below(4) as usize] as char);
            }
        }
        s
    }
}

const ALPHABET: &[u8] = b"0159-.e";

#[test]
fn unbounded_number_and_integer_are_the_full_syntax() {
    let cands = candidates(b"019-.eE+", 4);
    for integer in [false, true] {
        let s = Schema {
            integer,
            ..Schema::default()
        };
        let r = compile(&s).unwrap();
        for c in &cands {
            let want = oracle(&s, c) == Some(true) && !documented_rejection(&s, c);
            assert_eq!(r.accepts(c), want, "{}", String::from_utf8_lossy(c));
        }
    }
}

/// Two random decimals, in order with high probability, for a lower and an upper bound.
fn bounds(rng: &mut Rng) -> (String, String) {
    let (a, b) = (rng.decimal(), rng.decimal());
    let ord = cmp_values(value(a.as_bytes()).unwrap(), value(b.as_bytes()).unwrap());
    if ord == Ordering::Greater && rng.below(8) != 0 {
        (b, a)
    } else {
        (a, b)
    }
}

/// A random schema; `mult` picks the divisor.
fn random_schema(rng: &mut Rng, mult: Option<String>) -> Schema {
    let (lo, hi) = bounds(rng);
    let mut s = Schema {
        integer: rng.below(3) == 0,
        mult,
        ..Schema::default()
    };
    match rng.below(5) {
        0 => s.min = Some(lo.clone()),
        1 | 2 => s.xmin = Some(lo.clone()),
        3 => {}
        _ => {
            s.min = Some(lo.clone());
            s.xmin = Some(rng.decimal());
        }
    }
    match rng.below(5) {
        0 => s.max = Some(hi.clone()),
        1 | 2 => s.xmax = Some(hi.clone()),
        3 => {}
        _ => {
            s.max = Some(hi.clone());
            s.xmax = Some(rng.decimal());
        }
    }
    s
}

#[test]
fn random_bounds_against_the_oracle() {
    let cands = candidates(ALPHABET, 5);
    let mut rng = Rng(0x5eed);
    let mut accepted = 0;
    for _ in 0..150 {
        let s = random_schema(&mut rng, None);
        accepted += check_on(&s, &cands);
    }
    assert!(accepted > 10_000, "the cases are not all empty: {accepted}");
}

#[test]
fn random_multiples_against_the_oracle() {
    const DIVISORS: &[&str] = &[
        "1", "2", "3", "5", "0.5", "0.25", "0.2", "0.3", "7", "10", "2.5", "0.05", "0.1", "1.5",
        "9", "0.01", "15", "0.15",
    ];
    let cands = candidates(ALPHABET, 5);
    let mut rng = Rng(0xd1f);
    let mut accepted = 0;
    for _ in 0..120 {
        let d = DIVISORS[rng.below(DIVISORS.len() as u64) as usize].to_owned();
        let s = random_schema(&mut rng, Some(d));
        accepted += check_on(&s, &cands);
    }
    assert!(accepted > 5_000, "the cases are not all empty: {accepted}");
}
