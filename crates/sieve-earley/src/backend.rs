//! The Earley engine behind the backend seam: [`EarleyGrammar`] is a [`Backend`] whose keys are
//! its global automaton states, and [`Parser`] is its [`Recognizer`].

use std::sync::Arc;

use sieve_backend::{Backend, Classification, Key, Recognizer};
use sieve_ir::ByteClass;
use sieve_vocab::TokenTrie;

use crate::{EarleyGrammar, LimitError, Parser};

impl From<LimitError> for sieve_backend::LimitError {
    fn from(error: LimitError) -> sieve_backend::LimitError {
        sieve_backend::LimitError::new(error.limit_name(), error.limit(), error.to_string())
    }
}

impl Recognizer for Parser {
    fn push_byte(&mut self, byte: u8) -> Result<bool, sieve_backend::LimitError> {
        Ok(Parser::push_byte(self, byte)?)
    }

    fn pop_bytes(&mut self, n: usize) {
        Parser::pop_bytes(self, n);
    }

    fn len(&self) -> usize {
        Parser::len(self)
    }

    fn can_finish(&self) -> bool {
        Parser::can_finish(self)
    }

    fn allowed_bytes(&self) -> ByteClass {
        Parser::allowed_bytes(self)
    }

    fn reset(&mut self) {
        Parser::reset(self);
    }

    /// A scan item's context is the state its rule returns to: for each item waiting on the
    /// rule where it started, that item's state after the rule.
    fn keys(&self, out: &mut Vec<Key>) {
        self.scan_contexts(|state, context| {
            out.push(Key {
                state,
                context: context.unwrap_or(Key::NO_CONTEXT),
            });
        });
    }
}

impl Backend for EarleyGrammar {
    type Recognizer = Parser;

    fn recognizer(self: &Arc<Self>) -> Parser {
        Parser::new(self.clone())
    }

    fn state_count(&self) -> usize {
        EarleyGrammar::state_count(self)
    }

    /// States with byte edges.
    fn is_scannable(&self, key: u32) -> bool {
        self.states[key as usize].class != crate::grammar::NO_CLASS
    }

    fn classify(&self, key: Key, trie: &TokenTrie) -> Classification {
        let context = key.has_context().then_some(key.context);
        crate::classify::classify(self, trie, key.state, context)
    }
}
