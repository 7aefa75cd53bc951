//! [`Parser`]: the Earley sets of one input, as a stack.
//!
//! # Invariants
//!
//! - `sets.len() == len() + 1`; set `k` owns `scans[sets[k].scans..]` up to the next set's
//!   start (or the end), and likewise `waiters` and `leos`; set `k`'s waiters are sorted by
//!   `(rule, item)` without repeats and its Leo entries are sorted by rule.
//! - Every set below the one being built is sealed and never changes; building a set only
//!   appends to the buffers, so failing (a rejected byte or a limit) truncates them back and
//!   popping truncates them to the first removed set's offsets: exact restoration.
//! - Building a set spends at most `Config::max_work_per_byte` units of work (see
//!   [`Build::spend`] for what is counted) and stores at most `Config::max_items_per_set`
//!   distinct items; the initial set is exempt (it depends only on the grammar).
//! - Items whose state can only complete are never stored; completing a rule with origin `k`
//!   inside set `k` (an ε-derivation) is a no-op because every waiter on a nullable rule is
//!   advanced when it is created.
//! - A Leo entry for rule `A` in set `i` exists iff Leo is enabled and exactly one waiter on
//!   `A` in set `i` exists and its advanced item can only complete; its `top` is the item at the
//!   end of the deterministic chain, which stops at a root item with origin `0` (so
//!   [`Parser::can_finish`] sees it) and at items whose origin is `i` itself.

use std::sync::Arc;

use sieve_ir::ByteClass;

use crate::dedup::Dedup;
use crate::grammar::{EarleyGrammar, NOT_COUNTED, NO_CLASS};
use crate::LimitError;

/// An Earley item: a global state, the set where its rule started, and (counted rules only)
/// how many items have been recognised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Item {
    pub(crate) state: u32,
    pub(crate) origin: u32,
    pub(crate) count: u32,
}

/// An item waiting on `rule`, stored already advanced over it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Waiter {
    rule: u32,
    advanced: Item,
}

/// Completing `rule` from this set yields `top` (and nothing else).
#[derive(Clone, Copy, Debug)]
struct Leo {
    rule: u32,
    top: Item,
}

/// Where one set's data starts in the shared buffers, and its summary.
#[derive(Clone, Copy, Debug)]
struct SetInfo {
    scans: usize,
    waiters: usize,
    waiters_end: usize,
    leos: usize,
    leos_end: usize,
    allowed: ByteClass,
    can_finish: bool,
    /// The tokens ended at or before this set ([`Parser::end_token`]); what token limits
    /// count with (see `limits.rs`).
    tokens: u32,
    /// Items processed while building the set (stored or discarded).
    work: u32,
    /// Work units spent building the set (what `Config::max_work_per_byte` bounds).
    fuel: u32,
}

/// Reusable per-set working memory; its contents mean nothing between sets.
#[derive(Clone, Debug)]
struct Scratch {
    dedup: Dedup,
    worklist: Vec<Item>,
    /// `predicted[r] == stamp` iff rule `r` was predicted in the set being built.
    predicted: Vec<u32>,
    stamp: u32,
}

impl Scratch {
    fn begin(&mut self) {
        self.dedup.clear();
        self.worklist.clear();
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.predicted.fill(0);
            self.stamp = 1;
        }
    }
}

/// Figures about a parser's sets, for tests, tuning and memory accounting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Bytes consumed ([`Parser::len`]).
    pub bytes: usize,
    /// Items stored over all sets (scan items, waiters and Leo entries).
    pub stored_items: usize,
    /// Items processed (stored or discarded) while building the current set.
    pub top_set_work: usize,
    /// The largest number of items processed for any set in the history.
    pub max_set_work: usize,
    /// Work units spent building the current set, as counted against
    /// [`crate::Config::max_work_per_byte`].
    pub top_set_fuel: usize,
    /// The most work units spent building any set in the history (the initial set included,
    /// although the limit does not apply to it).
    pub max_set_fuel: usize,
}

/// The recogniser state for one input: a stack of Earley sets, one per consumed byte plus the
/// initial one. Cloning copies the history (a few flat vectors).
#[derive(Clone, Debug)]
pub struct Parser {
    grammar: Arc<EarleyGrammar>,
    sets: Vec<SetInfo>,
    scans: Vec<Item>,
    waiters: Vec<Waiter>,
    leos: Vec<Leo>,
    scratch: Scratch,
}

