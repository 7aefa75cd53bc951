//! Walking byte strings through the grammar's automata without the Earley machinery: what
//! the token-mask cache (`sieve-matcher`) precomputes per state.
//!
//! From a scan item in state `s`, a [`StaticWalk`] follows a byte string through `s`'s
//! automaton and, downwards, into the rules it refers to: descending into `B` at an edge
//! `q -B-> t` pushes `t` on a walk-local stack, and completing `B` pops it. None of that
//! depends on the rest of the Earley set — Earley would predict `B` there and complete back to
//! `t` alike. Only completing `s`'s own rule (the stack empty) continues in contexts the walk
//! cannot see; it is possible before byte `b` only if `b` is in FOLLOW of the rule. So:
//!
//! - a byte string the walk consumes in full is accepted whenever an item in `s` is in the
//!   top set (every stored item can be continued, see the crate docs);
//! - a byte string on which every path dies, with no possible upward exit (and no descent the
//!   walk gave up on) before the byte that followed, gets nothing from the items in `s`;
//! - anything else depends on the other items: the walk's frontier says `left`.
//!
//! The walk gives up — and says `left` — where exploring would be unbounded or is not
//! implemented: descents into counted or nullable rules, ε edges, stacks deeper than
//! [`MAX_STACK`], more than [`MAX_CONFIGS`] configurations. Giving up only makes a token
//! uncertain, never wrongly decided.
//!
//! At the first byte the walk uses `s`'s byte edges only: the set's own closure already
//! predicted every rule `s` refers to and completed every rule that ends at `s`, and those
//! items are scan items with walks of their own.

use foldhash::{HashMap, HashMapExt};

use crate::grammar::{EarleyGrammar, NOT_COUNTED};
use crate::Parser;

/// The deepest walk-local stack of pending rule returns.
pub const MAX_STACK: usize = 16;
/// The most configurations a frontier holds.
pub const MAX_CONFIGS: usize = 64;

impl EarleyGrammar {
    /// Whether a call of `callee` that returns to `ret`, a state of rule `caller`, is a tail
    /// call the walk may make without a frame: `ret` only completes `caller` (it accepts and
    /// has no edge of any kind, and is not counted), and what may follow `callee` is what may
    /// follow `caller`. Completing `callee` on the frame below then goes on exactly where
    /// completing `caller` would, and an upward exit reads the same FOLLOW set. Free text's
    /// right-linear rules (`s0 ::= [^<] s0 | "<" s1 | ε`) call one another this way at every
    /// byte: without the frame their walks stay at one stack, so rows repeat.
    fn is_tail_call(&self, callee: u32, ret: u32) -> bool {
        let info = &self.states[ret as usize];
        info.accepting
            && info.counted == NOT_COUNTED
            && info.bytes.0 == info.bytes.1
            && info.rules.0 == info.rules.1
            && info.eps.0 == info.eps.1
            && self.follow[callee as usize] == self.follow[info.rule as usize]
    }

    /// Whether `state` has byte edges only: it neither accepts, refers to a rule, has ε
    /// edges, nor is counted.
    fn is_plain(&self, state: u32) -> bool {
        let info = &self.states[state as usize];
        !info.accepting
            && info.counted == NOT_COUNTED
            && info.rules.0 == info.rules.1
            && info.eps.0 == info.eps.1
    }

    /// Whether `state` has byte edges only (it may accept): a walk from it only scans bytes
    /// or completes its rule.
    pub(crate) fn is_lexical(&self, state: u32) -> bool {
        let info = &self.states[state as usize];
        info.counted == NOT_COUNTED && info.rules.0 == info.rules.1 && info.eps.0 == info.eps.1
    }

    /// Appends to `out` the target of every byte edge of `state` that contains `byte`.
    fn scan_targets(&self, state: u32, byte: u8, out: &mut Vec<Config>) {
        let info = &self.states[state as usize];
        for edge in self.byte_edges(info) {
            if edge.lo <= byte && byte <= edge.hi {
                out.push(Config {
                    state: edge.target,
                    stack: 0,
                });
            }
        }
    }
}

impl Parser {
    /// The states of the top set's scan items, in set order (a state appears once per origin
    /// it has there).
    pub fn scan_states(&self) -> impl Iterator<Item = u32> + '_ {
        self.top_scans().iter().map(|item| item.state)
    }
}

/// A walk position: a state and the walk-local stack of return states (an id into the
/// walk's stack table; 0 is the empty stack).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Config {
    state: u32,
    stack: u32,
}

impl Config {
    /// `state` with `stack`.
    pub(crate) fn new(state: u32, stack: u32) -> Config {
        Config { state, stack }
    }

    /// The state.
    pub(crate) fn state(&self) -> u32 {
        self.state
    }

    /// The stack (0 is the empty stack).
    pub(crate) fn stack(&self) -> u32 {
        self.stack
    }
}

/// Where a walk stands after some bytes: the configurations still alive, and whether an
/// upward exit (or a place the walk gave up) was possible before one of the bytes.
#[derive(Clone, Debug, Default)]
pub struct Frontier {
    configs: Vec<Config>,
    left: bool,
}

