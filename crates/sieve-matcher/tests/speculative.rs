//! Draft masks: every row of a draft chain or tree equals the mask of a matcher that accepted
//! the node's path (and, on a sample of nodes, the brute-force mask), on every shipped grammar
//! and every backend that takes it, with GPT-2's vocabulary, with and without a token budget;
//! the matcher is left exactly as found, on success and on every error; batches equal one
//! matcher at a time.

use std::sync::Arc;

use sieve_matcher::{
    fill_draft_tree_bitmasks_batch, validate_tokens_batch, BackendChoice, CompileError,
    CompiledGrammar, DraftError, DraftTree, DraftTreeError, Matcher, MatcherError, NodeState,
    Options, Tokenizer, PARALLEL_MIN_BATCH,
};
use sieve_testkit::{all_grammar_files, compile_any};
use sieve_vocab::Vocabulary;

/// Fills the words a call must not write, to see that it left them alone.
const SENTINEL: u32 = 0xDEAD_BEEF;

fn gpt2() -> Arc<Tokenizer> {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    Arc::new(Tokenizer::new(vocab))
}

fn compile_gbnf(gbnf: &str, tokenizer: &Arc<Tokenizer>, options: &Options) -> Arc<CompiledGrammar> {
    let grammar = sieve_gbnf::compile(gbnf, &Default::default()).expect("valid GBNF");
    Arc::new(CompiledGrammar::new(&grammar, tokenizer.clone(), options).expect("compiles"))
}

/// GPT-2's id of the token whose bytes are `text`.
fn id(compiled: &CompiledGrammar, text: &str) -> u32 {
    let vocab = compiled.vocabulary();
    (0..vocab.n_vocab() as u32)
        .find(|&t| vocab.bytes(vocab.token(t).expect("in range")) == text.as_bytes())
        .unwrap_or_else(|| panic!("{text:?} is a GPT-2 token"))
}

fn eos(compiled: &CompiledGrammar) -> u32 {
    compiled.vocabulary().eos_ids()[0].as_u32()
}

fn mask_of(matcher: &mut Matcher) -> Vec<u32> {
    let mut mask = vec![0u32; matcher.compiled().bitmask_words()];
    matcher
        .fill_next_token_bitmask(&mut mask)
        .expect("no limit");
    mask
}

fn has(mask: &[u32], id: u32) -> bool {
    mask[id as usize / 32] & (1 << (id % 32)) != 0
}

/// The brute-force mask: every id validated on its own.
fn oracle_mask(matcher: &mut Matcher) -> Vec<u32> {
    let n = matcher.compiled().vocabulary().n_vocab();
    let mut mask = vec![0u32; matcher.compiled().bitmask_words()];
    for id in 0..n as u32 {
        if matcher.validate_tokens(&[id]).expect("no limit") == 1 {
            mask[id as usize / 32] |= 1 << (id % 32);
        }
    }
    mask
}

/// Everything observable about a matcher: output, steps, budget, termination, its mask.
fn snapshot(matcher: &mut Matcher) -> (usize, usize, Option<u32>, bool, bool, Vec<u32>) {
    (
        matcher.output_len(),
        matcher.steps(),
        matcher.remaining_tokens(),
        matcher.is_terminated(),
        matcher.can_terminate(),
        mask_of(matcher),
    )
}

/// A small deterministic generator (splitmix64), so failures reproduce from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A random draft tree of `nodes` nodes from `matcher`'s state: each node hangs under a
/// random earlier node (most often a recent one, so paths get deep) and is, by turns, a
/// token its parent's mask allows (most of the time), EOS, or any id at all (mostly refused).
fn random_tree(matcher: &Matcher, nodes: usize, rng: &mut Rng) -> DraftTree {
    let compiled = matcher.compiled().clone();
    let n_vocab = compiled.vocabulary().n_vocab();
    let mut states: Vec<Option<Matcher>> = vec![Some(matcher.clone())];
    let mut tokens = vec![0u32];
    let mut parents = vec![None];
    for node in 1..nodes {
        let parent = if rng.below(3) == 0 {
            rng.below(node)
        } else {
            node - 1 - rng.below(node.min(3))
        };
        let token = match (&mut states[parent], rng.below(10)) {
            (_, 0) => rng.below(n_vocab) as u32,
            (_, 1) => eos(&compiled),
            (Some(state), _) => {
                let allowed = compiled.allowed_tokens(&mask_of(state));
                match allowed.len() {
                    0 => rng.below(n_vocab) as u32,
                    n => allowed[rng.below(n)].as_u32(),
                }
            }
            (None, _) => rng.below(n_vocab) as u32,
        };
        let state = states[parent].clone().and_then(|mut m| {
            m.accept_token(token).ok()?;
            Some(m)
        });
        states.push(state);
        tokens.push(token);
        parents.push(Some(parent));
    }
    DraftTree::from_parents(&tokens, &parents).expect("a tree")
}

