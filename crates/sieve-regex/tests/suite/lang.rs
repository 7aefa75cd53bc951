//! Language exactness: sieve's grammar (run by the reference recogniser) and the `regex` crate
//! (the pattern wrapped as `\A(?:…)\z`) must agree on every input.
//!
//! Inputs per pattern: hand-picked strings; strings the regex generates (proptest's
//! `bytes_regex`, anchors removed), so accepted inputs are well covered; those strings with one
//! byte inserted, removed or replaced; and random strings over an alphabet made of the
//! pattern's characters, multi-byte UTF-8, case variants and bytes that are not UTF-8.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use regex_syntax::hir::{Hir, HirKind};
use sieve_ir::reference::Recognizer;

use crate::compile;

/// Characters and byte fragments every alphabet holds.
const COMMON: &[&[u8]] = &[
    b"a",
    b"b",
    b"z",
    b"A",
    b"Z",
    b"0",
    b"9",
    b"_",
    b"-",
    b".",
    b" ",
    b"\n",
    b"\r",
    b"\t",
    "é".as_bytes(),
    "É".as_bytes(),
    "α".as_bytes(),
    "Ω".as_bytes(),
    "ß".as_bytes(),
    "ẞ".as_bytes(),
    "ſ".as_bytes(),
    "K".as_bytes(),
    "€".as_bytes(),
    "😀".as_bytes(),
    "\u{10FFFF}".as_bytes(),
    "\u{7FF}".as_bytes(),
    "\u{800}".as_bytes(),
    b"\x80",
    b"\xbf",
    b"\xc3",
    b"\xe2\x82",
    b"\xf0\x9f",
    b"\xff",
    b"\x00",
];

/// The in-test table: a pattern and strings worth checking by hand.
const TABLE: &[(&str, &[&str])] = &[
    ("abc", &["abc", "ab", "abcd", ""]),
    ("", &["", "a"]),
    ("a|b|", &["a", "b", "", "ab"]),
    (r"\p{Greek}", &["α", "Ω", "a", "αα", "ͅ", "\u{1D6C2}"]),
    (r"\p{Greek}+", &["αβγ", "α β", "", "ΑΒΓ"]),
    ("[α-ω]+", &["αω", "ς", "Α", "αa"]),
    (r"\w+", &["hello", "héllo", "日本語", "a b", "_1", "٣"]),
    (r"(?-u:\w)+", &["hello", "héllo"]),
    (r"\d{2,3}", &["12", "123", "1234", "١٢"]),
    (r"\s*", &["", " \t\n", "\u{a0}", "\u{2028}", "x"]),
    (
        "(?i)straße",
        &["STRAẞE", "straße", "STRASSE", "ſtraße", "Straße"],
    ),
    ("(?i)[a-z]+", &["aZ", "K", "ſ", "é"]),
    ("(?i)k", &["k", "K", "K", "x"]),
    ("a{2,5}", &["a", "aa", "aaaaa", "aaaaaa"]),
    ("(ab){3}", &["ababab", "abab", "abababab"]),
    ("x{0,}", &["", "x", "xxxx", "y"]),
    ("x{3,}y?", &["xxx", "xxxxxy", "xxy"]),
    ("(a|bc)*d", &["d", "abcad", "bcbcd", "bd"]),
    ("(a*)*b", &["b", "aaab", "a"]),
    ("^abc$", &["abc", "abcabc", ""]),
    (r"\Aabc\z", &["abc", "ab"]),
    ("^a|b$", &["a", "b", "ab"]),
    ("(^a|b)c", &["ac", "bc", "c"]),
    ("(?m)^a$", &["a", "a\n"]),
    ("^", &["", "a"]),
    ("$", &["", "\n"]),
    ("^$", &["", "\n"]),
    (".", &["a", "\n", "é", "😀", "\u{10FFFF}", "ab", ""]),
    ("(?s).", &["a", "\n", "é", "😀"]),
    ("(?s-u).", &["a", "\n"]),
    ("(?-u).", &["a", "\n"]),
    (".*", &["", "abc", "a\nb"]),
    (r"(?-u)[\x80-\xff]", &["é", "a"]),
    (r"(?-u)\xfe\x00", &[]),
    (r"[^a]", &["b", "a", "é", "\n"]),
    (r"[^\n]+", &["abc", "a\nb"]),
    (r"[\x{80}-\x{10FFFF}]", &["é", "a", "😀"]),
    (r"[\u{D7FF}\u{E000}]", &["\u{D7FF}", "\u{E000}"]),
    (r"[a-c&&b-d]x", &["bx", "cx", "ax", "dx"]),
    (r"[\w--\d]", &["a", "1", "_"]),
    ("a|[^\\x00-\\x{10FFFF}]", &["a", ""]),
    ("(a|[^\\x00-\\x{10FFFF}])*b", &["b", "aab"]),
    ("(?x) a b # comment\n", &["ab", "a b"]),
    (r"(?U)a+?b", &["ab", "aab"]),
    (r"(?<word>\w+)-(?P<n>\d)", &["ab-1", "-1"]),
    (r"\x41\u{42}\x{1F600}", &["AB😀"]),
    (r"[[:alpha:]][[:digit:]]", &["a1", "é1"]),
    (r"\pL\PL", &["a1", "aa"]),
    (r"\p{Emoji}", &["😀", "a", "#"]),
    (r"(\w{2}\W)+", &["ab.cd!", "ab.", "a.b"]),
];