/// Borrowed view used while one set is being built.
struct Build<'a> {
    g: &'a EarleyGrammar,
    k: u32,
    sets: &'a [SetInfo],
    scans: &'a mut Vec<Item>,
    waiters: &'a mut Vec<Waiter>,
    leos: &'a mut Vec<Leo>,
    scratch: &'a mut Scratch,
    can_finish: bool,
    limit: usize,
    /// Work units spent so far on this set.
    fuel: usize,
    /// The most work units this set may spend.
    max_fuel: usize,
}

impl Build<'_> {
    /// Charges `units` of work to the set being built; fails once the total passes the limit.
    ///
    /// One unit is charged for each derived item offered to the set (new or a duplicate: this
    /// covers every waiter visited by a completion and every Leo top added), each waiter
    /// recorded, each completion's look-up in its origin set (Leo entry or waiter range), each
    /// Leo chain look-up when sealing, and each scan item of the previous set examined when
    /// seeding. Every loop of set building is over one of these, so the time to build a set is
    /// proportional to its units (plus the sort of its waiters).
    fn spend(&mut self, units: usize) -> Result<(), LimitError> {
        self.fuel += units;
        if self.fuel > self.max_fuel {
            return Err(LimitError::work_per_byte(self.max_fuel));
        }
        Ok(())
    }

    fn add(&mut self, item: Item) -> Result<(), LimitError> {
        self.spend(1)?;
        if self.scratch.dedup.insert(item) {
            if self.scratch.dedup.len() > self.limit {
                return Err(LimitError::items_per_set(self.limit));
            }
            self.scratch.worklist.push(item);
        }
        Ok(())
    }

    fn predict(&mut self, rule: u32) -> Result<(), LimitError> {
        let stamp = self.scratch.stamp;
        let slot = &mut self.scratch.predicted[rule as usize];
        if *slot != stamp {
            *slot = stamp;
            self.add(Item {
                state: self.g.start[rule as usize],
                origin: self.k,
                count: 0,
            })?;
        }
        Ok(())
    }

    /// An item waits on `rule`; `advanced` is what it becomes once `rule` completes.
    fn wait(&mut self, rule: u32, advanced: Item) -> Result<(), LimitError> {
        self.spend(1)?;
        self.waiters.push(Waiter { rule, advanced });
        self.predict(rule)?;
        if self.g.nullable[rule as usize] {
            // Aycock–Horspool: a nullable rule may complete right here.
            self.add(advanced)?;
        }
        Ok(())
    }

    fn complete(&mut self, rule: u32, origin: u32) -> Result<(), LimitError> {
        if rule == self.g.root && origin == 0 {
            self.can_finish = true;
        }
        if origin == self.k {
            // An ε-derivation: `wait` already advanced every waiter on a nullable rule.
            return Ok(());
        }
        // The look-up below (a Leo entry or the waiter range, both binary searches); each
        // waiter visited is charged by `add`.
        self.spend(1)?;
        let set = self.sets[origin as usize];
        if self.g.config.leo {
            if let Some(top) = find_leo(&self.leos[set.leos..set.leos_end], rule) {
                return self.add(top);
            }
        }
        let (from, to) = waiter_range(&self.waiters[set.waiters..set.waiters_end], rule);
        for i in set.waiters + from..set.waiters + to {
            let advanced = self.waiters[i].advanced;
            self.add(advanced)?;
        }
        Ok(())
    }

    fn process(&mut self, item: Item) -> Result<(), LimitError> {
        let g = self.g;
        let info = g.states[item.state as usize];
        if info.counted != NOT_COUNTED {
            let c = g.counted[info.counted as usize];
            if item.count < c.max {
                let advanced = Item {
                    count: c.next(item.count),
                    ..item
                };
                self.wait(c.item, advanced)?;
            }
            if item.count >= c.min {
                self.complete(info.rule, item.origin)?;
            }
            return Ok(());
        }
        if info.class != NO_CLASS {
            self.scans.push(item);
        }
        for edge in g.rule_edges(&info) {
            let advanced = Item {
                state: edge.target,
                origin: item.origin,
                count: 0,
            };
            self.wait(edge.rule, advanced)?;
        }
        for &target in g.eps_edges(&info) {
            self.add(Item {
                state: target,
                origin: item.origin,
                count: 0,
            })?;
        }
        if info.accepting {
            self.complete(info.rule, item.origin)?;
        }
        Ok(())
    }

    fn run(&mut self) -> Result<(), LimitError> {
        while let Some(item) = self.scratch.worklist.pop() {
            self.process(item)?;
        }
        Ok(())
    }

    /// Sorts and dedupes the new waiters, computes the Leo entries and the allowed bytes.
    fn seal(&mut self, starts: (usize, usize, usize)) -> Result<SetInfo, LimitError> {
        let (scans, waiters, leos) = starts;
        let new = &mut self.waiters[waiters..];
        new.sort_unstable();
        let mut kept = 0;
        for i in 0..new.len() {
            if i == 0 || new[i] != new[kept - 1] {
                new[kept] = new[i];
                kept += 1;
            }
        }
        self.waiters.truncate(waiters + kept);
        if self.g.config.leo {
            let mut i = waiters;
            while i < self.waiters.len() {
                let rule = self.waiters[i].rule;
                let mut j = i + 1;
                while j < self.waiters.len() && self.waiters[j].rule == rule {
                    j += 1;
                }
                let advanced = self.waiters[i].advanced;
                if j == i + 1 && self.g.is_final_only(advanced.state, advanced.count) {
                    self.spend(1)?;
                    let top = self.chain_top(advanced);
                    self.leos.push(Leo { rule, top });
                }
                i = j;
            }
        }
        let mut allowed = ByteClass::EMPTY;
        for item in &self.scans[scans..] {
            let class = self.g.states[item.state as usize].class;
            allowed = allowed.union(&self.g.classes[class as usize]);
        }
        Ok(SetInfo {
            scans,
            waiters,
            waiters_end: self.waiters.len(),
            leos,
            leos_end: self.leos.len(),
            allowed,
            can_finish: self.can_finish,
            tokens: 0,
            work: u32::try_from(self.scratch.dedup.len()).unwrap_or(u32::MAX),
            fuel: u32::try_from(self.fuel).unwrap_or(u32::MAX),
        })
    }

    /// The topmost item of the deterministic chain that starts with the complete-only item
    /// `advanced` (see the module docs for where it stops).
    fn chain_top(&self, advanced: Item) -> Item {
        let rule = self.g.states[advanced.state as usize].rule;
        if (rule == self.g.root && advanced.origin == 0) || advanced.origin == self.k {
            return advanced;
        }
        let set = self.sets[advanced.origin as usize];
        find_leo(&self.leos[set.leos..set.leos_end], rule).unwrap_or(advanced)
    }
}

