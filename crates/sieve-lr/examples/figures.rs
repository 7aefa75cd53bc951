//! Figures of the LR backend beside Earley on the shipped grammars: compile time (FSMs to
//! tables), table size, and the cold and warm mask time per step of sampled walks with
//! GPT-2's vocabulary through the token cache, and `push_byte` over the walk's bytes with the
//! aggregated edges and without (`max_edges: 0`), the best of interleaved rounds.
//!
//! `cargo run --release -p sieve-lr --example figures [FILTER] [THRESHOLD]` — THRESHOLD is the
//! normaliser's repetition threshold (default 16; 64 expands the shipped grammars' counted
//! repetitions, which the LR backend needs for `json.gbnf`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use sieve_backend::{Backend, Recognizer};
use sieve_earley::EarleyGrammar;
use sieve_lr::{LrGrammar, LrParser};
use sieve_tokencache::TokenCache;
use sieve_vocab::{TokenTrie, Vocabulary};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

/// Warm mask times (second pass over the same walk, classifications cached) per step.
fn mask_times<B: Backend>(
    backend: &Arc<B>,
    trie: &TokenTrie,
    walk: &[Vec<u8>],
) -> (Duration, Duration) {
    let cache = TokenCache::new(backend.state_count(), usize::MAX);
    let mut mask = vec![0u32; trie.n_vocab().div_ceil(32)];
    let mut cold = Vec::new();
    let mut warm = Vec::new();
    for times in [&mut cold, &mut warm] {
        let mut r = backend.recognizer();
        for token in walk {
            mask.fill(0);
            let t = Instant::now();
            cache
                .fill_text_tokens(&**backend, &mut r, trie, &mut mask)
                .unwrap();
            times.push(t.elapsed());
            for &b in token {
                assert!(r.push_byte(b).unwrap());
            }
        }
    }
    (median(cold), median(warm))
}

/// Nanoseconds per byte pushing `bytes` (then popping them), with the aggregated edges and
/// without: the best of 15 interleaved rounds of 100 passes each (edges warmed first).
fn push_times(with: &Arc<LrGrammar>, without: &Arc<LrGrammar>, bytes: &[u8]) -> (f64, f64) {
    let mut best = [f64::INFINITY; 2];
    for _ in 0..15 {
        for (i, grammar) in [with, without].into_iter().enumerate() {
            let mut r = grammar.recognizer();
            let t = Instant::now();
            for _ in 0..100 {
                for &b in bytes {
                    assert!(r.push_byte(b).unwrap());
                }
                r.pop_bytes(bytes.len());
            }
            let ns = t.elapsed().as_nanos() as f64 / (100 * bytes.len().max(1)) as f64;
            best[i] = best[i].min(ns);
        }
    }
    (best[0], best[1])
}

fn main() {
    let filter = std::env::args().nth(1).unwrap_or_default();
    let normalize = sieve_normalize::Config {
        repetition_threshold: std::env::args()
            .nth(2)
            .map_or(16, |t| t.parse().expect("a repetition threshold")),
        ..Default::default()
    };
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let trie = TokenTrie::new(&vocab);
    println!(
        "| grammar | FSM states | compile Earley / LR | Earley states | LR states | tables KiB Earley / LR | mask p50 cold Earley / LR | mask p50 warm Earley / LR | push ns/byte edges / step |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for path in sieve_testkit::all_grammar_files() {
        let name = path
            .strip_prefix(sieve_testkit::grammars_dir())
            .unwrap()
            .display()
            .to_string();
        if !name.contains(&filter) {
            continue;
        }
        let grammar = sieve_testkit::compile_any(&path);
        let normalized = sieve_normalize::normalize(&grammar, &normalize).unwrap();
        let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
            .build(&normalized)
            .unwrap();
        let root_nullable = fsms
            .automaton(fsms.root())
            .fsm()
            .is_some_and(|fsm| fsm.is_accepting(fsm.start()));
        let t = Instant::now();
        let earley = Arc::new(EarleyGrammar::new(
            &fsms,
            root_nullable,
            sieve_earley::Config::default(),
        ));
        let earley_time = t.elapsed();
        let t = Instant::now();
        let lr = LrGrammar::new(&fsms, root_nullable, sieve_lr::Config::default());
        let lr_time = t.elapsed();
        let lr = match lr {
            Ok(lr) => Arc::new(lr),
            Err(e) => {
                println!(
                    "| {name} | {} | {earley_time:.2?} / refused | {} | refused: {e} |||",
                    fsms.state_count(),
                    Backend::state_count(&*earley)
                );
                continue;
            }
        };
        // A walk: the longest tokens along a sampled sentence.
        let reference = sieve_ir::reference::Recognizer::new(&grammar).unwrap();
        let mut walk = Vec::new();
        for seed in 0..3 {
            let Some(sentence) = reference.sample(seed, 6) else {
                continue;
            };
            let mut at = 0;
            let mut probe: LrParser = lr.recognizer();
            let mut steps = Vec::new();
            while let Some(len) = (1..=(sentence.len() - at).min(16))
                .rev()
                .find(|&len| trie.find(&sentence[at..at + len]).is_some())
            {
                steps.push(sentence[at..at + len].to_vec());
                for &b in &sentence[at..at + len] {
                    assert!(probe.push_byte(b).unwrap());
                }
                at += len;
            }
            if walk.len() < steps.len() {
                walk = steps;
            }
        }
        let (earley_cold, earley_warm) = mask_times(&earley, &trie, &walk);
        let (lr_cold, lr_warm) = mask_times(&lr, &trie, &walk);
        let stepwise = sieve_lr::Config {
            max_edges: 0,
            ..sieve_lr::Config::default()
        };
        let lr_stepwise = Arc::new(LrGrammar::new(&fsms, root_nullable, stepwise).unwrap());
        let (edges_ns, step_ns) = push_times(&lr, &lr_stepwise, &walk.concat());
        println!(
            "| {name} | {} | {earley_time:.2?} / {lr_time:.2?} | {} | {} | {} / {} | {earley_cold:.2?} / {lr_cold:.2?} | {earley_warm:.2?} / {lr_warm:.2?} | {edges_ns:.1} / {step_ns:.1} |",
            fsms.state_count(),
            Backend::state_count(&*earley),
            lr.state_count(),
            earley.heap_bytes() / 1024,
            lr.table_bytes() / 1024,
        );
    }
}
