//! Grammar compile time by stage: front-end, normalisation, automata, and all three.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

/// The `sieve` binary's allocator, so figures here are the ones the command shows.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn compile(c: &mut Criterion) {
    let options = sieve_gbnf::Options::default();
    let config = sieve_normalize::Config::default();
    let fsm = sieve_fsm::Builder::new(sieve_fsm::Config::new());
    let mut group = c.benchmark_group("compile");
    for (name, text) in sieve_benches::shipped_gbnf_grammars() {
        let Ok(parsed) = sieve_gbnf::compile(&text, &options) else {
            continue;
        };
        let Ok(normalized) = sieve_normalize::normalize(&parsed, &config) else {
            continue;
        };
        group.bench_with_input(BenchmarkId::new("front-end", &name), &text, |b, text| {
            b.iter(|| sieve_gbnf::compile(text, &options))
        });
        group.bench_with_input(BenchmarkId::new("normalize", &name), &parsed, |b, g| {
            b.iter(|| sieve_normalize::normalize(g, &config))
        });
        group.bench_with_input(BenchmarkId::new("fsm", &name), &normalized, |b, g| {
            b.iter(|| fsm.build(g))
        });
        group.bench_with_input(BenchmarkId::new("all", &name), &text, |b, text| {
            b.iter(|| {
                let parsed = sieve_gbnf::compile(text, &options).expect("compiled above");
                let normalized = sieve_normalize::normalize(&parsed, &config).expect("above");
                fsm.build(&normalized)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, compile);
criterion_main!(benches);
