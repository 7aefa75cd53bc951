//! Printing then parsing any canonical AST gives the same AST (up to spans), and lowering
//! never panics on it.

use proptest::prelude::*;
use sieve_diagnostics::Span;
use sieve_gbnf::ast::{
    Builtin, Class, ClassItem, Expr, ExprKind, Grammar, Lookahead, Quantifier, Rule,
};

fn expr(kind: ExprKind) -> Expr {
    Expr {
        kind,
        span: Span::default(),
    }
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("root".to_owned()),
        Just("a".to_owned()),
        Just("b-c".to_owned()),
        "[a-zA-Z_][a-zA-Z0-9_-]{0,6}",
    ]
}

fn any_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => proptest::char::range(' ', '~'),
        1 => any::<char>(),
    ]
}

fn class() -> impl Strategy<Value = Class> {
    let item = (any_char(), any_char(), any::<bool>()).prop_map(|(a, b, range)| {
        let (lo, hi) = if range { (a.min(b), a.max(b)) } else { (a, a) };
        ClassItem {
            lo,
            hi,
            span: Span::default(),
        }
    });
    (any::<bool>(), proptest::collection::vec(item, 0..4))
        .prop_map(|(negated, items)| Class { negated, items })
}

fn quantifier() -> impl Strategy<Value = Quantifier> {
    prop_oneof![
        Just(Quantifier::Optional),
        Just(Quantifier::ZeroOrMore),
        Just(Quantifier::OneOrMore),
        (0u32..5, proptest::option::of(0u32..5)).prop_map(|(a, b)| match b {
            Some(b) => Quantifier::Range {
                min: a.min(b),
                max: Some(a.max(b)),
            },
            None => Quantifier::Range { min: a, max: None },
        }),
    ]
}

/// An alternation-level expression of canonical shape.
fn alternation() -> BoxedStrategy<Expr> {
    let leaf = prop_oneof![
        name().prop_map(|n| expr(ExprKind::RuleRef(n))),
        proptest::collection::vec(any_char(), 0..5)
            .prop_map(|cs| expr(ExprKind::Literal(cs.into_iter().collect()))),
        class().prop_map(|c| expr(ExprKind::Class(c))),
        Just(expr(ExprKind::Dot)),
    ];
    let primary = leaf.prop_recursive(4, 32, 4, |inner| {
        // `inner` is a primary; build the levels above it.
        let call = (
            proptest::sample::select(Builtin::ALL.to_vec()),
            proptest::collection::vec(alternation_of(inner.clone()), 0..3),
        )
            .prop_map(|(function, mut args)| {
                // Canonical: `f()` has no arguments, never one empty argument.
                if args.len() == 1 && matches!(args[0].kind, ExprKind::Empty) {
                    args.clear();
                }
                expr(ExprKind::Call { function, args })
            });
        let primary = prop_oneof![
            3 => inner.clone(),
            1 => alternation_of(inner.clone()).prop_map(|e| expr(ExprKind::Group(Box::new(e)))),
            1 => call,
        ];
        alternation_of(primary).prop_map(|e| expr(ExprKind::Group(Box::new(e))))
    });
    alternation_of(primary)
}

/// Alternations over concatenations over (possibly repeated) primaries.
fn alternation_of(primary: impl Strategy<Value = Expr> + Clone + 'static) -> BoxedStrategy<Expr> {
    let postfix = (primary, proptest::option::of(quantifier())).prop_map(|(p, q)| match q {
        Some(quantifier) => expr(ExprKind::Repeat {
            item: Box::new(p),
            quantifier,
        }),
        None => p,
    });
    let concat = proptest::collection::vec(postfix, 0..4).prop_map(|mut items| match items.len() {
        0 => expr(ExprKind::Empty),
        1 => items.pop().unwrap(),
        _ => expr(ExprKind::Concat(items)),
    });
    proptest::collection::vec(concat, 1..4)
        .prop_map(|mut alts| match alts.len() {
            1 => alts.pop().unwrap(),
            _ => expr(ExprKind::Alternation(alts)),
        })
        .boxed()
}

fn grammar() -> impl Strategy<Value = Grammar> {
    let rule = (
        name(),
        alternation(),
        proptest::option::weighted(0.1, alternation()),
        proptest::option::weighted(0.2, 1..=1_000u32),
    )
        .prop_map(|(name, body, look, max_tokens)| Rule {
            name,
            name_span: Span::default(),
            line: 0,
            body,
            max_tokens,
            lookahead: look.map(|expr| Lookahead {
                expr,
                span: Span::default(),
            }),
            span: Span::default(),
        });
    proptest::collection::vec(rule, 0..5).prop_map(|rules| Grammar {
        rules,
        span: Span::default(),
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn print_then_parse_is_identity(ast in grammar()) {
        let printed = ast.to_string();
        let parsed = sieve_gbnf::parse(&printed);
        prop_assert!(parsed.is_ok(), "{:?}\n{}", parsed, printed);
        prop_assert_eq!(parsed.unwrap().without_spans(), ast.clone(), "{}", printed);
        let _ = sieve_gbnf::lower(&ast, &sieve_gbnf::Options::default());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Text over GBNF's own alphabet: never a panic, and round-trip whenever it parses.
    #[test]
    fn any_text_parses_or_fails_cleanly(text in r#"([a-c ]|::=|[|()?*+.{},0-9\\"'\[\]^\-#\n=]|\\[xuU]){0,40}"#) {
        if let Ok(ast) = sieve_gbnf::parse(&text) {
            let printed = ast.to_string();
            let again = sieve_gbnf::parse(&printed);
            prop_assert!(again.is_ok(), "{:?} printed as {:?}", text, printed);
            prop_assert_eq!(again.unwrap().without_spans(), ast.without_spans());
            let _ = sieve_gbnf::lower(&ast, &sieve_gbnf::Options::default());
        }
    }
}
