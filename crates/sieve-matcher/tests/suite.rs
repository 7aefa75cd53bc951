//! Matcher tests: masks against brute force at every step of random walks over every shipped
//! grammar (with rollbacks), against the reference recogniser, and the API's error contract.

use std::path::PathBuf;
use std::sync::Arc;

use sieve_ir::{reference::Recognizer, Grammar};
use sieve_matcher::{CompiledGrammar, Matcher, MatcherError, Options, Tokenizer};
use sieve_testkit::{
    compile_file, grammar_files, grammars_dir, greedy_tokenize, schema_suite_grammars,
};
use sieve_vocab::Vocabulary;

mod common;
use common::{compile, mask_of};

/// A small vocabulary for `samples`: every single byte, the substrings of length 2 to 5 of
/// the samples (so tokens cross rule boundaries), at most 1,500 tokens, and `</s>` as EOS.
fn synthetic_vocab(samples: &[Vec<u8>]) -> Vocabulary {
    let samples: Vec<&[u8]> = samples.iter().map(Vec::as_slice).collect();
    sieve_testkit::substring_vocabulary(&samples, 5, Some(1500))
}

/// The brute-force mask: every token fed on its own to the recogniser.
fn oracle_mask(matcher: &mut Matcher) -> Vec<u32> {
    let compiled = matcher.compiled().clone();
    let vocab = compiled.vocabulary();
    let mut mask = vec![0u32; compiled.bitmask_words()];
    for id in 0..vocab.n_vocab() as u32 {
        if matcher.validate_tokens(&[id]).expect("no limit") == 1 {
            mask[id as usize / 32] |= 1 << (id % 32);
        }
    }
    mask
}

fn describe(compiled: &CompiledGrammar, a: &[u32], b: &[u32]) -> String {
    let only = |x: &[u32], y: &[u32]| -> Vec<String> {
        compiled
            .allowed_tokens(x)
            .into_iter()
            .filter(|t| y[t.index() / 32] & (1 << (t.index() % 32)) == 0)
            .take(5)
            .map(|t| {
                format!(
                    "{}={:?}",
                    t.index(),
                    String::from_utf8_lossy(compiled.vocabulary().bytes(t))
                )
            })
            .collect()
    };
    format!("mask only: {:?}; oracle only: {:?}", only(a, b), only(b, a))
}

/// Walks `tokens` from a fresh matcher, checking the mask against the oracle at every step,
/// rolling back now and then, and finishing with EOS.
fn walk(compiled: &Arc<CompiledGrammar>, tokens: &[u32], label: &str) {
    let mut matcher = Matcher::new(compiled.clone());
    let mut history: Vec<Vec<u32>> = Vec::new();
    let mut step = 0;
    let mut rolled_back_at = 0;
    while step <= tokens.len() {
        let mask = mask_of(&mut matcher);
        let oracle = oracle_mask(&mut matcher);
        assert!(
            mask == oracle,
            "{label}: step {step}: {}",
            describe(compiled, &mask, &oracle)
        );
        if step < history.len() {
            assert_eq!(mask, history[step], "{label}: step {step} after rollback");
        } else {
            history.push(mask.clone());
        }
        if step == tokens.len() {
            break;
        }
        let token = tokens[step];
        assert!(
            mask[token as usize / 32] & (1 << (token % 32)) != 0,
            "{label}: step {step}: sampled token not allowed"
        );
        matcher
            .accept_token(token)
            .expect("allowed token is accepted");
        step += 1;
        // Roll back two steps at every fifth step, then walk forward again.
        if step % 5 == 0 && step > rolled_back_at {
            rolled_back_at = step;
            matcher.rollback(2).expect("two steps to undo");
            step -= 2;
        }
    }
    assert!(
        matcher.can_terminate(),
        "{label}: a sentence must allow EOS"
    );
    let eos = compiled.vocabulary().eos_ids()[0].as_u32();
    matcher.accept_token(eos).expect("EOS accepted");
    assert!(matcher.is_terminated());
    assert_eq!(
        matcher.accept_token(tokens.first().copied().unwrap_or(eos)),
        Err(MatcherError::Terminated)
    );
    assert!(mask_of(&mut matcher).iter().all(|&w| w == 0));
    matcher.rollback(1).expect("EOS can be undone");
    assert!(matcher.can_terminate() && !matcher.is_terminated());
}

