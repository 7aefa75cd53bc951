//! Fuzz target for the runtime: a small random grammar, a small random vocabulary and a random
//! sequence of [`Matcher`] calls, with every mask checked against brute force.
//!
//! The fuzz bytes shape a grammar of one to four rules over the bytes `abc`, built with
//! [`GrammarBuilder`] (literals, classes, references, ε, sequences, choices, repetitions with
//! small and now and then counted bounds). A generator seeded with a hash of the whole input
//! (the grammar usually uses up the bytes, and short inputs should still make long walks)
//! draws the rest: whether the root repeats (so many languages are infinite), a vocabulary of
//! up to 43 text tokens of one to four bytes over `abcx` (duplicates allowed) plus an EOS,
//! another special and an unused id at random places, the options (repetition threshold, an
//! empty mask cache, tight recogniser limits, the backend), and up to 64 calls: fill the mask, accept a
//! token from the mask (most often, and EOS rarely, so outputs grow), accept any id or EOS
//! (rejections must leave the matcher unchanged), roll back, reset, accept bytes, validate a
//! draft, ask for the forced bytes.
//!
//! The oracle is a fresh [`sieve_earley::Parser`] per fill over the same normalised grammar
//! (default limits), cloned per token: a text token's bit is set iff the output plus its
//! bytes is viable, an EOS bit iff the output is a sentence, no other special ever. For the
//! first 200 distinct strings of at most 10 bytes, within 50 ms per input, the reference
//! recogniser ([`sieve_ir::reference::Recognizer`], on the normalised grammar) is asked too,
//! so the parser itself is checked. A model of the output, the steps
//! and termination predicts every call's result and is compared after each one.
//!
//! Grammars that do not compile (empty language, limits) are skipped; recogniser limit errors
//! are accepted wherever a text token or bytes are involved (the matcher must then be
//! unchanged). Panics and disagreements are bugs.
//!
//! Run: `cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run matcher -- -max_total_time=600`.

#![no_main]

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use sieve_earley::{EarleyGrammar, Parser};
use sieve_ir::reference::Recognizer;
use sieve_ir::{ByteClass, Expr, Grammar, GrammarBuilder, RuleId};
use sieve_matcher::{BackendChoice, CompiledGrammar, Matcher, MatcherError, Options, Tokenizer};
use sieve_vocab::Vocabulary;

/// The bytes grammars are written over.
const GRAMMAR_BYTES: &[u8] = b"abc";
/// The bytes tokens and raw byte inputs are drawn from (`x` is never in a grammar).
const TOKEN_BYTES: &[u8] = b"abcx";
/// Strings up to this length are also checked with the (slow) reference recogniser...
const REFERENCE_MAX_LEN: usize = 10;
/// ...at most this many distinct strings per input...
const REFERENCE_BUDGET: usize = 200;
/// ...and for at most this long per input (it is cubic, and very ambiguous grammars make it
/// slow; this makes runs slightly nondeterministic in what is cross-checked, never in verdicts).
const REFERENCE_TIME: Duration = Duration::from_millis(50);

fuzz_target!(|data: &[u8]| {
    let seed = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let _ = run(&mut Unstructured::new(data), seed);
});

