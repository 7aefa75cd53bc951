//! String schemas through [`sieve_jsonschema::compile`]: `minLength`, `maxLength`, `pattern`
//! and `format`, under both [`Escapes`] policies.
//!
//! Invariants checked:
//! - a grammar never accepts a JSON text whose decoded value the schema rejects
//!   (accepted-invalid = 0, no exceptions), whatever the spelling of its characters;
//! - under [`Escapes::Any`] every spelling RFC 8259 allows of a valid value is accepted, and
//!   under [`Escapes::Canonical`] exactly `serde_json`'s own, except the documented format
//!   subsets listed in [`REJECTED_VALID`];
//! - oracles: the `regex` crate on decoded values (for patterns written to mean the same in
//!   both dialects), `serde_json` for decoding sampled sentences, and the
//!   JSON-Schema-Test-Suite fixtures under `tests/strings_fixtures/` (draft 2020-12, MIT, see
//!   the `LICENSE` there).

use std::path::Path;

use proptest::prelude::*;
use serde_json::{json, Value};
use sieve_ir::reference::Recognizer;
use sieve_jsonschema::{compile, ErrorKind, Escapes, Options};

fn options(escapes: Escapes) -> Options {
    Options {
        escapes,
        ..Options::default()
    }
}

fn recognizer(schema: &Value, escapes: Escapes) -> Recognizer {
    let compiled = compile(schema, &options(escapes)).unwrap_or_else(|e| panic!("{schema}: {e}"));
    Recognizer::new(&compiled.grammar).expect("small repetition bounds")
}

/// Every way to write `c` inside a JSON string under [`Escapes::Any`] (hex digits in one case
/// per spelling: lower, upper).
fn spellings(c: char) -> Vec<String> {
    let canonical = serde_json::to_string(&c.to_string()).unwrap();
    let mut out = vec![canonical[1..canonical.len() - 1].to_owned()];
    if c == '/' {
        out.push("\\/".to_owned());
    }
    let mut units = [0u16; 2];
    let units = c.encode_utf16(&mut units);
    for upper in [false, true] {
        let mut s = String::new();
        for unit in units.iter() {
            if upper {
                s.push_str(&format!("\\u{unit:04X}"));
            } else {
                s.push_str(&format!("\\u{unit:04x}"));
            }
        }
        out.push(s);
    }
    out
}

/// A JSON text for `value`, character `i` spelled by `choice[i]` (modulo its spellings).
fn spelled(value: &str, choice: &[usize]) -> String {
    let mut out = String::from("\"");
    for (i, c) in value.chars().enumerate() {
        let all = spellings(c);
        out.push_str(&all[choice.get(i).copied().unwrap_or(0) % all.len()]);
    }
    out.push('"');
    out
}

const ALPHABET: &[char] = &[
    'a',
    'b',
    'c',
    'x',
    'A',
    '0',
    '7',
    '-',
    '_',
    '.',
    ' ',
    '"',
    '\\',
    '/',
    '\n',
    '\t',
    '\u{0}',
    '\u{1f}',
    '\u{7f}',
    '\u{e9}',
    '\u{a0}',
    '\u{2028}',
    '\u{661}',
    '\u{ffff}',
    '\u{1f600}',
    '@',
    ':',
];

fn value_strategy(max_len: usize) -> impl Strategy<Value = (String, Vec<usize>)> {
    (
        prop::collection::vec(prop::sample::select(ALPHABET), 0..=max_len),
        prop::collection::vec(0usize..8, max_len),
    )
        .prop_map(|(chars, choice)| (chars.into_iter().collect(), choice))
}

