//! The backend corpus (`grammars/traces/`, see its README): every backend replays every
//! recorded trace, and at every step its mask must equal the brute-force mask and every other
//! backend's, bit for bit. A backend that refuses a grammar must be listed as refusing it, with
//! a phrase of its error: the refusal is printed as a skip with its reason, never counted as a
//! pass, and a listed refusal that does not happen fails.
//!
//! The brute force is independent of the backends under test and of the token cache: every
//! text token fed byte by byte to a [`ByteMatcher`] (the Earley recogniser over bytes), tokens
//! in sorted order sharing the bytes of their common prefix.

use std::sync::{Arc, Mutex};

use sieve_matcher::{BackendKind, ByteMatcher, CompiledGrammar, Matcher, Options, Tokenizer};
use sieve_testkit::traces::{self, Trace, TraceFile};
use sieve_vocab::{TokenTrie, Vocabulary};

mod common;
use common::mask_of;

/// The mask of every text token `checker` accepts from its current bytes, plus EOS when it
/// can finish.
fn brute_force(checker: &mut ByteMatcher, trie: &TokenTrie, vocab: &Vocabulary) -> Vec<u32> {
    let mut mask = vec![0u32; vocab.n_vocab().div_ceil(32)];
    let base = checker.len();
    // Bytes of the previous token pushed (all accepted).
    let mut pushed = 0;
    for i in 0..trie.len() {
        let bytes = trie.bytes_at(i);
        let keep = pushed.min(trie.lcp(i));
        checker.pop_bytes(pushed - keep);
        pushed = keep;
        while pushed < bytes.len() && checker.push_byte(bytes[pushed]).expect("within limits") {
            pushed += 1;
        }
        if pushed == bytes.len() {
            let id = trie.token(i).index();
            mask[id / 32] |= 1 << (id % 32);
        }
    }
    checker.pop_bytes(pushed);
    debug_assert_eq!(checker.len(), base);
    if checker.can_finish() {
        for eos in vocab.eos_ids() {
            mask[eos.index() / 32] |= 1 << (eos.index() % 32);
        }
    }
    mask
}

fn allows(mask: &[u32], id: u32) -> bool {
    mask[id as usize / 32] & (1 << (id % 32)) != 0
}

/// The first few tokens set in `a` and not in `b`, for failure messages.
fn only_in(a: &[u32], b: &[u32], vocab: &Vocabulary) -> Vec<String> {
    (0..vocab.n_vocab() as u32)
        .filter(|&id| allows(a, id) && !allows(b, id))
        .take(5)
        .map(|id| {
            let token = vocab.token(id).expect("in range");
            format!("{id}={:?}", String::from_utf8_lossy(vocab.bytes(token)))
        })
        .collect()
}

/// The backends that compile `file`'s grammar; checks every refusal against the file's list.
fn compile_all(
    file: &TraceFile,
    grammar: &sieve_ir::Grammar,
    tokenizer: &Arc<Tokenizer>,
    skips: &mut Vec<String>,
) -> Vec<(BackendKind, Arc<CompiledGrammar>)> {
    let mut compiled = Vec::new();
    for backend in BackendKind::ALL {
        let options = Options {
            backend: backend.into(),
            ..Options::default()
        };
        match CompiledGrammar::new(grammar, tokenizer.clone(), &options) {
            Ok(c) => {
                assert!(
                    !file.refused.contains_key(backend.name()),
                    "{}: listed as refused by {backend}, but it compiles",
                    file.grammar
                );
                compiled.push((backend, Arc::new(c)));
            }
            Err(e) => {
                let phrase = file.refused.get(backend.name()).unwrap_or_else(|| {
                    panic!(
                        "{}: {backend} refuses it without being listed: {e}",
                        file.grammar
                    )
                });
                assert!(
                    e.to_string().contains(phrase.as_str()),
                    "{}: {backend} refuses it, but not with {phrase:?}: {e}",
                    file.grammar
                );
                skips.push(format!("{} on {backend}: {e}", file.grammar));
            }
        }
    }
    compiled
}

