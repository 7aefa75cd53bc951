//! `push_byte` throughput over a JSON document with `grammars/llama.cpp/json.gbnf`: feeding the
//! whole document, and a mask-walk-like pattern (push a byte, pop it, push it again). Figures
//! only, never assertions.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sieve_earley::{Config, EarleyGrammar, Parser};

/// A JSON document of about 10 KiB that `json.gbnf` accepts (its `ws` allows a newline and at
/// most 20 spaces of indentation).
fn document() -> String {
    let mut out = String::from("{\n  \"items\": [");
    for i in 0..60 {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            "\n    {{\"id\": {i}, \"name\": \"item \\\"{i}\\\" \\u00e9\", \"price\": {}.{:02}, \
             \"tags\": [\"a\", \"b\", \"c\"], \"ok\": {}, \"nested\": {{\"x\": -{i}e3, \"y\": null}}}}",
            i * 37 % 1000,
            i % 100,
            if i % 2 == 0 { "true" } else { "false" },
        ));
    }
    out.push_str("\n  ],\n  \"count\": 60\n}");
    out
}

fn engine() -> Arc<EarleyGrammar> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../grammars/llama.cpp/json.gbnf"
    );
    let text = std::fs::read_to_string(path).expect("json.gbnf");
    let grammar = sieve_gbnf::compile(&text, &sieve_gbnf::Options::default()).expect("compiles");
    let normalized = sieve_normalize::normalize(&grammar, &sieve_normalize::Config::default())
        .expect("normalises");
    let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
        .build(&normalized)
        .expect("builds");
    Arc::new(EarleyGrammar::new(&fsms, false, Config::default()))
}

fn push(c: &mut Criterion) {
    let engine = engine();
    let doc = document();
    let bytes = doc.as_bytes();
    {
        let mut p = Parser::new(engine.clone());
        for &b in bytes {
            assert!(p.push_byte(b).unwrap(), "the bench document is valid JSON");
        }
        assert!(p.can_finish());
    }
    let mut group = c.benchmark_group("earley");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    let mut parser = Parser::new(engine);
    group.bench_function("push_json_document", |b| {
        b.iter(|| {
            parser.reset();
            for &byte in bytes {
                black_box(parser.push_byte(byte).unwrap());
            }
            black_box(parser.can_finish())
        })
    });
    group.bench_function("push_pop_push_json_document", |b| {
        b.iter(|| {
            parser.reset();
            for &byte in bytes {
                black_box(parser.push_byte(byte).unwrap());
                parser.pop_bytes(1);
                black_box(parser.push_byte(byte).unwrap());
            }
            black_box(parser.can_finish())
        })
    });
    group.finish();
}

criterion_group!(benches, push);
criterion_main!(benches);
