//! `format` as regular languages: each supported format is an anchored ECMA-262 pattern
//! (whole-string match) compiled by the `pattern` module, plus a length bound where the
//! format has one.
//!
//! Invariant: a format's language never contains a string its specification forbids. Where
//! exactness would cost an automaton far too large, the language is a documented subset:
//! - `time`, `date-time`: a leap second (`:60`) is accepted only at `23:59:60` with a zero
//!   offset (`Z`, `z`, `+00:00`, `-00:00`); RFC 3339 also allows it at other local times
//!   whose UTC time is 23:59, which would need an automaton remembering hour and minute;
//! - `email`: RFC 5321 `Mailbox` (dot-string or quoted local part; domain or IPv4/IPv6 address
//!   literal) without the RFC's separate length limits, and without general address
//!   literals (no tag but `IPv6` is registered);
//! - `uri`, `uri-reference`: RFC 3986 (ASCII only; IRIs are other formats);
//! - `hostname`: RFC 1123 labels (1–63 letters, digits, hyphens, no hyphen at either end),
//!   at most 253 characters, and no label with `--` in positions 3–4: A-labels (`xn--…`) are
//!   valid only if their Punycode decodes to a valid U-label, which no regular language
//!   expresses, so all of them are refused.
//!
//! `hostname` alone is compiled by [`hostname`] rather than through the automaton: the
//! 253-character bound times the 63-character label bound makes a product automaton of
//! ~28,000 states, while the grammar here has one rule per total length.
//!
//! Formats outside the list are refused (sieve is strict); lenient mode drops them.

use sieve_ir::{Expr, GrammarBuilder, IrError};

