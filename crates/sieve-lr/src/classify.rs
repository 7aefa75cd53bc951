//! The classification of a key's tokens: the trie walked byte by byte with the DPDA step
//! from the key's known frames, the stack below them unknown.
//!
//! A key is an LR state (the top of the stack) and, with a context, the states of up to
//! [`Key::MAX_CONTEXT`] frames below it, innermost first. Each context word pair is
//! `(state of the frame below, origins of the frame above)`, the origins packed four bits
//! per kernel item (the first [`PACKED`] items): the distance down the chain to the item's
//! origin frame, `0` when it is not among the known frames. Unpacked origins and the origins
//! of the deepest known frame are unknown.
//!
//! When many bytes lead from the key straight back to it (a string's characters), the tokens
//! made only of them are accepted at once from the trie's class region, and only the subtrees
//! where a token leaves the class are walked; otherwise the same is done per first byte for
//! the configuration it leads to (a word's letters after its first). The walk visits trie nodes in pre-order, one
//! row look-up per node (the walk determinised on the fly, see [`Configs`]): a node whose byte is shifted accepts the tokens spelled there
//! and goes on into its subtree, a rejected node rejects its subtree, and a node whose
//! reductions need an unknown frame (or run out of fuel) leaves its subtree uncertain.
//!
//! With token limits a token is accepted only if its end is too: the configuration after its
//! last byte must survive a token end (its top state's `⊥` is not dead, see
//! [`crate::machine::end_token`]). Region shortcuts accept a region's tokens only when every
//! configuration they can end at survives, and are not taken when some do and some do not.
//!
//! # Invariant
//!
//! A step that reads only known frames is the step the parser takes from any stack whose
//! top frames are the key's (see [`crate::machine`]): accepted tokens are accepted and
//! rejected tokens rejected by every parser with this key.

use std::sync::Arc;

use foldhash::HashMap;
use sieve_backend::{push_range, Classification, Key, TokenBits};
use sieve_vocab::{ClassRegion, TextRegion, TokenTrie, Utf8State};

use crate::machine::{step, Frame, Stack, Step, UNKNOWN};
use crate::tables::{Tables, TokenEnd, PAYLOAD, SHIFT};

/// How many kernel items' origins a context word packs (four bits each).
pub(crate) const PACKED: usize = 8;

/// The known frames of `key`, the top last.
fn seed(tables: &Tables, key: &Key) -> Stack {
    let context = key.context();
    let known = context.len();
    let mut stack = Stack::default();
    // Frame `i` of the chain (0 = top) sits at arena index `known - i`.
    for i in (0..=known).rev() {
        let state = if i == 0 { key.state } else { context[i - 1].0 };
        let parent = if i == known {
            UNKNOWN
        } else {
            (known - i - 1) as u32
        };
        let origins = stack.origins.len() as u32;
        for k in 0..tables.kernel_len(state) {
            let origin = if i < known && k < PACKED {
                let distance = ((context[i].1 >> (4 * k)) & 0xf) as usize;
                let at = i + distance;
                if distance > 0 && at <= known {
                    (known - at) as u32
                } else {
                    UNKNOWN
                }
            } else {
                UNKNOWN
            };
            stack.origins.push(origin);
        }
        stack.frames.push(Frame {
            state,
            parent,
            origins,
        });
    }
    stack
}

/// A row entry not computed yet.
const UNSET: u32 = u32::MAX;
/// A row entry: the byte is rejected.
const REJECT: u32 = u32::MAX - 1;
/// A row entry: the byte's step needs an unknown frame (or more fuel, or more configurations
/// than [`MAX_CONFIGS`]).
const UNSURE: u32 = u32::MAX - 2;
/// The most configurations one classification interns; past it, steps are uncertain.
pub(crate) const MAX_CONFIGS: usize = 4096;

/// The walk determinised on the fly: each distinct configuration (the chain of frames from
/// the top down to the deepest known one, with the origins as positions in that chain — all a
/// step reads) gets an id and a 256-entry row, filled on first use by one [`step`]. A trie
/// node then costs one row look-up; configurations that recur (a string's characters) step
/// once per byte value, not once per node.
struct Configs<'t> {
    tables: &'t Tables,
    fuel: usize,
    ids: HashMap<Vec<u32>, u32>,
    stacks: Vec<Stack>,
    rows: Vec<u32>,
    /// Where steps run, reused.
    scratch: Stack,
    /// The entry of each direct shift taken from a configuration.
    by_shift: HashMap<(u32, u32), u32>,
    /// Whether token ends can kill a configuration (the grammar has token limits).
    token_ends: bool,
}