/// A random expression over rules `0..rules`, at most `depth` deep.
fn expr(u: &mut Unstructured<'_>, rules: usize, depth: u32) -> Result<Expr> {
    if depth == 0 || u.ratio(2, 5)? {
        return Ok(match u.int_in_range(0..=5u8)? {
            0 | 1 => {
                let len = u.int_in_range(1..=3usize)?;
                let mut bytes = Vec::with_capacity(len);
                for _ in 0..len {
                    bytes.push(*u.choose(GRAMMAR_BYTES)?);
                }
                Expr::bytes(bytes)
            }
            2 => {
                let mut class = ByteClass::EMPTY;
                for &b in GRAMMAR_BYTES {
                    if u.arbitrary()? {
                        class.insert(b);
                    }
                }
                Expr::class(class).unwrap_or_else(|| Expr::bytes("a"))
            }
            3 | 4 => Expr::rule(RuleId::new(u.int_in_range(0..=rules - 1)?).expect("few rules")),
            _ => Expr::empty(),
        });
    }
    let n = u.int_in_range(2..=3usize)?;
    let kind = u.int_in_range(0..=2u8)?;
    let mut items = Vec::with_capacity(n);
    if kind < 2 {
        for _ in 0..n {
            items.push(expr(u, rules, depth - 1)?);
        }
    }
    match kind {
        0 => Ok(Expr::seq(items)),
        1 => Ok(Expr::choice(items).expect("non-empty")),
        _ => {
            let item = expr(u, rules, depth - 1)?;
            // Mostly small bounds; now and then bounds that become counted rules.
            let wide = u.ratio(1, 8)?;
            let (min_max, extra_max) = if wide { (20, 20) } else { (2, 3) };
            let min = u.int_in_range(0..=min_max)?;
            let max = if u.arbitrary()? {
                None
            } else {
                Some(min + u.int_in_range(0..=extra_max)?)
            };
            Ok(Expr::repeat(item.clone(), min, max).unwrap_or_else(|_| Expr::optional(item)))
        }
    }
}

/// One to four rules `r0`…`r3`, root `r0`; `None` when the builder refuses it.
fn grammar(u: &mut Unstructured<'_>, rng: &mut Rng) -> Result<Option<Grammar>> {
    let n = u.int_in_range(1..=4usize)?;
    let mut b = GrammarBuilder::new();
    let ids: Vec<RuleId> = (0..n)
        .map(|i| b.declare(&format!("r{i}")).expect("distinct names"))
        .collect();
    for &id in &ids {
        let body = expr(u, n, 3)?;
        b.define(id, body);
    }
    // Half the roots repeat, so many languages are infinite and walks get long.
    if rng.below(2) == 0 {
        let body = b.body(ids[0]).expect("defined").clone();
        b.define(ids[0], Expr::plus(body));
    }
    Ok(b.build(ids[0]).ok())
}

/// A plain token list: text tokens over [`TOKEN_BYTES`], `</s>` (EOS), `<pad>` (another
/// special) and one unused id, the specials at random places.
fn vocabulary(rng: &mut Rng) -> Vocabulary {
    let mut lines: Vec<String> = Vec::new();
    if rng.below(4) != 0 {
        for &b in GRAMMAR_BYTES {
            lines.push(format!("hex:{b:02x}"));
        }
    }
    for _ in 0..1 + rng.below(40) {
        let mut line = "hex:".to_owned();
        for _ in 0..1 + rng.below(4) {
            let byte = TOKEN_BYTES[rng.below(TOKEN_BYTES.len())];
            write!(line, "{byte:02x}").expect("to a string");
        }
        lines.push(line);
    }
    for special in ["special:\"</s>\"", "special:\"<pad>\"", ""] {
        // Never last: a final empty line would not count as an id.
        let at = rng.below(lines.len());
        lines.insert(at, special.to_owned());
    }
    let mut list = lines.join("\n");
    list.push('\n');
    sieve_vocab::plain::parse(list.as_bytes(), &Default::default()).expect("valid list")
}

/// Default options, with now and then a small repetition threshold (counted rules), no mask
/// cache, or tight recogniser limits; any backend (the oracle is always Earley, so the LR and
/// token-DFA backends are differentially fuzzed; one that refuses the grammar skips it, and
/// `auto` falls back to Earley).
fn options(rng: &mut Rng) -> Options {
    let mut options = Options::default();
    options.backend = [
        BackendChoice::Earley,
        BackendChoice::Lr,
        BackendChoice::TokenDfa,
        BackendChoice::Auto,
    ][rng.below(4)];
    options.normalize.max_rules = 2_000;
    options.normalize.max_size = 50_000;
    if rng.below(3) == 0 {
        options.normalize.repetition_threshold = 1 + rng.below(4) as u32;
    }
    if rng.below(4) == 0 {
        options.max_cache_bytes = 0;
    }
    if rng.below(8) == 0 {
        options.earley.max_items_per_set = 4 + rng.below(60);
        options.earley.max_work_per_byte = 16 + rng.below(600);
        options.earley.max_bytes_history = 2 + rng.below(40);
    }
    options
}

