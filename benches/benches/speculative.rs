//! Draft masks for speculative decoding with the embedded GPT-2 vocabulary over
//! `llama.cpp/json.gbnf`: `B` matchers, each at a different step of a different sampled
//! sentence, each with a draft tree like a tree drafter's (EAGLE's, SGLang's): the next
//! [`DEPTH`] tokens of its sentence as the main path, and at every level [`WIDTH`] - 1 other
//! tokens the grammar allows there as siblings, so [`DEPTH`] × [`WIDTH`] + 1 nodes. Caches
//! warm. Criterion reports time per batch and trees per second.
//!
//! - `draft/tree/B`: `fill_draft_tree_bitmasks_batch` (the library: every token accepted once,
//!   rolled back to the branch point; matchers across rayon's threads past the threshold).
//! - `draft/tree-sequential/B`: `Matcher::fill_draft_tree_bitmasks` one matcher after another
//!   (the sharing without the threads).
//! - `draft/by-hand/B`: what a caller without the API writes: for every node, accept the
//!   path from the root, fill the mask, roll the path back.
//! - `validate/sequential/B` and `validate/parallel/B`: `Matcher::validate_tokens` of each
//!   main path, one after another and through `validate_tokens_batch`.
//! - `backends/<backend>/tree/64` and `…/tree-sequential/64`: the same kind of trees on each
//!   backend (Earley, LR, token DFA) over `json-schema/person.json`, which all three take.
//!
//! Speedups from threads are bounded by the cores free: 2 on the project's machines.

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sieve_matcher::{
    fill_draft_tree_bitmasks_batch, validate_tokens_batch, BackendChoice, CompiledGrammar,
    DraftTree, Matcher, Options, Tokenizer,
};
use sieve_vocab::Vocabulary;

/// The `sieve` binary's allocator, so figures here are the ones the command shows.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The grammar, under `grammars/`.
const GRAMMAR: &str = "llama.cpp/json.gbnf";

/// The schema of the `backends` group, under `grammars/`: regular and LR(1), so every
/// backend takes it.
const SCHEMA: &str = "json-schema/person.json";

/// The batch sizes measured.
const BATCHES: &[usize] = &[1, 8, 64];

/// Levels of a draft tree (the main path's length).
const DEPTH: usize = 5;

/// Nodes per level: the main path's token and `WIDTH - 1` siblings.
const WIDTH: usize = 3;

/// A matcher `DEPTH` tokens or more before the end of `tokens`, and its draft tree.
fn draft_at(compiled: &Arc<CompiledGrammar>, tokens: &[u32], step: usize) -> (Matcher, DraftTree) {
    let mut matcher = Matcher::new(compiled.clone());
    for &token in &tokens[..step] {
        matcher.accept_token(token).expect("a sampled sentence");
    }
    let mut walker = matcher.clone();
    let mut mask = vec![0u32; compiled.bitmask_words()];
    let mut ids = vec![0u32];
    let mut parents = vec![None];
    let mut main = 0;
    for &token in &tokens[step..step + DEPTH] {
        walker.fill_next_token_bitmask(&mut mask).expect("no limit");
        let siblings = compiled
            .allowed_tokens(&mask)
            .into_iter()
            .map(|t| t.as_u32())
            .filter(|&t| t != token)
            .take(WIDTH - 1);
        for sibling in siblings {
            ids.push(sibling);
            parents.push(Some(main));
        }
        ids.push(token);
        parents.push(Some(main));
        main = ids.len() - 1;
        walker.accept_token(token).expect("a sampled sentence");
    }
    let tree = DraftTree::from_parents(&ids, &parents).expect("a tree");
    (matcher, tree)
}

/// Every node's mask the way a caller without the draft API computes it.
fn by_hand(matcher: &mut Matcher, tree: &DraftTree, paths: &[Vec<u32>], rows: &mut [u32]) {
    let words = rows.len() / tree.nodes();
    for (path, row) in paths.iter().zip(rows.chunks_exact_mut(words)) {
        let mut taken = 0;
        for &token in path {
            if matcher.accept_token(token).is_err() {
                break;
            }
            taken += 1;
        }
        if taken == path.len() {
            matcher.fill_next_token_bitmask(row).expect("no limit");
        } else {
            row.fill(0);
        }
        matcher.rollback(taken).expect("taken steps");
    }
}

