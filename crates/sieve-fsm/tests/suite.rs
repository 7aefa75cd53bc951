//! The integration suite of sieve-fsm, through the public API only: languages, determinism and
//! minimality, the DFA cap, the structural hash, contract errors and dump snapshots.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use proptest::prelude::*;
use sieve_fsm::{AutomatonCache, Builder, Config, Fsm, GrammarFsms, Label, RuleAutomaton, StateId};
use sieve_ir::{reference::Recognizer, ByteClass, Expr, Grammar, GrammarBuilder, RuleId};

// ---------------------------------------------------------------------------------------------
// Helpers

fn lit(s: &str) -> Expr {
    Expr::bytes(s)
}

fn class(lo: u8, hi: u8) -> Expr {
    Expr::class(ByteClass::range(lo, hi)).unwrap()
}

fn alt(alts: impl IntoIterator<Item = Expr>) -> Expr {
    Expr::choice(alts.into_iter().collect::<Vec<_>>()).unwrap()
}

fn seq(items: impl IntoIterator<Item = Expr>) -> Expr {
    Expr::seq(items)
}

fn rule(id: RuleId) -> Expr {
    Expr::rule(id)
}

/// A grammar from `(name, body)` pairs, where bodies may reference earlier or later rules by
/// the ids handed to `bodies`; the first rule is the root.
fn grammar(names: &[&str], bodies: impl FnOnce(&[RuleId]) -> Vec<Expr>) -> Grammar {
    let mut b = GrammarBuilder::new();
    let ids: Vec<RuleId> = names.iter().map(|n| b.declare(n).unwrap()).collect();
    for (id, body) in ids.iter().zip(bodies(&ids)) {
        b.define(*id, body);
    }
    b.build(ids[0]).unwrap()
}

fn single(body: Expr) -> Grammar {
    grammar(&["root"], |_| vec![body])
}

fn build(g: &Grammar) -> GrammarFsms {
    Builder::new(Config::new()).build(g).unwrap()
}

fn root_fsm(fsms: &GrammarFsms) -> &Fsm {
    fsms.automaton(fsms.root()).fsm().unwrap()
}

fn id(g: &Grammar, name: &str) -> RuleId {
    g.lookup(name).unwrap()
}

/// The deterministic transition of `state` on `byte`.
fn step(fsm: &Fsm, state: StateId, byte: u8) -> Option<StateId> {
    fsm.edges(state)
        .iter()
        .find(|e| e.label.matches_byte(byte))
        .map(|e| e.target)
}

/// Checks the structural invariants of a deterministic FSM: no epsilon edges, no overlapping
/// byte ranges, no repeated rule label, sorted edges, canonical BFS numbering.
fn assert_deterministic_and_canonical(fsm: &Fsm) {
    assert!(fsm.is_deterministic());
    let mut seen = vec![false; fsm.state_count()];
    let mut order = vec![fsm.start()];
    seen[0] = true;
    let mut next = 0;
    while next < order.len() {
        let edges = fsm.edges(order[next]);
        assert!(edges.windows(2).all(|w| w[0] < w[1]), "sorted and unique");
        let mut bytes = ByteClass::EMPTY;
        let mut rules = HashSet::new();
        for edge in edges {
            match edge.label {
                Label::Bytes { lo, hi } => {
                    let range = ByteClass::range(lo, hi);
                    assert!(bytes.intersection(&range).is_empty(), "overlapping ranges");
                    bytes = bytes.union(&range);
                }
                Label::Rule(r) => assert!(rules.insert(r), "repeated rule label"),
                Label::Epsilon => panic!("epsilon edge in a built FSM"),
            }
            if !seen[edge.target.index()] {
                seen[edge.target.index()] = true;
                assert_eq!(edge.target.index(), order.len(), "BFS numbering");
                order.push(edge.target);
            }
        }
        next += 1;
    }
    assert_eq!(order.len(), fsm.state_count(), "every state reachable");
}

