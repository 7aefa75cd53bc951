//! Helpers shared by this crate's integration tests. Each test binary uses some of them,
//! hence the `dead_code` allowance.
#![allow(dead_code)]

use std::sync::Arc;

use sieve_earley::{Config, EarleyGrammar};
use sieve_ir::reference::Recognizer;
use sieve_ir::Grammar;

/// Normalises and builds the automata of `grammar`; `None` when its language is empty.
pub fn compile_with(
    grammar: &Grammar,
    normalize: &sieve_normalize::Config,
    config: Config,
) -> Option<Arc<EarleyGrammar>> {
    let normalized = match sieve_normalize::normalize(grammar, normalize) {
        Ok(g) => g,
        Err(sieve_normalize::NormalizeError::EmptyLanguage { .. }) => return None,
        Err(e) => panic!("normalisation failed: {e}"),
    };
    let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
        .build(&normalized)
        .expect("automata build");
    let root_nullable = Recognizer::new(&normalized)
        .expect("small bounds")
        .accepts(b"");
    Some(Arc::new(EarleyGrammar::new(&fsms, root_nullable, config)))
}

/// [`compile_with`] with default settings, for a grammar whose language is not empty.
pub fn compile(grammar: &Grammar) -> Arc<EarleyGrammar> {
    compile_with(
        grammar,
        &sieve_normalize::Config::default(),
        Config::default(),
    )
    .expect("non-empty language")
}