/// Brute force over the same normalised grammar.
struct Oracle {
    engine: Arc<EarleyGrammar>,
    reference: Option<Recognizer>,
    /// The strings already checked against the reference.
    cross_checked: RefCell<HashSet<Vec<u8>>>,
    /// When the input started (for [`REFERENCE_TIME`]).
    started: Instant,
    /// Grammar, vocabulary and options, printed with every failure.
    context: String,
}

/// The oracle hit a recogniser limit: it cannot tell, so the run stops there.
struct Unsure;

impl Oracle {
    /// `parser` fed `bytes`: `Some` if every byte was accepted, `None` at the first rejection.
    fn extend(
        &self,
        mut parser: Parser,
        bytes: &[u8],
    ) -> std::result::Result<Option<Parser>, Unsure> {
        for &b in bytes {
            match parser.push_byte(b) {
                Ok(true) => {}
                Ok(false) => return Ok(None),
                Err(_) => return Err(Unsure),
            }
        }
        Ok(Some(parser))
    }

    /// For short strings, the parser's verdict on `bytes` against the reference recogniser.
    fn cross_check(&self, bytes: &[u8], parsed: &Option<Parser>) {
        let Some(reference) = &self.reference else {
            return;
        };
        let mut checked = self.cross_checked.borrow_mut();
        if bytes.len() > REFERENCE_MAX_LEN
            || checked.len() >= REFERENCE_BUDGET
            || self.started.elapsed() > REFERENCE_TIME
            || !checked.insert(bytes.to_vec())
        {
            return;
        }
        let shown = String::from_utf8_lossy(bytes);
        assert_eq!(
            parsed.is_some(),
            reference.accepts_prefix(bytes),
            "the Earley parser and the reference recogniser disagree on whether {shown:?} is viable\n{}",
            self.context
        );
        if let Some(p) = parsed {
            assert_eq!(
                p.can_finish(),
                reference.accepts(bytes),
                "the Earley parser and the reference recogniser disagree on whether {shown:?} is a sentence\n{}",
                self.context
            );
        }
    }

    /// A fresh parser fed `bytes`.
    fn parse(&self, bytes: &[u8]) -> std::result::Result<Option<Parser>, Unsure> {
        let parsed = self.extend(Parser::new(self.engine.clone()), bytes)?;
        self.cross_check(bytes, &parsed);
        Ok(parsed)
    }

    fn viable(&self, bytes: &[u8]) -> std::result::Result<bool, Unsure> {
        Ok(self.parse(bytes)?.is_some())
    }

    fn sentence(&self, bytes: &[u8]) -> std::result::Result<bool, Unsure> {
        Ok(self.parse(bytes)?.is_some_and(|p| p.can_finish()))
    }
}

/// What the matcher should hold.
#[derive(Default)]
struct Model {
    output: Vec<u8>,
    /// Output length before each step.
    steps: Vec<usize>,
    terminated: bool,
}

/// What `accept_token` should do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    Ok,
    /// A text token that does not fit.
    Rejected,
    /// A special token other than an allowed EOS.
    Special,
    Unknown,
    Terminated,
}

fn expect_token(
    model: &Model,
    oracle: &Oracle,
    vocab: &Vocabulary,
    id: u32,
) -> std::result::Result<Expect, Unsure> {
    if model.terminated {
        return Ok(Expect::Terminated);
    }
    let Some(token) = vocab.token(id) else {
        return Ok(Expect::Unknown);
    };
    if vocab.is_special(token) {
        let ok = vocab.is_eos(token) && oracle.sentence(&model.output)?;
        return Ok(if ok { Expect::Ok } else { Expect::Special });
    }
    let mut candidate = model.output.clone();
    candidate.extend_from_slice(vocab.bytes(token));
    Ok(if oracle.viable(&candidate)? {
        Expect::Ok
    } else {
        Expect::Rejected
    })
}

