//! The extension groups (`TEXT_UNTIL`, `SUBSTRING_OF`, …): each pattern's language, through the
//! reference recogniser and through the whole compile pipeline (`ByteMatcher`), equals a
//! plain-Rust definition on every string up to a length over a small alphabet; token masks
//! with GPT-2's vocabulary equal brute force; the IR's shape is snapshotted.

use std::sync::Arc;

use sieve_ir::reference::Recognizer;
use sieve_matcher::{ByteMatcher, CompiledGrammar, Matcher, Options as CompileOptions, Tokenizer};
use sieve_vocab::Vocabulary;

use crate::compile;

/// Every byte string up to `len` bytes over `alphabet`.
fn all_strings(alphabet: &[u8], len: usize) -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new()];
    let mut frontier = vec![Vec::new()];
    for _ in 0..len {
        let mut next = Vec::new();
        for s in &frontier {
            for &c in alphabet {
                let mut t: Vec<u8> = s.clone();
                t.push(c);
                next.push(t);
            }
        }
        out.extend(next.iter().cloned());
        frontier = next;
    }
    out
}

/// Whether the whole pipeline (normalised, automata, Earley) accepts `text`.
fn pipeline_accepts(matcher: &ByteMatcher, text: &[u8]) -> bool {
    let mut m = matcher.clone();
    text.iter()
        .all(|&b| m.push_byte(b).expect("within the work limit"))
        && m.can_finish()
}

/// `pattern`'s language equals `definition` on all strings up to `len` over `alphabet`, by the
/// reference recogniser and by the pipeline.
fn check(pattern: &str, definition: impl Fn(&[u8]) -> bool, alphabet: &[u8], len: usize) {
    let grammar = compile(pattern);
    let reference = Recognizer::new(&grammar).unwrap();
    let pipeline = ByteMatcher::new(&grammar, &CompileOptions::default()).expect("compiles");
    let mut accepted = 0;
    for s in all_strings(alphabet, len) {
        let expected = definition(&s);
        let shown = String::from_utf8_lossy(&s);
        assert_eq!(
            reference.accepts(&s),
            expected,
            "{pattern} (reference) on {shown:?}"
        );
        assert_eq!(
            pipeline_accepts(&pipeline, &s),
            expected,
            "{pattern} (pipeline) on {shown:?}"
        );
        accepted += usize::from(expected);
    }
    assert!(accepted > 0, "{pattern}: the test accepts nothing");
}

fn utf8(w: &[u8]) -> Option<&str> {
    std::str::from_utf8(w).ok()
}

/// Text up to and including the first stop phrase.
fn text_until(w: &[u8], stops: &[&str]) -> bool {
    let ends = |p: &[u8]| stops.iter().any(|s| p.ends_with(s.as_bytes()));
    utf8(w).is_some() && ends(w) && (0..w.len()).all(|i| !ends(&w[..i]))
}

#[test]
fn text_until_after_a_prefix() {
    check(
        "x(?P<TEXT_UNTIL>ab|ba)",
        |w| w.first() == Some(&b'x') && text_until(&w[1..], &["ab", "ba"]),
        &[b'x', b'a', b'b', 0xC3, 0xA9],
        6,
    );
}

#[test]
fn text_until_with_escapes_and_unicode_stops() {
    check(
        r"(?P<TEXT_UNTIL>\x2e|é)",
        |w| text_until(w, &[".", "é"]),
        &[b'.', b'a', 0xC3, 0xA9, 0xA8],
        5,
    );
}

#[test]
fn substring_of_then_more() {
    check(
        "(?P<SUBSTRING_OF>abé)!",
        |w| {
            w.split_last().is_some_and(|(&last, rest)| {
                last == b'!' && !rest.is_empty() && utf8(rest).is_some_and(|r| "abé".contains(r))
            })
        },
        &[b'a', b'b', b'!', 0xC3, 0xA9],
        6,
    );
}

#[test]
fn delimited_list_with_a_delimiter() {
    check(
        "(?P<DELIMITED_LIST>[ab]+(?P<DELIMITER>;))",
        |w| {
            w.split(|&c| c == b';')
                .all(|p| !p.is_empty() && p.iter().all(|c| b"ab".contains(c)))
        },
        b"ab;",
        7,
    );
}

#[test]
fn delimited_list_default_delimiter_and_optional() {
    check(
        "(?P<DELIMITED_LIST>a|bb)?",
        |w| w.is_empty() || utf8(w).is_some_and(|s| s.split(", ").all(|p| p == "a" || p == "bb")),
        b"ab, ",
        8,
    );
}

/// Whether `parts` is a subsequence of `items` (greedy leftmost matching decides it).
fn subsequence(parts: &[&str], items: &[&str]) -> bool {
    let mut next = 0;
    for part in parts {
        match items[next..].iter().position(|i| i == part) {
            Some(k) => next += k + 1,
            None => return false,
        }
    }
    true
}