#[test]
fn table_patterns_match_the_oracle() {
    for (pattern, hand) in TABLE {
        check_language(pattern, hand.iter().map(|s| s.as_bytes().to_vec()));
    }
}

#[test]
fn pattern_files_match_the_oracle() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../grammars/regex");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .expect("grammars/regex exists")
        .map(|e| e.expect("readable").path())
        .filter(|p| p.extension().is_some_and(|e| e == "regex"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 10, "{paths:?}");
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("readable");
        let pattern = text.strip_suffix('\n').unwrap_or(&text);
        check_language(pattern, std::iter::empty());
    }
}

/// Checks `pattern` on the hand-picked inputs and on generated ones.
fn check_language(pattern: &str, hand: impl IntoIterator<Item = Vec<u8>>) {
    let grammar = compile(pattern);
    let recognizer = Recognizer::new(&grammar).expect("small repetition bounds");
    let oracle = regex::bytes::Regex::new(&format!(r"\A(?:{pattern})\z")).expect("oracle");
    let agree = |input: &[u8]| -> Result<(), TestCaseError> {
        // The token marker 0xFF is in no text (`sieve_ir::token`).
        let expected = oracle.is_match(input) && !input.contains(&0xFF);
        prop_assert_eq!(
            recognizer.accepts(input),
            expected,
            "pattern {:?}, input {:?} ({:?})\n{}",
            pattern,
            String::from_utf8_lossy(input),
            input,
            grammar
        );
        Ok(())
    };
    for input in hand {
        agree(&input).unwrap();
    }

    let mut runner = TestRunner::new(Config {
        cases: 96,
        failure_persistence: None,
        ..Config::default()
    });
    let positive =
        proptest::string::bytes_regex_parsed(&without_anchors(pattern).expect("not empty"))
            .expect("proptest can generate this pattern")
            .boxed();
    let edited = (positive.clone(), any::<(prop::sample::Index, u8, u8)>()).prop_map(
        |(mut s, (at, op, byte))| {
            let i = at.index(s.len() + 1);
            match op % 3 {
                0 => s.insert(i, byte),
                1 if i < s.len() => {
                    s.remove(i);
                }
                _ if i < s.len() => s[i] = byte,
                _ => s.push(byte),
            }
            s
        },
    );
    let fragments = alphabet(pattern);
    let random = prop::collection::vec(prop::sample::select(fragments), 0..10)
        .prop_map(|parts| parts.concat());
    let inputs = prop_oneof![positive, edited, random];
    if let Err(e) = runner.run(&inputs, |input| agree(&input)) {
        panic!("{e}");
    }
}

