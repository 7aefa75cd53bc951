//! Token budgets: the completion bound against exhaustive search, budgeted masks against
//! their definition and against the exact set of tokens that can still finish, walks that
//! must end complete within the budget whatever the sampler, rollback and creation errors.
//! The first three run on every backend that compiles the grammar (each bounds completions
//! its own way; the contract is the same).

use std::collections::HashSet;
use std::sync::Arc;

use sieve_matcher::{BackendKind, CompiledGrammar, Matcher, MatcherError, Options, Tokenizer};
use sieve_vocab::Vocabulary;

/// Small grammars (GBNF) with their vocabularies: every byte they use as a token, plus a few
/// longer tokens (some crossing rule boundaries).
const CASES: &[(&str, &str, &[&str])] = &[
    (
        "nesting",
        r#"root ::= "(" root ")" | "x""#,
        &["(", ")", "x", "((", "))", "x)", "(x)", ")))"],
    ),
    (
        "list",
        r#"root ::= "[" ( v ( "," v )* )? "]"
v ::= "1" | "22" | root"#,
        &[
            "[", "]", ",", "1", "2", "[1", "1]", "22", ",[", "]]", "[]", ",1,",
        ],
    ),
    (
        "counted",
        r#"root ::= ( "x" | "yz" ){3,5} "!""#,
        &["x", "y", "z", "!", "xx", "xxx", "yzy", "z!", "x!"],
    ),
    (
        "alternatives",
        r#"root ::= "a" "b"* "c" | "d" long
long ::= "efgh" "ij"{2} | "k""#,
        &[
            "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "bb", "bc", "efgh", "ijij", "dk",
        ],
    ),
    (
        "keys",
        r#"root ::= "{" pair ( "," pair )* "}"
pair ::= "\"" [a-c]+ "\":" [0-9]"#,
        &[
            "{", "}", ",", "\"", ":", "a", "b", "c", "0", "1", "9", "\":", "{\"", "ab", "\":1",
            "},",
        ],
    ),
];

fn vocab(tokens: &[&str]) -> Arc<Vocabulary> {
    let mut list: String = tokens
        .iter()
        .map(|t| serde_json::to_string(t).expect("string") + "\n")
        .collect();
    list.push_str("special:\"</s>\"\n");
    Arc::new(sieve_vocab::plain::parse(list.as_bytes(), &Default::default()).expect("valid list"))
}

fn compile(grammar: &str, tokens: &[&str]) -> Arc<CompiledGrammar> {
    compile_on(grammar, tokens, BackendKind::Earley).expect("the default backend compiles")
}

/// `grammar` on `backend`, `None` when that backend refuses it.
fn compile_on(
    grammar: &str,
    tokens: &[&str],
    backend: BackendKind,
) -> Option<Arc<CompiledGrammar>> {
    let grammar = sieve_gbnf::compile(grammar, &Default::default()).expect("grammar");
    let tokenizer = Arc::new(Tokenizer::new(vocab(tokens)));
    let options = Options {
        backend: backend.into(),
        ..Options::default()
    };
    CompiledGrammar::new(&grammar, tokenizer, &options)
        .ok()
        .map(Arc::new)
}

/// Every case on every backend that compiles it, named `case/backend`; the default backend
/// compiles every case, and every backend at least one.
fn cases_on_every_backend() -> Vec<(
    String,
    &'static str,
    &'static [&'static str],
    Arc<CompiledGrammar>,
)> {
    let mut out = Vec::new();
    for backend in BackendKind::ALL {
        let before = out.len();
        for &(name, grammar, tokens) in CASES {
            if let Some(compiled) = compile_on(grammar, tokens, backend) {
                out.push((format!("{name}/{backend}"), grammar, tokens, compiled));
            } else {
                assert_ne!(backend, BackendKind::Earley, "{name}");
            }
        }
        assert!(out.len() > before, "{backend} compiles none of the cases");
    }
    out
}

fn text_ids(compiled: &CompiledGrammar) -> Vec<u32> {
    let vocab = compiled.vocabulary();
    (0..vocab.n_vocab() as u32)
        .filter(|&id| !vocab.is_special(vocab.token(id).expect("in range")))
        .collect()
}

fn eos(compiled: &CompiledGrammar) -> u32 {
    compiled.vocabulary().eos_ids()[0].index() as u32
}