/// The path from the root to `node`, root excluded, in order.
fn path(parents: &[Option<usize>], node: usize) -> Vec<usize> {
    let mut path = Vec::new();
    let mut at = node;
    while let Some(parent) = parents[at] {
        path.push(at);
        at = parent;
    }
    path.reverse();
    path
}

fn parents_of(tree: &DraftTree) -> Vec<Option<usize>> {
    let mut parents = vec![None; tree.nodes()];
    for node in 0..tree.nodes() {
        for child in tree.children(node) {
            parents[child] = Some(node);
        }
    }
    parents
}

/// Checks `tree`'s masks from `matcher` node by node against a copy of the matcher that
/// accepted the node's path (and against brute force on the nodes `oracle` picks), and that
/// the matcher is left as it was. Returns the number of accepted nodes.
fn check_tree(
    matcher: &mut Matcher,
    tree: &DraftTree,
    oracle: &mut dyn FnMut(usize) -> bool,
    label: &str,
) -> usize {
    let words = matcher.compiled().bitmask_words();
    let before = snapshot(matcher);
    let mut rows = vec![SENTINEL; (tree.nodes() + 1) * words];
    let outcome = matcher
        .fill_draft_tree_bitmasks(tree, &mut rows, words)
        .expect("no limit");
    assert_eq!(
        snapshot(matcher),
        before,
        "{label}: the matcher is unchanged"
    );
    assert!(
        rows[tree.nodes() * words..].iter().all(|&w| w == SENTINEL),
        "{label}: words past the rows are untouched"
    );
    let parents = parents_of(tree);
    let mut accepted = 0;
    for node in 0..tree.nodes() {
        let row = &rows[node * words..(node + 1) * words];
        let mut reference = matcher.clone();
        let mut state = NodeState::Accepted;
        for (i, &step) in path(&parents, node).iter().enumerate() {
            let token = tree.token(step).expect("not the root");
            if reference.accept_token(token).is_err() {
                let last = i + 1 == path(&parents, node).len();
                state = if last {
                    NodeState::Rejected
                } else {
                    NodeState::Unreached
                };
                break;
            }
        }
        assert_eq!(outcome.states()[node], state, "{label}: node {node}");
        if let Some(parent) = parents[node] {
            let parent_row = &rows[parent * words..(parent + 1) * words];
            let token = tree.token(node).expect("not the root");
            let in_parent = has(parent_row, token);
            assert_eq!(
                state == NodeState::Accepted,
                in_parent,
                "{label}: node {node} is accepted iff its parent's row allows its token"
            );
        }
        if state == NodeState::Accepted {
            accepted += 1;
            let expected = mask_of(&mut reference);
            assert!(row == expected, "{label}: node {node}'s row");
            if oracle(node) {
                assert!(
                    row == oracle_mask(&mut reference),
                    "{label}: node {node}'s row against brute force"
                );
            }
        } else {
            assert!(row.iter().all(|&w| w == 0), "{label}: node {node} is zero");
        }
    }
    accepted
}

/// A chain's masks equal those of the tree of the same path, and stop where the matcher
/// refuses a token.
fn check_chain(matcher: &mut Matcher, draft: &[u32], label: &str) {
    let words = matcher.compiled().bitmask_words();
    let before = snapshot(matcher);
    let mut rows = vec![SENTINEL; (draft.len() + 2) * words];
    let outcome = matcher
        .fill_draft_bitmasks(draft, &mut rows, words)
        .expect("no limit");
    assert_eq!(
        snapshot(matcher),
        before,
        "{label}: the matcher is unchanged"
    );
    assert_eq!(
        outcome.accepted,
        matcher.validate_tokens(draft).expect("no limit"),
        "{label}: accepted prefix"
    );
    let mut tree_rows = vec![0u32; (draft.len() + 1) * words];
    let tree = matcher
        .fill_draft_tree_bitmasks(&DraftTree::chain(draft), &mut tree_rows, words)
        .expect("no limit");
    assert!(
        rows[..tree_rows.len()] == tree_rows,
        "{label}: chain = tree"
    );
    assert!(rows[tree_rows.len()..].iter().all(|&w| w == SENTINEL));
    for i in 0..=draft.len() {
        assert_eq!(tree.is_accepted(i), i <= outcome.accepted, "{label}: {i}");
    }
    let mut reference = matcher.clone();
    for &token in &draft[..outcome.accepted] {
        reference.accept_token(token).expect("accepted");
    }
    match draft.get(outcome.accepted) {
        Some(&refused) => assert_eq!(
            outcome.rejection,
            reference.accept_token(refused).err(),
            "{label}: the reason given is accept_token's"
        ),
        None => assert_eq!(outcome.rejection, None),
    }
}