impl<'t> Configs<'t> {
    fn new(tables: &'t Tables, fuel: usize) -> Configs<'t> {
        Configs {
            tables,
            fuel,
            ids: HashMap::default(),
            stacks: Vec::new(),
            rows: Vec::new(),
            scratch: Stack::default(),
            by_shift: HashMap::default(),
            token_ends: tables.has_token_ends(),
        }
    }

    /// The id of the configuration whose top is `stack`'s last frame, if there is room.
    fn intern(&mut self, stack: &Stack) -> Option<u32> {
        let mut chain = vec![stack.frames.len() as u32 - 1];
        loop {
            let parent = stack.frames[*chain.last().expect("non-empty") as usize].parent;
            if parent == UNKNOWN {
                break;
            }
            chain.push(parent);
        }
        // Every origin is on the chain (a frame's origins are its own chain's frames).
        let position = |origin: u32| {
            chain
                .iter()
                .position(|&f| f == origin)
                .map_or(UNKNOWN, |p| p as u32)
        };
        let mut key = Vec::with_capacity(chain.len() * 2);
        for &f in &chain {
            let frame = stack.frames[f as usize];
            key.push(frame.state);
            let kernel = self.tables.kernel_len(frame.state);
            for k in 0..kernel {
                key.push(position(stack.origins[frame.origins as usize + k]));
            }
        }
        if let Some(&id) = self.ids.get(&key) {
            return Some(id);
        }
        if self.stacks.len() >= MAX_CONFIGS {
            return None;
        }
        // The compact stack: chain position `p` at arena index `len - 1 - p`.
        let len = chain.len() as u32;
        let at = |p: u32| if p == UNKNOWN { UNKNOWN } else { len - 1 - p };
        let mut compact = Stack::default();
        for (p, &f) in chain.iter().enumerate().rev() {
            let frame = stack.frames[f as usize];
            let origins = compact.origins.len() as u32;
            for k in 0..self.tables.kernel_len(frame.state) {
                compact
                    .origins
                    .push(at(position(stack.origins[frame.origins as usize + k])));
            }
            compact.frames.push(Frame {
                state: frame.state,
                parent: if p + 1 == chain.len() {
                    UNKNOWN
                } else {
                    at(p as u32 + 1)
                },
                origins,
            });
        }
        let id = self.stacks.len() as u32;
        self.ids.insert(key, id);
        self.stacks.push(compact);
        self.rows.extend([UNSET; 256]);
        Some(id)
    }

    /// Whether a token ending at `config` survives its end.
    #[inline]
    fn end_alive(&self, config: u32) -> bool {
        !self.token_ends || {
            let top = self.stacks[config as usize].top().state;
            self.tables.token_end(top) != TokenEnd::Dead
        }
    }

    /// The row entry of `config` on `byte`.
    fn next(&mut self, config: u32, byte: u8) -> u32 {
        let slot = config as usize * 256 + usize::from(byte);
        if self.rows[slot] != UNSET {
            return self.rows[slot];
        }
        let from = &self.stacks[config as usize];
        let top = from.top().state;
        let action = self.tables.action(top, usize::from(byte));
        // A direct shift's result depends on the transition alone, not on the byte.
        let direct = action & !PAYLOAD == SHIFT;
        let entry = if action == 0 {
            REJECT
        } else if let Some(&known) = direct
            .then(|| self.by_shift.get(&(config, action)))
            .flatten()
        {
            known
        } else {
            let mut stack = std::mem::take(&mut self.scratch);
            stack.frames.clear();
            stack.frames.extend_from_slice(&from.frames);
            stack.origins.clear();
            stack.origins.extend_from_slice(&from.origins);
            let mut fuel = self.fuel;
            let entry = match step(self.tables, &mut stack, usize::from(byte), &mut fuel) {
                Step::Shifted => self.intern(&stack).unwrap_or(UNSURE),
                Step::Rejected | Step::Accepted => REJECT,
                Step::Unknown | Step::OutOfFuel => UNSURE,
            };
            self.scratch = stack;
            if direct {
                self.by_shift.insert((config, action), entry);
            }
            entry
        };
        self.rows[slot] = entry;
        entry
    }
}

/// Sorts every text token of `trie` from `key` (see the module docs).
pub(crate) fn classify(tables: &Tables, key: Key, trie: &TokenTrie, fuel: usize) -> Classification {
    let mut configs = Configs::new(tables, fuel);
    let start = configs
        .intern(&seed(tables, &key))
        .expect("the first configuration fits");
    let mut walk = Walk {
        trie,
        accepted: TokenBits::new(trie.n_vocab()),
        uncertain: Vec::new(),
    };
    // UTF-8 text that leads back to the start character by character (a JSON string's
    // characters): every token spelling such text is accepted at once, and only the
    // subtrees where a token breaks it are walked, from the configuration of the decoder
    // state before the breaking byte.
    if let Some((region, at, alive)) = text_loop(&mut configs, trie, start) {
        if alive {
            walk.accept_all(&region.inside);
        }
        for exit in &region.exits {
            walk.subtree(&mut configs, exit.node as usize, at[exit.state as usize]);
        }
        return walk.finish();
    }
    // The bytes that lead back to the start (a string's characters): every token made only
    // of them is accepted at once, and only the subtrees where a token leaves them are walked.
    match loop_region(&mut configs, trie, start) {
        Some((_, region)) => {
            if configs.end_alive(start) {
                walk.accept_all(&region.inside);
            }
            for &exit in &region.exits {
                walk.subtree(&mut configs, exit as usize, start);
            }
        }
        None => {
            // Each first byte on its own: where it leads may loop on a class (a word's
            // letters after its first), and then that subtree's tokens made only of the class
            // are accepted from the region and only its exits walked.
            let nodes = trie.nodes();
            let mut regions: Vec<(u32, Option<LoopRegion>)> = Vec::new();
            let mut n = 0;
            while n < nodes.len() {
                let node = nodes[n];
                let end = node.end as usize;
                let next = configs.next(start, node.byte);
                let region = if next == REJECT || next == UNSURE {
                    None
                } else if let Some((_, known)) = regions.iter().find(|(c, _)| *c == next) {
                    known.clone()
                } else {
                    let found = loop_region(&mut configs, trie, next);
                    regions.push((next, found.clone()));
                    found
                };
                match region {
                    Some((class, region))
                        if class[usize::from(node.byte) / 64] >> (node.byte % 64) & 1 == 1 =>
                    {
                        // The region's tokens end where they loop, at `next`.
                        if configs.end_alive(next) {
                            for p in node.pos as usize..trie.node_pos_end(n) {
                                let id = trie.token(p).index();
                                if region.inside[id / 32] >> (id % 32) & 1 == 1 {
                                    walk.accepted.insert(id);
                                }
                            }
                        }
                        let exits = &region.exits;
                        let from = exits.partition_point(|&e| e as usize <= n);
                        let to = exits.partition_point(|&e| (e as usize) < end);
                        for &exit in &exits[from..to] {
                            walk.subtree(&mut configs, exit as usize, next);
                        }
                    }
                    _ => walk.subtree(&mut configs, n, start),
                }
                n = end;
            }
        }
    }
    walk.finish()
}

/// When the ASCII bytes that lead `start` straight back to it are at least
/// [`MIN_LOOP_CLASS`] and some non-ASCII byte is shifted too: the configuration of each UTF-8
/// decoder state if every well-formed character with those ASCII bytes leads from `start`
/// through them and back (checked byte by byte over every decoder state), with the trie's
/// text region and whether a token ending at any of those configurations survives its end
/// (`None` when some do and some do not).
fn text_loop(
    configs: &mut Configs<'_>,
    trie: &TokenTrie,
    start: u32,
) -> Option<(Arc<TextRegion>, [u32; 8], bool)> {
    let tables = configs.tables;
    let top = configs.stacks[start as usize].top().state;
    if tables.action(top, 0xc3) == 0 {
        return None;
    }
    let mut ascii = [0u64; 4];
    let mut count = 0;
    for byte in 0..0x80u8 {
        if tables.action(top, usize::from(byte)) != 0 && configs.next(start, byte) == start {
            ascii[usize::from(byte) / 64] |= 1 << (byte % 64);
            count += 1;
        }
    }
    if count < MIN_LOOP_CLASS {
        return None;
    }
    let mut at = [UNSET; 8];
    at[Utf8State::Boundary as usize] = start;
    let mut work = vec![Utf8State::Boundary];
    while let Some(state) = work.pop() {
        let from = at[state as usize];
        for byte in 0x80..=0xffu8 {
            let Some(after) = state.step(byte, &ascii) else {
                continue;
            };
            let next = configs.next(from, byte);
            if next == REJECT || next == UNSURE {
                return None;
            }
            let slot = &mut at[after as usize];
            if *slot == UNSET {
                *slot = next;
                work.push(after);
            } else if *slot != next {
                return None;
            }
        }
    }
    // Every decoder state is reached from a boundary by some well-formed byte, so each has
    // its configuration.
    let alive = configs.end_alive(start);
    if at.iter().any(|&config| configs.end_alive(config) != alive) {
        return None;
    }
    Some((trie.text_region(&ascii), at, alive))
}

/// The fewest bytes looping back to a configuration for the class region to pay.
pub(crate) const MIN_LOOP_CLASS: usize = 4;

/// A byte class a configuration loops on, and the trie's region of it.
type LoopRegion = ([u64; 4], Arc<ClassRegion>);

/// The bytes that lead `config` straight back to itself, with their class region, when they
/// are at least [`MIN_LOOP_CLASS`] and the trie keeps a region for them. Candidates are the
/// bytes the top state shifts to itself.
fn loop_region(configs: &mut Configs<'_>, trie: &TokenTrie, config: u32) -> Option<LoopRegion> {
    let tables = configs.tables;
    let top = configs.stacks[config as usize].top().state;
    let candidates: Vec<u8> = (0..=255u8)
        .filter(|&b| {
            let action = tables.action(top, usize::from(b));
            action & !PAYLOAD == SHIFT && tables.trans_target(action & PAYLOAD) == top
        })
        .collect();
    if candidates.len() < MIN_LOOP_CLASS {
        return None;
    }
    let mut class = [0u64; 4];
    let mut loops = 0;
    for byte in candidates {
        if configs.next(config, byte) == config {
            class[usize::from(byte) / 64] |= 1 << (byte % 64);
            loops += 1;
        }
    }
    if loops < MIN_LOOP_CLASS {
        return None;
    }
    Some((class, trie.class_region(&class)))
}

/// What a classification's walk collects.
struct Walk<'t> {
    trie: &'t TokenTrie,
    accepted: TokenBits,
    uncertain: Vec<std::ops::Range<u32>>,
}

