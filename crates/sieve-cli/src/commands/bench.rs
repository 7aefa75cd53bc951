//! `sieve bench REQUEST`: the peer harness's engine protocol, `peers-engine/1`
//! (`shared/bench/README.md`).
//!
//! The harness writes a request (workload sources, tokenizer, token sequences) and reads JSON
//! lines from stdout: compile times, instantiate times, and one line per step with the number
//! of allowed tokens, the mask's hash and the time of the mask and accept calls.
//!
//! Timing boundaries, so the figures compare with the peers':
//! - *compile cold*: grammar source file → first matcher ready (read, front-end, normalise,
//!   automata, recogniser tables, `Matcher::new`), each repeat against a tokenizer with
//!   empty caches (`Tokenizer::with_fresh_caches`), so no repeat reuses the rule automata
//!   of the one before. The vocabulary and its trie are built once before, as both peers
//!   build their tokenizer info once per process.
//! - *compile warm*: the same, against the tokenizer of the last cold compile, whose cache
//!   now holds this grammar's rule automata (a server's next request with the same schema).
//!   The walks run on the last cold compile's grammar, so walk 1 meets every state cold.
//! - *instantiate*: `Matcher::new` from the compiled grammar.
//! - *mask*: `fill_next_token_bitmask`; *accept*: `accept_token`.
//!
//! JSON Schemas are compiled with the request's `json_options` (`whitespace` compact or
//! flexible, `item_separator`, `key_separator`); the other options are sieve's defaults.
//! Structural tags (kind `structural_tag`) take the same options as the base of their
//! `json_schema` contents, whose whitespace is always flexible, as XGrammar's. Lark grammars
//! (kind `lark`) take them as the base of their `%json` schemas, adjusted by each schema's
//! `x-guidance` object (flexible whitespace unless it says otherwise, as llguidance's).
//!
//! An optional request field `max_tokens` (an integer; sieve's extension of the protocol)
//! gives every matcher a token budget (`Matcher::with_budget`): masks then also leave out
//! every token after which no complete output fits in the tokens left, EOS counted, so the
//! *mask* times include that filter. A budget too small for any complete output is answered
//! with an `error` line per sample (the matcher cannot be created); a sample token outside the
//! budgeted mask ends that sample with an `error` line, as any token outside the mask does.
//! Without the field, matchers have no budget.
//!
//! A request whose sources include no kind sieve supports is answered with an `error` line
//! and exit code 2, so the harness reports it instead of comparing nothing. `--kinds` narrows
//! the kinds sieve may pick, so one workload can be run through each of its sources
//! (`sieve bench --kinds structural_tag` beside `sieve bench --kinds lark`).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use serde::Deserialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use sieve_matcher::{CompiledGrammar, Matcher, Tokenizer};
use sieve_vocab::{TokenId, Vocabulary};

use crate::pipeline::{self, Format, PipelineOptions};

/// The protocol this command speaks.
const PROTOCOL: &str = "peers-engine/1";

/// The grammar kinds sieve compiles, by the harness's names.
const SUPPORTED_KINDS: [(&str, Format); 5] = [
    ("json_schema", Format::JsonSchema),
    ("regex", Format::Regex),
    ("gbnf", Format::Gbnf),
    ("structural_tag", Format::StructuralTag),
    ("lark", Format::Lark),
];

/// The parts of a request that sieve reads.
#[derive(Deserialize)]
struct Request {
    protocol: String,
    grammars: BTreeMap<String, PathBuf>,
    preferred_kinds: Vec<String>,
    #[serde(default)]
    json_options: JsonOptions,
    tokenizer: Value,
    n_vocab: usize,
    eos_token_ids: Vec<u32>,
    #[serde(default = "one")]
    compile_repeats: usize,
    #[serde(default = "one")]
    walk_repeats: usize,
    samples: Vec<Sample>,
    /// sieve's extension: a token budget for every matcher (see the module docs).
    #[serde(default)]
    max_tokens: Option<u32>,
}

fn one() -> usize {
    1
}

/// The request's `json_options`; absent fields keep sieve's defaults.
#[derive(Deserialize, Default)]
struct JsonOptions {
    whitespace: Option<String>,
    item_separator: Option<String>,
    key_separator: Option<String>,
}