impl Frontier {
    /// Whether no configuration is alive.
    pub fn is_dead(&self) -> bool {
        self.configs.is_empty()
    }

    /// Whether the walk could have left the starting rule (or gave up) before some byte.
    pub fn left(&self) -> bool {
        self.left
    }

    /// The live configurations, sorted and without repeats.
    pub(crate) fn configs(&self) -> &[Config] {
        &self.configs
    }

    /// The only configuration, when there is one.
    pub(crate) fn single(&self) -> Option<Config> {
        match self.configs[..] {
            [config] => Some(config),
            _ => None,
        }
    }

    /// Sets whether the walk has left before.
    pub(crate) fn set_left(&mut self, left: bool) {
        self.left = left;
    }

    /// A frontier of `configs` (sorted, without repeats) that has not left.
    pub(crate) fn of(configs: Vec<Config>) -> Frontier {
        Frontier {
            configs,
            left: false,
        }
    }
}

/// Walks byte strings from scan states through the automata, descending into rules (module
/// docs). Holds the table of stacks, shared by every frontier it made.
#[derive(Debug)]
pub struct StaticWalk<'g> {
    g: &'g EarleyGrammar,
    stacks: Stacks,
    worklist: Vec<Config>,
    closed: Vec<Config>,
}

/// The walk-local stacks a [`StaticWalk`] made: configurations name stacks by their index
/// here, so frontiers of walks sharing one table (see [`StaticWalk::with_stacks`]) compare
/// equal exactly when they hold the same configurations.
#[derive(Clone, Debug)]
pub(crate) struct Stacks {
    /// Stack `i > 0` is a [`Frame`] on top of stack `frame.parent`; hash-consed by `index`.
    frames: Vec<Frame>,
    index: HashMap<(u32, u32, u32), u32>,
}

impl Default for Stacks {
    /// Only the empty stack, 0.
    fn default() -> Stacks {
        Stacks {
            frames: vec![Frame {
                parent: 0,
                ret: 0,
                count: NOT_COUNTED,
                depth: 0,
            }],
            index: HashMap::new(),
        }
    }
}

/// A pending return: when the rule being walked completes, go on at `ret` with the stack
/// `parent`. When `ret` is a counted state, `count` is how many items its rule will have
/// recognised then (the Earley waiter's advanced count); otherwise it is [`NOT_COUNTED`].
#[derive(Clone, Copy, Debug)]
struct Frame {
    parent: u32,
    ret: u32,
    count: u32,
    depth: u32,
}

