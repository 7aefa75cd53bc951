//! Small vocabularies for mask tests, and a tokenizer to walk texts with them.

use std::collections::HashMap;

use sieve_vocab::Vocabulary;

/// Every single byte, the substrings of `samples` of 2 to `max_len` bytes (windows stepping
/// `len - 1`, so tokens cross rule boundaries), the first `at_most` of them in sorted order
/// when given, and `</s>` as the EOS special token.
pub fn substring_vocabulary(
    samples: &[&[u8]],
    max_len: usize,
    at_most: Option<usize>,
) -> Vocabulary {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for sample in samples {
        for len in 2..=max_len {
            for window in sample.windows(len).step_by(len - 1) {
                tokens.push(window.to_vec());
            }
        }
    }
    tokens.sort();
    tokens.dedup();
    if let Some(at_most) = at_most {
        tokens.truncate(at_most);
    }
    let mut list: String = tokens
        .iter()
        .map(|t| {
            let hex: String = t.iter().map(|b| format!("{b:02x}")).collect();
            format!("hex:{hex}\n")
        })
        .collect();
    list.push_str("special:\"</s>\"\n\n");
    sieve_vocab::plain::parse(list.as_bytes(), &Default::default()).expect("valid list")
}

/// Greedy longest-match tokenisation of `text` (any tokenisation will do for a walk).
///
/// # Panics
/// When some byte of `text` is not a token of `vocab`.
pub fn greedy_tokenize(vocab: &Vocabulary, text: &[u8]) -> Vec<u32> {
    let mut by_bytes: HashMap<&[u8], u32> = HashMap::new();
    for id in 0..vocab.n_vocab() as u32 {
        let token = vocab.token(id).expect("in range");
        if !vocab.is_special(token) {
            by_bytes.entry(vocab.bytes(token)).or_insert(id);
        }
    }
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let len = (1..=text.len() - at)
            .rev()
            .find(|&len| by_bytes.contains_key(&text[at..at + len]))
            .expect("single bytes are tokens");
        out.push(by_bytes[&text[at..at + len]]);
        at += len;
    }
    out
}
