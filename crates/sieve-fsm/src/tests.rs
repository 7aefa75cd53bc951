//! Unit tests of the construction stages against the reference recogniser, on random small
//! expressions: the minimised DFA, the unminimised DFA and the epsilon-free NFA must all accept
//! exactly the expression's language.

use proptest::prelude::*;
use sieve_ir::{reference::Recognizer, ByteClass, Expr, Grammar, GrammarBuilder};

use crate::canonical::{canonicalize, canonicalize_dfa};
use crate::dfa::{determinize, minimize, minimize_both_ways};
use crate::hash::hash_combine;
use crate::nfa::{remove_epsilons, thompson};
use crate::{Builder, Config, Fsm};

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
    let nfa = thompson(body, "root", None).unwrap();
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

/// Whether `expr` holds a loop: `*` or `+` of something that matches a non-empty string.
fn loops(expr: &Expr) -> bool {
    fn scans(expr: &Expr) -> bool {
        use sieve_ir::ExprKind::{Bytes, Class};
        matches!(expr.kind(), Bytes(_) | Class(_)) || expr.children().iter().any(scans)
    }
    match expr.kind() {
        sieve_ir::ExprKind::Repeat { item, max, .. } if *max != Some(1) && scans(item) => true,
        _ => expr.children().iter().any(loops),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The linear-time minimisation of an acyclic DFA gives Hopcroft's automaton, and is
    /// refused exactly for the DFAs of expressions with a loop.
    #[test]
    fn acyclic_minimisation_equals_refinement(body in expr()) {
        let nfa = thompson(&body, "root", None).unwrap();
        let dfa = determinize(&nfa, usize::MAX).unwrap();
        let (acyclic, refined) = minimize_both_ways(&dfa);
        prop_assert_eq!(acyclic.is_some(), !loops(&body), "{:?}", body);
        if let Some(acyclic) = acyclic {
            prop_assert_eq!(canonicalize_dfa(&acyclic), canonicalize_dfa(&refined), "{:?}", body);
        }
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
    let err = thompson(&body, "r", None).unwrap_err();
    assert_eq!(err.rule_name(), "r");
    assert!(err.is_contract_violation());
}

#[test]
fn thompson_numbers_states_left_to_right() {
    let nfa = thompson(&Expr::bytes("ab"), "r", None).unwrap();
    assert_eq!((nfa.start, nfa.accept, nfa.len()), (0, 2, 3));
}

/// The automaton the builder gives the root of a one-rule grammar.
fn built(body: &Expr) -> Fsm {
    let grammar = single_rule(body.clone());
    let fsms = Builder::new(Config::new()).build(&grammar).unwrap();
    fsms.automaton(grammar.root()).fsm().unwrap().clone()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A body's leading literal is joined to the automaton of the rest afterwards
    /// ([`crate::head`]); the result must be the minimal DFA of the whole body, numbered as a
    /// fresh build numbers it.
    #[test]
    fn a_literal_head_gives_the_automaton_of_a_fresh_build(
        head in "[abc]{1,4}",
        tail in expr(),
    ) {
        let body = Expr::seq([Expr::bytes(head), tail]);
        prop_assert_eq!(built(&body), stages(&body)[0].clone());
    }
}

#[test]
fn chain_states_equal_to_tail_states_are_merged() {
    let x = || Expr::bytes("x");
    let loop_then_z = Expr::seq([
        Expr::star(Expr::seq([Expr::bytes("y"), x()])),
        Expr::bytes("z"),
    ]);
    // x (y x)* z: the start reads like the state after a `y`, so the chain disappears.
    let whole = Expr::seq([x(), loop_then_z.clone()]);
    assert_eq!(built(&whole).state_count(), 3);
    assert_eq!(built(&whole), stages(&whole)[0]);
    // w x (y x)* z: the chain keeps its first state only.
    let partly = Expr::seq([Expr::bytes("wx"), loop_then_z]);
    assert_eq!(built(&partly).state_count(), 4);
    assert_eq!(built(&partly), stages(&partly)[0]);
}

#[test]
fn rules_differing_in_their_head_share_the_rest_and_keep_their_references() {
    let mut b = GrammarBuilder::new();
    let root = b.declare("root").unwrap();
    let short = b.declare("short").unwrap();
    let long = b.declare("long").unwrap();
    let value = b.declare("value").unwrap();
    let other = b.declare("other").unwrap();
    let member =
        |key: &str, value| Expr::seq([Expr::bytes(key), Expr::bytes(":"), Expr::rule(value)]);
    b.define(root, Expr::seq([Expr::rule(short), Expr::rule(long)]));
    b.define(short, member("\"k\"", value));
    b.define(long, member("\"key\"", other));
    b.define(value, Expr::plus(Expr::bytes("v")));
    b.define(other, Expr::plus(Expr::bytes("o")));
    let grammar = b.build(root).unwrap();
    let fsms = Builder::new(Config::new()).build(&grammar).unwrap();
    for rule in [short, long] {
        let body = grammar.rules()[rule.index()].body();
        assert_eq!(
            fsms.automaton(rule).fsm().unwrap(),
            &stages(body)[0],
            "{}",
            fsms.name(rule)
        );
    }
}

/// Alternations large enough to become fragments ([`crate::fragment`]).
fn large_choice() -> impl Strategy<Value = Expr> {
    prop::collection::vec(expr(), 4..7)
        .prop_map(|alternatives| Expr::choice(alternatives).unwrap())
        .prop_filter("at least 16 nodes", |choice| {
            matches!(choice.kind(), sieve_ir::ExprKind::Choice(_)) && choice.size() >= 16
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Large alternations spliced in as DFAs leave the rule's minimal DFA as it was.
    #[test]
    fn fragments_give_the_automaton_of_a_plain_build(
        before in expr(),
        choice in large_choice(),
        after in expr(),
    ) {
        let body = Expr::seq([
            before,
            Expr::star(choice.clone()),
            Expr::bytes("d"),
            choice.clone(),
            Expr::optional(Expr::seq([choice, after])),
        ]);
        prop_assert_eq!(built(&body), stages(&body)[0].clone());
    }
}

#[test]
fn a_large_alternation_met_again_is_spliced_in_smaller_and_counted_at_its_plain_size() {
    // A JSON-string-like character: printable bytes, two-byte sequences, escapes.
    let hex = || Expr::class(ByteClass::from_ranges([(b'0', b'9'), (b'a', b'f')])).unwrap();
    let character = Expr::choice([
        Expr::class(ByteClass::from_ranges([(b' ', b'!'), (b'#', b'[')])).unwrap(),
        Expr::seq([
            Expr::class(ByteClass::range(0xc2, 0xdf)).unwrap(),
            Expr::class(ByteClass::range(0x80, 0xbf)).unwrap(),
        ]),
        Expr::seq([
            Expr::bytes("\\"),
            Expr::class(ByteClass::from_ranges([(b'n', b'n'), (b't', b't')])).unwrap(),
        ]),
        Expr::seq([Expr::bytes("\\u"), hex(), hex(), hex(), hex()]),
        Expr::seq([
            Expr::bytes([0xe0]),
            Expr::class(ByteClass::range(0xa0, 0xbf)).unwrap(),
            Expr::class(ByteClass::range(0x80, 0xbf)).unwrap(),
        ]),
    ])
    .unwrap();
    // Met twice: the second is spliced in.
    let body = Expr::seq([
        Expr::bytes("\""),
        Expr::star(character.clone()),
        Expr::bytes("\""),
        character,
    ]);
    let plain = thompson(&body, "r", None).unwrap();
    let fragments = crate::fragment::Fragments::default();
    let spliced = thompson(&body, "r", Some(&fragments)).unwrap();
    assert!(
        spliced.len() < plain.len(),
        "{} vs {}",
        spliced.len(),
        plain.len()
    );
    assert_eq!(spliced.thompson_len, plain.len());
    assert_eq!(plain.thompson_len, plain.len());
    assert_eq!(built(&body), stages(&body)[0]);
}

/// `[ab]`.
fn a_or_b() -> Expr {
    Expr::class(ByteClass::range(b'a', b'b')).unwrap()
}

/// `[ab]* a [ab]{n}`: the strings whose `n + 1`-th byte from the end is `a`. Its minimal DFA
/// has `2^(n + 1)` states (every block of the partition splits), and the subset construction
/// reaches all of them.
fn a_then_n_more(n: usize) -> Expr {
    let mut items = vec![Expr::star(a_or_b()), Expr::bytes(b"a".to_vec())];
    items.extend((0..n).map(|_| a_or_b()));
    Expr::seq(items)
}

/// The minimal DFA of `body`, canonical.
fn minimal(body: &Expr) -> Fsm {
    let nfa = thompson(body, "root", None).unwrap();
    canonicalize_dfa(&minimize(&determinize(&nfa, usize::MAX).unwrap()))
}

/// `minimal(body)` on a thread of its own, whose scratch memory is fresh.
fn minimal_on_a_fresh_thread(body: &Expr) -> Fsm {
    let body = body.clone();
    std::thread::spawn(move || minimal(&body)).join().unwrap()
}

/// The subset construction keeps its working memory per thread between calls: one that stops
/// at its state limit must leave nothing behind for the next, on any NFA.
#[test]
fn a_construction_stopped_at_its_limit_leaves_nothing_behind() {
    let big = thompson(&a_then_n_more(5), "root", None).unwrap();
    assert!(determinize(&big, 8).is_none());
    for body in [
        a_then_n_more(5),
        a_then_n_more(3),
        Expr::bytes(b"ab".to_vec()),
    ] {
        assert_eq!(minimal(&body), minimal_on_a_fresh_thread(&body));
        assert!(determinize(&big, 8).is_none());
    }
}

/// Minimisation keeps its partition and edge lists per thread between calls: after a larger
/// automaton (more states, blocks and splits), a smaller one minimises as on a fresh thread.
#[test]
fn a_minimisation_after_a_larger_one_equals_a_fresh_one() {
    let large = minimal(&a_then_n_more(6));
    assert_eq!(large.state_count(), 128);
    for body in [
        a_then_n_more(2),
        Expr::bytes(b"ab".to_vec()),
        a_then_n_more(0),
    ] {
        assert_eq!(minimal(&a_then_n_more(6)), large);
        assert_eq!(minimal(&body), minimal_on_a_fresh_thread(&body));
    }
}