/// Brute force: searches the product automaton of `p` and `q` for a string over all bytes that
/// one state accepts and the other does not (a missing edge leads to a rejecting sink, `None`).
fn distinguishable(fsm: &Fsm, p: StateId, q: StateId) -> bool {
    let accepting = |s: Option<StateId>| s.is_some_and(|s| fsm.is_accepting(s));
    let mut seen = HashSet::new();
    let mut queue = VecDeque::from([(Some(p), Some(q))]);
    while let Some((a, b)) = queue.pop_front() {
        if !seen.insert((a, b)) {
            continue;
        }
        if accepting(a) != accepting(b) {
            return true;
        }
        for byte in 0..=255u8 {
            let na = a.and_then(|s| step(fsm, s, byte));
            let nb = b.and_then(|s| step(fsm, s, byte));
            if na.is_some() || nb.is_some() {
                queue.push_back((na, nb));
            }
        }
    }
    false
}

/// Random expressions over `a b c`, small enough for the recogniser.
fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        "[abc]{1,3}".prop_map(Expr::bytes),
        Just(class(b'a', b'b')),
        Just(class(b'b', b'c')),
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

// ---------------------------------------------------------------------------------------------
// Languages, determinism, minimality

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn fsm_language_is_expression_language(
        body in expr(),
        inputs in prop::collection::vec("[abcd]{0,8}", 32),
    ) {
        let g = single(body);
        let fsms = build(&g);
        let oracle = Recognizer::new(&g).unwrap();
        for input in &inputs {
            prop_assert_eq!(
                fsms.matches(g.root(), input.as_bytes()),
                Some(oracle.accepts(input.as_bytes())),
                "{:?} on {}", input, g
            );
        }
    }

    #[test]
    fn minimised_dfa_is_deterministic_canonical_and_minimal(body in expr()) {
        let g = single(body);
        let fsms = build(&g);
        let fsm = root_fsm(&fsms);
        assert_deterministic_and_canonical(fsm);
        for p in fsm.states() {
            for q in fsm.states().filter(|&q| q > p) {
                prop_assert!(distinguishable(fsm, p, q), "states {} and {} of {}", p, q, g);
            }
        }
    }
}

#[test]
fn choice_with_common_suffix_has_three_states() {
    // ("ab" | "cb"): start, after a-or-c, accept.
    let fsms = build(&single(alt([lit("ab"), lit("cb")])));
    let fsm = root_fsm(&fsms);
    assert_eq!(fsm.state_count(), 3);
    assert_eq!(
        fsm.edges(fsm.start()).len(),
        2,
        "a and c are not adjacent bytes"
    );
}

#[test]
fn star_or_plus_is_star() {
    let star = build(&single(Expr::star(class(b'a', b'c'))));
    let both = build(&single(alt([
        Expr::star(class(b'a', b'c')),
        Expr::plus(class(b'a', b'c')),
    ])));
    assert_eq!(root_fsm(&both).state_count(), 1);
    assert_eq!(root_fsm(&both), root_fsm(&star));
    assert_eq!(both.hash(both.root()), star.hash(star.root()));
}

#[test]
fn adjacent_ranges_to_one_target_merge() {
    // [a-c] | [d-f] | "g" is one edge [a-g].
    let body = alt([class(b'a', b'c'), class(b'd', b'f'), lit("g")]);
    let fsms = build(&single(body));
    let fsm = root_fsm(&fsms);
    assert_eq!(
        fsm.edges(fsm.start())
            .iter()
            .map(|e| e.label)
            .collect::<Vec<_>>(),
        vec![Label::Bytes { lo: b'a', hi: b'g' }]
    );
}

