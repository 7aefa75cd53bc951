//! Classifying every text token of a trie from one scan state (what the token-mask cache
//! stores per state): the [`StaticWalk`] determinised lazily over the trie.
//!
//! A [`StaticWalk`] frontier is a set of configurations (state, walk-local stack) plus a
//! `left` flag saying an upward exit was possible before some byte. The configurations after
//! a byte depend only on the configurations before it and the byte, and `left` only grows, so
//! the walk is a deterministic automaton over *configuration sets*: each distinct set is a row
//! of a transition table, built on first use, and an entry holds the next row plus whether
//! this byte's step set `left`. Walking the trie then costs one table look-up per node, with
//! `left` carried along the path as one bit. A token that ends alive is accepted; a prefix on
//! which the walk dies rejects its whole subtree, or makes it uncertain when `left` was set on
//! the way — exactly what walking each token with [`StaticWalk`] alone decides (a unit test
//! checks it on every state of every shipped grammar).
//!
//! The starting row is the only one stepped as a token's first byte (only the starting
//! state's byte edges apply there: the Earley set already closed over the rest), so it is
//! kept apart from the row of the same configurations deeper down.
//!
//! # Cost
//!
//! The walk visits the trie's nodes ([`TokenTrie::nodes`]: one per distinct token prefix,
//! 421,660 for o200k_base, in pre-order) keeping one entry per depth; a rejected prefix skips
//! its subtree at once. Each distinct (row, byte class) pair costs one
//! [`StaticWalk::step_into`]: bytes the grammar never tells apart step alike (see
//! `alphabet.rs`), so one step fills the entries of its whole class. Rows are capped at
//! [`MAX_ROWS`] per classification; past it, the walk continues below that point with
//! frontiers computed per node, as [`StaticWalk`] alone would.
//!
//! A wide node ([`sieve_vocab::TrieNode::wide`]) reached in a row that steps to itself on a
//! class of bytes (an identifier's characters after `int `) is not walked node by node: the
//! tokens below it that stay in the class are accepted as runs of positions, and only the
//! subtrees where a token leaves the class are walked ([`Walker::walk_loop`]). The nodes
//! below it are read as bytes, not stepped through the table.
//!
//! Rows depend on the grammar alone, so a grammar keeps them between classifications (up to
//! [`KEEP_ROWS`], see [`SharedTables`]): the states of an unrolled bounded string, or a
//! counted rule at successive counts, meet the rows of the ones classified before. Starting
//! rows are kept apart from the rows of the same configurations below a first byte.

use foldhash::HashMap;
use sieve_backend::{merge_ranges, push_range, Classification, TokenBits};
use sieve_ir::ByteClass;
use sieve_vocab::{ClassRegion, TextRegion, TokenTrie, Utf8State, CHAIN_DEPTH};

use crate::alphabet::Alphabet;
use crate::grammar::EarleyGrammar;
use std::sync::Mutex;

use crate::within::{Config, Frontier, Stacks, StaticWalk};

mod local;

/// The most rows one classification builds (256 entries of 2 bytes each).
const MAX_ROWS: usize = 4096;

/// Entries are computed as `u32` and stored as [`Stored`] in the table: every value below
/// fits in 16 bits, which halves the memory a classification touches for its rows (on a
/// cold process, first touches of fresh pages were a fifth of a small schema's first
/// walk).
type Stored = u16;

/// Set on every entry that is not a transition to a row.
const SPECIAL: u32 = 1 << 15;
/// This byte's step made an upward exit possible (or the walk gave up), on transitions and
/// on [`DEAD`] alike.
const LEFT: u32 = 1 << 14;
/// The row index of a transition.
const ROW: u32 = LEFT - 1;
/// The walk dies on this byte (`| LEFT` when an exit was possible before it).
const DEAD: u32 = SPECIAL;
/// Not computed yet.
const UNKNOWN: u32 = SPECIAL | (1 << 13);
/// The target is a frontier past [`MAX_ROWS`]: continue with per-node frontiers.
const OVERFLOW: u32 = SPECIAL | (1 << 12);

// Every row a table can hold (those kept between classifications plus one
// classification's) has an index that fits in `ROW`.
const _: () = assert!(KEEP_ROWS + MAX_ROWS <= ROW as usize);

/// The rows of the determinised walk, with the walk-local stacks their configurations name.
/// Rows depend on the grammar alone (not on the trie, the state or the context being
/// classified), so one classification goes on with the rows of the ones before: the states
/// of a bounded string, or a counted rule at successive counts, reach the same rows a byte
/// apart. Kept per grammar in [`SharedTables`].
#[derive(Default)]
pub(crate) struct Tables {
    /// `table[row * 256 + byte]`: a row index (`| LEFT`), `DEAD` (`| LEFT`) or `UNKNOWN`
    /// (tables with an `OVERFLOW` entry are not kept: see [`classify`]).
    table: Vec<Stored>,
    frontier_of_row: Vec<Frontier>,
    /// The rows below a token's first byte, and the starting rows, by configurations.
    row_of_configs: HashMap<Vec<Config>, u32>,
    start_of_configs: HashMap<Vec<Config>, u32>,
    /// Per row, whether it is a starting row (stepped as a token's first byte).
    is_start: Vec<bool>,
    /// Per row, whether [`Dfa::fill_lexical_row`] has run on it, and whether all its
    /// entries are known.
    lexical_tried: Vec<bool>,
    /// Per row, its row-local classes once computed, and how many steps it took one class of
    /// the grammar's alphabet at a time.
    local: Vec<Local>,
    /// Per row that loops, the bytes that leave its self-loop, once asked
    /// ([`Dfa::self_loop`]).
    loops: Vec<Option<Box<Leaves>>>,
    /// Per row, how many of its known entries step it to itself.
    loop_bytes: Vec<u16>,
    misses: Vec<u8>,
    complete: Vec<bool>,
    stacks: Stacks,
}

/// A row's row-local classes (see `local.rs`).
#[derive(Clone)]
enum Local {
    /// Not computed yet.
    Untried,
    /// More than half the grammar's classes, or the exploration gave up.
    None,
    /// The classes, as bit sets of bytes.
    Classes(Vec<[u64; 4]>),
}

/// Per byte, whether it leaves a row's self-loop: `true` unless it steps the row to itself
/// without `LEFT` (see [`Dfa::self_loop`]).
type Leaves = [bool; 256];

/// A row whose self-loop has fewer bytes than this is never taken in bulk: below a node, the
/// tokens that stay in a small class are few, and walking them node by node costs less than
/// filling the row and finding the exits.
const MIN_LOOP_CLASS: u32 = 8;

/// A run of at least this many positions accepted below a loop makes the set dense: its ids
/// go into the mask without marking their words (see [`Walker::accept_positions`]).
const BULK_RUN: usize = 256;

/// A row steps one class of the grammar's alphabet at a time this many times before its
/// row-local classes are computed: a row the walk meets at a few bytes never needs them.
const LOCAL_AFTER: u8 = 2;

/// The most rows kept between classifications (256 entries of 2 bytes each, a quarter of a
/// megabyte in all): tables that grew past it are dropped, and the next classification
/// starts afresh.
const KEEP_ROWS: usize = 512;

/// One grammar's [`Tables`], lent to one classification at a time (another one running at
/// the same moment starts from empty tables). Cloning a grammar does not clone them.
#[derive(Default)]
pub(crate) struct SharedTables(Mutex<Tables>);

impl Clone for SharedTables {
    fn clone(&self) -> SharedTables {
        SharedTables::default()
    }
}

impl std::fmt::Debug for SharedTables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedTables")
    }
}

impl SharedTables {
    /// The kept tables (empty when another classification holds them).
    fn take(&self) -> Tables {
        match self.0.try_lock() {
            Ok(mut tables) => std::mem::take(&mut *tables),
            Err(_) => Tables::default(),
        }
    }

    /// Keeps `tables` for the next classification, unless they have more than
    /// [`KEEP_ROWS`] rows.
    fn keep(&self, tables: Tables) {
        if tables.is_start.len() <= KEEP_ROWS {
            if let Ok(mut kept) = self.0.try_lock() {
                *kept = tables;
            }
        }
    }
}

/// The lazily determinised walk.
struct Dfa<'g> {
    g: &'g EarleyGrammar,
    alphabet: &'g Alphabet,
    walk: StaticWalk<'g>,
    /// `table[row * 256 + byte]`: a row index (`| LEFT`), `DEAD` (`| LEFT`), `UNKNOWN` or
    /// `OVERFLOW`.
    table: Vec<Stored>,
    frontier_of_row: Vec<Frontier>,
    row_of_configs: HashMap<Vec<Config>, u32>,
    start_of_configs: HashMap<Vec<Config>, u32>,
    is_start: Vec<bool>,
    lexical_tried: Vec<bool>,
    local: Vec<Local>,
    loops: Vec<Option<Box<Leaves>>>,
    loop_bytes: Vec<u16>,
    misses: Vec<u8>,
    complete: Vec<bool>,
    /// The starting row, stepped as a token's first byte.
    start: u32,
    /// No new row past this many.
    max_rows: usize,
    /// Some entry is `OVERFLOW`.
    overflowed: bool,
    scratch: Frontier,
}

