//! The LR backend against the Earley backend and brute force: acceptance of every prefix of
//! sampled sentences and of random strings, masks through the token cache, conflicts named.

use std::sync::Arc;

use proptest::prelude::*;
use sieve_backend::{Backend, Recognizer};
use sieve_earley::EarleyGrammar;
use sieve_ir::{ByteClass, Grammar};
use sieve_lr::{Config, ConflictAction, LrError, LrGrammar};
use sieve_testkit::random::arb_grammar;
use sieve_tokencache::{SharedStore, TokenCache, REFINE_ABOVE};
use sieve_vocab::{TokenTrie, Vocabulary};

/// The LR backend of a grammar, or why it refused it.
type Lr = Result<Arc<LrGrammar>, LrError>;

/// Both backends of `grammar`, or the LR error (`None` when the grammar does not normalise).
fn compile(grammar: &Grammar) -> Option<(Arc<EarleyGrammar>, Lr)> {
    compile_with(grammar, &sieve_normalize::Config::default())
}

/// [`compile`] with `normalize`'s settings.
fn compile_with(
    grammar: &Grammar,
    normalize: &sieve_normalize::Config,
) -> Option<(Arc<EarleyGrammar>, Lr)> {
    let normalized = sieve_normalize::normalize(grammar, normalize).ok()?;
    let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
        .build(&normalized)
        .ok()?;
    let root_nullable = fsms
        .automaton(fsms.root())
        .fsm()
        .is_some_and(|fsm| fsm.is_accepting(fsm.start()));
    let earley = Arc::new(EarleyGrammar::new(
        &fsms,
        root_nullable,
        sieve_earley::Config::default(),
    ));
    let lr = LrGrammar::new(&fsms, root_nullable, Config::default()).map(Arc::new);
    Some((earley, lr))
}

fn gbnf(text: &str) -> Grammar {
    sieve_gbnf::compile(text, &Default::default()).expect("valid grammar")
}

/// Feeds `input` to both recognisers byte by byte, comparing acceptance, `can_finish` and
/// `allowed_bytes` at every prefix; pops everything back at the end and checks the start
/// again.
fn agree(earley: &Arc<EarleyGrammar>, lr: &Arc<LrGrammar>, input: &[u8], what: &str) {
    let mut e = earley.recognizer();
    let mut l = lr.recognizer();
    for (i, &byte) in input.iter().enumerate() {
        assert_eq!(
            e.can_finish(),
            l.can_finish(),
            "{what}: can_finish after {:?}",
            String::from_utf8_lossy(&input[..i])
        );
        assert_eq!(
            e.allowed_bytes(),
            l.allowed_bytes(),
            "{what}: allowed bytes after {:?}",
            String::from_utf8_lossy(&input[..i])
        );
        let ok = e.push_byte(byte).unwrap();
        assert_eq!(
            ok,
            l.push_byte(byte).unwrap(),
            "{what}: byte {i} of {:?}",
            String::from_utf8_lossy(input)
        );
        if !ok {
            break;
        }
    }
    assert_eq!(
        e.can_finish(),
        l.can_finish(),
        "{what}: can_finish at the end"
    );
    let n = l.len();
    l.pop_bytes(n);
    assert_eq!(l.allowed_bytes(), earley.recognizer().allowed_bytes());
}

#[test]
fn small_grammars_agree_with_earley() {
    let cases = [
        r#"root ::= "a" | "b" root"#,
        r#"root ::= "(" root ")" root | """#,
        r#"root ::= s
s ::= a "x" | "b" a "y"
a ::= "b"? "a""#,
        r#"root ::= e
e ::= t ("+" t)*
t ::= f ("*" f)*
f ::= [0-9]+ | "(" e ")""#,
        r#"root ::= "[" (v ("," v)*)? "]"
v ::= [0-9]+ | root"#,
    ];
    for text in cases {
        let grammar = gbnf(text);
        let (earley, lr) = compile(&grammar).expect("normalises");
        let lr = lr.unwrap_or_else(|e| panic!("{text}: {e}"));
        let reference = sieve_ir::reference::Recognizer::new(&grammar).unwrap();
        for seed in 0..20 {
            if let Some(s) = reference.sample(seed, 6) {
                agree(&earley, &lr, &s, text);
                let mut broken = s.clone();
                broken.push(b')');
                agree(&earley, &lr, &broken, text);
            }
        }
    }
}

