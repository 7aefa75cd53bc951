//! Shortest completions counted in tokens: the bounds token budgets rest on.
//!
//! # At compile time ([`CompletionTable::new`], once per grammar and vocabulary)
//!
//! - `rest[s]`: the fewest *token steps* that finish the rule of state `s` from `s`. A token
//!   step is one text token of the vocabulary whose bytes follow the byte edges of `s`'s own
//!   automaton from `s` to some `t` (a *token edge*: single-byte tokens on every byte edge
//!   whose range holds one, longer tokens found by walking the trie from `s`, at most
//!   [`TOKEN_WALK_NODES`] trie nodes per state); a reference to rule `A` costs `rule_min[A]`,
//!   the fewest token steps of a whole derivation of `A`. Every step is a real token, so a
//!   completion of cost `c` is spelled by `c` tokens. It is the least fixpoint of
//!   `rest[s] = min(0 if s accepts, 1 + rest[t] over token edges, rest[t] over ε edges,
//!   rule_min[A] + rest[t] over rule edges)`, with `rule_min[A] = rest[start A]` and, for a
//!   counted rule `X{m,n}`, `m · rule_min[X]`; it is solved exactly by Knuth's generalisation
//!   of Dijkstra's algorithm to such superior functions (each value is fixed when it is the
//!   smallest pending one, after all its arguments are fixed). Tokens that cross from one
//!   rule's automaton into another's are not counted (the bound is then loose, never wrong).
//! - `within[A][d]` (`W`): at least the `rest` of any item of `A`'s subtree that a string of
//!   at most `d` bytes can put in a set, plus the `rest` of everything between it and `A`.
//!   Recursion is bounded by `d`: descending into a rule from a state reached only after a
//!   byte of its rule costs one byte of `d`, so each level of centre or right recursion uses
//!   one byte; left recursion (a cycle of descents without bytes) makes the value infinite.
//!
//! # At run time (over the parser's Earley sets)
//!
//! The *routes* of the top set: for a rule `A` started at set `i` (a *node* `(A, i)`),
//! `R(A, i)` is the fewest unit steps that finish the sentence once `A` is complete from `i`:
//! `0` for the root from set `0`, otherwise the minimum, over the items waiting on `A` in set
//! `i` (advanced over `A`), of their `rest` plus `R` of their own node. Sets below the top are
//! immutable, so this is a shortest path in the graph of waiters, computed origin by origin.
//! The bound is `0` when the input is a sentence, otherwise the minimum over the top set's
//! scan items of `rest + R`.
//!
//! # Decisions without feeding (a budget filter's fast path)
//!
//! For a scan item at state `s` and a token whose bytes follow byte edges of `s`'s automaton
//! to `s'`, the new set holds the item at `s'` with the same origin, so the bound after the
//! token is at most `rest[s'] + R` of its node. It is exactly the minimum of that over the
//! scan items when no item branches inside the token: every state the walk passes through
//! before the last byte has no rule edge, no ε edge, does not accept (or is the root's and
//! no rule refers to the root, so completing it feeds nothing) and has one edge for the byte
//! (then the new set is the closure of those items, and every route of the closure starts
//! from one of them). The walk from a state does not depend on `R`, so it is done once per
//! state and kept (a `StateWalk`: the tokens it consumes grouped by `rest[s']` and by whether
//! their path branched, and the tokens whose path died in a branching state), within
//! [`MAX_WALK_BYTES`] per table. [`Parser::completion_decide`] then says, with bitmask
//! operations, which tokens fit a limit (some class with `rest + R ≤ limit`) and which exceed
//! it (consumed by some walk, exact in every walk, and in no class that fits).
//!
//! # Invariants
//!
//! - **Descent** (the contract of `Recognizer::completion_bound`): when the bound is `u > 0`,
//!   the first step of a route achieving it is a token edge (a token the parser accepts: its
//!   bytes follow byte edges from a stored item, and every stored item continues to a
//!   sentence) that leaves a route of cost `u - 1`: a token edge on a shortest path leads to
//!   an item of the same origin whose `rest` is one less; a rule edge on it is followed by the
//!   prediction of the rule, whose start items carry the same cost; a completion passes the
//!   cost to the waiter that achieves `R` (with Leo, to the chain's top item, the chain's
//!   items all having `rest` 0); completing the root from set 0 makes the input a sentence.
//! - **Caps**: every item in a set after a string of at most `d` bytes either has an origin
//!   at most the current top set — its node, or the first such node above it, is reachable
//!   from the top set's scan items through waiters — or lies below such a node in rules
//!   predicted inside the string; its route is then at most `W[A][d] + R(A, i)` for that node.
//!   So the maximum of that over the reachable nodes bounds the bound after any such string.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use sieve_backend::TokenSet;
use sieve_ir::ByteClass;
use sieve_vocab::TokenTrie;