#[test]
fn delimited_subsequence_default_delimiter() {
    let items = ["a", "b", "ab"];
    check(
        "(?P<DELIMITED_SUBSEQUENCE_OF>a|b|ab)",
        |w| utf8(w).is_some_and(|s| subsequence(&s.split(", ").collect::<Vec<_>>(), &items)),
        b"ab, ",
        9,
    );
}

#[test]
fn delimited_subsequence_with_flags_and_a_delimiter() {
    // `i` applies to the items (from the wrapping group), not to the delimiter.
    let items = ["a", "b"];
    check(
        "(?P<DELIMITED_SUBSEQUENCE_OF>(?i:a|b)(?P<DELIMITER>x))",
        |w| {
            utf8(w).is_some_and(|s| {
                let lower = s.replace('A', "a").replace('B', "b");
                lower.chars().filter(|&c| c == 'x').count() == s.matches('x').count()
                    && subsequence(&lower.split('x').collect::<Vec<_>>(), &items)
            })
        },
        b"abABxX",
        5,
    );
}

#[test]
fn nested_and_combined_extensions() {
    let grammar =
        compile(r"\[(?P<DELIMITED_LIST>(?P<QUOTED_TEXT>)(?P<DELIMITER>,))\]|(?P<UNQUOTED_TEXT>)");
    let r = Recognizer::new(&grammar).unwrap();
    for ok in [r#"["a"]"#, r#"["a\n","b"]"#, "plain text", "a:b", "a]b"] {
        assert!(r.accepts(ok.as_bytes()), "{ok}");
    }
    for bad in [
        r#"["a",]"#,
        r#"["a" ,"b"]"#,
        "a: b",
        "",
        r#"["\x"]"#,
        "[a]b",
    ] {
        assert!(!r.accepts(bad.as_bytes()), "{bad}");
    }
}

#[test]
fn extension_ir_shapes() {
    for (name, pattern) in [
        ("ir_text_until", "(?P<TEXT_UNTIL></a>|<b>)"),
        ("ir_substring_of", "(?P<SUBSTRING_OF>abab)"),
        ("ir_quoted_text", "(?P<QUOTED_TEXT>)"),
        ("ir_unquoted_text", "(?P<UNQUOTED_TEXT>)"),
        ("ir_delimited_list", r"(?P<DELIMITED_LIST>\d+)"),
        (
            "ir_delimited_subsequence",
            "(?P<DELIMITED_SUBSEQUENCE_OF>red|green|blue)",
        ),
    ] {
        insta::assert_snapshot!(name, compile(pattern).to_string());
    }
}

#[test]
fn ordinary_capture_names_are_plain_groups() {
    let grammar = compile("(?P<YEAR>[0-9]{4})-(?P<Text_Until>x)");
    assert!(Recognizer::new(&grammar).unwrap().accepts(b"2024-x"));
}

#[test]
fn extensions_can_be_turned_off() {
    let options = sieve_regex::Options {
        extensions: false,
        ..Default::default()
    };
    let grammar =
        sieve_regex::compile("(?P<TEXT_UNTIL>ab)(?P<IMAGE>c)(?P<DELIMITER>,)", &options).unwrap();
    let r = Recognizer::new(&grammar).unwrap();
    assert!(r.accepts(b"abc,"));
    assert!(!r.accepts(b"xabc,"));
}

#[test]
fn large_texts_stay_linear() {
    let text: String = (0..10_000)
        .map(|i| char::from(b'a' + (i * 7 % 23) as u8))
        .collect();
    let grammar = compile(&format!("(?P<SUBSTRING_OF>{text})"));
    assert!(grammar.size() < 20 * text.len(), "{}", grammar.size());
    let stops: Vec<String> = (0..200).map(|i| format!("<stop{i}>")).collect();
    let grammar = compile(&format!("(?P<TEXT_UNTIL>{})", stops.join("|")));
    assert!(
        grammar.size() < 100 * stops.concat().len(),
        "{}",
        grammar.size()
    );
}

// ---------------------------------------------------------------------------------------------
// Masks against brute force with GPT-2's vocabulary.

fn mask_of(matcher: &mut Matcher) -> Vec<u32> {
    let mut mask = vec![0u32; matcher.compiled().bitmask_words()];
    matcher.fill_next_token_bitmask(&mut mask).expect("mask");
    mask
}

fn oracle_mask(matcher: &mut Matcher) -> Vec<u32> {
    let compiled = matcher.compiled().clone();
    let mut mask = vec![0u32; compiled.bitmask_words()];
    for id in 0..compiled.vocabulary().n_vocab() as u32 {
        if matcher.validate_tokens(&[id]).expect("no limit") == 1 {
            mask[id as usize / 32] |= 1 << (id % 32);
        }
    }
    mask
}