/// Up to `count` sampled sentences of at most 100 bytes (drawing more seeds if needed).
fn samples(grammar: &Grammar, count: usize) -> Vec<Vec<u8>> {
    let recognizer = Recognizer::new(grammar).expect("small bounds");
    (0..20 * count as u64)
        .filter_map(|seed| recognizer.sample(seed, 6))
        .filter(|s| s.len() <= 100)
        .take(count)
        .collect()
}

#[test]
fn masks_equal_brute_force_on_every_grammar_with_a_synthetic_vocabulary() {
    let files = grammar_files();
    assert!(files.len() >= 10);
    for path in files {
        let grammar = compile_file(&path);
        let sentences = samples(&grammar, 6);
        assert!(!sentences.is_empty(), "{}: no samples", path.display());
        let vocab = Arc::new(synthetic_vocab(&sentences));
        let compiled = compile(&grammar, vocab.clone());
        for (i, sentence) in sentences.iter().enumerate().take(3) {
            walk(
                &compiled,
                &greedy_tokenize(&vocab, sentence),
                &format!("{} #{i}", path.display()),
            );
        }
    }
}

/// The grammars of the JSON Schema test suite's schemas (those sieve compiles), then every
/// shipped grammar: many rules in common (strings, numbers, objects) under different names
/// and in different enclosing rules.
fn shared_store_corpus() -> Vec<(String, Grammar)> {
    let mut grammars = schema_suite_grammars();
    assert!(
        grammars.len() >= 100,
        "only {} schemas compile",
        grammars.len()
    );
    for path in grammar_files() {
        grammars.push((path.display().to_string(), compile_file(&path)));
    }
    grammars
}

/// Every grammar of [`shared_store_corpus`] compiled against one tokenizer, so each finds in
/// the shared store the classifications of the grammars before it whose states have the same
/// fingerprint (the same residual automaton and FOLLOW): the masks stay the brute-force ones.
#[test]
fn masks_equal_brute_force_when_grammars_share_one_store() {
    let grammars: Vec<(String, Grammar, Vec<Vec<u8>>)> = shared_store_corpus()
        .into_iter()
        .map(|(label, grammar)| {
            let sentences = samples(&grammar, 1);
            (label, grammar, sentences)
        })
        .collect();
    let all: Vec<Vec<u8>> = grammars
        .iter()
        .flat_map(|(_, _, sentences)| sentences.iter().cloned())
        .collect();
    let vocab = Arc::new(synthetic_vocab(&all));
    let tokenizer = Arc::new(Tokenizer::new(vocab.clone()));
    for (label, grammar, sentences) in &grammars {
        let compiled = common::compile_sharing(grammar, &tokenizer, true);
        for sentence in sentences {
            let label = format!("{label} (shared store)");
            walk(&compiled, &greedy_tokenize(&vocab, sentence), &label);
        }
    }
    let stats = tokenizer.store_stats();
    assert!(
        stats.hits >= 50,
        "the grammars reuse few classifications: {stats:?}"
    );
}

#[test]
fn masks_equal_brute_force_with_the_embedded_gpt2_vocabulary() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    for name in [
        "llama.cpp/json.gbnf",
        "llama.cpp/arithmetic.gbnf",
        "regex/iso-date.regex",
    ] {
        let path = grammars_dir().join(name);
        let grammar = compile_file(&path);
        let compiled = compile(&grammar, vocab.clone());
        let sentence = samples(&grammar, 3).into_iter().next().expect("a sample");
        let tokens: Vec<u32> = greedy_tokenize(&vocab, &sentence)
            .into_iter()
            .take(12)
            .collect();
        // Walk a prefix: check every step, without requiring EOS at the end.
        let mut matcher = Matcher::new(compiled.clone());
        for (step, &token) in tokens.iter().enumerate() {
            let mask = mask_of(&mut matcher);
            let oracle = oracle_mask(&mut matcher);
            assert!(
                mask == oracle,
                "{name}: step {step}: {}",
                describe(&compiled, &mask, &oracle)
            );
            matcher.accept_token(token).expect("sampled token allowed");
        }
    }
}