#[test]
fn references_are_symbols() {
    // root ::= item ("," item)* ; item ::= "x"
    let g = grammar(&["root", "item"], |ids| {
        vec![
            seq([rule(ids[1]), Expr::star(seq([lit(","), rule(ids[1])]))]),
            lit("x"),
        ]
    });
    let fsms = build(&g);
    let fsm = root_fsm(&fsms);
    assert_deterministic_and_canonical(fsm);
    // The start and the state after "," are equivalent: 0 -item-> 1*, 1 -","-> 0.
    assert_eq!(fsm.state_count(), 2);
    assert_eq!(fsm.references(), vec![id(&g, "item")]);
    assert_eq!(
        fsms.matches(g.root(), b"x"),
        None,
        "references cannot be followed"
    );
    assert_eq!(fsms.matches(id(&g, "item"), b"x"), Some(true));
}

#[test]
fn long_literal_stays_deterministic() {
    // 10,000 states is over the default DFA cap, but no larger than the NFA.
    let text = "ab".repeat(5_000);
    let fsms = build(&single(lit(&text)));
    let fsm = root_fsm(&fsms);
    assert!(fsm.is_deterministic());
    assert_eq!(fsm.state_count(), 10_001);
    assert_eq!(fsm.matches(text.as_bytes()), Some(true));
}

// ---------------------------------------------------------------------------------------------
// The DFA cap

/// `(a|b)* a (a|b)^n`, written with explicit copies: its DFA has 2^(n+1) states.
fn exploding(n: usize) -> Expr {
    let ab = || class(b'a', b'b');
    let mut items = vec![Expr::star(ab()), lit("a")];
    items.extend((0..n).map(|_| ab()));
    seq(items)
}

#[test]
fn exploding_dfa_falls_back_to_nfa() {
    let g = single(exploding(12));
    let fsms = build(&g);
    let fsm = root_fsm(&fsms);
    assert!(!fsm.is_deterministic());
    assert!(fsm.state_count() < 100, "{} states", fsm.state_count());
    assert!(fsms.hash(g.root()).is_some());
    let oracle = Recognizer::new(&g).unwrap();
    for input in [
        "a".repeat(13),
        "b".repeat(13),
        format!("bb{}", "a".repeat(13)),
        format!("a{}", "b".repeat(12)),
        format!("a{}", "b".repeat(11)),
        format!("ab{}", "b".repeat(12)),
    ] {
        assert_eq!(
            fsm.matches(input.as_bytes()),
            Some(oracle.accepts(input.as_bytes())),
            "{input}"
        );
    }
}

#[test]
fn raising_the_cap_determinises() {
    let g = single(exploding(5));
    let small = Builder::new(Config::new().dfa_state_limit(8))
        .build(&g)
        .unwrap();
    assert!(!root_fsm(&small).is_deterministic());
    let fsms = Builder::new(Config::new().dfa_state_limit(64))
        .build(&g)
        .unwrap();
    let fsm = root_fsm(&fsms);
    assert_deterministic_and_canonical(fsm);
    assert_eq!(fsm.state_count(), 64);
}

// ---------------------------------------------------------------------------------------------
// Hash

/// `value ::= "[" digits "]" | digits ; digits ::= [0-9]+`, with `extra` unrelated rules first
/// and names decorated by `tag`.
fn value_grammar(tag: &str, extra: usize, last_byte: &str) -> Grammar {
    let mut names: Vec<String> = (0..extra).map(|i| format!("noise{i}{tag}")).collect();
    names.push(format!("value{tag}"));
    names.push(format!("digits{tag}"));
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut b = GrammarBuilder::new();
    let ids: Vec<RuleId> = names.iter().map(|n| b.declare(n).unwrap()).collect();
    let (value, digits) = (ids[extra], ids[extra + 1]);
    for (i, &noise) in ids[..extra].iter().enumerate() {
        b.define(noise, seq([lit(&format!("n{i}")), rule(value)]));
    }
    b.define(
        value,
        alt([seq([lit("["), rule(digits), lit(last_byte)]), rule(digits)]),
    );
    b.define(digits, Expr::plus(class(b'0', b'9')));
    b.build(ids[0]).unwrap()
}

fn hash_of(g: &Grammar, name: &str) -> Option<u64> {
    build(g).hash(id(g, name))
}

