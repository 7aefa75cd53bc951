//! Token-mask time with the embedded GPT-2 vocabulary:
//!
//! - `mask/walk`: whole walks over sampled sentences (fill the mask, accept the next token,
//!   finish with EOS), the cache warm after the first iteration. Criterion reports time per
//!   walk and steps per second; per-step time is the walk time over the step count printed
//!   in the benchmark name.
//! - `mask/cold-walk`: the same walk on a freshly compiled grammar, so every state's cache
//!   entry is computed on the way (what the first request of a new grammar pays), compile
//!   included.

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sieve_matcher::{CompiledGrammar, Matcher, Options, Tokenizer};
use sieve_vocab::Vocabulary;

/// The `sieve` binary's allocator, so figures here are the ones the command shows.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The grammars measured, by path under `grammars/`.
const GRAMMARS: &[&str] = &[
    "llama.cpp/json.gbnf",
    "ebnf/json-right-recursive.ebnf",
    "llama.cpp/arithmetic.gbnf",
    "llama.cpp/c.gbnf",
];

fn mask(c: &mut Criterion) {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let tokenizer = Arc::new(Tokenizer::new(vocab.clone()));
    let eos = vocab.eos_ids()[0].as_u32();
    let mut group = c.benchmark_group("mask");
    for &name in GRAMMARS {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../grammars")
            .join(name);
        let text = std::fs::read_to_string(&path).expect("shipped grammar");
        let grammar = sieve_gbnf::compile(&text, &Default::default()).expect("compiles");
        let recognizer = sieve_ir::reference::Recognizer::new(&grammar).expect("small");
        // The longest of a few sampled sentences, for a walk of some length.
        let sentence = (0..40)
            .filter_map(|seed| recognizer.sample(seed, 8))
            .filter(|s| s.len() <= 400)
            .max_by_key(Vec::len)
            .expect("a sample");
        let tokens =
            sieve_benches::tokenize(tokenizer.trie(), &sentence).expect("bytes are tokens");
        let compiled = Arc::new(
            CompiledGrammar::new(&grammar, tokenizer.clone(), &Options::default())
                .expect("compiles"),
        );
        let mut bitmask = vec![0u32; compiled.bitmask_words()];
        let steps = tokens.len() + 1;
        group.throughput(Throughput::Elements(steps as u64));
        let mut walk = |compiled: &Arc<CompiledGrammar>| {
            let mut matcher = Matcher::new(compiled.clone());
            for &token in tokens.iter().chain([&eos]) {
                matcher
                    .fill_next_token_bitmask(&mut bitmask)
                    .expect("no limit");
                matcher.accept_token(token).expect("a sampled sentence");
            }
        };
        let label = format!("{name} ({steps} steps)");
        group.bench_function(BenchmarkId::new("walk", &label), |b| {
            b.iter(|| walk(&compiled))
        });
        group.bench_function(BenchmarkId::new("cold-walk", &label), |b| {
            b.iter(|| {
                let fresh = CompiledGrammar::new(&grammar, tokenizer.clone(), &Options::default())
                    .expect("compiles");
                walk(&Arc::new(fresh))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, mask);
criterion_main!(benches);