/// The anchored pattern of `format` and its longest allowed length in characters, or `None`
/// for a format sieve does not know.
pub(crate) fn format_pattern(format: &str) -> Option<(String, Option<u64>)> {
    let dec_octet = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
    let ipv4 = format!(r"{dec_octet}(?:\.{dec_octet}){{3}}");
    let h16 = "[0-9A-Fa-f]{1,4}";
    let ls32 = format!("(?:{h16}:{h16}|{ipv4})");
    let ipv6 = format!(
        "(?:(?:{h16}:){{6}}{ls32}\
         |::(?:{h16}:){{5}}{ls32}\
         |(?:{h16})?::(?:{h16}:){{4}}{ls32}\
         |(?:(?:{h16}:){{0,1}}{h16})?::(?:{h16}:){{3}}{ls32}\
         |(?:(?:{h16}:){{0,2}}{h16})?::(?:{h16}:){{2}}{ls32}\
         |(?:(?:{h16}:){{0,3}}{h16})?::{h16}:{ls32}\
         |(?:(?:{h16}:){{0,4}}{h16})?::{ls32}\
         |(?:(?:{h16}:){{0,5}}{h16})?::{h16}\
         |(?:(?:{h16}:){{0,6}}{h16})?::)"
    );
    // RFC 3339 full-date with month lengths and Gregorian leap years.
    let leap_year = "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)";
    let date = format!(
        "(?:[0-9]{{4}}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])\
         |(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)\
         |02-(?:0[1-9]|1[0-9]|2[0-8]))\
         |{leap_year}-02-29)"
    );
    let frac = r"(?:\.[0-9]+)?";
    let offset = "(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])";
    let zero_offset = "(?:[Zz]|[+-]00:00)";
    let time = format!(
        "(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]{frac}{offset}\
         |23:59:60{frac}{zero_offset})"
    );
    let digits = "[0-9]+";
    let dur_time =
        format!("T(?:{digits}H(?:{digits}M(?:{digits}S)?)?|{digits}M(?:{digits}S)?|{digits}S)");
    let duration = format!(
        "P(?:(?:{digits}D|{digits}M(?:{digits}D)?|{digits}Y(?:{digits}M(?:{digits}D)?)?)(?:{dur_time})?\
         |{dur_time}|{digits}W)"
    );
    // RFC 1123 labels of 1–63 characters, without `--` in positions 3–4 (RFC 5891 §4.2.3.1:
    // such labels are A-labels or reserved; A-labels would need Punycode checks).
    let (a, l) = ("[A-Za-z0-9]", "[A-Za-z0-9-]");
    let label = format!("{a}(?:{a}|{l}{a}|{l}{l}{a}|{l}(?:{a}{l}|-{a}){l}{{0,58}}{a})?");
    let hostname = format!(r"{label}(?:\.{label})*");
    // RFC 5321 Mailbox.
    let atext = r"[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]";
    let local = format!(r#"(?:{atext}+(?:\.{atext}+)*|"(?:[ !#-\[\]-~]|\\[ -~])*")"#);
    let sub_domain = "[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?";
    let email = format!(r"{local}@(?:{sub_domain}(?:\.{sub_domain})*|\[(?:{ipv4}|IPv6:{ipv6})\])");
    // RFC 3986.
    let unreserved = r"A-Za-z0-9\-._~";
    let sub_delims = "!$&'()*+,;=";
    let pct = "%[0-9A-Fa-f]{2}";
    let pchar = format!("(?:[{unreserved}{sub_delims}:@]|{pct})");
    let userinfo = format!("(?:[{unreserved}{sub_delims}:]|{pct})*");
    let ip_literal = format!(r"\[(?:{ipv6}|v[0-9A-Fa-f]+\.[{unreserved}{sub_delims}:]+)\]");
    let reg_name = format!("(?:[{unreserved}{sub_delims}]|{pct})*");
    let authority = format!("(?:{userinfo}@)?(?:{ip_literal}|{reg_name})(?::[0-9]*)?");
    let segment = format!("{pchar}*");
    let segment_nz = format!("{pchar}+");
    let segment_nz_nc = format!("(?:[{unreserved}{sub_delims}@]|{pct})+");
    let path_abempty = format!("(?:/{segment})*");
    let path_absolute = format!("/(?:{segment_nz}(?:/{segment})*)?");
    let path_rootless = format!("{segment_nz}(?:/{segment})*");
    let path_noscheme = format!("{segment_nz_nc}(?:/{segment})*");
    let query = format!("(?:[{unreserved}{sub_delims}:@/?]|{pct})*");
    let tail = format!(r"(?:\?{query})?(?:#{query})?");
    let uri = format!(
        "[A-Za-z][A-Za-z0-9+.-]*:(?://{authority}{path_abempty}|{path_absolute}|{path_rootless}|){tail}"
    );
    let relative_ref =
        format!("(?://{authority}{path_abempty}|{path_absolute}|{path_noscheme}|){tail}");
    let uuid = "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}";
    Some(match format {
        "date-time" => (format!("{date}[Tt]{time}"), None),
        "date" => (date, None),
        "time" => (time, None),
        "duration" => (duration, None),
        "email" => (email, None),
        "hostname" => (hostname, Some(253)),
        "ipv4" => (ipv4, None),
        "ipv6" => (ipv6, None),
        "uuid" => (uuid.to_owned(), None),
        "uri" => (uri, None),
        "uri-reference" => (format!("(?:{uri}|{relative_ref})"), None),
        _ => return None,
    })
}

/// Every spelling of one character out of a set, possibly through a helper rule.
pub(crate) type Speller<'a> =
    dyn FnMut(&mut GrammarBuilder, &[(u32, u32)]) -> Result<Expr, IrError> + 'a;

/// `hostname` (see the module docs) with a length in `min..=max` characters (`max` at most
/// 253), spelled by `spell` (which maps a set of ASCII characters to every spelling of one of
/// them): one rule per total length `k` at which a label may start,
/// `H_k ::= Label_j D_{k+j}?` for each label length `j` (without the `?` where no hostname
/// ends at `k + j`), with `D_m ::= "." H_{m+1}` and `Label_j` a fixed expression per length.
/// No rule is nullable, so normalisation need not rewrite them. `None` when no hostname
/// fits.
pub(crate) fn hostname(
    builder: &mut GrammarBuilder,
    spell: &mut Speller<'_>,
    min: u64,
    max: u64,
) -> Result<Option<Expr>, IrError> {
    let max = max.min(253) as usize;
    let min = min as usize;
    let alnum = [(0x30, 0x39), (0x41, 0x5a), (0x61, 0x7a)];
    let ldh = [(0x2d, 0x2d), (0x30, 0x39), (0x41, 0x5a), (0x61, 0x7a)];
    let a = spell(builder, &alnum)?;
    let l = spell(builder, &ldh)?;
    let hyphen = spell(builder, &[(0x2d, 0x2d)])?;
    let dot = spell(builder, &[(0x2e, 0x2e)])?;
    // ends[k]: a hostname may end at total length k; live[k]: a label starting at k leads to
    // an end.
    let ends = |k: usize| k >= min && k <= max;
    let mut live = vec![false; max + 2];
    for k in (0..=max).rev() {
        live[k] = (1..=63.min(max - k)).any(|j| ends(k + j) || live.get(k + j + 1) == Some(&true));
    }
    if !live[0] {
        return Ok(None);
    }
    let base = builder.fresh("hostname")?;
    let base_name = builder.name(base).to_owned();
    let declare = |builder: &mut GrammarBuilder, name: String| match builder.declare(&name) {
        Ok(id) => Ok(id),
        Err(_) => builder.fresh(&name),
    };
    let mut labels = Vec::with_capacity(64);
    for j in 1..=63.min(max) {
        let body = match j {
            1 => a.clone(),
            2 => Expr::seq([a.clone(), a.clone()]),
            3 => Expr::seq([a.clone(), l.clone(), a.clone()]),
            4 => Expr::seq([a.clone(), l.clone(), l.clone(), a.clone()]),
            _ => Expr::seq([
                a.clone(),
                l.clone(),
                Expr::choice([
                    Expr::seq([a.clone(), l.clone()]),
                    Expr::seq([hyphen.clone(), a.clone()]),
                ])
                .expect("two alternatives"),
                Expr::repeat(l.clone(), j as u32 - 5, Some(j as u32 - 5))?,
                a.clone(),
            ]),
        };
        let id = declare(builder, format!("{base_name}_label{j}"))?;
        builder.define(id, body);
        labels.push(id);
    }
    // heads[k]: H_k; dots[k]: `"." H_{k+1}`, the way on after a label ending at k.
    let mut heads = vec![None; max + 2];
    let mut dots = vec![None; max + 1];
    for k in 0..=max {
        if live[k] {
            heads[k] = Some(if k == 0 {
                base
            } else {
                declare(builder, format!("{base_name}_h{k}"))?
            });
        }
        if live[k + 1] {
            dots[k] = Some(declare(builder, format!("{base_name}_dot{k}"))?);
        }
    }
    for k in 0..=max {
        if let (Some(id), Some(next)) = (dots[k], heads[k + 1]) {
            builder.define(id, Expr::seq([dot.clone(), Expr::rule(next)]));
        }
        let Some(id) = heads[k] else { continue };
        let alternatives = (1..=63.min(max - k)).filter_map(|j| {
            let label = Expr::rule(labels[j - 1]);
            match (ends(k + j), dots[k + j]) {
                (true, Some(more)) => Some(Expr::seq([label, Expr::optional(Expr::rule(more))])),
                (true, None) => Some(label),
                (false, Some(more)) => Some(Expr::seq([label, Expr::rule(more)])),
                (false, None) => None,
            }
        });
        builder.define(id, Expr::choice(alternatives).expect("live"));
    }
    Ok(Some(Expr::rule(base)))
}
