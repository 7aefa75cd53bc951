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
//! - `uri`, `uri-reference`: RFC 3986 (ASCII only; IRIs are other formats).
//!
//! Formats outside the list are refused (sieve is strict); lenient mode drops them.

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
    let label = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
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