impl<'g> StaticWalk<'g> {
    /// A walk over `g`'s automata.
    #[cfg(test)]
    pub fn new(g: &'g EarleyGrammar) -> StaticWalk<'g> {
        StaticWalk::with_stacks(g, Stacks::default())
    }

    /// A walk over `g`'s automata going on with the stacks of an earlier walk over `g`.
    pub(crate) fn with_stacks(g: &'g EarleyGrammar, stacks: Stacks) -> StaticWalk<'g> {
        StaticWalk {
            g,
            stacks,
            worklist: Vec::new(),
            closed: Vec::new(),
        }
    }

    /// The stacks this walk made, for a later walk over the same grammar.
    pub(crate) fn into_stacks(self) -> Stacks {
        self.stacks
    }

    /// The top frame of the non-empty walk-local `stack`: the state it returns to, its item
    /// count (`NOT_COUNTED` for a plain return) and the stack below it.
    pub(crate) fn top_frame(&self, stack: u32) -> (u32, u32, u32) {
        let frame = self.stacks.frames[stack as usize];
        (frame.ret, frame.count, frame.parent)
    }

    /// The frontier before any byte, from a scan item in `state` whose rule, once complete,
    /// returns to `context[0]` — a state of the caller, with the count its item will have
    /// when that state is counted (else [`NOT_COUNTED`]) — whose rule returns to
    /// `context[1]`, and so on; past the last, into unknown callers.
    pub(crate) fn start_in(&mut self, state: u32, context: &[(u32, u32)]) -> Frontier {
        let mut stack = 0;
        for &(ret, count) in context.iter().rev() {
            stack = self
                .push_stack(stack, ret, count)
                .expect("a context is shorter than MAX_STACK");
        }
        Frontier {
            configs: vec![Config { state, stack }],
            left: false,
        }
    }

    fn push_stack(&mut self, parent: u32, ret: u32, count: u32) -> Option<u32> {
        let stacks = &mut self.stacks;
        let depth = stacks.frames[parent as usize].depth + 1;
        if depth as usize > MAX_STACK {
            return None;
        }
        let next = stacks.frames.len() as u32;
        Some(
            *stacks.index.entry((parent, ret, count)).or_insert_with(|| {
                stacks.frames.push(Frame {
                    parent,
                    ret,
                    count,
                    depth,
                });
                next
            }),
        )
    }

    /// The rule `rule` completes with `stack` pending, before `byte`: go on at the return,
    /// or — with nothing pending — note an upward exit if `byte` may follow the rule.
    /// Returns whether an exit was possible (or the walk gave up).
    fn complete(&mut self, rule: u32, stack: u32, byte: u8) -> bool {
        let g = self.g;
        let (mut rule, mut stack) = (rule, stack);
        let mut left = false;
        loop {
            if stack == 0 {
                return left || g.follow[rule as usize].contains(byte);
            }
            let frame = self.stacks.frames[stack as usize];
            if frame.count == NOT_COUNTED {
                self.worklist.push(Config {
                    state: frame.ret,
                    stack: frame.parent,
                });
                return left;
            }
            // One more item of the counted rule at `frame.ret` is complete: its count is now
            // `frame.count`. Another item may follow, and the counted rule may complete.
            let info = g.states[frame.ret as usize];
            let counted = g.counted[info.counted as usize];
            if frame.count < counted.max {
                left |= self.descend_item(counted, frame.ret, frame.count, frame.parent, byte);
            }
            if frame.count < counted.min {
                return left;
            }
            rule = info.rule;
            stack = frame.parent;
        }
    }

    /// Descends into the item rule of the counted state `state` (its rule `counted`), with
    /// `count` items recognised so far and `stack` below. Returns whether the walk gave up.
    fn descend_item(
        &mut self,
        counted: crate::grammar::Counted,
        state: u32,
        count: u32,
        stack: u32,
        byte: u8,
    ) -> bool {
        let g = self.g;
        let item = counted.item as usize;
        if !g.first[item].contains(byte) {
            return false;
        }
        let start = g.start[item];
        if g.states[start as usize].counted != NOT_COUNTED || g.nullable[item] {
            return true;
        }
        match self.push_stack(stack, state, counted.next(count)) {
            Some(stack) => {
                self.worklist.push(Config {
                    state: start,
                    stack,
                });
                false
            }
            None => true,
        }
    }

    /// Writes into `out` the frontier after `byte` (reusing its allocation). `first` says
    /// whether `byte` is the first of the string (then only the starting state's byte edges
    /// apply; see the module docs).
    pub fn step_into(&mut self, from: &Frontier, byte: u8, first: bool, out: &mut Frontier) {
        let mut left = from.left;
        self.closed.clear();
        if first {
            self.closed.extend_from_slice(&from.configs);
        } else {
            left |= self.close(&from.configs, byte);
        }
        out.configs.clear();
        for &config in &self.closed {
            let before = out.configs.len();
            self.g.scan_targets(config.state, byte, &mut out.configs);
            for target in &mut out.configs[before..] {
                target.stack = config.stack;
            }
        }
        if out.configs.len() > 1 {
            out.configs.sort_unstable();
            out.configs.dedup();
        }
        if out.configs.len() > MAX_CONFIGS {
            out.configs.truncate(MAX_CONFIGS);
            left = true;
        }
        out.left = left;
    }

    /// Fills `closed` with the configurations reachable from `configs` by descents,
    /// completions with a pending return, and ε edges, before `byte`. Returns whether an
    /// upward exit was possible before `byte`, or the walk gave up somewhere.
    fn close(&mut self, configs: &[Config], byte: u8) -> bool {
        let g = self.g;
        let mut left = false;
        self.worklist.clear();
        for &config in configs {
            // A state with only byte edges closes to itself (frontiers are deduplicated).
            if g.is_plain(config.state) {
                self.closed.push(config);
            } else {
                self.worklist.push(config);
            }
        }
        while let Some(config) = self.worklist.pop() {
            if self.closed.contains(&config) {
                continue;
            }
            if self.closed.len() >= 4 * MAX_CONFIGS {
                return true;
            }
            self.closed.push(config);
            let info = g.states[config.state as usize];
            if info.counted != NOT_COUNTED || info.eps.0 != info.eps.1 {
                left = true;
                continue;
            }
            if info.accepting {
                left |= self.complete(info.rule, config.stack, byte);
            }
            for edge in g.rule_edges(&info) {
                let rule = edge.rule as usize;
                if !g.first[rule].contains(byte) && !g.nullable[rule] {
                    continue;
                }
                let start = g.start[rule];
                let start_info = g.states[start as usize];
                let pushed = if g.is_tail_call(edge.rule, edge.target) {
                    Some(config.stack)
                } else {
                    self.push_stack(config.stack, edge.target, NOT_COUNTED)
                };
                let Some(stack) = pushed else {
                    left = true;
                    continue;
                };
                if start_info.counted != NOT_COUNTED {
                    // A counted rule `X{min,max}`: its first item, or nothing when min is 0.
                    let counted = g.counted[start_info.counted as usize];
                    if counted.max > 0 {
                        left |= self.descend_item(counted, start, 0, stack, byte);
                    }
                    if counted.min == 0 {
                        self.worklist.push(Config {
                            state: edge.target,
                            stack: config.stack,
                        });
                    }
                    if counted.min > 0 && g.nullable[counted.item as usize] {
                        left = true;
                    }
                } else if g.nullable[rule] {
                    left = true;
                } else {
                    self.worklist.push(Config {
                        state: start,
                        stack,
                    });
                }
            }
        }
        left
    }
}
