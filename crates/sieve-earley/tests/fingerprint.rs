//! The fingerprint contract of `sieve_backend::Backend::fingerprint`: states with equal
//! fingerprints — two states of one grammar, or states of two grammars — have equal bare
//! classifications against the same trie. Checked on every scannable state of every shipped
//! grammar and of the JSON Schema test suite's schemas, against one vocabulary.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use sieve_backend::{Backend, Classification, Fingerprint, Key};
use sieve_earley::{Config, EarleyGrammar};
use sieve_ir::reference::Recognizer;
use sieve_ir::Grammar;
use sieve_testkit::{compile_file, grammar_files};
use sieve_vocab::TokenTrie;

/// The shipped grammars and the schemas of the JSON Schema test suite that compile.
fn corpus() -> Vec<(String, Grammar)> {
    let mut grammars: Vec<(String, Grammar)> = grammar_files()
        .into_iter()
        .map(|path| (path.display().to_string(), compile_file(&path)))
        .collect();
    let fixtures =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../sieve-jsonschema/tests/fixtures");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&fixtures)
        .expect("the JSON Schema fixtures are readable")
        .map(|entry| entry.expect("readable entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable fixture");
        let groups: Vec<serde_json::Value> = serde_json::from_str(&text).expect("fixture JSON");
        for (i, group) in groups.iter().enumerate() {
            let options = sieve_jsonschema::Options::default();
            if let Ok(compiled) = sieve_jsonschema::compile(&group["schema"], &options) {
                grammars.push((format!("{} #{i}", path.display()), compiled.grammar));
            }
        }
    }
    grammars
}

fn earley(grammar: &Grammar) -> Arc<EarleyGrammar> {
    let normalized = sieve_normalize::normalize(grammar, &sieve_normalize::Config::default())
        .expect("normalises");
    let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
        .build(&normalized)
        .expect("automata build");
    let root_nullable = Recognizer::new(&normalized)
        .expect("small bounds")
        .accepts(b"");
    Arc::new(EarleyGrammar::new(&fsms, root_nullable, Config::default()))
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
        let g = earley(grammar);
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