impl<'g> Dfa<'g> {
    /// The walk from a scan item in `state` with `context`, going on with `tables` and
    /// adding at most `max_rows` rows to them.
    fn new(
        g: &'g EarleyGrammar,
        state: u32,
        context: &[(u32, u32)],
        max_rows: usize,
        tables: Tables,
    ) -> Dfa<'g> {
        let mut tables = tables;
        if tables.table.capacity() == 0 {
            // Room for the rows kept between classifications at once: growing the table
            // row by row would copy it again each time its capacity doubles.
            tables.table.reserve(KEEP_ROWS * 256);
        }
        let mut walk = StaticWalk::with_stacks(g, tables.stacks);
        let start = walk.start_in(state, context);
        let mut dfa = Dfa {
            g,
            alphabet: g.alphabet(),
            walk,
            max_rows: tables.is_start.len() + max_rows,
            table: tables.table,
            frontier_of_row: tables.frontier_of_row,
            row_of_configs: tables.row_of_configs,
            start_of_configs: tables.start_of_configs,
            is_start: tables.is_start,
            lexical_tried: tables.lexical_tried,
            local: tables.local,
            loops: tables.loops,
            loop_bytes: tables.loop_bytes,
            misses: tables.misses,
            complete: tables.complete,
            start: 0,
            overflowed: false,
            scratch: Frontier::default(),
        };
        dfa.start = match dfa.start_of_configs.get(start.configs()) {
            Some(&row) => row,
            None => {
                let configs = start.configs().to_vec();
                let row = dfa.add_row(start, true);
                dfa.start_of_configs.insert(configs, row);
                row
            }
        };
        dfa
    }

    /// The tables, for the next classification; `None` when some entry is `OVERFLOW`
    /// (which depends on how many rows this classification could add).
    fn into_tables(self) -> Option<Tables> {
        (!self.overflowed).then(|| Tables {
            table: self.table,
            frontier_of_row: self.frontier_of_row,
            row_of_configs: self.row_of_configs,
            start_of_configs: self.start_of_configs,
            is_start: self.is_start,
            lexical_tried: self.lexical_tried,
            local: self.local,
            loops: self.loops,
            loop_bytes: self.loop_bytes,
            misses: self.misses,
            complete: self.complete,
            stacks: self.walk.into_stacks(),
        })
    }

    fn add_row(&mut self, frontier: Frontier, start: bool) -> u32 {
        let row = self.frontier_of_row.len() as u32;
        self.frontier_of_row.push(frontier);
        self.is_start.push(start);
        self.lexical_tried.push(false);
        self.local.push(Local::Untried);
        self.loops.push(None);
        self.loop_bytes.push(0);
        self.misses.push(0);
        self.complete.push(false);
        self.table.resize(self.table.len() + 256, UNKNOWN as Stored);
        row
    }

    /// The row of `configs` below the first byte, if there is room for it.
    fn row(&mut self, configs: &[Config]) -> Option<u32> {
        if let Some(&row) = self.row_of_configs.get(configs) {
            return Some(row);
        }
        if self.frontier_of_row.len() >= self.max_rows {
            self.overflowed = true;
            return None;
        }
        let row = self.add_row(Frontier::of(configs.to_vec()), false);
        self.row_of_configs.insert(configs.to_vec(), row);
        Some(row)
    }

    /// The entry of `row` for `byte`, computed on first use.
    fn step(&mut self, row: u32, byte: u8) -> u32 {
        let at = row as usize * 256 + byte as usize;
        if u32::from(self.table[at]) == UNKNOWN {
            self.fill_lexical_row(row);
        }
        if u32::from(self.table[at]) != UNKNOWN {
            return u32::from(self.table[at]);
        }
        if self.misses[row as usize] < LOCAL_AFTER {
            self.misses[row as usize] += 1;
        } else if let Some(entry) = self.step_local(row, byte) {
            return entry;
        }
        let entry = self.stepped(row, byte);
        // Every byte of the class steps alike (see `alphabet.rs`).
        let alphabet = self.alphabet;
        self.set_entries(row, alphabet.class(byte).iter().copied(), entry);
        entry
    }

    /// Sets the entries of `row` for `bytes` to `entry`, counting the bytes that newly step
    /// the row to itself ([`Dfa::self_loop`] reads the count).
    fn set_entries(&mut self, row: u32, bytes: impl Iterator<Item = u8>, entry: u32) {
        let base = row as usize * 256;
        for byte in bytes {
            let slot = &mut self.table[base + byte as usize];
            if u32::from(*slot) == UNKNOWN && entry == row {
                self.loop_bytes[row as usize] += 1;
            }
            *slot = entry as Stored;
        }
    }

    /// The row-local classes of `row` (see `local.rs`), computed on first use; `None` when
    /// they are not fewer than half the grammar's classes.
    fn local_classes(&mut self, row: u32) -> Option<&[[u64; 4]]> {
        if let Local::Untried = self.local[row as usize] {
            let classes = local::classes(
                self.g,
                &self.walk,
                self.frontier_of_row[row as usize].configs(),
                self.is_start[row as usize],
                self.alphabet.len() / 2,
            );
            self.local[row as usize] = match classes {
                Some(classes) => Local::Classes(classes),
                None => Local::None,
            };
        }
        match &self.local[row as usize] {
            Local::Classes(classes) => Some(classes),
            Local::Untried | Local::None => None,
        }
    }

    /// The entry of `row` for `byte` by one step for its whole row-local class, filling the
    /// class's entries; `None` when the row has no local classes.
    fn step_local(&mut self, row: u32, byte: u8) -> Option<u32> {
        let class = *self
            .local_classes(row)?
            .iter()
            .find(|class| class[byte as usize / 64] & (1 << (byte % 64)) != 0)?;
        let base = row as usize * 256;
        let known = bytes_of(&class)
            .map(|b| u32::from(self.table[base + b as usize]))
            .find(|&entry| entry != UNKNOWN);
        let entry = match known {
            Some(entry) => entry,
            None => self.stepped(row, byte),
        };
        self.set_entries(row, bytes_of(&class), entry);
        Some(entry)
    }

    /// One [`StaticWalk::step_into`] from `row` on `byte`: the entry it makes (a new row is
    /// added for new configurations when there is room).
    fn stepped(&mut self, row: u32, byte: u8) -> u32 {
        let first = self.is_start[row as usize];
        self.walk.step_into(
            &self.frontier_of_row[row as usize],
            byte,
            first,
            &mut self.scratch,
        );
        let left = if self.scratch.left() { LEFT } else { 0 };
        let entry = if self.scratch.is_dead() {
            DEAD | left
        } else {
            let configs = std::mem::take(&mut self.scratch);
            let entry = match self.row(configs.configs()) {
                Some(next) => next | left,
                None => OVERFLOW,
            };
            self.scratch = configs;
            entry
        };
        entry
    }

    /// The entry of `row` for `byte`, computed if it is not yet.
    fn entry(&mut self, row: u32, byte: u8) -> u32 {
        match u32::from(self.table[row as usize * 256 + byte as usize]) {
            UNKNOWN => self.step(row, byte),
            entry => entry,
        }
    }

    /// Computes the entries of `row` for the bytes of `bytes` that are not yet.
    fn fill_bytes(&mut self, row: u32, bytes: &[u64; 4]) {
        for byte in bytes_of(bytes) {
            self.entry(row, byte);
        }
    }

    /// When at least [`MIN_LOOP_CLASS`] bytes step `row` to itself without `LEFT` (its loop
    /// class), which bytes leave the loop; computed once per row, with every entry of the
    /// row. From a node the walk reached in such a row, each token below whose later bytes
    /// are all in the class is alive at its end (accepted), and the rest leave the class at
    /// some byte first, from this row with the `LEFT` bit it had at the node.
    ///
    /// Until [`MIN_LOOP_CLASS`] of the entries known so far step the row to itself, the row
    /// is not filled and the answer is `None`, asked again later: most rows met at a large
    /// subtree do not loop, and filling them would cost more than the walk saves. Entries
    /// are set once, so the count never shrinks and a filled row's class is at least as big.
    fn self_loop(&mut self, row: u32) -> Option<Leaves> {
        if u32::from(self.loop_bytes[row as usize]) < MIN_LOOP_CLASS {
            return None;
        }
        if self.loops[row as usize].is_none() {
            self.fill_row(row);
            self.fill_bytes(row, &[u64::MAX; 4]);
            let base = row as usize * 256;
            let leaves: Leaves =
                std::array::from_fn(|byte| u32::from(self.table[base + byte]) != row);
            self.loops[row as usize] = Some(Box::new(leaves));
        }
        self.loops[row as usize].as_deref().copied()
    }
}

/// The bytes of the set `bits` (bit `b % 64` of word `b / 64`), in increasing order.
fn bytes_of(bits: &[u64; 4]) -> impl Iterator<Item = u8> {
    ByteClass::from_words(*bits).iter()
}

