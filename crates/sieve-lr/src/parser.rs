//! [`LrParser`]: the per-request state of the LR backend — the frame arena of
//! [`crate::machine`] and, per consumed byte, the arena lengths before it.
//!
//! # Invariants
//!
//! - The stack's top frame is the last frame of the arena, and every byte consumed is one
//!   [`step`] that ended in a shift; popping a byte truncates the arena to its length before
//!   that byte, which restores exactly the state before it.
//! - A byte is accepted iff its step shifts it. Normalised grammars have no useless rules, so
//!   every LR state reached by shifts can be continued to a sentence: accepted bytes are
//!   exactly the prefixes of sentences, and [`LrParser::allowed_bytes`] is exactly the bytes
//!   [`LrParser::push_byte`] accepts (it runs the same step on a read-only overlay).
//! - A failed push (rejected byte or limit) leaves the parser unchanged.
//! - A token end ([`LrParser::end_token`], grammars with token limits) is applied at most
//!   once per length, on the arena after the token's last byte and before the next byte's
//!   mark, so popping that last byte undoes it; `ends` lists the lengths where one applies.

use std::sync::Arc;

use sieve_backend::LimitError;
use sieve_ir::ByteClass;

use crate::edges::{Edge, EdgeCache, EdgeKey, DEPTH, PACKED, SYMBOLIC};
use crate::lookahead::EOF;
use crate::machine::{end_token, step, Frame, Frames as _, Overlay, Stack, Step, UNKNOWN};
use crate::tables::{PAYLOAD, REDUCE, SHIFT};
use crate::{LrCompletion, LrGrammar};

/// The LR backend's recogniser: a deterministic pushdown automaton over the grammar's LR
/// tables, with a cheap push/pop stack discipline.
#[derive(Clone, Debug)]
pub struct LrParser {
    grammar: Arc<LrGrammar>,
    stack: Stack,
    /// Per consumed byte, the arena lengths before it.
    history: Vec<(u32, u32)>,
    /// The edges this parser took last, in front of the grammar's table.
    edges: EdgeCache,
    /// The lengths after which a token ended, ascending (see the module docs).
    ends: Vec<usize>,
}

impl LrParser {
    /// A parser at the start of the input.
    pub fn new(grammar: Arc<LrGrammar>) -> LrParser {
        let stack = initial_stack(&grammar);
        LrParser {
            grammar,
            stack,
            history: Vec::new(),
            edges: EdgeCache::default(),
            ends: Vec::new(),
        }
    }

    /// The grammar's tables.
    pub fn grammar(&self) -> &Arc<LrGrammar> {
        &self.grammar
    }

    /// Consumes `byte`: `Ok(true)` if the input is still a prefix of a sentence, `Ok(false)`
    /// (and nothing changed) otherwise.
    ///
    /// # Errors
    /// A [`LimitError`] when a [`crate::Config`] bound would be exceeded; nothing changed.
    pub fn push_byte(&mut self, byte: u8) -> Result<bool, LimitError> {
        let config = &self.grammar.config;
        if self.history.len() >= config.max_bytes_history {
            return Err(LimitError::new(
                "max_bytes_history",
                config.max_bytes_history,
                "the input is longer than the LR parser may keep",
            ));
        }
        let mark = self.stack.mark();
        let outcome = match aggregated(&self.grammar, &mut self.stack, &mut self.edges, byte) {
            Some(outcome) => outcome,
            None => {
                let mut fuel = config.max_reductions_per_byte;
                step(
                    &self.grammar.tables,
                    &mut self.stack,
                    usize::from(byte),
                    &mut fuel,
                )
            }
        };
        match outcome {
            Step::Shifted if self.stack.frames.len() > config.max_frames => {
                self.stack.truncate(mark);
                Err(LimitError::new(
                    "max_frames",
                    config.max_frames,
                    "the LR parser's frames would exceed their bound",
                ))
            }
            Step::Shifted => {
                self.history.push(mark);
                Ok(true)
            }
            Step::OutOfFuel => {
                self.stack.truncate(mark);
                Err(LimitError::new(
                    "max_reductions_per_byte",
                    config.max_reductions_per_byte,
                    "one byte would take more reductions than allowed",
                ))
            }
            Step::Rejected | Step::Unknown | Step::Accepted => {
                self.stack.truncate(mark);
                Ok(false)
            }
        }
    }

    /// Undoes the last `n` bytes.
    ///
    /// # Panics
    /// When `n > self.len()`.
    pub fn pop_bytes(&mut self, n: usize) {
        assert!(n <= self.history.len(), "popping more bytes than pushed");
        let keep = self.history.len() - n;
        if let Some(&mark) = self.history.get(keep) {
            self.stack.truncate(mark);
        }
        self.history.truncate(keep);
        while self.ends.last().is_some_and(|&end| end > keep) {
            self.ends.pop();
        }
    }