/// How many leading tokens of `draft` `validate_tokens` should accept.
fn expect_draft(
    model: &Model,
    oracle: &Oracle,
    vocab: &Vocabulary,
    draft: &[u32],
) -> std::result::Result<usize, Unsure> {
    if model.terminated {
        return Ok(0);
    }
    let mut output = model.output.clone();
    let mut accepted = 0;
    for &id in draft {
        let token = vocab.token(id).expect("drafts stay in range");
        if vocab.is_special(token) {
            if vocab.is_eos(token) && oracle.sentence(&output)? {
                accepted += 1;
            }
            break;
        }
        output.extend_from_slice(vocab.bytes(token));
        if !oracle.viable(&output)? {
            break;
        }
        accepted += 1;
    }
    Ok(accepted)
}

/// The bytes every continuation starts with, up to `limit`: while the output is not a sentence
/// and exactly one byte may follow.
fn expect_forced(
    model: &Model,
    oracle: &Oracle,
    limit: usize,
) -> std::result::Result<Vec<u8>, Unsure> {
    let mut forced = Vec::new();
    if model.terminated {
        return Ok(forced);
    }
    let mut parser = oracle.parse(&model.output)?.expect("the output is viable");
    while forced.len() < limit && !parser.can_finish() {
        let Some(byte) = parser.allowed_bytes().single_byte() else {
            break;
        };
        match parser.push_byte(byte) {
            Ok(true) => forced.push(byte),
            Ok(false) => panic!("allowed byte {byte} rejected\n{}", oracle.context),
            Err(_) => return Err(Unsure),
        }
    }
    Ok(forced)
}

fn apply_token(model: &mut Model, vocab: &Vocabulary, id: u32) {
    let token = vocab.token(id).expect("accepted ids are in range");
    model.steps.push(model.output.len());
    if vocab.is_special(token) {
        model.terminated = true;
    } else {
        model.output.extend_from_slice(vocab.bytes(token));
    }
}

fn bit(mask: &[u32], id: usize) -> bool {
    mask[id / 32] & (1 << (id % 32)) != 0
}

/// Fills a mask and compares every bit with brute force; `Ok(None)` when the matcher hit a
/// limit (then it must be unchanged, which `check_state` sees).
fn check_mask(
    m: &mut Matcher,
    model: &Model,
    oracle: &Oracle,
    vocab: &Vocabulary,
    log: &[String],
) -> std::result::Result<Option<Vec<u32>>, Unsure> {
    let words = m.compiled().bitmask_words();
    let n_vocab = vocab.n_vocab();
    assert_eq!(words, n_vocab.div_ceil(32));
    // Garbage in, so bits the fill forgets to clear show up.
    let mut mask = vec![0xA5A5_A5A5u32; words];
    match m.fill_next_token_bitmask(&mut mask) {
        Ok(()) => {}
        Err(MatcherError::Limit(_)) => return Ok(None),
        Err(e) => panic!("fill failed: {e}\nactions: {log:?}\n{}", oracle.context),
    }
    for id in n_vocab..words * 32 {
        assert!(
            !bit(&mask, id),
            "bit {id} past the vocabulary is set\nactions: {log:?}\n{}",
            oracle.context
        );
    }
    if model.terminated {
        assert!(
            mask.iter().all(|&w| w == 0),
            "a terminated matcher allows tokens\nactions: {log:?}\n{}",
            oracle.context
        );
        return Ok(Some(mask));
    }
    let Some(base) = oracle.parse(&model.output)? else {
        panic!(
            "the matcher holds {:?}, which is not viable\nactions: {log:?}\n{}",
            String::from_utf8_lossy(&model.output),
            oracle.context
        );
    };
    for id in 0..n_vocab {
        let token = vocab.token(id as u32).expect("in range");
        let expected = if vocab.is_special(token) {
            vocab.is_eos(token) && base.can_finish()
        } else {
            let bytes = vocab.bytes(token);
            let parsed = oracle.extend(base.clone(), bytes)?;
            let mut candidate = model.output.clone();
            candidate.extend_from_slice(bytes);
            oracle.cross_check(&candidate, &parsed);
            parsed.is_some()
        };
        assert_eq!(
            bit(&mask, id),
            expected,
            "mask bit of token {id} ({:?}) after {:?}\nactions: {log:?}\n{}",
            String::from_utf8_lossy(vocab.bytes(token)),
            String::from_utf8_lossy(&model.output),
            oracle.context
        );
    }
    Ok(Some(mask))
}