fn allowed(matcher: &mut Matcher) -> Vec<u32> {
    let mut mask = vec![0u32; matcher.compiled().bitmask_words()];
    matcher.fill_next_token_bitmask(&mut mask).expect("mask");
    let n = matcher.compiled().vocabulary().n_vocab() as u32;
    (0..n)
        .filter(|&t| mask[t as usize / 32] & (1 << (t % 32)) != 0)
        .collect()
}

/// The fewest text tokens that make `matcher`'s output a sentence, by breadth-first search
/// over every token sequence (outputs deduplicated), up to `cap` tokens.
fn exact_min(matcher: &Matcher, ids: &[u32], cap: u32) -> Option<u32> {
    if matcher.can_terminate() {
        return Some(0);
    }
    let mut seen: HashSet<Vec<u8>> = HashSet::new();
    let mut frontier = vec![(Vec::new(), matcher.clone())];
    for level in 1..=cap {
        let mut next = Vec::new();
        for (bytes, m) in &frontier {
            for &id in ids {
                let mut m = m.clone();
                if m.accept_token(id).is_err() {
                    continue;
                }
                let token = m.compiled().vocabulary().token(id).expect("in range");
                let mut grown: Vec<u8> = bytes.clone();
                grown.extend_from_slice(m.compiled().vocabulary().bytes(token));
                if !seen.insert(grown.clone()) {
                    continue;
                }
                if m.can_terminate() {
                    return Some(level);
                }
                next.push((grown, m));
            }
        }
        frontier = next;
    }
    None
}

/// An unbudgeted matcher whose output is `bytes`.
fn unbudgeted_at(compiled: &Arc<CompiledGrammar>, bytes: &[u8]) -> Matcher {
    let mut m = Matcher::new(compiled.clone());
    m.accept_bytes(bytes).expect("a prefix of a sentence");
    m
}

/// The bound after `id` from the output `bytes` (`None` if the grammar refuses `id`).
fn bound_after(compiled: &Arc<CompiledGrammar>, bytes: &[u8], id: u32) -> Option<Option<u32>> {
    let mut m = unbudgeted_at(compiled, bytes);
    m.accept_token(id).ok()?;
    Some(m.completion_bound())
}