#[test]
fn masks_stay_exact_when_the_cache_budget_is_spent() {
    // A budget of zero keeps nothing: every state is classified afresh at every mask.
    for name in ["llama.cpp/json.gbnf", "ebnf/json-right-recursive.ebnf"] {
        let path = grammars_dir().join(name);
        let grammar = compile_file(&path);
        let sentences = samples(&grammar, 2);
        let vocab = Arc::new(synthetic_vocab(&sentences));
        let options = Options {
            max_cache_bytes: 0,
            ..Options::default()
        };
        let tokenizer = Arc::new(Tokenizer::new(vocab.clone()));
        let compiled =
            Arc::new(CompiledGrammar::new(&grammar, tokenizer, &options).expect("compiles"));
        for sentence in &sentences {
            walk(&compiled, &greedy_tokenize(&vocab, sentence), name);
        }
    }
}

/// The shared corpus folder: `$SIEVE_SHARED`, else `../shared` beside the repository.
fn shared_dir() -> PathBuf {
    std::env::var_os("SIEVE_SHARED")
        .map_or_else(|| grammars_dir().join("../../shared"), PathBuf::from)
}

#[test]
#[ignore = "needs ../shared/tokenizers (or $SIEVE_SHARED); run by cargo xtask corpus"]
fn masks_equal_brute_force_on_every_grammar_with_o200k_base() {
    let manifest = shared_dir().join("tokenizers/manifest.json");
    let vocab = Arc::new(
        sieve_vocab::manifest::load_named(&manifest, "o200k_base")
            .unwrap_or_else(|e| panic!("{}: {e}", manifest.display())),
    );
    let tokenizer = Arc::new(Tokenizer::new(vocab.clone()));
    let files = grammar_files();
    // The grammars on the cores: the oracle costs 200k checks a step.
    let walked = sieve_testkit::sum_in_parallel(&files, |path| {
        let grammar = compile_file(path);
        let compiled = Arc::new(
            CompiledGrammar::new(&grammar, tokenizer.clone(), &Options::default())
                .expect("compiles"),
        );
        // One sentence per grammar keeps CI's budget.
        let sentences = samples(&grammar, 1);
        assert!(!sentences.is_empty(), "{}: no samples", path.display());
        for (i, sentence) in sentences.iter().enumerate() {
            walk(
                &compiled,
                &greedy_tokenize(&vocab, sentence),
                &format!("o200k_base {} #{i}", path.display()),
            );
        }
        1
    });
    assert_eq!(walked, files.len());
}

/// Independent of the Earley recogniser: a token is allowed iff the reference recogniser says
/// output + token is a viable prefix (the shipped grammars have no infinite-only rules).
#[test]
fn masks_agree_with_the_reference_recogniser() {
    for path in grammar_files() {
        let grammar = compile_file(&path);
        let recognizer = Recognizer::new(&grammar).expect("small bounds");
        let sentences = samples(&grammar, 4);
        assert!(
            !sentences.is_empty(),
            "{}: no short samples",
            path.display()
        );
        let vocab = Arc::new(synthetic_vocab(&sentences));
        let compiled = compile(&grammar, vocab.clone());
        let sentence = &sentences[0];
        let tokens = greedy_tokenize(&vocab, sentence);
        let mut matcher = Matcher::new(compiled.clone());
        let mut output = Vec::new();
        for (step, &token) in tokens.iter().enumerate().take(4) {
            let mask = mask_of(&mut matcher);
            for id in (0..vocab.n_vocab() as u32).step_by(3) {
                let t = vocab.token(id).expect("in range");
                if vocab.is_special(t) {
                    continue;
                }
                let mut candidate = output.clone();
                candidate.extend_from_slice(vocab.bytes(t));
                let expected = recognizer.accepts_prefix(&candidate);
                let got = mask[id as usize / 32] & (1 << (id % 32)) != 0;
                assert_eq!(
                    got,
                    expected,
                    "{}: step {step}, token {:?}",
                    path.display(),
                    String::from_utf8_lossy(vocab.bytes(t))
                );
            }
            assert_eq!(
                matcher.can_terminate(),
                recognizer.accepts(&output),
                "{}: step {step}",
                path.display()
            );
            matcher.accept_token(token).expect("allowed");
            output.extend_from_slice(vocab.bytes(vocab.token(token).expect("in range")));
        }
    }
}

