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
    let exponent = s.iter().position(|&b| b == b'e' || b == b'E');
    let fraction = s.contains(&b'.');
    // Scientific form: the mantissa is `[1-9](\.[0-9]+)?` or `0(\.0+)?`.
    let scientific = exponent.is_some_and(|e| {
        let m = s[..e].strip_prefix(b"-").unwrap_or(&s[..e]);
        let (int, frac) = match m.iter().position(|&b| b == b'.') {
            Some(dot) => (&m[..dot], &m[dot + 1..]),
            None => (m, &[][..]),
        };
        int.len() == 1 && (int[0] != b'0' || frac.iter().all(|&b| b == b'0'))
    });
    (schema.integer && (exponent.is_some() || fraction))
        || (schema.mult.is_some() && exponent.is_some())
        || (bounded && exponent.is_some() && !scientific)
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

impl Rng {
    /// A decimal with up to 4 integer and 3 fraction digits, any digits, as JSON text.
    fn wide_decimal(&mut self) -> String {
        let mut s = String::new();
        if self.below(2) == 0 {
            s.push('-');
        }
        let int_len = 1 + self.below(4) as usize;
        for k in 0..int_len {
            let d = b'0' + self.below(10) as u8;
            s.push(if k == 0 && int_len > 1 && d == b'0' {
                '7'
            } else {
                d as char
            });
        }
        let frac_len = self.below(4) as usize;
        if frac_len > 0 {
            s.push('.');
            for _ in 0..frac_len {
                s.push((b'0' + self.below(10) as u8) as char);
            }
        }
        s
    }

    /// A random spelling, valid or not, mostly near `near`.
    fn candidate(&mut self, near: &str) -> Vec<u8> {
        let mut s = near.as_bytes().to_vec();
        for _ in 0..1 + self.below(3) {
            match self.below(5) {
                0 if !s.is_empty() => {
                    let i = self.below(s.len() as u64) as usize;
                    s[i] = b"0123456789"[self.below(10) as usize];
                }
                1 => s.push(b"0123456789"[self.below(10) as usize]),
                2 if s.len() > 1 => {
                    s.pop();
                }
                3 => s = self.wide_decimal().into_bytes(),
                _ => {
                    if s.first() == Some(&b'-') {
                        s.remove(0);
                    } else {
                        s.insert(0, b'-');
                    }
                }
            }
        }
        s
    }
}

#[test]
fn wide_bounds_sampled_against_the_oracle() {
    sampled_against_the_oracle(0x51de, false);
}

#[test]
fn bounds_with_exponents_sampled_against_the_oracle() {
    sampled_against_the_oracle(0xe4b, true);
}

/// Random wide bounds (with exponents: `12.5e-3`), half with a divisor: sampled sentences
/// and spellings near the bounds against the oracle.
fn sampled_against_the_oracle(seed: u64, exponents: bool) {
    const DIVISORS: &[&str] = &["3", "0.5", "0.25", "0.07", "12", "0.001", "1"];
    let mut rng = Rng(seed);
    let mut accepted = 0;
    let bound = |rng: &mut Rng| {
        let mut d = rng.wide_decimal();
        if exponents {
            d.push_str(&format!("e{}", rng.below(9) as i64 - 4));
        }
        d
    };
    for case in 0..80 {
        let (a, b) = (bound(&mut rng), bound(&mut rng));
        let (lo, hi) = match cmp_values(value(a.as_bytes()).unwrap(), value(b.as_bytes()).unwrap())
        {
            Ordering::Greater => (b, a),
            _ => (a, b),
        };
        let mut s = Schema {
            integer: rng.below(3) == 0,
            ..Schema::default()
        };
        match rng.below(3) {
            0 => s.min = Some(lo.clone()),
            1 => s.xmin = Some(lo.clone()),
            _ => {}
        }
        match rng.below(3) {
            0 => s.max = Some(hi.clone()),
            1 => s.xmax = Some(hi.clone()),
            _ => {}
        }
        if case % 2 == 1 {
            s.mult = Some(DIVISORS[rng.below(DIVISORS.len() as u64) as usize].to_owned());
        }
        let r = match compile(&s) {
            Ok(r) => r,
            Err(e) => {
                assert_eq!(e.kind, ErrorKind::Unsatisfiable, "{s:?}: {e}");
                continue;
            }
        };
        for seed in 0..60 {
            let Some(sentence) = r.sample(seed, 40) else {
                break;
            };
            if sentence.len() <= 30 {
                let text = String::from_utf8_lossy(&sentence);
                assert_eq!(oracle(&s, &sentence), Some(true), "{s:?} accepts {text}");
            }
        }
        for k in 0..300 {
            let c = rng.candidate(if k % 2 == 0 { &lo } else { &hi });
            let got = r.accepts(&c);
            let want = oracle(&s, &c);
            let text = String::from_utf8_lossy(&c);
            if got {
                assert_eq!(want, Some(true), "{s:?} accepts {text}");
                accepted += 1;
            } else if want == Some(true) {
                assert!(documented_rejection(&s, &c), "{s:?} rejects valid {text}");
            }
        }
    }
    assert!(accepted > 2_000, "the cases are not all empty: {accepted}");
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
    for _ in 0..80 {
        let s = random_schema(&mut rng, None);
        accepted += check_on(&s, &cands);
    }
    assert!(accepted > 5_000, "the cases are not all empty: {accepted}");
}

