//! Every grammar in the repository's corpus parses, lowers and round-trips.

use crate::{assert_round_trip, good_grammars, options_for};

#[test]
fn corpus_is_not_empty() {
    let names: Vec<String> = good_grammars().into_iter().map(|(n, _)| n).collect();
    assert!(names.len() >= 10, "{names:?}");
    assert!(names.contains(&"grammars/llama.cpp/json.gbnf".to_owned()));
}

#[test]
fn every_grammar_parses_lowers_and_round_trips() {
    for (name, text) in good_grammars() {
        let ast = assert_round_trip(&name, &text);
        let options = options_for(&text);
        let ir = sieve_gbnf::lower(&ast, &options).unwrap_or_else(|e| {
            panic!(
                "{name} lowers:\n{}",
                e.render(&sieve_diagnostics::SourceFile::new(&name, &text))
            )
        });
        // IR rule order is definition order, then the rules built-in calls add.
        let ast_names: Vec<&str> = ast.rules.iter().map(|r| r.name.as_str()).collect();
        let ir_names: Vec<&str> = ir.rules().iter().map(|r| r.name()).collect();
        assert_eq!(ast_names, ir_names[..ast_names.len()], "{name}");
        assert_eq!(ir.rule(ir.root()).name(), options.root, "{name}");
        // compile is parse + lower.
        assert_eq!(sieve_gbnf::compile(&text, &options).unwrap(), ir, "{name}");
    }
}

#[test]
fn ir_dumps_of_the_llama_cpp_grammars() {
    for stem in ["arithmetic", "json", "list"] {
        let name = format!("grammars/llama.cpp/{stem}.gbnf");
        let text = std::fs::read_to_string(crate::repo_root().join(&name)).unwrap();
        let ir = sieve_gbnf::compile(&text, &sieve_gbnf::Options::default()).unwrap();
        insta::assert_snapshot!(format!("ir-{stem}"), ir.to_string());
    }
}
