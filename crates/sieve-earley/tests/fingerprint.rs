//! The fingerprint contract of `sieve_backend::Backend::fingerprint`: states with equal
//! fingerprints — two states of one grammar, or states of two grammars — have equal bare
//! classifications against the same trie. Checked on every scannable state of every shipped
//! grammar and of the JSON Schema test suite's schemas, against one vocabulary.

use std::collections::HashMap;

use sieve_backend::{Backend, Classification, Fingerprint, Key};
use sieve_ir::reference::Recognizer;
use sieve_ir::Grammar;
use sieve_testkit::{compile_file, grammar_files, schema_suite_grammars};
use sieve_vocab::TokenTrie;

mod common;
use common::compile;

/// The shipped grammars and the schemas of the JSON Schema test suite that compile.
fn corpus() -> Vec<(String, Grammar)> {
    let mut grammars: Vec<(String, Grammar)> = grammar_files()
        .into_iter()
        .map(|path| (path.display().to_string(), compile_file(&path)))
        .collect();
    grammars.extend(schema_suite_grammars());
    grammars
}

#[test]
fn states_with_equal_fingerprints_classify_alike() {
    let grammars = corpus();
    assert!(grammars.len() >= 100, "{} grammars", grammars.len());
    let sentences: Vec<Vec<u8>> = grammars
        .iter()
        .filter_map(|(_, grammar)| {
            let recognizer = Recognizer::new(grammar).expect("small bounds");
            (0..20).find_map(|seed| recognizer.sample(seed, 6).filter(|s| s.len() <= 60))
        })
        .collect();
    let samples: Vec<&[u8]> = sentences.iter().map(Vec::as_slice).collect();
    let trie = TokenTrie::new(&sieve_testkit::substring_vocabulary(
        &samples,
        4,
        Some(1200),
    ));

    let mut seen: HashMap<Fingerprint, (String, u32, Classification)> = HashMap::new();
    let (mut within_grammar, mut across_grammars) = (0, 0);
    for (label, grammar) in &grammars {
        let g = compile(grammar);
        for state in 0..g.state_count() as u32 {
            if !g.is_scannable(state) {
                continue;
            }
            let Some(fingerprint) = g.fingerprint(state) else {
                continue;
            };
            let classification = g.classify(Key::bare(state), &trie);
            match seen.get(&fingerprint) {
                Some((first_label, first_state, first)) => {
                    assert!(
                        *first == classification,
                        "{label} state {state} and {first_label} state {first_state} have one fingerprint but classify differently"
                    );
                    if first_label == label {
                        within_grammar += 1;
                    } else {
                        across_grammars += 1;
                    }
                }
                None => {
                    seen.insert(fingerprint, (label.clone(), state, classification));
                }
            }
        }
    }
    // The residual hash shares states of different rules of one grammar (a string's contents
    // in two members of one object), and states across grammars.
    assert!(
        within_grammar >= 100,
        "{within_grammar} states shared within a grammar"
    );
    assert!(
        across_grammars >= 1000,
        "{across_grammars} states shared across grammars"
    );
}

/// A state's fingerprint does not depend on which states were fingerprinted before it: the
/// residual hashes kept between calls (and a cycle found from another state) give each state
/// the value a fresh grammar gives it.
#[test]
fn fingerprints_do_not_depend_on_the_order_they_are_asked_in() {
    let mut compared = 0;
    for (label, grammar) in corpus() {
        let (forward, backward) = (compile(&grammar), compile(&grammar));
        let states = 0..forward.state_count() as u32;
        let ahead: Vec<_> = states.clone().map(|s| forward.fingerprint(s)).collect();
        let behind: Vec<_> = states
            .clone()
            .rev()
            .map(|s| backward.fingerprint(s))
            .collect();
        for (state, (a, b)) in ahead.iter().zip(behind.iter().rev()).enumerate() {
            assert_eq!(a, b, "{label} state {state}");
        }
        // One state asked first on a fresh grammar, every few states.
        for state in states.step_by(7) {
            let fresh = compile(&grammar);
            assert_eq!(
                fresh.fingerprint(state),
                ahead[state as usize],
                "{label} state {state}"
            );
            compared += 1;
        }
    }
    assert!(compared >= 1000, "{compared} states compared");
}
