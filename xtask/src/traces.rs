//! `cargo xtask record-traces`: records the backend corpus (`grammars/traces/`), seeded token
//! walks over every shipped grammar with the default (Earley) backend and the embedded
//! vocabulary, which every backend then replays (crates/sieve-matcher/tests/corpus.rs).
//!
//! Walks are drawn under a token budget, so they end complete; one per grammar stops early
//! instead, so prefixes are replayed too. Each trace keeps a few tokens that must be refused
//! after it. A file's `refused` table (which backends refuse the grammar, and why) and its
//! hand-written traces (named other than `walk-N` / `prefix-N`) are kept when the file is
//! recorded again.

use std::path::Path;
use std::sync::Arc;

use sieve_matcher::{CompiledGrammar, Matcher, Options, Tokenizer};
use sieve_testkit::traces::{self, Trace, TraceFile};
use sieve_vocab::Vocabulary;

use crate::budget::Rng;

/// The budgets tried, smallest first, until one admits a complete output.
const BUDGETS: [u32; 4] = [24, 48, 96, 192];

/// Complete walks per grammar; one more stops early.
const COMPLETE_WALKS: u64 = 2;

/// Tokens recorded as refused after each trace.
const REJECTS: usize = 3;

/// Records a trace file for every shipped grammar.
pub fn record(root: &Path) -> Result<(), String> {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let tokenizer = Arc::new(Tokenizer::new(vocab));
    let grammars = root.join("grammars");
    let out_dir = grammars.join("traces");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    for path in sieve_testkit::all_grammar_files() {
        let name = path
            .strip_prefix(&grammars)
            .map_err(|_| format!("{} is outside grammars/", path.display()))?
            .to_string_lossy()
            .replace('\\', "/");
        let grammar = sieve_testkit::compile_any(&path);
        let compiled = Arc::new(
            CompiledGrammar::new(&grammar, tokenizer.clone(), &Options::default())
                .map_err(|e| format!("{name}: {e}"))?,
        );
        let out = out_dir.join(traces::file_name_for(&name));
        let (refused, mut walks) = if out.exists() {
            let kept = traces::load(&out);
            // Hand-written traces (any name but the recorder's) stay, first.
            let written: Vec<Trace> = kept
                .traces
                .into_iter()
                .filter(|t| !is_recorded(&t.name))
                .collect();
            (kept.refused, written)
        } else {
            Default::default()
        };
        for seed in 1..=COMPLETE_WALKS + 1 {
            let stop_early = seed > COMPLETE_WALKS;
            let trace = walk(&compiled, seed, stop_early).map_err(|e| format!("{name}: {e}"))?;
            walks.push(trace);
        }
        let file = TraceFile {
            grammar: name.clone(),
            refused,
            traces: walks,
        };
        std::fs::write(&out, file.to_toml()).map_err(|e| format!("{}: {e}", out.display()))?;
        let tokens: usize = file.traces.iter().map(|t| t.tokens.len()).sum();
        println!("{name}: {} traces, {tokens} tokens", file.traces.len());
    }
    Ok(())
}

/// Whether a trace's name is one the recorder gives (`walk-N`, `prefix-N`).
fn is_recorded(name: &str) -> bool {
    ["walk-", "prefix-"].iter().any(|p| {
        name.strip_prefix(p)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// One seeded walk: uniform among the allowed tokens under the smallest budget that admits a
/// complete output (unbudgeted when none does), to EOS — or, `stop_early`, for a few tokens.
fn walk(compiled: &Arc<CompiledGrammar>, seed: u64, stop_early: bool) -> Result<Trace, String> {
    let vocab = compiled.vocabulary().clone();
    let mut rng = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d));
    let mut matcher = BUDGETS
        .iter()
        .find_map(|&budget| Matcher::with_budget(compiled.clone(), budget).ok())
        .unwrap_or_else(|| Matcher::new(compiled.clone()));
    let limit = if stop_early {
        2 + rng.below(8)
    } else {
        BUDGETS[BUDGETS.len() - 1] as usize
    };
    let mut mask = vec![0u32; compiled.bitmask_words()];
    let mut tokens = Vec::new();
    let mut bytes = Vec::new();
    while tokens.len() < limit {
        matcher
            .fill_next_token_bitmask(&mut mask)
            .map_err(|e| e.to_string())?;
        let allowed = compiled.allowed_tokens(&mask);
        if allowed.is_empty() {
            break;
        }
        let pick = allowed[rng.below(allowed.len())];
        if vocab.is_special(pick) {
            break;
        }
        matcher
            .accept_token(pick.as_u32())
            .map_err(|e| e.to_string())?;
        tokens.push(pick.as_u32());
        bytes.extend_from_slice(vocab.bytes(pick));
    }
    // The tokens refused at the end, without the budget (the corpus replays unbudgeted).
    let mut unbudgeted = Matcher::new(compiled.clone());
    for &token in &tokens {
        unbudgeted.accept_token(token).map_err(|e| e.to_string())?;
    }
    unbudgeted
        .fill_next_token_bitmask(&mut mask)
        .map_err(|e| e.to_string())?;
    let mut rejects = Vec::new();
    for _ in 0..64 * REJECTS {
        if rejects.len() == REJECTS {
            break;
        }
        let id = rng.below(vocab.n_vocab()) as u32;
        let refused = mask[id as usize / 32] & (1 << (id % 32)) == 0;
        let text = vocab.token(id).is_some_and(|t| !vocab.is_special(t));
        if refused && text && !rejects.contains(&id) {
            rejects.push(id);
        }
    }
    Ok(Trace {
        name: if stop_early {
            format!("prefix-{seed}")
        } else {
            format!("walk-{seed}")
        },
        text: String::from_utf8_lossy(&bytes).into_owned(),
        tokens,
        complete: unbudgeted.can_terminate(),
        rejects,
    })
}