#[test]
fn identical_structure_hashes_equal_across_grammars() {
    let g1 = value_grammar("", 0, "]");
    let g2 = value_grammar("_x", 3, "]");
    let h1 = hash_of(&g1, "value");
    assert!(h1.is_some());
    assert_eq!(h1, hash_of(&g2, "value_x"));
    assert_eq!(hash_of(&g1, "digits"), hash_of(&g2, "digits_x"));
    assert_ne!(hash_of(&g1, "value"), hash_of(&g1, "digits"));
}

#[test]
fn one_byte_difference_changes_the_hash() {
    let base = value_grammar("", 0, "]");
    let changed = value_grammar("", 0, ")");
    assert_ne!(hash_of(&base, "value"), hash_of(&changed, "value"));

    // A one-byte difference in a callee changes the caller's hash.
    let callee = |hi: u8| {
        grammar(&["value", "digits"], |ids| {
            vec![
                alt([seq([lit("["), rule(ids[1]), lit("]")]), rule(ids[1])]),
                Expr::plus(class(b'0', hi)),
            ]
        })
    };
    assert_eq!(hash_of(&callee(b'9'), "value"), hash_of(&base, "value"));
    assert_ne!(hash_of(&callee(b'8'), "value"), hash_of(&base, "value"));

    // Accepting flags count: "ab" vs "ab"?-like prefixes.
    let a = single(lit("ab"));
    let b = single(seq([lit("a"), Expr::optional(lit("b"))]));
    assert_ne!(hash_of(&a, "root"), hash_of(&b, "root"));
}

/// `a ::= "x" b | "y" ; b ::= "z" a`, rule names decorated, optionally with rules in the other
/// order and an unrelated rule first.
fn cycle_grammar(tag: &str, swapped: bool) -> Grammar {
    let (a, b) = (format!("a{tag}"), format!("b{tag}"));
    let names: Vec<&str> = if swapped {
        vec!["start", &b, &a]
    } else {
        vec![&a, &b]
    };
    grammar(&names, |ids| {
        let (ia, ib) = if swapped {
            (ids[2], ids[1])
        } else {
            (ids[0], ids[1])
        };
        let body_a = alt([seq([lit("x"), rule(ib)]), lit("y")]);
        let body_b = seq([lit("z"), rule(ia)]);
        if swapped {
            vec![seq([lit("s"), rule(ia)]), body_b, body_a]
        } else {
            vec![body_a, body_b]
        }
    })
}

#[test]
fn simple_cycle_hashes_by_entry_member() {
    let g1 = cycle_grammar("", false);
    let g2 = cycle_grammar("2", true);
    let (a1, b1) = (hash_of(&g1, "a"), hash_of(&g1, "b"));
    assert!(a1.is_some() && b1.is_some());
    assert_eq!(a1, hash_of(&g2, "a2"));
    assert_eq!(b1, hash_of(&g2, "b2"));
    assert_ne!(
        a1, b1,
        "entering the cycle at another member changes the hash"
    );
    assert!(
        hash_of(&g2, "start").is_some(),
        "callers of a simple cycle hash"
    );

    // Rotating which member is entered: b' ::= "x" a' | "y" ; a' ::= "z" b' has a' and b' the
    // other way round, so a's hash matches b' and not a'.
    let rotated = grammar(&["a", "b"], |ids| {
        vec![
            seq([lit("z"), rule(ids[1])]),
            alt([seq([lit("x"), rule(ids[0])]), lit("y")]),
        ]
    });
    assert_eq!(hash_of(&rotated, "b"), a1);
    assert_eq!(hash_of(&rotated, "a"), b1);
}