use crate::grammar::{EarleyGrammar, NOT_COUNTED};
use crate::parser::{Item, Parser};

/// No completion (or an unbounded value).
const INF: u32 = u32::MAX;

/// The most trie nodes (past the first byte) walked from one state to find its token edges
/// longer than one byte. Any subset of token edges gives a sound bound; this bounds the
/// compile-time work to this many steps per state.
pub const TOKEN_WALK_NODES: usize = 512;

/// The most bytes of per-state hint walks one table keeps (64 MiB).
pub const MAX_WALK_BYTES: usize = 64 << 20;

/// The shortest completions of one grammar counted in tokens of one vocabulary (see the
/// module docs). Built by `Backend::completion_table`; read by a [`Parser`]'s
/// `Recognizer::completion_bound` and `Recognizer::completion_caps`.
#[derive(Debug)]
pub struct CompletionTable {
    /// Per global state: the fewest unit steps that finish its rule (for a counted state,
    /// from count 0).
    rest: Vec<u32>,
    /// Per rule: the fewest unit steps of a whole derivation.
    rule_min: Vec<u32>,
    /// `W`, per rule, `max_bytes + 1` values (`d = 0..=max_bytes`).
    within: Vec<u32>,
    /// The longest string the caps cover (the vocabulary's longest token).
    max_bytes: usize,
    /// Whether some rule refers to the root (then completing it may feed a waiter).
    root_waited: bool,
    /// Per state, its [`Row`], built the first time a hint walk meets it.
    rows: Vec<std::sync::OnceLock<Box<Row>>>,
    /// Per state, its [`StateWalk`] once some budget filter needed it, while
    /// [`MAX_WALK_BYTES`] last; past that, walks are made afresh each time.
    walks: Vec<std::sync::OnceLock<std::sync::Arc<StateWalk>>>,
    walk_bytes: std::sync::atomic::AtomicUsize,
}

/// One argument list of Knuth's superior functions: `head = weight + Σ tails · times`.
#[derive(Clone, Copy, Debug)]
struct Hyper {
    head: u32,
    weight: u32,
    times: u32,
    tails: [u32; 2],
    arity: u8,
}

impl Hyper {
    fn eval(&self, value: &[u32]) -> u32 {
        let mut total = self.weight;
        for &tail in &self.tails[..self.arity as usize] {
            total = total.saturating_add(value[tail as usize].saturating_mul(self.times));
        }
        total
    }
}

/// A rule's descent into `callee` from one of its states: `ret` bounds what finishing the
/// rule after `callee` costs (the `rest` of the return state), `zero` says whether the state
/// may be reached from the rule's start without a byte.
#[derive(Clone, Copy, Debug)]
struct Descent {
    callee: u32,
    ret: u32,
    zero: bool,
}

