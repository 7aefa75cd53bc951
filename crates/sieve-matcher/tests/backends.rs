//! Semantics every backend shares at the edges of the language: a pumping rule's prefixes are
//! viable (the seam's contract, found by fuzzing when the token DFA trimmed them), a grammar
//! with no sentence at all is refused, and masks agree bit for bit with brute force.

use std::sync::Arc;

use sieve_matcher::{BackendKind, CompiledGrammar, Matcher, Options, Tokenizer};

fn tokenizer() -> Arc<Tokenizer> {
    let list = "\"a\"\n\"b\"\n\"x\"\n\"aa\"\n\"ab\"\n\"xa\"\nspecial:\"</s>\"\n";
    let vocab = sieve_vocab::plain::parse(list.as_bytes(), &Default::default()).expect("list");
    Arc::new(Tokenizer::new(Arc::new(vocab)))
}

fn masks_along(compiled: &Arc<CompiledGrammar>, tokens: &[u32]) -> Vec<Vec<u32>> {
    let mut matcher = Matcher::new(compiled.clone());
    let mut masks = Vec::new();
    for step in 0..=tokens.len() {
        let mut mask = vec![0u32; compiled.bitmask_words()];
        matcher.fill_next_token_bitmask(&mut mask).expect("mask");
        // Brute force: every token on its own.
        for id in 0..compiled.vocabulary().n_vocab() as u32 {
            let allowed = matcher.validate_tokens(&[id]).expect("no limit") == 1;
            assert_eq!(mask[0] >> id & 1 == 1, allowed, "token {id} at step {step}");
        }
        masks.push(mask);
        if let Some(&token) = tokens.get(step) {
            matcher.accept_token(token).expect("allowed");
        }
    }
    masks
}

#[test]
fn prefixes_of_infinite_derivations_are_viable_on_every_backend() {
    let tokenizer = tokenizer();
    // `a`, then `aa`: tokens 0 and 3.
    for grammar in [
        r#"root ::= "a" root"#,
        r#"root ::= "x" | "a" loop
loop ::= "a" loop"#,
    ] {
        let grammar = sieve_gbnf::compile(grammar, &Default::default()).expect("grammar");
        let mut reference: Option<Vec<Vec<u32>>> = None;
        for backend in BackendKind::ALL {
            let options = Options {
                backend: backend.into(),
                ..Options::default()
            };
            let compiled = Arc::new(
                CompiledGrammar::new(&grammar, tokenizer.clone(), &options)
                    .unwrap_or_else(|e| panic!("{backend}: {e}")),
            );
            let masks = masks_along(&compiled, &[0, 3]);
            assert!(
                masks.iter().all(|m| m[0] & 1 == 1),
                "{backend}: `a` is viable"
            );
            match &reference {
                None => reference = Some(masks),
                Some(expected) => assert_eq!(&masks, expected, "{backend} against earley"),
            }
        }
    }
}

#[test]
fn a_grammar_with_no_sentence_and_no_infinite_derivation_is_refused_on_every_backend() {
    let tokenizer = tokenizer();
    let grammar = sieve_gbnf::compile(r#"root ::= root"#, &Default::default()).expect("grammar");
    for backend in BackendKind::ALL {
        let options = Options {
            backend: backend.into(),
            ..Options::default()
        };
        assert!(
            CompiledGrammar::new(&grammar, tokenizer.clone(), &options).is_err(),
            "{backend}"
        );
    }
}

#[test]
fn auto_is_earley_just_in_time_and_a_small_token_dfa_ahead_of_time() {
    use sieve_matcher::{AheadOfTime, BackendChoice, AUTO_TOKEN_DFA_STATES};
    let tokenizer = tokenizer();
    let backend_of = |pattern: &str, ahead: bool| {
        let grammar = sieve_regex::compile(pattern, &Default::default()).expect("regex");
        let options = Options {
            backend: BackendChoice::Auto,
            ahead_of_time: if ahead {
                AheadOfTime::All { parallel: false }
            } else {
                AheadOfTime::Off
            },
            ..Options::default()
        };
        CompiledGrammar::new(&grammar, tokenizer.clone(), &options)
            .expect("auto compiles everything")
            .backend()
    };
    assert_eq!(backend_of("[ab]+x", false), BackendKind::Earley);
    assert_eq!(backend_of("[ab]+x", true), BackendKind::TokenDfa);
    // A byte 13 places from the end: 2^13 DFA states, past what auto gives the token DFA.
    const STATES: usize = 1 << 13;
    const _: () = assert!(STATES > AUTO_TOKEN_DFA_STATES);
    assert_eq!(backend_of("[ab]*a[ab]{12}", true), BackendKind::Earley);
    // Recursive: Earley.
    let grammar = sieve_gbnf::compile(r#"root ::= "a" root "b" | "x""#, &Default::default())
        .expect("grammar");
    let options = Options {
        backend: BackendChoice::Auto,
        ahead_of_time: AheadOfTime::All { parallel: false },
        ..Options::default()
    };
    let compiled = CompiledGrammar::new(&grammar, tokenizer, &options).expect("compiles");
    assert_eq!(compiled.backend(), BackendKind::Earley);
}