impl Dfa<'_> {
    /// Computes every entry of `row` when its frontier is one configuration: at once when
    /// [`Dfa::fill_lexical_row`] can, else byte by byte (a state that also descends into
    /// rules, such as TagDispatch's free text). The bulk paths read whole rows; the walk
    /// would compute most of these entries anyway. Rows of several configurations (deep
    /// contexts) are left to the walk and to the chains ([`Dfa::fill_bytes`]), which step
    /// only the bytes they read: computing all 256 of their entries costs more than the bulk
    /// paths save.
    fn fill_row(&mut self, row: u32) {
        if self.complete[row as usize] {
            return;
        }
        self.fill_lexical_row(row);
        if self.frontier_of_row[row as usize].single().is_none() {
            return;
        }
        if let Some(classes) = self.local_classes(row) {
            let representatives: Vec<u8> = classes
                .iter()
                .map(|class| {
                    let word = class.iter().position(|&w| w != 0).expect("non-empty class");
                    (word * 64) as u8 + class[word].trailing_zeros() as u8
                })
                .collect();
            for byte in representatives {
                if u32::from(self.table[row as usize * 256 + byte as usize]) == UNKNOWN {
                    self.step_local(row, byte);
                }
            }
            self.complete[row as usize] = true;
            return;
        }
        for byte in 0..=255u8 {
            if u32::from(self.table[row as usize * 256 + byte as usize]) == UNKNOWN {
                self.step(row, byte);
            }
        }
        self.complete[row as usize] = true;
    }

    /// Fills the whole of `row` at once when its frontier is one configuration whose state's
    /// byte edges are all that a step uses, and do not overlap: the starting row; or a state
    /// with byte edges only that does not accept, or accepts with nothing on the stack (then
    /// completing it is an exit). [`StaticWalk::step_into`] then yields that edge's target
    /// with the same stack alone, and `left` iff the state accepts with the empty stack, the
    /// byte may follow its rule, and it is not a token's first byte. Leaves the row alone
    /// otherwise.
    fn fill_lexical_row(&mut self, row: u32) {
        if std::mem::replace(&mut self.lexical_tried[row as usize], true) {
            return;
        }
        let g = self.g;
        let Some(config) = self.frontier_of_row[row as usize].single() else {
            return;
        };
        let (state, stack) = (config.state(), config.stack());
        let info = g.states[state as usize];
        let first = self.is_start[row as usize];
        if !first && !(g.is_lexical(state) && (stack == 0 || !info.accepting)) {
            return;
        }
        let mut entries = [DEAD as Stored; 256];
        for edge in g.byte_edges(&info) {
            if entries[edge.lo as usize..=edge.hi as usize]
                .iter()
                .any(|&e| u32::from(e) != DEAD)
            {
                return;
            }
            let target = match self.row(&[Config::new(edge.target, stack)]) {
                Some(next) => next,
                None => OVERFLOW,
            };
            entries[edge.lo as usize..=edge.hi as usize].fill(target as Stored);
        }
        if !first && info.accepting {
            for byte in g.follow[info.rule as usize].iter() {
                if u32::from(entries[byte as usize]) != OVERFLOW {
                    entries[byte as usize] |= LEFT as Stored;
                }
            }
        }
        let base = row as usize * 256;
        self.table[base..base + 256].copy_from_slice(&entries);
        // Only an edge back to the state itself steps the row to itself.
        self.loop_bytes[row as usize] = g
            .byte_edges(&info)
            .iter()
            .filter(|edge| edge.target == state)
            .flat_map(|edge| &entries[edge.lo as usize..=edge.hi as usize])
            .filter(|&&entry| u32::from(entry) == row)
            .count() as u16;
        self.complete[row as usize] = true;
    }
}

/// Sorts every text token of `trie` from a scan item in `state` (see the module docs; the
/// promises are `sieve_backend`'s).
///
/// With a `context`, the state's rule returns to that state of its caller (with that count,
/// for a counted state) when complete (see `StaticWalk::start_in`).
pub(crate) fn classify(
    g: &EarleyGrammar,
    trie: &TokenTrie,
    state: u32,
    context: &[(u32, u32)],
) -> Classification {
    let tables = g.walk_tables.take();
    let (classification, tables) = classify_with(g, trie, state, context, MAX_ROWS, false, tables);
    if let Some(tables) = tables {
        g.walk_tables.keep(tables);
    }
    classification
}

/// [`classify`] from fresh tables, adding at most `max_rows` rows.
#[cfg(test)]
fn classify_with_max_rows(
    g: &EarleyGrammar,
    trie: &TokenTrie,
    state: u32,
    context: &[(u32, u32)],
    max_rows: usize,
) -> Classification {
    classify_with(g, trie, state, context, max_rows, false, Tables::default()).0
}

/// [`classify`] from fresh tables, taking every alive node whose row loops in bulk.
#[cfg(test)]
fn classify_looping_everywhere(
    g: &EarleyGrammar,
    trie: &TokenTrie,
    state: u32,
    context: &[(u32, u32)],
) -> Classification {
    classify_with(g, trie, state, context, MAX_ROWS, true, Tables::default()).0
}

/// [`classify`] going on with `tables`, taking in bulk the looping nodes that are
/// [`sieve_vocab::TrieNode::wide`], or all of them with `loop_at_every_node`; returns the
/// tables unless they hold an `OVERFLOW` entry.
fn classify_with(
    g: &EarleyGrammar,
    trie: &TokenTrie,
    state: u32,
    context: &[(u32, u32)],
    max_rows: usize,
    loop_at_every_node: bool,
    tables: Tables,
) -> (Classification, Option<Tables>) {
    let mut dfa = Dfa::new(g, state, context, max_rows, tables);
    let mut walker = Walker {
        trie,
        frontiers: vec![Frontier::default(); trie.max_token_len() + 1],
        // Nodes without a token set the spare bit, so the hot loop sets a bit at every live
        // node without a branch.
        accepted: TokenBits::new(trie.n_vocab()),
        uncertain: Vec::new(),
        fast: vec![0u32; trie.max_token_len() + 1],
        loop_at_every_node,
    };
    walker.fast[0] = dfa.start;
    let chain = dfa.class_chain();
    let text = chain.as_ref().and_then(|chain| {
        let rows = dfa.text_rows(chain).or_else(|| dfa.chain_text(chain))?;
        Some((trie.text_region(&rows.class), rows))
    });
    let bytes = || {
        let chain = chain.as_ref()?;
        Some((trie.class_region(&chain.class), chain))
    };
    if let Some((region, rows)) = text {
        walker.walk_text(&mut dfa, &region, &rows);
    } else if let Some((region, chain)) = bytes() {
        walker.walk_chain(&mut dfa, &region, chain);
    } else {
        walker.walk_first_bytes(&mut dfa);
    }
    // Text and chain walks visit the exits, then the deep subtrees and the odd first bytes'
    // subtrees, each in pre-order: their uncertain ranges are put in order once here.
    let mut uncertain = walker.uncertain;
    if !uncertain.is_sorted_by_key(|range| range.start) {
        uncertain = merge_ranges(uncertain);
    }
    let classification = Classification {
        accepted: walker.accepted.finish(),
        uncertain,
    };
    (classification, dfa.into_tables())
}

/// A class chain is used when its class has at least this many bytes: smaller ones leave most
/// first bytes dead, which the plain walk skips at once.
const MIN_CHAIN_CLASS: u32 = 32;

/// What the first bytes of a token do when they all come from one large byte class and each
/// step's row does not depend on which byte of the class it was: a string's characters, free
/// or bounded (`[^"]{0,12}` steps through a row per count). Tokens made only of class bytes
/// are then decided in bulk from the class's [`sieve_vocab::ClassRegion`], and only the
/// subtrees where a token leaves the class are walked, from the row its prefix reached.
struct Chain {
    class: [u64; 4],
    /// `rows[d]`: the walk's entry (a row, with `LEFT` when an exit was possible on the way)
    /// after `d` bytes of the class; `rows[0]` is the start.
    rows: Vec<u32>,
    end: ChainEnd,
}

/// The most first bytes a text classification walks apart from the text region. First bytes
/// on which the walk dies at once, without an exit, are not counted: their subtrees are
/// rejected without a walk (a JSON key that must differ from the listed names may not start
/// its divergent character with a multi-byte one in the name's own rule, and each of the 51
/// lead bytes is such a first byte).
const MAX_ODD_FIRST_BYTES: usize = 16;

/// No row (yet) for this decoder state.
const NO_ROW: u32 = u32::MAX;

/// The bytes the decoder reads in `state` with `ascii` as the ASCII class, in increasing
/// order, each with the decoder state after it: [`Utf8State::step`]'s `Some` cases, without
/// trying the bytes it rejects.
fn successors(state: Utf8State, ascii: &[u64; 4]) -> impl Iterator<Item = (u8, Utf8State)> + '_ {
    let (lo, hi) = match state {
        // ASCII bytes of the class, then the lead bytes.
        Utf8State::Boundary => (0x00, 0xf4),
        Utf8State::Need1 | Utf8State::Need2 | Utf8State::Need3 => (0x80, 0xbf),
        Utf8State::AfterE0 => (0xa0, 0xbf),
        Utf8State::AfterED => (0x80, 0x9f),
        Utf8State::AfterF0 => (0x90, 0xbf),
        Utf8State::AfterF4 => (0x80, 0x8f),
    };
    let ascii_bytes = (state == Utf8State::Boundary)
        .then(|| bytes_of(ascii).take_while(|&byte| byte < 0x80))
        .into_iter()
        .flatten();
    let rest = if state == Utf8State::Boundary {
        0xc2..=hi
    } else {
        lo..=hi
    };
    ascii_bytes
        .chain(rest)
        .filter_map(move |byte| Some((byte, state.step(byte, ascii)?)))
}

/// Records `entry` as the row of `state`; `None` when it already has another one. A state
/// that every first byte into it killed ([`DEAD`], see [`Dfa::first_rows`]) takes the row of a
/// character that reaches it otherwise.
fn set_row(rows: &mut [u32; 8], state: Utf8State, entry: u32) -> Option<()> {
    let slot = &mut rows[state as usize];
    if *slot == NO_ROW || *slot == DEAD {
        *slot = entry;
    }
    (*slot == entry).then_some(())
}

/// Rows that read UTF-8 text (see [`Dfa::text_rows`] and [`Dfa::text_chain`]).
struct TextRows {
    /// `rows[c][s]`: the row after `c` characters have started, in decoder state `s`
    /// (indexed by its `repr`; `rows[0]` has only the start, at the boundary). Counts past
    /// the last use the last rows when the chain loops. [`DEAD`] for a decoder state inside
    /// a first character that only dead first bytes enter: those bytes are odd first bytes,
    /// so no walk starts from it.
    rows: Vec<[u32; 8]>,
    end: ChainEnd,
    /// The ASCII bytes the loop row steps to itself on.
    class: [u64; 4],
    /// First bytes that the decoder accepts but that lead from the start elsewhere than
    /// from the loop row: their subtrees are walked, not taken from the region.
    odd_first_bytes: Vec<u8>,
}

