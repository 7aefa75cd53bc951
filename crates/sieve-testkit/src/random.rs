//! Random small grammars for property tests (proptest strategies): one to three rules over the
//! bytes `abc`, with literals, a class, references, ε, sequences, choices and small
//! repetitions, so recognisers can be compared with each other on any shape.

use proptest::prelude::*;
use sieve_ir::{ByteClass, Expr, Grammar, GrammarBuilder, RuleId};

/// A random body over rules `0..rules`, bytes from `abc`, at most three levels deep.
pub fn arb_expr(rules: usize) -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        prop::sample::select(vec!["a", "b", "c", "ab", "ca"]).prop_map(Expr::bytes),
        Just(Expr::class(ByteClass::range(b'a', b'b')).expect("two bytes")),
        (0..rules).prop_map(|r| Expr::rule(RuleId::new(r).expect("small id"))),
        Just(Expr::empty()),
    ];
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 2..4).prop_map(Expr::seq),
            prop::collection::vec(inner.clone(), 2..4)
                .prop_map(|v| Expr::choice(v).expect("non-empty")),
            (inner.clone(), 0u32..3, prop::option::of(0u32..4)).prop_map(|(e, min, extra)| {
                let max = extra.map(|x| (min + x).max(1));
                Expr::repeat(e, min, max).unwrap_or_else(|_| Expr::optional(Expr::bytes("a")))
            }),
        ]
    })
}

/// A random grammar of one to three rules (`r0` the root) with [`arb_expr`] bodies.
pub fn arb_grammar() -> impl Strategy<Value = Grammar> {
    (1usize..4).prop_flat_map(|n| {
        prop::collection::vec(arb_expr(n), n).prop_map(move |bodies| {
            let mut b = GrammarBuilder::new();
            let ids: Vec<RuleId> = (0..n)
                .map(|i| b.declare(&format!("r{i}")).expect("fresh name"))
                .collect();
            for (id, body) in ids.iter().zip(bodies) {
                b.define(*id, body);
            }
            b.build(ids[0]).expect("every rule defined")
        })
    })
}
