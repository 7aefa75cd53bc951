//! A server's day: JSONSchemaBench schemas streamed through one o200k_base tokenizer, each a
//! request that compiles its schema and walks one of its valid instances (the first the
//! grammar accepts, greedily tokenised), every mask timed. Reported per mode:
//!
//! - cold cost per request (compile + every mask of the walk): p50 / p90 / p99 / mean;
//! - the slowest step of any request, and the step p99;
//! - the shared store's hit rate (lookups of bare classifications that found an entry).
//!
//! Modes: just in time without the store; just in time with the store (one tokenizer for the
//! whole stream); ahead of time (every state at compile) on one thread; ahead of time on
//! rayon's threads.
//!
//! `cargo bench -p sieve-benches --bench stream [-- --limit N]` (N schemas, default 1,000,
//! taken evenly over the sorted corpus, then shuffled with a fixed seed). `SIEVE_STREAM_MODE=K`
//! runs only the K-th mode (0-based). Reads
//! `SIEVE_SHARED` (default `../shared` beside the workspace); a missing corpus is an error.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use sieve_matcher::{AheadOfTime, CompiledGrammar, Matcher, Options, Tokenizer};

/// The `sieve` binary's allocator, so figures here are the ones the command shows.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A request: the schema's grammar and the instance text to walk.
struct Request {
    name: String,
    grammar: sieve_ir::Grammar,
    instance: Vec<u8>,
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("stream: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let limit = sieve_benches::limit_argument("stream", 1000)?;
    let shared = sieve_benches::shared_dir();
    let vocab = Arc::new(sieve_benches::manifest_vocabulary(&shared, "o200k_base")?);
    let mut requests = requests(&shared.join("data/jsonschemabench"), limit)?;
    if let Ok(only) = std::env::var("SIEVE_STREAM_ONLY") {
        requests.retain(|r| r.name == only);
    }
    println!(
        "{} requests (JSONSchemaBench schemas with an instance), o200k_base",
        requests.len()
    );
    println!(
        "\n| mode | cold cost p50 (ms) | p90 | p99 | mean | step p99 (µs) | slowest step (ms) | store hit rate |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let modes: [(&str, bool, AheadOfTime); 4] = [
        ("just in time, no store", false, AheadOfTime::Off),
        ("just in time, shared store", true, AheadOfTime::Off),
        (
            "ahead of time, 1 thread",
            false,
            AheadOfTime::All { parallel: false },
        ),
        (
            "ahead of time, rayon threads",
            false,
            AheadOfTime::All { parallel: true },
        ),
    ];
    let only_mode: Option<usize> = std::env::var("SIEVE_STREAM_MODE")
        .ok()
        .and_then(|m| m.parse().ok());
    for (index, (name, share, ahead)) in modes.into_iter().enumerate() {
        if only_mode.is_some_and(|m| m != index) {
            continue;
        }
        // A fresh tokenizer per mode: nothing shared between modes.
        let tokenizer = Arc::new(Tokenizer::new(vocab.clone()));
        let options = Options {
            share_classifications: share,
            ahead_of_time: ahead,
            ..Options::default()
        };
        let mut costs = Vec::with_capacity(requests.len());
        let mut steps = Vec::new();
        let mut slowest: Vec<(f64, usize, usize)> = Vec::new();
        for (r, request) in requests.iter().enumerate() {
            let (cost, mut times) = serve(request, &tokenizer, &options);
            costs.push(cost);
            slowest.extend(times.iter().enumerate().map(|(i, &t)| (t, r, i)));
            slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
            slowest.truncate(5);
            steps.append(&mut times);
        }
        if std::env::var_os("SIEVE_STREAM_SLOWEST").is_some() {
            for (ms, r, step) in &slowest {
                eprintln!(
                    "  {name}: {ms:.2} ms at step {step} of {}",
                    requests[*r].name
                );
            }
        }
        costs.sort_by(f64::total_cmp);
        steps.sort_by(f64::total_cmp);
        let stats = tokenizer.store_stats();
        let lookups = stats.hits + stats.misses;
        let hit_rate = if share && lookups > 0 {
            format!(
                "{:.1}% ({} of {lookups})",
                100.0 * stats.hits as f64 / lookups as f64,
                stats.hits
            )
        } else {
            "-".to_owned()
        };
        println!(
            "| {name} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0} | {:.2} | {hit_rate} |",
            quantile(&costs, 0.5),
            quantile(&costs, 0.9),
            quantile(&costs, 0.99),
            costs.iter().sum::<f64>() / costs.len().max(1) as f64,
            quantile(&steps, 0.99) * 1e3,
            steps.last().copied().unwrap_or(0.0),
        );
    }
    Ok(())
}

/// Compiles and walks one request: its cold cost (ms) and each mask's time (ms).
fn serve(request: &Request, tokenizer: &Arc<Tokenizer>, options: &Options) -> (f64, Vec<f64>) {
    let started = Instant::now();
    let Ok(compiled) = CompiledGrammar::new(&request.grammar, tokenizer.clone(), options) else {
        return (started.elapsed().as_secs_f64() * 1e3, Vec::new());
    };
    let compiled = Arc::new(compiled);
    let mut cost = started.elapsed().as_secs_f64() * 1e3;
    let mut matcher = Matcher::new(compiled.clone());
    let mut mask = vec![0u32; compiled.bitmask_words()];
    let mut times = Vec::new();
    let trie = compiled.trie();
    let text = &request.instance;
    let mut at = 0;
    loop {
        let started = Instant::now();
        let filled = matcher.fill_next_token_bitmask(&mut mask);
        let ms = started.elapsed().as_secs_f64() * 1e3;
        cost += ms;
        times.push(ms);
        if filled.is_err() || at == text.len() {
            break;
        }
        let Some((len, id)) = sieve_benches::longest_token(trie, &text[at..]) else {
            break;
        };
        if matcher.accept_token(id).is_err() {
            break;
        }
        at += len;
    }
    (cost, times)
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// `limit` schemas taken evenly over the sorted corpus that compile and have a valid
/// instance, shuffled with a fixed seed (a stream, not subset by subset).
fn requests(corpus: &Path, limit: usize) -> Result<Vec<Request>, String> {
    let files = sieve_benches::corpus_files(corpus)?;
    let step = (files.len() / limit.max(1)).max(1);
    let mut out = Vec::new();
    for (name, path) in files.iter().step_by(step) {
        if out.len() == limit {
            break;
        }
        let Some(file) = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        else {
            continue;
        };
        let (Some(schema), Some(tests)) = (file.get("schema"), file.get("tests")) else {
            continue;
        };
        let Some(instance) = tests.as_array().and_then(|tests| {
            tests
                .iter()
                .find(|t| t.get("valid") == Some(&Value::Bool(true)))
                .and_then(|t| t.get("data"))
        }) else {
            continue;
        };
        let Ok(compiled) = sieve_jsonschema::compile(schema, &Default::default()) else {
            continue;
        };
        out.push(Request {
            name: name.clone(),
            grammar: compiled.grammar,
            instance: serde_json::to_vec(instance).map_err(|e| e.to_string())?,
        });
    }
    // A fixed shuffle (xorshift), so subsets interleave as in a server's day.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for i in (1..out.len()).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        out.swap(i, (seed % (i as u64 + 1)) as usize);
    }
    Ok(out)
}
