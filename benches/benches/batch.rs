//! Batch mask filling with the embedded GPT-2 vocabulary over `llama.cpp/json.gbnf`: `B`
//! matchers, each at a different step of a different sampled sentence, caches warm (every
//! matcher filled once before measuring). Criterion reports time per batch and masks per
//! second.
//!
//! - `batch/sequential/B`: one `Matcher::fill_next_token_bitmask` after another, each into its
//!   row (what a caller without the batch API writes).
//! - `batch/parallel/B`: `fill_next_token_bitmasks` on the global rayon pool (sequential below
//!   `PARALLEL_MIN_BATCH`).
//! - `batch/threads-always/B`: the same rows handed to rayon whatever the batch size, which
//!   shows where threads stop paying (the basis of `PARALLEL_MIN_BATCH`).
//! - `single/…`: one matcher's mask, through `Matcher::fill_next_token_bitmask` and through a
//!   batch of one, for the no-regression check of the single-matcher path.
//!
//! Speedups are bounded by the cores free: 2 on the project's machines.

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rayon::prelude::*;
use sieve_matcher::{fill_next_token_bitmasks, CompiledGrammar, Matcher, Options, Tokenizer};
use sieve_vocab::Vocabulary;

/// The `sieve` binary's allocator, so figures here are the ones the command shows.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The grammar, under `grammars/`.
const GRAMMAR: &str = "llama.cpp/json.gbnf";

/// The batch sizes measured (2 and 4 locate the threshold).
const BATCHES: &[usize] = &[1, 2, 4, 8, 64, 256, 1024];

/// `count` matchers of `compiled`, matcher `i` advanced through sentence `i % sentences` to a
/// step that differs from its neighbours' (never past the sentence, never terminated).
fn matchers_at_steps(
    compiled: &Arc<CompiledGrammar>,
    sentences: &[Vec<u32>],
    count: usize,
) -> Vec<Matcher> {
    (0..count)
        .map(|i| {
            let tokens = &sentences[i % sentences.len()];
            let step = (i * 7 + i / sentences.len() + 3) % tokens.len();
            let mut matcher = Matcher::new(compiled.clone());
            for &token in &tokens[..step] {
                matcher.accept_token(token).expect("a sampled sentence");
            }
            matcher
        })
        .collect()
}

fn batch(c: &mut Criterion) {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let tokenizer = Arc::new(Tokenizer::new(vocab));
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../grammars")
        .join(GRAMMAR);
    let text = std::fs::read_to_string(&path).expect("shipped grammar");
    let grammar = sieve_gbnf::compile(&text, &Default::default()).expect("compiles");
    let recognizer = sieve_ir::reference::Recognizer::new(&grammar).expect("small");
    let sentences: Vec<Vec<u32>> = (0..200)
        .filter_map(|seed| recognizer.sample(seed, 8))
        .filter(|s| (16..=400).contains(&s.len()))
        .filter_map(|s| sieve_benches::tokenize(tokenizer.trie(), &s))
        .take(32)
        .collect();
    let compiled = Arc::new(
        CompiledGrammar::new(&grammar, tokenizer.clone(), &Options::default()).expect("compiles"),
    );
    let words = compiled.bitmask_words();
    let largest = *BATCHES.last().expect("sizes");
    let mut all = matchers_at_steps(&compiled, &sentences, largest);
    let mut bitmask = vec![0u32; largest * words];
    // Warm the cache: every state the matchers stand in is classified before measuring.
    fill_next_token_bitmasks(&mut all, &mut bitmask, words).expect("a valid batch");

    let mut group = c.benchmark_group("batch");
    group.sample_size(30);
    for &size in BATCHES {
        let matchers = &mut all[..size];
        let rows = &mut bitmask[..size * words];
        group.throughput(Throughput::Elements(size as u64));
        group.bench_function(BenchmarkId::new("sequential", size), |b| {
            b.iter(|| {
                for (matcher, row) in matchers.iter_mut().zip(rows.chunks_exact_mut(words)) {
                    matcher.fill_next_token_bitmask(row).expect("no limit");
                }
            })
        });
        group.bench_function(BenchmarkId::new("parallel", size), |b| {
            b.iter(|| fill_next_token_bitmasks(matchers, rows, words).expect("a valid batch"))
        });
        group.bench_function(BenchmarkId::new("threads-always", size), |b| {
            b.iter(|| {
                matchers
                    .par_iter_mut()
                    .zip(rows.par_chunks_exact_mut(words))
                    .for_each(|(matcher, row)| {
                        matcher.fill_next_token_bitmask(row).expect("no limit")
                    })
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("single");
    // Matcher 0: three tokens into its sentence.
    let one = &mut all[..1];
    let row = &mut bitmask[..words];
    group.bench_function("fill_next_token_bitmask", |b| {
        b.iter(|| one[0].fill_next_token_bitmask(row).expect("no limit"))
    });
    group.bench_function("fill_next_token_bitmasks", |b| {
        b.iter(|| fill_next_token_bitmasks(one, row, words).expect("a valid batch"))
    });
    group.finish();
}

criterion_group!(benches, batch);
criterion_main!(benches);