/// A budget a little over the least the grammar needs, so it binds along the drafts.
fn tight_budget(compiled: &Arc<CompiledGrammar>) -> Option<Matcher> {
    let needed = match Matcher::with_budget(compiled.clone(), 1) {
        Ok(matcher) => return Some(matcher),
        Err(MatcherError::BudgetTooSmall {
            needed: Some(needed),
            ..
        }) => needed,
        Err(_) => return None,
    };
    Matcher::with_budget(compiled.clone(), needed + 3).ok()
}

/// Draft trees checked against accepted paths on every shipped grammar that `backend` takes
/// (the draft API goes through the seam, so it must hold on each backend): each grammar's
/// matcher, plain and with a tight budget, from the start and from a few tokens in. One test
/// per backend, so the harness runs them side by side.
fn draft_trees_equal_accepted_paths_with_gpt2(backend: BackendChoice) {
    let tokenizer = gpt2();
    let files = all_grammar_files();
    assert!(files.len() >= 30);
    let mut rng = Rng(0x5EED);
    // Nodes checked, nodes accepted, chains checked.
    let mut total = (0, 0, 0);
    // Grammars run, skipped (refused), run with a budget too.
    let (mut run, mut skipped, mut budgeted) = (0, 0, 0);
    for path in files {
        let grammar = compile_any(&path);
        let name = path.file_name().expect("a file").to_string_lossy();
        let options = Options {
            backend,
            ..Options::default()
        };
        let compiled = match CompiledGrammar::new(&grammar, tokenizer.clone(), &options) {
            Ok(compiled) => Arc::new(compiled),
            // A backend that refuses the grammar (not LR(1), recursive, token limits on a
            // backend other than Earley) is skipped.
            Err(CompileError::Lr(_) | CompileError::TokenDfa(_)) => {
                skipped += 1;
                continue;
            }
            Err(CompileError::TokenLimit(_)) if backend != BackendChoice::Earley => {
                skipped += 1;
                continue;
            }
            Err(error) => panic!("{name} on {}: {error}", backend.name()),
        };
        run += 1;
        let mut matchers = vec![("plain", Matcher::new(compiled.clone()))];
        if let Some(matcher) = tight_budget(&compiled) {
            budgeted += 1;
            matchers.push(("budget", matcher));
        }
        for (kind, mut matcher) in matchers {
            // From the start, then from a few tokens in.
            for round in 0..3 {
                let label = format!("{name} {} {kind} round {round}", backend.name());
                let tree = random_tree(&matcher, 12 + rng.below(12), &mut rng);
                let mut oracle = |node: usize| node % 4 == 0;
                total.1 += check_tree(&mut matcher, &tree, &mut oracle, &label);
                total.0 += tree.nodes();
                let chain: Vec<u32> = path_tokens(&tree, rng.below(tree.nodes()));
                check_chain(&mut matcher, &chain, &label);
                total.2 += 1;
                let allowed = compiled.allowed_tokens(&mask_of(&mut matcher));
                let Some(next) = allowed
                    .iter()
                    .find(|t| !compiled.vocabulary().is_special(**t))
                else {
                    break;
                };
                matcher.accept_token(next.as_u32()).expect("allowed");
            }
        }
    }
    if backend == BackendChoice::Earley {
        assert_eq!(skipped, 0, "Earley takes every grammar");
    }
    let backend = backend.name();
    eprintln!(
        "{backend}: grammars run {run}, skipped {skipped}, budgeted {budgeted}; nodes, accepted, chains: {total:?}"
    );
    assert!(run >= 20, "{backend} ran on {run} grammars only");
    // Every backend bounds completion, so a budget is set on every grammar it takes.
    assert_eq!(budgeted, run, "{backend}: a budget on every grammar");
    let (nodes, accepted, chains) = total;
    assert!(nodes > 1500 && accepted > nodes / 3, "{backend}: {total:?}");
    assert!(chains > 100, "{backend}: {total:?}");
}

#[test]
fn draft_trees_equal_accepted_paths_on_every_grammar_with_earley() {
    draft_trees_equal_accepted_paths_with_gpt2(BackendChoice::Earley);
}

#[test]
fn draft_trees_equal_accepted_paths_on_every_grammar_with_lr() {
    draft_trees_equal_accepted_paths_with_gpt2(BackendChoice::Lr);
}

