//! Token limits: rules whose occurrences may span at most `k` tokens (`Rule::max_tokens`).
//!
//! A normalised grammar's limited rule references no rule, so its occurrence is the run of
//! Earley items of its own automaton that share one origin. The parser counts token ends
//! (`SetInfo::tokens`, advanced by [`Parser::end_token`](crate::Parser::end_token)); an item
//! of a limited rule with origin `o`, at a token end after `n` tokens, has *touched*
//! `n − T(o)` tokens (`T(o)`: the tokens ended at or before set `o`; its first byte is in
//! token `T(o) + 1`), so `a = k − touched` tokens remain for it.
//!
//! # The rule (what "honoured exactly" means here)
//!
//! `rest[s]` is the fewest *token steps* that finish the rule from state `s` inside its own
//! automaton (single-byte tokens on every byte edge, longer tokens found by walking the trie
//! from `s`, at most [`TOKEN_WALK_NODES`] nodes per state; exact shortest paths over those
//! edges, so a real token sequence of that length exists). At every token end, a scan item
//! of a limited rule is kept iff `a ≥ 1` and `rest[s] ≤ a`; the others are dropped. Every
//! item kept can therefore still finish its occurrence within the limit, so an occurrence is
//! always closed in time, and a token is allowed iff some item survives the token end after
//! it. The tokens this forbids that could still have finished are those whose only way out
//! needs a token that crosses the rule's end within fewer steps than `rest` counts (the bound
//! is tight when the cheapest spelling stays inside the rule).
//!
//! # Limits that can be honoured
//!
//! An occurrence can start inside a token; the item is then judged at that token's end with
//! `a = k − 1`. Token classifications that run through a limited rule from its caller are
//! made without the limit, which is exact only if no item entered mid-token is ever dropped:
//! so [`EarleyGrammar::prepare_token_limits`] refuses a rule whose limit `k` is not above
//! `M`, the largest finite `rest` of its non-accepting states, and one with a state no token
//! step finishes. Then only items carried across token ends can be dropped.
//!
//! # Keys
//!
//! An item with `a ≤ M` is *tight*: its tokens are those of its state minus the ones that end
//! inside the rule at a state with `rest ≥ a` (not accepting), unless the token could leave
//! the rule inside it (an accepting state on the way followed by a byte of the rule's
//! FOLLOW: the occurrence may end there and the caller go on; such tokens become uncertain
//! and are fed). It is reported under its own key, `tight_id(s, a)`, numbered after
//! the grammar's states; a non-tight item keeps its state's key, whose classification needs
//! no change. `M ≤` [`MAX_TIGHT`] keeps the numbering small.

use std::ops::Range;
use std::sync::OnceLock;

use sieve_backend::{Classification, TokenSet};
use sieve_vocab::TokenTrie;

use crate::grammar::EarleyGrammar;

/// The most token steps a limited rule may need to finish from any of its states (the
/// number of tight keys per state).
pub const MAX_TIGHT: u32 = 32;

/// The most trie nodes walked from one state (past the first byte) to find its token steps
/// longer than one byte. Fewer steps only make `rest` larger, never wrong.
pub const TOKEN_WALK_NODES: usize = 4096;

const NONE: u32 = u32::MAX;
const INF: u32 = u32::MAX;

/// The limited rules of one grammar, and their vocabulary-dependent table.
#[derive(Debug, Default)]
pub(crate) struct Limits {
    /// Per rule, its limit, `0` for none.
    per_rule: Vec<u32>,
    /// The global ids of the states of limited rules, ascending.
    states: Vec<u32>,
    /// Per global state, its index in `states`, or [`NONE`].
    index: Vec<u32>,
    /// The states of the grammar (where tight ids start).
    base: u32,
    /// Built by [`EarleyGrammar::prepare_token_limits`].
    table: OnceLock<Table>,
}

impl Clone for Limits {
    fn clone(&self) -> Limits {
        Limits {
            per_rule: self.per_rule.clone(),
            states: self.states.clone(),
            index: self.index.clone(),
            base: self.base,
            table: self.table.clone(),
        }
    }
}

/// `rest` per limited state and `M` per rule, for one vocabulary.
#[derive(Clone, Debug)]
struct Table {
    /// Per entry of `Limits::states`.
    rest: Vec<u32>,
    /// Per rule (limited ones only meaningful).
    max_rest: Vec<u32>,
    /// The trie it was made for (its size, to catch a mismatched trie).
    trie_len: usize,
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

impl Limits {
    /// The limits of `g`'s rules (`per_rule[r]`, 0 for none).
    pub(crate) fn new(g: &EarleyGrammar, per_rule: Vec<u32>) -> Limits {
        let mut states = Vec::new();
        let mut index = vec![NONE; g.states.len()];
        if per_rule.iter().any(|&k| k > 0) {
            for (s, info) in g.states.iter().enumerate() {
                if per_rule[info.rule as usize] > 0 {
                    index[s] = states.len() as u32;
                    states.push(s as u32);
                }
            }
        }
        Limits {
            per_rule,
            states,
            index,
            base: g.states.len() as u32,
            table: OnceLock::new(),
        }
    }

