//! The classification store shared across grammars: a second schema that shares rules with a
//! first reuses their classifications, and its masks are the same as without sharing.

use std::sync::Arc;

use sieve_matcher::{AheadOfTime, CompiledGrammar, Matcher, Options, Tokenizer};
use sieve_vocab::Vocabulary;

mod common;
use common::compile_sharing;

fn schema(text: &str) -> sieve_ir::Grammar {
    let value: serde_json::Value = serde_json::from_str(text).expect("JSON");
    let options = sieve_jsonschema::Options {
        escapes: sieve_jsonschema::Escapes::Canonical,
        ..Default::default()
    };
    sieve_jsonschema::compile(&value, &options)
        .expect("compiles")
        .grammar
}

/// The masks along `text`, fed a byte at a time as single-byte tokens would be... fed as
/// the longest tokens of the vocabulary instead, like a real tokenizer.
fn masks_along(compiled: &Arc<CompiledGrammar>, text: &str) -> Vec<Vec<u32>> {
    let trie = compiled.trie();
    let mut matcher = Matcher::new(compiled.clone());
    let mut masks = Vec::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    loop {
        let mut mask = vec![0u32; compiled.bitmask_words()];
        matcher.fill_next_token_bitmask(&mut mask).expect("mask");
        masks.push(mask);
        if at == bytes.len() {
            break;
        }
        let (len, id) = (1..=(bytes.len() - at).min(16))
            .rev()
            .find_map(|len| trie.find(&bytes[at..at + len]).map(|id| (len, id)))
            .expect("single bytes are tokens");
        matcher.accept_token(id.as_u32()).expect("on the sample");
        at += len;
    }
    masks
}

const FIRST: &str = r#"{"type": "object", "properties": {
    "name": {"type": "string"}, "age": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}},
    "required": ["name", "age", "tags"], "additionalProperties": false}"#;
/// A schema that embeds the first as a property (tool parameters reused in a larger schema):
/// its object's members rule, with the string, integer and array states inside it, is the
/// first schema's, structurally.
fn second_schema() -> String {
    format!(
        r#"{{"type": "object", "properties": {{"id": {{"type": "integer"}}, "person": {FIRST}}},
        "required": ["id", "person"], "additionalProperties": false}}"#
    )
}

#[test]
fn a_second_schema_reuses_the_first_ones_classifications() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let tokenizer = Arc::new(Tokenizer::new(vocab.clone()));
    let first = compile_sharing(&schema(FIRST), &tokenizer, true);
    masks_along(&first, r#"{"name":"Ada","age":36,"tags":["x","yz"]}"#);
    let after_first = tokenizer.store_stats();
    assert!(after_first.entries > 0, "{after_first:?}");

    let second = compile_sharing(&schema(&second_schema()), &tokenizer, true);
    let text = r#"{"id":1,"person":{"name":"Go","age":7,"tags":["a","bc"]}}"#;
    let shared = masks_along(&second, text);
    let after_second = tokenizer.store_stats();
    let hits = after_second.hits - after_first.hits;
    assert!(
        hits >= 3,
        "the string, integer and array states are shared: {after_second:?}"
    );

    // Sharing changes where classifications come from, never the masks.
    let alone = Arc::new(Tokenizer::new(vocab));
    let unshared = masks_along(
        &compile_sharing(&schema(&second_schema()), &alone, false),
        text,
    );
    assert!(shared == unshared, "masks differ with sharing");
    assert_eq!(alone.store_stats().entries, 0);
}

/// A tokenizer with fresh caches shares the vocabulary and trie but none of the rule
/// automata or classifications of the one it came from (how `sieve bench` makes each cold
/// compile a first one), and its masks are the same.
#[test]
fn fresh_caches_share_nothing_but_the_vocabulary() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let tokenizer = Arc::new(Tokenizer::new(vocab));
    let text = r#"{"name":"Ada","age":36,"tags":["x","yz"]}"#;
    let first = masks_along(&compile_sharing(&schema(FIRST), &tokenizer, true), text);
    let built = tokenizer.automata_stats();
    assert!(built.entries > 0 && tokenizer.store_stats().entries > 0);

    let fresh = Arc::new(tokenizer.with_fresh_caches());
    assert!(
        std::ptr::eq(fresh.trie(), tokenizer.trie()),
        "the trie is shared"
    );
    assert_eq!(fresh.automata_stats().entries, 0);
    assert_eq!(fresh.store_stats().entries, 0);
    let again = masks_along(&compile_sharing(&schema(FIRST), &fresh, true), text);
    assert_eq!(
        fresh.automata_stats().hits,
        0,
        "{:?}",
        fresh.automata_stats()
    );
    assert_eq!(fresh.store_stats().hits, 0, "{:?}", fresh.store_stats());
    assert!(first == again, "masks differ with fresh caches");
    // The first tokenizer's caches are untouched by the fresh one's work.
    assert_eq!(tokenizer.automata_stats(), built);
}

#[test]
fn a_store_of_zero_bytes_keeps_nothing_and_masks_stay_the_same() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let tokenizer = Arc::new(Tokenizer::with_store_budget(vocab.clone(), 0));
    let text = r#"{"name":"Ada","age":36,"tags":[]}"#;
    let masks = masks_along(&compile_sharing(&schema(FIRST), &tokenizer, true), text);
    assert_eq!(tokenizer.store_stats().entries, 0);
    let fresh = Arc::new(Tokenizer::new(vocab));
    assert!(masks == masks_along(&compile_sharing(&schema(FIRST), &fresh, false), text));
}

#[test]
fn ahead_of_time_classification_gives_the_same_masks() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let text = r#"{"name":"Ada","age":36,"tags":["x"]}"#;
    let lazy = masks_along(
        &compile_sharing(
            &schema(FIRST),
            &Arc::new(Tokenizer::new(vocab.clone())),
            false,
        ),
        text,
    );
    for ahead in [
        AheadOfTime::All { parallel: false },
        AheadOfTime::All { parallel: true },
        AheadOfTime::Within {
            budget: std::time::Duration::ZERO,
            parallel: false,
        },
    ] {
        let tokenizer = Arc::new(Tokenizer::new(vocab.clone()));
        let options = Options {
            ahead_of_time: ahead,
            share_classifications: false,
            ..Options::default()
        };
        let compiled = Arc::new(CompiledGrammar::new(&schema(FIRST), tokenizer, &options).unwrap());
        let classified = compiled.cache_stats().entries;
        match ahead {
            AheadOfTime::Within { .. } => assert!(classified <= 1, "{classified}"),
            _ => assert!(classified > 10, "{classified}"),
        }
        assert!(masks_along(&compiled, text) == lazy, "{ahead:?}");
    }
}
