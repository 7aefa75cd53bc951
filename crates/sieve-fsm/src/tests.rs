//! Unit tests of the construction stages against the reference recogniser, on random small
//! expressions: the minimised DFA, the unminimised DFA and the epsilon-free NFA must all accept
//! exactly the expression's language.

use proptest::prelude::*;
use sieve_ir::{reference::Recognizer, ByteClass, Expr, Grammar, GrammarBuilder};

use crate::canonical::{canonicalize, canonicalize_dfa};
use crate::dfa::{determinize, minimize};
use crate::hash::hash_combine;
use crate::nfa::{remove_epsilons, thompson};
use crate::Fsm;

/// Random expressions over the alphabet `a b c`, small enough for the recogniser.
fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        "[abc]{1,3}".prop_map(Expr::bytes),
        Just(Expr::class(ByteClass::range(b'a', b'b')).unwrap()),
        Just(Expr::class(ByteClass::range(b'b', b'c')).unwrap()),
        Just(Expr::class(ByteClass::from_ranges([(b'a', b'a'), (b'c', b'c')])).unwrap()),
        Just(Expr::empty()),
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 2..4).prop_map(Expr::seq),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| Expr::choice(v).unwrap()),
            inner.clone().prop_map(Expr::optional),
            inner.clone().prop_map(Expr::star),
            inner.prop_map(Expr::plus),
        ]
    })
}

fn single_rule(body: Expr) -> Grammar {
    let mut b = GrammarBuilder::new();
    let root = b.declare("root").unwrap();
    b.define(root, body);
    b.build(root).unwrap()
}

/// The three automata of one body: minimised DFA, unminimised DFA, epsilon-free NFA.
fn stages(body: &Expr) -> [Fsm; 3] {
    let nfa = thompson(body, "root").unwrap();
    let dfa = determinize(&nfa, usize::MAX).unwrap();
    let min = minimize(&dfa);
    let (start, accepting, edges) = remove_epsilons(&nfa, usize::MAX).unwrap();
    [
        canonicalize_dfa(&min),
        canonicalize_dfa(&dfa),
        canonicalize(start, &accepting, &edges, false),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_stage_accepts_the_expression_language(
        body in expr(),
        inputs in prop::collection::vec("[abcd]{0,7}", 24),
    ) {
        let grammar = single_rule(body.clone());
        let oracle = Recognizer::new(&grammar).unwrap();
        let fsms = stages(&body);
        for input in &inputs {
            let expected = oracle.accepts(input.as_bytes());
            for (stage, fsm) in fsms.iter().enumerate() {
                prop_assert_eq!(
                    fsm.matches(input.as_bytes()),
                    Some(expected),
                    "stage {} on {:?} for {}", stage, input, grammar
                );
            }
        }
        prop_assert!(fsms[0].state_count() <= fsms[1].state_count());
    }
}

#[test]
fn hash_combine_is_order_sensitive_and_fixed() {
    let ab = hash_combine(hash_combine(0, 1), 2);
    let ba = hash_combine(hash_combine(0, 2), 1);
    assert_ne!(ab, ba);
    assert_ne!(hash_combine(0, 0), hash_combine(0, 1));
    // Pinned: any change to the mixer or its constants changes every stored hash.
    assert_eq!(hash_combine(0, 0), 0x1418_ad48_6594_e4da);
}

#[test]
fn thompson_rejects_counted_repetition_inside_a_body() {
    let body = Expr::seq([
        Expr::bytes("x"),
        Expr::repeat(Expr::bytes("y"), 2, Some(5)).unwrap(),
    ]);
    let err = thompson(&body, "r").unwrap_err();
    assert_eq!(err.rule_name(), "r");
    assert!(err.is_contract_violation());
}

#[test]
fn thompson_numbers_states_left_to_right() {
    let nfa = thompson(&Expr::bytes("ab"), "r").unwrap();
    assert_eq!((nfa.start, nfa.accept, nfa.len()), (0, 2, 3));
}