    /// Whether the grammar has a limited rule.
    pub(crate) fn any(&self) -> bool {
        !self.states.is_empty()
    }

    /// The number of tight keys.
    pub(crate) fn tight_count(&self) -> usize {
        self.states.len() * MAX_TIGHT as usize
    }

    /// The limit of `rule`, or `0`.
    pub(crate) fn of_rule(&self, rule: u32) -> u32 {
        self.per_rule[rule as usize]
    }

    /// The state and allowance of tight key `id`, or `None` for a grammar state.
    pub(crate) fn tight(&self, id: u32) -> Option<(u32, u32)> {
        let offset = id.checked_sub(self.base)?;
        let state = self.states[(offset / MAX_TIGHT) as usize];
        Some((state, offset % MAX_TIGHT + 1))
    }

    /// The grammar state of key `id`: the state of a tight key, else `id` itself.
    pub(crate) fn state_of(&self, id: u32) -> u32 {
        self.tight(id).map_or(id, |(state, _)| state)
    }

    fn tight_id(&self, state: u32, allowance: u32) -> u32 {
        self.base + self.index[state as usize] * MAX_TIGHT + (allowance - 1)
    }

    /// `rest` of a limited state, once the table is built; `None` for other states.
    pub(crate) fn rest(&self, state: u32) -> Option<u32> {
        let table = self.table.get()?;
        let index = *self.index.get(state as usize)?;
        (index != NONE).then(|| table.rest[index as usize])
    }

    /// Whether an item of a limited rule in `state`, with `allowance` tokens left after a token
    /// end, is kept (see the module docs). Without a table (no vocabulary) nothing is dropped.
    pub(crate) fn keeps(&self, state: u32, allowance: i64) -> bool {
        match self.rest(state) {
            None => true,
            Some(rest) => allowance >= 1 && i64::from(rest) <= allowance,
        }
    }

    /// The key of an item of a limited rule in `state` with `allowance` tokens left: its
    /// tight key when `allowance ≤ M` of its rule, else the state.
    pub(crate) fn key(&self, g: &EarleyGrammar, state: u32, allowance: i64) -> u32 {
        let Some(table) = self.table.get() else {
            return state;
        };
        let m = table.max_rest[g.states[state as usize].rule as usize];
        if allowance >= 1 && allowance <= i64::from(m) {
            self.tight_id(state, allowance as u32)
        } else {
            state
        }
    }
}

impl EarleyGrammar {
    /// Whether some rule has a token limit (`sieve_ir::Rule::max_tokens`).
    pub fn has_token_limits(&self) -> bool {
        self.limits.any()
    }

