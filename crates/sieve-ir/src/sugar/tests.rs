//! Each constructor against a direct definition in plain Rust, on every string up to a length
//! over an alphabet chosen to hit its edge cases (including bytes that are not UTF-8).

use super::*;
use crate::reference::Recognizer;
use crate::Grammar;

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

fn grammar(build: impl FnOnce(&mut GrammarBuilder) -> Expr) -> Grammar {
    let mut b = GrammarBuilder::new();
    let root = b.declare("root").unwrap();
    let body = build(&mut b);
    b.define(root, body);
    b.build(root).unwrap()
}

fn check(
    what: &str,
    g: &Grammar,
    definition: impl Fn(&[u8]) -> bool,
    alphabet: &[u8],
    len: usize,
) -> usize {
    let r = Recognizer::new(g).unwrap();
    let mut accepted = 0;
    for s in all_strings(alphabet, len) {
        let expected = definition(&s);
        assert_eq!(
            r.accepts(&s),
            expected,
            "{what} on {:?}\n{g}",
            String::from_utf8_lossy(&s)
        );
        accepted += usize::from(expected);
    }
    accepted
}

fn text_until_definition(w: &[u8], stops: &[&str]) -> bool {
    let ends = |p: &[u8]| stops.iter().any(|s| p.ends_with(s.as_bytes()));
    std::str::from_utf8(w).is_ok() && ends(w) && (0..w.len()).all(|i| !ends(&w[..i]))
}

#[test]
fn text_until_equals_its_definition() {
    let alphabet = [b'a', b'b', 0xC3, 0xA9, 0x80];
    for stops in [
        &["ab"][..],
        &["ab", "b"],
        &["aa"],
        &["aba"],
        &["a", "ab"],
        &["é"],
        &["éa", "bé"],
    ] {
        let g = grammar(|b| text_until(b, "until", stops, &Limits::default()).unwrap());
        let n = check(
            &format!("text_until{stops:?}"),
            &g,
            |w| text_until_definition(w, stops),
            &alphabet,
            6,
        );
        assert!(n > 0);
    }
}

#[test]
fn text_until_rules_are_linear_in_the_phrases() {
    let g = grammar(|b| text_until(b, "until", &["</tool_call>"], &Limits::default()).unwrap());
    // One rule per trie node (12 bytes, the root included) but the last, and the root rule.
    assert!(g.rules().len() <= 14, "{g}");
}

#[test]
fn substring_of_equals_its_definition() {
    let alphabet = [b'a', b'b', b' ', 0xC3, 0xA9];
    for text in ["abab", "aé b", "ééa", "b"] {
        let g = grammar(|b| substring_of(b, "sub", text, &Limits::default()).unwrap());
        let n = check(
            &format!("substring_of({text:?})"),
            &g,
            |w| {
                !w.is_empty()
                    && std::str::from_utf8(w).is_ok()
                    && text.as_bytes().windows(w.len()).any(|x| x == w)
            },
            &alphabet,
            text.len() + 1,
        );
        assert!(n > 0);
    }
}

#[test]
fn substring_of_is_linear_in_the_text() {
    let text: String = (0..2000)
        .map(|i| char::from(b'a' + (i * 7 % 13) as u8))
        .collect();
    let g = grammar(|b| substring_of(b, "sub", &text, &Limits::default()).unwrap());
    assert!(g.rules().len() < 2 * 2000, "{} rules", g.rules().len());
    assert!(g.size() < 20 * 2000, "{} nodes", g.size());
    let r = Recognizer::new(&g).unwrap();
    assert!(r.accepts(&text.as_bytes()[100..400]));
    assert!(!r.accepts(b"aa"));
}

/// RFC 8259's `string`, directly.
fn json_string(w: &[u8]) -> bool {
    let Ok(s) = std::str::from_utf8(w) else {
        return false;
    };
    let Some(inner) = s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else {
        return false;
    };
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\u{0}'..='\u{1F}' => return false,
            '\\' => match chars.next() {
                Some('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't') => {}
                Some('u') => {
                    for _ in 0..4 {
                        if !chars.next().is_some_and(|h| h.is_ascii_hexdigit()) {
                            return false;
                        }
                    }
                }
                _ => return false,
            },
            _ => {}
        }
    }
    true
}

#[test]
fn quoted_text_equals_its_definition() {
    let g = grammar(|_| quoted_text());
    let alphabet = [b'"', b'\\', b'u', b'0', b'n', 0x01, 0xC3, 0xA9];
    assert!(check("quoted_text", &g, json_string, &alphabet, 5) > 0);
    let r = Recognizer::new(&g).unwrap();
    for ok in [r#""\u00e9\uD800""#, r#""a\/b\t""#, "\"\u{7F}é\u{10FFFF}\""] {
        assert!(r.accepts(ok.as_bytes()), "{ok}");
    }
    for bad in [r#""\u00g9""#, r#""\x""#, "\"\n\"", r#""\u00""#] {
        assert!(!r.accepts(bad.as_bytes()), "{bad}");
    }
}