fn find_leo(leos: &[Leo], rule: u32) -> Option<Item> {
    leos.binary_search_by_key(&rule, |l| l.rule)
        .ok()
        .map(|i| leos[i].top)
}

/// The most context chains [`Parser::scan_contexts`] reports for one scan item past the
/// first level.
pub(crate) const MAX_CHAINS: usize = 16;
/// The most keys with a context [`Parser::scan_contexts`] reports for one state; the scan
/// items past it get none.
pub(crate) const MAX_CONTEXT_KEYS: usize = 1024;

fn waiter_range(waiters: &[Waiter], rule: u32) -> (usize, usize) {
    let from = waiters.partition_point(|w| w.rule < rule);
    let to = from + waiters[from..].partition_point(|w| w.rule == rule);
    (from, to)
}

impl Parser {
    /// A parser at the start of the input.
    ///
    /// The initial set is built without the per-set limits (`max_items_per_set`,
    /// `max_work_per_byte`): it depends only on the grammar.
    pub fn new(grammar: Arc<EarleyGrammar>) -> Parser {
        let rules = grammar.start.len();
        let mut parser = Parser {
            sets: Vec::new(),
            scans: Vec::new(),
            waiters: Vec::new(),
            leos: Vec::new(),
            scratch: Scratch {
                dedup: Dedup::new(),
                worklist: Vec::new(),
                predicted: vec![0; rules],
                stamp: 0,
            },
            grammar,
        };
        parser.scratch.begin();
        let root = parser.grammar.root;
        let seed = Item {
            state: parser.grammar.start[root as usize],
            origin: 0,
            count: 0,
        };
        parser.scratch.predicted[root as usize] = parser.scratch.stamp;
        let info = parser
            .build(|b| b.add(seed), usize::MAX, usize::MAX)
            .expect("no limit applies to the initial set");
        let mut info = info;
        info.can_finish |= parser.grammar.root_nullable();
        parser.sets.push(info);
        parser
    }