/// The fragments random inputs are made of: [`COMMON`], the pattern's characters and their
/// case variants.
fn alphabet(pattern: &str) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = COMMON.iter().map(|f| f.to_vec()).collect();
    for c in pattern.chars() {
        for v in [c, c.to_ascii_uppercase()]
            .into_iter()
            .chain(c.to_uppercase())
            .chain(c.to_lowercase())
        {
            out.push(v.to_string().into_bytes());
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The pattern's HIR with assertions replaced by the empty regex (proptest cannot generate
/// them; the anchors sieve accepts always hold at the ends of a full match), empty classes
/// removed (proptest cannot generate from them either), and repetitions capped at four more
/// than their minimum. `None` when the language is empty.
fn without_anchors(pattern: &str) -> Option<Hir> {
    let hir = regex_syntax::ParserBuilder::new()
        .utf8(false)
        .build()
        .parse(pattern)
        .expect("valid pattern");
    strip(hir)
}

fn strip(hir: Hir) -> Option<Hir> {
    Some(match hir.into_kind() {
        HirKind::Look(_) | HirKind::Empty => Hir::empty(),
        HirKind::Literal(lit) => Hir::literal(lit.0),
        HirKind::Class(class) if class.is_empty() => return None,
        HirKind::Class(class) => Hir::class(class),
        HirKind::Repetition(mut rep) => {
            // Short positives keep the (cubic, unoptimised) reference recogniser quick.
            rep.max = Some(rep.max.unwrap_or(rep.min + 4).min(rep.min + 4));
            match strip(*rep.sub) {
                Some(sub) => {
                    rep.sub = Box::new(sub);
                    Hir::repetition(rep)
                }
                None if rep.min == 0 => Hir::empty(),
                None => return None,
            }
        }
        HirKind::Capture(mut cap) => {
            cap.sub = Box::new(strip(*cap.sub)?);
            Hir::capture(cap)
        }
        HirKind::Concat(items) => Hir::concat(items.into_iter().map(strip).collect::<Option<_>>()?),
        HirKind::Alternation(items) => {
            let alts: Vec<Hir> = items.into_iter().filter_map(strip).collect();
            if alts.is_empty() {
                return None;
            }
            Hir::alternation(alts)
        }
    })
}

/// Random patterns built from fragments: sieve either compiles them to a grammar that agrees
/// with the oracle on random inputs, or rejects them with an error whose span lies inside the
/// pattern on character boundaries (so it renders).
#[test]
fn random_patterns_match_the_oracle_or_fail_cleanly() {
    let atom = prop::sample::select(vec![
        "a",
        "b",
        "ab",
        "[a-c]",
        "[^a]",
        ".",
        r"\w",
        r"\d",
        r"\s",
        "é",
        "α",
        "(?i:k)",
        "(?i:ß)",
        r"\p{Greek}",
        "[α-ω]",
        r"(?-u:\xff)",
        r"(?-u:[\x80-\xbf])",
        "(?s:.)",
        "^",
        "$",
        r"\A",
        r"\z",
        r"\b",
        "",
        "[a&&b]",
        r"\n",
    ])
    .prop_map(str::to_owned);
    let pattern = atom.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 2..4).prop_map(|items| items.concat()),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|items| items.join("|")),
            inner.clone().prop_map(|p| format!("({p})")),
            (
                inner,
                prop::sample::select(vec!["*", "+", "?", "{2}", "{0,2}", "{1,}"])
            )
                .prop_map(|(p, op)| format!("(?:{p}){op}")),
        ]
    });
    let fragments: Vec<Vec<u8>> = COMMON.iter().map(|f| f.to_vec()).collect();
    let inputs = prop::collection::vec(
        prop::collection::vec(prop::sample::select(fragments), 0..6)
            .prop_map(|parts| parts.concat()),
        16,
    );
    let mut runner = TestRunner::new(Config {
        cases: 384,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&(pattern, inputs), |(pattern, inputs)| {
        let compiled = sieve_regex::compile(&pattern, &Default::default());
        let grammar = match compiled {
            Ok(grammar) => grammar,
            Err(err) => {
                use sieve_diagnostics::Located;
                let span = err.span();
                prop_assert!(span.start <= span.end && span.end <= pattern.len());
                prop_assert!(pattern.is_char_boundary(span.start));
                prop_assert!(pattern.is_char_boundary(span.end));
                let _ = sieve_diagnostics::SourceFile::new("<regex>", &pattern).render_error(&err);
                return Ok(());
            }
        };
        let Ok(oracle) = regex::bytes::Regex::new(&format!(r"\A(?:{pattern})\z")) else {
            return Ok(());
        };
        let recognizer = Recognizer::new(&grammar).expect("small repetition bounds");
        for input in inputs.iter().chain(oracle_witnesses(&pattern).iter()) {
            prop_assert_eq!(
                recognizer.accepts(input),
                oracle.is_match(input) && !input.contains(&0xFF),
                "pattern {:?}, input {:?}\n{}",
                pattern,
                String::from_utf8_lossy(input),
                grammar
            );
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// A few strings the pattern matches (generated from it), so random patterns are also tested
/// on accepted inputs.
fn oracle_witnesses(pattern: &str) -> Vec<Vec<u8>> {
    let Some(hir) = without_anchors(pattern) else {
        return Vec::new();
    };
    let Ok(strategy) = proptest::string::bytes_regex_parsed(&hir) else {
        return Vec::new();
    };
    let mut runner = TestRunner::deterministic();
    (0..4)
        .filter_map(|_| strategy.new_tree(&mut runner).ok())
        .map(|tree| proptest::strategy::ValueTree::current(&tree))
        .collect()
}