    /// Computes what token limits read for `trie` (once; later calls check that the trie
    /// matches). Fails, naming the rule, when a limit cannot be honoured with this
    /// vocabulary (see the module docs).
    ///
    /// # Errors
    /// A [`TokenLimitError`]: a state no token sequence finishes, a rule needing more than
    /// [`MAX_TIGHT`] tokens to close, or a limit not above what the rule may need.
    pub fn prepare_token_limits(&self, trie: &TokenTrie) -> Result<(), TokenLimitError> {
        let limits = &self.limits;
        if !limits.any() {
            return Ok(());
        }
        if let Some(table) = limits.table.get() {
            assert_eq!(
                table.trie_len,
                trie.len(),
                "token limits prepared for another trie"
            );
            return Ok(());
        }
        let rest = token_rest(self, trie);
        let mut max_rest = vec![0u32; self.start.len()];
        for (i, &s) in limits.states.iter().enumerate() {
            let info = self.states[s as usize];
            let name = || self.rule_names[info.rule as usize].clone();
            if rest[i] == INF {
                return Err(TokenLimitError {
                    rule: name(),
                    message: "a point inside it cannot be finished by the vocabulary's tokens, so \
                              its token limit cannot be guaranteed"
                        .into(),
                });
            }
            if !info.accepting {
                let m = &mut max_rest[info.rule as usize];
                *m = (*m).max(rest[i]);
            }
        }
        for (rule, &k) in limits.per_rule.iter().enumerate() {
            if k == 0 {
                continue;
            }
            let m = max_rest[rule];
            let name = self.rule_names[rule].clone();
            if m > MAX_TIGHT {
                return Err(TokenLimitError {
                    rule: name,
                    message: format!(
                        "it can need {m} tokens to close once started, more than the {MAX_TIGHT} a \
                         token limit supports"
                    ),
                });
            }
            if k <= m {
                return Err(TokenLimitError {
                    rule: name,
                    message: format!(
                        "max_tokens={k} is too small: once started it can need {m} more tokens to \
                         close, so the limit must be at least {}",
                        m + 1
                    ),
                });
            }
        }
        let _ = limits.table.set(Table {
            rest,
            max_rest,
            trie_len: trie.len(),
        });
        Ok(())
    }
}

/// `rest` for every limited state (indexed like `Limits::states`): a multi-source shortest
/// path to the accepting states over token steps.
fn token_rest(g: &EarleyGrammar, trie: &TokenTrie) -> Vec<u32> {
    let limits = &g.limits;
    let n = limits.states.len();
    // Reverse token edges: for each target, the sources that reach it in one step.
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut targets = Vec::new();
    for (i, &s) in limits.states.iter().enumerate() {
        targets.clear();
        step_targets(g, trie, s, &mut targets);
        targets.sort_unstable();
        targets.dedup();
        for &t in &targets {
            preds[limits.index[t as usize] as usize].push(i as u32);
        }
    }
    let mut rest = vec![INF; n];
    let mut queue = std::collections::VecDeque::new();
    for (i, &s) in limits.states.iter().enumerate() {
        if g.states[s as usize].accepting {
            rest[i] = 0;
            queue.push_back(i);
        }
    }
    while let Some(i) = queue.pop_front() {
        for &p in &preds[i] {
            if rest[p as usize] == INF {
                rest[p as usize] = rest[i] + 1;
                queue.push_back(p as usize);
            }
        }
    }
    rest
}

/// The states one token step takes `s` to within its own automaton (byte edges only).
fn step_targets(g: &EarleyGrammar, trie: &TokenTrie, s: u32, out: &mut Vec<u32>) {
    // Single-byte tokens on every byte edge.
    for edge in g.byte_edges(&g.states[s as usize]) {
        for byte in edge.lo..=edge.hi {
            if trie.find(&[byte]).is_some() {
                out.push(edge.target);
            }
        }
    }
    // Longer tokens, walking the trie with the set of states reached.
    let mut nodes = 0;
    walk_within(g, trie, s, |_, depth, set, _| {
        nodes += 1;
        if depth > 1 {
            out.extend_from_slice(set);
        }
        nodes < TOKEN_WALK_NODES
    });
}

/// Walks the trie from state `s` inside `s`'s rule automaton: for each token position whose
/// bytes the automaton (as an NFA over state sets) follows to the end, calls
/// `visit(position, length, end_set, may_exit)`, where `may_exit` says whether the token
/// could leave the rule inside it: a set after one byte and before the last accepts and the
/// byte after it is in FOLLOW of the rule. Returning `false` stops the walk.
///
/// The state sets are determinised on the fly ([`SubsetSteps`]), so a trie node costs one
/// table look-up once its set has met its byte.
fn walk_within(
    g: &EarleyGrammar,
    trie: &TokenTrie,
    s: u32,
    mut visit: impl FnMut(usize, usize, &[u32], bool) -> bool,
) {
    let mut steps = SubsetSteps::new(g, s);
    let follow = &g.follow[g.states[s as usize].rule as usize];
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
struct SubsetSteps<'g> {
    g: &'g EarleyGrammar,
    sets: Vec<Vec<u32>>,
    ids: std::collections::HashMap<Vec<u32>, u32>,
    /// Per set, whether one of its states accepts.
    accepting: Vec<bool>,
    /// Per set, 256 entries: a set id, [`UNKNOWN`] or [`DEAD`].
    rows: Vec<u32>,
}

const UNKNOWN: u32 = u32::MAX - 1;
const DEAD: u32 = u32::MAX;

impl<'g> SubsetSteps<'g> {
    /// The memo with `{s}` as set 0.
    fn new(g: &'g EarleyGrammar, s: u32) -> SubsetSteps<'g> {
        let mut steps = SubsetSteps {
            g,
            sets: Vec::new(),
            ids: std::collections::HashMap::new(),
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
            .push(set.iter().any(|&t| self.g.states[t as usize].accepting));
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
            for edge in self.g.byte_edges(&self.g.states[state as usize]) {
                if edge.lo <= byte && byte <= edge.hi {
                    next.push(edge.target);
                }
            }
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

/// The classification of tight key `(state, allowance)` from `plain`, the classification of
/// the state with the same context: the tokens that end inside the rule where it needs at
/// least `allowance` more tokens are rejected (or uncertain, when the occurrence could end
/// inside them).
pub(crate) fn tighten(
    g: &EarleyGrammar,
    trie: &TokenTrie,
    state: u32,
    allowance: u32,
    plain: Classification,
) -> Classification {
    let limits = &g.limits;
    let table = limits
        .table
        .get()
        .expect("tight keys exist only once the limits are prepared");
    let mut bits = vec![0u32; trie.n_vocab().div_ceil(32)];
    plain.accepted.or_into(&mut bits);
    let mut uncertain: Vec<Range<u32>> = plain.uncertain;
    let mut added = false;
    walk_within(g, trie, state, |position, _, end, passed| {
        let finishes = end.iter().any(|&t| {
            g.states[t as usize].accepting
                || table.rest[limits.index[t as usize] as usize] < allowance
        });
        if !finishes {
            let id = trie.token(position).index();
            if bits[id / 32] & (1 << (id % 32)) != 0 {
                bits[id / 32] &= !(1 << (id % 32));
                if passed {
                    uncertain.push(position as u32..position as u32 + 1);
                    added = true;
                }
            }
        }
        true
    });
    if added {
        uncertain = sieve_backend::merge_ranges(uncertain);
    }
    Classification {
        accepted: TokenSet::from_bits(bits),
        uncertain,
    }
}
