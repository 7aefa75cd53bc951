//! The LR(1) construction over a regular right-part grammar: item sets of *threads* (rule
//! instances), merged with Pager's weak compatibility, then the action and goto tables.
//!
//! # Items and threads
//!
//! An item is a global automaton state `s` (which names its rule and where in the rule's
//! automaton the instance is) with a look-ahead set. A state's *kernel* items are the rule
//! instances that consumed the last symbol; its *closure* items are the rules that may start
//! here (one per rule, at the rule's start state). Unlike textbook LR, two kernel items may
//! have the same automaton state: two instances of one rule, started at different places,
//! which reached the same state (`S ::= A "x" | "b" A "y"`, `A ::= "b"? "a"`: after `ba`,
//! `A` is either `ba` or `a`). They stay separate items, so each remembers where its rule
//! started (the parser records that per item, see [`crate::machine`]); if their look-aheads
//! meet they can only end together, which is reported as a conflict at once.
//!
//! # Merging
//!
//! States with the same kernel automaton states (each at most once) are merged when Pager's
//! weak compatibility holds: for every two kernel items `i ≠ j`, the merged look-aheads of
//! `i` and `j` meet only if they already met in one of the two states. That never introduces a
//! reduce/reduce conflict canonical LR(1) would not have, so merging keeps LR(1) power while
//! giving about LALR(1)'s table size. A merged state whose look-aheads grew is processed
//! again, so its successors carry them. Merging can delay the detection of an error by some
//! reductions (as in LALR(1)); the parser checks a byte's shift before committing it, so
//! recognition stays exact.
//!
//! # Token ends
//!
//! A grammar with token limits has one more symbol, `⊥` (a token end, see [`crate::rules`]),
//! which only ever moves the top frame's kernel items: it is never a look-ahead and selects no
//! reduction. `⊥` from a state takes each kernel item to its automaton state's `token_end`,
//! drops the items it kills and leaves the others in place; the closure follows from the new
//! kernel. A state whose kernel items all stay put has no `⊥` transition (it is left as is);
//! one whose kernel items all die rejects the token end.
//!
//! # Invariants
//!
//! - Every state's kernel is sorted by `(state, look-ahead)`; transitions record, for each
//!   kernel item of the target, the index of the item of the source it advanced.
//! - The tables have at most one action per state and terminal; otherwise the build fails
//!   with the conflict named.
//! - Work and memory are bounded by [`crate::Config::max_states`].

use std::cell::RefCell;
use std::collections::VecDeque;

use foldhash::{HashMap, HashMapExt};

use crate::error::{Conflict, ConflictAction, ConflictItem, LrError};
use crate::lookahead::{La, EOF};
use crate::rules::{Rules, DEAD, STAY};
use crate::tables::{Tables, TokenEnd, ACCEPT, REDUCE, SHIFT, TERMINALS};
use crate::Config;

/// Bytes of a sample prefix in a conflict report.
const PREFIX_CAP: usize = 200;

/// A kernel: `(automaton state, look-ahead)`, sorted.
type Kernel = Vec<(u32, La)>;

/// Items advanced by one symbol: `(target automaton state, look-ahead, source item)`.
type Moved = Vec<(u32, La, u16)>;

/// What led to a state first (for sample prefixes).
#[derive(Clone, Copy, Debug)]
enum Sym {
    Byte(u8),
    Rule(u32),
    /// A token end.
    TokenEnd,
}

/// A transition out of a processed state.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Edge {
    target: u32,
    /// Per kernel item of the target, the source item it advanced.
    sources: Vec<u16>,
}

/// The transitions of a processed state.
#[derive(Clone, Debug, Default)]
struct Out {
    /// `(lo, hi, edge)`: disjoint byte ranges.
    bytes: Vec<(u8, u8, Edge)>,
    /// `(rule, edge)`.
    gotos: Vec<(u32, Edge)>,
    /// What a token end does.
    token_end: OutEnd,
    /// The state's items (kernel, then closure) when it was processed.
    items: Vec<(u32, La)>,
}

/// What a token end does to a processed state.
#[derive(Clone, Debug, Default)]
enum OutEnd {
    /// Leaves it as it is.
    #[default]
    Stay,
    /// Kills every item.
    Dead,
    Edge(Edge),
}

