//! Delimiters that spell a special token's name (Harmony's `<|channel|>`, `<|end|>` in
//! o200k_harmony): XGrammar reads special tokens as their text, so its delimiters match the
//! special token; sieve offers the token terminal beside the spelling (`Lowerer::literal`).
//! Checked token by token against the brute-force mask.

use std::sync::Arc;

use serde_json::json;
use sieve_ir::token::SharedNames;
use sieve_matcher::{CompiledGrammar, Matcher, Options as CompileOptions, Tokenizer};
use sieve_structural::Options;
use sieve_vocab::Vocabulary;

/// Text tokens 0..12, then `<|channel|>` 12, `<|message|>` 13, `<|end|>` 14, `</s>` 15 (EOS).
const TEXT: &[&str] = &[
    "<|", "|>", "channel", "message", "end", "final", "hi", " ", "<", "|", ">", "x",
];
const CHANNEL: u32 = 12;
const MESSAGE: u32 = 13;
const END: u32 = 14;
const EOS: u32 = 15;

fn vocab() -> Arc<Vocabulary> {
    let mut list: String = TEXT
        .iter()
        .map(|t| serde_json::to_string(t).unwrap() + "\n")
        .collect();
    for special in ["<|channel|>", "<|message|>", "<|end|>", "</s>"] {
        list.push_str(&format!(
            "special:{}\n",
            serde_json::to_string(special).unwrap()
        ));
    }
    Arc::new(sieve_vocab::plain::parse(list.as_bytes(), &Default::default()).unwrap())
}

fn compiled() -> Arc<CompiledGrammar> {
    let vocab = vocab();
    let tag = json!({"type": "structural_tag", "format": {
        "type": "tag",
        "begin": "<|channel|>final<|message|>",
        "content": {"type": "any_text"},
        "end": "<|end|>",
    }});
    let options = Options {
        tokens: Some(SharedNames(vocab.clone())),
        ..Options::default()
    };
    let grammar = sieve_structural::compile(&tag, &options).expect("compiles");
    let tokenizer = Arc::new(Tokenizer::new(vocab));
    Arc::new(CompiledGrammar::new(&grammar, tokenizer, &CompileOptions::default()).unwrap())
}

fn allowed(matcher: &mut Matcher) -> Vec<u32> {
    let mut mask = vec![0u32; matcher.compiled().bitmask_words()];
    matcher.fill_next_token_bitmask(&mut mask).unwrap();
    (0..matcher.compiled().vocabulary().n_vocab() as u32)
        .filter(|&t| mask[t as usize / 32] & (1 << (t % 32)) != 0)
        .collect()
}

fn oracle(matcher: &mut Matcher) -> Vec<u32> {
    (0..matcher.compiled().vocabulary().n_vocab() as u32)
        .filter(|&t| matcher.validate_tokens(&[t]).unwrap() == 1)
        .collect()
}

fn walk(tokens: &[u32]) {
    let mut matcher = Matcher::new(compiled());
    for (step, &token) in tokens.iter().enumerate() {
        let mask = allowed(&mut matcher);
        assert_eq!(mask, oracle(&mut matcher), "step {step}");
        assert!(
            mask.contains(&token),
            "step {step}: {token} not in {mask:?}"
        );
        matcher.accept_token(token).unwrap();
    }
    assert_eq!(allowed(&mut matcher), vec![EOS]);
}

#[test]
fn a_delimiter_matches_the_special_token_it_spells() {
    walk(&[CHANNEL, 5, MESSAGE, 6, 7, 11, END]);
}

#[test]
fn a_delimiter_still_matches_its_spelling_in_text() {
    // `<|` `channel` `|>` final `<|` `message` `|>` hi `<|` `end` `|>`
    walk(&[0, 2, 1, 5, MESSAGE, 6, 0, 4, 1]);
}

#[test]
fn special_tokens_stay_out_of_free_text() {
    let mut matcher = Matcher::new(compiled());
    for token in [CHANNEL, 5, MESSAGE] {
        matcher.accept_token(token).unwrap();
    }
    let mask = allowed(&mut matcher);
    assert!(!mask.contains(&CHANNEL) && !mask.contains(&MESSAGE));
    assert!(mask.contains(&END) && mask.contains(&6));
}