impl Walk<'_> {
    /// The classification collected.
    fn finish(self) -> Classification {
        let mut uncertain = self.uncertain;
        uncertain.sort_unstable_by_key(|r| r.start);
        let mut merged = Vec::with_capacity(uncertain.len());
        for range in uncertain {
            push_range(&mut merged, range);
        }
        Classification {
            accepted: self.accepted.finish(),
            uncertain: merged,
        }
    }

    /// Accepts every token of `inside` (a bitmask over ids).
    fn accept_all(&mut self, inside: &[u32]) {
        for (a, r) in self.accepted.bulk_words().iter_mut().zip(inside) {
            *a |= r;
        }
    }

    /// Walks the subtree of node `top`, whose parent's prefix leads to configuration `base`.
    fn subtree(&mut self, configs: &mut Configs<'_>, top: usize, base: u32) {
        let trie = self.trie;
        let nodes = trie.nodes();
        let end = nodes[top].end as usize;
        let base_depth = nodes[top].depth as usize - 1;
        // at[d]: the configuration after the first `base_depth + d` bytes of the current
        // node's prefix.
        let mut at = vec![base];
        let mut n = top;
        while n < end {
            let node = nodes[n];
            let depth = node.depth as usize - base_depth;
            at.truncate(depth);
            match configs.next(at[depth - 1], node.byte) {
                REJECT => n = node.end as usize,
                UNSURE => {
                    self.uncertain.push(node.pos..trie.node_pos_end(n) as u32);
                    n = node.end as usize;
                }
                next => {
                    if node.has_token() && configs.end_alive(next) {
                        for p in trie.tokens_at_node(n) {
                            self.accepted.insert(trie.token(p).index());
                        }
                    }
                    at.push(next);
                    n += 1;
                }
            }
        }
    }
}