#[test]
fn random_multiples_against_the_oracle() {
    const DIVISORS: &[&str] = &[
        "1", "2", "3", "5", "0.5", "0.25", "0.2", "0.3", "7", "10", "2.5", "0.05", "0.1", "1.5",
        "9", "0.01", "15", "0.15", "50", "100", "20", "1e3", "150",
    ];
    let cands = candidates(ALPHABET, 5);
    let mut rng = Rng(0xd1f);
    let mut accepted = 0;
    for _ in 0..90 {
        let d = DIVISORS[rng.below(DIVISORS.len() as u64) as usize].to_owned();
        let s = random_schema(&mut rng, Some(d));
        accepted += check_on(&s, &cands);
    }
    assert!(accepted > 3_000, "the cases are not all empty: {accepted}");
}

fn schema(integer: bool, keys: &[(&str, &str)]) -> Schema {
    let mut s = Schema {
        integer,
        ..Schema::default()
    };
    for &(k, v) in keys {
        let slot = match k {
            "minimum" => &mut s.min,
            "exclusiveMinimum" => &mut s.xmin,
            "maximum" => &mut s.max,
            "exclusiveMaximum" => &mut s.xmax,
            "multipleOf" => &mut s.mult,
            _ => panic!("unknown keyword {k}"),
        };
        *slot = Some(v.to_owned());
    }
    s
}

/// Asserts which of `yes` and `no` the schema accepts.
fn check(s: &Schema, yes: &[&str], no: &[&str]) {
    let r = compile(s).unwrap_or_else(|e| panic!("{s:?}: {e}"));
    for y in yes {
        assert!(r.accepts(y.as_bytes()), "{s:?} rejects {y}");
    }
    for n in no {
        assert!(!r.accepts(n.as_bytes()), "{s:?} accepts {n}");
    }
}

fn error(s: &Schema) -> Error {
    match compile(s) {
        Ok(_) => panic!("{s:?} compiles"),
        Err(e) => e,
    }
}

#[test]
fn zero_and_negative_zero() {
    let z = schema(true, &[("minimum", "0"), ("maximum", "0")]);
    check(&z, &["0", "-0"], &["1", "-1", "0.0", "00", "-00"]);
    let z = schema(false, &[("minimum", "-0"), ("maximum", "0.0")]);
    check(&z, &["0", "-0", "0.000", "-0.0"], &["0.001", "-0.001", "1"]);
    let pos = schema(false, &[("exclusiveMinimum", "0")]);
    check(
        &pos,
        &["0.01", "1", "10.5"],
        &["0", "-0", "0.0", "-0.00", "-1"],
    );
    let neg = schema(true, &[("exclusiveMaximum", "0")]);
    check(&neg, &["-1", "-10"], &["0", "-0", "1"]);
    let nonpos = schema(false, &[("maximum", "0")]);
    check(&nonpos, &["0", "-0", "-0.5", "0.0"], &["0.1", "1"]);
}

#[test]
fn exclusive_bounds_at_the_value() {
    let s = schema(
        false,
        &[("exclusiveMinimum", "1.5"), ("exclusiveMaximum", "2.25")],
    );
    check(
        &s,
        &["1.51", "1.500001", "2", "2.0", "2.2", "2.2499999"],
        &["1.5", "1.50", "1.4", "2.25", "2.250", "2.2500001", "3"],
    );
    let s = schema(
        true,
        &[("exclusiveMinimum", "-3"), ("exclusiveMaximum", "3")],
    );
    check(&s, &["-2", "0", "2"], &["-3", "3", "-4", "4"]);
}

