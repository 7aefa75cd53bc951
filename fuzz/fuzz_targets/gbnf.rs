//! Fuzz target for the GBNF/EBNF front-end: any text.
//!
//! Parsing must never panic; when it succeeds, printing and re-parsing must give an equal AST
//! (spans aside), printing must be a fixed point, and lowering must not panic.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let Ok(ast) = sieve_gbnf::parse(text) else {
        return;
    };
    let printed = ast.to_string();
    let again = match sieve_gbnf::parse(&printed) {
        Ok(again) => again,
        Err(e) => panic!("printed grammar does not parse: {e}\n{printed}"),
    };
    assert_eq!(ast.without_spans(), again.without_spans(), "{printed}");
    assert_eq!(again.to_string(), printed);
    let _ = sieve_gbnf::lower(&ast, &sieve_gbnf::Options::default());
});
