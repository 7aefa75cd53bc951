//! Byte automata for the terminal operators that need them: `&` (intersection), `~`
//! (complement) and lazy lexemes (`name[lazy]:`).
//!
//! A terminal's IR expression (references to other terminals inlined) becomes a Thompson NFA
//! over bytes, then a complete DFA by subset construction (state 0 is the start; a dead state
//! is an ordinary non-accepting state). The operations work on complete DFAs:
//! - `&`: the product, accepting where both accept;
//! - `~`: the same automaton with accepting and non-accepting states swapped, so the
//!   complement is over *all byte strings*, invalid UTF-8 included (as in llguidance), except
//!   those holding the token marker `0xFF`, which is in no text;
//! - lazy: every edge out of an accepting state is dropped, which leaves exactly the strings
//!   of the language none of whose proper prefixes is in the language (the lexeme ends at its
//!   first possible end).
//!
//! The result is emitted as right-linear rules, one per live state (`S ::= [class] T | … |
//! ε`), so the rest of sieve sees an ordinary grammar.
//!
//! **Invariants:** every automaton built here is complete (256 edges per state); NFA and DFA
//! sizes are bounded by [`crate::Limits::max_automaton_states`], past which construction
//! stops with an error instead of growing; inlining refuses cyclic references.

use foldhash::HashMap;
use sieve_ir::token::TOKEN_MARKER;
use sieve_ir::{ByteClass, Expr, ExprKind, GrammarBuilder, RuleId};

/// Why an automaton could not be built.
#[derive(Debug)]
pub(crate) enum DfaError {
    /// Over the state limit.
    TooLarge,
    /// A rule that refers to itself: not regular as written.
    Recursive(RuleId),
}

/// A Thompson NFA: ε-edges and byte-class edges per state.
struct Nfa {
    eps: Vec<Vec<u32>>,
    edges: Vec<Vec<(ByteClass, u32)>>,
    limit: usize,
}

impl Nfa {
    fn state(&mut self) -> Result<u32, DfaError> {
        if self.eps.len() >= self.limit {
            return Err(DfaError::TooLarge);
        }
        self.eps.push(Vec::new());
        self.edges.push(Vec::new());
        u32::try_from(self.eps.len() - 1).map_err(|_| DfaError::TooLarge)
    }

    /// Adds `expr` between fresh states; returns (entry, exit).
    fn build(
        &mut self,
        expr: &Expr,
        env: &Env<'_>,
        stack: &mut Vec<RuleId>,
    ) -> Result<(u32, u32), DfaError> {
        let from = self.state()?;
        let to = self.state()?;
        match expr.kind() {
            ExprKind::Empty => self.eps[from as usize].push(to),
            ExprKind::Bytes(bytes) => {
                let mut at = from;
                for (i, &b) in bytes.iter().enumerate() {
                    let next = if i + 1 == bytes.len() {
                        to
                    } else {
                        self.state()?
                    };
                    self.edges[at as usize].push((ByteClass::byte(b), next));
                    at = next;
                }
            }
            ExprKind::Class(class) => self.edges[from as usize].push((*class, to)),
            ExprKind::Ref(id) if env.built.contains_key(id) => {
                self.embed(&env.built[id], from, to)?;
            }
            ExprKind::Ref(id) => {
                if stack.contains(id) {
                    return Err(DfaError::Recursive(*id));
                }
                let Some(body) = env.builder.body(*id) else {
                    return Err(DfaError::Recursive(*id));
                };
                stack.push(*id);
                let (a, b) = self.build(body, env, stack)?;
                stack.pop();
                self.eps[from as usize].push(a);
                self.eps[b as usize].push(to);
            }
            ExprKind::Seq(items) => {
                let mut at = from;
                for item in items {
                    let (a, b) = self.build(item, env, stack)?;
                    self.eps[at as usize].push(a);
                    at = b;
                }
                self.eps[at as usize].push(to);
            }
            ExprKind::Choice(alts) => {
                for alt in alts {
                    let (a, b) = self.build(alt, env, stack)?;
                    self.eps[from as usize].push(a);
                    self.eps[b as usize].push(to);
                }
            }
            ExprKind::Repeat { item, min, max } => {
                let mut at = from;
                for _ in 0..*min {
                    let (a, b) = self.build(item, env, stack)?;
                    self.eps[at as usize].push(a);
                    at = b;
                }
                match max {
                    None => {
                        let (a, b) = self.build(item, env, stack)?;
                        self.eps[at as usize].push(a);
                        self.eps[b as usize].push(a);
                        self.eps[b as usize].push(to);
                    }
                    Some(max) => {
                        for _ in *min..*max {
                            let (a, b) = self.build(item, env, stack)?;
                            self.eps[at as usize].push(a);
                            self.eps[at as usize].push(to);
                            at = b;
                        }
                    }
                }
                self.eps[at as usize].push(to);
            }
        }
        Ok((from, to))
    }