/// Replays `trace` on every compiled backend against the brute force; the number of masks
/// compared.
fn replay(
    file: &TraceFile,
    trace: &Trace,
    grammar: &sieve_ir::Grammar,
    backends: &[(BackendKind, Arc<CompiledGrammar>)],
) -> usize {
    let label = format!("{} / {}", file.grammar, trace.name);
    let vocab = backends[0].1.vocabulary().clone();
    let trie = backends[0].1.trie();
    let bytes: Vec<u8> = trace
        .tokens
        .iter()
        .flat_map(|&id| vocab.bytes(vocab.token(id).expect("trace token in range")))
        .copied()
        .collect();
    assert_eq!(
        String::from_utf8_lossy(&bytes),
        trace.text,
        "{label}: the tokens do not spell the text (has the vocabulary changed?)"
    );
    let mut checker = ByteMatcher::new(grammar, &Options::default()).expect("compiles");
    let mut matchers: Vec<Matcher> = backends
        .iter()
        .map(|(_, c)| Matcher::new(c.clone()))
        .collect();
    let mut compared = 0;
    for step in 0..=trace.tokens.len() {
        let oracle = brute_force(&mut checker, trie, &vocab);
        for ((backend, _), matcher) in backends.iter().zip(&mut matchers) {
            let mask = mask_of(matcher);
            assert!(
                mask == oracle,
                "{label}: step {step}: {backend} differs from brute force: only {backend}: {:?}; only brute force: {:?}",
                only_in(&mask, &oracle, &vocab),
                only_in(&oracle, &mask, &vocab)
            );
            compared += 1;
        }
        let Some(&token) = trace.tokens.get(step) else {
            break;
        };
        assert!(
            allows(&oracle, token),
            "{label}: step {step}: trace token {token} is not allowed"
        );
        for ((backend, _), matcher) in backends.iter().zip(&mut matchers) {
            matcher
                .accept_token(token)
                .unwrap_or_else(|e| panic!("{label}: step {step}: {backend}: {e}"));
        }
        let token_bytes = vocab.bytes(vocab.token(token).expect("in range"));
        for &byte in token_bytes {
            assert!(checker.push_byte(byte).expect("within limits"));
        }
    }
    for ((backend, _), matcher) in backends.iter().zip(&mut matchers) {
        assert_eq!(
            matcher.can_terminate(),
            trace.complete,
            "{label}: {backend}: EOS after the trace"
        );
        for &reject in &trace.rejects {
            assert_eq!(
                matcher.validate_tokens(&[reject]).expect("within limits"),
                0,
                "{label}: {backend}: token {reject} must be refused at the end"
            );
        }
    }
    compared
}

#[test]
fn every_shipped_grammar_has_a_trace_file() {
    let files = traces::load_all();
    let grammars_dir = sieve_testkit::grammars_dir();
    for path in sieve_testkit::all_grammar_files() {
        let name = path
            .strip_prefix(&grammars_dir)
            .expect("under grammars/")
            .to_string_lossy()
            .replace('\\', "/");
        assert!(
            files.iter().any(|(_, f)| f.grammar == name),
            "{name} has no trace file: run `cargo xtask record-traces`"
        );
    }
}

/// Every backend replays every trace file bit for bit (the files on the cores, so the slow
/// ones do not hold the rest back).
#[test]
fn every_backend_replays_the_corpus_bit_for_bit() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let tokenizer = Arc::new(Tokenizer::new(vocab));
    let files = traces::load_all();
    let grammars_dir = sieve_testkit::grammars_dir();
    let skips = Mutex::new(Vec::new());
    let passes = Mutex::new(vec![0usize; BackendKind::ALL.len()]);
    let compared = sieve_testkit::sum_in_parallel(&files, |(path, file)| {
        assert_eq!(
            path.file_name().and_then(|n| n.to_str()),
            Some(traces::file_name_for(&file.grammar).as_str()),
            "trace file named after its grammar"
        );
        let grammar = sieve_testkit::compile_any(&grammars_dir.join(&file.grammar));
        let mut file_skips = Vec::new();
        let backends = compile_all(file, &grammar, &tokenizer, &mut file_skips);
        skips.lock().expect("no panic").extend(file_skips);
        assert!(
            backends.iter().any(|(b, _)| *b == BackendKind::Earley),
            "{}: the default backend compiles every shipped grammar",
            file.grammar
        );
        let mut compared = 0;
        for trace in &file.traces {
            compared += replay(file, trace, &grammar, &backends);
        }
        let mut passes = passes.lock().expect("no panic");
        for (backend, _) in &backends {
            let index = BackendKind::ALL
                .iter()
                .position(|b| b == backend)
                .expect("known");
            passes[index] += 1;
        }
        compared
    });
    for skip in skips.into_inner().expect("no panic") {
        println!("skip: {skip}");
    }
    let passes = passes.into_inner().expect("no panic");
    for (backend, passed) in BackendKind::ALL.iter().zip(&passes) {
        println!("{backend}: {passed} of {} grammars replayed", files.len());
    }
    println!("{compared} masks compared with brute force");
    assert!(compared > 0);
}
