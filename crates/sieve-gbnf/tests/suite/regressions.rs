//! Inputs that once broke something, or easily could: each is a plain test with a comment
//! saying what it guards. Fuzzing finds are added here.

use sieve_gbnf::{compile, parse, Options};

/// Parsing, printing, re-parsing and lowering must not panic; round-trip must hold.
fn survive(text: &str) {
    if let Ok(ast) = parse(text) {
        let printed = ast.to_string();
        let again = parse(&printed).unwrap_or_else(|e| panic!("{text:?} -> {printed:?}: {e}"));
        assert_eq!(ast.without_spans(), again.without_spans(), "{text:?}");
        let _ = sieve_gbnf::lower(&ast, &Options::default());
    }
    let _ = compile(text, &Options::default());
}

#[test]
fn edge_inputs_do_not_panic() {
    for text in [
        "",
        " ",
        "#",
        "\\",
        "\"",
        "'",
        "[",
        "[^",
        "[\\",
        "\"\\",
        "root ::=",
        "root ::= \"\\",
        "root ::= [\\",
        "root ::= (",
        "root ::= )",
        "root ::= (=",
        "root ::= a (= b",
        "::=",
        "root ::= {",
        "root ::= a{",
        "root ::= a{1",
        "root ::= a{,}",
        "root ::= a{}",
        "root ::= a**",
        "root ::= \"\\x\"",
        "root ::= \"\\u12\"",
        "root ::= \"\\U\"",
        "root ::= [a-]",
        "root ::= [-]",
        "root ::= [^]",
        "root ::= [\\^]",
        "root ::= \"\\UFFFFFFFF\"",
        "root ::= \u{feff}",
        "root ::= ä",
        "ä ::= \"x\"",
        "root ::= a\na ::= root",
        "root ::= a{0}",
        "root ::= a{0,0}",
        "root ::= \"\"*",
        "root ::= ()+",
        "root ::= (|)",
    ] {
        survive(text);
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    // 100,000 nested groups: rejected by the token-level depth check before any recursion.
    let text = format!(
        "root ::= {}\"a\"{}",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let errors = compile(&text, &Options::default()).unwrap_err();
    assert!(matches!(errors.first(), sieve_gbnf::Error::TooDeep { .. }));
    let unbalanced = "(".repeat(100_000);
    assert!(compile(&format!("root ::= {unbalanced}"), &Options::default()).is_err());
}

#[test]
fn long_flat_inputs_are_fine() {
    // Long alternations and sequences build flat vectors, not deep trees.
    let alts = vec!["\"a\""; 50_000].join(" | ");
    compile(&format!("root ::= {alts}"), &Options::default()).unwrap();
    let seq = vec!["[a-z]"; 50_000].join(" ");
    compile(&format!("root ::= {seq}"), &Options::default()).unwrap();
}

#[test]
fn hand_built_deep_ast_is_rejected_by_lower() {
    use sieve_diagnostics::Span;
    use sieve_gbnf::ast::{Expr, ExprKind, Grammar, Rule};
    let mut expr = Expr {
        kind: ExprKind::Literal("a".into()),
        span: Span::default(),
    };
    for _ in 0..5_000 {
        expr = Expr {
            kind: ExprKind::Group(Box::new(expr)),
            span: Span::default(),
        };
    }
    let grammar = Grammar {
        rules: vec![Rule {
            name: "root".into(),
            name_span: Span::default(),
            line: 0,
            body: expr,
            max_tokens: None,
            lookahead: None,
            span: Span::default(),
        }],
        span: Span::default(),
    };
    let errors = sieve_gbnf::lower(&grammar, &Options::default()).unwrap_err();
    assert!(matches!(errors.first(), sieve_gbnf::Error::TooDeep { .. }));
    // Dropping a 5,000-deep tree recurses 5,000 frames; fine on a test thread, and parsing
    // never builds one.
}