/// YAML 1.2's `ns-plain-one-line(flow-out)`, directly from the productions.
fn yaml_plain(w: &[u8]) -> bool {
    let Ok(s) = std::str::from_utf8(w) else {
        return false;
    };
    let chars: Vec<char> = s.chars().collect();
    let printable = |c: char| matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{7E}' | '\u{85}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..);
    let ns = |c: char| printable(c) && !matches!(c, '\n' | '\r' | ' ' | '\t' | '\u{FEFF}');
    let white = |c: char| c == ' ' || c == '\t';
    let Some(&first) = chars.first() else {
        return false;
    };
    let next_ns = |i: usize| chars.get(i + 1).is_some_and(|&c| ns(c));
    let first_ok =
        (ns(first) && !scalar::INDICATORS.contains(first)) || ("-?:".contains(first) && next_ns(0));
    if !first_ok {
        return false;
    }
    // ( s-white* ns-plain-char )*: white runs must be followed by a plain char, and the text
    // cannot end in white space.
    for i in 1..chars.len() {
        let c = chars[i];
        if white(c) {
            if i + 1 == chars.len() {
                return false;
            }
            continue;
        }
        let plain = match c {
            ':' => next_ns(i),
            '#' => ns(chars[i - 1]),
            c => ns(c),
        };
        if !plain {
            return false;
        }
    }
    true
}

#[test]
fn unquoted_text_equals_its_definition() {
    let g = grammar(|b| unquoted_text(b, "plain").unwrap());
    let alphabet = [b'a', b' ', b':', b'#', b'-', b'\t', b'\n', 0xC3, 0xA9];
    assert!(check("unquoted_text", &g, yaml_plain, &alphabet, 5) > 0);
    let r = Recognizer::new(&g).unwrap();
    for ok in ["-1", "a:b", "http://x", "a#b", "é :x", "a]b"] {
        assert!(r.accepts(ok.as_bytes()), "{ok}");
    }
    for bad in ["[a]", "a: b", "a #b", "- a", "a ", "\u{FEFF}a", "'a'"] {
        assert!(!r.accepts(bad.as_bytes()), "{bad}");
    }
}

#[test]
fn delimited_list_equals_its_definition() {
    let g = grammar(|b| {
        let item = Expr::choice([Expr::bytes("a"), Expr::bytes("bb")]).unwrap();
        delimited_list(b, "list", item, Expr::bytes(",")).unwrap()
    });
    let definition = |w: &[u8]| {
        w.split(|&c| c == b',')
            .all(|part| part == b"a" || part == b"bb")
    };
    assert!(check("delimited_list", &g, definition, b"ab,", 7) > 0);
}

#[test]
fn delimited_subsequence_equals_its_definition() {
    let items = ["a", "b", "ab", "a"];
    let g = grammar(|b| {
        let exprs = items.iter().map(|s| Expr::bytes(*s)).collect();
        delimited_subsequence(b, "subseq", exprs, Expr::bytes(", ")).unwrap()
    });
    let definition = |w: &[u8]| {
        let Ok(s) = std::str::from_utf8(w) else {
            return false;
        };
        // Greedy leftmost matching decides whether the parts are a subsequence.
        let mut next = 0;
        for part in s.split(", ") {
            match items[next..].iter().position(|&i| i == part) {
                Some(k) => next += k + 1,
                None => return false,
            }
        }
        true
    };
    assert!(check("delimited_subsequence", &g, definition, b"ab, ", 9) > 0);
    let r = Recognizer::new(&g).unwrap();
    assert!(r.accepts(b"a, b, ab, a"));
    assert!(!r.accepts(b"b, a, b"));
}

#[test]
fn bad_inputs_are_errors() {
    let mut b = GrammarBuilder::new();
    let limits = Limits { max_text_len: 4 };
    assert_eq!(
        text_until(&mut b, "t", &[], &limits),
        Err(SugarError::EmptyStopPhrase)
    );
    assert_eq!(
        text_until(&mut b, "t", &["a", ""], &limits),
        Err(SugarError::EmptyStopPhrase)
    );
    assert_eq!(
        text_until(&mut b, "t", &["abc", "de"], &limits),
        Err(SugarError::TooLong { len: 5, limit: 4 })
    );
    assert_eq!(
        substring_of(&mut b, "s", "", &limits),
        Err(SugarError::EmptyText)
    );
    assert_eq!(
        substring_of(&mut b, "s", "ééé", &limits),
        Err(SugarError::TooLong { len: 6, limit: 4 })
    );
    assert_eq!(
        delimited_subsequence(&mut b, "d", Vec::new(), Expr::bytes(",")),
        Err(SugarError::NoItems)
    );
}
