//! Per-rule token limits (`sieve_ir::Rule::max_tokens`): the rule every backend honours, and
//! the tables it reads.
//!
//! A normalised grammar's limited rule references no rule, so an occurrence of it is a run of
//! its own automaton's states from one start. After `n` tokens an occurrence whose first
//! byte lies in token `T + 1` has *touched* `n − T` tokens, and `a = k − touched` of the
//! rule's `k` remain for it.
//!
//! # The rule
//!
//! `rest[s]` ([`token_rest`]) is the fewest *token steps* that finish the rule from state `s`
//! of its automaton: single-byte tokens on every byte edge, and longer tokens found by walking
//! the trie from `s` inside the automaton ([`walk_within`], at most [`TOKEN_WALK_NODES`]
//! nodes per state); exact shortest paths over those steps, so a real token sequence of that
//! length exists. At every token end a thread of an occurrence in state `s` is kept iff
//! [`keeps`]`(rest[s], a)`: `a ≥ 1` and `rest[s] ≤ a`. A token is allowed iff its bytes are
//! accepted and some thread survives its end (`Recognizer::can_end_token`). Every backend
//! applies exactly this rule, so they accept the same token sequences.
//!
//! # Limits that can be honoured
//!
//! [`check_limit`] refuses, naming the rule, a state no token step finishes, a rule that may
//! need more than [`MAX_TIGHT`] tokens to close once started (`M`, the largest `rest` of its
//! non-accepting states), and a limit not above `M` (an occurrence can start inside a token,
//! which is then judged with `a = k − 1`; a classification made through the rule from its
//! caller is exact only if such a thread is never dropped).

use std::collections::HashMap;

use sieve_fsm::{Fsm, GrammarFsms, Label, StateId};
use sieve_ir::{ByteClass, RuleId};
use sieve_vocab::TokenTrie;

/// The most token steps a limited rule may need to close from any of its states.
pub const MAX_TIGHT: u32 = 32;

/// The most trie nodes walked from one state (past the first byte) to find its token steps
/// longer than one byte. Fewer steps only make `rest` larger, never wrong.
pub const TOKEN_WALK_NODES: usize = 4096;

/// `rest` of a state no token sequence finishes.
pub const NO_REST: u32 = u32::MAX;

/// The automaton of one limited rule, as [`token_rest`] and [`walk_within`] read it: states
/// `0..state_count()`, byte-range edges only (a limited rule references no rule).
pub trait RuleBytes {
    /// The number of states.
    fn state_count(&self) -> usize;
    /// Whether state `s` ends the rule.
    fn is_accepting(&self, s: u32) -> bool;
    /// Calls `edge(lo, hi, target)` for each byte-range edge of state `s`.
    fn for_each_edge(&self, s: u32, edge: &mut dyn FnMut(u8, u8, u32));
}

/// Whether a thread in a state with `rest`, with `allowance` tokens left after a token end,
/// is kept (see the module docs).
#[inline]
pub fn keeps(rest: u32, allowance: i64) -> bool {
    allowance >= 1 && i64::from(rest) <= allowance
}

/// Why a limit cannot be honoured with a vocabulary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenLimitError {
    /// The limited rule.
    pub rule: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for TokenLimitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rule `{}`: {}", self.rule, self.message)
    }
}

impl std::error::Error for TokenLimitError {}

/// Checks that limit `k` of the rule named `name`, whose states have `rest` and accept per
/// `accepting`, can be honoured; returns `M`, the most tokens it may need to close once
/// started (see the module docs).
///
/// # Errors
/// A [`TokenLimitError`] naming the rule.
pub fn check_limit(
    name: &str,
    k: u32,
    rest: &[u32],
    accepting: impl Fn(u32) -> bool,
) -> Result<u32, TokenLimitError> {
    let error = |message: String| TokenLimitError {
        rule: name.to_owned(),
        message,
    };
    let mut m = 0;
    for (s, &r) in rest.iter().enumerate() {
        if r == NO_REST {
            return Err(error(
                "a point inside it cannot be finished by the vocabulary's tokens, so its token \
                 limit cannot be guaranteed"
                    .into(),
            ));
        }
        if !accepting(s as u32) {
            m = m.max(r);
        }
    }
    if m > MAX_TIGHT {
        return Err(error(format!(
            "it can need {m} tokens to close once started, more than the {MAX_TIGHT} a token \
             limit supports"
        )));
    }
    if k <= m {
        return Err(error(format!(
            "max_tokens={k} is too small: once started it can need {m} more tokens to close, so \
             the limit must be at least {}",
            m + 1
        )));
    }
    Ok(m)
}