/// A repetition threshold past every bound in the shipped grammars.
const EXPANDED: u32 = 64;

/// Every shipped grammar (GBNF, EBNF, regex, JSON Schema, Lark): the LR tables or the reason
/// they are refused, printed; the accepted ones agree with Earley on every prefix of sampled
/// sentences.
#[test]
fn shipped_grammars_agree_with_earley_or_are_refused_with_a_reason() {
    let mut accepted = 0;
    let mut expanded_ok = 0;
    let mut report = String::new();
    for path in sieve_testkit::all_grammar_files() {
        let grammar = sieve_testkit::compile_any(&path);
        let name = path
            .strip_prefix(sieve_testkit::grammars_dir())
            .unwrap()
            .display()
            .to_string();
        let Some((earley, lr)) = compile(&grammar) else {
            continue;
        };
        let lr = match lr {
            Ok(lr) => lr,
            Err(e) => {
                assert!(!e.to_string().is_empty());
                report.push_str(&format!("refused {name}: {e}\n"));
                // Counted repetitions past the normaliser's threshold become `x? … x?
                // x{0,k}`, whose split point is free: ambiguous, so never LR(1). Expanded
                // in place they may be.
                let expanded = sieve_normalize::Config {
                    repetition_threshold: EXPANDED,
                    ..Default::default()
                };
                if let Some((earley, Ok(lr))) = compile_with(&grammar, &expanded) {
                    report.push_str(&format!(
                        "  accepted with repetition_threshold {EXPANDED}: {} LR states\n",
                        lr.state_count()
                    ));
                    expanded_ok += 1;
                    let reference = sieve_ir::reference::Recognizer::new(&grammar).unwrap();
                    for seed in 0..8 {
                        if let Some(s) = reference.sample(seed, 6) {
                            agree(&earley, &lr, &s, &name);
                        }
                    }
                }
                continue;
            }
        };
        report.push_str(&format!(
            "accepted {name}: {} LR states, {} table bytes\n",
            lr.state_count(),
            lr.table_bytes()
        ));
        accepted += 1;
        let reference = sieve_ir::reference::Recognizer::new(&grammar).unwrap();
        for seed in 0..8 {
            if let Some(s) = reference.sample(seed, 6) {
                agree(&earley, &lr, &s, &name);
                // The sentence with one byte changed: where both reject, and how far.
                if !s.is_empty() {
                    let mut changed = s.clone();
                    let at = (seed as usize * 7919) % s.len();
                    changed[at] = b"}]\"0a ,"[seed as usize % 7];
                    agree(&earley, &lr, &changed, &name);
                }
            }
        }
    }
    println!("{report}");
    assert!(accepted >= 10, "only {accepted} accepted:\n{report}");
    assert!(expanded_ok >= 1, "none accepted once expanded:\n{report}");
}

/// Deep nesting, so tokens such as `]]],` pop several frames: through contexts, or past them.
const NESTED: &[&str] = &[
    r#"root ::= "[" (root ("," root)*)? "]" | [0-9]+"#,
    r#"root ::= "{" ("\"" [a-z]+ "\":" root ("," "\"" [a-z]+ "\":" root)*)? "}" | "\"" [a-z ]* "\"" | [0-9]+"#,
    r#"root ::= e
e ::= t ("+" t)*
t ::= "(" e ")" | [a-z]+"#,
];

