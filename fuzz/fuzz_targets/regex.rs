//! Fuzz target for the regex front-end: any text as a pattern.
//!
//! Compiling must never panic or hang, under the default limits and under tight ones (so the
//! limit paths are exercised too); a grammar that comes out must respect the grammar-size limit
//! and print, and an error must print. Nested counted repetitions such as `(a{1000}){1000}`
//! stay unexpanded, so memory stays bounded by the pattern and the limits.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sieve_regex::{compile, Limits, Options};

fuzz_target!(|pattern: &str| {
    let tight = Options {
        rule_name: "r".to_owned(),
        limits: Limits {
            max_pattern_len: 256,
            nest_limit: 8,
            max_repeat: 50,
            max_grammar_size: 2_000,
        },
    };
    for options in [Options::default(), tight] {
        match compile(pattern, &options) {
            Ok(grammar) => {
                // The limit counts the nodes the front-end builds; the grammar holds no more.
                assert!(
                    grammar.size() <= options.limits.max_grammar_size,
                    "{pattern:?}: {} nodes",
                    grammar.size()
                );
                let _ = grammar.to_string();
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
});
