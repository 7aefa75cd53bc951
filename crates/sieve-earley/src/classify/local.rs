//! Row-local byte classes: the bytes that one row of the determinised walk never tells apart.
//!
//! The grammar's [`crate::alphabet::Alphabet`] separates every pair of bytes that *some*
//! byte-edge range, FIRST or FOLLOW set of the whole grammar separates: with many rules (128
//! tools, each with its own property names) it has close to a hundred classes, and a row
//! filled one class at a time costs that many [`crate::within::StaticWalk::step_into`]s. A
//! row of free text only looks at a few sets — its state's byte edges, the FIRST of the rules
//! it descends into, the FOLLOW of a rule it may complete — so its bytes fall into a dozen
//! classes (the UTF-8 decoder's ranges, the characters that start or continue a trigger).
//!
//! [`classes`] explores, without a byte, everything a step from the row can reach before
//! reading one — the closure of [`crate::within::StaticWalk`]'s `close`, descending into
//! every rule (a superset of what any one byte descends into) and returning through the
//! row's stacks — and refines the 256 bytes by every set a step consults on the way.
//!
//! **Invariant:** two bytes of one local class give the same step from the row (the same
//! configurations and the same `left`): the step's every decision (descend into a rule, exit
//! at the empty stack, scan an edge) reads its byte only through a set that was refined, on
//! a configuration that the exploration reached. Where the exploration cannot follow the
//! step exactly (counted rules, more than `4 × MAX_CONFIGS` configurations, deeper than
//! [`MAX_STACK`]), it gives up and the caller keeps the grammar's alphabet.

use sieve_ir::ByteClass;

use crate::grammar::{EarleyGrammar, NOT_COUNTED};
use crate::within::{Config, StaticWalk, MAX_CONFIGS, MAX_STACK};

/// A configuration during the exploration: a state, the walk-local stack it started with,
/// and the returns pushed by descents on the way (innermost last).
#[derive(Clone, PartialEq, Eq)]
struct Explored {
    state: u32,
    base: u32,
    pushed: Vec<u32>,
}

/// The row-local classes of the frontier `configs` (`first`: stepped as a token's first
/// byte, when only the configurations' own byte edges apply), each as a bit set of bytes;
/// `None` when the exploration gives up or they would be more than `max_classes`.
pub(super) fn classes(
    g: &EarleyGrammar,
    walk: &StaticWalk<'_>,
    configs: &[Config],
    first: bool,
    max_classes: usize,
) -> Option<Vec<[u64; 4]>> {
    let mut partition = Partition::new();
    if first {
        for config in configs {
            partition.edges(g, config.state());
        }
        return partition.classes(max_classes);
    }
    let mut seen: Vec<Explored> = Vec::new();
    let mut todo: Vec<Explored> = configs
        .iter()
        .map(|config| Explored {
            state: config.state(),
            base: config.stack(),
            pushed: Vec::new(),
        })
        .collect();
    while let Some(at) = todo.pop() {
        if seen.contains(&at) {
            continue;
        }
        if seen.len() >= 4 * MAX_CONFIGS || at.pushed.len() > MAX_STACK {
            return None;
        }
        seen.push(at.clone());
        partition.edges(g, at.state);
        let info = g.states[at.state as usize];
        if info.counted != NOT_COUNTED || info.eps.0 != info.eps.1 {
            // The step gives up here whatever the byte.
            continue;
        }
        if info.accepting {
            let mut pushed = at.pushed.clone();
            match pushed.pop() {
                Some(ret) => todo.push(Explored {
                    state: ret,
                    base: at.base,
                    pushed,
                }),
                None if at.base == 0 => partition.refine(&g.follow[info.rule as usize]),
                None => {
                    let (ret, count, parent) = walk.top_frame(at.base);
                    if count != NOT_COUNTED {
                        return None;
                    }
                    todo.push(Explored {
                        state: ret,
                        base: parent,
                        pushed: Vec::new(),
                    });
                }
            }
        }
        for edge in g.rule_edges(&info) {
            let rule = edge.rule as usize;
            partition.refine(&g.first[rule]);
            let start = g.start[rule];
            if g.states[start as usize].counted != NOT_COUNTED {
                return None;
            }
            if g.nullable[rule] {
                // The step gives up on nullable descents whatever the byte.
                continue;
            }
            let mut pushed = at.pushed.clone();
            pushed.push(edge.target);
            todo.push(Explored {
                state: start,
                base: at.base,
                pushed,
            });
        }
    }
    partition.classes(max_classes)
}

/// A partition of the 256 bytes, refined set by set: its classes as bit sets.
struct Partition {
    classes: Vec<[u64; 4]>,
    /// The bit sets refined so far (each refines once).
    done: Vec<[u64; 4]>,
}

impl Partition {
    fn new() -> Partition {
        Partition {
            classes: vec![[u64::MAX; 4]],
            done: Vec::new(),
        }
    }

    /// Refines by the range of every byte edge of `state`.
    fn edges(&mut self, g: &EarleyGrammar, state: u32) {
        for edge in g.byte_edges(&g.states[state as usize]) {
            let bits = std::array::from_fn(|w| {
                let (lo, hi) = (w as u32 * 64, w as u32 * 64 + 63);
                let (from, to) = (u32::from(edge.lo).max(lo), u32::from(edge.hi).min(hi));
                if from > to {
                    0
                } else {
                    (u64::MAX >> (63 - (to - from))) << (from - lo)
                }
            });
            self.refine_bits(bits);
        }
    }

    /// Splits every class into its bytes inside `set` and outside.
    fn refine(&mut self, set: &ByteClass) {
        self.refine_bits(set.words());
    }

    /// Splits every class into its bytes inside `bits` and outside.
    fn refine_bits(&mut self, bits: [u64; 4]) {
        if self.done.contains(&bits) {
            return;
        }
        self.done.push(bits);
        let count = self.classes.len();
        for c in 0..count {
            let class = self.classes[c];
            let inside: [u64; 4] = std::array::from_fn(|w| class[w] & bits[w]);
            let outside: [u64; 4] = std::array::from_fn(|w| class[w] & !bits[w]);
            if inside != [0; 4] && outside != [0; 4] {
                self.classes[c] = inside;
                self.classes.push(outside);
            }
        }
    }

    /// The classes; `None` when more than `max`.
    fn classes(self, max: usize) -> Option<Vec<[u64; 4]>> {
        (self.classes.len() <= max).then_some(self.classes)
    }
}