/// At every step of sampled walks over every shipped grammar the backend accepts (at the
/// default repetition threshold, else with repetitions expanded), with
/// GPT-2's vocabulary, the token cache's mask equals feeding every token to the recogniser
/// — with contexts never used, always used and at the default threshold, and with
/// classifications shared across grammars by fingerprint.
#[test]
fn masks_equal_brute_force_on_shipped_grammars() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let trie = TokenTrie::new(&vocab);
    // One store for every grammar: fingerprinted classifications are shared across them.
    let store = Arc::new(SharedStore::new(usize::MAX));
    let mut steps = 0;
    let mut decided = 0usize;
    let mut uncertain = 0usize;
    let shipped = sieve_testkit::all_grammar_files().into_iter().map(|path| {
        (
            path.display().to_string(),
            sieve_testkit::compile_any(&path),
        )
    });
    let nested = NESTED.iter().map(|text| (text.to_string(), gbnf(text)));
    for (path, grammar) in shipped.chain(nested) {
        let expanded = sieve_normalize::Config {
            repetition_threshold: EXPANDED,
            ..Default::default()
        };
        let lr = match compile(&grammar) {
            Some((_, Ok(lr))) => lr,
            _ => match compile_with(&grammar, &expanded) {
                Some((_, Ok(lr))) => lr,
                _ => continue,
            },
        };
        let reference = sieve_ir::reference::Recognizer::new(&grammar).unwrap();
        let n = Backend::state_count(&*lr);
        let caches = [
            TokenCache::with_refinement(n, usize::MAX, usize::MAX),
            TokenCache::with_refinement(n, usize::MAX, 0),
            TokenCache::with_refinement(n, usize::MAX, REFINE_ABOVE),
            TokenCache::new(n, usize::MAX).sharing(store.clone()),
        ];
        for seed in 0..3 {
            let Some(sentence) = reference.sample(seed, 8) else {
                continue;
            };
            let mut recognizer = lr.recognizer();
            let mut at = 0;
            loop {
                let expected = sieve_testkit::brute_force_mask(&mut recognizer, &trie);
                for (c, cache) in caches.iter().enumerate() {
                    let mut mask = vec![0u32; expected.len()];
                    cache
                        .fill_text_tokens(&*lr, &mut recognizer, &trie, &mut mask)
                        .unwrap();
                    assert!(
                        mask == expected,
                        "{path}: seed {seed}, byte {at}, cache {c}"
                    );
                }
                let mut keys = Vec::new();
                recognizer.contexts(recognizer.top_state(), &mut keys);
                let with_context = lr.classify(keys[0], &trie);
                decided += trie.len() - with_context.uncertain_count();
                uncertain += with_context.uncertain_count();
                steps += 1;
                let Some(token) = sieve_testkit::next_token(&trie, &sentence[at..]) else {
                    break;
                };
                for &b in token {
                    assert!(recognizer.push_byte(b).unwrap());
                }
                at += token.len();
            }
        }
    }
    println!(
        "{steps} steps; with contexts {decided} tokens decided, {uncertain} uncertain; store {:?}",
        store.stats()
    );
    assert!(store.stats().hits > 0, "{:?}", store.stats());
    assert!(steps > 100, "only {steps} steps");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Random grammars the backend accepts agree with Earley on random strings and sampled
    /// sentences, prefix by prefix; refused ones are refused with a conflict or a reason.
    #[test]
    fn random_grammars_agree_with_earley(
        grammar in arb_grammar(),
        inputs in prop::collection::vec(prop::collection::vec(prop::sample::select(b"abc".to_vec()), 0..10), 8),
    ) {
        let Some((earley, lr)) = compile(&grammar) else {
            return Ok(());
        };
        let Ok(lr) = lr else {
            return Ok(());
        };
        let reference = sieve_ir::reference::Recognizer::new(&grammar).unwrap();
        let mut all = inputs;
        for seed in 0..4 {
            if let Some(s) = reference.sample(seed, 4) {
                all.push(s);
            }
        }
        for input in &all {
            agree(&earley, &lr, input, &grammar.to_string());
        }
    }
}

/// How many random grammars the backend accepts (the property above is vacuous on refused
/// ones): a fixed sample, so the share is checked, not left to chance.
#[test]
fn a_fair_share_of_random_grammars_is_lr1() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = arb_grammar();
    let (mut lr1, mut total) = (0, 0);
    for _ in 0..300 {
        let grammar = strategy.new_tree(&mut runner).unwrap().current();
        if let Some((_, lr)) = compile(&grammar) {
            total += 1;
            lr1 += usize::from(lr.is_ok());
        }
    }
    println!("{lr1} of {total} random grammars are LR(1)");
    assert!(lr1 * 4 >= total, "only {lr1} of {total}");
}

fn conflict(text: &str) -> sieve_lr::Conflict {
    let (_, lr) = compile(&gbnf(text)).expect("normalises");
    match lr {
        Err(LrError::Conflict(c)) => *c,
        other => panic!("{text}: expected a conflict, got {other:?}"),
    }
}

