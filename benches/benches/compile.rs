//! Grammar compile time by stage: front-end, normalisation, automata, and all three. The
//! stages are the library's (`sieve_matcher::pipeline`) with its default options, so the
//! figures are those of `CompiledGrammar::new` up to the recogniser.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use sieve_matcher::{pipeline, Options};

/// The `sieve` binary's allocator, so figures here are the ones the command shows.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn compile(c: &mut Criterion) {
    let front_end = sieve_gbnf::Options::default();
    let options = Options::default();
    let mut group = c.benchmark_group("compile");
    for (name, text) in sieve_benches::shipped_gbnf_grammars() {
        let Ok(parsed) = sieve_gbnf::compile(&text, &front_end) else {
            continue;
        };
        let Ok(normalized) = pipeline::normalize(&parsed, &options) else {
            continue;
        };
        group.bench_with_input(BenchmarkId::new("front-end", &name), &text, |b, text| {
            b.iter(|| sieve_gbnf::compile(text, &front_end))
        });
        group.bench_with_input(BenchmarkId::new("normalize", &name), &parsed, |b, g| {
            b.iter(|| pipeline::normalize(g, &options))
        });
        group.bench_with_input(BenchmarkId::new("fsm", &name), &normalized, |b, g| {
            b.iter(|| pipeline::automata(g, &options))
        });
        group.bench_with_input(BenchmarkId::new("all", &name), &text, |b, text| {
            b.iter(|| {
                let parsed = sieve_gbnf::compile(text, &front_end).expect("compiled above");
                let normalized = pipeline::normalize(&parsed, &options).expect("above");
                pipeline::automata(&normalized, &options)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, compile);
criterion_main!(benches);