#[test]
fn self_recursion_is_a_cycle_of_one() {
    // list ::= "(" list ")" | "x", twice, under different names and ids.
    let g1 = grammar(&["list"], |ids| {
        vec![alt([seq([lit("("), rule(ids[0]), lit(")")]), lit("x")])]
    });
    let g2 = grammar(&["other", "nest"], |ids| {
        vec![
            Expr::plus(rule(ids[1])),
            alt([seq([lit("("), rule(ids[1]), lit(")")]), lit("x")]),
        ]
    });
    let h = hash_of(&g1, "list");
    assert!(h.is_some());
    assert_eq!(h, hash_of(&g2, "nest"));
    let g3 = grammar(&["list"], |ids| {
        vec![alt([seq([lit("("), rule(ids[0]), lit("]")]), lit("x")])]
    });
    assert_ne!(h, hash_of(&g3, "list"));
}

#[test]
fn non_simple_scc_has_no_hash() {
    // a ::= "x" a b | "y" ; b ::= "z" a : a references two members of its SCC.
    let g = grammar(&["top", "a", "b", "leaf"], |ids| {
        vec![
            seq([rule(ids[1]), rule(ids[3])]),
            alt([seq([lit("x"), rule(ids[1]), rule(ids[2])]), lit("y")]),
            seq([lit("z"), rule(ids[1])]),
            lit("w"),
        ]
    });
    let fsms = build(&g);
    assert_eq!(fsms.hash(id(&g, "a")), None);
    assert_eq!(fsms.hash(id(&g, "b")), None);
    assert_eq!(
        fsms.hash(id(&g, "top")),
        None,
        "callers of an unhashed rule"
    );
    assert!(fsms.hash(id(&g, "leaf")).is_some());
}

#[test]
fn counted_rules_hash_by_item_and_bounds() {
    let counted = |min: u32, max: Option<u32>, item: &str| {
        grammar(&["list", "item"], |ids| {
            vec![Expr::repeat(rule(ids[1]), min, max).unwrap(), lit(item)]
        })
    };
    let base = hash_of(&counted(2, Some(5), "x"), "list");
    assert!(base.is_some());
    assert_eq!(base, hash_of(&counted(2, Some(5), "x"), "list"));
    assert_ne!(base, hash_of(&counted(2, Some(6), "x"), "list"));
    assert_ne!(base, hash_of(&counted(3, Some(5), "x"), "list"));
    assert_ne!(base, hash_of(&counted(2, None, "x"), "list"));
    assert_ne!(base, hash_of(&counted(2, Some(5), "y"), "list"));
    let g = counted(2, None, "x");
    assert_eq!(
        build(&g).automaton(g.root()),
        &RuleAutomaton::Counted {
            item: id(&g, "item"),
            min: 2,
            max: None
        }
    );
}

#[test]
fn golden_hashes() {
    // Pinned values: a change means every stored cross-grammar cache key changes too, so it
    // must be deliberate. Any dependence on process state (random seeds, addresses) fails here.
    let g = value_grammar("", 0, "]");
    assert_eq!(hash_of(&g, "digits"), Some(GOLDEN_DIGITS));
    assert_eq!(hash_of(&g, "value"), Some(GOLDEN_VALUE));
    let c = cycle_grammar("", false);
    assert_eq!(hash_of(&c, "a"), Some(GOLDEN_CYCLE_A));
}

const GOLDEN_DIGITS: u64 = 0x7e6b_5a34_6ace_742d;
const GOLDEN_VALUE: u64 = 0xda6d_5f78_e1ec_7959;
const GOLDEN_CYCLE_A: u64 = 0x659b_fbac_a15f_855c;

// ---------------------------------------------------------------------------------------------
// Contract and limits

#[test]
fn counted_repetition_inside_a_regular_body_is_an_error() {
    let g = grammar(&["root", "item"], |ids| {
        vec![
            seq([
                lit("["),
                Expr::repeat(rule(ids[1]), 2, Some(5)).unwrap(),
                lit("]"),
            ]),
            lit("x"),
        ]
    });
    let err = Builder::default().build(&g).unwrap_err();
    assert!(err.is_contract_violation());
    assert_eq!(err.rule_name(), "root");
    assert!(err.to_string().contains("{2,5}"), "{err}");
}