impl CompletionTable {
    /// The table of `g` for the text tokens of `trie`.
    pub fn new(g: &EarleyGrammar, trie: &TokenTrie) -> CompletionTable {
        let max_bytes = trie.max_token_len();
        let (rest, rule_min) = shortest(g, trie);
        let within = within(g, &rest, &rule_min, max_bytes);
        let root_waited = g.rule_edges.iter().any(|e| e.rule == g.root)
            || g.counted.iter().any(|c| c.item == g.root);
        CompletionTable {
            rest,
            rule_min,
            within,
            max_bytes,
            root_waited,
            rows: (0..g.states.len())
                .map(|_| std::sync::OnceLock::new())
                .collect(),
            walks: (0..g.states.len())
                .map(|_| std::sync::OnceLock::new())
                .collect(),
            walk_bytes: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// The fewest tokens of a whole sentence (`None`: no sentence is spelled by unit bytes).
    pub fn sentence_min(&self, g: &EarleyGrammar) -> Option<u32> {
        if g.root_nullable() {
            return Some(0);
        }
        let min = self.rule_min[g.root as usize];
        (min != INF).then_some(min)
    }

    /// The `rest` of an item: for a counted item, the items it still needs.
    fn rest_item(&self, g: &EarleyGrammar, item: Item) -> u32 {
        let info = &g.states[item.state as usize];
        if info.counted == NOT_COUNTED {
            return self.rest[item.state as usize];
        }
        let c = g.counted[info.counted as usize];
        c.min
            .saturating_sub(item.count)
            .saturating_mul(self.rule_min[c.item as usize])
    }

    /// The walk of `state`, cached while the table's walks stay within [`MAX_WALK_BYTES`].
    fn walk(&self, g: &EarleyGrammar, trie: &TokenTrie, state: u32) -> std::sync::Arc<StateWalk> {
        use std::sync::atomic::Ordering;
        if let Some(walk) = self.walks[state as usize].get() {
            return walk.clone();
        }
        let walk = std::sync::Arc::new(StateWalk::new(g, self, trie, state));
        let bytes = walk.heap_bytes();
        let reserved = self
            .walk_bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                (used + bytes <= MAX_WALK_BYTES).then_some(used + bytes)
            })
            .is_ok();
        if reserved && self.walks[state as usize].set(walk.clone()).is_err() {
            // Another thread cached it first: give the bytes back.
            self.walk_bytes.fetch_sub(bytes, Ordering::Relaxed);
        }
        walk
    }

    fn row(&self, g: &EarleyGrammar, state: u32) -> &Row {
        self.rows[state as usize].get_or_init(|| Box::new(Row::new(g, self.root_waited, state)))
    }

    fn within_at(&self, rule: u32, d: usize) -> u32 {
        if d > self.max_bytes {
            return INF;
        }
        self.within[rule as usize * (self.max_bytes + 1) + d]
    }
}