#[test]
fn masks_equal_brute_force_with_gpt2() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let tokenizer = Arc::new(Tokenizer::new(vocab));
    let cases: &[(&str, &[&str])] = &[
        (
            "<think>(?P<TEXT_UNTIL></think>)\n(?P<QUOTED_TEXT>)",
            &["<think>a < b </think>\n\"ok \\u00e9\""],
        ),
        (
            "Answer: (?P<SUBSTRING_OF>The quick brown fox jumps)\\.",
            &["Answer: quick brown fox."],
        ),
        (
            "tags: (?P<DELIMITED_SUBSEQUENCE_OF>red|green|blue)\nname: (?P<UNQUOTED_TEXT>)",
            &["tags: red, blue\nname: Ada Lovelace, no. 1#x"],
        ),
    ];
    for (pattern, texts) in cases {
        let grammar = compile(pattern);
        let compiled = Arc::new(
            CompiledGrammar::new(&grammar, tokenizer.clone(), &CompileOptions::default())
                .expect("compiles"),
        );
        for text in *texts {
            let tokens = sieve_testkit::greedy_tokenize(compiled.vocabulary(), text.as_bytes());
            let mut matcher = Matcher::new(compiled.clone());
            for (step, &token) in tokens.iter().enumerate() {
                let mask = mask_of(&mut matcher);
                assert!(mask == oracle_mask(&mut matcher), "{pattern}: step {step}");
                assert!(
                    mask[token as usize / 32] & (1 << (token % 32)) != 0,
                    "{pattern}: step {step}: token {token} refused"
                );
                matcher.accept_token(token).expect("allowed");
            }
            assert!(
                mask_of(&mut matcher) == oracle_mask(&mut matcher),
                "{pattern}: end"
            );
            assert!(matcher.can_terminate(), "{pattern}: {text:?} is a sentence");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Odd shapes: every combination of fragments compiles or fails with a located error, never
// panics, and a compiled grammar passes the IR verifier (`compile` builds through it).

#[test]
fn odd_extension_shapes_never_panic() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    const LEAVES: &[&str] = &[
        "",
        "a",
        "é",
        "ab",
        r"\xff",
        "[^\\x00-\\x{10FFFF}]",
        "^",
        "$",
        "(?i)",
        "(?-u)",
        "[ab]",
    ];
    const GROUPS: &[&str] = &[
        "?P<TEXT_UNTIL>",
        "?P<SUBSTRING_OF>",
        "?P<QUOTED_TEXT>",
        "?P<UNQUOTED_TEXT>",
        "?P<DELIMITED_LIST>",
        "?P<DELIMITED_SUBSEQUENCE_OF>",
        "?P<DELIMITER>",
        "?P<TEXT_UNTILL>",
        "?P<PARAGRAPH_TOKEN>",
        "?:",
        "?i:",
    ];
    // A fixed seed, so the counts asserted below are the same on every run.
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases: 2000,
            failure_persistence: None,
            ..Config::default()
        },
        proptest::test_runner::TestRng::deterministic_rng(
            proptest::test_runner::RngAlgorithm::ChaCha,
        ),
    );
    let leaf = proptest::sample::select(LEAVES).prop_map(str::to_owned);
    let pattern = leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (proptest::sample::select(GROUPS), inner.clone())
                .prop_map(|(open, body)| format!("({open}{body})")),
            proptest::collection::vec(inner.clone(), 1..4).prop_map(|alts| alts.join("|")),
            proptest::collection::vec(inner.clone(), 1..3).prop_map(|items| items.concat()),
            (inner, proptest::sample::select(&["*", "?", "{2}"][..]))
                .prop_map(|(body, q)| format!("(?:{body}){q}")),
        ]
    });
    let compiled = std::cell::Cell::new(0);
    let extended = std::cell::Cell::new(0);
    runner
        .run(&pattern, |pattern| {
            if let Ok(grammar) = sieve_regex::compile(&pattern, &Default::default()) {
                compiled.set(compiled.get() + 1);
                let names = ["UNTIL>", "OF>", "TEXT>", "LIST>"];
                if names.iter().any(|n| pattern.contains(n)) {
                    extended.set(extended.get() + 1);
                }
                let r = Recognizer::new(&grammar).unwrap();
                for input in ["", "a", "ab", "\"a\"", "a, a", "é"] {
                    r.accepts(input.as_bytes());
                }
            }
            Ok(())
        })
        .unwrap();
    // The fragments reach valid patterns, extensions among them.
    assert!(compiled.get() > 500, "{} compiled", compiled.get());
    assert!(extended.get() > 100, "{} with extensions", extended.get());
}