/// `(ECMA-262 pattern, the same language in the regex crate's dialect)`.
const PATTERNS: &[(&str, &str)] = &[
    ("a", "a"),
    ("^a", "^a"),
    ("c$", "c$"),
    ("^[a-c]+$", "^[a-c]+$"),
    ("^(ab|x)*$", "^(ab|x)*$"),
    ("b.c", "b[^\n\r\u{2028}\u{2029}]c"),
    ("[^a-z]", "[^a-z]"),
    ("\\d\\w", "[0-9][0-9A-Za-z_]"),
    ("^\\S*$", "^[^\t\n\x0b\x0c\r \u{a0}\u{1680}\u{2000}-\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}]*$"),
    ("x{2}|[\\u00e9\\uD83D\\uDE00]", "x{2}|[\u{e9}\u{1f600}]"),
    ("^[\"\\\\/]", "^[\"\\\\/]"),
    ("a?b?c?$", "a?b?c?$"),
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Pattern and lengths against the regex crate, in every spelling.
    #[test]
    fn pattern_and_lengths_agree_with_regex(
        which in 0..PATTERNS.len(),
        min in 0u64..3,
        extra in prop::option::of(0u64..4),
        values in prop::collection::vec(value_strategy(6), 24),
    ) {
        let (ecma, oracle) = PATTERNS[which];
        let oracle = regex::Regex::new(oracle).unwrap();
        let max = extra.map(|e| min + e);
        let mut schema = json!({"type": "string", "pattern": ecma, "minLength": min});
        if let Some(max) = max {
            schema["maxLength"] = json!(max);
        }
        let valid = |value: &str| {
            let n = value.chars().count() as u64;
            oracle.is_match(value) && n >= min && max.is_none_or(|m| n <= m)
        };
        if let Err(e) = compile(&schema, &Options::default()) {
            // Only a schema no value meets may fail here.
            prop_assert_eq!(e.kind, ErrorKind::Unsatisfiable, "{}", e);
            for (value, _) in &values {
                prop_assert!(!valid(value), "{} rejects {:?}", schema, value);
            }
            return Ok(());
        }
        let any = recognizer(&schema, Escapes::Any);
        let canonical = recognizer(&schema, Escapes::Canonical);
        for (value, choice) in &values {
            let valid = valid(value);
            let compact = serde_json::to_string(value).unwrap();
            prop_assert_eq!(canonical.accepts(compact.as_bytes()), valid, "{} {}", schema, compact);
            prop_assert_eq!(any.accepts(compact.as_bytes()), valid, "{} {}", schema, compact);
            let other = spelled(value, choice);
            prop_assert_eq!(any.accepts(other.as_bytes()), valid, "{} {}", schema, other);
            if other != compact {
                prop_assert!(!canonical.accepts(other.as_bytes()), "{} {}", schema, other);
            }
        }
        // Soundness from the grammar's side: sampled sentences decode to valid values.
        for seed in 0..24 {
            let Some(sample) = any.sample(seed, 30) else { continue };
            let text = String::from_utf8(sample).unwrap();
            let value: String = serde_json::from_str(&text).unwrap();
            prop_assert!(valid(&value), "{} sampled {}", schema, text);
        }
    }
}

#[test]
fn lengths_count_characters_not_bytes_or_escapes() {
    let schema = json!({"type": "string", "minLength": 2, "maxLength": 2});
    let r = recognizer(&schema, Escapes::Any);
    for ok in [
        r#""ab""#,
        "\"\u{e9}\u{1f600}\"",
        r#""\ud83d\ude00\u00E9""#,
        r#""\/\n""#,
    ] {
        assert!(r.accepts(ok.as_bytes()), "{ok}");
    }
    for bad in [
        r#""a""#,
        r#""abc""#,
        r#""\ud83d\ude00""#,
        r#""\ud83d\u0041""#,
        r#""\ude00a""#,
    ] {
        assert!(!r.accepts(bad.as_bytes()), "{bad}");
    }
}

#[test]
fn errors_name_the_keyword() {
    let cases = [
        (
            json!({"pattern": "(?<=a)b"}),
            ErrorKind::Unsupported,
            "/pattern",
        ),
        (
            json!({"pattern": "\\1(a)"}),
            ErrorKind::Unsupported,
            "/pattern",
        ),
        (
            json!({"pattern": "\\bword"}),
            ErrorKind::Unsupported,
            "/pattern",
        ),
        (json!({"pattern": "a{2,1}"}), ErrorKind::Invalid, "/pattern"),
        (
            json!({"pattern": "\\p{NoSuchProperty}"}),
            ErrorKind::Invalid,
            "/pattern",
        ),
        (
            json!({"type": "string", "format": "color"}),
            ErrorKind::Unsupported,
            "/format",
        ),
        (
            json!({"type": "string", "pattern": "^a$", "minLength": 2}),
            ErrorKind::Unsatisfiable,
            "/pattern",
        ),
        (
            json!({"type": "string", "pattern": "[ab]{1,9}c.{14}(x|^)"}),
            ErrorKind::Limit,
            "/pattern",
        ),
    ];
    for (schema, kind, pointer) in cases {
        let err = compile(&schema, &Options::default())
            .err()
            .unwrap_or_else(|| panic!("{schema} compiled"));
        assert_eq!(
            (err.kind, err.pointer.as_str()),
            (kind, pointer),
            "{schema}: {err}"
        );
    }
}