#[test]
fn negative_fractions_are_exact() {
    let s = schema(false, &[("minimum", "-273.15")]);
    check(
        &s,
        &["-273.15", "-273.150", "-273.149", "-273", "0", "1000"],
        &["-273.151", "-273.1500001", "-274", "-1000"],
    );
    let s = schema(false, &[("minimum", "-2.5"), ("maximum", "-0.25")]);
    check(
        &s,
        &["-2.5", "-2.50", "-1", "-0.25", "-0.250", "-2.0"],
        &["-2.51", "-0.2", "-0.24999", "0", "-0", "-3"],
    );
}

#[test]
fn decimal_bounds_are_not_binary_floats() {
    let s = schema(false, &[("maximum", "0.1")]);
    check(
        &s,
        &["0.1", "0.0999", "0.10000"],
        &["0.10000000000000001", "0.11"],
    );
    let s = schema(false, &[("exclusiveMaximum", "0.3"), ("minimum", "0.1")]);
    check(
        &s,
        &["0.1", "0.29999999999999998"],
        &["0.3", "0.09999999999999999"],
    );
}

#[test]
fn huge_bounds_compile_to_compact_grammars() {
    let e300 = format!("1{}", "0".repeat(300));
    let just_over = format!("1{}1", "0".repeat(299));
    let nines = "9".repeat(300);
    let s = schema(false, &[("maximum", "1e300")]);
    check(
        &s,
        &[&e300, &format!("{e300}.0"), &nines, &format!("-{e300}0")],
        &[&just_over, &format!("{e300}.01"), &format!("{e300}0")],
    );
    let s = schema(true, &[("exclusiveMinimum", "1e300")]);
    check(
        &s,
        &[&just_over, &format!("{e300}0")],
        &[&e300, &nines, "0"],
    );
    for (integer, keys) in [
        (false, [("minimum", "-1e308"), ("maximum", "1e308")]),
        (true, [("minimum", "-1e308"), ("maximum", "1e308")]),
        (
            false,
            [
                ("exclusiveMinimum", "-1.7976931348623157e308"),
                ("exclusiveMaximum", "1e300"),
            ],
        ),
        (
            true,
            [("exclusiveMinimum", "1e300"), ("exclusiveMaximum", "1e308")],
        ),
        (
            false,
            [
                ("exclusiveMinimum", "1e-300"),
                ("exclusiveMaximum", "1.5e-300"),
            ],
        ),
    ] {
        let mut b = GrammarBuilder::new();
        let nums: Vec<serde_json::Number> = keys.iter().map(|(_, v)| num(v)).collect();
        let spec = NumberSpec {
            integer,
            minimum: (keys[0].0 == "minimum").then_some(&nums[0]),
            exclusive_minimum: (keys[0].0 == "exclusiveMinimum").then_some(&nums[0]),
            maximum: (keys[1].0 == "maximum").then_some(&nums[1]),
            exclusive_maximum: (keys[1].0 == "exclusiveMaximum").then_some(&nums[1]),
            ..NumberSpec::default()
        };
        let e = number_schema(&mut b, &spec).unwrap();
        assert!(e.size() < 2_000, "{keys:?}: {} nodes", e.size());
        assert!(b.is_empty(), "no helper rules for bounds alone");
    }
    let s = schema(
        false,
        &[("exclusiveMinimum", "1e-300"), ("maximum", "2e-300")],
    );
    let tiny = format!("0.{}", "0".repeat(299));
    check(
        &s,
        &[
            &format!("{tiny}11"),
            &format!("{tiny}2"),
            &format!("{tiny}20"),
        ],
        &[
            &format!("{tiny}1"),
            &format!("{tiny}21"),
            "0",
            &format!("{tiny}0"),
        ],
    );
}