/// The matcher's observable state against the model.
fn check_state(
    m: &Matcher,
    model: &Model,
    oracle: &Oracle,
    log: &[String],
) -> std::result::Result<(), Unsure> {
    let what = || format!("actions: {log:?}\n{}", oracle.context);
    assert_eq!(
        m.output_len(),
        model.output.len(),
        "output length\n{}",
        what()
    );
    assert_eq!(m.steps(), model.steps.len(), "steps\n{}", what());
    assert_eq!(
        m.is_terminated(),
        model.terminated,
        "termination\n{}",
        what()
    );
    let can = !model.terminated && oracle.sentence(&model.output)?;
    assert_eq!(
        m.can_terminate(),
        can,
        "can_terminate after {:?}\n{}",
        String::from_utf8_lossy(&model.output),
        what()
    );
    Ok(())
}

fn run(u: &mut Unstructured<'_>, seed: u64) -> Result<()> {
    // The fuzz bytes shape the grammar; the generator, seeded with a hash of all of them
    // (they usually run out inside the grammar), draws the rest.
    let mut rng = Rng(seed);
    let Some(grammar) = grammar(u, &mut rng)? else {
        return Ok(());
    };
    let vocab = Arc::new(vocabulary(&mut rng));
    let options = options(&mut rng);
    let tokenizer = Arc::new(Tokenizer::new(vocab.clone()));
    let Ok(compiled) = CompiledGrammar::new(&grammar, tokenizer, &options) else {
        return Ok(());
    };
    let compiled = Arc::new(compiled);
    let normalized = sieve_normalize::normalize(&grammar, &options.normalize)
        .expect("the matcher normalised this grammar");
    let fsms = sieve_fsm::Builder::new(options.fsm.clone())
        .build(&normalized)
        .expect("the matcher built these automata");
    let root_nullable = fsms
        .automaton(fsms.root())
        .fsm()
        .is_some_and(|fsm| fsm.is_accepting(fsm.start()));
    let engine = Arc::new(EarleyGrammar::new(
        &fsms,
        root_nullable,
        sieve_earley::Config::default(),
    ));
    let tokens: Vec<String> = (0..vocab.n_vocab() as u32)
        .map(|id| {
            let t = vocab.token(id).expect("in range");
            if vocab.is_eos(t) {
                format!("{id}:EOS")
            } else if vocab.is_special(t) {
                format!("{id}:special")
            } else {
                format!("{id}:{:?}", String::from_utf8_lossy(vocab.bytes(t)))
            }
        })
        .collect();
    let oracle = Oracle {
        engine,
        reference: Recognizer::new(&normalized).ok(),
        cross_checked: RefCell::default(),
        started: Instant::now(),
        context: format!(
            "grammar:\n{grammar}\nnormalised:\n{normalized}\nvocabulary: {}\noptions: backend {}, threshold {}, cache {}, {:?}",
            tokens.join(" "),
            compiled.backend(),
            options.normalize.repetition_threshold,
            options.max_cache_bytes,
            options.earley
        ),
    };
    let _ = actions(&mut rng, &compiled, &vocab, &oracle);
    Ok(())
}