/// How a [`Chain`] goes on after its last row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ChainEnd {
    /// The last row steps to itself on every class byte, without `LEFT`: every token made of
    /// class bytes stays alive.
    Loops,
    /// One more class byte kills the walk, and no exit was possible on the way: longer
    /// tokens made of class bytes are rejected, with their subtrees.
    Dies,
    /// Alive after [`CHAIN_DEPTH`] class bytes: deeper tokens are walked.
    Open,
}

impl Dfa<'_> {
    /// The class chain from the start, when the start is one configuration, its first bytes
    /// mostly lead to one row (those bytes, shrunk at each later step to the ones that still
    /// agree, make the class), and the chain loops, dies without an exit, or runs past
    /// [`CHAIN_DEPTH`] bytes while the class keeps [`MIN_CHAIN_CLASS`] bytes. Rows of one
    /// configuration are filled whole; rows of several (a counted rule's item, which may go
    /// on or end) only for the class's bytes, one step per byte class.
    fn class_chain(&mut self) -> Option<Chain> {
        self.frontier_of_row[self.start as usize].single()?;
        self.fill_row(self.start);
        let base = self.start as usize * 256;
        let (first, mut class) = self.most_common_entry(base, &[u64::MAX; 4], false)?;
        if first & LEFT != 0 {
            return None;
        }
        let mut rows = vec![self.start, first];
        let mut left = 0;
        loop {
            let depth = rows.len() - 1;
            if depth == CHAIN_DEPTH {
                return Some(Chain {
                    class,
                    rows,
                    end: ChainEnd::Open,
                });
            }
            let row = rows[depth] & ROW;
            self.fill_row(row);
            self.fill_bytes(row, &class);
            let (entry, agreeing) = self.most_common_entry(row as usize * 256, &class, true)?;
            class = agreeing;
            if entry & SPECIAL != 0 {
                // DEAD (UNKNOWN and OVERFLOW are never chosen).
                if (left | entry) & LEFT != 0 {
                    return None;
                }
                return Some(Chain {
                    class,
                    rows,
                    end: ChainEnd::Dies,
                });
            }
            if entry == row {
                return Some(Chain {
                    class,
                    rows,
                    end: ChainEnd::Loops,
                });
            }
            left |= entry & LEFT;
            rows.push((entry & ROW) | left);
        }
    }

    /// When `chain` loops from its first row on ASCII bytes only, and that row reads
    /// well-formed UTF-8 text the way the decoder does — each decoder state has one row, and
    /// every well-formed byte steps it to the row of the next state without `LEFT` (a JSON
    /// string's characters) — the row of each [`Utf8State`] and the loop's ASCII class. A
    /// token's first byte from the start may go elsewhere than from the loop row (the first
    /// character of a key that must differ from the listed names): those bytes are returned
    /// as odd first bytes, at most [`MAX_ODD_FIRST_BYTES`] of them, so the region stays the
    /// one of the loop's class, shared by every such state.
    fn text_rows(&mut self, chain: &Chain) -> Option<TextRows> {
        if chain.end != ChainEnd::Loops
            || chain.rows.len() != 2
            || chain.class[2] | chain.class[3] != 0
        {
            return None;
        }
        let boundary = chain.rows[1];
        self.fill_row(boundary);
        let mut class = [0u64; 4];
        let mut size = 0;
        for byte in 0..128 {
            if self.entry(boundary, byte as u8) == boundary {
                class[byte / 64] |= 1 << (byte % 64);
                size += 1;
            }
        }
        if size < MIN_CHAIN_CLASS {
            return None;
        }
        let mut rows = [u32::MAX; 8];
        rows[Utf8State::Boundary as usize] = boundary;
        let mut todo = vec![Utf8State::Boundary];
        while let Some(state) = todo.pop() {
            let row = rows[state as usize];
            self.fill_row(row);
            for (byte, next) in successors(state, &class) {
                let entry = self.entry(row, byte);
                if entry & (SPECIAL | LEFT) != 0 {
                    return None;
                }
                match rows[next as usize] {
                    u32::MAX => {
                        rows[next as usize] = entry;
                        todo.push(next);
                    }
                    known if known == entry => {}
                    _ => return None,
                }
            }
        }
        if rows.contains(&u32::MAX) {
            return None;
        }
        let (mut odd_first_bytes, mut walked) = (Vec::new(), 0);
        for (byte, next) in successors(Utf8State::Boundary, &class) {
            let entry = self.entry(self.start, byte);
            if entry != rows[next as usize] {
                odd_first_bytes.push(byte);
                walked += usize::from(entry != DEAD);
            }
        }
        let mut first = [NO_ROW; 8];
        first[Utf8State::Boundary as usize] = self.start;
        (walked <= MAX_ODD_FIRST_BYTES).then_some(TextRows {
            rows: vec![first, rows],
            end: ChainEnd::Loops,
            class,
            odd_first_bytes,
        })
    }

    /// The text rows of `chain` ([`Dfa::text_chain`]), read first with the class its last row
    /// loops on and odd first bytes, then, when that fails, with the chain's own class.
    ///
    /// A chain's class is what every step agrees on, so a start whose first byte has a
    /// different meaning for a few bytes — a partial trigger of free text (after `<`, `t`
    /// continues the trigger while the other characters return to plain text) — leaves those
    /// bytes out of the class, and every token holding one of them would leave the region.
    /// Read with the loop's class, those bytes are odd first bytes instead: only their
    /// subtrees are walked, and the region is the plain text's, shared by every such state.
    fn chain_text(&mut self, chain: &Chain) -> Option<TextRows> {
        if let Some(class) = self.loop_class(chain) {
            if let Some(text) = self.text_chain(class, MAX_ODD_FIRST_BYTES) {
                return Some(text);
            }
        }
        self.text_chain(chain.class, 0)
    }

    /// The ASCII bytes on which the last row of a looping `chain` steps to itself, when
    /// they are more than the chain's class and at least [`MIN_CHAIN_CLASS`].
    fn loop_class(&mut self, chain: &Chain) -> Option<[u64; 4]> {
        if chain.end != ChainEnd::Loops || chain.rows.len() < 3 {
            return None;
        }
        let row = chain.rows[chain.rows.len() - 1] & ROW;
        let mut class = [0u64; 4];
        let mut size = 0;
        for byte in 0..128u8 {
            if self.entry(row, byte) == row {
                class[byte as usize / 64] |= 1 << (byte % 64);
                size += 1;
            }
        }
        (size >= MIN_CHAIN_CLASS && class != chain.class).then_some(class)
    }

    /// When `class` is ASCII only and, from the start, every character the decoder reads (an
    /// ASCII byte of `class`, or a well-formed multi-byte sequence) steps the walk through
    /// rows that depend only on how many characters have started and on the decoder state,
    /// never with `LEFT` — a string with a bounded length — those rows, with how the chain
    /// ends: looping (a count's rows repeat), dying (every character start from some count
    /// is `DEAD`), or open past [`CHAIN_DEPTH`] characters. Up to `max_odd` first bytes may
    /// step from the start elsewhere than the others of their decoder state (or set `LEFT`),
    /// and any number may die there without an exit: they are returned as odd first bytes,
    /// whose subtrees are walked (at once, for those that die).
    fn text_chain(&mut self, class: [u64; 4], max_odd: usize) -> Option<TextRows> {
        if class[2] | class[3] != 0 {
            return None;
        }
        let mut first = [NO_ROW; 8];
        first[Utf8State::Boundary as usize] = self.start;
        let mut rows = vec![first];
        let mut odd_first_bytes = Vec::new();
        loop {
            let count = rows.len() - 1;
            if count == CHAIN_DEPTH {
                return self.text_rows_ending(rows, ChainEnd::Open, class, odd_first_bytes);
            }
            let from = rows[count][Utf8State::Boundary as usize];
            self.fill_row(from);
            let mut next = [NO_ROW; 8];
            let (mut dead, mut alive) = (false, false);
            if count == 0 {
                odd_first_bytes = self.first_rows(class, &mut next, max_odd)?;
                alive = next.iter().any(|&row| row & SPECIAL == 0);
            } else {
                for (byte, state) in successors(Utf8State::Boundary, &class) {
                    match self.entry(from, byte) {
                        DEAD => dead = true,
                        entry if entry & (SPECIAL | LEFT) != 0 => return None,
                        entry => {
                            alive = true;
                            set_row(&mut next, state, entry)?;
                        }
                    }
                }
            }
            match (dead, alive) {
                (true, false) => {
                    return self.text_rows_ending(rows, ChainEnd::Dies, class, odd_first_bytes)
                }
                (true, true) | (false, false) => return None,
                (false, true) => {}
            }
            // The character in progress: its continuation bytes stay in this count.
            let mut todo: Vec<Utf8State> = Utf8State::ALL[1..]
                .iter()
                .copied()
                .filter(|&state| next[state as usize] & SPECIAL == 0)
                .collect();
            while let Some(state) = todo.pop() {
                let row = next[state as usize];
                self.fill_row(row);
                for (byte, after) in successors(state, &class) {
                    let entry = self.entry(row, byte);
                    if entry & (SPECIAL | LEFT) != 0 {
                        return None;
                    }
                    let new = matches!(next[after as usize], NO_ROW | DEAD);
                    set_row(&mut next, after, entry)?;
                    if new && after != Utf8State::Boundary {
                        todo.push(after);
                    }
                }
            }
            if next.contains(&NO_ROW) {
                return None;
            }
            let repeats = next[Utf8State::Boundary as usize] == from;
            rows.push(next);
            if repeats {
                // The next count's rows are stepped from the same row: they repeat.
                return self.text_rows_ending(rows, ChainEnd::Loops, class, odd_first_bytes);
            }
        }
    }

    /// The rows after a first byte from the start, per decoder state: the entry most bytes of
    /// that state have, when it is a row without `LEFT`, or [`DEAD`] for a state inside a
    /// character when every byte into it dies without an exit; the bytes that step elsewhere
    /// are returned, sorted (`None` when more than `max_odd` of them do not just die).
    fn first_rows(
        &mut self,
        class: [u64; 4],
        next: &mut [u32; 8],
        max_odd: usize,
    ) -> Option<Vec<u8>> {
        let firsts: Vec<(u8, Utf8State, u32)> = successors(Utf8State::Boundary, &class)
            .map(|(byte, state)| (byte, state, self.entry(self.start, byte)))
            .collect::<Vec<_>>();
        for state in Utf8State::ALL {
            let mut entries: Vec<u32> = firsts
                .iter()
                .filter(|&&(_, s, entry)| s == state && entry & (SPECIAL | LEFT) == 0)
                .map(|&(_, _, entry)| entry)
                .collect();
            entries.sort_unstable();
            if let Some(run) = entries.chunk_by(|a, b| a == b).max_by_key(|run| run.len()) {
                next[state as usize] = run[0];
            } else if state != Utf8State::Boundary
                && firsts.iter().any(|&(_, s, _)| s == state)
                && firsts
                    .iter()
                    .all(|&(_, s, entry)| s != state || entry == DEAD)
            {
                next[state as usize] = DEAD;
            }
        }
        let odd: Vec<u8> = firsts
            .iter()
            .filter(|&&(_, state, entry)| next[state as usize] != entry || entry == DEAD)
            .map(|&(byte, _, _)| byte)
            .collect();
        let walked = firsts
            .iter()
            .filter(|&&(_, state, entry)| next[state as usize] != entry && entry != DEAD)
            .count();
        (walked <= max_odd).then_some(odd)
    }

    fn text_rows_ending(
        &self,
        rows: Vec<[u32; 8]>,
        end: ChainEnd,
        class: [u64; 4],
        odd_first_bytes: Vec<u8>,
    ) -> Option<TextRows> {
        // A chain of one count that loops is the plain loop, which `text_rows` handles.
        (rows.len() > 2 || end != ChainEnd::Loops).then_some(TextRows {
            rows,
            end,
            class,
            odd_first_bytes,
        })
    }

    /// Among the bytes of `class`, the entry of the row at `base` that most of them have
    /// (a row, or `DEAD` when `dead_too`), and the bytes that have it; `None` when they are
    /// fewer than [`MIN_CHAIN_CLASS`].
    fn most_common_entry(
        &self,
        base: usize,
        class: &[u64; 4],
        dead_too: bool,
    ) -> Option<(u32, [u64; 4])> {
        let in_class = |byte: usize| class[byte / 64] & (1 << (byte % 64)) != 0;
        // (entry, bytes with it): a row's bytes go to a few entries, so a linear search
        // counts them without sorting the row.
        let mut counts: Vec<(u32, u32)> = Vec::with_capacity(16);
        for byte in (0..256).filter(|&byte| in_class(byte)) {
            let e = u32::from(self.table[base + byte]);
            if e & SPECIAL != 0 && !(dead_too && e & !LEFT == DEAD) {
                continue;
            }
            match counts.iter_mut().find(|(entry, _)| *entry == e) {
                Some((_, count)) => *count += 1,
                None => counts.push((e, 1)),
            }
        }
        // The most bytes; among as many, the greatest entry.
        let (entry, _) = counts
            .into_iter()
            .max_by_key(|&(entry, count)| (count, entry))?;
        let mut agreeing = [0u64; 4];
        let mut size = 0;
        for byte in (0..256).filter(|&byte| in_class(byte)) {
            if u32::from(self.table[base + byte]) == entry {
                agreeing[byte / 64] |= 1 << (byte % 64);
                size += 1;
            }
        }
        (size >= MIN_CHAIN_CLASS).then_some((entry, agreeing))
    }
}