/// The tokens from the root to each node.
fn paths(tree: &DraftTree) -> Vec<Vec<u32>> {
    let mut paths = vec![Vec::new(); tree.nodes()];
    for node in 0..tree.nodes() {
        for child in tree.children(node) {
            let mut path = paths[node].clone();
            path.push(tree.token(child).expect("not the root"));
            paths[child] = path;
        }
    }
    paths
}

/// Up to 32 sampled sentences of `grammar` of 16 to 400 bytes, as GPT-2 tokens, each longer
/// than a draft.
fn sentences(grammar: &sieve_ir::Grammar, tokenizer: &Tokenizer) -> Vec<Vec<u32>> {
    let recognizer = sieve_ir::reference::Recognizer::new(grammar).expect("small");
    (0..200)
        .filter_map(|seed| recognizer.sample(seed, 8))
        .filter(|s| (16..=400).contains(&s.len()))
        .filter_map(|s| sieve_benches::tokenize(tokenizer.trie(), &s))
        .filter(|tokens| tokens.len() > DEPTH)
        .take(32)
        .collect()
}

/// `count` matchers at different steps of different sentences, and their draft trees.
fn drafts(
    compiled: &Arc<CompiledGrammar>,
    sentences: &[Vec<u32>],
    count: usize,
) -> (Vec<Matcher>, Vec<DraftTree>) {
    (0..count)
        .map(|i| {
            let tokens = &sentences[i % sentences.len()];
            let step = (i * 7 + i / sentences.len()) % (tokens.len() - DEPTH);
            draft_at(compiled, tokens, step)
        })
        .unzip()
}