fn token_bytes(compiled: &CompiledGrammar, id: u32) -> &[u8] {
    let vocab = compiled.vocabulary();
    vocab.bytes(vocab.token(id).expect("in range"))
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[test]
fn the_bound_is_an_upper_bound_with_descent_at_every_state_of_random_walks() {
    for (name, _, _, compiled) in cases_on_every_backend() {
        let name = name.as_str();
        let ids = text_ids(&compiled);
        for seed in 1..=6u64 {
            let mut rng = Rng(seed * 0x9e37_79b9);
            let mut m = Matcher::new(compiled.clone());
            let mut out = Vec::new();
            for _ in 0..12 {
                let bound = m.completion_bound().expect("every byte is a token");
                let exact = exact_min(&m, &ids, bound).unwrap_or_else(|| {
                    panic!("{name}: no completion within the bound {bound} after {out:?}")
                });
                assert!(exact <= bound, "{name}");
                assert_eq!(
                    bound == 0,
                    m.can_terminate(),
                    "{name}: bound 0 iff a sentence"
                );
                if bound > 0 {
                    let descends = ids.iter().any(|&id| {
                        bound_after(&compiled, &out, id)
                            .is_some_and(|a| a.is_some_and(|a| a < bound))
                    });
                    assert!(
                        descends,
                        "{name}: no token lowers the bound {bound} after {out:?}"
                    );
                }
                let choices: Vec<u32> = allowed(&mut m)
                    .into_iter()
                    .filter(|&t| t != eos(&compiled))
                    .collect();
                if choices.is_empty() {
                    break;
                }
                let pick = choices[rng.below(choices.len())];
                m.accept_token(pick).expect("allowed");
                out.extend_from_slice(token_bytes(&compiled, pick));
            }
        }
    }
}

/// Checks the budgeted mask of `m` (output `out`, `remaining` tokens left) against its
/// definition and against exhaustive search; returns how many tokens it forbids that could
/// still have finished in time.
fn check_budgeted_mask(
    name: &str,
    compiled: &Arc<CompiledGrammar>,
    m: &mut Matcher,
    out: &[u8],
    ids: &[u32],
) -> usize {
    let remaining = m.remaining_tokens().expect("budgeted");
    let mask = allowed(m);
    let plain = allowed(&mut unbudgeted_at(compiled, out));
    let mut forbidden_live = 0;
    for &id in ids {
        let Some(after) = bound_after(compiled, out, id) else {
            assert!(
                !mask.contains(&id),
                "{name}: {id} is not even in the grammar"
            );
            continue;
        };
        assert!(plain.contains(&id));
        // The definition: allowed iff the bound after it leaves room for EOS.
        let by_bound = after.is_some_and(|a| u64::from(a) + 2 <= u64::from(remaining));
        assert_eq!(
            mask.contains(&id),
            by_bound,
            "{name}: token {id} after {out:?}, {remaining} left"
        );
        // Soundness against exhaustive search: every allowed token can still finish in time.
        let mut next = unbudgeted_at(compiled, out);
        next.accept_token(id).expect("in the grammar");
        let cap = remaining.saturating_sub(2);
        let exact = exact_min(&next, ids, cap);
        if by_bound {
            assert!(
                exact.is_some(),
                "{name}: {id} allowed but cannot finish in {cap} tokens"
            );
        } else if exact.is_some() {
            forbidden_live += 1;
        }
    }
    let eos = eos(compiled);
    assert_eq!(
        mask.contains(&eos),
        m.can_terminate() && remaining >= 1,
        "{name}: EOS"
    );
    assert!(
        !mask.is_empty(),
        "{name}: empty budgeted mask after {out:?}"
    );
    forbidden_live
}

#[test]
fn budgeted_masks_match_their_definition_and_never_allow_a_token_that_cannot_finish() {
    let mut forbidden_live = 0;
    for (name, _, _, compiled) in cases_on_every_backend() {
        let name = name.as_str();
        let ids = text_ids(&compiled);
        let min = Matcher::new(compiled.clone())
            .completion_bound()
            .expect("bounded")
            + 1;
        for budget in [min, min + 1, min + 3] {
            for seed in 1..=3u64 {
                let mut rng = Rng(seed * 0x2545_f491 + u64::from(budget));
                let mut m = Matcher::with_budget(compiled.clone(), budget).expect("feasible");
                let mut out = Vec::new();
                loop {
                    forbidden_live += check_budgeted_mask(name, &compiled, &mut m, &out, &ids);
                    let choices = allowed(&mut m);
                    let pick = choices[rng.below(choices.len())];
                    m.accept_token(pick).expect("allowed");
                    if m.is_terminated() {
                        break;
                    }
                    out.extend_from_slice(token_bytes(&compiled, pick));
                }
                assert!(m.steps() <= budget as usize, "{name}");
            }
        }
    }
    // Not an invariant, a figure: the bound counts single-byte tokens, so it is loose where
    // longer tokens finish sooner.
    eprintln!("tokens forbidden that could still have finished: {forbidden_live}");
}

/// A sampler: uniform, or the adversary that always takes the allowed text token leaving the
/// most work (EOS only when nothing else is allowed).
fn pick(m: &mut Matcher, out: &[u8], rng: &mut Rng, adversary: bool) -> u32 {
    let compiled = m.compiled().clone();
    let choices = allowed(m);
    assert!(!choices.is_empty(), "empty budgeted mask after {out:?}");
    if !adversary {
        return choices[rng.below(choices.len())];
    }
    let eos = eos(&compiled);
    choices
        .iter()
        .copied()
        .filter(|&t| t != eos)
        .max_by_key(|&t| bound_after(&compiled, out, t).flatten().unwrap_or(0))
        .unwrap_or(eos)
}

#[test]
fn every_walk_ends_complete_within_the_budget_whatever_the_sampler() {
    for (name, grammar, _, compiled) in cases_on_every_backend() {
        let name = name.as_str();
        let min = Matcher::new(compiled.clone())
            .completion_bound()
            .expect("bounded")
            + 1;
        for budget in min..=min + min / 2 + 2 {
            for adversary in [false, true] {
                for seed in 1..=8u64 {
                    let mut rng = Rng(seed * 0x5851_f42d + u64::from(budget));
                    let mut m = Matcher::with_budget(compiled.clone(), budget).expect("feasible");
                    let mut out = Vec::new();
                    let reference =
                        sieve_gbnf::compile(grammar, &Default::default()).expect("grammar");
                    let oracle = sieve_ir::reference::Recognizer::new(&reference).expect("small");
                    while !m.is_terminated() {
                        let t = pick(&mut m, &out, &mut rng, adversary);
                        m.accept_token(t).expect("allowed");
                        if !m.is_terminated() {
                            out.extend_from_slice(token_bytes(&compiled, t));
                        }
                    }
                    assert!(m.steps() <= budget as usize, "{name}: {} steps", m.steps());
                    assert!(oracle.accepts(&out), "{name}: {out:?} is not a sentence");
                }
            }
        }
    }
}

#[test]
fn rollback_gives_the_tokens_back() {
    let (_, grammar, tokens) = CASES[0];
    let compiled = compile(grammar, tokens);
    let mut m = Matcher::with_budget(compiled.clone(), 9).expect("feasible");
    let before = allowed(&mut m);
    let ids = text_ids(&compiled);
    let open = ids
        .iter()
        .copied()
        .find(|&t| token_bytes(&compiled, t) == b"((")
        .expect("token");
    m.accept_token(open).expect("allowed");
    assert_eq!(m.remaining_tokens(), Some(8));
    m.accept_token(open).expect("allowed");
    let tight = allowed(&mut m);
    assert_ne!(tight, before);
    m.rollback(2).expect("two steps");
    assert_eq!(m.remaining_tokens(), Some(9));
    assert_eq!(allowed(&mut m), before);
}

#[test]
fn creation_fails_below_the_minimum_and_over_budget_tokens_are_refused() {
    let (_, grammar, tokens) = CASES[3];
    let compiled = compile(grammar, tokens);
    let min = Matcher::new(compiled.clone())
        .completion_bound()
        .expect("bounded")
        + 1;
    match Matcher::with_budget(compiled.clone(), min - 1) {
        Err(MatcherError::BudgetTooSmall { max_tokens, needed }) => {
            assert_eq!((max_tokens, needed), (min - 1, Some(min)));
        }
        other => panic!("expected BudgetTooSmall, got {other:?}"),
    }
    let mut m = Matcher::with_budget(compiled.clone(), min).expect("feasible");
    let ids = text_ids(&compiled);
    let token = |text: &[u8]| {
        ids.iter()
            .copied()
            .find(|&t| token_bytes(&compiled, t) == text)
            .expect("token")
    };
    // The minimum is "dk" EOS; "a" would need "c" and EOS after it.
    assert_eq!(min, 2);
    let err = m.accept_token(token(b"a")).expect_err("over budget");
    assert!(matches!(err, MatcherError::OverBudget { .. }), "{err}");
    assert_eq!(m.steps(), 0);
    assert_eq!(m.validate_tokens(&[token(b"a")]).expect("no limit"), 0);
    let finish = [token(b"dk"), eos(&compiled)];
    assert_eq!(m.validate_tokens(&finish).expect("no limit"), 2);
    m.accept_token(token(b"d"))
        .expect_err("\"d\" \"k\" EOS is three tokens");
    m.accept_token(finish[0]).expect("within the budget");
    assert_eq!(m.remaining_tokens(), Some(1));
}

#[test]
fn bytes_spend_no_token_but_must_leave_room_for_a_completion() {
    let (_, grammar, tokens) = CASES[0];
    let compiled = compile(grammar, tokens);
    assert_eq!(Matcher::new(compiled.clone()).remaining_tokens(), None);
    // The empty output's bound is 1 ("x"). After "(", "x)" fits; after "((((", the bound
    // counts "x" and four ")" (tokens crossing nesting levels are not counted): 5 + EOS > 4.
    let mut m = Matcher::with_budget(compiled.clone(), 4).expect("feasible");
    m.accept_bytes(b"(").expect("\"(x)\" and EOS still fit");
    assert_eq!(m.remaining_tokens(), Some(4));
    let err = m
        .accept_bytes(b"(((")
        .expect_err("five tokens and EOS do not fit");
    assert!(matches!(err, MatcherError::OverBudget { .. }), "{err}");
    assert_eq!(m.steps(), 1);
    m.rollback(1).expect("one step");
    assert_eq!(m.remaining_tokens(), Some(4));
    assert_eq!(m.completion_bound(), Some(1));
}