#[test]
fn multiples() {
    let s = schema(false, &[("multipleOf", "0.01")]);
    check(
        &s,
        &["1.23", "1.230000", "-0.01", "5", "0"],
        &["1.234", "0.001", "1e2"],
    );
    let s = schema(true, &[("multipleOf", "0.5")]);
    check(&s, &["1", "2", "-3", "0"], &["1.5", "0.5"]);
    let s = schema(
        true,
        &[("multipleOf", "7"), ("minimum", "-20"), ("maximum", "20")],
    );
    check(
        &s,
        &["-14", "-7", "0", "-0", "14"],
        &["-21", "21", "1", "-13"],
    );
    let s = schema(false, &[("multipleOf", "0.3"), ("minimum", "0.3")]);
    check(
        &s,
        &["0.3", "0.6", "0.90", "3", "3.3", "300.0"],
        &["0", "0.1", "1", "0.33"],
    );
    let s = schema(false, &[("multipleOf", "1e-300"), ("maximum", "1")]);
    check(
        &s,
        &[&format!("0.{}1", "0".repeat(299)), "1", "-5.5"],
        &[&format!("0.{}1", "0".repeat(300)), "1.1"],
    );
    let s = schema(
        true,
        &[
            ("multipleOf", "2000"),
            ("minimum", "-1e9"),
            ("maximum", "1e9"),
        ],
    );
    check(
        &s,
        &["0", "-0", "2000", "-4000", "1000000000", "-999998000"],
        &["1000", "3000", "2", "1000002000", "200"],
    );
    let e300 = format!("1{}", "0".repeat(300));
    let s = schema(true, &[("multipleOf", "1e300")]);
    check(
        &s,
        &[
            "0",
            &e300,
            &format!("-3{}", "0".repeat(300)),
            &format!("{e300}0"),
        ],
        &[&format!("1{}", "0".repeat(299)), "1", &format!("{e300}1")],
    );
    let s = schema(false, &[("multipleOf", "50"), ("exclusiveMaximum", "100")]);
    check(
        &s,
        &["50", "50.00", "0", "-50", "-1000"],
        &["100", "25", "50.5", "150"],
    );
    // A divisor with trailing zeros costs a handful of rules once minimised.
    let mut b = GrammarBuilder::new();
    let thousand = num("1000");
    let spec = NumberSpec {
        integer: true,
        multiple_of: Some(&thousand),
        ..NumberSpec::default()
    };
    number_schema(&mut b, &spec).unwrap();
    assert!(b.len() < 20, "{} rules for multipleOf 1000", b.len());
}

#[test]
fn errors_name_the_keyword() {
    let e = error(&schema(false, &[("multipleOf", "0")]));
    assert_eq!(
        (e.kind, e.pointer.as_str()),
        (ErrorKind::Invalid, "/x/multipleOf")
    );
    let e = error(&schema(false, &[("multipleOf", "-2")]));
    assert_eq!(e.kind, ErrorKind::Invalid);
    let e = error(&schema(false, &[("minimum", "5"), ("maximum", "3")]));
    assert_eq!(
        (e.kind, e.keyword.as_str()),
        (ErrorKind::Unsatisfiable, "maximum")
    );
    let e = error(&schema(
        false,
        &[("minimum", "3"), ("exclusiveMaximum", "3")],
    ));
    assert_eq!(e.kind, ErrorKind::Unsatisfiable);
    let e = error(&schema(
        true,
        &[("exclusiveMinimum", "1"), ("exclusiveMaximum", "2")],
    ));
    assert_eq!(e.kind, ErrorKind::Unsatisfiable);
    let e = error(&schema(
        true,
        &[("minimum", "1"), ("maximum", "9"), ("multipleOf", "10")],
    ));
    assert_eq!(
        (e.kind, e.keyword.as_str()),
        (ErrorKind::Unsatisfiable, "multipleOf")
    );
    let e = error(&schema(false, &[("multipleOf", "0.123456789")]));
    assert_eq!(
        (e.kind, e.keyword.as_str()),
        (ErrorKind::Unsupported, "multipleOf")
    );
    let e = error(&schema(
        true,
        &[
            ("minimum", "-1e308"),
            ("maximum", "1e308"),
            ("multipleOf", "7919"),
        ],
    ));
    assert_eq!(
        (e.kind, e.keyword.as_str()),
        (ErrorKind::Limit, "multipleOf")
    );
    // Integers in a fractional interval: none.
    let e = error(&schema(true, &[("minimum", "0.1"), ("maximum", "0.9")]));
    assert_eq!(e.kind, ErrorKind::Unsatisfiable);
}

