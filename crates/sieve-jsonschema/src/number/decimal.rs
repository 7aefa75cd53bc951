//! Exact decimals: the value a schema's numeric keyword denotes, as written.
//!
//! serde_json (without `arbitrary_precision`) keeps a number as `u64`, `i64` or `f64`; its
//! `Display` prints the shortest text that reads back to the same value, which for a bound
//! written `0.1` or `-273.15` or `1e300` is that very text. We read that text as an exact
//! decimal, never through binary floating point.
//!
//! Invariants of [`Decimal`]: `digits` are ASCII digits with no leading and no trailing zero;
//! zero is `digits` empty, `negative` false, `exponent` 0. So equal values have equal
//! representations and the derived equality is value equality.
//!
//! Digit strings (`&[u8]` of ASCII digits) describe magnitudes: an integer part is canonical
//! (`"0"` or no leading zero), a fraction part has no trailing zero (`""` for none).

use std::cmp::Ordering;

/// The largest decimal exponent magnitude accepted; `f64` stays far inside it.
const MAX_EXPONENT: i64 = 4096;

/// An exact decimal: `(-1)^negative × digits × 10^exponent`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Decimal {
    negative: bool,
    digits: Vec<u8>,
    exponent: i64,
}

impl Decimal {
    /// Zero.
    pub(crate) fn zero() -> Decimal {
        Decimal {
            negative: false,
            digits: Vec::new(),
            exponent: 0,
        }
    }

    /// Reads `-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?` exactly; `None` for anything else or an
    /// exponent beyond [`MAX_EXPONENT`].
    pub(crate) fn parse(text: &str) -> Option<Decimal> {
        let mut s = text.as_bytes();
        let negative = s.first() == Some(&b'-');
        if negative {
            s = &s[1..];
        }
        let int_len = s.iter().take_while(|b| b.is_ascii_digit()).count();
        if int_len == 0 {
            return None;
        }
        let mut digits = s[..int_len].to_vec();
        s = &s[int_len..];
        let mut exponent: i64 = 0;
        if s.first() == Some(&b'.') {
            let frac_len = s[1..].iter().take_while(|b| b.is_ascii_digit()).count();
            if frac_len == 0 {
                return None;
            }
            digits.extend_from_slice(&s[1..=frac_len]);
            exponent = -i64::try_from(frac_len).ok()?;
            s = &s[1 + frac_len..];
        }
        if matches!(s.first(), Some(b'e' | b'E')) {
            s = &s[1..];
            let exp_negative = s.first() == Some(&b'-');
            if matches!(s.first(), Some(b'+' | b'-')) {
                s = &s[1..];
            }
            if s.is_empty() || s.len() > 6 || !s.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let e: i64 = std::str::from_utf8(s).ok()?.parse().ok()?;
            exponent += if exp_negative { -e } else { e };
        } else if !s.is_empty() {
            return None;
        }
        let lead = digits.iter().take_while(|&&b| b == b'0').count();
        digits.drain(..lead);
        let trail = digits.iter().rev().take_while(|&&b| b == b'0').count();
        digits.truncate(digits.len() - trail);
        exponent += i64::try_from(trail).ok()?;
        if digits.is_empty() {
            return Some(Decimal::zero());
        }
        let adjusted = exponent + i64::try_from(digits.len()).ok()?;
        if adjusted.abs() > MAX_EXPONENT {
            return None;
        }
        Some(Decimal {
            negative,
            digits,
            exponent,
        })
    }

    /// The decimal a JSON number was written as.
    ///
    /// Integers are exact. A float is read back as the shortest decimal that serde_json
    /// parses to the same `f64`: serde_json without `float_roundtrip` may round `1e-30` to
    /// the neighbour of the nearest `f64`, whose shortest text is `9.999999999999999e-31`,
    /// and the shortest preimage recovers `1e-30`. So any bound written with at most 15
    /// significant digits is recovered exactly.
    pub(crate) fn from_json(n: &serde_json::Number) -> Option<Decimal> {
        if let (true, Some(f)) = (n.is_f64(), n.as_f64()) {
            for precision in 0..17 {
                let text = format!("{f:.precision$e}");
                let back = serde_json::from_str::<f64>(&text).ok();
                if back.map(f64::to_bits) == Some(f.to_bits()) {
                    return Decimal::parse(&text);
                }
            }
        }
        Decimal::parse(&n.to_string())
    }

    /// Whether this is zero.
    pub(crate) fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// Whether this is below zero.
    pub(crate) fn is_negative(&self) -> bool {
        self.negative
    }

    /// `|self|`.
    pub(crate) fn abs(&self) -> Decimal {
        let mut d = self.clone();
        d.negative = false;
        d
    }

    /// The significant digits (ASCII, no leading or trailing zero; empty for zero).
    pub(crate) fn digits(&self) -> &[u8] {
        &self.digits
    }

    /// The power of ten the digits are scaled by.
    pub(crate) fn exponent(&self) -> i64 {
        self.exponent
    }

    /// The integer part of `|self|`, canonical (`"0"` when below one).
    pub(crate) fn int_part(&self) -> Vec<u8> {
        let len = self.digits.len() as i64;
        let point = len + self.exponent;
        if point <= 0 {
            return b"0".to_vec();
        }
        let mut out: Vec<u8> = self.digits[..point.min(len) as usize].to_vec();
        out.resize(point as usize, b'0');
        out
    }