/// A rule's token limit `k` with `rest` of each state of its automaton for one vocabulary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleLimit {
    /// The most tokens an occurrence may touch.
    pub k: u32,
    /// Per state of the rule's automaton, [`token_rest`].
    pub rest: Vec<u32>,
}

/// Per rule of `fsms`, its limit with `rest` counted in `trie`; `None` for a rule without one.
///
/// # Errors
/// A [`TokenLimitError`] naming the rule when a limit cannot be honoured with this
/// vocabulary ([`check_limit`]) or the limited rule is not a plain byte automaton.
pub fn rule_limits(
    fsms: &GrammarFsms,
    trie: &TokenTrie,
) -> Result<Vec<Option<RuleLimit>>, TokenLimitError> {
    fsms.rule_ids()
        .map(|rule| {
            let Some(k) = fsms.token_limit(rule) else {
                return Ok(None);
            };
            let fsm = fsms.automaton(rule).fsm().ok_or_else(|| TokenLimitError {
                rule: fsms.name(rule).to_owned(),
                message: "a limited rule must be one automaton over bytes".to_owned(),
            })?;
            let bytes = FsmBytes(fsm);
            let rest = token_rest(&bytes, trie);
            check_limit(fsms.name(rule), k, &rest, |s| bytes.is_accepting(s))?;
            Ok(Some(RuleLimit { k, rest }))
        })
        .collect()
}

/// The first rule of `fsms` with a token limit.
pub fn first_limited(fsms: &GrammarFsms) -> Option<RuleId> {
    fsms.rule_ids()
        .find(|&rule| fsms.token_limit(rule).is_some())
}

/// A rule automaton as [`RuleBytes`] reads it: its byte edges (a limited rule has no others).
struct FsmBytes<'a>(&'a Fsm);

impl FsmBytes<'_> {
    fn id(s: u32) -> StateId {
        StateId::new(s as usize).expect("a state of the automaton")
    }
}

impl RuleBytes for FsmBytes<'_> {
    fn state_count(&self) -> usize {
        self.0.state_count()
    }

    fn is_accepting(&self, s: u32) -> bool {
        self.0.is_accepting(FsmBytes::id(s))
    }

    fn for_each_edge(&self, s: u32, edge: &mut dyn FnMut(u8, u8, u32)) {
        for e in self.0.edges(FsmBytes::id(s)) {
            if let Label::Bytes { lo, hi } = e.label {
                edge(lo, hi, e.target.index() as u32);
            }
        }
    }
}

/// `rest` of every state of `rule` (see the module docs): a multi-source shortest path to the
/// accepting states over token steps, [`NO_REST`] where none finishes.
pub fn token_rest(rule: &impl RuleBytes, trie: &TokenTrie) -> Vec<u32> {
    let n = rule.state_count();
    // Reverse token edges: for each target, the sources that reach it in one step.
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut targets = Vec::new();
    for s in 0..n as u32 {
        targets.clear();
        step_targets(rule, trie, s, &mut targets);
        targets.sort_unstable();
        targets.dedup();
        for &t in &targets {
            preds[t as usize].push(s);
        }
    }
    let mut rest = vec![NO_REST; n];
    let mut queue = std::collections::VecDeque::new();
    for (s, r) in rest.iter_mut().enumerate() {
        if rule.is_accepting(s as u32) {
            *r = 0;
            queue.push_back(s);
        }
    }
    while let Some(t) = queue.pop_front() {
        for &p in &preds[t] {
            if rest[p as usize] == NO_REST {
                rest[p as usize] = rest[t] + 1;
                queue.push_back(p as usize);
            }
        }
    }
    rest
}

