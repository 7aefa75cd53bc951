//! Token terminals (`sieve_ir::token`): grammars that name special tokens, token ids and
//! negated token sets, on every backend that compiles them.
//!
//! The oracle is the definition of the feed rule, token by token: a token is allowed iff
//! [`Matcher::validate_tokens`] accepts it alone (its encoding when the grammar takes it as a
//! token terminal, else its text, else EOS on a complete output). The masks come from the
//! trie walk and the token cache, which never call that rule, so agreement checks both.

use std::sync::Arc;

use sieve_matcher::{BackendKind, CompiledGrammar, Matcher, MatcherError, Options, Tokenizer};
use sieve_vocab::Vocabulary;

/// Text tokens (ids 0..), then the specials: `<|im_start|>` 15, `<|im_end|>` 16 (an EOS id
/// by default), `<|tool|>` 17, `</s>` 18 (EOS), and an unused id 19.
const TEXT: &[&str] = &[
    "a", "b", "ab", "<", ">", "think", "<think>", "</think>", "x", " ", "\u{ff}", "{", "}", "\"",
    "ok",
];

fn vocab() -> Arc<Vocabulary> {
    let mut list: String = TEXT
        .iter()
        .map(|t| serde_json::to_string(t).expect("string") + "\n")
        .collect();
    for special in ["<|im_start|>", "<|im_end|>", "<|tool|>", "</s>"] {
        list.push_str(&format!(
            "special:{}\n",
            serde_json::to_string(special).unwrap()
        ));
    }
    // An unused id, then a raw 0xFF byte token (text holding the token marker).
    list.push('\n');
    list.push_str("hex:ff\n");
    Arc::new(sieve_vocab::plain::parse(list.as_bytes(), &Default::default()).expect("valid list"))
}

const IM_START: u32 = 15;
const IM_END: u32 = 16;
const TOOL: u32 = 17;
const EOS: u32 = 18;
const UNUSED: u32 = 19;
const RAW_FF: u32 = 20;

fn id(text: &str) -> u32 {
    TEXT.iter().position(|t| *t == text).expect("a text token") as u32
}