/// `rest` per state and `rule_min` per rule (Knuth's algorithm; see the module docs).
fn shortest(g: &EarleyGrammar, trie: &TokenTrie) -> (Vec<u32>, Vec<u32>) {
    let mut units = ByteClass::EMPTY;
    for byte in 0..=255u8 {
        if trie.find(&[byte]).is_some() {
            units = units.union(&ByteClass::range(byte, byte));
        }
    }
    let mut targets = Vec::new();
    let n_states = g.states.len();
    let n_rules = g.start.len();
    let rule_node = |rule: u32| (n_states + rule as usize) as u32;
    let mut hypers: Vec<Hyper> = Vec::new();
    let mut seeds: Vec<u32> = Vec::new();
    let hyper = |head: u32, weight: u32, times: u32, tails: &[u32]| Hyper {
        head,
        weight,
        times,
        tails: [
            tails.first().copied().unwrap_or(0),
            tails.get(1).copied().unwrap_or(0),
        ],
        arity: tails.len() as u8,
    };
    let mut fixed_seeds: Vec<(u32, u32)> = Vec::new();
    for (s, info) in g.states.iter().enumerate() {
        let s = s as u32;
        if let Some(rest) = g.limits.rest(s) {
            // A state of a limited rule takes the token limit's own `rest` (the same token
            // steps the parser drops items by), so a shortest completion never needs a step
            // the limit forbids, and descent holds under the limit too.
            fixed_seeds.push((s, rest));
            continue;
        }
        if info.counted != NOT_COUNTED {
            let c = g.counted[info.counted as usize];
            if c.min == 0 {
                seeds.push(s);
            } else {
                hypers.push(hyper(s, 0, c.min, &[rule_node(c.item)]));
            }
            continue;
        }
        if info.accepting {
            seeds.push(s);
        }
        for edge in g.byte_edges(info) {
            if !units
                .intersection(&ByteClass::range(edge.lo, edge.hi))
                .is_empty()
            {
                hypers.push(hyper(s, 1, 1, &[edge.target]));
            }
        }
        long_token_targets(g, trie, s, &mut targets);
        for &target in &targets {
            hypers.push(hyper(s, 1, 1, &[target]));
        }
        for &target in g.eps_edges(info) {
            hypers.push(hyper(s, 0, 1, &[target]));
        }
        for edge in g.rule_edges(info) {
            hypers.push(hyper(s, 0, 1, &[rule_node(edge.rule), edge.target]));
        }
    }
    for (rule, &start) in g.start.iter().enumerate() {
        hypers.push(hyper(rule_node(rule as u32), 0, 1, &[start]));
    }
    let nodes = n_states + n_rules;
    let mut uses: Vec<Vec<u32>> = vec![Vec::new(); nodes];
    let mut remaining: Vec<u8> = Vec::with_capacity(hypers.len());
    for (e, h) in hypers.iter().enumerate() {
        for &tail in &h.tails[..h.arity as usize] {
            uses[tail as usize].push(e as u32);
        }
        remaining.push(h.arity);
    }
    let mut value = vec![INF; nodes];
    let mut fixed = vec![false; nodes];
    let mut heap = BinaryHeap::new();
    for s in seeds {
        value[s as usize] = 0;
        heap.push(Reverse((0u32, s)));
    }
    for (s, rest) in fixed_seeds {
        value[s as usize] = rest;
        heap.push(Reverse((rest, s)));
    }
    while let Some(Reverse((v, node))) = heap.pop() {
        if fixed[node as usize] || v > value[node as usize] {
            continue;
        }
        fixed[node as usize] = true;
        for &e in &uses[node as usize] {
            let e = e as usize;
            remaining[e] -= 1;
            if remaining[e] == 0 {
                let h = hypers[e];
                let candidate = h.eval(&value);
                if candidate < value[h.head as usize] && !fixed[h.head as usize] {
                    value[h.head as usize] = candidate;
                    heap.push(Reverse((candidate, h.head)));
                }
            }
        }
    }
    let rule_min = value.split_off(n_states);
    (value, rule_min)
}

/// The distinct states that tokens of two bytes or more reach from `s` along the byte edges
/// of its automaton (the first matching edge at each byte), walking at most
/// [`TOKEN_WALK_NODES`] trie nodes past the first byte among the text tokens, and as many
/// again among the token-terminal encodings (`sieve_ir::token`: they sort after all text, so a
/// shared budget would rarely reach them).
fn long_token_targets(g: &EarleyGrammar, trie: &TokenTrie, s: u32, out: &mut Vec<u32>) {
    out.clear();
    let nodes = trie.nodes();
    let mut encodings = nodes.len();
    let mut top = 0;
    while top < nodes.len() {
        if nodes[top].byte == sieve_ir::token::TOKEN_MARKER {
            encodings = top;
            break;
        }
        top = nodes[top].end as usize;
    }
    walk_targets(g, nodes, 0..encodings, s, out);
    walk_targets(g, nodes, encodings..nodes.len(), s, out);
}