struct Builder<'a> {
    rules: &'a Rules,
    config: &'a Config,
    kernels: Vec<Kernel>,
    by_core: HashMap<Vec<u32>, Vec<u32>>,
    queue: VecDeque<u32>,
    queued: Vec<bool>,
    out: Vec<Option<Out>>,
    pred: Vec<Option<(u32, Sym)>>,
    /// Scratch of [`Builder::closure`]: per rule, its closure item's index, or `u32::MAX`.
    slots: RefCell<Vec<u32>>,
    /// Scratch of [`Builder::find_or_create`]: a kernel's automaton states.
    core: Vec<u32>,
}

/// Builds the tables of `rules`. When the merged construction meets a conflict, the canonical
/// one runs too: its conflict comes with a prefix that shows it (a merged state's first prefix
/// may reach it in a context without the conflict), and should merging ever have caused the
/// conflict, the canonical tables are used instead.
pub(crate) fn build(rules: &Rules, config: &Config) -> Result<Tables, LrError> {
    match build_with(rules, config) {
        Err(LrError::Conflict(merged)) if config.merge => {
            let canonical = Config {
                merge: false,
                ..config.clone()
            };
            match build_with(rules, &canonical) {
                Err(LrError::Limit { .. }) => Err(LrError::Conflict(merged)),
                other => other,
            }
        }
        other => other,
    }
}

fn build_with(rules: &Rules, config: &Config) -> Result<Tables, LrError> {
    let mut b = Builder {
        rules,
        config,
        kernels: Vec::new(),
        by_core: HashMap::new(),
        queue: VecDeque::new(),
        queued: Vec::new(),
        out: Vec::new(),
        pred: Vec::new(),
        slots: RefCell::new(vec![u32::MAX; rules.rule_start.len()]),
        core: Vec::new(),
    };
    let start = rules.rule_start[rules.start_rule as usize];
    b.find_or_create(vec![(start, La::eof())], None)?;
    while let Some(s) = b.queue.pop_front() {
        b.queued[s as usize] = false;
        b.process(s)?;
    }
    b.tables()
}