fn compile_on(grammar: &str, backend: BackendKind) -> Result<Arc<CompiledGrammar>, String> {
    let vocab = vocab();
    let mut options = sieve_gbnf::Options::default();
    options.tokens = Some(sieve_ir::token::SharedNames(vocab.clone()));
    let grammar = sieve_gbnf::compile(grammar, &options).map_err(|e| e.to_string())?;
    let tokenizer = Arc::new(Tokenizer::new(vocab));
    let options = Options {
        backend: backend.into(),
        ..Options::default()
    };
    CompiledGrammar::new(&grammar, tokenizer, &options)
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

fn allowed(matcher: &mut Matcher) -> Vec<u32> {
    let mut mask = vec![0u32; matcher.compiled().bitmask_words()];
    matcher.fill_next_token_bitmask(&mut mask).expect("mask");
    let n = matcher.compiled().vocabulary().n_vocab() as u32;
    (0..n)
        .filter(|&t| mask[t as usize / 32] & (1 << (t % 32)) != 0)
        .collect()
}

fn oracle(matcher: &mut Matcher) -> Vec<u32> {
    let n = matcher.compiled().vocabulary().n_vocab() as u32;
    (0..n)
        .filter(|&t| matcher.validate_tokens(&[t]).expect("no limit") == 1)
        .collect()
}

/// Grammars with token terminals, each with a walk (token ids) that ends complete.
const CASES: &[(&str, &str, &[u32])] = &[
    (
        "chat turn",
        r#"root ::= <|im_start|> "a"+ <|im_end|>"#,
        &[IM_START, 0, 0, IM_END],
    ),
    (
        "reasoning then answer",
        r#"root ::= <think> [a-b ]* </think> "ok""#,
        &[6, 0, 9, 1, 7, 14],
    ),
    (
        "free tokens until a special",
        r#"root ::= <|tool|> <[^17]>* <|tool|> "x""#,
        &[TOOL, 0, 6, 0, 10, IM_START, RAW_FF, TOOL, 8],
    ),
    (
        "ids and ranges",
        r#"root ::= <[0-2,8]> <[15]>? ("{" <[^11,12]> "}")*"#,
        &[8, IM_START, 11, 13, 12],
    ),
    (
        "negation of one",
        r#"root ::= ( !<|tool|> )+ <|tool|>"#,
        &[0, IM_START, 3, TOOL],
    ),
];

/// Every backend that compiles the case; Earley must compile all of them.
fn compiled_cases() -> Vec<(String, Arc<CompiledGrammar>, &'static [u32])> {
    let mut out = Vec::new();
    for backend in BackendKind::ALL {
        for &(name, grammar, walk) in CASES {
            match compile_on(grammar, backend) {
                Ok(compiled) => out.push((format!("{name}/{backend}"), compiled, walk)),
                Err(e) => assert_ne!(backend, BackendKind::Earley, "{name}: {e}"),
            }
        }
    }
    out
}

#[test]
fn masks_equal_the_feed_rule_along_each_walk() {
    for (name, compiled, walk) in compiled_cases() {
        let mut matcher = Matcher::new(compiled.clone());
        for (step, &token) in walk.iter().enumerate() {
            let mask = allowed(&mut matcher);
            assert_eq!(mask, oracle(&mut matcher), "{name}, step {step}");
            assert!(
                mask.contains(&token),
                "{name}: step {step} token {token} not allowed"
            );
            matcher.accept_token(token).expect("allowed");
        }
        let end = allowed(&mut matcher);
        assert_eq!(end, oracle(&mut matcher), "{name} at the end");
        assert!(end.contains(&EOS), "{name}: complete at the end");
        matcher.accept_token(EOS).expect("EOS");
        assert!(matcher.is_terminated());
    }
}

#[test]
fn text_rules_never_match_a_special_token_or_the_marker() {
    let compiled = compile_on(r#"root ::= [^"]* "\"""#, BackendKind::Earley).unwrap();
    let mut matcher = Matcher::new(compiled);
    let mask = allowed(&mut matcher);
    for special in [IM_START, IM_END, TOOL, EOS, UNUSED] {
        assert!(!mask.contains(&special), "special {special}");
    }
    // `\u{ff}` is text (UTF-8 C3 BF); a raw 0xFF byte is in no text.
    assert!(mask.contains(&id("\u{ff}")));
    assert!(!mask.contains(&RAW_FF));
    assert_eq!(mask, oracle(&mut matcher));
}

#[test]
fn a_token_the_grammar_takes_by_id_is_read_by_id() {
    // `<think>` is a text token (id 6): by id on the left, as text on the right. Both
    // readings are allowed; the id reading wins, so the text branch is not taken.
    let compiled = compile_on(r#"root ::= <think> "a" | "<think>b""#, BackendKind::Earley).unwrap();
    let mut matcher = Matcher::new(compiled);
    assert!(allowed(&mut matcher).contains(&6));
    matcher.accept_token(6).unwrap();
    assert_eq!(allowed(&mut matcher), vec![0]);
    assert_eq!(oracle(&mut matcher), vec![0]);
    // The text spelling by smaller tokens still takes the text branch.
    let mut matcher = Matcher::new(matcher.compiled().clone());
    for t in [3, 5, 4] {
        matcher.accept_token(t).unwrap();
    }
    assert_eq!(allowed(&mut matcher), vec![1]);
}

#[test]
fn negated_sets_hold_neither_eos_nor_unused_ids() {
    let compiled = compile_on(r#"root ::= <[^0]>*"#, BackendKind::Earley).unwrap();
    let mut matcher = Matcher::new(compiled);
    let mask = allowed(&mut matcher);
    // EOS is allowed only because the output is complete, not as a member of the set.
    let expected: Vec<u32> = (1..=RAW_FF).filter(|&t| t != UNUSED).collect();
    assert_eq!(mask, expected);
    matcher.accept_token(IM_START).unwrap();
    // `<|im_end|>` is an EOS id: it ends the output instead of being written.
    matcher.accept_token(IM_END).unwrap();
    assert!(matcher.is_terminated());
    let mut matcher = Matcher::new(matcher.compiled().clone());
    assert!(matches!(
        matcher.accept_token(UNUSED),
        Err(MatcherError::SpecialNotAllowed { .. })
    ));
    // A raw 0xFF token is a member by id.
    matcher.accept_token(RAW_FF).unwrap();
}

#[test]
fn rollback_and_forced_bytes_stop_at_token_terminals() {
    let compiled = compile_on(r#"root ::= "ab" <|tool|> "x""#, BackendKind::Earley).unwrap();
    let mut matcher = Matcher::new(compiled);
    assert_eq!(matcher.forced_bytes(16).unwrap(), b"ab");
    matcher.accept_token(2).unwrap();
    assert_eq!(matcher.forced_bytes(16).unwrap(), b"");
    matcher.accept_token(TOOL).unwrap();
    assert_eq!(matcher.forced_bytes(16).unwrap(), b"x");
    matcher.rollback(1).unwrap();
    assert_eq!(allowed(&mut matcher), vec![TOOL]);
    assert!(matches!(
        matcher.accept_token(IM_START),
        Err(MatcherError::SpecialNotAllowed { id: IM_START })
    ));
}

#[test]
fn unknown_tokens_get_located_errors() {
    for (grammar, needle) in [
        (
            "root ::= <|nope|>",
            "`<|nope|>` is not a token of this tokenizer",
        ),
        ("root ::= <[99]>", "token id 99 is not in this tokenizer"),
        ("root ::= <[19]>", "token id 19 is not in this tokenizer"),
        ("root ::= <[^0-20]>", "holds no token"),
        ("root ::= <[x]>", "`x` in `<[x]>` is not a token id"),
    ] {
        let error = compile_on(grammar, BackendKind::Earley).unwrap_err();
        assert!(error.contains(needle), "{grammar}: {error}");
    }
    // Without a tokenizer, plain ids still compile; names need one.
    assert!(sieve_gbnf::compile("root ::= <[5]>", &Default::default()).is_ok());
    let error = sieve_gbnf::compile("root ::= <|im_end|>", &Default::default()).unwrap_err();
    assert!(
        matches!(error.first(), sieve_gbnf::Error::UnresolvedToken { span, .. } if span.start == 9),
        "{error:?}"
    );
    assert!(error.to_string().contains("need a tokenizer"), "{error}");
}

#[test]
fn budgets_count_a_token_terminal_as_one_token() {
    // The token-DFA backend bounds completions by exact token paths, encodings included.
    let compiled = compile_on(
        r#"root ::= <|im_start|> "ab"? <|im_end|>"#,
        BackendKind::TokenDfa,
    )
    .unwrap();
    // im_start, im_end, EOS.
    let mut matcher = Matcher::with_budget(compiled.clone(), 3).expect("fits in 3");
    assert_eq!(allowed(&mut matcher), vec![IM_START]);
    matcher.accept_token(IM_START).unwrap();
    assert_eq!(allowed(&mut matcher), vec![IM_END]);
    let mut matcher = Matcher::with_budget(compiled, 4).expect("fits in 4");
    matcher.accept_token(IM_START).unwrap();
    assert_eq!(allowed(&mut matcher), vec![id("ab"), IM_END]);
}

#[test]
fn budgets_count_token_terminals_on_earley_and_token_dfa() {
    for backend in [BackendKind::Earley, BackendKind::TokenDfa] {
        let compiled = compile_on(r#"root ::= "a" <|tool|> "b"?"#, backend).unwrap();
        // "a", the token terminal, EOS.
        assert!(
            matches!(
                Matcher::with_budget(compiled.clone(), 2),
                Err(MatcherError::BudgetTooSmall {
                    needed: Some(3),
                    ..
                })
            ),
            "{backend}"
        );
        let mut matcher = Matcher::with_budget(compiled, 3).expect("fits in 3");
        assert_eq!(allowed(&mut matcher), vec![0], "{backend}");
        matcher.accept_token(0).unwrap();
        assert_eq!(allowed(&mut matcher), vec![TOOL], "{backend}");
        matcher.accept_token(TOOL).unwrap();
        // No room for "b": only EOS.
        assert_eq!(allowed(&mut matcher), vec![IM_END, EOS], "{backend}");
    }
}

/// The LR backend bounds completions in single-byte text tokens, which cannot spell a token
/// terminal: a budget whose every completion needs one is refused (never unsound), and one
/// that text alone can finish works.
#[test]
fn lr_budgets_refuse_completions_through_token_terminals() {
    let needed = compile_on(r#"root ::= "a" <|tool|>"#, BackendKind::Lr).unwrap();
    assert!(matches!(
        Matcher::with_budget(needed, 50),
        Err(MatcherError::BudgetTooSmall { needed: None, .. })
    ));
    let optional = compile_on(r#"root ::= "a" <|tool|>? "b""#, BackendKind::Lr).unwrap();
    let mut matcher = Matcher::with_budget(optional, 3).expect("text finishes in 3");
    matcher.accept_token(0).unwrap();
    assert_eq!(allowed(&mut matcher), vec![1]);
}

/// A class loop before a token terminal: the Earley completion table finds the terminal's
/// encoding past the loop's many text tokens (its trie walk budgets text and encodings
/// apart), and the budget filter decides the tokens read by encoding first.
#[test]
fn budgets_see_a_token_terminal_after_a_class_loop() {
    for backend in [BackendKind::Earley, BackendKind::TokenDfa] {
        let compiled = compile_on(r#"root ::= [a-z]* <|tool|>"#, backend).unwrap();
        let mut tight = Matcher::with_budget(compiled.clone(), 2).expect("fits in 2");
        assert_eq!(allowed(&mut tight), vec![TOOL], "{backend}");
        let mut roomy = Matcher::with_budget(compiled, 3).expect("fits in 3");
        let letters: Vec<u32> = ["a", "b", "ab", "think", "x", "ok"].map(id).into();
        let mut expected = letters.clone();
        expected.push(TOOL);
        expected.sort_unstable();
        assert_eq!(allowed(&mut roomy), expected, "{backend}");
        roomy.accept_token(id("think")).unwrap();
        assert_eq!(allowed(&mut roomy), vec![TOOL], "{backend}");
    }
}

/// Random grammars mixing token terminals and text that can spell the same tokens (so the
/// id reading and the text reading meet), walked along random allowed tokens: the mask
/// equals the feed rule at every step, on every backend that compiles the grammar.
mod random {
    use super::*;
    use proptest::prelude::*;

    const LEAVES: &[&str] = &[
        r#""a""#,
        r#""ab""#,
        r#""<think>""#,
        "<think>",
        "<|tool|>",
        "<[^0]>",
        "!<|tool|>",
        "<[0-2]>",
        "[a-z]",
        r#""x""#,
    ];

    fn expr() -> impl Strategy<Value = String> {
        let leaf = (0..LEAVES.len()).prop_map(|i| LEAVES[i].to_owned());
        leaf.prop_recursive(3, 12, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 2..4).prop_map(|v| v.join(" ")),
                prop::collection::vec(inner.clone(), 2..4)
                    .prop_map(|v| format!("({})", v.join(" | "))),
                inner.clone().prop_map(|e| format!("({e})*")),
                inner.prop_map(|e| format!("({e})?")),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn masks_equal_the_feed_rule(body in expr(), picks in prop::collection::vec(any::<u16>(), 8)) {
            let grammar = format!("root ::= {body}");
            for backend in BackendKind::ALL {
                let Ok(compiled) = compile_on(&grammar, backend) else {
                    prop_assert!(backend != BackendKind::Earley, "{grammar}");
                    continue;
                };
                let mut matcher = Matcher::new(compiled);
                for (step, &pick) in picks.iter().enumerate() {
                    let mask = allowed(&mut matcher);
                    prop_assert_eq!(&mask, &oracle(&mut matcher), "{} on {}, step {}", grammar, backend, step);
                    if mask.is_empty() || matcher.is_terminated() {
                        break;
                    }
                    let token = mask[pick as usize % mask.len()];
                    matcher.accept_token(token).expect("allowed");
                    if matcher.is_terminated() {
                        break;
                    }
                }
            }
        }
    }
}
