//! Fingerprints of bare keys: a structural hash of everything a bare classification can read,
//! so equal fingerprints (in any two grammars) mean equal classifications against one trie.
//!
//! A bare classification steps from the key's state with every frame below unknown. It reads
//! the rows of the states it reaches by shifts and by gotos from frames it pushed itself, and
//! of those states only: per terminal the action (a shift's target and the items its target's
//! kernel came from, a reduction's item and rule), the kernel sizes, and the gotos of rules
//! that some reachable state reduces, and (with token limits) whether a token end kills
//! each of those states (all a classification reads of token ends). The fingerprint hashes exactly that sub-automaton in a
//! canonical numbering: states in order of discovery from the key (terminals in byte order,
//! then gotos in order of rule discovery), rules in order of their first reduction. Raw state
//! and rule numbers, byte classes and everything unreachable do not enter it. Keys that reach
//! more than [`MAX_REACH`] states get no fingerprint (the hash would cost more than sharing
//! saves).
//!
//! # Invariant
//!
//! Two keys with equal sub-automata (under the canonical numbering) step identically from
//! every configuration the walk meets, so their classifications are equal; the hash is stable
//! across runs and machines (its own mixer, no random state).

use foldhash::{HashMap, HashMapExt};
use sieve_backend::{Fingerprint, FingerprintHasher};

use crate::lookahead::EOF;
use crate::tables::{Tables, TokenEnd, ACCEPT, PAYLOAD, REDUCE, SHIFT};

/// The most states a fingerprinted key may reach.
pub(crate) const MAX_REACH: usize = 64;

/// Names this hash and the classification's own constants, which change its results.
const VERSION: u64 = 0x4c52_5f46_5031_0002;

/// The canonical numbering of a key's sub-automaton.
struct Reach<'t> {
    tables: &'t Tables,
    states: Vec<u32>,
    number: HashMap<u32, u32>,
    rules: Vec<u32>,
    rule_number: HashMap<u32, u32>,
}

impl Reach<'_> {
    /// Numbers `s`; `false` when that would pass [`MAX_REACH`].
    fn visit(&mut self, s: u32) -> bool {
        if self.number.contains_key(&s) {
            return true;
        }
        if self.states.len() >= MAX_REACH {
            return false;
        }
        self.number.insert(s, self.states.len() as u32);
        self.states.push(s);
        true
    }

    /// Discovers every state and rule, in canonical order.
    fn discover(&mut self, key: u32) -> bool {
        if !self.visit(key) {
            return false;
        }
        loop {
            let (states, rules) = (self.states.len(), self.rules.len());
            let mut i = 0;
            while i < self.states.len() {
                let s = self.states[i];
                i += 1;
                for t in 0..=EOF {
                    let action = self.tables.action(s, t);
                    match action & !PAYLOAD {
                        SHIFT => {
                            let target = self.tables.trans_target(action & PAYLOAD);
                            if !self.visit(target) {
                                return false;
                            }
                        }
                        REDUCE => {
                            let rule = self.tables.item_rule(s, (action & PAYLOAD) as usize);
                            if !self.rule_number.contains_key(&rule) {
                                self.rule_number.insert(rule, self.rules.len() as u32);
                                self.rules.push(rule);
                            }
                        }
                        _ => {}
                    }
                }
                for r in 0..self.rules.len() {
                    if let Some(trans) = self.tables.goto(s, self.rules[r]) {
                        if !self.visit(self.tables.trans_target(trans)) {
                            return false;
                        }
                    }
                }
            }
            if (states, rules) == (self.states.len(), self.rules.len()) {
                return true;
            }
        }
    }

    fn transition(&self, h: &mut FingerprintHasher, trans: u32) {
        h.word(u64::from(self.number[&self.tables.trans_target(trans)]));
        let sources = self.tables.trans_sources(trans);
        h.word(sources.len() as u64);
        for &item in sources {
            h.word(u64::from(item));
        }
    }
}

/// The fingerprint of state `key`'s bare classification (see the module docs).
pub(crate) fn fingerprint(tables: &Tables, key: u32) -> Option<Fingerprint> {
    let mut reach = Reach {
        tables,
        states: Vec::new(),
        number: HashMap::new(),
        rules: Vec::new(),
        rule_number: HashMap::new(),
    };
    if !reach.discover(key) {
        return None;
    }
    let constants = VERSION
        ^ (crate::classify::MAX_CONFIGS as u64).rotate_left(16)
        ^ (crate::classify::MIN_LOOP_CLASS as u64).rotate_left(40)
        ^ (crate::classify::PACKED as u64).rotate_left(48);
    let mut h = FingerprintHasher::new(constants);
    for &s in &reach.states {
        h.word(tables.kernel_len(s) as u64);
        h.word(u64::from(tables.token_end(s) == TokenEnd::Dead));
        for t in 0..=EOF {
            let action = tables.action(s, t);
            let payload = action & PAYLOAD;
            match action & !PAYLOAD {
                SHIFT => {
                    h.word(2);
                    reach.transition(&mut h, payload);
                }
                REDUCE => {
                    h.word(3);
                    h.word(u64::from(payload));
                    let rule = tables.item_rule(s, payload as usize);
                    h.word(u64::from(reach.rule_number[&rule]));
                }
                _ => h.word(u64::from(action == ACCEPT)),
            }
        }
        let mut gotos: Vec<(u32, u32)> = tables
            .gotos(s)
            .iter()
            .filter_map(|&(rule, trans)| Some((*reach.rule_number.get(&rule)?, trans)))
            .collect();
        gotos.sort_unstable();
        h.word(gotos.len() as u64);
        for (rule, trans) in gotos {
            h.word(u64::from(rule));
            reach.transition(&mut h, trans);
        }
    }
    let [a, b] = h.finish();
    Some(Fingerprint([
        a,
        b,
        reach.states.len() as u64,
        reach.rules.len() as u64,
        u64::from(tables.kernel_len(key) as u32),
        VERSION,
    ]))
}