/// SplitMix64, for the calls.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % n.max(1) as u64) as usize
    }
}

/// The random calls; `Err` when the oracle cannot tell.
fn actions(
    rng: &mut Rng,
    compiled: &Arc<CompiledGrammar>,
    vocab: &Vocabulary,
    oracle: &Oracle,
) -> std::result::Result<(), Unsure> {
    let n_vocab = vocab.n_vocab();
    let eos = vocab.eos_ids()[0].as_u32();
    let mut m = Matcher::new(compiled.clone());
    let mut model = Model::default();
    let mut log: Vec<String> = Vec::new();
    // The checked mask of the current state, for picking allowed tokens.
    let mut checked: Option<Vec<u32>> = None;
    let count = 1 + rng.below(64);
    let context = &oracle.context;
    for _ in 0..count {
        // Mostly tokens from the mask, so outputs grow.
        let mut action = rng.below(16);
        if (2..=8).contains(&action) {
            if checked.is_none() {
                checked = check_mask(&mut m, &model, oracle, vocab, &log)?;
            }
            // Nothing allowed (terminated, or a limit): back up one step instead.
            if checked
                .as_ref()
                .is_none_or(|mask| mask.iter().all(|&w| w == 0))
            {
                action = 16;
            }
        }
        match action {
            0 | 1 => {
                log.push("fill".to_owned());
                checked = check_mask(&mut m, &model, oracle, vocab, &log)?;
            }
            2..=8 => {
                let Some(mask) = &checked else { continue };
                let allowed: Vec<u32> = (0..n_vocab)
                    .filter(|&i| bit(mask, i))
                    .map(|i| i as u32)
                    .collect();
                // EOS ends the walk: take it only now and then when text is possible too.
                let text: Vec<u32> = allowed
                    .iter()
                    .copied()
                    .filter(|&id| !vocab.is_special(vocab.token(id).expect("in range")))
                    .collect();
                let pool = if text.is_empty() || rng.below(32) == 0 {
                    &allowed
                } else {
                    &text
                };
                if pool.is_empty() {
                    continue;
                }
                let id = pool[rng.below(pool.len())];
                log.push(format!("accept_token({id}) from the mask"));
                match m.accept_token(id) {
                    Ok(()) => {
                        apply_token(&mut model, vocab, id);
                        checked = None;
                    }
                    Err(MatcherError::Limit(_)) => {}
                    Err(e) => panic!(
                        "token {id} is in the mask but accept_token failed: {e}\nactions: {log:?}\n{context}"
                    ),
                }
            }
            9 | 10 => {
                let id = if action == 9 || rng.below(2) == 0 {
                    rng.below(n_vocab + 2) as u32
                } else {
                    eos
                };
                log.push(format!("accept_token({id})"));
                let expected = expect_token(&model, oracle, vocab, id)?;
                let got = m.accept_token(id);
                let fine = match (&got, expected) {
                    (Err(MatcherError::Limit(_)), Expect::Ok | Expect::Rejected) => {
                        !vocab.is_special(vocab.token(id).expect("known"))
                    }
                    (Ok(()), Expect::Ok) => {
                        apply_token(&mut model, vocab, id);
                        checked = None;
                        true
                    }
                    (
                        Err(MatcherError::TokenNotAllowed { id: i, offset, .. }),
                        Expect::Rejected,
                    ) => *i == id && *offset == model.output.len(),
                    (Err(MatcherError::SpecialNotAllowed { id: i }), Expect::Special) => *i == id,
                    (Err(MatcherError::UnknownToken { id: i, n_vocab: n }), Expect::Unknown) => {
                        *i == id && *n == n_vocab
                    }
                    (Err(MatcherError::Terminated), Expect::Terminated) => true,
                    _ => false,
                };
                assert!(
                    fine,
                    "accept_token({id}) after {:?}: expected {expected:?}, got {got:?}\nactions: {log:?}\n{context}",
                    String::from_utf8_lossy(&model.output)
                );
            }
            11 | 16 => {
                let n = if action == 16 {
                    1
                } else {
                    rng.below(model.steps.len().min(3) + 2)
                };
                log.push(format!("rollback({n})"));
                let got = m.rollback(n);
                if n > model.steps.len() {
                    let expected = Err(MatcherError::RollbackTooFar {
                        requested: n,
                        available: model.steps.len(),
                    });
                    assert_eq!(got, expected, "actions: {log:?}\n{context}");
                } else {
                    assert_eq!(got, Ok(()), "actions: {log:?}\n{context}");
                    if n > 0 {
                        let start = model.steps[model.steps.len() - n];
                        model.steps.truncate(model.steps.len() - n);
                        model.output.truncate(start);
                        model.terminated = false;
                        checked = None;
                    }
                }
            }
            12 => {
                let len = rng.below(5);
                let bytes: Vec<u8> = (0..len)
                    .map(|_| TOKEN_BYTES[rng.below(TOKEN_BYTES.len())])
                    .collect();
                log.push(format!(
                    "accept_bytes({:?})",
                    String::from_utf8_lossy(&bytes)
                ));
                let got = m.accept_bytes(&bytes);
                let fine = if model.terminated {
                    got == Err(MatcherError::Terminated)
                } else {
                    // The first offset whose prefix is not viable.
                    let mut rejected = None;
                    for i in 0..bytes.len() {
                        let mut candidate = model.output.clone();
                        candidate.extend_from_slice(&bytes[..=i]);
                        if !oracle.viable(&candidate)? {
                            rejected = Some(i);
                            break;
                        }
                    }
                    match (&got, rejected) {
                        (Err(MatcherError::Limit(_)), _) => true,
                        (Ok(()), None) => {
                            model.steps.push(model.output.len());
                            model.output.extend_from_slice(&bytes);
                            checked = None;
                            true
                        }
                        (Err(MatcherError::BytesRejected { offset }), Some(i)) => *offset == i,
                        _ => false,
                    }
                };
                assert!(
                    fine,
                    "accept_bytes({:?}) after {:?}: got {got:?}\nactions: {log:?}\n{context}",
                    String::from_utf8_lossy(&bytes),
                    String::from_utf8_lossy(&model.output)
                );
            }
            13 => {
                let len = rng.below(4);
                let draft: Vec<u32> = (0..len).map(|_| rng.below(n_vocab) as u32).collect();
                log.push(format!("validate_tokens({draft:?})"));
                let expected = expect_draft(&model, oracle, vocab, &draft)?;
                let got = m.validate_tokens(&draft);
                let fine = match &got {
                    Err(MatcherError::Limit(_)) => true,
                    Ok(n) => *n == expected,
                    Err(_) => false,
                };
                assert!(
                    fine,
                    "validate_tokens({draft:?}) after {:?}: expected {expected}, got {got:?}\nactions: {log:?}\n{context}",
                    String::from_utf8_lossy(&model.output)
                );
            }
            14 => {
                // Rarely: most walks should get long.
                if rng.below(4) != 0 {
                    continue;
                }
                log.push("reset".to_owned());
                m.reset();
                model = Model::default();
                checked = None;
            }
            _ => {
                // A forced-bytes query must not change anything.
                log.push("forced_bytes(8)".to_owned());
                let expected = expect_forced(&model, oracle, 8)?;
                match m.forced_bytes(8) {
                    Err(MatcherError::Limit(_)) => {}
                    Ok(forced) if forced == expected => {}
                    got => panic!(
                        "forced_bytes(8) after {:?}: expected {:?}, got {got:?}\nactions: {log:?}\n{context}",
                        String::from_utf8_lossy(&model.output),
                        String::from_utf8_lossy(&expected)
                    ),
                }
            }
        }
        check_state(&m, &model, oracle, &log)?;
    }
    log.push("final fill".to_owned());
    check_mask(&mut m, &model, oracle, vocab, &log)?;
    Ok(())
}