#[test]
fn draft_trees_equal_accepted_paths_on_every_grammar_with_token_dfa() {
    draft_trees_equal_accepted_paths_with_gpt2(BackendChoice::TokenDfa);
}

/// The tokens of the path from the root to `node`, then the token of `node`'s last child, if
/// any (a random draw, so some chains end refused).
fn path_tokens(tree: &DraftTree, node: usize) -> Vec<u32> {
    let parents = parents_of(tree);
    let mut tokens: Vec<u32> = path(&parents, node)
        .into_iter()
        .map(|n| tree.token(n).expect("not the root"))
        .collect();
    if let Some(child) = tree.children(node).last() {
        tokens.push(tree.token(child).expect("not the root"));
    }
    tokens
}

const OBJECT: &str = r#"root ::= "{" ws pair (ws "," ws pair)* ws "}"
pair ::= str ws ":" ws value
value ::= str | [0-9]+ | "true" | "false" | "null" | root
str ::= "\"" [a-z ]* "\""
ws ::= [ \n]*"#;

#[test]
fn a_chain_stops_at_the_first_refused_token_and_says_why() {
    let tokenizer = gpt2();
    let compiled = compile_gbnf(r#"root ::= "yes" | "no""#, &tokenizer, &Options::default());
    let mut matcher = Matcher::new(compiled.clone());
    let words = compiled.bitmask_words();
    let draft = [id(&compiled, "y"), id(&compiled, "es"), id(&compiled, "no")];
    let mut rows = vec![SENTINEL; 4 * words];
    let outcome = matcher
        .fill_draft_bitmasks(&draft, &mut rows, words)
        .unwrap();
    assert_eq!(outcome.accepted, 2);
    assert!(matches!(
        outcome.rejection,
        Some(MatcherError::SpecialNotAllowed { .. } | MatcherError::TokenNotAllowed { .. })
    ));
    // Row 2 (after "yes") allows EOS only; row 3 is zero.
    let after = compiled.allowed_tokens(&rows[2 * words..3 * words]);
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].as_u32(), eos(&compiled));
    assert!(rows[3 * words..].iter().all(|&w| w == 0));
    check_chain(&mut matcher, &draft, "yes/no");
    check_chain(&mut matcher, &[], "empty draft");
    check_chain(
        &mut matcher,
        &[id(&compiled, "no"), id(&compiled, "no")],
        "no no",
    );
}

