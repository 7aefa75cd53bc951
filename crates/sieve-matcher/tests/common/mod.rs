//! Helpers shared by this crate's integration tests: compiling a grammar the way each test
//! needs it, and one mask. Each test binary uses some of them, hence the `dead_code` allowance.
#![allow(dead_code)]

use std::sync::Arc;

use sieve_ir::Grammar;
use sieve_matcher::{BackendKind, CompiledGrammar, Matcher, Options, Tokenizer};
use sieve_vocab::Vocabulary;

/// `grammar` compiled against `vocab` (a tokenizer of its own) with default options.
pub fn compile(grammar: &Grammar, vocab: Arc<Vocabulary>) -> Arc<CompiledGrammar> {
    let tokenizer = Arc::new(Tokenizer::new(vocab));
    Arc::new(CompiledGrammar::new(grammar, tokenizer, &Options::default()).expect("compiles"))
}

/// `grammar` compiled against `vocab` (a tokenizer of its own) on `backend`.
pub fn compile_on(
    grammar: &Grammar,
    vocab: Arc<Vocabulary>,
    backend: BackendKind,
) -> Arc<CompiledGrammar> {
    let tokenizer = Arc::new(Tokenizer::new(vocab));
    let options = Options {
        backend: backend.into(),
        ..Options::default()
    };
    let compiled = CompiledGrammar::new(grammar, tokenizer, &options)
        .unwrap_or_else(|e| panic!("{backend}: {e}"));
    Arc::new(compiled)
}

/// `grammar` compiled against `tokenizer`, sharing classifications through its store when
/// `share`.
pub fn compile_sharing(
    grammar: &Grammar,
    tokenizer: &Arc<Tokenizer>,
    share: bool,
) -> Arc<CompiledGrammar> {
    let options = Options {
        share_classifications: share,
        ..Options::default()
    };
    Arc::new(CompiledGrammar::new(grammar, tokenizer.clone(), &options).expect("compiles"))
}

/// The matcher's next-token mask.
pub fn mask_of(matcher: &mut Matcher) -> Vec<u32> {
    let mut mask = vec![0u32; matcher.compiled().bitmask_words()];
    matcher.fill_next_token_bitmask(&mut mask).expect("mask");
    mask
}