/// [`long_token_targets`] over the nodes of `range`, whole top-level subtrees of the trie.
fn walk_targets(
    g: &EarleyGrammar,
    nodes: &[sieve_vocab::TrieNode],
    range: std::ops::Range<usize>,
    s: u32,
    out: &mut Vec<u32>,
) {
    let step = |state: u32, byte: u8| {
        g.byte_edges(&g.states[state as usize])
            .iter()
            .find(|e| e.lo <= byte && byte <= e.hi)
            .map(|e| e.target)
    };
    // `path[d]`: the state after the node's first `d` bytes.
    let mut path = vec![s];
    let mut walked = 0;
    let mut i = range.start;
    while i < range.end {
        let node = nodes[i];
        let depth = node.depth as usize;
        path.truncate(depth);
        let Some(next) = step(path[depth - 1], node.byte) else {
            i = node.end as usize;
            continue;
        };
        if depth > 1 {
            walked += 1;
            if walked > TOKEN_WALK_NODES {
                break;
            }
            if node.has_token() && !out.contains(&next) {
                out.push(next);
            }
        }
        path.push(next);
        i += 1;
    }
}

/// `W` per rule and byte count (see the module docs).
fn within(g: &EarleyGrammar, rest: &[u32], rule_min: &[u32], max_bytes: usize) -> Vec<u32> {
    let n_rules = g.start.len();
    // The states each rule reaches from its start without a byte.
    let mut zero = vec![false; g.states.len()];
    let mut stack = Vec::new();
    for &start in &g.start {
        zero[start as usize] = true;
        stack.push(start);
        while let Some(s) = stack.pop() {
            let info = &g.states[s as usize];
            let via_rules = g
                .rule_edges(info)
                .iter()
                .filter(|e| g.nullable[e.rule as usize])
                .map(|e| e.target);
            for t in g.eps_edges(info).iter().copied().chain(via_rules) {
                if !zero[t as usize] {
                    zero[t as usize] = true;
                    stack.push(t);
                }
            }
        }
    }
    let mut max_rest = vec![0u32; n_rules];
    let mut descents: Vec<Vec<Descent>> = vec![Vec::new(); n_rules];
    for (s, info) in g.states.iter().enumerate() {
        let rule = info.rule as usize;
        max_rest[rule] = max_rest[rule].max(rest[s]);
        if info.counted != NOT_COUNTED {
            let c = g.counted[info.counted as usize];
            descents[rule].push(Descent {
                callee: c.item,
                ret: c
                    .min
                    .saturating_sub(1)
                    .saturating_mul(rule_min[c.item as usize]),
                zero: true,
            });
            continue;
        }
        for edge in g.rule_edges(info) {
            descents[rule].push(Descent {
                callee: edge.rule,
                ret: rest[edge.target as usize],
                zero: zero[s],
            });
        }
    }
    // Callees before callers along descents without a byte (Kahn); rules left out are on or
    // above a cycle of such descents (left recursion) and stay infinite.
    let mut pending = vec![0usize; n_rules];
    let mut callers: Vec<Vec<u32>> = vec![Vec::new(); n_rules];
    for (rule, list) in descents.iter().enumerate() {
        for d in list.iter().filter(|d| d.zero) {
            pending[rule] += 1;
            callers[d.callee as usize].push(rule as u32);
        }
    }
    let mut order: Vec<u32> = (0..n_rules as u32)
        .filter(|&r| pending[r as usize] == 0)
        .collect();
    let mut next = 0;
    while next < order.len() {
        let rule = order[next] as usize;
        next += 1;
        for &caller in &callers[rule] {
            pending[caller as usize] -= 1;
            if pending[caller as usize] == 0 {
                order.push(caller);
            }
        }
    }
    let width = max_bytes + 1;
    // `V[r][d]`: like `W`, for a rule entered at its start with `d` bytes left.
    let mut entered = vec![INF; n_rules * width];
    let mut within = vec![INF; n_rules * width];
    for d in 0..width {
        for &rule in &order {
            let rule = rule as usize;
            let mut v = max_rest[rule];
            for descent in &descents[rule] {
                let callee = descent.callee as usize;
                let inner = if descent.zero {
                    entered[callee * width + d]
                } else if d > 0 {
                    entered[callee * width + d - 1]
                } else {
                    continue;
                };
                v = v.max(descent.ret.saturating_add(inner));
            }
            entered[rule * width + d] = v;
        }
        for rule in 0..n_rules {
            let mut w = max_rest[rule];
            for descent in &descents[rule] {
                let inner = entered[descent.callee as usize * width + d];
                w = w.max(descent.ret.saturating_add(inner));
            }
            within[rule * width + d] = w;
        }
    }
    within
}

