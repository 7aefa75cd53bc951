//! Cold compile of the token-DFA backend with GPT-2's embedded vocabulary (always at hand,
//! unlike o200k; `benches/outlines_compare.py` is the comparison with outlines-core): the
//! whole-constraint DFA alone, and with the full token automaton; one exact classification
//! of a wildcard state (class region plus exits), of a state inside a bounded text and of a
//! JSON string's state (text region plus exits); and a mask read off the token automaton.
//! Figures only, never assertions.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use sieve_backend::{Backend, Key};
use sieve_tokendfa::{Config, TokenDfa};
use sieve_vocab::{TokenTrie, Vocabulary};

const CONSTRAINTS: &[(&str, &str)] = &[
    ("email", r"[a-z0-9._%+-]{1,20}@[a-z0-9.-]{1,20}\.[a-z]{2,6}"),
    ("sentence", r"[A-Z][a-z ,]{0,60}\."),
    ("free_text", r"(?s:.*)\nEND"),
];

fn dfa(pattern: &str) -> TokenDfa {
    let grammar = sieve_regex::compile(pattern, &Default::default()).expect("valid");
    let normalized = sieve_normalize::normalize(&grammar, &Default::default()).expect("normalises");
    let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
        .build_normalized(&normalized)
        .expect("builds");
    TokenDfa::new(&fsms, Config::new()).expect("regular")
}

fn compile(c: &mut Criterion) {
    let vocab = Vocabulary::embedded_default().clone();
    let trie = TokenTrie::new(&vocab);
    let mut group = c.benchmark_group("tokendfa_compile");
    group.sample_size(10);
    for &(name, pattern) in CONSTRAINTS {
        group.bench_function(format!("{name}/dfa"), |b| {
            b.iter(|| black_box(dfa(pattern)))
        });
        group.bench_function(format!("{name}/token_automaton"), |b| {
            b.iter(|| black_box(dfa(pattern).token_automaton(&trie).expect("fits")))
        });
    }
    group.finish();
    let wildcard = Arc::new(dfa(r"(?s:.*)\nEND"));
    c.bench_function("tokendfa_classify/wildcard_start", |b| {
        b.iter(|| black_box(wildcard.classify(Key::bare(0), &trie)))
    });
    // A mask read off the token automaton: the steady state of a request.
    let sentence = dfa(r"[A-Z][a-z ,]{0,60}\.");
    let automaton = sentence.token_automaton(&trie).expect("fits");
    let after_one = sentence.next_state(0, b'T').expect("a capital starts");
    let mut mask = vec![0u32; trie.n_vocab().div_ceil(32)];
    c.bench_function("tokendfa_mask/automaton_fill", |b| {
        b.iter(|| {
            mask.fill(0);
            automaton.fill_mask(after_one, &mut mask);
            black_box(&mask);
        })
    });
    c.bench_function("tokendfa_classify/sentence_state", |b| {
        b.iter(|| black_box(sentence.classify(Key::bare(after_one), &trie)))
    });
    let string = dfa(r#""([^"\\]|\\["\\/bfnrt])*""#);
    let inside = string
        .next_state(0, b'"')
        .expect("a quote opens the string");
    assert_eq!(
        string.reads_text(inside),
        Some(1),
        "the text path is measured"
    );
    c.bench_function("tokendfa_classify/json_string", |b| {
        b.iter(|| black_box(string.classify(Key::bare(inside), &trie)))
    });
}

criterion_group!(benches, compile);
criterion_main!(benches);
