//! `sieve match` and `sieve generate`: running a constraint on text and on a vocabulary.

use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use sieve_matcher::{ByteMatcher, CompileError, CompiledGrammar, Matcher, Tokenizer};
use sieve_vocab::Vocabulary;

use crate::pipeline::{self, Constraint, PipelineOptions};

/// Compiles the constraint; on a bad grammar prints the diagnostics and returns exit code 2.
fn compile(
    constraint: &Constraint<'_>,
    options: &PipelineOptions,
) -> Result<Result<sieve_ir::Grammar, ExitCode>, String> {
    Ok(
        pipeline::constraint(constraint, options)?.map_err(|diagnostics| {
            for block in diagnostics.0 {
                eprint!("{block}");
            }
            ExitCode::from(2)
        }),
    )
}

/// `sieve match`: exit 0 when the whole input is a sentence, 1 with the offset of the first
/// byte that cannot be extended (or of the end, when the input stops too early), 2 on a bad
/// grammar.
pub fn run_match(
    constraint: &Constraint<'_>,
    input: Option<&Path>,
    text: Option<&str>,
    options: &PipelineOptions,
) -> Result<ExitCode, String> {
    let grammar = match compile(constraint, options)? {
        Ok(grammar) => grammar,
        Err(code) => return Ok(code),
    };
    let bytes = match (text, input) {
        (Some(text), _) => text.as_bytes().to_vec(),
        (None, Some(path)) if path != Path::new("-") => {
            std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?
        }
        _ => {
            let mut buffer = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buffer)
                .map_err(|e| format!("stdin: {e}"))?;
            buffer
        }
    };
    let mut matcher = ByteMatcher::new(&grammar, &options.compile).map_err(|e| match e {
        CompileError::Normalize(e) => format!("normalisation: {e}"),
        CompileError::Automata(e) => format!("automata: {e}"),
        e => e.to_string(),
    })?;
    for (offset, &byte) in bytes.iter().enumerate() {
        match matcher.push_byte(byte) {
            Ok(true) => {}
            Ok(false) => {
                println!("rejected at byte {offset}");
                return Ok(ExitCode::from(1));
            }
            Err(limit) => return Err(format!("at byte {offset}: {limit}")),
        }
    }
    if matcher.can_finish() {
        println!("accepted");
        Ok(ExitCode::SUCCESS)
    } else {
        println!(
            "rejected at byte {}: the input ends before the grammar does",
            bytes.len()
        );
        Ok(ExitCode::from(1))
    }
}

/// Loads `--tokenizer FILE` by extension, or the embedded default vocabulary.
fn vocabulary(path: Option<&Path>) -> Result<Vocabulary, String> {
    let Some(path) = path else {
        return Ok(Vocabulary::embedded_default().clone());
    };
    let shown = path.display();
    match path.extension().and_then(|e| e.to_str()) {
        Some("json") => sieve_vocab::hf::load(path, &Default::default()),
        Some("tiktoken") => sieve_vocab::tiktoken::load(path, &Default::default()),
        _ => sieve_vocab::plain::load(path, &Default::default()),
    }
    .map_err(|e| format!("{shown}: {e}"))
}

/// Settings of `sieve generate`.
pub struct GenerateArgs<'a> {
    /// A tokenizer file, or `None` for the embedded default.
    pub tokenizer: Option<&'a Path>,
    /// The random seed.
    pub seed: u64,
    /// The most tokens to sample (EOS included).
    pub max_tokens: usize,
    /// Whether the matcher keeps a complete output within `max_tokens` (a token budget).
    pub budget: bool,
}

/// `sieve generate`: samples uniformly among the allowed tokens until EOS or the limit; the
/// text on stdout, the token count and mask times on stderr. With `args.budget` the matcher
/// has a token budget of `max_tokens`, so the output ends with EOS complete within it (or the
/// command fails at once, saying the budget is too small).
pub fn generate(
    constraint: &Constraint<'_>,
    args: &GenerateArgs<'_>,
    options: &PipelineOptions,
) -> Result<ExitCode, String> {
    let vocab = Arc::new(vocabulary(args.tokenizer)?);
    let options = &PipelineOptions {
        tokens: sieve_ir::token::SharedNames(vocab.clone()),
        ..options.clone()
    };
    let grammar = match compile(constraint, options)? {
        Ok(grammar) => grammar,
        Err(code) => return Ok(code),
    };
    let tokenizer = Arc::new(Tokenizer::new(vocab));
    let compiled = Arc::new(
        CompiledGrammar::new(&grammar, tokenizer, &options.compile).map_err(|e| e.to_string())?,
    );
    let vocab = compiled.vocabulary().clone();
    let mut matcher = if args.budget {
        let budget = u32::try_from(args.max_tokens).unwrap_or(u32::MAX);
        Matcher::with_budget(compiled.clone(), budget).map_err(|e| e.to_string())?
    } else {
        Matcher::new(compiled.clone())
    };
    let mut mask = vec![0u32; compiled.bitmask_words()];
    let mut rng = SplitMix64(args.seed);
    let mut output = Vec::new();
    let mut mask_us = Vec::new();
    let mut tokens = 0;
    let mut ended = "the token limit";
    while tokens < args.max_tokens {
        let started = Instant::now();
        matcher
            .fill_next_token_bitmask(&mut mask)
            .map_err(|e| e.to_string())?;
        mask_us.push(started.elapsed().as_secs_f64() * 1e6);
        let allowed = compiled.allowed_tokens(&mask);
        if allowed.is_empty() {
            ended = "no token is allowed";
            break;
        }
        let token = allowed[rng.below(allowed.len())];
        matcher
            .accept_token(token.as_u32())
            .map_err(|e| e.to_string())?;
        tokens += 1;
        if matcher.is_terminated() {
            ended = "EOS";
            break;
        }
        // A special token the grammar takes as a token terminal shows as its name.
        match vocab.special_name(token) {
            Some(name) => output.extend_from_slice(name.as_bytes()),
            None => output.extend_from_slice(vocab.bytes(token)),
        }
    }
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&output)
        .and_then(|()| stdout.write_all(b"\n"))
        .map_err(|e| format!("stdout: {e}"))?;
    mask_us.sort_by(f64::total_cmp);
    let percentile = |p: f64| mask_us[((mask_us.len() - 1) as f64 * p).round() as usize];
    if !mask_us.is_empty() {
        eprintln!(
            "{tokens} tokens (stopped at {ended}); mask time mean {:.1} µs, p50 {:.1} µs, p99 {:.1} µs",
            mask_us.iter().sum::<f64>() / mask_us.len() as f64,
            percentile(0.5),
            percentile(0.99)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A small seeded generator (splitmix64): reproducible samples, no dependency.
struct SplitMix64(u64);

impl SplitMix64 {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}