/// The states one token step takes `s` to within its own automaton.
fn step_targets(rule: &impl RuleBytes, trie: &TokenTrie, s: u32, out: &mut Vec<u32>) {
    // Single-byte tokens on every byte edge.
    rule.for_each_edge(s, &mut |lo, hi, target| {
        for byte in lo..=hi {
            if trie.find(&[byte]).is_some() {
                out.push(target);
            }
        }
    });
    // Longer tokens, walking the trie with the set of states reached.
    let mut nodes = 0;
    walk_within(rule, trie, s, &ByteClass::default(), |_, depth, set, _| {
        nodes += 1;
        if depth > 1 {
            out.extend_from_slice(set);
        }
        nodes < TOKEN_WALK_NODES
    });
}

/// Walks the trie from state `s` inside `rule`'s automaton: for each token position whose
/// bytes the automaton (as an NFA over state sets) follows to the end, calls
/// `visit(position, length, end_set, may_exit)`, where `may_exit` says whether the token
/// could leave the rule inside it: a set after one byte and before the last accepts and the
/// byte after it is in `follow` (what may come after the rule). Returning `false` stops the
/// walk.
///
/// The state sets are determinised on the fly, so a trie node costs one table look-up once
/// its set has met its byte.
pub fn walk_within<R: RuleBytes>(
    rule: &R,
    trie: &TokenTrie,
    s: u32,
    follow: &ByteClass,
    mut visit: impl FnMut(usize, usize, &[u32], bool) -> bool,
) {
    let mut steps = SubsetSteps::new(rule, s);
    let nodes = trie.nodes();
    // path[d]: the set after the node's first d bytes; passed[d]: whether the token could
    // leave the rule after 1..d bytes (d exclusive).
    let mut path: Vec<u32> = vec![0];
    let mut passed: Vec<bool> = vec![false];
    let mut i = 0;
    while i < nodes.len() {
        let node = nodes[i];
        let depth = node.depth as usize;
        path.truncate(depth);
        passed.truncate(depth);
        let from = path[depth - 1];
        let Some(next) = steps.step(&mut path, from, node.byte) else {
            i = node.end as usize;
            continue;
        };
        // The step may have renumbered the path's sets.
        let from = path[depth - 1];
        let may_exit = passed[depth - 1]
            || (depth >= 2 && steps.accepting[from as usize] && follow.contains(node.byte));
        path.push(next);
        passed.push(may_exit);
        if node.has_token() {
            for position in trie.tokens_at_node(i) {
                if !visit(position, depth, &steps.sets[next as usize], may_exit) {
                    return;
                }
            }
        }
        i += 1;
    }
}

/// The most state sets [`SubsetSteps`] keeps before starting afresh.
const MAX_SUBSETS: usize = 1 << 12;

/// A lazily determinised view of a rule automaton: interned state sets and, per set, its
/// successor per byte (filled on first use). Bounded by [`MAX_SUBSETS`]: past it the memo is
/// rebuilt from the sets a walk still holds.
struct SubsetSteps<'r, R> {
    rule: &'r R,
    sets: Vec<Vec<u32>>,
    ids: HashMap<Vec<u32>, u32>,
    /// Per set, whether one of its states accepts.
    accepting: Vec<bool>,
    /// Per set, 256 entries: a set id, [`UNKNOWN`] or [`DEAD`].
    rows: Vec<u32>,
}

const UNKNOWN: u32 = u32::MAX - 1;
const DEAD: u32 = u32::MAX;

