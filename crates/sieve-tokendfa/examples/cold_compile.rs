//! Cold compile of the token-DFA backend, for the comparison with outlines-core's `Index`
//! (`benches/outlines_compare.py` runs it): per constraint, the time from the front-end's
//! output to the full token-level automaton — normalisation, rule automata, the
//! whole-constraint DFA and its composition with every token.
//!
//! ```text
//! cargo run --release -p sieve-tokendfa --example cold_compile -- \
//!     --manifest ../shared/tokenizers/manifest.json --tokenizer o200k_base --repeats 5 < constraints.jsonl
//! ```
//!
//! Each input line is `{"name": …, "kind": "regex" | "schema", "text": …}` (a schema's text
//! is the schema as JSON text); each output line is a JSON object with the median times in
//! milliseconds over `--repeats` runs (the front-end, the DFA, the token automaton, their
//! total), the DFA's states and classes, the token automaton's edges and bytes and the
//! number of tokens the start state accepts, or the error. Loading the vocabulary and building its trie happen once, before any timing, as
//! they do once per tokenizer in a server (outlines-core's `Vocabulary` is built beforehand
//! too).

use std::io::BufRead;
use std::path::PathBuf;
use std::time::Instant;

use sieve_tokendfa::{Config, TokenDfa};
use sieve_vocab::TokenTrie;

fn main() {
    let mut manifest = PathBuf::from("../shared/tokenizers/manifest.json");
    let mut tokenizer = "o200k_base".to_owned();
    let mut repeats = 5usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().unwrap_or_else(|| usage(&arg));
        match arg.as_str() {
            "--manifest" => manifest = PathBuf::from(value),
            "--tokenizer" => tokenizer = value,
            "--repeats" => repeats = value.parse().unwrap_or_else(|_| usage(&arg)),
            _ => usage(&arg),
        }
    }
    let started = Instant::now();
    let vocab = sieve_vocab::manifest::load_named(&manifest, &tokenizer)
        .unwrap_or_else(|e| fail(&format!("{}: {e}", manifest.display())));
    let trie = TokenTrie::new(&vocab);
    eprintln!(
        "{tokenizer}: {} tokens, trie in {:.1} ms",
        vocab.n_vocab(),
        started.elapsed().as_secs_f64() * 1e3
    );
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap_or_else(|e| fail(&e.to_string()));
        if line.trim().is_empty() {
            continue;
        }
        let input: serde_json::Value =
            serde_json::from_str(&line).unwrap_or_else(|e| fail(&e.to_string()));
        let name = input["name"].as_str().unwrap_or("?").to_owned();
        let out = match measure(&input, &trie, repeats) {
            Ok(mut out) => {
                out["name"] = name.into();
                out
            }
            Err(error) => serde_json::json!({ "name": name, "error": error }),
        };
        println!("{out}");
    }
}

/// Median timings of `repeats` cold compiles of one constraint.
fn measure(
    input: &serde_json::Value,
    trie: &TokenTrie,
    repeats: usize,
) -> Result<serde_json::Value, String> {
    let text = input["text"].as_str().ok_or("no text")?;
    let mut front = Vec::new();
    let mut dfa_ms = Vec::new();
    let mut automaton_ms = Vec::new();
    let mut total = Vec::new();
    let mut figures = serde_json::Value::Null;
    for _ in 0..repeats.max(1) {
        let t0 = Instant::now();
        let grammar = match input["kind"].as_str() {
            Some("regex") => {
                sieve_regex::compile(text, &Default::default()).map_err(|e| e.to_string())?
            }
            Some("schema") => {
                let value: serde_json::Value =
                    serde_json::from_str(text).map_err(|e| e.to_string())?;
                sieve_jsonschema::compile(&value, &Default::default())
                    .map_err(|e| e.to_string())?
                    .grammar
            }
            other => return Err(format!("unknown kind {other:?}")),
        };
        let t1 = Instant::now();
        let normalized =
            sieve_normalize::normalize(&grammar, &Default::default()).map_err(|e| e.to_string())?;
        let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
            .build_normalized(&normalized)
            .map_err(|e| e.to_string())?;
        let dfa = TokenDfa::new(&fsms, Config::new()).map_err(|e| e.to_string())?;
        let t2 = Instant::now();
        let automaton = dfa.token_automaton(trie).map_err(|e| e.to_string())?;
        let t3 = Instant::now();
        front.push((t1 - t0).as_secs_f64() * 1e3);
        dfa_ms.push((t2 - t1).as_secs_f64() * 1e3);
        automaton_ms.push((t3 - t2).as_secs_f64() * 1e3);
        total.push((t3 - t0).as_secs_f64() * 1e3);
        figures = serde_json::json!({
            "dfa_states": dfa.dfa_state_count(),
            "classes": dfa.class_count(),
            "edges": automaton.edge_count(),
            "automaton_bytes": automaton.heap_bytes(),
            "start_tokens": start_tokens(&automaton, dfa.start()),
        });
    }
    figures["front_ms"] = median(front).into();
    figures["dfa_ms"] = median(dfa_ms).into();
    figures["automaton_ms"] = median(automaton_ms).into();
    figures["total_ms"] = median(total).into();
    Ok(figures)
}

/// The number of tokens the start state accepts.
fn start_tokens(automaton: &sieve_tokendfa::TokenAutomaton, start: u32) -> u32 {
    let mut mask = vec![0u32; automaton.n_vocab().div_ceil(32)];
    automaton.fill_mask(start, &mut mask);
    mask.iter().map(|w| w.count_ones()).sum()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn usage(arg: &str) -> ! {
    fail(&format!(
        "bad argument {arg}; usage: cold_compile [--manifest PATH] [--tokenizer NAME] [--repeats N] < constraints.jsonl"
    ))
}

fn fail(message: &str) -> ! {
    eprintln!("cold_compile: {message}");
    std::process::exit(2)
}