    /// Builds the set after the current top one; `seed` adds its first items; `limit` and
    /// `max_fuel` bound its distinct items and its work units. On error the buffers are
    /// truncated back and nothing is pushed.
    fn build(
        &mut self,
        seed: impl FnOnce(&mut Build<'_>) -> Result<(), LimitError>,
        limit: usize,
        max_fuel: usize,
    ) -> Result<SetInfo, LimitError> {
        let starts = (self.scans.len(), self.waiters.len(), self.leos.len());
        let mut b = Build {
            g: &self.grammar,
            k: u32::try_from(self.sets.len()).expect("history is bounded by the config"),
            sets: &self.sets,
            scans: &mut self.scans,
            waiters: &mut self.waiters,
            leos: &mut self.leos,
            scratch: &mut self.scratch,
            can_finish: false,
            limit,
            fuel: 0,
            max_fuel,
        };
        let result = seed(&mut b).and_then(|()| b.run());
        let result = result.and_then(|()| b.seal(starts));
        let total = self.scans.len() + self.waiters.len() + self.leos.len();
        let result = result.and_then(|info| {
            if total > self.grammar.config.max_total_items {
                Err(LimitError::total_items(self.grammar.config.max_total_items))
            } else {
                Ok(info)
            }
        });
        if result.is_err() {
            self.scans.truncate(starts.0);
            self.waiters.truncate(starts.1);
            self.leos.truncate(starts.2);
            self.scratch.worklist.clear();
        }
        result
    }

    /// Consumes one byte. `Ok(true)`: the input so far is still a prefix of some sentence (or
    /// of an infinite derivation) and a new set was pushed; `Ok(false)`: it is not, and nothing
    /// changed. Exactly the bytes in [`Parser::allowed_bytes`] are accepted.
    ///
    /// # Errors
    /// A [`LimitError`] when a [`crate::Config`] limit would be exceeded; nothing changed.
    pub fn push_byte(&mut self, byte: u8) -> Result<bool, LimitError> {
        let top = *self.sets.last().expect("there is always a set");
        if !top.allowed.contains(byte) {
            return Ok(false);
        }
        let config = &self.grammar.config;
        if self.len() >= config.max_bytes_history {
            return Err(LimitError::bytes_history(config.max_bytes_history));
        }
        let limit = config.max_items_per_set;
        let max_fuel = config.max_work_per_byte;
        self.scratch.begin();
        let info = self.build(
            |b| {
                for i in top.scans..b.scans.len() {
                    b.spend(1)?;
                    let item = b.scans[i];
                    let info = b.g.states[item.state as usize];
                    for edge in b.g.byte_edges(&info) {
                        if edge.lo <= byte && byte <= edge.hi {
                            b.add(Item {
                                state: edge.target,
                                origin: item.origin,
                                count: 0,
                            })?;
                        }
                    }
                }
                Ok(())
            },
            limit,
            max_fuel,
        )?;
        self.sets.push(SetInfo {
            tokens: top.tokens,
            ..info
        });
        Ok(true)
    }

    /// Marks the end of a token at the current bytes: the items of rules with a token limit
    /// that could no longer finish within it are dropped (see `limits.rs`). Returns whether
    /// the input can still go on or finish; when it cannot, the parser is dead (pop bytes to
    /// go back). Call it once after the bytes of each token.
    pub fn end_token(&mut self) -> bool {
        if self.grammar.limits.any() {
            self.drop_items_past_limits();
        }
        let top = self.sets.last_mut().expect("there is always a set");
        top.tokens += 1;
        top.can_finish || top.scans < self.scans.len()
    }

    /// The token-end half of [`Parser::end_token`] for a grammar with token limits: drops the
    /// top set's scan items that would not survive it, and narrows its allowed bytes.
    fn drop_items_past_limits(&mut self) {
        let top = *self.top();
        let mut kept = top.scans;
        for i in top.scans..self.scans.len() {
            let item = self.scans[i];
            if self.survives_token_end(item) {
                self.scans[kept] = item;
                kept += 1;
            }
        }
        if kept != self.scans.len() {
            self.scans.truncate(kept);
            let g = &self.grammar;
            let allowed = self.scans[top.scans..]
                .iter()
                .map(|item| g.classes[g.states[item.state as usize].class as usize])
                .fold(ByteClass::EMPTY, |all, class| all.union(&class));
            self.sets.last_mut().expect("there is always a set").allowed = allowed;
        }
    }

    /// Whether [`Parser::end_token`] would leave the parser alive; changes nothing.
    pub fn can_end_token(&self) -> bool {
        let top = self.top();
        if top.can_finish {
            return true;
        }
        if !self.grammar.limits.any() {
            return top.scans < self.scans.len();
        }
        self.top_scans()
            .iter()
            .any(|&item| self.survives_token_end(item))
    }

    /// Whether a scan item of the top set is kept by a token end there.
    fn survives_token_end(&self, item: Item) -> bool {
        self.allowance(item, 1)
            .is_none_or(|allowance| self.grammar.limits.keeps(item.state, allowance))
    }

    /// The tokens the limited occurrence of `item`'s rule may still touch, counting `ending`
    /// more token ends at the top set (0: as the bytes stand; 1: once the current token
    /// ends); `None` for an item of an unlimited rule. An item that starts at the top set has
    /// touched no token yet.
    fn allowance(&self, item: Item, ending: u32) -> Option<i64> {
        let g = &self.grammar;
        let limit = g.limits.of_rule(g.states[item.state as usize].rule);
        if limit == 0 {
            return None;
        }
        let touched = if item.origin as usize == self.sets.len() - 1 {
            0
        } else {
            self.top().tokens + ending - self.sets[item.origin as usize].tokens
        };
        Some(i64::from(limit) - i64::from(touched))
    }

    /// The most `rest` (token steps to its rule's end, `limits.rs`) that scan item `item`
    /// may be left at by the next token and survive that token's end: the tokens its limited
    /// occurrence has left after it (at least 1 to survive, an accepting state completes the
    /// rule either way); `u32::MAX` for an item of an unlimited rule.
    pub(crate) fn rest_room_after_token(&self, item: Item) -> u32 {
        self.allowance(item, 0).map_or(u32::MAX, |allowance| {
            u32::try_from(allowance - 1).unwrap_or(0)
        })
    }

    /// The key a scan item of the top set is classified under: its state, or the tight key
    /// of an item of a limited rule close to its limit (see `limits.rs`).
    pub(crate) fn item_key(&self, item: Item) -> u32 {
        self.allowance(item, 0).map_or(item.state, |allowance| {
            self.grammar
                .limits
                .key(&self.grammar, item.state, allowance)
        })
    }

    /// Undoes the last `n` pushed bytes, restoring exactly the state before them.
    ///
    /// # Panics
    /// When `n > self.len()`.
    pub fn pop_bytes(&mut self, n: usize) {
        assert!(n <= self.len(), "cannot pop {n} of {} bytes", self.len());
        if n == 0 {
            return;
        }
        let keep = self.sets.len() - n;
        let first_removed = self.sets[keep];
        self.scans.truncate(first_removed.scans);
        self.waiters.truncate(first_removed.waiters);
        self.leos.truncate(first_removed.leos);
        self.sets.truncate(keep);
    }

    /// The number of bytes consumed so far.
    pub fn len(&self) -> usize {
        self.sets.len() - 1
    }

    /// Whether no byte has been consumed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the input so far is a complete sentence of the grammar.
    pub fn can_finish(&self) -> bool {
        self.top().can_finish
    }

    /// Exactly the bytes [`Parser::push_byte`] would accept now (limits aside).
    pub fn allowed_bytes(&self) -> ByteClass {
        self.top().allowed
    }

    /// Goes back to the empty input (keeps the allocated buffers).
    pub fn reset(&mut self) {
        self.pop_bytes(self.len());
    }

    /// The grammar this parser runs.
    pub fn grammar(&self) -> &Arc<EarleyGrammar> {
        &self.grammar
    }

    /// Figures about the sets; [`Stats::max_set_work`] and [`Stats::max_set_fuel`] walk the
    /// history (O(len)).
    pub fn stats(&self) -> Stats {
        Stats {
            bytes: self.len(),
            stored_items: self.scans.len() + self.waiters.len() + self.leos.len(),
            top_set_work: self.top().work as usize,
            max_set_work: self.sets.iter().map(|s| s.work as usize).max().unwrap_or(0),
            top_set_fuel: self.top().fuel as usize,
            max_set_fuel: self.sets.iter().map(|s| s.fuel as usize).max().unwrap_or(0),
        }
    }

    fn top(&self) -> &SetInfo {
        self.sets.last().expect("there is always a set")
    }

    /// The scan items of the top set.
    pub(crate) fn top_scans(&self) -> &[Item] {
        &self.scans[self.top().scans..]
    }

    /// For each scan item of the top set in `state`, calls `visit(frames)` once per chain of
    /// items its rule returns to: `frames[0]` is an item waiting on the scan item's rule in the
    /// set where it started (its state and count once the rule is complete), `frames[1]` an
    /// item waiting on `frames[0]`'s rule where that started, and so on, up to `depth` frames
    /// and while something waits. The first level is always added (one chain per waiter);
    /// deeper levels only while the item's chains stay within [`MAX_CHAINS`], so every chain
    /// of an item is cut at the same depth. Items past [`MAX_CONTEXT_KEYS`] keys in all get
    /// one empty chain (no context: always allowed, it only leaves more tokens uncertain),
    /// which bounds the work by that many keys plus the scan items.
    pub(crate) fn scan_contexts(
        &self,
        state: u32,
        keep: impl Fn(Item) -> bool,
        depth: usize,
        mut visit: impl FnMut(&[(u32, u32)]),
    ) {
        let width = depth + 1;
        // Chains of one item, `width` slots each, with their lengths.
        let (mut chains, mut lens): (Vec<Item>, Vec<usize>) = (Vec::new(), Vec::new());
        let (mut next, mut next_lens): (Vec<Item>, Vec<usize>) = (Vec::new(), Vec::new());
        let mut frames: Vec<(u32, u32)> = Vec::with_capacity(depth);
        let mut emitted = 0;
        for item in self
            .top_scans()
            .iter()
            .filter(|&&item| item.state == state && keep(item))
        {
            if emitted >= MAX_CONTEXT_KEYS {
                visit(&[]);
                continue;
            }
            chains.clear();
            chains.resize(width, *item);
            lens.clear();
            lens.push(1);
            for level in 0..depth {
                next.clear();
                next_lens.clear();
                let mut grew = false;
                for (c, &len) in lens.iter().enumerate() {
                    let chain = &chains[c * width..(c + 1) * width];
                    let waiters = if len == level + 1 {
                        self.waiters_on(chain[len - 1])
                    } else {
                        &[]
                    };
                    if waiters.is_empty() {
                        next.extend_from_slice(chain);
                        next_lens.push(len);
                        continue;
                    }
                    grew = true;
                    for waiter in waiters {
                        let at = next.len();
                        next.extend_from_slice(chain);
                        next[at + len] = waiter.advanced;
                        next_lens.push(len + 1);
                    }
                }
                if !grew || (level > 0 && next_lens.len() > MAX_CHAINS) {
                    break;
                }
                std::mem::swap(&mut chains, &mut next);
                std::mem::swap(&mut lens, &mut next_lens);
            }
            for (c, &len) in lens.iter().enumerate() {
                frames.clear();
                frames.extend(
                    chains[c * width + 1..c * width + len]
                        .iter()
                        .map(|a| (a.state, a.count)),
                );
                visit(&frames);
                emitted += 1;
            }
        }
    }

    /// The items waiting on `rule` in set `origin`, each advanced over it (what completing
    /// `rule` from `origin` yields; read by the completion bounds of `completion.rs`).
    pub(crate) fn waiting_on(&self, rule: u32, origin: u32) -> impl Iterator<Item = Item> + '_ {
        let set = self.sets[origin as usize];
        let waiters = &self.waiters[set.waiters..set.waiters_end];
        let (from, to) = waiter_range(waiters, rule);
        waiters[from..to].iter().map(|w| w.advanced)
    }

    /// The items waiting on `item`'s rule in the set where it started.
    fn waiters_on(&self, item: Item) -> &[Waiter] {
        let rule = self.grammar.states[item.state as usize].rule;
        let set = self.sets[item.origin as usize];
        let waiters = &self.waiters[set.waiters..set.waiters_end];
        let (from, to) = waiter_range(waiters, rule);
        &waiters[from..to]
    }
}