/// The output of one classification, and the frontiers of the per-node fallback.
struct Walker<'a> {
    trie: &'a TokenTrie,
    /// frontiers[d]: the frontier after the first d bytes, inside a fallback subtree.
    frontiers: Vec<Frontier>,
    accepted: TokenBits,
    uncertain: Vec<std::ops::Range<u32>>,
    /// fast[d]: the row (and `LEFT` bit) after the first d bytes of the current node's
    /// prefix.
    fast: Vec<u32>,
    /// Every alive node whose row loops is taken in bulk ([`Walker::walk_loop`]), not only
    /// the [`sieve_vocab::TrieNode::wide`] ones (for tests).
    loop_at_every_node: bool,
}

impl Walker<'_> {
    /// Classifies from a row that reads UTF-8 text ([`Dfa::text_rows`]): the tokens of the
    /// text region are accepted in bulk, and each subtree where a token breaks the text is
    /// walked from the row of the decoder state before the breaking byte. The subtrees of
    /// odd first bytes are taken out of the bulk and walked whole from the start; when every
    /// lead byte of a multi-byte character dies from the start, their subtrees leave the bulk
    /// at once through the trie's ASCII-first tokens.
    fn walk_text(&mut self, dfa: &mut Dfa<'_>, region: &TextRegion, text: &TextRows) {
        let last = text.rows.len() - 1;
        let bulk = match text.end {
            ChainEnd::Loops => &region.inside,
            ChainEnd::Dies | ChainEnd::Open => self.trie.text_upto(region, last),
        };
        let lead_bytes_die = (0xc2..=0xf4u8).all(|byte| {
            text.odd_first_bytes.binary_search(&byte).is_ok() && dfa.entry(dfa.start, byte) == DEAD
        });
        if lead_bytes_die {
            let ascii_first = self.trie.ascii_first();
            let words = self.accepted.bulk_words();
            for ((word, inside), ascii) in words.iter_mut().zip(bulk).zip(ascii_first) {
                *word |= inside & ascii;
            }
        } else {
            for (word, inside) in self.accepted.bulk_words().iter_mut().zip(bulk) {
                *word |= inside;
            }
        }
        let nodes = self.trie.nodes();
        // The depth-1 nodes of the odd first bytes, as subtree ranges in pre-order.
        let odd: Vec<(usize, usize)> = self
            .trie
            .first_bytes()
            .iter()
            .filter(|first| text.odd_first_bytes.contains(&first.byte))
            .map(|first| (first.node as usize, first.end as usize))
            .collect();
        for &(from, _) in &odd {
            if lead_bytes_die && nodes[from].byte >= 0x80 {
                continue;
            }
            for pos in nodes[from].pos as usize..self.trie.node_pos_end(from) {
                let id = self.trie.token(pos).index();
                self.accepted.bulk_words()[id / 32] &= !(1 << (id % 32));
            }
        }
        let mut odd_at = odd.iter().peekable();
        for exit in &region.exits {
            let at = exit.node as usize;
            while odd_at.next_if(|&&(_, to)| to <= at).is_some() {}
            if odd_at.peek().is_some_and(|&&(from, _)| from <= at) {
                continue;
            }
            let chars = exit.chars as usize;
            if chars > last && text.end != ChainEnd::Loops {
                // Dies: the prefix died. Open: inside a deep subtree.
                continue;
            }
            let entry = text.rows[chars.min(last)][exit.state as usize];
            debug_assert!(
                entry & SPECIAL == 0,
                "only odd first bytes enter a dead state"
            );
            self.walk_exit(dfa, at, entry);
        }
        if text.end == ChainEnd::Open {
            let boundary = text.rows[last][Utf8State::Boundary as usize];
            let mut odd_at = odd.iter().peekable();
            for &deep in self.trie.text_deep(region) {
                let at = deep as usize;
                while odd_at.next_if(|&&(_, to)| to <= at).is_some() {}
                if odd_at.peek().is_some_and(|&&(from, _)| from <= at) {
                    continue;
                }
                let node = nodes[at];
                self.fast[node.depth as usize - 1] = boundary;
                self.walk_nodes(dfa, at, node.end as usize);
            }
        }
        for &(from, to) in &odd {
            self.fast[0] = dfa.start;
            self.walk_nodes(dfa, from, to);
        }
    }

    /// Classifies through a class chain: the tokens made of class bytes that stay alive are
    /// accepted in bulk; each subtree where a token leaves the class is walked from the row
    /// its class prefix reached, unless that prefix already died (rejected: a chain that
    /// dies has no exit on the way); past [`CHAIN_DEPTH`] class bytes the deep subtrees are
    /// walked whole.
    fn walk_chain(&mut self, dfa: &mut Dfa<'_>, region: &ClassRegion, chain: &Chain) {
        let last = chain.rows.len() - 1;
        let alive_up_to = match chain.end {
            ChainEnd::Loops => {
                for (word, inside) in self.accepted.bulk_words().iter_mut().zip(&region.inside) {
                    *word |= inside;
                }
                usize::MAX
            }
            ChainEnd::Dies | ChainEnd::Open => {
                let upto = self.trie.region_upto(region, last);
                for (word, inside) in self.accepted.bulk_words().iter_mut().zip(upto) {
                    *word |= inside;
                }
                last
            }
        };
        for &exit in &region.exits {
            let node = self.trie.nodes()[exit as usize];
            let prefix = node.depth as usize - 1;
            if prefix > alive_up_to {
                // Dies: the prefix died in the class. Open: inside a deep subtree.
                continue;
            }
            self.walk_exit(dfa, exit as usize, chain.rows[prefix.min(last)]);
        }
        if chain.end == ChainEnd::Open {
            for &deep in self.trie.region_deep(region) {
                let node = self.trie.nodes()[deep as usize];
                self.fast[node.depth as usize - 1] = chain.rows[last];
                self.walk_nodes(dfa, deep as usize, node.end as usize);
            }
        }
    }

    /// Walks the nodes `from..to` (a node and its subtree, or the whole trie), with
    /// `fast[depth - 1]` set for the first of them.
    fn walk_nodes(&mut self, dfa: &mut Dfa<'_>, from: usize, to: usize) {
        let nodes = self.trie.nodes();
        let spare_bit = self.accepted.spare_id();
        let mut n = from;
        while n < to {
            if !self.loop_at_every_node {
                n = self.walk_known(dfa, n, to, spare_bit);
                if n == to {
                    break;
                }
            }
            let node = nodes[n];
            let depth = node.depth as usize;
            let before = self.fast[depth - 1];
            let row = before & ROW;
            let mut entry = u32::from(dfa.table[row as usize * 256 + node.byte as usize]);
            if entry == UNKNOWN {
                entry = dfa.step(row, node.byte);
            }
            if entry & SPECIAL == 0 {
                let entry = entry | (before & LEFT);
                if node.wide || self.loop_at_every_node {
                    if let Some(leaves) = dfa.self_loop(entry & ROW) {
                        self.walk_loop(dfa, n, entry, &leaves);
                        n = node.end as usize;
                        continue;
                    }
                }
                self.fast[depth] = entry;
                if node.has_token() {
                    self.accept(n);
                }
                n += 1;
            } else if entry == OVERFLOW {
                let mut start = dfa.frontier_of_row[row as usize].clone();
                start.set_left(before & LEFT != 0);
                let first = dfa.is_start[row as usize];
                n = self.general_subtree(&mut dfa.walk, n, &start, first);
            } else {
                if (before | entry) & LEFT != 0 {
                    self.uncertain_subtree(n);
                }
                n = node.end as usize;
            }
        }
    }

    /// The hot part of [`Walker::walk_nodes`]: from node `n`, while the entry of each node is
    /// a known row (and the node has at most one token, and is not a wide node whose row
    /// may loop: steps along and accepts) or `DEAD` with no exit on the way (skips the
    /// subtree). Returns the first node it cannot take (or `to`). The table and the walker's
    /// vectors are borrowed once here, not reloaded at every node as across the calls of
    /// the general loop.
    fn walk_known(&mut self, dfa: &Dfa<'_>, mut n: usize, to: usize, spare_bit: usize) -> usize {
        let (table, loop_bytes) = (&dfa.table[..], &dfa.loop_bytes[..]);
        let nodes = self.trie.nodes();
        let fast = &mut self.fast[..];
        let accepted = &mut self.accepted;
        while n < to {
            let node = nodes[n];
            let depth = node.depth as usize;
            let before = fast[depth - 1];
            let entry = u32::from(table[(before & ROW) as usize * 256 + node.byte as usize]);
            if entry & SPECIAL == 0
                && !node.shared
                && !(node.wide && u32::from(loop_bytes[(entry & ROW) as usize]) >= MIN_LOOP_CLASS)
            {
                fast[depth] = entry | (before & LEFT);
                accepted.insert((node.token as usize).min(spare_bit));
                n += 1;
            } else if entry == DEAD && before & LEFT == 0 {
                // Rejected with no exit on the way: the whole subtree.
                n = node.end as usize;
            } else {
                return n;
            }
        }
        n
    }

    /// Walks node `n`'s subtree from `entry` (the row the walk reached at `n`, with its
    /// `LEFT` bit), a row that steps to itself without `LEFT` on every byte `leaves` does not
    /// mark (its loop class): the tokens below `n` whose later bytes are all in the class
    /// stay in the row to their end and are accepted as runs of positions between the exits
    /// ([`TokenTrie::loop_exits`]); the subtrees where a token first leaves the class are
    /// walked from the row, as the node walk would reach them.
    fn walk_loop(&mut self, dfa: &mut Dfa<'_>, n: usize, entry: u32, leaves: &Leaves) {
        let trie = self.trie;
        let mut inside_from = trie.nodes()[n].pos as usize;
        for exit in trie.loop_exits(n, leaves) {
            let node = trie.nodes()[exit];
            self.accept_positions(inside_from..node.pos as usize);
            inside_from = trie.node_pos_end(exit);
            self.walk_exit(dfa, exit, entry);
        }
        self.accept_positions(inside_from..trie.node_pos_end(n));
    }

    /// Walks the whole trie from the start: the subtrees of the first bytes the start does
    /// not reject at once, found from the trie's [`TokenTrie::first_bytes`] (the first
    /// bytes of most states die, and each depth-1 node sits a page or more from the next).
    fn walk_first_bytes(&mut self, dfa: &mut Dfa<'_>) {
        self.fast[0] = dfa.start;
        for first in self.trie.first_bytes() {
            if dfa.entry(dfa.start, first.byte) != DEAD {
                self.walk_nodes(dfa, first.node as usize, first.end as usize);
            }
        }
    }

    /// Walks node `at` and its subtree from `before` (the entry after its parent's prefix,
    /// with its `LEFT` bit): where a region or a loop is left. Most such nodes settle at
    /// their own byte — dead with no exit on the way (the subtree is rejected) or a leaf
    /// that stays alive (its tokens are accepted) — and are decided here without entering
    /// the node walk.
    fn walk_exit(&mut self, dfa: &mut Dfa<'_>, at: usize, before: u32) {
        let node = self.trie.nodes()[at];
        let entry = u32::from(dfa.table[(before & ROW) as usize * 256 + node.byte as usize]);
        if entry == DEAD && before & LEFT == 0 {
            return;
        }
        if entry & SPECIAL == 0 && node.end as usize == at + 1 {
            self.accept(at);
            return;
        }
        self.fast[node.depth as usize - 1] = before;
        self.walk_nodes(dfa, at, node.end as usize);
    }

    /// Sets the bits of the tokens at trie positions `positions`. A long run goes in
    /// through the whole mask ([`TokenBits::bulk_words`]): a set that takes one is dense,
    /// and marking each word touched would cost as much as setting the bits.
    fn accept_positions(&mut self, positions: std::ops::Range<usize>) {
        let ids = &self.trie.tokens()[positions];
        if ids.len() < BULK_RUN {
            for id in ids {
                self.accepted.insert(id.index());
            }
            return;
        }
        let words = self.accepted.bulk_words();
        for id in ids {
            let id = id.index();
            words[id / 32] |= 1 << (id % 32);
        }
    }

    /// Sets the bits of the tokens whose bytes are node `n`'s prefix.
    fn accept(&mut self, n: usize) {
        for pos in self.trie.tokens_at_node(n) {
            self.accepted.insert(self.trie.token(pos).index());
        }
    }

    /// Records the positions under node `n` as uncertain.
    fn uncertain_subtree(&mut self, n: usize) {
        let start = self.trie.nodes()[n].pos;
        let end = self.trie.node_pos_end(n) as u32;
        push_range(&mut self.uncertain, start..end);
    }

    /// Walks node `n` and its subtree with a frontier per node, `from` being the frontier
    /// before node `n`'s byte (`first`: that byte is a token's first). Returns the node after
    /// the subtree.
    fn general_subtree(
        &mut self,
        walk: &mut StaticWalk<'_>,
        n: usize,
        from: &Frontier,
        first: bool,
    ) -> usize {
        let nodes = self.trie.nodes();
        let node = nodes[n];
        let end = node.end as usize;
        walk.step_into(
            from,
            node.byte,
            first,
            &mut self.frontiers[node.depth as usize],
        );
        if !self.alive_or_skipped(n) {
            return end;
        }
        let mut m = n + 1;
        while m < end {
            let inner = nodes[m];
            let d = inner.depth as usize;
            let (done, rest) = self.frontiers.split_at_mut(d);
            // Inside the subtree d - 1 >= 1: never a first byte.
            walk.step_into(&done[d - 1], inner.byte, false, &mut rest[0]);
            if self.alive_or_skipped(m) {
                m += 1;
            } else {
                m = inner.end as usize;
            }
        }
        end
    }

    /// After stepping node `n`'s byte into `frontiers[depth]`: accepts its tokens and returns
    /// true when alive; when dead, records its positions as uncertain if an exit was possible
    /// and returns false.
    fn alive_or_skipped(&mut self, n: usize) -> bool {
        let node = self.trie.nodes()[n];
        let frontier = &self.frontiers[node.depth as usize];
        if frontier.is_dead() {
            if frontier.left() {
                self.uncertain_subtree(n);
            }
            return false;
        }
        if node.has_token() {
            self.accept(n);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use sieve_backend::TokenSet;

    use sieve_vocab::Vocabulary;

    use super::*;

    /// The classification by [`StaticWalk`] alone, token by token: the definition the fast
    /// walk must reproduce.
    fn reference(
        g: &EarleyGrammar,
        trie: &TokenTrie,
        state: u32,
        context: &[(u32, u32)],
    ) -> Classification {
        let mut walk = StaticWalk::new(g);
        let start = walk.start_in(state, context);
        let mut accepted = vec![0u32; trie.n_vocab().div_ceil(32)];
        let mut uncertain = Vec::new();
        let mut i = 0;
        'tokens: while i < trie.len() {
            let bytes = trie.bytes_at(i);
            let mut frontier = start.clone();
            for (depth, &byte) in bytes.iter().enumerate() {
                let mut next = Frontier::default();
                walk.step_into(&frontier, byte, depth == 0, &mut next);
                if next.is_dead() {
                    let end = trie.skip_to(i + 1, depth + 1);
                    if next.left() {
                        push_range(&mut uncertain, i as u32..end as u32);
                    }
                    i = end;
                    continue 'tokens;
                }
                frontier = next;
            }
            let id = trie.token(i).index();
            accepted[id / 32] |= 1 << (id % 32);
            i += 1;
        }
        Classification {
            accepted: TokenSet::from_bits(accepted),
            uncertain,
        }
    }

    fn engine(grammar: &sieve_ir::Grammar) -> Option<Arc<EarleyGrammar>> {
        let normalized =
            sieve_normalize::normalize(grammar, &sieve_normalize::Config::default()).ok()?;
        let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
            .build(&normalized)
            .ok()?;
        Some(Arc::new(EarleyGrammar::new(
            &fsms,
            false,
            crate::Config::default(),
        )))
    }

    /// For each scannable state of `g`, the tables its classification without a context
    /// builds from empty ones.
    fn tables_of_each_state<'a>(
        g: &'a EarleyGrammar,
        trie: &'a TokenTrie,
    ) -> impl Iterator<Item = (u32, Tables)> + 'a {
        (0..g.state_count() as u32)
            .filter(|&state| g.states[state as usize].class != crate::grammar::NO_CLASS)
            .map(|state| {
                let (_, tables) =
                    classify_with(g, trie, state, &[], MAX_ROWS, false, Tables::default());
                (state, tables.expect("no overflow"))
            })
    }

    /// Per rule, the states its callers return to (the targets of edges naming it).
    fn return_states(g: &EarleyGrammar) -> Vec<Vec<u32>> {
        let mut returns = vec![Vec::new(); g.start.len()];
        for info in &g.states {
            for edge in g.rule_edges(info) {
                returns[edge.rule as usize].push(edge.target);
            }
        }
        for r in &mut returns {
            r.sort_unstable();
            r.dedup();
        }
        returns
    }

    /// Checks the fast walk against [`reference`] on every scannable state of `g`, with no
    /// context, each caller's return, and each with its own caller's returns; returns how many
    /// (state, context) pairs it checked.
    fn assert_fast_equals_reference(g: &EarleyGrammar, trie: &TokenTrie, label: &str) -> usize {
        let returns = return_states(g);
        let mut checked = 0;
        for state in 0..g.state_count() as u32 {
            if g.states[state as usize].class == crate::grammar::NO_CLASS {
                continue;
            }
            let rule = g.states[state as usize].rule as usize;
            let frame = |t: u32| {
                let count = if g.states[t as usize].counted == crate::grammar::NOT_COUNTED {
                    crate::grammar::NOT_COUNTED
                } else {
                    1
                };
                (t, count)
            };
            let mut contexts: Vec<Vec<(u32, u32)>> = vec![Vec::new()];
            for &t in &returns[rule] {
                contexts.push(vec![frame(t)]);
                let outer = g.states[t as usize].rule as usize;
                for &u in returns[outer].iter().take(3) {
                    contexts.push(vec![frame(t), frame(u)]);
                }
            }
            for context in &contexts {
                let context = &context[..];
                let fast = classify(g, trie, state, context);
                let slow = reference(g, trie, state, context);
                let label = format!("{label}: state {state} context {context:?}");
                assert_eq!(fast, slow, "{label}");
                // Past the row cap the walk falls back to per-node frontiers.
                let capped = classify_with_max_rows(g, trie, state, context, 3);
                assert_eq!(capped, slow, "{label}, 3 rows");
                let looping = classify_looping_everywhere(g, trie, state, context);
                assert_eq!(looping, slow, "{label}, every loop in bulk");
                checked += 1;
            }
        }
        checked
    }

    #[test]
    fn fast_walk_equals_the_static_walk_on_every_state_of_every_shipped_grammar() {
        let trie = TokenTrie::new(Vocabulary::embedded_default());
        // A few grammars (C, the reasoning regex) take most of the time: on their own threads.
        let checked = sieve_testkit::sum_in_parallel(&sieve_testkit::grammar_files(), |path| {
            match engine(&sieve_testkit::compile_file(path)) {
                Some(g) => assert_fast_equals_reference(&g, &trie, &path.display().to_string()),
                None => 0,
            }
        });
        assert!(checked > 500, "only {checked} states checked");
    }

    /// Bounded runs of a large class step through a row per count: class chains that die
    /// (with and without an exit on the way, which must not be decided in bulk), loop, run
    /// past `CHAIN_DEPTH`, and shrink their class on the way.
    #[test]
    fn class_chains_equal_the_static_walk() {
        let trie = TokenTrie::new(Vocabulary::embedded_default());
        let grammars = [
            r#"root ::= "\"" [ !#-\[\]-~]{0,12} "\"""#,
            r#"root ::= [a-z0-9 ]{3,40} "." "#,
            "root ::= s \"!\" | s s\ns ::= [ -~]{2,5}",
            "root ::= [ -~]{4} [ -~]*",
            r#"root ::= [ -~]{20,30} "x""#,
            "root ::= [ -~]{3} [a-z]{2,6} [0-9]",
            r#"root ::= "k" ([ -~] | "\\u" [0-9a-f]{4}){0,9} "\"""#,
        ];
        let mut checked = 0;
        let mut ends = Vec::new();
        for text in grammars {
            let grammar = sieve_gbnf::compile(text, &Default::default())
                .unwrap_or_else(|e| panic!("{text}: {e:?}"));
            let g = engine(&grammar).expect("compiles");
            checked += assert_fast_equals_reference(&g, &trie, text);
            for state in 0..g.state_count() as u32 {
                if g.states[state as usize].class != crate::grammar::NO_CLASS {
                    let mut dfa = Dfa::new(&g, state, &[], MAX_ROWS, Tables::default());
                    ends.extend(dfa.class_chain().map(|chain| chain.end));
                }
            }
        }
        assert!(checked > 50, "only {checked} states checked");
        for end in [ChainEnd::Loops, ChainEnd::Dies, ChainEnd::Open] {
            assert!(ends.contains(&end), "no chain ends {end:?}: {ends:?}");
        }
    }

    /// Loops that start below a token's first byte — an identifier after a keyword and a
    /// space, a string's characters after a quote, digits after a sign — are taken in bulk
    /// at the wide nodes where the walk reaches them, and the classification equals the
    /// static walk's.
    #[test]
    fn loops_below_the_first_byte_equal_the_static_walk() {
        let trie = TokenTrie::new(Vocabulary::embedded_default());
        let grammars = [
            r#"root ::= ("int" | "char") " " [a-zA-Z_] [a-zA-Z0-9_]* (";" | " = " [0-9]+ ";")"#,
            r#"root ::= "{" ws "\"" [^"\\]* "\"" ws "}"
ws ::= [ \t\n]*"#,
            r#"root ::= ("-" | "+")? [0-9] [0-9]* ("." [0-9]+)? | "x" [a-z ]* "!""#,
        ];
        let mut looped = 0;
        for text in grammars {
            let grammar = sieve_gbnf::compile(text, &Default::default())
                .unwrap_or_else(|e| panic!("{text}: {e:?}"));
            let g = engine(&grammar).expect("compiles");
            assert_fast_equals_reference(&g, &trie, text);
            for (_, tables) in tables_of_each_state(&g, &trie) {
                looped += tables.loops.iter().filter(|l| l.is_some()).count();
            }
        }
        assert!(looped > 3, "only {looped} rows taken in bulk");
    }

    /// Free text up to one of several stop phrases — phrases sharing a prefix, one phrase a
    /// prefix of another, a phrase inside a longer one — has a state per partial phrase whose
    /// rows use row-local byte classes and whose text regions have odd first bytes: on each,
    /// the fast walk equals the static walk. Free text that a rule may end anywhere (`item
    /// item`) makes the odd subtrees' tokens uncertain: their ranges must still come in
    /// order (they were appended after the exits' until the walk merged them).
    #[test]
    fn free_text_with_partial_stop_phrases_equals_the_static_walk() {
        let trie = TokenTrie::new(Vocabulary::embedded_default());
        let grammars = [
            r#"root ::= text_until("<tool>", "<tag>") [a-z]* "!""#,
            r#"root ::= text_until("<a", "<ab>", "<abc") "x""#,
            r#"root ::= "[" text_until("]]", "]>") | "(" text_until("<|", "<|end|>") "."  "#,
            r#"root ::= (text_until("\n\n") | text_until("</think>")) "ok""#,
            r#"root ::= text_until("sta", "ing.") "!""#,
            r#"root ::= item item "!"
item ::= text_until("sta") | "tes" [a-z]*"#,
        ];
        let mut checked = 0;
        for text in grammars {
            let grammar = sieve_gbnf::compile(text, &Default::default())
                .unwrap_or_else(|e| panic!("{text}: {e:?}"));
            let g = engine(&grammar).expect("compiles");
            checked += assert_fast_equals_reference(&g, &trie, text);
        }
        assert!(checked > 40, "only {checked} states checked");
    }

    /// Free text's right-linear rules call one another in tail position at every byte; the
    /// walk takes no frame for those calls, so the rows of a classification from any of its
    /// states are configurations on the empty stack, at most two per grammar state (a
    /// starting row and one below a first byte), however long the tokens (with a frame per
    /// byte, each depth down to `MAX_STACK` had rows of its own; the test fails then).
    #[test]
    fn free_text_tail_calls_take_no_frame() {
        let trie = TokenTrie::new(Vocabulary::embedded_default());
        let text = r#"root ::= text_until("<tool>", "<tag>") [a-z]* "!""#;
        let grammar = sieve_gbnf::compile(text, &Default::default()).expect("compiles");
        let g = engine(&grammar).expect("compiles");
        let mut classified = 0;
        for (state, tables) in tables_of_each_state(&g, &trie) {
            let deepest = tables
                .frontier_of_row
                .iter()
                .flat_map(|frontier| frontier.configs())
                .map(|config| config.stack())
                .max();
            assert_eq!(deepest, Some(0), "state {state}: a row holds a frame");
            assert!(
                tables.frontier_of_row.len() <= 2 * g.state_count(),
                "state {state}"
            );
            classified += 1;
        }
        assert!(classified > 10, "only {classified} states classified");
    }

    /// A JSON string's characters (UTF-8 validated, with escapes), free or with a bounded
    /// length, are read as text, and the classification through the text region equals the
    /// static walk's (GPT-2's vocabulary has tokens that end inside a character and tokens
    /// that break one).
    #[test]
    fn json_strings_are_classified_as_text() {
        let trie = TokenTrie::new(Vocabulary::embedded_default());
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "code": {"type": "string", "maxLength": 5},
                "comment": {"type": "string", "maxLength": 40},
                "word": {"type": "string", "minLength": 3},
                "other": {"type": "string", "pattern": "^[^a]"}
            },
            "required": ["name"]
        });
        let grammar = sieve_jsonschema::compile(&schema, &Default::default()).expect("compiles");
        let g = engine(&grammar.grammar).expect("builds");
        // A string whose first character may not be `a`, then anything: odd first bytes.
        let (mut text_states, mut odd_states) = (0, 0);
        // Bounded strings count characters: chains that die, run open, or loop after the
        // minimum length.
        let mut chain_ends = Vec::new();
        for state in 0..g.state_count() as u32 {
            if g.states[state as usize].class != crate::grammar::NO_CLASS {
                let mut dfa = Dfa::new(&g, state, &[], MAX_ROWS, Tables::default());
                if let Some(chain) = dfa.class_chain() {
                    if let Some(text) = dfa.text_rows(&chain) {
                        text_states += 1;
                        odd_states += usize::from(!text.odd_first_bytes.is_empty());
                    } else if let Some(text) = dfa.chain_text(&chain) {
                        chain_ends.push(text.end);
                    }
                }
            }
        }
        assert!(text_states > 0, "no state reads text");
        assert!(odd_states > 0, "no text state has odd first bytes");
        for end in [ChainEnd::Loops, ChainEnd::Dies, ChainEnd::Open] {
            assert!(
                chain_ends.contains(&end),
                "no text chain ends {end:?}: {chain_ends:?}"
            );
        }
        assert!(assert_fast_equals_reference(&g, &trie, "json strings") > 10);
    }

    /// An object that allows keys other than its listed names: inside a listed name's prefix,
    /// a key goes on with the name or diverges into any other key, and a divergent
    /// multi-byte character starts in a rule of its own, so from the prefix's state every
    /// lead byte dies. Each such state excludes its own next letter from the class, which
    /// made a class region per state; they read the key text instead, with their lead bytes
    /// and next letter as odd first bytes (one region for all of them), and their
    /// classification equals the static walk's.
    #[test]
    fn key_prefixes_that_may_diverge_read_text() {
        let trie = TokenTrie::new(Vocabulary::embedded_default());
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "alpha": {"type": "integer"},
                "betamax": {"type": "string"},
                "gamma_ray": {"type": "boolean"}
            }
        });
        let grammar = sieve_jsonschema::compile(&schema, &Default::default()).expect("compiles");
        let g = engine(&grammar.grammar).expect("builds");
        let mut diverging = 0;
        for state in 0..g.state_count() as u32 {
            if g.states[state as usize].class == crate::grammar::NO_CLASS {
                continue;
            }
            let mut dfa = Dfa::new(&g, state, &[], MAX_ROWS, Tables::default());
            // Chains of ASCII key characters (not the continuation bytes inside a character).
            let Some(chain) = dfa.class_chain().filter(|c| c.class[2] | c.class[3] == 0) else {
                continue;
            };
            let text = dfa.text_rows(&chain).or_else(|| dfa.chain_text(&chain));
            let text = text.unwrap_or_else(|| panic!("state {state}: a class chain, no text"));
            let lead_bytes_die = (0xc2..=0xf4u8).all(|byte| text.odd_first_bytes.contains(&byte));
            diverging += usize::from(lead_bytes_die);
        }
        assert!(diverging >= 10, "only {diverging} diverging key prefixes");
        assert!(assert_fast_equals_reference(&g, &trie, "diverging keys") > 20);
    }

    /// A long bounded string is a counted repetition of characters: its character state is
    /// classified per count (the token cache's contexted keys). Rows after the first byte
    /// then hold several configurations (the character goes on, or the string ends); the
    /// class chain and the text chain are still found through them, and the classification
    /// equals the static walk's at every count, whichever counts came before (the rows are
    /// kept between classifications).
    /// The embedded vocabulary's trie and the engine of an object with one string of at most
    /// 60 characters: past the repetition threshold, so its characters are a counted rule.
    fn counted_string() -> (TokenTrie, Arc<EarleyGrammar>) {
        let trie = TokenTrie::new(Vocabulary::embedded_default());
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"comment": {"type": "string", "maxLength": 60}},
            "required": ["comment"]
        });
        let grammar = sieve_jsonschema::compile(&schema, &Default::default()).expect("compiles");
        (trie, engine(&grammar.grammar).expect("builds"))
    }

    /// Each state of a counted rule, with the start state of the rule it counts.
    fn counted_states(g: &EarleyGrammar) -> Vec<(u32, u32)> {
        (0..g.state_count() as u32)
            .filter_map(|state| {
                let counted = g.states[state as usize].counted;
                (counted != crate::grammar::NOT_COUNTED)
                    .then(|| (state, g.start[g.counted[counted as usize].item as usize]))
            })
            .collect()
    }

    #[test]
    fn contexted_keys_of_counted_strings_take_the_text_path() {
        let (trie, g) = counted_string();
        let returns = return_states(&g);
        let mut checked = 0;
        let mut text = 0;
        for (counted_state, item) in counted_states(&g) {
            let info = g.states[counted_state as usize];
            let counted = g.counted[info.counted as usize];
            if g.states[item as usize].class == crate::grammar::NO_CLASS {
                continue;
            }
            for &ret in &returns[info.rule as usize] {
                let outer = g.states[ret as usize].rule as usize;
                for &up in returns[outer].iter().take(2) {
                    for count in [1, 2, 7, 20, counted.max.saturating_sub(3), counted.max - 1] {
                        let context = [
                            (counted_state, count),
                            (ret, crate::grammar::NOT_COUNTED),
                            (up, crate::grammar::NOT_COUNTED),
                        ];
                        let label = format!("state {item} context {context:?}");
                        assert_eq!(
                            classify(&g, &trie, item, &context),
                            reference(&g, &trie, item, &context),
                            "{label}"
                        );
                        let mut dfa = Dfa::new(&g, item, &context, MAX_ROWS, Tables::default());
                        let chain = dfa.class_chain().expect(&label);
                        text += usize::from(dfa.chain_text(&chain).is_some());
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked >= 6, "only {checked} keys checked");
        assert!(text * 2 >= checked, "{text} of {checked} keys read text");
    }

    /// The repetition pass puts a counted rule after its explicit copies, so once an item
    /// completes, the walk's frontier is the next item at the next count plus one fixed
    /// return into the owner: classifying count `c + 1` after count `c` meets the rows of
    /// counts `c + 1 ..` again and builds about one count's rows, not a chain's.
    #[test]
    fn successive_counts_of_a_counted_string_reuse_the_rows_before_them() {
        let (trie, g) = counted_string();
        let returns = return_states(&g);
        let rows = || g.walk_tables.0.lock().expect("not poisoned").is_start.len();
        let mut checked = 0;
        for (counted_state, item) in counted_states(&g) {
            let info = g.states[counted_state as usize];
            let ret = returns[info.rule as usize][0];
            let up = returns[g.states[ret as usize].rule as usize][0];
            let context = |count| {
                [
                    (counted_state, count),
                    (ret, crate::grammar::NOT_COUNTED),
                    (up, crate::grammar::NOT_COUNTED),
                ]
            };
            classify(&g, &trie, item, &context(1));
            for count in 2..12 {
                let before = rows();
                classify(&g, &trie, item, &context(count));
                let added = rows() - before;
                assert!(added <= 16, "count {count}: {added} new rows");
                checked += 1;
            }
        }
        assert!(checked > 0, "no counted state");
    }

    #[test]
    fn nfa_states_with_overlapping_edges_go_general() {
        // A DFA cap of 1 keeps the ε-free NFA, whose states have overlapping byte edges.
        let grammar = sieve_gbnf::compile(
            r#"root ::= [a-z]* "ab" [a-c]+ | "a" [^x]*"#,
            &Default::default(),
        )
        .unwrap();
        let normalized =
            sieve_normalize::normalize(&grammar, &sieve_normalize::Config::default()).unwrap();
        let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new().dfa_state_limit(1))
            .build(&normalized)
            .unwrap();
        let g = EarleyGrammar::new(&fsms, false, crate::Config::default());
        let trie = TokenTrie::new(Vocabulary::embedded_default());
        for state in 0..g.state_count() as u32 {
            if g.states[state as usize].class != crate::grammar::NO_CLASS {
                assert_eq!(
                    classify(&g, &trie, state, &[]),
                    reference(&g, &trie, state, &[])
                );
            }
        }
    }
}