impl<'r, R: RuleBytes> SubsetSteps<'r, R> {
    /// The memo with `{s}` as set 0.
    fn new(rule: &'r R, s: u32) -> SubsetSteps<'r, R> {
        let mut steps = SubsetSteps {
            rule,
            sets: Vec::new(),
            ids: HashMap::new(),
            accepting: Vec::new(),
            rows: Vec::new(),
        };
        steps.intern(vec![s]);
        steps
    }

    fn intern(&mut self, set: Vec<u32>) -> u32 {
        if let Some(&id) = self.ids.get(&set) {
            return id;
        }
        let id = self.sets.len() as u32;
        self.accepting
            .push(set.iter().any(|&t| self.rule.is_accepting(t)));
        self.ids.insert(set.clone(), id);
        self.sets.push(set);
        self.rows.extend(std::iter::repeat_n(UNKNOWN, 256));
        id
    }

    /// The set after `byte` from set `from`, `None` when no state has an edge for it. May
    /// renumber the sets of `path` (when the memo starts afresh).
    fn step(&mut self, path: &mut [u32], from: u32, byte: u8) -> Option<u32> {
        let entry = self.rows[from as usize * 256 + byte as usize];
        if entry != UNKNOWN {
            return (entry != DEAD).then_some(entry);
        }
        let mut next: Vec<u32> = Vec::new();
        for &state in &self.sets[from as usize] {
            self.rule.for_each_edge(state, &mut |lo, hi, target| {
                if lo <= byte && byte <= hi {
                    next.push(target);
                }
            });
        }
        if next.is_empty() {
            self.rows[from as usize * 256 + byte as usize] = DEAD;
            return None;
        }
        next.sort_unstable();
        next.dedup();
        let mut from = from;
        if self.sets.len() >= MAX_SUBSETS && !self.ids.contains_key(&next) {
            // Start afresh, keeping the sets the walk's path holds.
            let held: Vec<Vec<u32>> = path
                .iter()
                .map(|&id| self.sets[id as usize].clone())
                .collect();
            let from_set = self.sets[from as usize].clone();
            self.sets.clear();
            self.ids.clear();
            self.accepting.clear();
            self.rows.clear();
            for (slot, set) in path.iter_mut().zip(held) {
                *slot = self.intern(set);
            }
            from = self.intern(from_set);
        }
        let id = self.intern(next);
        self.rows[from as usize * 256 + byte as usize] = id;
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `[a-z]{3}` as states 0 → 1 → 2 → 3 (accepting).
    struct Three;

    impl RuleBytes for Three {
        fn state_count(&self) -> usize {
            4
        }
        fn is_accepting(&self, s: u32) -> bool {
            s == 3
        }
        fn for_each_edge(&self, s: u32, edge: &mut dyn FnMut(u8, u8, u32)) {
            if s < 3 {
                edge(b'a', b'z', s + 1);
            }
        }
    }

    fn trie(tokens: &[&str]) -> TokenTrie {
        let lines: Vec<String> = tokens.iter().map(|t| format!("{t:?}")).collect();
        let options = sieve_vocab::plain::Options::new();
        let vocab = sieve_vocab::plain::parse(lines.join("\n").as_bytes(), &options).unwrap();
        TokenTrie::new(&vocab)
    }

    #[test]
    fn rest_counts_the_fewest_tokens_inside_the_rule() {
        // Single letters only: three steps from the start.
        assert_eq!(token_rest(&Three, &trie(&["a", "b"])), vec![3, 2, 1, 0]);
        // "ab" spans two letters: two steps from the start, one from state 1.
        assert_eq!(token_rest(&Three, &trie(&["a", "ab"])), vec![2, 1, 1, 0]);
        // No single letter: states 0 and 2 cannot finish.
        assert_eq!(
            token_rest(&Three, &trie(&["ab"])),
            vec![NO_REST, 1, NO_REST, 0]
        );
    }

    #[test]
    fn check_limit_refuses_what_cannot_be_honoured() {
        let rest = [3, 2, 1, 0];
        let accepting = |s: u32| s == 3;
        assert_eq!(check_limit("w", 4, &rest, accepting), Ok(3));
        let too_small = check_limit("w", 3, &rest, accepting).unwrap_err();
        assert!(too_small.message.contains("at least 4"), "{too_small}");
        let unreachable = check_limit("w", 9, &[NO_REST, 0], |s| s == 1).unwrap_err();
        assert!(unreachable.to_string().starts_with("rule `w`"));
    }

    #[test]
    fn keeps_needs_a_token_left_and_the_rest_within_it() {
        assert!(keeps(0, 1));
        assert!(!keeps(0, 0));
        assert!(keeps(2, 2));
        assert!(!keeps(3, 2));
    }
}
