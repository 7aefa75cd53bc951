//! The token cache against brute force: at every step of sampled walks over every shipped
//! grammar, with GPT-2's vocabulary, the mask equals feeding every token to the recogniser —
//! with contexts never used, always used, and at the default threshold, and with no budget.

use std::sync::Arc;

use sieve_backend::Backend;
use sieve_earley::EarleyGrammar;
use sieve_tokencache::{TokenCache, REFINE_ABOVE};
use sieve_vocab::{TokenTrie, Vocabulary};

fn engine(grammar: &sieve_ir::Grammar) -> Option<Arc<EarleyGrammar>> {
    let normalized =
        sieve_normalize::normalize(grammar, &sieve_normalize::Config::default()).ok()?;
    let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
        .build(&normalized)
        .ok()?;
    let root_nullable = fsms
        .automaton(fsms.root())
        .fsm()
        .is_some_and(|fsm| fsm.is_accepting(fsm.start()));
    Some(Arc::new(EarleyGrammar::new(
        &fsms,
        root_nullable,
        sieve_earley::Config::default(),
    )))
}

/// Grammars with counted repetitions (past the default threshold of 16), whose items the
/// walk completes with counts: alone, nested, unbounded, inside a larger rule.
const COUNTED: &[&str] = &[
    r#"root ::= "[" item ("," item)* "]"
item ::= "\"" [a-z ]{18,40} "\"" | [0-9]{1,30}"#,
    r#"root ::= ("ab" | "c"){20,} "."
"#,
    r#"root ::= "<" ([a-z]{17,20} ";"){2,30} ">"
"#,
    r#"root ::= "{" ("\"" [a-z]{0,3} "\":" ( [a-z ]{5,25} | "x"{17,19} ) ){1,3} "}"
"#,
];

/// Every step of three sampled sentences of each grammar: the masks of four caches (with and
/// without contexts, refined or not) equal brute force, with a rollback every seventh step.
/// The number of steps.
fn masks_equal_brute_force_with_and_without_contexts(
    grammars: impl Iterator<Item = (String, sieve_ir::Grammar)>,
) -> usize {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let trie = TokenTrie::new(&vocab);
    let mut steps = 0;
    for (path, grammar) in grammars {
        let Some(g) = engine(&grammar) else {
            continue;
        };
        let Ok(reference) = sieve_ir::reference::Recognizer::new(&grammar) else {
            continue;
        };
        let caches = [
            TokenCache::with_refinement(Backend::state_count(&*g), usize::MAX, usize::MAX),
            TokenCache::with_refinement(Backend::state_count(&*g), usize::MAX, 0),
            TokenCache::with_refinement(Backend::state_count(&*g), usize::MAX, REFINE_ABOVE),
            TokenCache::with_refinement(Backend::state_count(&*g), 0, 0),
        ];
        for seed in 0..3 {
            let Some(sentence) = reference.sample(seed, 6) else {
                continue;
            };
            let mut recognizer = g.recognizer();
            let mut at = 0;
            loop {
                let expected = sieve_testkit::brute_force_mask(&mut recognizer, &trie);
                for (c, cache) in caches.iter().enumerate() {
                    let mut mask = vec![0u32; expected.len()];
                    cache
                        .fill_text_tokens(&*g, &mut recognizer, &trie, &mut mask)
                        .unwrap();
                    assert!(
                        mask == expected,
                        "{path}: seed {seed}, byte {at}, cache {c}"
                    );
                }
                steps += 1;
                let Some(token) = sieve_testkit::next_token(&trie, &sentence[at..]) else {
                    break;
                };
                for &b in token {
                    assert!(recognizer.push_byte(b).unwrap());
                }
                at += token.len();
                if steps % 7 == 0 {
                    // A rollback and the same token again.
                    recognizer.pop_bytes(token.len());
                    for &b in token {
                        assert!(recognizer.push_byte(b).unwrap());
                    }
                }
            }
        }
    }
    steps
}

#[test]
fn masks_equal_brute_force_with_and_without_contexts_on_the_shipped_grammars() {
    let shipped = sieve_testkit::grammar_files().into_iter().map(|path| {
        (
            path.display().to_string(),
            sieve_testkit::compile_file(&path),
        )
    });
    let steps = masks_equal_brute_force_with_and_without_contexts(shipped);
    assert!(steps > 100, "only {steps} steps");
}

#[test]
fn masks_equal_brute_force_with_and_without_contexts_on_counted_grammars() {
    let counted = COUNTED.iter().map(|text| {
        let grammar = sieve_gbnf::compile(text, &Default::default()).expect("valid");
        (text.to_string(), grammar)
    });
    let steps = masks_equal_brute_force_with_and_without_contexts(counted);
    assert!(steps > 40, "only {steps} steps on counted grammars");
}

/// Short tokens (at most 3 bytes of text; every token's encoding, its token-terminal reading,
/// is 4) against long counted repetitions, so counts far from their bounds are folded into
/// one key: every mask still equals brute force, and the folding keeps the classifications
/// few.
#[test]
fn counts_far_from_their_bounds_share_a_classification() {
    let mut list = String::new();
    for b in b'a'..=b'z' {
        list.push_str(&format!("hex:{b:02x}\n"));
    }
    for token in ["ab", "cd", "abc", "\"a", "z\"", ",", "\""] {
        let hex: String = token.bytes().map(|b| format!("{b:02x}")).collect();
        list.push_str(&format!("hex:{hex}\n"));
    }
    list.push_str("special:\"</s>\"\n");
    let vocab = sieve_vocab::plain::parse(list.as_bytes(), &Default::default()).expect("list");
    let trie = TokenTrie::new(&vocab);
    let grammar = sieve_gbnf::compile(
        r#"root ::= "\"" [a-z]{20,60} "\"" ("," "\"" [a-d]{30,} "\"")?"#,
        &Default::default(),
    )
    .expect("valid");
    let g = engine(&grammar).expect("compiles");
    let cache = TokenCache::with_refinement(Backend::state_count(&*g), usize::MAX, 0);
    let text = format!("\"{}\",\"{}\"", "abcd".repeat(11), "abcd".repeat(12));
    let mut recognizer = g.recognizer();
    let mut steps = 0;
    let mut at = 0;
    let bytes = text.as_bytes();
    loop {
        let expected = sieve_testkit::brute_force_mask(&mut recognizer, &trie);
        let mut mask = vec![0u32; expected.len()];
        cache
            .fill_text_tokens(&*g, &mut recognizer, &trie, &mut mask)
            .unwrap();
        assert!(mask == expected, "byte {at}");
        steps += 1;
        let Some(token) = sieve_testkit::next_token(&trie, &bytes[at..]) else {
            break;
        };
        for &b in token {
            assert!(recognizer.push_byte(b).unwrap());
        }
        at += token.len();
    }
    assert_eq!(at, bytes.len());
    assert!(steps > 30);
    let classified = cache.stats().classified;
    assert!(
        classified < 45,
        "{classified} classifications for {steps} steps: counts were not folded"
    );
}
