//! [`ByteMatcher`]: a grammar's recogniser over bytes, for callers without a vocabulary
//! (`sieve match`, validators).
//!
//! # Invariants
//!
//! - It is compiled by the same stages as a [`crate::CompiledGrammar`]
//!   ([`crate::pipeline`]) with the same [`Options`], so it accepts exactly the byte strings
//!   whose tokens a [`crate::Matcher`] of that grammar accepts.
//! - A byte is accepted iff the bytes so far followed by it are a prefix of a sentence (or of
//!   an infinite derivation of a pumping rule); every call that fails or rejects leaves the
//!   matcher unchanged.

use sieve_backend::{LimitError, Recognizer};
use sieve_fsm::GrammarFsms;
use sieve_ir::{ByteClass, Grammar};

use crate::engine::EngineRecognizer;
use crate::pipeline;
use crate::{CompileError, Options};

/// A recogniser of one grammar over bytes: a stack of accepted bytes that can be extended
/// one byte at a time and popped.
///
/// ```
/// use sieve_matcher::{ByteMatcher, Options};
///
/// let grammar = sieve_gbnf::compile(r#"root ::= "yes" | "no""#, &Default::default()).unwrap();
/// let mut matcher = ByteMatcher::new(&grammar, &Options::default()).unwrap();
/// assert_eq!(matcher.push_byte(b'n'), Ok(true));
/// assert_eq!(matcher.push_byte(b'x'), Ok(false)); // rejected, nothing changed
/// assert_eq!(matcher.push_byte(b'o'), Ok(true));
/// assert!(matcher.can_finish());
/// matcher.pop_bytes(2);
/// assert!(matcher.is_empty());
/// ```
#[derive(Clone, Debug)]
pub struct ByteMatcher {
    recognizer: EngineRecognizer,
}

impl ByteMatcher {
    /// Compiles `grammar` through every stage of [`crate::pipeline`] with `options`.
    ///
    /// # Errors
    /// A [`CompileError`] from the stage that failed.
    pub fn new(grammar: &Grammar, options: &Options) -> Result<ByteMatcher, CompileError> {
        let normalized = pipeline::normalize(grammar, options)?;
        let fsms = pipeline::automata(&normalized, options)?;
        ByteMatcher::from_automata(&fsms, options)
    }

    /// The recogniser of automata built by [`pipeline::automata`], with `options`' backend
    /// settings.
    ///
    /// # Errors
    /// A [`CompileError`] when the backend cannot be built (none for the default backend).
    pub fn from_automata(
        fsms: &GrammarFsms,
        options: &Options,
    ) -> Result<ByteMatcher, CompileError> {
        // No tokens, so no token limits to count.
        let engine = pipeline::engine(fsms, options, None)?;
        Ok(ByteMatcher {
            recognizer: engine.start(),
        })
    }

    /// The backend that recognises the grammar (the one `options.backend` chose).
    pub fn backend(&self) -> crate::BackendKind {
        self.recognizer.kind()
    }

    /// Consumes one byte. `Ok(true)`: the bytes so far are still a prefix of a sentence and
    /// the byte was pushed; `Ok(false)`: they would not be, and nothing changed.
    ///
    /// # Errors
    /// A [`LimitError`] when a limit of `options.earley` would be exceeded; nothing changed.
    pub fn push_byte(&mut self, byte: u8) -> Result<bool, LimitError> {
        self.recognizer.push_byte(byte)
    }

    /// Undoes the last `n` pushed bytes.
    ///
    /// # Panics
    /// When `n > self.len()`.
    pub fn pop_bytes(&mut self, n: usize) {
        self.recognizer.pop_bytes(n);
    }

    /// The number of bytes pushed.
    pub fn len(&self) -> usize {
        self.recognizer.len()
    }

    /// Whether no byte has been pushed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the bytes so far are a complete sentence.
    pub fn can_finish(&self) -> bool {
        self.recognizer.can_finish()
    }

    /// Exactly the bytes [`ByteMatcher::push_byte`] would accept now (limits aside).
    pub fn allowed_bytes(&self) -> ByteClass {
        self.recognizer.allowed_bytes()
    }

    /// Back to the empty input.
    pub fn reset(&mut self) {
        self.recognizer.reset();
    }
}
