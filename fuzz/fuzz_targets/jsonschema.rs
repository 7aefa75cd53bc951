//! Fuzz target for the JSON Schema front-end: any bytes that parse as JSON, as a schema.
//!
//! Compiling must never panic or hang, under the default options and under tight limits and
//! the other layouts (lenient, any property order, flexible whitespace, canonical escapes),
//! so the limit and refusal paths are exercised too. A grammar that comes out must go through
//! normalisation and the automata without panicking (limit errors are fine), and every error
//! must print. Seed it with `crates/sieve-jsonschema/tests/fixtures` and use
//! `fuzz/jsonschema.dict` for the keywords.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sieve_jsonschema::{compile, Escapes, Limits, Options, PropertyOrder, Whitespace};

fuzz_target!(|data: &[u8]| {
    let Ok(schema) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let tight = Options {
        lenient: true,
        property_order: PropertyOrder::Any,
        whitespace: Whitespace::Flexible,
        escapes: Escapes::Canonical,
        limits: Limits {
            max_depth: 16,
            max_rules: 500,
            fuel: 20_000,
        },
        ..Options::default()
    };
    for options in [Options::default(), tight] {
        match compile(&schema, &options) {
            Ok(compiled) => {
                let _ = compiled.grammar.to_string();
                let config = sieve_normalize::Config {
                    max_rules: 5_000,
                    max_size: 200_000,
                    ..sieve_normalize::Config::default()
                };
                match sieve_normalize::normalize(&compiled.grammar, &config) {
                    Ok(normalized) => {
                        let fsm = sieve_fsm::Config::new().state_limit(200_000);
                        if let Err(e) = sieve_fsm::Builder::new(fsm).build(&normalized) {
                            let _ = e.to_string();
                        }
                    }
                    Err(e) => {
                        let _ = e.to_string();
                    }
                }
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
});