    /// Adds a copy of `dfa` between `from` and `to` (only the states that can accept).
    fn embed(&mut self, dfa: &Dfa, from: u32, to: u32) -> Result<(), DfaError> {
        let live = dfa.live();
        let mut map = vec![u32::MAX; dfa.next.len()];
        for (s, &l) in live.iter().enumerate() {
            if l {
                map[s] = self.state()?;
            }
        }
        if !live[0] {
            return Ok(());
        }
        self.eps[from as usize].push(map[0]);
        for (s, row) in dfa.next.iter().enumerate() {
            if !live[s] {
                continue;
            }
            if dfa.accept[s] {
                self.eps[map[s] as usize].push(to);
            }
            for (t, class) in classes_by_target(row, &live) {
                self.edges[map[s] as usize].push((class, map[t as usize]));
            }
        }
        Ok(())
    }
}

/// Epsilon closures over one NFA, with the visited marks and the stack kept between calls
/// (a closure costs the states it reaches, not the size of the NFA).
struct Closure {
    /// `stamp[s] == generation`: `s` is in the closure being computed.
    stamp: Vec<u32>,
    generation: u32,
    stack: Vec<u32>,
}

impl Closure {
    fn new(states: usize) -> Closure {
        Closure {
            stamp: vec![0; states],
            generation: 0,
            stack: Vec::new(),
        }
    }

    /// Extends `set` with every state its members reach by epsilon edges, then sorts it.
    fn close(&mut self, nfa: &Nfa, set: &mut Vec<u32>) {
        self.generation += 1;
        let generation = self.generation;
        self.stack.clear();
        for &s in set.iter() {
            self.stamp[s as usize] = generation;
            self.stack.push(s);
        }
        while let Some(s) = self.stack.pop() {
            for &t in &nfa.eps[s as usize] {
                if self.stamp[t as usize] != generation {
                    self.stamp[t as usize] = generation;
                    set.push(t);
                    self.stack.push(t);
                }
            }
        }
        set.sort_unstable();
    }
}

/// The 256 bytes cut into intervals: `of[b]` is the interval of byte `b`, `starts[i]` the first
/// byte of interval `i`.
struct Intervals {
    of: [u16; 256],
    starts: Vec<u8>,
}

impl Intervals {
    /// The intervals that begin at byte 0 and at every byte `b` with `cut[b]`.
    fn from_cuts(cut: &[bool; 256]) -> Intervals {
        let mut of = [0u16; 256];
        let mut starts = vec![0u8];
        for b in 1..=255u8 {
            if cut[usize::from(b)] {
                starts.push(b);
            }
            of[usize::from(b)] = u16::try_from(starts.len() - 1).expect("at most 256 intervals");
        }
        Intervals { of, starts }
    }

    /// The intervals of bytes on which every state of `automata` moves alike: a byte that
    /// some row sends elsewhere than the byte before it starts a new one.
    fn of_automata(automata: &[&Dfa]) -> Intervals {
        let mut cut = [false; 256];
        for row in automata.iter().flat_map(|d| &d.next) {
            for b in 1..256 {
                cut[b] |= row[b] != row[b - 1];
            }
        }
        Intervals::from_cuts(&cut)
    }
}

/// An NFA's byte edges over intervals of bytes its edges never tell apart (every edge's byte
/// class is a union of them), so a subset construction steps once per interval instead of per
/// byte.
struct Alphabet {
    intervals: Intervals,
    /// Per interval, the edge labels (indices into the NFA's distinct byte classes) holding
    /// its bytes.
    labels_of_interval: Vec<Vec<u32>>,
    /// `edges[s]`: state `s`'s byte edges as (label, target).
    edges: Vec<Vec<(u32, u32)>>,
}