#[test]
fn counted_repetition_of_a_non_reference_is_an_error() {
    let g = single(Expr::repeat(lit("ab"), 2, None).unwrap());
    let err = Builder::default().build(&g).unwrap_err();
    assert!(err.is_contract_violation());
    assert_eq!(err.rule_name(), "root");
}

#[test]
fn nullable_rule_other_than_root_is_an_error() {
    let g = grammar(&["root", "maybe"], |ids| {
        vec![seq([lit("a"), rule(ids[1])]), Expr::optional(lit("b"))]
    });
    let err = Builder::default().build(&g).unwrap_err();
    assert!(err.is_contract_violation());
    assert_eq!(err.rule_name(), "maybe");

    // Nullable through a nullable root: b ::= root, root ::= "" | "x" b.
    let g = grammar(&["root", "b"], |ids| {
        vec![
            alt([Expr::empty(), seq([lit("x"), rule(ids[1])])]),
            rule(ids[0]),
        ]
    });
    assert_eq!(Builder::default().build(&g).unwrap_err().rule_name(), "b");

    // A counted rule with min 0.
    let g = grammar(&["root", "c", "item"], |ids| {
        vec![
            seq([lit("a"), rule(ids[1])]),
            Expr::repeat(rule(ids[2]), 0, Some(3)).unwrap(),
            lit("x"),
        ]
    });
    assert_eq!(Builder::default().build(&g).unwrap_err().rule_name(), "c");

    // The root may derive the empty string.
    let g = single(Expr::star(lit("a")));
    assert_eq!(build(&g).matches(g.root(), b""), Some(true));
}