#[test]
fn large_multiples_stay_bounded() {
    for (integer, keys, max_rules) in [
        (
            true,
            vec![
                ("minimum", "-1e308"),
                ("maximum", "1e308"),
                ("multipleOf", "7"),
            ],
            5_000,
        ),
        (
            false,
            vec![
                ("minimum", "-1e300"),
                ("maximum", "1.5e300"),
                ("multipleOf", "0.07"),
            ],
            5_000,
        ),
        (
            false,
            vec![
                ("minimum", "-1e30"),
                ("maximum", "1.234e300"),
                ("multipleOf", "0.0003"),
            ],
            2_000,
        ),
        (true, vec![("multipleOf", "9973")], 20_000),
        (
            true,
            vec![("minimum", "0"), ("maximum", "1e9"), ("multipleOf", "1000")],
            200,
        ),
        (
            true,
            vec![
                ("minimum", "-1e308"),
                ("maximum", "1e308"),
                ("multipleOf", "100"),
            ],
            3_000,
        ),
        (
            false,
            vec![
                ("minimum", "-123.456"),
                ("maximum", "1.234e3"),
                ("multipleOf", "1e-30"),
            ],
            1_000,
        ),
    ] {
        let mut b = GrammarBuilder::new();
        let nums: Vec<serde_json::Number> = keys.iter().map(|(_, v)| num(v)).collect();
        let find = |k: &str| keys.iter().position(|kv| kv.0 == k).map(|i| &nums[i]);
        let spec = NumberSpec {
            integer,
            minimum: find("minimum"),
            maximum: find("maximum"),
            multiple_of: find("multipleOf"),
            ..NumberSpec::default()
        };
        number_schema(&mut b, &spec).unwrap_or_else(|e| panic!("{keys:?}: {e}"));
        assert!(b.len() <= max_rules, "{keys:?}: {} rules", b.len());
    }
    let s = schema(false, &[("maximum", "1e-30"), ("multipleOf", "1e-31")]);
    let tiny = format!("0.{}1", "0".repeat(29));
    check(
        &s,
        &[
            &tiny,
            &format!("{tiny}0"),
            &format!("0.{}5", "0".repeat(30)),
        ],
        &[&format!("{tiny}1"), &format!("0.{}55", "0".repeat(30))],
    );
}

#[test]
fn scientific_spellings_with_bounds() {
    let s = schema(false, &[("minimum", "0"), ("maximum", "1")]);
    check(
        &s,
        &[
            "1e-5", "5E-0003", "1e0", "1.0e+0", "1E-0", "0e99", "-0.0e5", "9.99e-1", "1e-400",
        ],
        &[
            "1.1e0", "2e0", "1e1", "-1e-5", "10e-1", "0.5e0", "1e", "1e+",
        ],
    );
    let s = schema(
        false,
        &[("exclusiveMinimum", "-1e308"), ("maximum", "1e308")],
    );
    check(
        &s,
        &[
            "1e308",
            "1.0000e308",
            "9.99e307",
            "-9.9e307",
            "-1.5e3",
            "0E0",
        ],
        &["1.00001e308", "1.7e308", "-1e308", "-1.0e308", "2e308"],
    );
    let s = schema(false, &[("exclusiveMinimum", "0.00125")]);
    check(
        &s,
        &["1.26e-3", "1.25000001e-3", "2e-3", "1e5", "1E+100"],
        &["1.25e-3", "1.2e-3", "9.99e-4", "0e0", "-1e5"],
    );
    let cands = candidates(b"015-.eE+", 5);
    let mut rng = Rng(0xe7);
    let mut exponents = 0;
    for _ in 0..16 {
        let mut s = random_schema(&mut rng, None);
        s.integer = false;
        let Ok(r) = compile(&s) else { continue };
        for c in &cands {
            let got = r.accepts(c);
            let want = oracle(&s, c);
            if got {
                assert_eq!(
                    want,
                    Some(true),
                    "{s:?} accepts {}",
                    String::from_utf8_lossy(c)
                );
                exponents += usize::from(c.iter().any(|&b| b == b'e' || b == b'E'));
            } else if want == Some(true) {
                assert!(
                    documented_rejection(&s, c),
                    "{s:?} rejects {}",
                    String::from_utf8_lossy(c)
                );
            }
        }
    }
    assert!(exponents > 1_000, "{exponents} exponent spellings accepted");
}