impl Alphabet {
    fn of(nfa: &Nfa) -> Alphabet {
        let mut labels: Vec<ByteClass> = Vec::new();
        let mut index: HashMap<ByteClass, u32> = HashMap::default();
        let edges: Vec<Vec<(u32, u32)>> = nfa
            .edges
            .iter()
            .map(|row| {
                row.iter()
                    .map(|(class, t)| {
                        let k = *index.entry(*class).or_insert_with(|| {
                            labels.push(*class);
                            u32::try_from(labels.len() - 1).expect("labels fit u32")
                        });
                        (k, *t)
                    })
                    .collect()
            })
            .collect();
        let mut cut = [false; 256];
        for (lo, hi) in labels.iter().flat_map(ByteClass::ranges) {
            cut[usize::from(lo)] = true;
            if let Some(after) = hi.checked_add(1) {
                cut[usize::from(after)] = true;
            }
        }
        let intervals = Intervals::from_cuts(&cut);
        let labels_of_interval = intervals
            .starts
            .iter()
            .map(|&b| {
                (0..labels.len())
                    .filter(|&k| labels[k].contains(b))
                    .map(|k| u32::try_from(k).expect("labels fit u32"))
                    .collect()
            })
            .collect();
        Alphabet {
            intervals,
            labels_of_interval,
            edges,
        }
    }
}

/// What inlining sees: the builder's rule bodies, and the automata already emitted as rules
/// (by their head rule), which are copied in whole rather than walked as right-linear rules.
pub(crate) struct Env<'a> {
    pub builder: &'a GrammarBuilder,
    pub built: &'a HashMap<RuleId, Dfa>,
}

/// The edges of one DFA row to live states, grouped by target, in order of first byte.
fn classes_by_target(row: &[u32; 256], live: &[bool]) -> Vec<(u32, ByteClass)> {
    let mut by_target: Vec<(u32, ByteClass)> = Vec::new();
    for (b, &t) in row.iter().enumerate() {
        if !live[t as usize] {
            continue;
        }
        match by_target.iter_mut().find(|(x, _)| *x == t) {
            Some((_, class)) => class.insert(b as u8),
            None => by_target.push((t, ByteClass::byte(b as u8))),
        }
    }
    by_target
}

/// A complete DFA over bytes; state 0 is the start.
#[derive(Clone, Debug)]
pub(crate) struct Dfa {
    next: Vec<[u32; 256]>,
    accept: Vec<bool>,
}

impl Dfa {
    /// The DFA of `expr`, with the builder's rule bodies inlined for references.
    pub(crate) fn from_expr(expr: &Expr, env: &Env<'_>, limit: usize) -> Result<Dfa, DfaError> {
        let mut nfa = Nfa {
            eps: Vec::new(),
            edges: Vec::new(),
            limit,
        };
        let (start, end) = nfa.build(expr, env, &mut Vec::new())?;
        Dfa::determinize(&nfa, start, end, limit)
    }

    /// The concatenation of two automata' languages.
    pub(crate) fn concat(&self, other: &Dfa, limit: usize) -> Result<Dfa, DfaError> {
        let mut nfa = Nfa {
            eps: Vec::new(),
            edges: Vec::new(),
            limit,
        };
        let start = nfa.state()?;
        let middle = nfa.state()?;
        let end = nfa.state()?;
        nfa.embed(self, start, middle)?;
        nfa.embed(other, middle, end)?;
        Dfa::determinize(&nfa, start, end, limit)
    }

    /// The union of several automata's languages.
    pub(crate) fn union(parts: &[Dfa], limit: usize) -> Result<Dfa, DfaError> {
        let mut nfa = Nfa {
            eps: Vec::new(),
            edges: Vec::new(),
            limit,
        };
        let start = nfa.state()?;
        let end = nfa.state()?;
        for part in parts {
            nfa.embed(part, start, end)?;
        }
        Dfa::determinize(&nfa, start, end, limit)
    }