/// A multiply-shift hasher for the `(rule, origin)` keys of [`Routes`] (the default SipHash
/// costs more than the rest of a bound).
#[derive(Clone, Copy, Debug, Default)]
struct NodeHasher(u64);

impl std::hash::Hasher for NodeHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(29) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type NodeMap<V> = HashMap<(u32, u32), V, std::hash::BuildHasherDefault<NodeHasher>>;

/// A byte with no edge in a [`Row`].
const NO_STEP: u32 = u32::MAX;
/// Set in a [`Row`] step when more than one edge matches the byte (the target is the first).
const MANY_STEPS: u32 = 1 << 31;

/// The byte edges of a state as a 256-entry table, for the hint walks.
#[derive(Clone, Debug)]
struct Row {
    steps: [u32; 256],
    /// Whether an item in the state can branch: a rule or ε edge, or an accepting state
    /// whose completion something may wait for (anything but the never-referenced root).
    branches: bool,
}

impl Row {
    fn new(g: &EarleyGrammar, root_waited: bool, state: u32) -> Row {
        let info = &g.states[state as usize];
        let mut steps = [NO_STEP; 256];
        for edge in g.byte_edges(info) {
            for byte in edge.lo..=edge.hi {
                let step = &mut steps[byte as usize];
                *step = if *step == NO_STEP {
                    edge.target
                } else {
                    *step | MANY_STEPS
                };
            }
        }
        let completes = info.accepting && (info.rule != g.root || root_waited);
        Row {
            steps,
            branches: completes || !g.rule_edges(info).is_empty() || !g.eps_edges(info).is_empty(),
        }
    }
}

/// The static part of the hint walk from one state: the tokens its automaton consumes, by
/// the `rest` of the state they reach (see the module docs).
#[derive(Debug)]
struct StateWalk {
    classes: Vec<WalkClass>,
    /// Tokens the walk cannot follow exactly: a path through a branching state died.
    inexact: TokenSet,
}

/// Tokens reaching states of one `rest`, along paths that branch (`clean == false`) or not.
#[derive(Debug)]
struct WalkClass {
    rest: u32,
    clean: bool,
    tokens: TokenSet,
}

impl StateWalk {
    fn new(g: &EarleyGrammar, table: &CompletionTable, trie: &TokenTrie, start: u32) -> StateWalk {
        let words = trie.n_vocab().div_ceil(32);
        let mut classes: Vec<(u32, bool, Vec<u32>)> = Vec::new();
        let mut inexact = vec![0u32; words];
        let set = |bits: &mut [u32], id: u32| bits[id as usize / 32] |= 1 << (id % 32);
        let nodes = trie.nodes();
        // Per depth: the row of the state after that many bytes, and whether no state
        // before it branches.
        let mut path: Vec<(&Row, bool)> = vec![(table.row(g, start), true)];
        let mut i = 0;
        while i < nodes.len() {
            let node = nodes[i];
            let depth = node.depth as usize;
            path.truncate(depth);
            let (row, clean) = path[depth - 1];
            // The start state's own branches are scan items of the top set, walked
            // separately; a state reached inside the token branches on its own.
            let clean = clean && (depth == 1 || !row.branches);
            let step = row.steps[node.byte as usize];
            if step == NO_STEP {
                if !clean {
                    for pos in node.pos as usize..trie.node_pos_end(i) {
                        set(&mut inexact, trie.token(pos).as_u32());
                    }
                }
                i = node.end as usize;
                continue;
            }
            let target = step & !MANY_STEPS;
            let clean = clean && step & MANY_STEPS == 0;
            if node.has_token() {
                let rest = table.rest[target as usize];
                let at = match classes.iter().position(|c| c.0 == rest && c.1 == clean) {
                    Some(at) => at,
                    None => {
                        classes.push((rest, clean, vec![0u32; words]));
                        classes.len() - 1
                    }
                };
                for pos in trie.tokens_at_node(i) {
                    set(&mut classes[at].2, trie.token(pos).as_u32());
                }
            }
            path.push((table.row(g, target), clean));
            i += 1;
        }
        StateWalk {
            classes: classes
                .into_iter()
                .map(|(rest, clean, bits)| WalkClass {
                    rest,
                    clean,
                    tokens: TokenSet::from_bits(bits),
                })
                .collect(),
            inexact: TokenSet::from_bits(inexact),
        }
    }