fn speculative(c: &mut Criterion) {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let tokenizer = Arc::new(Tokenizer::new(vocab));
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../grammars")
        .join(GRAMMAR);
    let text = std::fs::read_to_string(&path).expect("shipped grammar");
    let grammar = sieve_gbnf::compile(&text, &Default::default()).expect("compiles");
    let sentences = sentences(&grammar, &tokenizer);
    let compiled = Arc::new(
        CompiledGrammar::new(&grammar, tokenizer.clone(), &Options::default()).expect("compiles"),
    );
    let words = compiled.bitmask_words();
    let largest = *BATCHES.last().expect("sizes");
    let (mut all, trees) = drafts(&compiled, &sentences, largest);
    let all_paths: Vec<Vec<Vec<u32>>> = trees.iter().map(paths).collect();
    let mains: Vec<Vec<u32>> = all_paths
        .iter()
        .map(|p| p.last().expect("a node").clone())
        .collect();
    let nodes = DEPTH * WIDTH + 1;
    assert!(trees.iter().all(|t| t.nodes() <= nodes));
    let mut bitmask = vec![0u32; largest * nodes * words];
    // Warm the cache: every state the trees reach is classified before measuring.
    fill_draft_tree_bitmasks_batch(&mut all, &trees, &mut bitmask, words).expect("valid");
    // The by-hand masks are the library's (the comparison is of equal work).
    let mut manual = vec![0u32; bitmask.len()];
    let mut rest = &mut manual[..];
    for ((matcher, tree), paths) in all.iter_mut().zip(&trees).zip(&all_paths) {
        let (region, tail) = rest.split_at_mut(tree.nodes() * words);
        by_hand(matcher, tree, paths, region);
        rest = tail;
    }
    assert!(manual == bitmask, "by hand = the library");

    let mut group = c.benchmark_group("draft");
    group.sample_size(20);
    for &size in BATCHES {
        let matchers = &mut all[..size];
        let trees = &trees[..size];
        let rows: usize = trees.iter().map(DraftTree::nodes).sum();
        let buffer = &mut bitmask[..rows * words];
        group.throughput(Throughput::Elements(size as u64));
        group.bench_function(BenchmarkId::new("tree", size), |b| {
            b.iter(|| {
                fill_draft_tree_bitmasks_batch(matchers, trees, buffer, words).expect("valid")
            })
        });
        group.bench_function(BenchmarkId::new("tree-sequential", size), |b| {
            b.iter(|| {
                let mut rest = &mut buffer[..];
                for (matcher, tree) in matchers.iter_mut().zip(trees) {
                    let (region, tail) = rest.split_at_mut(tree.nodes() * words);
                    matcher
                        .fill_draft_tree_bitmasks(tree, region, words)
                        .expect("no limit");
                    rest = tail;
                }
            })
        });
        group.bench_function(BenchmarkId::new("by-hand", size), |b| {
            b.iter(|| {
                let mut rest = &mut buffer[..];
                for ((matcher, tree), paths) in matchers.iter_mut().zip(trees).zip(&all_paths) {
                    let (region, tail) = rest.split_at_mut(tree.nodes() * words);
                    by_hand(matcher, tree, paths, region);
                    rest = tail;
                }
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("validate");
    for &size in BATCHES {
        let matchers = &mut all[..size];
        let drafts = &mains[..size];
        group.throughput(Throughput::Elements(size as u64));
        group.bench_function(BenchmarkId::new("sequential", size), |b| {
            b.iter(|| {
                for (matcher, draft) in matchers.iter_mut().zip(drafts) {
                    matcher.validate_tokens(draft).expect("no limit");
                }
            })
        });
        group.bench_function(BenchmarkId::new("parallel", size), |b| {
            b.iter(|| validate_tokens_batch(matchers, drafts).expect("valid"))
        });
    }
    group.finish();
}

/// The same draft trees on every backend, over a grammar all three take
/// ([`SCHEMA`]): `backends/<name>/tree/64` (the batch) and `backends/<name>/tree-sequential/64`.
fn backends(c: &mut Criterion) {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let tokenizer = Arc::new(Tokenizer::new(vocab));
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../grammars")
        .join(SCHEMA);
    let text = std::fs::read_to_string(&path).expect("shipped schema");
    let schema: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let grammar = sieve_jsonschema::compile(&schema, &Default::default())
        .expect("compiles")
        .grammar;
    let sentences = sentences(&grammar, &tokenizer);
    let size = *BATCHES.last().expect("sizes");
    let mut group = c.benchmark_group("backends");
    group.sample_size(20);
    group.throughput(Throughput::Elements(size as u64));
    for backend in [
        BackendChoice::Earley,
        BackendChoice::Lr,
        BackendChoice::TokenDfa,
    ] {
        let options = Options {
            backend,
            ..Options::default()
        };
        let compiled = Arc::new(
            CompiledGrammar::new(&grammar, tokenizer.clone(), &options)
                .expect("every backend takes the schema"),
        );
        let words = compiled.bitmask_words();
        let (mut matchers, trees) = drafts(&compiled, &sentences, size);
        let rows: usize = trees.iter().map(DraftTree::nodes).sum();
        let mut bitmask = vec![0u32; rows * words];
        fill_draft_tree_bitmasks_batch(&mut matchers, &trees, &mut bitmask, words).expect("valid");
        let name = backend.name();
        group.bench_function(BenchmarkId::new(format!("{name}/tree"), size), |b| {
            b.iter(|| {
                fill_draft_tree_bitmasks_batch(&mut matchers, &trees, &mut bitmask, words)
                    .expect("valid")
            })
        });
        group.bench_function(
            BenchmarkId::new(format!("{name}/tree-sequential"), size),
            |b| {
                b.iter(|| {
                    let mut rest = &mut bitmask[..];
                    for (matcher, tree) in matchers.iter_mut().zip(&trees) {
                        let (region, tail) = rest.split_at_mut(tree.nodes() * words);
                        matcher
                            .fill_draft_tree_bitmasks(tree, region, words)
                            .expect("no limit");
                        rest = tail;
                    }
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, speculative, backends);
criterion_main!(benches);