#[test]
fn long_patterns_and_literals_stay_bounded() {
    let long = "a".repeat(70_000);
    let err = compile(&json!({"pattern": long}), &Options::default()).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Limit);
    // Over the automaton limits, a pattern alone is translated structurally, repetitions
    // kept counted.
    let schema = json!({"type": "string", "pattern": "^(((a{100}){100}){100})$"});
    let compiled = compile(&schema, &Options::default()).unwrap();
    assert!(compiled.grammar.size() < 1_000);
    let r = recognizer(
        &json!({"type": "string", "pattern": "(a|b)*a.{14}c"}),
        Escapes::Any,
    );
    assert!(r.accepts(br#""xxab\u0061aaaaaaaaaaaaaaacyy""#));
    assert!(!r.accepts(br#""xxabbbbbbbbbbbbbbbbbbbcyy""#));
    assert!(!r.accepts(br#""aaaaaaaaaaaaaac""#));
}

/// Valid instances sieve rejects: (file, test description, why). Every one is a documented
/// subset of a format (see the `format` module).
const REJECTED_VALID: &[(&str, &str, &str)] = &[
    (
        "format-time.json",
        "valid leap second, positive time-offset",
        LEAP,
    ),
    (
        "format-time.json",
        "valid leap second, large positive time-offset",
        LEAP,
    ),
    (
        "format-time.json",
        "valid leap second, negative time-offset",
        LEAP,
    ),
    (
        "format-time.json",
        "valid leap second, large negative time-offset",
        LEAP,
    ),
    (
        "format-date-time.json",
        "a valid date-time with a leap second, with minus offset",
        LEAP,
    ),
    (
        "format-hostname.json",
        "a valid host name (example.test in Hangul)",
        A_LABEL,
    ),
    (
        "format-hostname.json",
        "Exceptions that are PVALID, left-to-right chars",
        A_LABEL,
    ),
    (
        "format-hostname.json",
        "Exceptions that are PVALID, right-to-left chars",
        A_LABEL,
    ),
    (
        "format-hostname.json",
        "MIDDLE DOT with surrounding 'l's",
        A_LABEL,
    ),
    (
        "format-hostname.json",
        "Greek KERAIA followed by Greek",
        A_LABEL,
    ),
    (
        "format-hostname.json",
        "Hebrew GERESH preceded by Hebrew",
        A_LABEL,
    ),
    (
        "format-hostname.json",
        "Hebrew GERSHAYIM preceded by Hebrew",
        A_LABEL,
    ),
    (
        "format-hostname.json",
        "KATAKANA MIDDLE DOT with Hiragana",
        A_LABEL,
    ),
    (
        "format-hostname.json",
        "KATAKANA MIDDLE DOT with Katakana",
        A_LABEL,
    ),
    (
        "format-hostname.json",
        "KATAKANA MIDDLE DOT with Han",
        A_LABEL,
    ),
    (
        "format-hostname.json",
        "Arabic-Indic digits not mixed with Extended Arabic-Indic digits",
        A_LABEL,
    ),
    (
        "format-hostname.json",
        "Extended Arabic-Indic digits not mixed with Arabic-Indic digits",
        A_LABEL,
    ),
    (
        "format-hostname.json",
        "ZERO WIDTH JOINER preceded by Virama",
        A_LABEL,
    ),
    (
        "format-hostname.json",
        "ZERO WIDTH NON-JOINER preceded by Virama",
        A_LABEL,
    ),
    (
        "format-hostname.json",
        "ZERO WIDTH NON-JOINER not preceded by Virama but matches regexp",
        A_LABEL,
    ),
];

const LEAP: &str = "leap seconds only at 23:59:60 with a zero offset";
const A_LABEL: &str = "A-labels (`xn--`) need Punycode checks: refused";

#[test]
fn json_schema_test_suite_strings() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/strings_fixtures");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut accepted_invalid = Vec::new();
    let mut unexpected_rejections = Vec::new();
    let mut refused = Vec::new();
    for path in &files {
        let file = path.file_name().unwrap().to_str().unwrap();
        let groups: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        for group in groups.as_array().unwrap() {
            let description = group["description"].as_str().unwrap();
            let compiled = match compile(&group["schema"], &Options::default()) {
                Ok(compiled) => compiled,
                Err(e) => {
                    refused.push((e.kind, format!("{file}: {description}: {e}")));
                    continue;
                }
            };
            let r = Recognizer::new(&compiled.grammar).unwrap();
            for test in group["tests"].as_array().unwrap() {
                let data = serde_json::to_string(&test["data"]).unwrap();
                let valid = test["valid"].as_bool().unwrap();
                let name = test["description"].as_str().unwrap();
                let accepted = r.accepts(data.as_bytes());
                if accepted && !valid {
                    accepted_invalid.push(format!("{file}: {description}: {name}: {data}"));
                }
                let known = REJECTED_VALID
                    .iter()
                    .any(|&(f, d, _)| f == file && d == name);
                if !accepted && valid && !known {
                    unexpected_rejections.push(format!("{file}: {description}: {name}: {data}"));
                }
                if accepted && known {
                    unexpected_rejections
                        .push(format!("{file}: {name}: now accepted, update the list"));
                }
            }
        }
    }
    assert!(
        accepted_invalid.is_empty(),
        "accepted invalid: {accepted_invalid:#?}"
    );
    assert!(
        unexpected_rejections.is_empty(),
        "rejected valid: {unexpected_rejections:#?}"
    );
    // Refusals are the strict contract working; the ones expected here are ECMA-262 features
    // with no exact translation.
    for (_, line) in &refused {
        eprintln!("refused: {line}");
    }
    for (kind, line) in &refused {
        assert_eq!(*kind, ErrorKind::Unsupported, "unexpected refusal: {line}");
    }
}