impl Builder<'_> {
    /// The kernel plus one closure item per rule that may start here.
    fn closure(&self, kernel: &Kernel) -> Vec<(u32, La)> {
        let rules = self.rules;
        let mut slots = self.slots.borrow_mut();
        let mut items: Vec<(u32, La)> = kernel.clone();
        let mut work: Vec<usize> = (0..items.len()).collect();
        while let Some(i) = work.pop() {
            let (s, la) = items[i];
            for &(callee, target) in &rules.states[s as usize].calls {
                let mut next = rules.first[target as usize];
                if rules.nullable[target as usize] {
                    next.union_with(&la);
                }
                let slot = &mut slots[callee as usize];
                if *slot == u32::MAX {
                    *slot = items.len() as u32;
                    work.push(items.len());
                    items.push((rules.rule_start[callee as usize], next));
                } else if items[*slot as usize].1.union_with(&next) {
                    work.push(*slot as usize);
                }
            }
        }
        for &(start, _) in &items[kernel.len()..] {
            slots[rules.states[start as usize].rule as usize] = u32::MAX;
        }
        items[kernel.len()..].sort_by_key(|&(s, _)| s);
        items
    }

    /// The sorted kernel of the items `(source, state, look-ahead)`, with the sources.
    fn kernel_of(
        &self,
        from: u32,
        sym: Sym,
        mut moved: Moved,
    ) -> Result<(Kernel, Vec<u16>), LrError> {
        moved.sort_by_key(|&(s, la, src)| (s, la, src));
        for pair in moved.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if a.0 == b.0 {
                if let Some(t) = a.1.first_common(&b.1) {
                    let state = &self.rules.states[a.0 as usize];
                    let item = ConflictItem {
                        rule: self.rules.names[state.rule as usize].clone(),
                        state: state.local,
                        action: ConflictAction::Duplicate,
                    };
                    let mut prefix = self.prefix(from);
                    self.push_sym(sym, &mut prefix);
                    prefix.truncate(PREFIX_CAP);
                    return Err(LrError::Conflict(Box::new(Conflict {
                        lookahead: u8::try_from(t).ok(),
                        items: vec![item.clone(), item],
                        prefix,
                    })));
                }
            }
        }
        let sources = moved.iter().map(|m| m.2).collect();
        Ok((
            moved.into_iter().map(|(s, la, _)| (s, la)).collect(),
            sources,
        ))
    }

    fn find_or_create(&mut self, kernel: Kernel, pred: Option<(u32, Sym)>) -> Result<u32, LrError> {
        let mut core = std::mem::take(&mut self.core);
        core.clear();
        core.extend(kernel.iter().map(|&(s, _)| s));
        if let Some(c) = self.find(&core, &kernel) {
            self.core = core;
            return Ok(c);
        }
        let id = self.kernels.len();
        if id >= self.config.max_states {
            return Err(LrError::limit(
                "max_states",
                self.config.max_states,
                "the LR automaton",
            ));
        }
        let id = id as u32;
        self.by_core.entry(core.clone()).or_default().push(id);
        self.core = core;
        self.kernels.push(kernel);
        self.queued.push(true);
        self.queue.push_back(id);
        self.out.push(None);
        self.pred.push(pred);
        Ok(id)
    }

    /// The state `kernel` (whose automaton states are `core`) equals or merges into.
    fn find(&mut self, core: &[u32], kernel: &Kernel) -> Option<u32> {
        let unique = core.windows(2).all(|w| w[0] != w[1]);
        let candidates = self.by_core.get(core)?;
        if let Some(&c) = candidates
            .iter()
            .find(|&&c| self.kernels[c as usize] == *kernel)
        {
            return Some(c);
        }
        if !unique || !self.config.merge {
            return None;
        }
        let c = candidates
            .iter()
            .copied()
            .find(|&c| weakly_compatible(&self.kernels[c as usize], kernel))?;
        let mut changed = false;
        for (a, b) in self.kernels[c as usize].iter_mut().zip(kernel) {
            changed |= a.1.union_with(&b.1);
        }
        if changed && !self.queued[c as usize] {
            self.queued[c as usize] = true;
            self.queue.push_back(c);
        }
        Some(c)
    }

    /// Computes the transitions of state `s` from its current kernel.
    fn process(&mut self, s: u32) -> Result<(), LrError> {
        let items = self.closure(&self.kernels[s as usize]);
        if items.len() > usize::from(u16::MAX) {
            return Err(LrError::limit(
                "max_states",
                self.config.max_states,
                "the items of one LR state (at most 65,535)",
            ));
        }
        let rules = self.rules;
        // Byte ranges: cut at every edge boundary.
        let mut cuts: Vec<u16> = Vec::new();
        for &(state, _) in &items {
            for &(lo, hi, _) in &rules.states[state as usize].bytes {
                cuts.push(u16::from(lo));
                cuts.push(u16::from(hi) + 1);
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        let mut out = Out::default();
        // Ranges whose items move alike share one kernel (a string's characters are cut
        // into many ranges by other items' edges).
        let mut seen: Vec<(Moved, usize)> = Vec::new();
        for w in cuts.windows(2) {
            let (lo, hi) = (w[0] as u8, (w[1] - 1) as u8);
            let moved: Moved = items
                .iter()
                .enumerate()
                .filter_map(|(i, &(state, la))| {
                    rules.states[state as usize]
                        .bytes
                        .iter()
                        .find(|&&(a, b, _)| a <= lo && lo <= b)
                        .map(|&(_, _, target)| (target, la, i as u16))
                })
                .collect();
            if moved.is_empty() {
                continue;
            }
            if let Some(&(_, at)) = seen.iter().find(|(m, _)| *m == moved) {
                let edge = out.bytes[at].2.clone();
                out.bytes.push((lo, hi, edge));
                continue;
            }
            seen.push((moved.clone(), out.bytes.len()));
            let (kernel, sources) = self.kernel_of(s, Sym::Byte(lo), moved)?;
            let target = self.find_or_create(kernel, Some((s, Sym::Byte(lo))))?;
            out.bytes.push((lo, hi, Edge { target, sources }));
        }
        let mut callees: Vec<u32> = items
            .iter()
            .flat_map(|&(state, _)| rules.states[state as usize].calls.iter().map(|c| c.0))
            .collect();
        callees.sort_unstable();
        callees.dedup();
        for callee in callees {
            let moved: Moved = items
                .iter()
                .enumerate()
                .filter_map(|(i, &(state, la))| {
                    rules.states[state as usize]
                        .calls
                        .iter()
                        .find(|c| c.0 == callee)
                        .map(|&(_, target)| (target, la, i as u16))
                })
                .collect();
            let (kernel, sources) = self.kernel_of(s, Sym::Rule(callee), moved)?;
            let target = self.find_or_create(kernel, Some((s, Sym::Rule(callee))))?;
            out.gotos.push((callee, Edge { target, sources }));
        }
        if rules.has_token_limits {
            out.token_end = self.token_end(s)?;
        }
        out.items = items;
        self.out[s as usize] = Some(out);
        Ok(())
    }

    /// The token end of state `s` (see the module docs): only kernel items move.
    fn token_end(&mut self, s: u32) -> Result<OutEnd, LrError> {
        let rules = self.rules;
        let kernel = &self.kernels[s as usize];
        let ends = |state: u32| rules.states[state as usize].token_end;
        if kernel.iter().all(|&(state, _)| ends(state) == STAY) {
            return Ok(OutEnd::Stay);
        }
        let moved: Moved = kernel
            .iter()
            .enumerate()
            .filter_map(|(i, &(state, la))| match ends(state) {
                STAY => Some((state, la, i as u16)),
                DEAD => None,
                target => Some((target, la, i as u16)),
            })
            .collect();
        if moved.is_empty() {
            return Ok(OutEnd::Dead);
        }
        let (kernel, sources) = self.kernel_of(s, Sym::TokenEnd, moved)?;
        let target = self.find_or_create(kernel, Some((s, Sym::TokenEnd)))?;
        Ok(OutEnd::Edge(Edge { target, sources }))
    }

    fn push_sym(&self, sym: Sym, out: &mut Vec<u8>) {
        match sym {
            Sym::Byte(b) => out.push(b),
            Sym::Rule(r) => self.rules.sample_sentence(r, out, PREFIX_CAP),
            Sym::TokenEnd => {}
        }
    }

    /// A byte string that reaches state `s`, from the first transitions that led to it.
    fn prefix(&self, mut s: u32) -> Vec<u8> {
        let mut syms = Vec::new();
        while let Some((from, sym)) = self.pred[s as usize] {
            syms.push(sym);
            s = from;
        }
        let mut out = Vec::new();
        for &sym in syms.iter().rev() {
            self.push_sym(sym, &mut out);
            if out.len() >= PREFIX_CAP {
                break;
            }
        }
        out.truncate(PREFIX_CAP);
        out
    }

    /// The tables of the states reachable from state 0, renumbered in discovery order.
    fn tables(&self) -> Result<Tables, LrError> {
        let n = self.kernels.len();
        let mut number = vec![u32::MAX; n];
        let mut order = vec![0u32];
        number[0] = 0;
        let mut i = 0;
        while i < order.len() {
            let s = order[i] as usize;
            i += 1;
            let out = self.out[s]
                .as_ref()
                .expect("every queued state is processed");
            let token_end = match &out.token_end {
                OutEnd::Edge(edge) => Some(edge),
                OutEnd::Stay | OutEnd::Dead => None,
            };
            let targets = out
                .bytes
                .iter()
                .map(|b| &b.2)
                .chain(out.gotos.iter().map(|g| &g.1))
                .chain(token_end);
            for edge in targets {
                let t = edge.target as usize;
                if number[t] == u32::MAX {
                    number[t] = order.len() as u32;
                    order.push(t as u32);
                }
            }
        }
        let mut tables = Tables::new(self.terminal_classes());
        tables.reserve_states(order.len());
        for &old in &order {
            let old = old as usize;
            let kernel = &self.kernels[old];
            // Processed last with its final kernel (a state whose kernel grows is queued again).
            let out = self.out[old].as_ref().expect("processed");
            let items = &out.items;
            let mut actions = [0u32; TERMINALS];
            let mut scannable_bytes = 0u32;
            let mut added: Vec<(&Edge, u32)> = Vec::new();
            for (lo, hi, edge) in &out.bytes {
                let trans = match added.iter().find(|(e, _)| *e == edge) {
                    Some(&(_, trans)) => trans,
                    None => {
                        let trans = tables.add_trans(number[edge.target as usize], &edge.sources);
                        added.push((edge, trans));
                        trans
                    }
                };
                for b in *lo..=*hi {
                    actions[usize::from(b)] = SHIFT | trans;
                    scannable_bytes += 1;
                }
            }
            for (i, &(state, la)) in items.iter().enumerate() {
                let info = &self.rules.states[state as usize];
                if !info.accepting {
                    continue;
                }
                let action = if info.rule == self.rules.start_rule {
                    ACCEPT
                } else {
                    REDUCE | i as u32
                };
                for (t, slot) in actions.iter_mut().enumerate() {
                    if !la.contains(t) {
                        continue;
                    }
                    if *slot != 0 {
                        return Err(self.conflict(old as u32, items, t));
                    }
                    *slot = action;
                }
            }
            let gotos: Vec<(u32, u32)> = out
                .gotos
                .iter()
                .map(|(rule, edge)| {
                    (
                        *rule,
                        tables.add_trans(number[edge.target as usize], &edge.sources),
                    )
                })
                .collect();
            let item_states: Vec<(u32, u32)> = items
                .iter()
                .map(|&(s, _)| (s, self.rules.states[s as usize].rule))
                .collect();
            let token_end = match &out.token_end {
                OutEnd::Stay => TokenEnd::Stay,
                OutEnd::Dead => TokenEnd::Dead,
                OutEnd::Edge(edge) => {
                    TokenEnd::Trans(tables.add_trans(number[edge.target as usize], &edge.sources))
                }
            };
            tables.add_state(
                kernel.len() as u16,
                &item_states,
                &actions,
                &gotos,
                scannable_bytes,
            );
            if self.rules.has_token_limits {
                tables.set_token_end(token_end);
            }
        }
        tables.mark_scannable();
        Ok(tables)
    }

    /// Terminal classes: bytes between two consecutive cuts of the automata's byte ranges
    /// (FIRST sets and look-aheads are unions of those ranges, so no table tells them
    /// apart), and end of input alone.
    fn terminal_classes(&self) -> Vec<u16> {
        let mut cut = [false; 257];
        cut[0] = true;
        for state in &self.rules.states {
            for &(lo, hi, _) in &state.bytes {
                cut[usize::from(lo)] = true;
                cut[usize::from(hi) + 1] = true;
            }
        }
        let mut class_of = Vec::with_capacity(TERMINALS);
        let mut class = 0u16;
        for (b, &starts) in cut.iter().enumerate().take(256) {
            if starts && b > 0 {
                class += 1;
            }
            class_of.push(class);
        }
        class_of.push(class + 1);
        class_of
    }

    /// The conflict of state `s` on terminal `t`.
    fn conflict(&self, s: u32, items: &[(u32, La)], t: usize) -> LrError {
        let mut involved = Vec::new();
        for &(state, la) in items {
            let info = &self.rules.states[state as usize];
            let shifts = t < EOF
                && info
                    .bytes
                    .iter()
                    .any(|&(lo, hi, _)| usize::from(lo) <= t && t <= usize::from(hi));
            let reduces = info.accepting && la.contains(t);
            for (yes, action) in [
                (shifts, ConflictAction::Shift),
                (reduces, ConflictAction::Reduce),
            ] {
                if yes {
                    involved.push(ConflictItem {
                        rule: self.rules.names[info.rule as usize].clone(),
                        state: info.local,
                        action,
                    });
                }
            }
        }
        LrError::Conflict(Box::new(Conflict {
            lookahead: u8::try_from(t).ok(),
            items: involved,
            prefix: self.prefix(s),
        }))
    }
}

/// Pager's weak compatibility of two kernels with the same automaton states.
fn weakly_compatible(a: &Kernel, b: &Kernel) -> bool {
    for i in 0..a.len() {
        for j in i + 1..a.len() {
            let crossed = a[i].1.intersects(&b[j].1) || b[i].1.intersects(&a[j].1);
            if crossed && !a[i].1.intersects(&a[j].1) && !b[i].1.intersects(&b[j].1) {
                return false;
            }
        }
    }
    true
}