    /// Whether a token ended at the current length (or nothing was consumed yet).
    fn token_ended(&self) -> bool {
        self.history.is_empty() || self.ends.last() == Some(&self.history.len())
    }

    /// Marks the end of a token here, for grammars with token limits: occurrences of limited
    /// rules count it, and those that could no longer finish within their limit are dropped.
    /// Returns `false` (and changes nothing) when none of the parser's items survive; popping
    /// the token's last byte undoes it. A second call at the same length changes nothing.
    pub fn end_token(&mut self) -> bool {
        if self.token_ended() {
            return true;
        }
        if !end_token(&self.grammar.tables, &mut self.stack) {
            return false;
        }
        self.ends.push(self.history.len());
        true
    }

    /// Whether [`LrParser::end_token`] would succeed; changes nothing.
    pub fn can_end_token(&self) -> bool {
        self.token_ended() || {
            let top = self.stack.top().state;
            self.grammar.tables.token_end(top) != crate::tables::TokenEnd::Dead
        }
    }

    /// The number of bytes consumed.
    pub fn len(&self) -> usize {
        self.history.len()
    }

    /// Whether no byte has been consumed.
    pub fn is_empty(&self) -> bool {
        self.history.is_empty()
    }

    /// Whether the input so far is a sentence (end of input reaches acceptance; a run out of
    /// fuel counts as no).
    pub fn can_finish(&self) -> bool {
        self.would(EOF) == Step::Accepted
    }

    /// Exactly the bytes [`LrParser::push_byte`] accepts now (limits aside).
    pub fn allowed_bytes(&self) -> ByteClass {
        let tables = &self.grammar.tables;
        let top = self.stack.top().state;
        let mut class = ByteClass::EMPTY;
        for byte in 0..=255u8 {
            let action = tables.action(top, usize::from(byte));
            let allowed = match action & !PAYLOAD {
                0 => false,
                SHIFT => true,
                _ => self.would(usize::from(byte)) == Step::Shifted,
            };
            if allowed {
                class.insert(byte);
            }
        }
        class
    }

    /// The outcome of `terminal` now, without changing anything.
    fn would(&self, terminal: usize) -> Step {
        let mut overlay = Overlay::new(&self.stack);
        let mut fuel = self.grammar.config.max_reductions_per_byte;
        step(&self.grammar.tables, &mut overlay, terminal, &mut fuel)
    }

    /// An upper bound on the text tokens of `table`'s vocabulary that reach a sentence from
    /// here, with the seam's descent property: `Some(0)` only on a sentence, and for
    /// `Some(u)`, `u > 0`, some single-byte text token is accepted now and leaves a bound of
    /// at most `u - 1`. `None` when no completion uses only single-byte tokens. Read as if
    /// the last token ended here (`None` when that end would be rejected).
    pub fn completion_bound_with(&self, table: &LrCompletion) -> Option<u32> {
        let tables = &self.grammar.tables;
        let mut overlay = Overlay::new(&self.stack);
        if !self.token_ended() && !end_token(tables, &mut overlay) {
            return None;
        }
        crate::completion::bound(tables, self.grammar.rules.start_rule, table, &overlay)
    }

    /// The LR state on top of the stack.
    pub fn top_state(&self) -> u32 {
        self.stack.top().state
    }

    /// The frames below the top, innermost first, up to `max`: each frame's state, and the
    /// top's (then each frame's) kernel origins packed as distances along the chain (see
    /// [`crate::classify`]). Empty at the bottom of the stack.
    pub(crate) fn context_frames(&self, max: usize) -> Vec<(u32, u32)> {
        let mut chain: Vec<u32> = vec![self.stack.frames.len() as u32 - 1];
        while chain.len() <= max {
            let parent = self.stack.frame(*chain.last().expect("non-empty")).parent;
            if parent == UNKNOWN {
                break;
            }
            chain.push(parent);
        }
        let tables = &self.grammar.tables;
        (1..chain.len())
            .map(|i| {
                let below = self.stack.frame(chain[i]);
                let above: Frame = self.stack.frame(chain[i - 1]);
                let kernel = tables.kernel_len(above.state).min(crate::classify::PACKED);
                let mut packed = 0u32;
                for k in 0..kernel {
                    let origin = self.stack.origins[above.origins as usize + k];
                    let distance = chain[i - 1..]
                        .iter()
                        .position(|&f| f == origin)
                        .filter(|&d| (1..16).contains(&d))
                        .unwrap_or(0);
                    packed |= (distance as u32) << (4 * k);
                }
                (below.state, packed)
            })
            .collect()
    }
}