    /// The fraction digits of `|self|`, with no trailing zero (`""` for an integer).
    pub(crate) fn frac_part(&self) -> Vec<u8> {
        if self.exponent >= 0 {
            return Vec::new();
        }
        let len = self.digits.len() as i64;
        let point = len + self.exponent;
        let mut out = vec![b'0'; (-point).max(0) as usize];
        out.extend_from_slice(&self.digits[point.max(0) as usize..]);
        out
    }

    /// Compares magnitudes.
    fn cmp_abs(&self, other: &Decimal) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        let a = self.exponent + self.digits.len() as i64;
        let b = other.exponent + other.digits.len() as i64;
        a.cmp(&b).then_with(|| self.digits.cmp(&other.digits))
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Decimal) -> Ordering {
        match (self.negative, other.negative) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => self.cmp_abs(other),
            (true, true) => other.cmp_abs(self),
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Decimal) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Display for Decimal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.negative {
            f.write_str("-")?;
        }
        let int = self.int_part();
        let frac = self.frac_part();
        if int.len() > 40 || frac.len() > 40 {
            // Scientific form for the huge and the tiny: d.ddde±k.
            let (first, rest) = self.digits.split_first().unwrap_or((&b'0', &[]));
            let e = self.exponent + self.digits.len() as i64 - 1;
            f.write_str(&(*first as char).to_string())?;
            if !rest.is_empty() {
                f.write_str(".")?;
                f.write_str(std::str::from_utf8(rest).unwrap_or("?"))?;
            }
            return write!(f, "e{e}");
        }
        f.write_str(std::str::from_utf8(&int).unwrap_or("?"))?;
        if !frac.is_empty() {
            f.write_str(".")?;
            f.write_str(std::str::from_utf8(&frac).unwrap_or("?"))?;
        }
        Ok(())
    }
}

/// Compares canonical integer digit strings.
pub(crate) fn cmp_int(a: &[u8], b: &[u8]) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// `a + 1` for a canonical integer digit string.
pub(crate) fn inc(a: &[u8]) -> Vec<u8> {
    let mut out = a.to_vec();
    for d in out.iter_mut().rev() {
        if *d == b'9' {
            *d = b'0';
        } else {
            *d += 1;
            return out;
        }
    }
    out.insert(0, b'1');
    out
}

/// `a - 1` for a canonical integer digit string; `None` for `"0"`.
pub(crate) fn dec(a: &[u8]) -> Option<Vec<u8>> {
    if a == b"0" {
        return None;
    }
    let mut out = a.to_vec();
    for d in out.iter_mut().rev() {
        if *d == b'0' {
            *d = b'9';
        } else {
            *d -= 1;
            break;
        }
    }
    if out.len() > 1 && out[0] == b'0' {
        out.remove(0);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    #[test]
    fn parse_is_exact_and_canonical() {
        assert_eq!(d("0.1"), d("1e-1"));
        assert_eq!(d("-273.150"), d("-27315e-2"));
        assert_eq!(d("-0"), Decimal::zero());
        assert_eq!(d("0.000"), Decimal::zero());
        assert_eq!(d("1e300").int_part().len(), 301);
        assert_eq!(d("-273.15").int_part(), b"273");
        assert_eq!(d("-273.15").frac_part(), b"15");
        assert_eq!(d("0.0012").frac_part(), b"0012");
        assert_eq!(d("0.0012").int_part(), b"0");
        assert_eq!(d("120").frac_part(), b"");
        assert_eq!(d("1.5e+2").int_part(), b"150");
        for bad in ["", "-", ".5", "1.", "1e", "e5", "1x", "+1", "1e1234567"] {
            assert_eq!(Decimal::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn json_floats_read_as_written() {
        for text in [
            "1e-30",
            "0.1",
            "-273.15",
            "1e300",
            "1.7976931348623157e308",
            "5e-324",
        ] {
            let n: serde_json::Number = serde_json::from_str(text).unwrap();
            assert_eq!(Decimal::from_json(&n), Decimal::parse(text), "{text}");
        }
        let n: serde_json::Number = serde_json::from_str("18446744073709551615").unwrap();
        assert_eq!(
            Decimal::from_json(&n).unwrap().int_part(),
            b"18446744073709551615"
        );
    }

    #[test]
    fn order_is_numeric() {
        let mut v: Vec<Decimal> = ["-1e300", "-273.15", "-1", "-0.5", "0", "0.001", "0.1", "1"]
            .iter()
            .map(|s| d(s))
            .collect();
        let sorted = v.clone();
        v.reverse();
        v.sort();
        assert_eq!(v, sorted);
        assert_eq!(d("2.50").cmp(&d("2.5")), Ordering::Equal);
    }

    #[test]
    fn digit_string_arithmetic() {
        assert_eq!(inc(b"0"), b"1");
        assert_eq!(inc(b"199"), b"200");
        assert_eq!(inc(b"999"), b"1000");
        assert_eq!(dec(b"1000"), Some(b"999".to_vec()));
        assert_eq!(dec(b"1"), Some(b"0".to_vec()));
        assert_eq!(dec(b"10"), Some(b"9".to_vec()));
        assert_eq!(dec(b"0"), None);
        assert_eq!(cmp_int(b"99", b"100"), Ordering::Less);
    }
}
