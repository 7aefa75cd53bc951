//! Lowered grammars recognise the right strings (checked with the IR's reference recogniser).

use sieve_gbnf::{compile, Options};
use sieve_ir::reference::Recognizer;

fn recognizer(text: &str) -> Recognizer {
    let grammar = compile(text, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    Recognizer::new(&grammar).unwrap()
}

fn file(name: &str) -> Recognizer {
    let text = std::fs::read_to_string(crate::repo_root().join(name)).unwrap();
    recognizer(&text)
}

#[track_caller]
fn check(r: &Recognizer, accepted: &[&str], rejected: &[&str]) {
    for s in accepted {
        assert!(r.accepts(s.as_bytes()), "should accept {s:?}");
    }
    for s in rejected {
        assert!(!r.accepts(s.as_bytes()), "should reject {s:?}");
    }
}

#[test]
fn json() {
    let r = file("grammars/llama.cpp/json.gbnf");
    check(
        &r,
        &[
            r#"{"a": [1, 2.5e3, "x\u00e9"]}"#,
            "{}",
            r#"{"k": {"n": null, "t": true}}"#,
            "{\"é\": \"ü\"}",
        ],
        &[
            r#"{"a" 1}"#,
            "[1]",
            r#"{"a": 01}"#,
            "{\"a\": \"\u{1}\"}",
            "",
        ],
    );
}

#[test]
fn arithmetic_and_c() {
    check(
        &file("grammars/llama.cpp/arithmetic.gbnf"),
        &["1+2=3\n", "(a*b)= c\n"],
        &["1+=3\n", "1+2"],
    );
    check(
        &file("grammars/llama.cpp/c.gbnf"),
        &["int main(){return 0;}", "int f(int x){x = x*2;}"],
        &["int main(){", "main(){}"],
    );
}

#[test]
fn japanese_and_list_use_multibyte_classes() {
    check(
        &file("grammars/llama.cpp/japanese.gbnf"),
        &["ひらがな カタカナ", "日本語。"],
        &["abc", "ひらがな  カタカナ"],
    );
    check(
        &file("grammars/llama.cpp/list.gbnf"),
        &["- one\n- two é\n"],
        &["- a\u{2028}b\n", "- a\u{85}b\n", "- \n"],
    );
}

#[test]
fn hex_escapes_are_code_points() {
    // "\xFF" is U+00FF, two bytes in UTF-8; the raw byte 0xFF is not a sentence.
    let r = recognizer(r#"root ::= "\xFF""#);
    assert!(r.accepts("ÿ".as_bytes()));
    assert_eq!("ÿ".as_bytes(), [0xc3, 0xbf]);
    assert!(!r.accepts(&[0xff]));
    let r = recognizer(r#"root ::= [\x80-\xFF]"#);
    assert!(r.accepts("\u{80}".as_bytes()));
    assert!(r.accepts("ÿ".as_bytes()));
    assert!(!r.accepts(&[0x80]));
    assert!(!r.accepts("Ā".as_bytes()));
}

#[test]
fn negated_class_excludes_the_right_characters() {
    let r = recognizer(r#"root ::= [^a-z\u00e9\U0001F600]"#);
    check(
        &r,
        &["A", "\n", "è", "😁", "\u{10FFFF}", "\u{D7FF}", "\u{E000}"],
        &["a", "q", "é", "😀", "", "AB"],
    );
    // Never a lone surrogate (ED A0 80) or a byte that starts no character.
    assert!(!r.accepts(&[0xed, 0xa0, 0x80]));
    assert!(!r.accepts(&[0xff]));
    assert!(!r.accepts(&[0x80]));
}

#[test]
fn dot_is_any_scalar_value() {
    let r = recognizer("root ::= . .");
    check(&r, &["\n\n", "a😀", "é\u{0}"], &["a", "abc"]);
    assert!(!r.accepts(&[b'a', 0xc3]));
    assert!(!r.accepts(&[b'a', 0xed, 0xa0, 0x80]));
}

#[test]
fn repetitions_and_empty_alternatives() {
    let r = recognizer(r#"root ::= "a"{2} "b"{1,} "c"{,2} "d"{1,2} ws  ws ::= | " ""#);
    check(
        &r,
        &["aabd", "aabbbccdd ", "aabcd"],
        &["abd", "aad", "aabcccd", "aabddd"],
    );
}

#[test]
fn own_grammars_accept_samples() {
    check(
        &file("grammars/ebnf/escapes.ebnf"),
        &[concat!(
            "\n\r\t\0\u{7}\u{8}\u{1b}\u{c}\u{b}",
            "\\\"'?",
            "[]-^",
            "it's",
            "it's",
            "say \"x\"",
            "Aÿé€😀",
            "é€😀",
            "\n",
            "A",
            "Ѐ",
            "😀",
            "+",
            "-",
            "-",
            "#",
            "X",
            "a",
        )],
        &["", "\n"],
    );
    let text = std::fs::read_to_string(
        crate::repo_root().join("grammars/ebnf/arithmetic-custom-root.ebnf"),
    )
    .unwrap();
    let grammar = compile(&text, &Options::with_root("expr")).unwrap();
    let r = Recognizer::new(&grammar).unwrap();
    check(&r, &["1+2*(3-4.5)", "-7"], &["1+", "(1"]);
}

/// Every byte string up to `len` bytes over `alphabet`.
fn all_strings(alphabet: &[u8], len: usize) -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new()];
    let mut frontier = vec![Vec::new()];
    for _ in 0..len {
        let next: Vec<Vec<u8>> = frontier
            .iter()
            .flat_map(|s: &Vec<u8>| {
                alphabet.iter().map(move |&c| {
                    let mut t = s.clone();
                    t.push(c);
                    t
                })
            })
            .collect();
        out.extend(next.iter().cloned());
        frontier = next;
    }
    out
}

#[track_caller]
fn exhaustive(text: &str, definition: impl Fn(&[u8]) -> bool, alphabet: &[u8], len: usize) {
    let r = recognizer(text);
    for s in all_strings(alphabet, len) {
        assert_eq!(
            r.accepts(&s),
            definition(&s),
            "{text} on {:?}",
            String::from_utf8_lossy(&s)
        );
    }
}

#[test]
fn text_until_call() {
    let stops = ["ab", "b!"];
    exhaustive(
        r#"root ::= "<" text_until("ab", "b!")"#,
        |w| {
            let ends = |p: &[u8]| stops.iter().any(|s| p.ends_with(s.as_bytes()));
            w.first() == Some(&b'<')
                && std::str::from_utf8(w).is_ok()
                && ends(&w[1..])
                && (1..w.len()).all(|i| !ends(&w[1..i]))
        },
        &[b'<', b'a', b'b', b'!', 0xC3, 0xA9],
        6,
    );
}

#[test]
fn substring_of_call() {
    exhaustive(
        r#"root ::= substring_of("abé") | "!""#,
        |w| w == b"!" || (!w.is_empty() && std::str::from_utf8(w).is_ok_and(|s| "abé".contains(s))),
        &[b'a', b'b', b'!', 0xC3, 0xA9],
        5,
    );
}

#[test]
fn delimited_calls() {
    exhaustive(
        r#"root ::= delimited_subsequence_of("a" | "b" | ab, ";")
ab ::= "ab""#,
        |w| {
            let items = ["a", "b", "ab"];
            let Ok(s) = std::str::from_utf8(w) else {
                return false;
            };
            let mut next = 0;
            s.split(';')
                .all(|part| match items[next..].iter().position(|&i| i == part) {
                    Some(k) => {
                        next += k + 1;
                        true
                    }
                    None => false,
                })
        },
        b"ab;",
        7,
    );
    let r = recognizer(r#"root ::= "[" delimited_list([0-9]+)? "]""#);
    check(
        &r,
        &["[]", "[1]", "[1, 22, 3]"],
        &["[1,2]", "[1, ]", "[, 1]"],
    );
}

#[test]
fn text_calls() {
    let r = recognizer(r#"root ::= quoted_text() ": " unquoted_text()"#);
    check(
        &r,
        &[r#""k\n": v a:b#c"#, r#""": -x"#],
        &[r#""k": v #c"#, r#""k": v "#, r#"'k': v"#, r#""k":  v"#],
    );
}

#[test]
fn calls_name_their_rules_after_the_calling_rule() {
    let grammar = compile(
        r#"root ::= answer
answer ::= substring_of("abc") text_until(".")"#,
        &Options::default(),
    )
    .unwrap();
    let names: Vec<&str> = grammar.rules().iter().map(|r| r.name()).collect();
    assert!(names.contains(&"answer_substring_of"), "{names:?}");
    assert!(names.contains(&"answer_text_until"), "{names:?}");
}