/// The stack of the empty input: the start state, whose one kernel item (the augmented start
/// rule) has no origin (it only ever accepts).
fn initial_stack(grammar: &LrGrammar) -> Stack {
    let kernel = grammar.tables.kernel_len(0);
    Stack {
        frames: vec![Frame {
            state: 0,
            parent: UNKNOWN,
            origins: 0,
        }],
        origins: vec![UNKNOWN; kernel],
    }
}

/// Takes `byte`'s aggregated edge on `stack` when its top action is a reduction (a direct shift or an
/// error is one look-up either way): [`Step::Shifted`] or [`Step::Rejected`], or `None`
/// for the step-by-step path (no key, an edge that reads deeper than its key, a full
/// table). Appends exactly what [`step`] would.
fn aggregated(
    grammar: &LrGrammar,
    stack: &mut Stack,
    cache: &mut EdgeCache,
    byte: u8,
) -> Option<Step> {
    let tables = &grammar.tables;
    let top = stack.top();
    if tables.action(top.state, usize::from(byte)) & !PAYLOAD != REDUCE
        || stack.frames.len() + stack.origins.len() >= SYMBOLIC as usize
    {
        return None;
    }
    // The configuration: up to `DEPTH` frames from the top, by arena index.
    let mut chain = [UNKNOWN; DEPTH];
    let mut n = 1;
    chain[0] = stack.frames.len() as u32 - 1;
    while n < DEPTH {
        let parent = stack.frame(chain[n - 1]).parent;
        if parent == UNKNOWN {
            break;
        }
        chain[n] = parent;
        n += 1;
    }
    let mut key = EdgeKey {
        class: tables.class(usize::from(byte)),
        len: n as u8,
        frames: [(0, 0); DEPTH],
    };
    for i in 0..n {
        let frame = stack.frame(chain[i]);
        let kernel = tables.kernel_len(frame.state);
        if kernel > PACKED {
            return None;
        }
        let origins = &stack.origins[frame.origins as usize..][..kernel];
        let mut packed = 0u32;
        for (k, origin) in origins.iter().enumerate() {
            if let Some(j) = chain[i + 1..n].iter().position(|f| f == origin) {
                packed |= ((i + 1 + j) as u32) << (4 * k);
            }
        }
        key.frames[i] = (frame.state, packed);
    }
    let fuel = grammar.config.max_reductions_per_byte;
    match cache.edge(&grammar.edges, tables, &key, usize::from(byte), fuel)? {
        Edge::Step => None,
        Edge::Rejected => Some(Step::Rejected),
        Edge::Shifted {
            frames,
            origins,
            origin_base,
        } => {
            let (base_frames, base_origins) = stack.mark();
            let bottom_parent = stack.frame(chain[n - 1]).parent;
            // Reads only frames and origins older than the edge's.
            let map = |stack: &Stack, x: u32| -> u32 {
                if x == UNKNOWN {
                    bottom_parent
                } else if x >= SYMBOLIC {
                    let c = (x - SYMBOLIC) as usize;
                    let frame = stack.frame(chain[c / PACKED]);
                    stack.origins[frame.origins as usize + c % PACKED]
                } else if (x as usize) < n {
                    chain[n - 1 - x as usize]
                } else {
                    base_frames + x - n as u32
                }
            };
            for &o in origins.iter() {
                let origin = map(stack, o);
                stack.origins.push(origin);
            }
            for f in frames.iter() {
                let parent = map(stack, f.parent);
                stack.frames.push(Frame {
                    state: f.state,
                    parent,
                    origins: base_origins + f.origins - origin_base,
                });
            }
            Some(Step::Shifted)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    fn grammar(text: &str, max_edges: usize) -> Arc<LrGrammar> {
        let grammar = sieve_gbnf::compile(text, &Default::default()).expect("valid grammar");
        let normalized =
            sieve_normalize::normalize(&grammar, &Default::default()).expect("normalises");
        let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
            .build(&normalized)
            .expect("builds");
        let config = Config {
            max_edges,
            ..Config::default()
        };
        Arc::new(LrGrammar::new(&fsms, false, config).expect("LR(1)"))
    }

    fn limited_fsms(text: &str) -> sieve_fsm::GrammarFsms {
        let grammar = sieve_gbnf::compile(text, &Default::default()).expect("valid grammar");
        let normalized =
            sieve_normalize::normalize(&grammar, &Default::default()).expect("normalises");
        sieve_fsm::Builder::new(sieve_fsm::Config::new())
            .build(&normalized)
            .expect("builds")
    }

    /// Single bytes only: a token is a byte, and `rest` counts bytes.
    fn byte_trie() -> sieve_vocab::TokenTrie {
        let lines: String = (b'a'..=b'z')
            .chain(*b"<>-")
            .map(|b| format!("\"{}\"\n", b as char))
            .collect();
        let vocab = sieve_vocab::plain::parse(lines.as_bytes(), &Default::default()).unwrap();
        sieve_vocab::TokenTrie::new(&vocab)
    }

    #[test]
    fn a_limited_grammar_needs_a_vocabulary() {
        let fsms = limited_fsms("root ::= \"<\" w \">\"\nw[max_tokens=3] ::= [a-z]+");
        let error = LrGrammar::new(&fsms, false, Config::default()).unwrap_err();
        assert_eq!(error, crate::LrError::NeedsVocabulary { rule: "w".into() });
    }

    /// `w` may touch three tokens: after two one-letter tokens inside it, a third may only
    /// end it, and popping that token's bytes undoes its end.
    #[test]
    fn token_ends_count_tokens_and_are_undone_by_popping() {
        let fsms = limited_fsms("root ::= \"<\" w \">\"\nw[max_tokens=3] ::= [a-z]+");
        let grammar = LrGrammar::with_token_limits(&fsms, false, Config::default(), &byte_trie())
            .expect("LR(1)");
        assert!(grammar.has_token_limits());
        let mut parser = LrParser::new(Arc::new(grammar));
        for &b in b"<ab" {
            assert_eq!(parser.push_byte(b), Ok(true));
            assert!(parser.end_token());
            // A second end at the same length counts nothing.
            assert!(parser.end_token());
        }
        assert_eq!(parser.push_byte(b'c'), Ok(true));
        // "c" continues as "cd" within the third token; after it ends, `w` can only close.
        assert_eq!(parser.push_byte(b'd'), Ok(true));
        assert!(parser.can_end_token() && parser.end_token());
        assert_eq!(parser.push_byte(b'e'), Ok(false));
        let closed = parser.allowed_bytes();
        assert!(closed.contains(b'>') && !closed.contains(b'e'));
        // Undo "cd" and its end: back after "b", whose end is kept.
        parser.pop_bytes(2);
        assert_eq!(parser.push_byte(b'c'), Ok(true));
        assert!(parser.allowed_bytes().contains(b'x'));
        assert!(parser.end_token());
        assert!(!parser.allowed_bytes().contains(b'x'));
        assert_eq!(parser.push_byte(b'>'), Ok(true));
        assert!(parser.can_finish());
    }

    /// A token end that leaves `w` too few tokens to finish kills it: `w` needs `-` and a
    /// letter after its letters, two single-byte tokens, so after two letter-tokens inside it
    /// a third may not end (one token left), though a token "c-" may.
    #[test]
    fn a_token_end_that_leaves_too_few_tokens_is_refused() {
        let fsms = limited_fsms("root ::= \"<\" w \">\"\nw[max_tokens=4] ::= [a-z]+ \"-\" [a-z]");
        let grammar = LrGrammar::with_token_limits(&fsms, false, Config::default(), &byte_trie())
            .expect("LR(1)");
        let mut parser = LrParser::new(Arc::new(grammar));
        for &b in b"<ab" {
            assert_eq!(parser.push_byte(b), Ok(true));
            assert!(parser.end_token());
        }
        assert_eq!(parser.push_byte(b'c'), Ok(true));
        assert!(!parser.can_end_token());
        assert!(!parser.end_token());
        assert_eq!(parser.push_byte(b'-'), Ok(true));
        assert!(parser.end_token());
        assert_eq!(parser.push_byte(b'd'), Ok(true));
        assert!(parser.end_token());
        assert_eq!(parser.push_byte(b'>'), Ok(true));
        assert!(parser.can_finish());
    }

    /// The arenas themselves (frames, parents, origins) are equal after every byte, with the
    /// table large, tiny and off; nested rules make chains that pop several frames.
    #[test]
    fn aggregated_edges_append_exactly_what_the_step_appends() {
        let text = r#"root ::= "[" (v ("," v)*)? "]"
v ::= root | [0-9]+ | "(" v ")""#;
        let grammars = [grammar(text, 0), grammar(text, 1 << 16), grammar(text, 1)];
        let input = b"[1,[2,(3)],[[[]]],((4)),[5,[6,[7]]],8]";
        for prefix in [&input[..], b"[1,[2,x", b"[[(1]"] {
            let mut parsers: Vec<LrParser> =
                grammars.iter().map(|g| LrParser::new(g.clone())).collect();
            for &b in prefix {
                let pushed: Vec<bool> = parsers
                    .iter_mut()
                    .map(|p| p.push_byte(b).unwrap())
                    .collect();
                assert!(pushed.iter().all(|&p| p == pushed[0]), "byte {}", b as char);
                for p in &parsers[1..] {
                    assert_eq!(p.stack, parsers[0].stack, "byte {}", b as char);
                    assert_eq!(p.history, parsers[0].history);
                }
            }
        }
        assert_eq!(grammars[0].edge_count(), 0);
        assert!(grammars[1].edge_count() > 5);
        assert_eq!(grammars[2].edge_count(), 1);
    }
}