    fn heap_bytes(&self) -> usize {
        self.inexact.heap_bytes()
            + self
                .classes
                .iter()
                .map(|c| c.tokens.heap_bytes() + std::mem::size_of::<WalkClass>())
                .sum::<usize>()
    }
}

/// The routes of a parser's sets up to some length: `R` of every node reachable from that
/// top set, valid for as long as those sets are not popped (sets below the top never change,
/// and `R(A, i)` reads only sets up to `i`).
#[derive(Clone, Debug, Default)]
pub struct CompletionMemo {
    /// The parser's length when the memo was made.
    len: usize,
    values: NodeMap<u32>,
}

/// The nodes reachable from the top set's scan items through waiters, with their `R`; nodes
/// found in a memo are not expanded.
struct Routes {
    index: NodeMap<usize>,
    nodes: Vec<(u32, u32)>,
    value: Vec<u32>,
    /// Whether the node's value came from the memo.
    known: Vec<bool>,
}

impl Routes {
    fn of(parser: &Parser, table: &CompletionTable, memo: Option<&CompletionMemo>) -> Routes {
        let g = &**parser.grammar();
        let mut routes = Routes {
            index: NodeMap::default(),
            nodes: Vec::new(),
            value: Vec::new(),
            known: Vec::new(),
        };
        let memo = memo.filter(|m| m.len <= parser.len());
        for item in parser.top_scans() {
            routes.add(g.states[item.state as usize].rule, item.origin, memo);
        }
        let mut next = 0;
        while next < routes.nodes.len() {
            let (rule, origin) = routes.nodes[next];
            if !routes.known[next] {
                for advanced in parser.waiting_on(rule, origin) {
                    routes.add(
                        g.states[advanced.state as usize].rule,
                        advanced.origin,
                        memo,
                    );
                }
            }
            next += 1;
        }
        // Origin by origin, lowest first: a waiter's own node never starts later.
        let mut order: Vec<usize> = (0..routes.nodes.len())
            .filter(|&n| !routes.known[n])
            .collect();
        order.sort_unstable_by_key(|&n| routes.nodes[n].1);
        for group in order.chunk_by(|&a, &b| routes.nodes[a].1 == routes.nodes[b].1) {
            // Within one origin, relax until nothing changes (costs are non-negative, so
            // this is Bellman–Ford over the group: at most its size rounds).
            loop {
                let mut changed = false;
                for &n in group {
                    let (rule, origin) = routes.nodes[n];
                    let mut best = if rule == g.root && origin == 0 {
                        0
                    } else {
                        INF
                    };
                    for advanced in parser.waiting_on(rule, origin) {
                        let above = routes.index
                            [&(g.states[advanced.state as usize].rule, advanced.origin)];
                        let cost = table
                            .rest_item(g, advanced)
                            .saturating_add(routes.value[above]);
                        best = best.min(cost);
                    }
                    if best < routes.value[n] {
                        routes.value[n] = best;
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
        }
        routes
    }

    fn add(&mut self, rule: u32, origin: u32, memo: Option<&CompletionMemo>) {
        let next = self.nodes.len();
        if let std::collections::hash_map::Entry::Vacant(slot) = self.index.entry((rule, origin)) {
            slot.insert(next);
            self.nodes.push((rule, origin));
            let known = memo
                .filter(|m| origin as usize <= m.len)
                .and_then(|m| m.values.get(&(rule, origin)));
            self.value.push(known.copied().unwrap_or(INF));
            self.known.push(known.is_some());
        }
    }
}

impl Parser {
    /// The bound of `Recognizer::completion_bound` (see the module docs).
    pub fn completion_bound(&self, table: &CompletionTable) -> Option<u32> {
        self.completion_bound_from(table, None)
    }

    /// The bound, reading the routes of `memo` for the nodes it holds (see
    /// `Recognizer::completion_bound_from`).
    pub fn completion_bound_from(
        &self,
        table: &CompletionTable,
        memo: Option<&CompletionMemo>,
    ) -> Option<u32> {
        if self.can_finish() {
            return Some(0);
        }
        let g = &**self.grammar();
        let routes = Routes::of(self, table, memo);
        let best = self
            .top_scans()
            .iter()
            .map(|item| {
                let node = routes.index[&(g.states[item.state as usize].rule, item.origin)];
                table.rest_item(g, *item).saturating_add(routes.value[node])
            })
            .min()
            .unwrap_or(INF);
        (best != INF).then_some(best)
    }

    /// The routes of the current sets, for [`Parser::completion_bound_from`] while they stay.
    pub fn completion_memo(&self, table: &CompletionTable) -> CompletionMemo {
        let routes = Routes::of(self, table, None);
        CompletionMemo {
            len: self.len(),
            values: routes
                .index
                .iter()
                .map(|(&node, &n)| (node, routes.value[n]))
                .collect(),
        }
    }

    /// The decisions of `Recognizer::completion_decide` (see the module docs): per scan
    /// state, its cached walk's classes against `limit - R`.
    pub fn completion_decide(
        &self,
        table: &CompletionTable,
        memo: &CompletionMemo,
        trie: &TokenTrie,
        limit: u32,
        fits: &mut [u32],
        exceeds: &mut [u32],
    ) {
        let g = &**self.grammar();
        let routes = Routes::of(self, table, Some(memo));
        // Per scan item: its state, `R` of its node, and the most `rest` a token may leave
        // it at and keep it past the token's end (token limits; unlimited otherwise).
        let mut states: Vec<(u32, u32, u32)> = self
            .top_scans()
            .iter()
            .map(|item| {
                let node = routes.index[&(g.states[item.state as usize].rule, item.origin)];
                (
                    item.state,
                    routes.value[node],
                    self.rest_room_after_token(*item),
                )
            })
            .collect();
        // The least `R` per state and room (one entry per state without token limits).
        states.sort_unstable_by_key(|&(state, r, room)| (state, room, r));
        states.dedup_by_key(|&mut (state, _, room)| (state, room));
        let words = fits.len();
        let mut consumed = vec![0u32; words];
        let mut inexact = vec![0u32; words];
        for &(state, r, room) in &states {
            let walk = table.walk(g, trie, state);
            for class in &walk.classes {
                // A token that leaves a limited item further from its end than the tokens it
                // has left drops the item: its route is gone, so it proves nothing.
                let kept = class.rest == 0 || class.rest <= room;
                if kept && class.rest.saturating_add(r) <= limit {
                    class.tokens.or_into(fits);
                }
                class.tokens.or_into(&mut consumed);
                if !class.clean {
                    class.tokens.or_into(&mut inexact);
                }
            }
            walk.inexact.or_into(&mut inexact);
        }
        // Consumed somewhere, exact everywhere, and no route fits: the bound exceeds.
        for (w, exceeds) in exceeds.iter_mut().enumerate().take(words) {
            *exceeds |= consumed[w] & !inexact[w] & !fits[w];
        }
    }

    /// The caps of `Recognizer::completion_caps` (see the module docs).
    pub fn completion_caps(&self, table: &CompletionTable, caps: &mut [u32]) {
        caps.fill(0);
        let routes = Routes::of(self, table, None);
        for (&(rule, _), &value) in routes.nodes.iter().zip(&routes.value) {
            for (d, cap) in caps.iter_mut().enumerate() {
                *cap = (*cap).max(table.within_at(rule, d).saturating_add(value));
            }
        }
    }
}
