//! Options and the shape of the grammar: named snapshots of the IR's text form.

use sieve_ir::reference::Recognizer;
use sieve_regex::{compile, Options};

fn ir(name: &str, pattern: &str) {
    insta::assert_snapshot!(name, crate::compile(pattern).to_string());
}

#[test]
fn ir_shapes() {
    ir("ir_literal_and_class", "ab[0-9]+");
    ir("ir_greek_range", "[α-ω]+");
    ir("ir_case_insensitive", "(?i)straße");
    ir("ir_counted_repetitions", "a{2,5}(ab){3}x{0,}y{4,}");
    ir("ir_anchors_dropped", "^a|b$");
    ir("ir_dot", ".");
    ir("ir_dot_all", "(?s).");
    ir("ir_bytes", r"(?-u)[\x80-\xff]\xfe.");
    // The token marker is in no text: a literal holding it matches nothing.
    assert!(sieve_regex::compile(r"(?-u)\xff", &Default::default()).is_err());
    ir("ir_shared_class", r"\pL+ \pL+");
    ir("ir_empty", "");
}

#[test]
fn rule_name_is_used_for_the_root_and_shared_classes() {
    let options = Options {
        rule_name: "word".to_owned(),
        ..Options::default()
    };
    let grammar = compile(r"\p{Greek}+-\p{Greek}+", &options).unwrap();
    let names: Vec<_> = grammar.rules().iter().map(|r| r.name()).collect();
    assert_eq!(names, ["word", "word_class"]);
    assert_eq!(grammar.rule(grammar.root()).name(), "word");
    let r = Recognizer::new(&grammar).unwrap();
    assert!(r.accepts("αβ-γ".as_bytes()));
}

#[test]
fn default_options_are_documented_values() {
    let options = Options::default();
    assert_eq!(options.rule_name, "root");
    assert!(options.extensions);
    assert_eq!(options.limits.max_pattern_len, 65_536);
    assert_eq!(options.limits.nest_limit, 128);
    assert_eq!(options.limits.max_repeat, 10_000);
    assert_eq!(options.limits.max_grammar_size, 1_000_000);
    assert_eq!(options.limits.max_extension_text, 16_384);
}

#[test]
fn large_nested_repetitions_stay_unexpanded() {
    let grammar = crate::compile("(a{1000}){1000}");
    assert_eq!(
        grammar.to_string(),
        "# root: root\nroot ::= (\"a\"{1000}){1000}\n"
    );
    assert!(grammar.size() < 10);
}

#[test]
fn big_unicode_classes_fit_the_default_limits() {
    for pattern in [r"(?i)\w", r"\p{L}\p{N}\p{M}", r"[\s\S]", r"\W", r"(?i)[^a]"] {
        let grammar = crate::compile(pattern);
        assert!(grammar.size() < 20_000, "{pattern}: {}", grammar.size());
    }
}
