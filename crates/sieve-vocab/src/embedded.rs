//! The embedded default vocabulary: GPT-2's `r50k_base` (OpenAI tiktoken, MIT; see
//! `data/LICENSE`), parsed once on first use.
//!
//! Invariant: 50257 ids; ranks 0..50255 are text, 50256 is `<|endoftext|>`, special and the
//! only EOS id.

use crate::{tiktoken, Vocabulary};
use std::sync::OnceLock;

/// `r50k_base.tiktoken`, byte-identical to OpenAI's published file.
static R50K_BASE: &[u8] = include_bytes!("../data/r50k_base.tiktoken");

pub(crate) fn get() -> &'static Vocabulary {
    static VOCAB: OnceLock<Vocabulary> = OnceLock::new();
    VOCAB.get_or_init(|| {
        let options = tiktoken::Options::new()
            .special("<|endoftext|>", 50256)
            .n_vocab(50257)
            .eos([50256]);
        tiktoken::parse(R50K_BASE, &options).expect("the embedded r50k_base file is valid")
    })
}