#[test]
fn state_limit_is_an_error() {
    let g = grammar(&["root", "other"], |_| vec![lit("abcdef"), lit("ghijkl")]);
    let err = Builder::new(Config::new().state_limit(10))
        .build(&g)
        .unwrap_err();
    assert!(!err.is_contract_violation());
    assert_eq!(err.size_limit(), Some(10));
    assert_eq!(err.rule_name(), "other");
    assert!(err.to_string().contains("10 states"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Skipping the contract checks changes nothing on normalised input: same automata, same
    /// hashes, with a counted rule among them.
    #[test]
    fn build_normalized_agrees_with_build(body in expr(), threshold in 1u32..4) {
        let g = grammar(&["root", "pair"], |ids| {
            vec![
                seq([Expr::repeat(rule(ids[1]), 2, Some(9)).unwrap(), body]),
                seq([lit("("), class(b'a', b'c'), lit(")")]),
            ]
        });
        let config = sieve_normalize::Config {
            repetition_threshold: threshold,
            ..sieve_normalize::Config::default()
        };
        let normalized = sieve_normalize::normalize(&g, &config).unwrap();
        let checked = Builder::default().build(&normalized).unwrap();
        let trusted = Builder::default().build_normalized(&normalized).unwrap();
        prop_assert_eq!(checked.to_string(), trusted.to_string());
        prop_assert_eq!(checked.automata(), trusted.automata());
        for rule in checked.rule_ids() {
            prop_assert_eq!(checked.hash(rule), trusted.hash(rule));
        }
    }
}

#[test]
fn build_normalized_keeps_the_size_limits() {
    let g = grammar(&["root", "other"], |ids| {
        vec![seq([lit("abcdef"), rule(ids[1])]), lit("ghijkl")]
    });
    let normalized = sieve_normalize::normalize(&g, &sieve_normalize::Config::default()).unwrap();
    let err = Builder::new(Config::new().state_limit(4))
        .build_normalized(&normalized)
        .unwrap_err();
    assert_eq!(err.size_limit(), Some(4));
}

// ---------------------------------------------------------------------------------------------
// Dumps

#[test]
fn dump_number() {
    // number ::= "-"? int frac? ; int ::= "0" | [1-9] [0-9]* ; frac ::= "." [0-9]+
    let g = grammar(&["number", "int", "frac"], |ids| {
        vec![
            seq([
                Expr::optional(lit("-")),
                rule(ids[1]),
                Expr::optional(rule(ids[2])),
            ]),
            alt([
                lit("0"),
                seq([class(b'1', b'9'), Expr::star(class(b'0', b'9'))]),
            ]),
            seq([lit("."), Expr::plus(class(b'0', b'9'))]),
        ]
    });
    insta::assert_snapshot!("dump_number", build(&g).to_string());
}

#[test]
fn dump_cycles_and_counters() {
    // root ::= "[" group "]" odd? ; group ::= item{1,4} ; item ::= "(" item ")" | "\n" | "\xff"
    // (a simple cycle of one) ; odd ::= "o" even even | "1" ; even ::= "e" odd even | "2"
    // (an SCC that is not a simple cycle, so odd, even and root have no hash).
    let g = grammar(&["root", "group", "item", "odd", "even"], |ids| {
        vec![
            seq([
                lit("["),
                rule(ids[1]),
                lit("]"),
                Expr::optional(rule(ids[3])),
            ]),
            Expr::repeat(rule(ids[2]), 1, Some(4)).unwrap(),
            alt([
                seq([lit("("), rule(ids[2]), lit(")")]),
                lit("\n"),
                Expr::bytes(vec![0xff]),
            ]),
            alt([seq([lit("o"), rule(ids[4]), rule(ids[4])]), lit("1")]),
            alt([seq([lit("e"), rule(ids[3]), rule(ids[4])]), lit("2")]),
        ]
    });
    insta::assert_snapshot!("dump_cycles_and_counters", build(&g).to_string());
}

#[test]
fn dump_nfa_fallback() {
    let g = single(exploding(12));
    insta::assert_snapshot!("dump_nfa_fallback", build(&g).to_string());
}

// ---------------------------------------------------------------------------------------------
// The automaton cache shared across builds

/// `g`'s automata built against `cache`, which must equal those of a build without it.
fn build_cached(g: &Grammar, cache: &Arc<AutomatonCache>) -> GrammarFsms {
    let cached = Builder::new(Config::new())
        .with_cache(cache.clone())
        .build(g)
        .unwrap();
    let plain = build(g);
    assert_eq!(cached.automata(), plain.automata());
    assert_eq!(cached.state_count(), plain.state_count());
    for rule in g.rule_ids() {
        assert_eq!(cached.hash(rule), plain.hash(rule));
    }
    cached
}

#[test]
fn a_shared_cache_gives_the_same_automata_and_serves_other_grammars() {
    let member = |key: &str, value: RuleId| seq([lit(key), lit(":"), rule(value)]);
    let first = grammar(&["object", "name", "count", "text", "digits"], |ids| {
        vec![
            seq([lit("{"), rule(ids[1]), lit(","), rule(ids[2]), lit("}")]),
            member("\"name\"", ids[3]),
            member("\"count\"", ids[4]),
            seq([lit("\""), Expr::star(class(b'a', b'z')), lit("\"")]),
            Expr::plus(class(b'0', b'9')),
        ]
    });
    // Other names and ids, the same shapes for the value rules and one member.
    let second = grammar(&["list", "digits", "entry", "text"], |ids| {
        vec![
            seq([
                lit("["),
                rule(ids[2]),
                Expr::star(seq([lit(","), rule(ids[2])])),
                lit("]"),
            ]),
            Expr::plus(class(b'0', b'9')),
            member("\"count\"", ids[1]),
            seq([lit("\""), Expr::star(class(b'a', b'z')), lit("\"")]),
        ]
    });
    let cache = Arc::new(AutomatonCache::new(1 << 20));
    build_cached(&first, &cache);
    let after_first = cache.stats();
    assert_eq!(after_first.hits, 0);
    assert_eq!(after_first.entries as u64, after_first.misses);
    build_cached(&second, &cache);
    let after_second = cache.stats();
    // `digits`, `text` and the `"count"` member come from the first grammar.
    assert_eq!(after_second.hits, 3, "{after_second:?}");
    build_cached(&first, &cache);
    assert_eq!(
        cache.stats().misses,
        after_second.misses,
        "a rebuild builds nothing"
    );
}

#[test]
fn a_cache_within_a_tiny_budget_still_gives_the_same_automata() {
    let cache = Arc::new(AutomatonCache::new(1));
    let g = grammar(&["root", "a"], |ids| {
        vec![seq([rule(ids[1]), lit("!")]), Expr::plus(class(b'a', b'c'))]
    });
    build_cached(&g, &cache);
    build_cached(&g, &cache);
    assert_eq!(cache.stats().entries, 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random bodies built twice against one cache (the second time from it) give the
    /// automata of a build without it.
    #[test]
    fn cached_automata_equal_fresh_ones(bodies in prop::collection::vec(expr(), 1..4)) {
        let cache = Arc::new(AutomatonCache::new(1 << 20));
        for body in &bodies {
            let g = single(body.clone());
            build_cached(&g, &cache);
            build_cached(&g, &cache);
        }
    }
}

/// A grammar of `n` member rules over a few value shapes, most shapes repeated (within a
/// chunk of the parallel build and across chunks), with a root listing them all.
fn many_members(n: usize) -> Grammar {
    let mut names: Vec<String> = vec!["root".into(), "text".into(), "digits".into()];
    names.extend((0..n).map(|i| format!("member_{i}")));
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    grammar(&names, |ids| {
        let mut bodies = vec![
            seq(ids[3..].iter().map(|&m| rule(m))),
            seq([lit("\""), Expr::star(class(b'a', b'z')), lit("\"")]),
            Expr::plus(class(b'0', b'9')),
        ];
        bodies.extend((0..n).map(|i| {
            let key = format!("\"k{}\"", i % 37);
            let value = if i % 2 == 0 { ids[1] } else { ids[2] };
            match i % 3 {
                0 => seq([lit(&key), lit(":"), rule(value)]),
                1 => seq([lit(&key), Expr::optional(lit(" ")), lit(":"), rule(value)]),
                _ => alt([seq([lit(&key), lit(":"), rule(value)]), lit("null")]),
            }
        }));
        bodies
    })
}

#[test]
fn a_parallel_build_gives_the_same_automata() {
    // 600 members: three chunks of the parallel build.
    let g = many_members(600);
    let plain = build(&g);
    for cached in [false, true] {
        let mut builder = Builder::new(Config::new().parallel(true));
        let cache = Arc::new(AutomatonCache::new(1 << 20));
        if cached {
            builder = builder.with_cache(cache.clone());
        }
        let parallel = builder.build(&g).unwrap();
        assert_eq!(parallel.automata(), plain.automata());
        assert_eq!(parallel.state_count(), plain.state_count());
        assert_eq!(parallel.edge_count(), plain.edge_count());
        for rule in g.rule_ids() {
            assert_eq!(parallel.hash(rule), plain.hash(rule));
        }
        if cached {
            // Each distinct shape built once: a second build takes them all from the cache.
            let first = cache.stats();
            assert_eq!(first.hits, 0, "{first:?}");
            builder.build(&g).unwrap();
            assert_eq!(cache.stats().misses, first.misses);
        }
    }
}

#[test]
fn a_parallel_build_names_the_same_rule_past_a_limit() {
    let g = many_members(600);
    let total = build(&g).state_count();
    for limit in [10, total / 2, total - 1] {
        let serial = Builder::new(Config::new().state_limit(limit))
            .build(&g)
            .unwrap_err();
        let parallel = Builder::new(Config::new().state_limit(limit).parallel(true))
            .build(&g)
            .unwrap_err();
        assert_eq!(parallel.to_string(), serial.to_string());
        assert_eq!(parallel.rule_name(), serial.rule_name());
    }
}