    /// Subset construction from `start`, accepting where `end` is reached: one step per class
    /// of bytes the NFA's edges never tell apart ([`Alphabet`]), and one closure per run of
    /// neighbouring classes with the same targets.
    fn determinize(nfa: &Nfa, start: u32, end: u32, limit: usize) -> Result<Dfa, DfaError> {
        let alphabet = Alphabet::of(nfa);
        let classes = alphabet.labels_of_interval.len();
        let mut closure = Closure::new(nfa.eps.len());
        // A set is kept as the states of its closure that matter: those with a byte edge, and
        // `end`. Two closures that agree on them step and accept alike.
        let matters: Vec<bool> = (0..nfa.eps.len())
            .map(|s| s == end as usize || !nfa.edges[s].is_empty())
            .collect();
        let mut first = vec![start];
        closure.close(nfa, &mut first);
        first.retain(|&s| matters[s as usize]);
        let mut ids: HashMap<Vec<u32>, u32> = HashMap::default();
        let mut sets = vec![first.clone()];
        ids.insert(first, 0);
        let mut dfa = Dfa {
            next: Vec::new(),
            accept: Vec::new(),
        };
        // Per label, the targets of the current set's edges with it; per class, the union
        // over its labels.
        let mut label_targets: Vec<Vec<u32>> = Vec::new();
        let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); classes];
        let mut target_of_class = vec![0u32; classes];
        let mut i = 0;
        while i < sets.len() {
            dfa.accept.push(sets[i].binary_search(&end).is_ok());
            label_targets.iter_mut().for_each(Vec::clear);
            for &s in &sets[i] {
                for &(k, t) in &alphabet.edges[s as usize] {
                    let k = k as usize;
                    if label_targets.len() <= k {
                        label_targets.resize_with(k + 1, Vec::new);
                    }
                    label_targets[k].push(t);
                }
            }
            let mut previous: Option<(usize, u32)> = None;
            for c in 0..classes {
                let bucket = &mut buckets[c];
                bucket.clear();
                for &k in &alphabet.labels_of_interval[c] {
                    if let Some(targets) = label_targets.get(k as usize) {
                        bucket.extend_from_slice(targets);
                    }
                }
                bucket.sort_unstable();
                bucket.dedup();
                if let Some((p, id)) = previous {
                    if buckets[p] == buckets[c] {
                        target_of_class[c] = id;
                        previous = Some((c, id));
                        continue;
                    }
                }
                let mut target = buckets[c].clone();
                closure.close(nfa, &mut target);
                target.retain(|&s| matters[s as usize]);
                let id = match ids.get(&target) {
                    Some(&id) => id,
                    None => {
                        if sets.len() >= limit {
                            return Err(DfaError::TooLarge);
                        }
                        let id = u32::try_from(sets.len()).map_err(|_| DfaError::TooLarge)?;
                        ids.insert(target.clone(), id);
                        sets.push(target);
                        id
                    }
                };
                target_of_class[c] = id;
                previous = Some((c, id));
            }
            let mut row = [0u32; 256];
            for (slot, &c) in row.iter_mut().zip(&alphabet.intervals.of) {
                *slot = target_of_class[usize::from(c)];
            }
            dfa.next.push(row);
            i += 1;
        }
        Ok(dfa)
    }

    /// The product automaton accepting where both do.
    pub(crate) fn intersect(&self, other: &Dfa, limit: usize) -> Result<Dfa, DfaError> {
        let intervals = Intervals::of_automata(&[self, other]);
        let mut ids: HashMap<(u32, u32), u32> = HashMap::default();
        let mut pairs = vec![(0u32, 0u32)];
        ids.insert((0, 0), 0);
        let mut out = Dfa {
            next: Vec::new(),
            accept: Vec::new(),
        };
        let mut i = 0;
        while i < pairs.len() {
            let (a, b) = pairs[i];
            out.accept
                .push(self.accept[a as usize] && other.accept[b as usize]);
            let mut by_interval = vec![0u32; intervals.starts.len()];
            for (slot, &byte) in by_interval.iter_mut().zip(&intervals.starts) {
                let byte = usize::from(byte);
                let key = (self.next[a as usize][byte], other.next[b as usize][byte]);
                *slot = match ids.get(&key) {
                    Some(&id) => id,
                    None => {
                        if pairs.len() >= limit {
                            return Err(DfaError::TooLarge);
                        }
                        let id = u32::try_from(pairs.len()).map_err(|_| DfaError::TooLarge)?;
                        ids.insert(key, id);
                        pairs.push(key);
                        id
                    }
                };
            }
            let mut row = [0u32; 256];
            for (slot, &i) in row.iter_mut().zip(&intervals.of) {
                *slot = by_interval[usize::from(i)];
            }
            out.next.push(row);
            i += 1;
        }
        Ok(out)
    }

    /// The automaton of every byte string.
    pub(crate) fn everything() -> Dfa {
        Dfa {
            next: vec![[0; 256]],
            accept: vec![true],
        }
    }

    /// The minimal automaton of the same language (Moore's partition refinement), with the
    /// states that cannot accept merged into one dead state.
    pub(crate) fn minimize(&self) -> Dfa {
        let n = self.next.len();
        let live = self.live();
        // Initial classes: dead, live non-accepting, accepting.
        let mut class: Vec<u32> = (0..n)
            .map(|s| {
                if !live[s] {
                    0
                } else if self.accept[s] {
                    2
                } else {
                    1
                }
            })
            .collect();
        let representatives = Intervals::of_automata(&[self]).starts;
        // A state's signature: its class, then its targets' classes on each interval (all
        // zero for a dead state, whose edges do not matter). Equal signatures, one class.
        let width = representatives.len() + 1;
        let mut signatures = vec![0u32; n * width];
        let mut count = 0;
        loop {
            for (s, signature) in signatures.chunks_exact_mut(width).enumerate() {
                signature[0] = class[s];
                if live[s] {
                    for (slot, &b) in signature[1..].iter_mut().zip(&representatives) {
                        *slot = class[self.next[s][usize::from(b)] as usize];
                    }
                }
            }
            let mut ids: HashMap<&[u32], u32> = HashMap::default();
            ids.reserve(n);
            for (s, signature) in signatures.chunks_exact(width).enumerate() {
                let len = u32::try_from(ids.len()).expect("state count fits u32");
                class[s] = *ids.entry(signature).or_insert(len);
            }
            let new_count = ids.len();
            if new_count == count {
                break;
            }
            count = new_count;
        }
        // Renumber so the start is 0, in order of first appearance from it.
        let mut number = vec![u32::MAX; count];
        let mut order = vec![class[0]];
        number[class[0] as usize] = 0;
        let mut representative = vec![0usize; count];
        for s in (0..n).rev() {
            representative[class[s] as usize] = s;
        }
        let mut i = 0;
        while i < order.len() {
            let s = representative[order[i] as usize];
            for &t in &self.next[s] {
                let c = class[t as usize];
                if number[c as usize] == u32::MAX {
                    number[c as usize] = order.len() as u32;
                    order.push(c);
                }
            }
            i += 1;
        }
        let mut out = Dfa {
            next: Vec::with_capacity(order.len()),
            accept: Vec::with_capacity(order.len()),
        };
        for &c in &order {
            let s = representative[c as usize];
            let mut row = [0u32; 256];
            for (b, slot) in row.iter_mut().enumerate() {
                *slot = number[class[self.next[s][b] as usize] as usize];
            }
            out.next.push(row);
            out.accept.push(self.accept[s]);
        }
        out
    }

    /// The complement over all byte strings without the token marker `0xFF` (which no text
    /// holds: see `sieve_ir::token`).
    pub(crate) fn complement(mut self) -> Dfa {
        for a in &mut self.accept {
            *a = !*a;
        }
        let dead = u32::try_from(self.next.len()).expect("state count fits u32");
        for row in &mut self.next {
            row[usize::from(TOKEN_MARKER)] = dead;
        }
        self.next.push([dead; 256]);
        self.accept.push(false);
        self
    }

    /// The lazy restriction: strings of the language with no proper prefix in it.
    pub(crate) fn lazy(mut self) -> Dfa {
        // Send every edge out of an accepting state to a fresh dead state.
        let dead = u32::try_from(self.next.len()).expect("state count fits u32");
        let mut any = false;
        for s in 0..self.next.len() {
            if self.accept[s] {
                self.next[s] = [dead; 256];
                any = true;
            }
        }
        if any {
            self.next.push([dead; 256]);
            self.accept.push(false);
        }
        self
    }

    /// Which states can reach an accepting state.
    fn live(&self) -> Vec<bool> {
        let n = self.next.len();
        let mut reverse: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (s, row) in self.next.iter().enumerate() {
            let mut last = u32::MAX;
            for &t in row {
                // Rows hold long runs of one target; a repeated edge adds nothing.
                if t != last {
                    reverse[t as usize].push(s as u32);
                    last = t;
                }
            }
        }
        let mut live = self.accept.clone();
        let mut stack: Vec<u32> = (0..n as u32).filter(|&s| live[s as usize]).collect();
        while let Some(t) = stack.pop() {
            for &s in &reverse[t as usize] {
                if !live[s as usize] {
                    live[s as usize] = true;
                    stack.push(s);
                }
            }
        }
        live
    }

    /// Emits the automaton as right-linear rules named after `base`; `head` becomes the start
    /// state's rule. Returns `false` (emitting nothing) if the language is empty.
    pub(crate) fn emit(
        &self,
        builder: &mut GrammarBuilder,
        head: RuleId,
        base: &str,
    ) -> Result<bool, sieve_ir::IrError> {
        let n = self.next.len();
        let live = self.live();
        if !live[0] {
            return Ok(false);
        }
        let edges: Vec<Vec<(u32, ByteClass)>> = self
            .next
            .iter()
            .map(|row| classes_by_target(row, &live))
            .collect();
        // Passing states: not the start, not accepting, one successor that is not itself
        // (a UTF-8 continuation byte, a keyword's inner letter). They are inlined into the
        // paths through them, unless they chain for more than `MAX_CHAIN` bytes.
        const MAX_CHAIN: usize = 4;
        let passing = |s: usize| {
            s != 0 && !self.accept[s] && edges[s].len() == 1 && edges[s][0].0 as usize != s
        };
        let mut inlined = vec![false; n];
        for (s, slot) in inlined.iter_mut().enumerate() {
            let mut at = s;
            let mut len = 0;
            while passing(at) && len <= MAX_CHAIN {
                at = edges[at][0].0 as usize;
                len += 1;
            }
            *slot = passing(s) && !passing(at);
        }
        // The path from an edge's target to the first kept state.
        let path = |mut t: usize| {
            let mut items = Vec::new();
            while inlined[t] {
                let (next, class) = &edges[t][0];
                items.push(*class);
                t = *next as usize;
            }
            (items, t)
        };
        // Kept states reachable from the start, in BFS order.
        let mut rule: Vec<Option<RuleId>> = vec![None; n];
        rule[0] = Some(head);
        let mut order = vec![0usize];
        let mut i = 0;
        while i < order.len() {
            for (t, _) in &edges[order[i]] {
                let (_, kept) = path(*t as usize);
                if rule[kept].is_none() {
                    rule[kept] = Some(builder.fresh(base)?);
                    order.push(kept);
                }
            }
            i += 1;
        }
        // `S ::= (loops)* (exits | "")`: paths back to `S` become a repetition.
        for &s in &order {
            let mut loops = Vec::new();
            let mut exits = Vec::new();
            for (t, class) in &edges[s] {
                let (middle, kept) = path(*t as usize);
                let mut items = vec![Expr::class(*class)];
                items.extend(middle.into_iter().map(Expr::class));
                let Some(mut items) = items.into_iter().collect::<Option<Vec<Expr>>>() else {
                    continue;
                };
                if kept == s {
                    loops.push(Expr::seq(items));
                } else {
                    let target = rule[kept].expect("kept reachable state has a rule");
                    items.push(Expr::rule(target));
                    exits.push(Expr::seq(items));
                }
            }
            if self.accept[s] {
                exits.push(Expr::empty());
            }
            let exits = Expr::choice(exits).expect("a live state has an exit or accepts");
            let body = match Expr::choice(loops) {
                Some(l) => Expr::seq([Expr::star(l), exits]),
                None => exits,
            };
            builder.define(rule[s].expect("kept state has a rule"), body);
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sieve_ir::reference::Recognizer;

    fn lit(s: &str) -> Expr {
        Expr::bytes(s.as_bytes())
    }

    fn ab_star() -> Expr {
        Expr::star(Expr::class(ByteClass::from_ranges([(b'a', b'b')])).unwrap())
    }

    fn accepts(dfa: &Dfa, s: &[u8]) -> bool {
        let mut at = 0;
        for &b in s {
            at = dfa.next[at][b as usize] as usize;
        }
        dfa.accept[at]
    }

    fn all_strings(len: usize) -> Vec<Vec<u8>> {
        let mut out = vec![Vec::new()];
        let mut layer = vec![Vec::new()];
        for _ in 0..len {
            let mut next = Vec::new();
            for s in &layer {
                for b in [b'a', b'b'] {
                    let mut t: Vec<u8> = s.clone();
                    t.push(b);
                    next.push(t);
                }
            }
            out.extend(next.iter().cloned());
            layer = next;
        }
        out
    }

    #[test]
    fn operations_match_their_definitions() {
        let b = GrammarBuilder::new();
        let built = HashMap::default();
        let b = Env {
            builder: &b,
            built: &built,
        };
        let any = Dfa::from_expr(&ab_star(), &b, 1000).unwrap();
        // Strings containing "ab".
        let has_ab = Expr::seq([ab_star(), lit("ab"), ab_star()]);
        let has_ab = Dfa::from_expr(&has_ab, &b, 1000).unwrap();
        let without = any.intersect(&has_ab.clone().complement(), 1000).unwrap();
        let lazy = has_ab.clone().lazy();
        for s in all_strings(7) {
            let contains = s.windows(2).any(|w| w == b"ab");
            assert_eq!(accepts(&without, &s), !contains, "{s:?}");
            // Lazy: contains "ab" and ends at its first occurrence.
            let first_end = s.windows(2).position(|w| w == b"ab").map(|i| i + 2);
            assert_eq!(accepts(&lazy, &s), first_end == Some(s.len()), "{s:?}");
        }
    }

    #[test]
    fn emitted_rules_accept_the_automaton_language() {
        let mut b = GrammarBuilder::new();
        let built = HashMap::default();
        let env = Env {
            builder: &GrammarBuilder::new(),
            built: &built,
        };
        let any = Dfa::from_expr(&ab_star(), &env, 1000).unwrap();
        let has_ab =
            Dfa::from_expr(&Expr::seq([ab_star(), lit("ab"), ab_star()]), &env, 1000).unwrap();
        let without = any.intersect(&has_ab.complement(), 1000).unwrap();
        let head = b.declare("T").unwrap();
        assert!(without.emit(&mut b, head, "T").unwrap());
        let grammar = b.build(head).unwrap();
        let recognizer = Recognizer::new(&grammar).unwrap();
        for s in all_strings(6) {
            assert_eq!(recognizer.accepts(&s), accepts(&without, &s), "{s:?}");
        }
    }

    #[test]
    fn minimizing_keeps_the_language_and_merges_states() {
        let built = HashMap::default();
        let b = GrammarBuilder::new();
        let env = Env {
            builder: &b,
            built: &built,
        };
        let has_ab =
            Dfa::from_expr(&Expr::seq([ab_star(), lit("ab"), ab_star()]), &env, 1000).unwrap();
        let twice = Expr::choice([
            Expr::seq([ab_star(), lit("ab"), ab_star()]),
            Expr::seq([ab_star(), lit("ab"), ab_star()]),
        ])
        .unwrap();
        let twice = Dfa::from_expr(&twice, &env, 1000).unwrap();
        let min = twice.minimize();
        // Strings over {a, b} containing "ab": three live states and one dead.
        assert_eq!(min.next.len(), 4);
        for s in all_strings(7) {
            assert_eq!(accepts(&min, &s), accepts(&has_ab, &s), "{s:?}");
        }
    }

    #[test]
    fn empty_language_emits_nothing() {
        let mut b = GrammarBuilder::new();
        let built = HashMap::default();
        let env = Env {
            builder: &GrammarBuilder::new(),
            built: &built,
        };
        let a = Dfa::from_expr(&lit("a"), &env, 100).unwrap();
        let none = a.intersect(&a.clone().complement(), 100).unwrap();
        let head = b.declare("T").unwrap();
        assert!(!none.emit(&mut b, head, "T").unwrap());
    }

    #[test]
    fn state_limit_is_an_error() {
        let b = GrammarBuilder::new();
        let built = HashMap::default();
        let b = Env {
            builder: &b,
            built: &built,
        };
        let e = Expr::repeat(Expr::class(ByteClass::range(0, 255)).unwrap(), 50, Some(50)).unwrap();
        assert!(matches!(
            Dfa::from_expr(&e, &b, 20),
            Err(DfaError::TooLarge)
        ));
    }
}