#[test]
fn ambiguous_concatenation_is_a_named_conflict() {
    let c = conflict(r#"root ::= root root | "a""#);
    assert_eq!(c.lookahead, Some(b'a'));
    assert!(c
        .items
        .iter()
        .any(|i| i.action == ConflictAction::Shift || i.action == ConflictAction::Duplicate));
    assert!(c.items.iter().any(|i| i.rule == "root"));
    assert!(c.prefix.starts_with(b"a"), "{:?}", c.prefix);
}

#[test]
fn dangling_else_is_a_shift_reduce_conflict_on_e() {
    let text = r#"root ::= stmt
stmt ::= "i" stmt | "i" stmt "e" stmt | "x""#;
    let c = conflict(text);
    assert_eq!(c.lookahead, Some(b'e'), "{c:?}");
    let actions: Vec<ConflictAction> = c.items.iter().map(|i| i.action).collect();
    assert!(actions.contains(&ConflictAction::Shift), "{c:?}");
    assert!(actions.contains(&ConflictAction::Reduce), "{c:?}");
    assert!(c.items.iter().all(|i| i.rule == "stmt"), "{c:?}");
    // The prefix reaches the conflict: an `i` `i` `x`, where `e` could close either `i`.
    assert!(
        c.prefix.starts_with(b"ii"),
        "{:?}",
        String::from_utf8_lossy(&c.prefix)
    );
    let message = LrError::Conflict(Box::new(c)).to_string();
    assert!(message.contains("'e'"), "{message}");
}

#[test]
fn construction_limits_are_typed_errors() {
    let grammar = gbnf(r#"root ::= "(" root ")" | [a-z]+"#);
    let normalized =
        sieve_normalize::normalize(&grammar, &sieve_normalize::Config::default()).unwrap();
    let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
        .build(&normalized)
        .unwrap();
    let config = Config {
        max_states: 2,
        ..Config::default()
    };
    match LrGrammar::new(&fsms, false, config) {
        Err(LrError::Limit { name, .. }) => assert_eq!(name, "max_states"),
        other => panic!("{other:?}"),
    }
}

/// Canonical LR(1) tables (no merging) recognise the same language as the merged ones, with
/// more states.
#[test]
fn canonical_and_merged_tables_agree() {
    let text = r#"root ::= "[" (v ("," v)*)? "]" | "{" (k ":" v ("," k ":" v)*)? "}"
v ::= root | [0-9]+ | k
k ::= "\"" [a-z]* "\"""#;
    let grammar = gbnf(text);
    let normalized =
        sieve_normalize::normalize(&grammar, &sieve_normalize::Config::default()).unwrap();
    let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
        .build(&normalized)
        .unwrap();
    let merged = Arc::new(LrGrammar::new(&fsms, false, Config::default()).unwrap());
    let canonical = Arc::new(
        LrGrammar::new(
            &fsms,
            false,
            Config {
                merge: false,
                ..Config::default()
            },
        )
        .unwrap(),
    );
    assert!(
        canonical.state_count() > merged.state_count(),
        "{} vs {}",
        canonical.state_count(),
        merged.state_count()
    );
    let reference = sieve_ir::reference::Recognizer::new(&grammar).unwrap();
    for seed in 0..30 {
        let Some(s) = reference.sample(seed, 6) else {
            continue;
        };
        let (mut a, mut b) = (merged.recognizer(), canonical.recognizer());
        for &byte in s.iter().chain(b"]}") {
            assert_eq!(a.allowed_bytes(), b.allowed_bytes());
            assert_eq!(a.can_finish(), b.can_finish());
            let ok = a.push_byte(byte).unwrap();
            assert_eq!(ok, b.push_byte(byte).unwrap());
            if !ok {
                break;
            }
        }
    }
}

/// A byte that needs more reductions than the fuel allows is a `LimitError`, and the parser
/// is left as it was.
#[test]
fn reduction_fuel_is_a_limit_error() {
    let grammar = gbnf(r#"root ::= "(" root ")" | "x""#);
    let normalized =
        sieve_normalize::normalize(&grammar, &sieve_normalize::Config::default()).unwrap();
    let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
        .build(&normalized)
        .unwrap();
    let config = Config {
        max_reductions_per_byte: 0,
        ..Config::default()
    };
    let lr = Arc::new(LrGrammar::new(&fsms, false, config).unwrap());
    let mut p = lr.recognizer();
    for &b in b"((x" {
        assert!(p.push_byte(b).unwrap());
    }
    let allowed = p.allowed_bytes();
    let error = p.push_byte(b')').unwrap_err();
    assert_eq!(error.limit_name(), "max_reductions_per_byte");
    assert_eq!(p.len(), 3);
    assert_eq!(p.allowed_bytes(), allowed);
    let config = Config {
        max_bytes_history: 2,
        ..Config::default()
    };
    let lr = Arc::new(LrGrammar::new(&fsms, false, config).unwrap());
    let mut p = lr.recognizer();
    assert!(p.push_byte(b'(').unwrap() && p.push_byte(b'(').unwrap());
    assert_eq!(
        p.push_byte(b'x').unwrap_err().limit_name(),
        "max_bytes_history"
    );
}

/// Counted repetitions left by the normaliser are expanded up to `max_counted_states`, and
/// longer ones refused as unsupported, naming the rule.
#[test]
fn counted_rules_expand_or_are_unsupported() {
    // An exact count: the normaliser's split into copies and a counter is then fixed (a
    // range `{20,30}` splits ambiguously, see `docs/backends-lr.md`).
    let grammar = gbnf(
        r#"root ::= "<" item{40} ">"
item ::= "a" | "(" root ")""#,
    );
    let normalized =
        sieve_normalize::normalize(&grammar, &sieve_normalize::Config::default()).unwrap();
    let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
        .build(&normalized)
        .unwrap();
    let counted = fsms
        .rule_ids()
        .filter(|&r| fsms.automaton(r).fsm().is_none())
        .count();
    assert!(counted > 0, "the normaliser keeps a counted rule");
    let (earley, lr) = compile(&grammar).unwrap();
    let lr = lr.unwrap_or_else(|e| panic!("a counted rule within bounds expands: {e}"));
    for n in [39, 40, 41] {
        let mut s = b"<".to_vec();
        s.extend(std::iter::repeat_n(b'a', n));
        s.push(b'>');
        agree(&earley, &lr, &s, "counted");
    }
    let small = Config {
        max_counted_states: 8,
        ..Config::default()
    };
    match LrGrammar::new(&fsms, false, small) {
        Err(LrError::Unsupported { reason, .. }) => {
            assert!(reason.contains("max_counted_states"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

/// Equal fingerprints mean equal bare classifications: every group of keys sharing one, over
/// the scannable states of the shipped grammars the backend accepts (repetitions expanded
/// where needed), classifies alike; and some keys are shared across different grammars.
#[test]
fn equal_fingerprints_classify_alike() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let trie = TokenTrie::new(&vocab);
    let expanded = sieve_normalize::Config {
        repetition_threshold: EXPANDED,
        ..Default::default()
    };
    let mut grammars = Vec::new();
    for path in sieve_testkit::all_grammar_files() {
        let grammar = sieve_testkit::compile_any(&path);
        for config in [sieve_normalize::Config::default(), expanded.clone()] {
            if let Some((_, Ok(lr))) = compile_with(&grammar, &config) {
                if lr.state_count() <= 2000 {
                    grammars.push((path.display().to_string(), lr));
                }
            }
        }
    }
    let mut groups: std::collections::HashMap<_, Vec<(usize, u32)>> = Default::default();
    let mut fingerprinted = 0;
    for (g, (_, lr)) in grammars.iter().enumerate() {
        for s in 0..lr.state_count() as u32 {
            if !lr.is_scannable(s) {
                continue;
            }
            if let Some(f) = lr.fingerprint(s) {
                fingerprinted += 1;
                groups.entry(f).or_default().push((g, s));
            }
        }
    }
    let mut cross = 0;
    for members in groups.values().filter(|m| m.len() > 1) {
        let (g0, s0) = members[0];
        let first = grammars[g0].1.classify(sieve_backend::Key::bare(s0), &trie);
        for &(g, s) in members.iter().skip(1).take(3) {
            let other = grammars[g].1.classify(sieve_backend::Key::bare(s), &trie);
            assert!(
                first == other,
                "{} state {s0} and {} state {s} share a fingerprint but not a classification",
                grammars[g0].0,
                grammars[g].0
            );
        }
        cross += usize::from(
            members
                .iter()
                .any(|&(g, _)| grammars[g].0 != grammars[g0].0),
        );
    }
    println!(
        "{fingerprinted} fingerprinted keys, {} groups, {cross} shared across grammar files",
        groups.len()
    );
    assert!(cross > 0, "no fingerprint is shared across grammars");
}

/// The completion bound descends: at every byte of sampled sentences of the shipped grammars,
/// a bound of 0 is a sentence, and a bound `u > 0` has a single-byte token after which the
/// bound is at most `u - 1`; following the bound's choices reaches a sentence.
#[test]
fn completion_bounds_descend() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let trie = TokenTrie::new(&vocab);
    let expanded = sieve_normalize::Config {
        repetition_threshold: EXPANDED,
        ..Default::default()
    };
    let (mut steps, mut bounded) = (0, 0);
    for path in sieve_testkit::all_grammar_files() {
        let grammar = sieve_testkit::compile_any(&path);
        let lr = match compile(&grammar) {
            Some((_, Ok(lr))) => lr,
            _ => match compile_with(&grammar, &expanded) {
                Some((_, Ok(lr))) => lr,
                _ => continue,
            },
        };
        let table = lr.completion(&trie);
        let reference = sieve_ir::reference::Recognizer::new(&grammar).unwrap();
        for seed in 0..3 {
            let Some(sentence) = reference.sample(seed, 6) else {
                continue;
            };
            let mut p = lr.recognizer();
            for &byte in sentence.iter().take(80) {
                steps += 1;
                if let Some(u) = p.completion_bound_with(&table) {
                    bounded += 1;
                    descend(&mut p, &table, &trie, u, path.display());
                }
                assert!(p.push_byte(byte).unwrap());
            }
        }
    }
    println!("{bounded} of {steps} steps bounded");
    assert!(bounded * 10 >= steps * 9, "{bounded} of {steps}");
}

/// From bound `u`, greedily takes a single-byte token that lowers it, down to a sentence.
fn descend(
    p: &mut sieve_lr::LrParser,
    table: &sieve_lr::LrCompletion,
    trie: &TokenTrie,
    mut u: u32,
    what: impl std::fmt::Display,
) {
    let start = p.len();
    while u > 0 {
        let next = (0..=255u8).find_map(|b| {
            trie.find(&[b])?;
            if !p.push_byte(b).unwrap() {
                return None;
            }
            let after = p.completion_bound_with(table);
            if after.is_some_and(|a| a < u) {
                return after;
            }
            p.pop_bytes(1);
            None
        });
        u = next.unwrap_or_else(|| panic!("{what}: no token lowers the bound {u}"));
    }
    assert!(p.can_finish(), "{what}: bound 0 off a sentence");
    p.pop_bytes(p.len() - start);
}

/// Only bytes that are tokens on their own count: with `)` only inside `))`, a completion
/// that needs one `)` has no bound.
#[test]
fn completion_bounds_use_single_byte_tokens_only() {
    let list = "hex:28\nhex:78\nhex:2929\n";
    let vocab = sieve_vocab::plain::parse(list.as_bytes(), &Default::default()).unwrap();
    let trie = TokenTrie::new(&vocab);
    let grammar = gbnf(r#"root ::= "(" root ")" | "x""#);
    let (_, lr) = compile(&grammar).unwrap();
    let lr = lr.unwrap();
    let table = lr.completion(&trie);
    let mut p = lr.recognizer();
    assert_eq!(p.completion_bound_with(&table), Some(1));
    assert!(p.push_byte(b'(').unwrap());
    assert_eq!(p.completion_bound_with(&table), None);
    let gpt2 = TokenTrie::new(&Vocabulary::embedded_default().clone());
    assert_eq!(p.completion_bound_with(&lr.completion(&gpt2)), Some(2));
}

/// The LR backend of `grammar` normalised with `normalize`, built once per `configs` entry.
fn lr_with_configs(
    grammar: &Grammar,
    normalize: &sieve_normalize::Config,
    configs: &[Config],
) -> Option<Vec<Arc<LrGrammar>>> {
    let normalized = sieve_normalize::normalize(grammar, normalize).ok()?;
    let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
        .build(&normalized)
        .ok()?;
    let root_nullable = fsms
        .automaton(fsms.root())
        .fsm()
        .is_some_and(|fsm| fsm.is_accepting(fsm.start()));
    configs
        .iter()
        .map(|c| {
            LrGrammar::new(&fsms, root_nullable, c.clone())
                .ok()
                .map(Arc::new)
        })
        .collect()
}

/// Everything a parser shows: acceptance so far, the allowed bytes and the classification key
/// (top state, the frames below and where their items started).
fn observe(parser: &sieve_lr::LrParser) -> (usize, bool, ByteClass, Vec<sieve_backend::Key>) {
    let mut keys = Vec::new();
    parser.contexts(parser.top_state(), &mut keys);
    (
        parser.len(),
        parser.can_finish(),
        parser.allowed_bytes(),
        keys,
    )
}

/// Aggregated edges (default table, a table of two edges) against the step-by-step path
/// (`max_edges: 0`) on every prefix of sampled sentences, with one byte changed, and popped
/// back, over every shipped grammar the backend accepts (expanded repetitions when needed).
#[test]
fn aggregated_edges_equal_the_step_by_step_path_on_shipped_grammars() {
    let configs = [
        Config {
            max_edges: 0,
            ..Config::default()
        },
        Config::default(),
        Config {
            max_edges: 2,
            ..Config::default()
        },
    ];
    let expanded = sieve_normalize::Config {
        repetition_threshold: EXPANDED,
        ..Default::default()
    };
    let mut grammars = 0;
    let mut bytes = 0;
    let mut edges = 0;
    for path in sieve_testkit::all_grammar_files() {
        let grammar = sieve_testkit::compile_any(&path);
        let Some(lrs) = lr_with_configs(&grammar, &Default::default(), &configs)
            .or_else(|| lr_with_configs(&grammar, &expanded, &configs))
        else {
            continue;
        };
        grammars += 1;
        let reference = sieve_ir::reference::Recognizer::new(&grammar).unwrap();
        for seed in 0..8u64 {
            let Some(mut sentence) = reference.sample(seed, 8) else {
                continue;
            };
            for round in 0..2 {
                if round == 1 && !sentence.is_empty() {
                    let at = (seed as usize * 7919) % sentence.len();
                    sentence[at] = b"}]\"0a ,"[seed as usize % 7];
                }
                let mut parsers: Vec<_> = lrs.iter().map(|lr| lr.recognizer()).collect();
                for (at, &b) in sentence.iter().enumerate() {
                    let pushed: Vec<bool> = parsers
                        .iter_mut()
                        .map(|p| p.push_byte(b).unwrap())
                        .collect();
                    let seen: Vec<_> = parsers.iter().map(observe).collect();
                    for (c, (p, s)) in pushed.iter().zip(&seen).enumerate().skip(1) {
                        assert_eq!(
                            (p, s),
                            (&pushed[0], &seen[0]),
                            "{}: seed {seed}, byte {at}, config {c}",
                            path.display()
                        );
                    }
                    bytes += 1;
                    if !pushed[0] {
                        break;
                    }
                }
                let n = parsers[0].len();
                for p in &mut parsers {
                    p.pop_bytes(n / 2);
                }
                let seen: Vec<_> = parsers.iter().map(observe).collect();
                assert!(seen.iter().all(|s| *s == seen[0]), "{}", path.display());
            }
        }
        assert_eq!(lrs[0].edge_count(), 0);
        assert!(lrs[2].edge_count() <= 2);
        edges += lrs[1].edge_count();
    }
    println!("{grammars} grammars, {bytes} bytes, {edges} edges");
    assert!(grammars >= 10, "only {grammars} grammars");
    assert!(edges >= 20, "only {edges} edges");
    assert!(bytes > 1000, "only {bytes} bytes");
}

/// A derivation `A ⇒⁺ A` would let a reduction chain revisit a configuration forever; such a
/// grammar is ambiguous, so either the build refuses it with a conflict or normalisation has
/// removed the cycle and every byte takes a bounded chain (no fuel error, agreement with
/// Earley).
#[test]
fn cyclic_grammars_are_refused_or_made_acyclic() {
    for text in [
        r#"root ::= a
a ::= b | "x"
b ::= a | "y""#,
        r#"root ::= "(" a ")"
a ::= a | "x" a | "y""#,
        r#"root ::= a a
a ::= b | "x"
b ::= a "" | "y""#,
    ] {
        let (earley, lr) = compile(&gbnf(text)).expect("normalises");
        match lr {
            Err(LrError::Conflict(_)) => {}
            Ok(lr) => {
                println!("{text}: accepted (cycle normalised away)");
                for input in [&b"x"[..], b"y", b"(xxy)", b"xy", b"(y)"] {
                    agree(&earley, &lr, input, text);
                }
            }
            Err(e) => panic!("{text}: {e}"),
        }
    }
}
