//! The LR backend beside Earley on `grammars/llama.cpp/json.gbnf` (repetitions expanded,
//! which the LR backend needs): table construction from the FSMs, `push_byte` over a JSON
//! document, and a cold and a warm mask at a step inside a string (GPT-2's vocabulary).
//! Figures only, never assertions.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sieve_backend::{Backend, Recognizer};
use sieve_earley::EarleyGrammar;
use sieve_fsm::GrammarFsms;
use sieve_lr::LrGrammar;
use sieve_tokencache::TokenCache;
use sieve_vocab::{TokenTrie, Vocabulary};

/// A JSON document of about 4 KiB that `json.gbnf` accepts.
fn document() -> String {
    let mut out = String::from("{\n  \"items\": [");
    for i in 0..30 {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            "\n    {{\"id\": {i}, \"name\": \"item \\\"{i}\\\" \\u00e9\", \"tags\": [\"a\", \"b\"], \
             \"ok\": {}, \"nested\": {{\"x\": -{i}e3, \"y\": null}}}}",
            if i % 2 == 0 { "true" } else { "false" },
        ));
    }
    out.push_str("\n  ],\n  \"count\": 30\n}");
    out
}

fn fsms() -> GrammarFsms {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../grammars/llama.cpp/json.gbnf"
    );
    let text = std::fs::read_to_string(path).expect("json.gbnf");
    let grammar = sieve_gbnf::compile(&text, &sieve_gbnf::Options::default()).expect("compiles");
    let config = sieve_normalize::Config {
        repetition_threshold: 64,
        ..Default::default()
    };
    let normalized = sieve_normalize::normalize(&grammar, &config).expect("normalises");
    sieve_fsm::Builder::new(sieve_fsm::Config::new())
        .build(&normalized)
        .expect("builds")
}

fn bench_backend<B: Backend>(c: &mut Criterion, name: &str, backend: Arc<B>, doc: &[u8]) {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(doc.len() as u64));
    let mut r = backend.recognizer();
    group.bench_function("push_json_document", |b| {
        b.iter(|| {
            r.reset();
            for &byte in doc {
                black_box(r.push_byte(byte).unwrap());
            }
        })
    });
    group.finish();
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let trie = TokenTrie::new(&vocab);
    let mut mask = vec![0u32; trie.n_vocab().div_ceil(32)];
    // Inside the first string's characters.
    let mut r = backend.recognizer();
    for &byte in b"{\n  \"it" {
        assert!(r.push_byte(byte).unwrap());
    }
    let mut group = c.benchmark_group(name);
    group.bench_function("mask_cold_in_string", |b| {
        b.iter(|| {
            let cache = TokenCache::new(backend.state_count(), usize::MAX);
            cache
                .fill_text_tokens(&*backend, &mut r, &trie, &mut mask)
                .unwrap();
        })
    });
    let cache = TokenCache::new(backend.state_count(), usize::MAX);
    group.bench_function("mask_warm_in_string", |b| {
        b.iter(|| {
            mask.fill(0);
            cache
                .fill_text_tokens(&*backend, &mut r, &trie, &mut mask)
                .unwrap();
        })
    });
    group.finish();
}

fn compare(c: &mut Criterion) {
    let fsms = fsms();
    let doc = document();
    let mut group = c.benchmark_group("compile_json_gbnf");
    group.bench_function("earley", |b| {
        b.iter(|| EarleyGrammar::new(&fsms, false, sieve_earley::Config::default()))
    });
    group.bench_function("lr", |b| {
        b.iter(|| LrGrammar::new(&fsms, false, sieve_lr::Config::default()).unwrap())
    });
    group.finish();
    let earley = Arc::new(EarleyGrammar::new(
        &fsms,
        false,
        sieve_earley::Config::default(),
    ));
    let lr = Arc::new(LrGrammar::new(&fsms, false, sieve_lr::Config::default()).unwrap());
    bench_backend(c, "earley", earley, doc.as_bytes());
    bench_backend(c, "lr", lr, doc.as_bytes());
    // The step-by-step path alone (no aggregated edges), for comparison.
    let stepwise = sieve_lr::Config {
        max_edges: 0,
        ..sieve_lr::Config::default()
    };
    let lr_stepwise = Arc::new(LrGrammar::new(&fsms, false, stepwise).unwrap());
    bench_backend(c, "lr_stepwise", lr_stepwise, doc.as_bytes());
}

criterion_group!(benches, compare);
criterion_main!(benches);