fn yes_no() -> (Arc<CompiledGrammar>, Vocabulary) {
    let grammar = sieve_gbnf::compile(
        "root ::= \"yes\" | \"no\" | \"maybe\" [0-9]",
        &Default::default(),
    )
    .unwrap();
    let vocab = synthetic_vocab(&[b"yes".to_vec(), b"no".to_vec(), b"maybe7".to_vec()]);
    let compiled = Arc::new(
        CompiledGrammar::new(
            &grammar,
            Arc::new(Tokenizer::new(Arc::new(vocab.clone()))),
            &Options::default(),
        )
        .unwrap(),
    );
    (compiled, vocab)
}

fn id_of(vocab: &Vocabulary, bytes: &[u8]) -> u32 {
    (0..vocab.n_vocab() as u32)
        .find(|&i| {
            vocab
                .token(i)
                .is_some_and(|t| !vocab.is_special(t) && vocab.bytes(t) == bytes)
        })
        .expect("token exists")
}

#[test]
fn errors_leave_the_matcher_unchanged() {
    let (compiled, vocab) = yes_no();
    let mut matcher = Matcher::new(compiled.clone());
    let before = mask_of(&mut matcher);
    let n_vocab = vocab.n_vocab();
    assert_eq!(
        matcher.accept_token(n_vocab as u32),
        Err(MatcherError::UnknownToken {
            id: n_vocab as u32,
            n_vocab
        })
    );
    assert!(matches!(
        matcher.accept_token(id_of(&vocab, b"x")),
        Err(MatcherError::TokenNotAllowed { offset: 0, .. })
    ));
    let eos = vocab.eos_ids()[0].as_u32();
    assert_eq!(
        matcher.accept_token(eos),
        Err(MatcherError::SpecialNotAllowed { id: eos })
    );
    assert_eq!(
        matcher.accept_bytes(b"yex"),
        Err(MatcherError::BytesRejected { offset: 2 })
    );
    assert_eq!(
        matcher.rollback(1),
        Err(MatcherError::RollbackTooFar {
            requested: 1,
            available: 0
        })
    );
    let mut short = vec![0u32; 1];
    assert!(matches!(
        matcher.fill_next_token_bitmask(&mut short),
        Err(MatcherError::BitmaskTooSmall { .. })
    ));
    assert_eq!(mask_of(&mut matcher), before);
    assert_eq!(matcher.output_len(), 0);
    assert_eq!(matcher.steps(), 0);
}

#[test]
fn forced_bytes_validate_tokens_and_accept_bytes() {
    let (compiled, vocab) = yes_no();
    let mut matcher = Matcher::new(compiled);
    assert_eq!(matcher.forced_bytes(64).unwrap(), b"");
    matcher.accept_bytes(b"m").unwrap();
    assert_eq!(matcher.forced_bytes(64).unwrap(), b"aybe");
    assert_eq!(matcher.forced_bytes(2).unwrap(), b"ay");
    let draft = [
        id_of(&vocab, b"ay"),
        id_of(&vocab, b"be"),
        id_of(&vocab, b"7"),
        vocab.eos_ids()[0].as_u32(),
        id_of(&vocab, b"y"),
    ];
    assert_eq!(matcher.validate_tokens(&draft).unwrap(), 4);
    assert_eq!(matcher.validate_tokens(&draft[1..]).unwrap(), 0);
    assert_eq!(matcher.output_len(), 1, "validation changes nothing");
    for &t in &draft[..4] {
        matcher.accept_token(t).unwrap();
    }
    assert!(matcher.is_terminated());
    assert_eq!(matcher.steps(), 5);
    matcher.rollback(5).unwrap();
    assert_eq!(matcher.output_len(), 0);
    matcher.accept_token(id_of(&vocab, b"no")).unwrap();
    assert!(matcher.can_terminate());
    matcher.reset();
    assert_eq!((matcher.output_len(), matcher.steps()), (0, 0));
}

#[test]
fn compiled_grammar_is_shared_across_threads() {
    let (compiled, vocab) = yes_no();
    let yes = id_of(&vocab, b"yes");
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let compiled = compiled.clone();
            std::thread::spawn(move || {
                let mut matcher = Matcher::new(compiled);
                matcher.accept_token(yes).unwrap();
                matcher.can_terminate()
            })
        })
        .collect();
    for handle in handles {
        assert!(handle.join().unwrap());
    }
}