impl JsonOptions {
    /// `base` with the request's settings applied.
    fn apply(&self, base: &sieve_jsonschema::Options) -> Result<sieve_jsonschema::Options, String> {
        let mut options = base.clone();
        match self.whitespace.as_deref() {
            None | Some("compact") => options.whitespace = sieve_jsonschema::Whitespace::Compact,
            Some("flexible") => options.whitespace = sieve_jsonschema::Whitespace::Flexible,
            Some(other) => {
                return Err(format!(
                    "json_options.whitespace {other:?} is neither \"compact\" nor \"flexible\""
                ))
            }
        }
        if let Some(separator) = &self.item_separator {
            options.item_separator.clone_from(separator);
        }
        if let Some(separator) = &self.key_separator {
            options.key_separator.clone_from(separator);
        }
        Ok(options)
    }
}

/// One token sequence to walk.
#[derive(Deserialize)]
struct Sample {
    index: usize,
    tokens: Vec<u32>,
}

/// Runs the request at `path`, writing protocol lines to stdout; `kinds`, when not empty,
/// restricts the grammar kinds sieve may pick (an unknown name is a usage error).
pub fn bench(path: &Path, kinds: &[String], options: &PipelineOptions) -> Result<ExitCode, String> {
    if let Some(unknown) = kinds
        .iter()
        .find(|kind| !SUPPORTED_KINDS.iter().any(|(name, _)| name == kind))
    {
        return Err(format!(
            "--kinds: sieve does not compile {unknown:?}; it runs {:?}",
            SUPPORTED_KINDS.map(|(name, _)| name)
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let request: Request =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Output(std::io::stdout().lock());
    if request.protocol != PROTOCOL {
        return out.fail(&format!(
            "protocol {:?} is not {PROTOCOL:?}",
            request.protocol
        ));
    }
    let Some((kind, format, source)) = pick_source(&request, kinds) else {
        return out.fail(&format!(
            "no supported grammar kind among {:?}; sieve runs {:?}",
            request.preferred_kinds,
            SUPPORTED_KINDS.map(|(name, _)| name)
        ));
    };
    let tokenizer = match load_tokenizer(&request) {
        Ok(tokenizer) => Arc::new(tokenizer),
        Err(message) => return out.fail(&message),
    };
    out.line(&json!({
        "type": "engine", "name": "sieve", "version": env!("CARGO_PKG_VERSION"),
        "grammar_kind": kind,
    }))?;

    let json = match request.json_options.apply(&options.json) {
        Ok(json) => json,
        Err(message) => return out.fail(&message),
    };
    let options = PipelineOptions {
        format: Some(format),
        json,
        tokens: sieve_ir::token::SharedNames(tokenizer.vocabulary().clone()),
        ..options.clone()
    };
    let mut compiled = None;
    for _ in 0..request.compile_repeats.max(1) {
        // Fresh engine state: none of the rule automata or classifications of the repeats
        // before (the vocabulary and its trie stay, as the peers keep their tokenizer info).
        let fresh = Arc::new(tokenizer.with_fresh_caches());
        let (grammar, ms) = match timed_compile(&source, &options, &fresh) {
            Ok(timed) => timed,
            Err(message) => return out.fail(&message),
        };
        out.line(&json!({"type": "compile", "mode": "cold", "ms": ms}))?;
        compiled = Some((grammar, fresh));
    }
    let (compiled, tokenizer) = compiled.expect("at least one compile ran");
    for _ in 0..request.compile_repeats.max(1) {
        // The same source again against the tokenizer that compiled it: its rule automata
        // come from the tokenizer's cache (a server's second request with this schema).
        let (_, ms) = match timed_compile(&source, &options, &tokenizer) {
            Ok(timed) => timed,
            Err(message) => return out.fail(&message),
        };
        out.line(&json!({"type": "compile", "mode": "warm", "ms": ms}))?;
    }

    let eos = request.eos_token_ids[0];
    let mut mask = vec![0u32; compiled.bitmask_words()];
    for walk in 0..request.walk_repeats {
        for sample in &request.samples {
            let started = Instant::now();
            let matcher = match request.max_tokens {
                Some(budget) => Matcher::with_budget(compiled.clone(), budget),
                None => Ok(Matcher::new(compiled.clone())),
            };
            let us = started.elapsed().as_secs_f64() * 1e6;
            let mut matcher = match matcher {
                Ok(matcher) => matcher,
                Err(error) => {
                    out.step_error(sample.index, 0, &error.to_string())?;
                    continue;
                }
            };
            out.line(&json!({"type": "instantiate", "us": us}))?;
            let steps = sample.tokens.iter().copied().chain([eos]);
            for (step, token) in steps.enumerate() {
                let started = Instant::now();
                let filled = matcher.fill_next_token_bitmask(&mut mask);
                let mask_us = started.elapsed().as_secs_f64() * 1e6;
                if let Err(error) = filled {
                    out.step_error(sample.index, step, &error.to_string())?;
                    break;
                }
                let allowed = count_allowed(&mask, request.n_vocab);
                let in_mask = is_set(&mask, token);
                let started = Instant::now();
                let accepted = if in_mask {
                    matcher.accept_token(token).map_err(|e| e.to_string())
                } else {
                    Err(format!("token {token} is not in the mask"))
                };
                let accept_us = started.elapsed().as_secs_f64() * 1e6;
                let is_eos_step = step == sample.tokens.len();
                let failure = match accepted {
                    Err(message) => Some(message),
                    Ok(()) if is_eos_step && !matcher.is_terminated() => {
                        Some("not terminated after EOS".to_owned())
                    }
                    Ok(()) => None,
                };
                out.line(&json!({
                    "sample": sample.index, "walk": walk, "step": step,
                    "allowed": allowed, "mask_us": mask_us, "accept_us": accept_us,
                    "ok": failure.is_none(), "mask_hash": mask_hash(&mask, request.n_vocab),
                }))?;
                if let Some(message) = failure {
                    out.step_error(sample.index, step, &message)?;
                    break;
                }
            }
        }
    }
    let stats = compiled.cache_stats();
    eprintln!(
        "sieve bench: {} classifications, {} uncertain tokens walked by the recogniser, {} cache entries ({} KiB)",
        stats.classified,
        stats.walked,
        stats.entries,
        stats.bytes / 1024
    );
    out.line(&json!({"type": "done"}))?;
    Ok(ExitCode::SUCCESS)
}

/// The first preferred kind that the workload has, sieve compiles and `kinds` (when not
/// empty) names.
fn pick_source<'a>(request: &'a Request, kinds: &[String]) -> Option<(&'a str, Format, PathBuf)> {
    request.preferred_kinds.iter().find_map(|kind| {
        if !kinds.is_empty() && !kinds.contains(kind) {
            return None;
        }
        let (name, format) = SUPPORTED_KINDS.iter().find(|(name, _)| name == kind)?;
        Some((*name, *format, request.grammars.get(kind)?.clone()))
    })
}

/// The request's vocabulary, its manifest entry's paths taken relative to the manifest,
/// with the request's EOS ids.
fn load_tokenizer(request: &Request) -> Result<Tokenizer, String> {
    let manifest = request
        .tokenizer
        .get("manifest")
        .and_then(Value::as_str)
        .ok_or("the request's tokenizer has no manifest path")?;
    let base = Path::new(manifest).parent().unwrap_or(Path::new("."));
    let eos: Vec<TokenId> = request
        .eos_token_ids
        .iter()
        .map(|&id| TokenId::new(id).ok_or(format!("EOS id {id} is out of range")))
        .collect::<Result<_, _>>()?;
    if eos.is_empty() {
        return Err("the request lists no EOS token id".to_owned());
    }
    let vocab = Vocabulary::from_manifest_entry(&request.tokenizer, base)
        .and_then(|vocab| vocab.with_eos(eos))
        .map_err(|e| format!("tokenizer: {e}"))?;
    if vocab.n_vocab() != request.n_vocab {
        return Err(format!(
            "the tokenizer has {} ids but the request says n_vocab = {}",
            vocab.n_vocab(),
            request.n_vocab
        ));
    }
    Ok(Tokenizer::new(Arc::new(vocab)))
}

/// [`compile`] and a first [`Matcher`], timed together (in milliseconds), as a compile line
/// reports them.
fn timed_compile(
    source: &Path,
    options: &PipelineOptions,
    tokenizer: &Arc<Tokenizer>,
) -> Result<(Arc<CompiledGrammar>, f64), String> {
    let started = Instant::now();
    let grammar = compile(source, options, tokenizer)?;
    let matcher = Matcher::new(grammar.clone());
    let ms = started.elapsed().as_secs_f64() * 1e3;
    drop(matcher);
    Ok((grammar, ms))
}

/// Source file → compiled grammar, with errors rendered for the error line.
fn compile(
    source: &Path,
    options: &PipelineOptions,
    tokenizer: &Arc<Tokenizer>,
) -> Result<Arc<CompiledGrammar>, String> {
    let loaded = pipeline::load(source, options)?;
    let grammar = pipeline::front_end(&loaded, options).map_err(|d| d.0.concat())?;
    CompiledGrammar::new(&grammar, tokenizer.clone(), &options.compile)
        .map(Arc::new)
        .map_err(|e| format!("{}: {e}", loaded.name))
}

fn is_set(mask: &[u32], token: u32) -> bool {
    mask.get(token as usize / 32)
        .is_some_and(|word| word >> (token % 32) & 1 == 1)
}

/// The number of allowed ids below `n_vocab`.
fn count_allowed(mask: &[u32], n_vocab: usize) -> u32 {
    let full = n_vocab / 32;
    let mut count: u32 = mask[..full].iter().map(|w| w.count_ones()).sum();
    if n_vocab % 32 != 0 {
        count += (mask[full] & ((1u32 << (n_vocab % 32)) - 1)).count_ones();
    }
    count
}

/// The protocol's mask hash: the first 16 hex digits of SHA-256 over the ⌈n_vocab/32⌉ mask
/// words in little-endian order, bits at or past `n_vocab` cleared.
fn mask_hash(mask: &[u32], n_vocab: usize) -> String {
    let words = n_vocab.div_ceil(32);
    let mut hasher = Sha256::new();
    for (i, &word) in mask[..words].iter().enumerate() {
        let valid_bits = (n_vocab - i * 32).min(32);
        let word = if valid_bits == 32 {
            word
        } else {
            word & ((1u32 << valid_bits) - 1)
        };
        hasher.update(word.to_le_bytes());
    }
    let digest = hasher.finalize();
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Protocol lines on stdout.
struct Output<W: Write>(W);

impl<W: Write> Output<W> {
    fn line(&mut self, value: &Value) -> Result<(), String> {
        writeln!(self.0, "{value}").map_err(|e| format!("stdout: {e}"))
    }

    fn step_error(&mut self, sample: usize, step: usize, message: &str) -> Result<(), String> {
        self.line(&json!({
            "type": "error", "sample": sample, "message": format!("step {step}: {message}"),
        }))
    }

    /// A request-level failure: an error line for the harness, the message on stderr, exit 2.
    fn fail(&mut self, message: &str) -> Result<ExitCode, String> {
        self.line(&json!({"type": "error", "message": message}))?;
        eprintln!("sieve bench: {message}");
        Ok(ExitCode::from(2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_ignores_bits_past_the_vocabulary() {
        let mask = [u32::MAX, 0b1111];
        assert_eq!(count_allowed(&mask, 34), 34);
        assert_eq!(count_allowed(&mask, 33), 33);
        assert_eq!(count_allowed(&mask, 64), 36);
    }

    #[test]
    fn hash_matches_the_protocol_definition() {
        // sha256 of 8 zero bytes (two zero words) begins af5570f5a1810b7a.
        assert_eq!(mask_hash(&[0, 0], 64), "af5570f5a1810b7a");
        // Bits past n_vocab do not change the hash.
        assert_eq!(mask_hash(&[0, 0b100], 34), mask_hash(&[0, 0], 34));
        assert_ne!(mask_hash(&[0, 0b10], 34), mask_hash(&[0, 0], 34));
    }

    #[test]
    fn membership_reads_the_right_bit() {
        let mask = [0, 1 << 5];
        assert!(is_set(&mask, 37));
        assert!(!is_set(&mask, 36));
        assert!(!is_set(&mask, 1000));
    }
}