#[test]
fn eos_in_the_draft_terminates_the_path_and_later_tokens_are_refused() {
    let tokenizer = gpt2();
    let compiled = compile_gbnf(r#"root ::= "yes" | "no""#, &tokenizer, &Options::default());
    let mut matcher = Matcher::new(compiled.clone());
    let words = compiled.bitmask_words();
    let (no, end, y) = (id(&compiled, "no"), eos(&compiled), id(&compiled, "y"));
    let mut rows = vec![SENTINEL; 4 * words];
    let outcome = matcher
        .fill_draft_bitmasks(&[no, end, y], &mut rows, words)
        .unwrap();
    assert_eq!(outcome.accepted, 2);
    assert_eq!(outcome.rejection, Some(MatcherError::Terminated));
    assert!(has(&rows[words..2 * words], end));
    assert!(
        rows[2 * words..].iter().all(|&w| w == 0),
        "terminated: zero"
    );
    // EOS before the output is complete is refused, and EOS twice under one parent.
    check_chain(&mut matcher, &[end], "early EOS");
    let tree = DraftTree::from_parents(
        &[0, no, end, end, y],
        &[None, Some(0), Some(1), Some(1), Some(2)],
    )
    .unwrap();
    let mut never = |_| false;
    assert_eq!(check_tree(&mut matcher, &tree, &mut never, "eos tree"), 4);
}

#[test]
fn a_terminated_matcher_gives_zero_rows_and_refuses_every_draft_token() {
    let tokenizer = gpt2();
    let compiled = compile_gbnf(r#"root ::= "yes" | "no""#, &tokenizer, &Options::default());
    let mut matcher = Matcher::new(compiled.clone());
    matcher.accept_token(id(&compiled, "no")).unwrap();
    matcher.accept_token(eos(&compiled)).unwrap();
    let words = compiled.bitmask_words();
    let mut rows = vec![SENTINEL; 3 * words];
    let outcome = matcher
        .fill_draft_bitmasks(&[eos(&compiled), id(&compiled, "y")], &mut rows, words)
        .unwrap();
    assert_eq!(outcome.accepted, 0);
    assert_eq!(outcome.rejection, Some(MatcherError::Terminated));
    assert!(rows.iter().all(|&w| w == 0));
    assert!(matcher.is_terminated());
    let tree = DraftTree::chain(&[eos(&compiled), id(&compiled, "y")]);
    let outcome = matcher
        .fill_draft_tree_bitmasks(&tree, &mut rows, words)
        .unwrap();
    use NodeState::*;
    assert_eq!(outcome.states(), [Accepted, Rejected, Unreached]);
    let mut never = |_| false;
    check_tree(&mut matcher, &tree, &mut never, "terminated");
}

#[test]
fn budgets_are_spent_along_each_path() {
    let tokenizer = gpt2();
    let compiled = compile_gbnf(r#"root ::= [a-z]+"#, &tokenizer, &Options::default());
    let mut matcher = Matcher::with_budget(compiled.clone(), 3).unwrap();
    let (a, b, c, end) = (
        id(&compiled, "a"),
        id(&compiled, "b"),
        id(&compiled, "c"),
        eos(&compiled),
    );
    // Three tokens in all: "a" "b" EOS fits, "a" "b" "c" does not.
    let words = compiled.bitmask_words();
    let mut rows = vec![SENTINEL; 4 * words];
    let outcome = matcher
        .fill_draft_bitmasks(&[a, b, c], &mut rows, words)
        .unwrap();
    assert_eq!(outcome.accepted, 2);
    assert!(matches!(
        outcome.rejection,
        Some(MatcherError::OverBudget { remaining: 1, .. })
    ));
    let last = compiled.allowed_tokens(&rows[2 * words..3 * words]);
    assert_eq!(last.iter().map(|t| t.as_u32()).collect::<Vec<_>>(), [end]);
    let tree = DraftTree::from_parents(
        &[0, a, b, c, end, end, b],
        &[None, Some(0), Some(1), Some(2), Some(2), Some(1), Some(5)],
    )
    .unwrap();
    let mut all = |_| true;
    assert_eq!(check_tree(&mut matcher, &tree, &mut all, "budget"), 5);
    assert_eq!(matcher.remaining_tokens(), Some(3));
}

#[test]
fn unknown_ids_and_short_buffers_are_refused_untouched() {
    let tokenizer = gpt2();
    let compiled = compile_gbnf(OBJECT, &tokenizer, &Options::default());
    let n_vocab = compiled.vocabulary().n_vocab();
    let words = compiled.bitmask_words();
    let mut matcher = Matcher::new(compiled.clone());
    matcher.accept_bytes(b"{\"a\":").unwrap();
    let before = snapshot(&mut matcher);
    let good = id(&compiled, "1");
    let bad = n_vocab as u32 + 5;
    let mut rows = vec![SENTINEL; 8 * words];
    let unknown = DraftError::UnknownToken {
        node: 3,
        id: bad,
        n_vocab,
    };
    assert_eq!(
        matcher.fill_draft_bitmasks(&[good, good, bad], &mut rows, words),
        Err(unknown.clone())
    );
    let tree =
        DraftTree::from_parents(&[0, good, good, bad], &[None, Some(0), Some(0), Some(2)]).unwrap();
    assert_eq!(
        matcher.fill_draft_tree_bitmasks(&tree, &mut rows, words),
        Err(unknown)
    );
    assert_eq!(
        matcher.fill_draft_bitmasks(&[good], &mut rows, words - 1),
        Err(DraftError::RowTooShort {
            words_per_row: words - 1,
            needed: words
        })
    );
    assert_eq!(
        matcher.fill_draft_tree_bitmasks(&DraftTree::chain(&[good; 8]), &mut rows, words),
        Err(DraftError::BitmaskTooSmall {
            given: 8 * words,
            needed: 9 * words,
            rows: 9,
            words_per_row: words
        })
    );
    assert!(rows.iter().all(|&w| w == SENTINEL), "nothing written");
    assert_eq!(snapshot(&mut matcher), before);
}

#[test]
fn padded_rows_are_zero_past_the_vocabulary() {
    let tokenizer = gpt2();
    let compiled = compile_gbnf(OBJECT, &tokenizer, &Options::default());
    let words = compiled.bitmask_words();
    let mut matcher = Matcher::new(compiled.clone());
    let draft = [
        id(&compiled, "{\""),
        id(&compiled, "a"),
        id(&compiled, "\":"),
    ];
    let mut padded = vec![SENTINEL; 4 * (words + 3)];
    let outcome = matcher
        .fill_draft_bitmasks(&draft, &mut padded, words + 3)
        .unwrap();
    assert_eq!(outcome.accepted, 3);
    let mut tight = vec![0u32; 4 * words];
    matcher
        .fill_draft_bitmasks(&draft, &mut tight, words)
        .unwrap();
    for (wide, narrow) in padded
        .chunks_exact(words + 3)
        .zip(tight.chunks_exact(words))
    {
        assert_eq!(&wide[..words], narrow);
        assert_eq!(wide[words..], [0, 0, 0]);
    }
}

#[test]
fn a_limit_midway_zeroes_the_rows_and_leaves_the_matcher_unchanged() {
    let tokenizer = gpt2();
    // Three bytes of history: the second token of "ab" "cd" goes past it.
    let tight = Options {
        earley: sieve_earley::Config {
            max_bytes_history: 3,
            ..sieve_earley::Config::default()
        },
        ..Options::default()
    };
    let compiled = compile_gbnf(r#"root ::= [a-z]+"#, &tokenizer, &tight);
    let words = compiled.bitmask_words();
    let mut matcher = Matcher::new(compiled.clone());
    let before = snapshot(&mut matcher);
    let (ab, cd) = (id(&compiled, "ab"), id(&compiled, "cd"));
    let mut rows = vec![SENTINEL; 4 * words];
    let chain = matcher.fill_draft_bitmasks(&[ab, cd], &mut rows, words);
    assert!(
        matches!(chain, Err(DraftError::Matcher(MatcherError::Limit(_)))),
        "{chain:?}"
    );
    assert!(rows[..3 * words].iter().all(|&w| w == 0));
    assert!(rows[3 * words..].iter().all(|&w| w == SENTINEL));
    assert_eq!(snapshot(&mut matcher), before);
    let tree =
        DraftTree::from_parents(&[0, ab, ab, cd], &[None, Some(0), Some(0), Some(2)]).unwrap();
    rows.fill(SENTINEL);
    let walked = matcher.fill_draft_tree_bitmasks(&tree, &mut rows, words);
    assert!(matches!(
        walked,
        Err(DraftError::Matcher(MatcherError::Limit(_)))
    ));
    assert!(rows[..4 * words].iter().all(|&w| w == 0));
    assert_eq!(snapshot(&mut matcher), before);
}

#[test]
fn trees_from_parents_and_from_child_and_sibling_links_agree() {
    // root ─┬─ 1 ─┬─ 3
    //       │     └─ 4 ── 5
    //       └─ 2
    let tokens = [0, 10, 20, 30, 40, 50];
    let parents = [None, Some(0), Some(0), Some(1), Some(1), Some(4)];
    let by_parents = DraftTree::from_parents(&tokens, &parents).unwrap();
    let next_token = [1, 3, -1, -1, 5, -1];
    let next_sibling = [-1, 2, -1, 4, -1, -1];
    let by_links =
        DraftTree::from_next_token_and_sibling(&tokens, &next_token, &next_sibling).unwrap();
    assert_eq!(by_parents, by_links);
    assert_eq!(by_parents.children(1).collect::<Vec<_>>(), [3, 4]);
    assert_eq!(by_parents.token(0), None);
    assert_eq!(by_parents.token(5), Some(50));
    let chain = DraftTree::chain(&[10, 20]);
    let chain_by_parents =
        DraftTree::from_parents(&[0, 10, 20], &[None, Some(0), Some(1)]).unwrap();
    assert_eq!(chain, chain_by_parents);
}

#[test]
fn malformed_trees_are_refused_with_the_reason() {
    use DraftTreeError::*;
    let links = DraftTree::from_next_token_and_sibling;
    assert_eq!(DraftTree::from_parents(&[], &[]), Err(Empty));
    assert_eq!(
        DraftTree::from_parents(&[0, 1], &[None]),
        Err(LengthMismatch {
            tokens: 2,
            links: 1
        })
    );
    assert_eq!(DraftTree::from_parents(&[0], &[Some(0)]), Err(RootLinked));
    assert_eq!(
        DraftTree::from_parents(&[0, 1], &[None, None]),
        Err(NoParent { node: 1 })
    );
    assert_eq!(
        DraftTree::from_parents(&[0, 1, 2], &[None, Some(2), Some(0)]),
        Err(ParentNotBefore { node: 1, parent: 2 })
    );
    assert_eq!(links(&[], &[], &[]), Err(Empty));
    assert_eq!(
        links(&[0, 1], &[1, -1], &[-1]),
        Err(LengthMismatch {
            tokens: 2,
            links: 1
        })
    );
    assert_eq!(links(&[0, 1], &[1, -1], &[1, -1]), Err(RootLinked));
    assert_eq!(
        links(&[0, 1], &[2, -1], &[-1, -1]),
        Err(LinkOutOfRange {
            node: 0,
            target: 2,
            nodes: 2
        })
    );
    assert_eq!(
        links(&[0, 1], &[1, 0], &[-1, -1]),
        Err(LinkOutOfRange {
            node: 1,
            target: 0,
            nodes: 2
        })
    );
    // A cycle: 1's child is 2, 2's child is 1.
    assert_eq!(
        links(&[0, 1, 2], &[1, 2, 1], &[-1, -1, -1]),
        Err(ReachedTwice { node: 1 })
    );
    assert_eq!(
        links(&[0, 1, 2], &[1, -1, -1], &[-1, -1, -1]),
        Err(Unreached { node: 2 })
    );
    let deep: Vec<i64> = (1..=100_000)
        .map(|i| if i < 100_000 { i } else { -1 })
        .collect();
    let tree = links(&vec![0; 100_000], &deep, &vec![-1; 100_000]).expect("a deep chain");
    assert_eq!(tree, DraftTree::chain(&[0; 99_999]));
}

#[test]
fn a_deep_draft_costs_heap_not_stack() {
    let tokenizer = gpt2();
    let compiled = compile_gbnf(r#"root ::= [a-z]+"#, &tokenizer, &Options::default());
    let a = id(&compiled, "a");
    let tree = DraftTree::chain(&[a; 3000]);
    let words = compiled.bitmask_words();
    let mut rows = vec![0u32; tree.nodes() * words];
    let mut matcher = Matcher::new(compiled.clone());
    let outcome = matcher
        .fill_draft_tree_bitmasks(&tree, &mut rows, words)
        .unwrap();
    assert!(outcome.states().iter().all(|&s| s == NodeState::Accepted));
    assert!(
        rows[words..2 * words] == rows[3000 * words..],
        "the same mask after one and after 3,000 tokens"
    );
    assert_eq!(matcher.output_len(), 0);
}

/// Matchers of two grammars at several positions, some budgeted, some terminated, with random
/// trees.
fn batch_fixture(tokenizer: &Arc<Tokenizer>, count: usize) -> (Vec<Matcher>, Vec<DraftTree>) {
    let object = compile_gbnf(OBJECT, tokenizer, &Options::default());
    let list = compile_gbnf(
        r#"root ::= "[" [0-9]+ ("," " "? [0-9]+)* "]""#,
        tokenizer,
        &Options::default(),
    );
    let prefixes: [(&Arc<CompiledGrammar>, &str); 5] = [
        (&object, ""),
        (&object, "{\"ab\": "),
        (&list, "[1, 2"),
        (&list, "[1,"),
        (&object, "{\"x\":{\"y\":true}"),
    ];
    let mut rng = Rng(7);
    let mut matchers = Vec::new();
    let mut trees = Vec::new();
    for i in 0..count {
        let (compiled, prefix) = match i % 11 {
            10 => (&list, "[1]"),
            _ => prefixes[i % prefixes.len()],
        };
        let mut matcher = match i % 4 {
            1 => Matcher::with_budget(compiled.clone(), 12).unwrap(),
            _ => Matcher::new(compiled.clone()),
        };
        matcher.accept_bytes(prefix.as_bytes()).unwrap();
        if i % 11 == 10 {
            matcher.accept_token(eos(compiled)).unwrap();
        }
        trees.push(random_tree(&matcher, 1 + rng.below(9), &mut rng));
        matchers.push(matcher);
    }
    (matchers, trees)
}

#[test]
fn batches_equal_one_matcher_at_a_time_on_any_pool() {
    let tokenizer = gpt2();
    let words = tokenizer.vocabulary().n_vocab().div_ceil(32);
    for count in [1, 3, PARALLEL_MIN_BATCH + 5] {
        let (mut matchers, trees) = batch_fixture(&tokenizer, count);
        let rows: usize = trees.iter().map(DraftTree::nodes).sum();
        let mut expected = vec![0u32; rows * words];
        let mut outcomes = Vec::new();
        let mut at = 0;
        for (matcher, tree) in matchers.iter_mut().zip(&trees) {
            let end = at + tree.nodes() * words;
            outcomes.push(
                matcher
                    .fill_draft_tree_bitmasks(tree, &mut expected[at..end], words)
                    .unwrap(),
            );
            at = end;
        }
        let before: Vec<_> = matchers.iter_mut().map(snapshot).collect();
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut bitmask = vec![SENTINEL; (rows + 1) * words];
            let results = pool
                .install(|| {
                    fill_draft_tree_bitmasks_batch(&mut matchers, &trees, &mut bitmask, words)
                })
                .unwrap();
            let results: Vec<_> = results.into_iter().map(Result::unwrap).collect();
            assert_eq!(results, outcomes, "{count} matchers, {threads} threads");
            assert!(bitmask[..rows * words] == expected, "{count} matchers");
            assert!(bitmask[rows * words..].iter().all(|&w| w == SENTINEL));
            let after: Vec<_> = matchers.iter_mut().map(snapshot).collect();
            assert!(after == before, "the matchers are unchanged");

            let drafts: Vec<Vec<u32>> = trees
                .iter()
                .map(|tree| path_tokens(tree, tree.nodes() - 1))
                .collect();
            let validated = pool
                .install(|| validate_tokens_batch(&mut matchers, &drafts))
                .unwrap();
            for ((matcher, draft), got) in matchers.iter_mut().zip(&drafts).zip(validated) {
                assert_eq!(got, matcher.validate_tokens(draft));
            }
        }
    }
}

#[test]
fn refused_batches_write_nothing() {
    let tokenizer = gpt2();
    let (mut matchers, trees) = batch_fixture(&tokenizer, 4);
    let words = tokenizer.vocabulary().n_vocab().div_ceil(32);
    let rows: usize = trees.iter().map(DraftTree::nodes).sum();
    let mut bitmask = vec![SENTINEL; rows * words];
    assert_eq!(
        fill_draft_tree_bitmasks_batch(&mut matchers, &trees[..3], &mut bitmask, words),
        Err(DraftError::DraftCount {
            matchers: 4,
            drafts: 3
        })
    );
    assert_eq!(
        fill_draft_tree_bitmasks_batch(&mut matchers, &trees, &mut bitmask, words - 1),
        Err(DraftError::RowTooShort {
            words_per_row: words - 1,
            needed: words
        })
    );
    assert!(matches!(
        fill_draft_tree_bitmasks_batch(&mut matchers, &trees, &mut bitmask[1..], words),
        Err(DraftError::BitmaskTooSmall { .. })
    ));
    let small = {
        let list = "\"a\"\n".to_owned();
        let vocab = sieve_vocab::plain::parse(list.as_bytes(), &Default::default()).unwrap();
        let tokenizer = Arc::new(Tokenizer::new(Arc::new(vocab)));
        Matcher::new(compile_gbnf(
            r#"root ::= "a""#,
            &tokenizer,
            &Options::default(),
        ))
    };
    let mut mixed = vec![matchers[0].clone(), small];
    assert!(matches!(
        fill_draft_tree_bitmasks_batch(&mut mixed, &trees[..2], &mut bitmask, words),
        Err(DraftError::VocabularyMismatch { index: 1, .. })
    ));
    assert_eq!(
        validate_tokens_batch(&mut matchers, &[[1u32]]),
        Err(DraftError::DraftCount {
            matchers: 4,
            drafts: 1
        })
    );
    assert!(bitmask.iter().all(|&w| w == SENTINEL));
}

proptest::proptest! {
    /// Any parent array that makes a tree gives the same tree as its first-child and
    /// next-sibling links; any link arrays at all give a tree or an error, never a panic.
    #[test]
    fn tree_layouts_agree_and_never_panic(
        picks in proptest::collection::vec(0usize..1000, 0..40),
        next_token in proptest::collection::vec(-2i64..42, 0..42),
        next_sibling in proptest::collection::vec(-2i64..42, 0..42),
    ) {
        // Node i + 1's parent is one of the nodes before it.
        let parents: Vec<Option<usize>> = std::iter::once(None)
            .chain(picks.iter().enumerate().map(|(i, &p)| Some(p % (i + 1))))
            .collect();
        let tokens: Vec<u32> = (0..parents.len() as u32).map(|i| i * 7).collect();
        let tree = DraftTree::from_parents(&tokens, &parents).expect("a tree");
        let mut first = vec![-1i64; parents.len()];
        let mut next = vec![-1i64; parents.len()];
        for node in (1..parents.len()).rev() {
            let parent = parents[node].expect("not the root");
            next[node] = first[parent];
            first[parent] = node as i64;
        }
        let linked = DraftTree::from_next_token_and_sibling(&tokens, &first, &next);
        proptest::prop_assert_eq!(linked, Ok(tree.clone()));
        proptest::prop_assert_eq!(parents_of(&tree), parents);

        let n = next_token.len().min(next_sibling.len());
        let tokens = vec![0u32; n];
        if let Ok(tree) =
            DraftTree::from_next_token_and_sibling(&tokens, &next_token[..n], &next_sibling[..n])
        {
            // A tree: every node but the root has exactly one parent.
            let parents = parents_of(&tree);
            proptest::prop_assert!(parents[0].is_none());
            proptest::prop_assert!(parents[1..].iter().all(Option::is_some));
            let children: usize = (0..n).map(|node| tree.children(node).count()).sum();
            proptest::prop_assert_eq!(children, n - 1);
        }
    }
}
