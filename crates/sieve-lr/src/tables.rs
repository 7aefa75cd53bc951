//! [`Tables`]: the LR automaton as flat arrays — per state its items' rules, its action on
//! each terminal and its gotos; per transition its target and where each of the target's
//! kernel items came from.
//!
//! # Invariants
//!
//! - Terminals are grouped into classes that every automaton edge treats alike (the cuts of
//!   all byte ranges; end of input is the last class). A state's row holds its action per
//!   class: dense (one entry per class in `actions`) or, when few classes have an action,
//!   sparse (at most [`SPARSE_MAX`] `(class, action)` pairs, classes ascending; a class not
//!   listed is an error). An action is `0` (error), [`ACCEPT`], `SHIFT | transition` or
//!   `REDUCE | item`.
//! - A reduced item's rule has a goto from every state where that rule's instance can start
//!   (its closure item's state), so the parser's goto look-up after a reduction never fails.
//! - A transition's `sources` has one entry per kernel item of its target.
//! - With token limits, every state has a [`TokenEnd`] (none are stored without): its
//!   transition's sources are all kernel items of the state (a token end replaces the top
//!   frame, see [`crate::build`]).

/// The action "accept" (end of input after a sentence).
pub(crate) const ACCEPT: u32 = 1;
/// Tag of "shift along transition `x & PAYLOAD`".
pub(crate) const SHIFT: u32 = 1 << 30;
/// Tag of "reduce item `x & PAYLOAD` of the current state".
pub(crate) const REDUCE: u32 = 2 << 30;
/// The payload bits of an action.
pub(crate) const PAYLOAD: u32 = (1 << 30) - 1;

/// What a token end does to a state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TokenEnd {
    /// Nothing: no kernel item counts tokens.
    Stay,
    /// Kills the state: no kernel item can finish within its limit.
    Dead,
    /// Replaces the state along this transition.
    Trans(u32),
}

/// [`Tables::token_end`] entries: the two that are not transitions.
const END_STAY: u32 = u32::MAX;
const END_DEAD: u32 = u32::MAX - 1;

/// The terminals: 256 bytes and end of input.
pub(crate) const TERMINALS: usize = 257;

/// The most entries of a sparse row (looked up by a linear scan).
const SPARSE_MAX: usize = 12;

/// One state's offsets into the flat arrays.
#[derive(Clone, Copy, Debug)]
struct StateRecord {
    /// First item in `item_rule`.
    items: u32,
    /// First goto in `gotos`.
    gotos: u32,
    /// Where its row starts in `actions` (dense) or in `sparse_classes` (sparse).
    row: u32,
    /// The entries of a sparse row; `0` for a dense one.
    sparse: u16,
    kernel: u16,
    /// The bytes it shifts directly.
    shift_bytes: u32,
    /// Whether it can be the top state after a shift (or is the start).
    scannable: bool,
}

/// The compiled automaton (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct Tables {
    states: Vec<StateRecord>,
    /// The class of each terminal.
    class_of: Vec<u16>,
    /// The number of classes (the row width of `actions`).
    width: usize,
    item_rule: Vec<u32>,
    /// Each item's global automaton state.
    item_state: Vec<u32>,
    actions: Vec<u32>,
    sparse_classes: Vec<u16>,
    sparse_actions: Vec<u32>,
    /// `(rule, transition)`, per state sorted by rule.
    gotos: Vec<(u32, u32)>,
    /// Per state, what a token end does ([`END_STAY`], [`END_DEAD`] or a transition); empty
    /// for a grammar without token limits.
    token_end: Vec<u32>,
    trans_target: Vec<u32>,
    /// Per transition, its first entry in `sources`; one extra at the end.
    trans_sources: Vec<u32>,
    sources: Vec<u16>,
}

impl Tables {
    /// Empty tables whose terminal classes are `class_of` (classes `0..width`).
    pub(crate) fn new(class_of: Vec<u16>) -> Tables {
        let width = class_of
            .iter()
            .map(|&c| usize::from(c) + 1)
            .max()
            .unwrap_or(0);
        Tables {
            states: Vec::new(),
            class_of,
            width,
            item_rule: Vec::new(),
            item_state: Vec::new(),
            actions: Vec::new(),
            sparse_classes: Vec::new(),
            sparse_actions: Vec::new(),
            gotos: Vec::new(),
            token_end: Vec::new(),
            trans_target: Vec::new(),
            trans_sources: vec![0],
            sources: Vec::new(),
        }
    }

    /// Makes room for `states` more states.
    pub(crate) fn reserve_states(&mut self, states: usize) {
        self.states.reserve(states);
    }

    /// Adds a transition; returns its number.
    pub(crate) fn add_trans(&mut self, target: u32, sources: &[u16]) -> u32 {
        self.trans_target.push(target);
        self.sources.extend_from_slice(sources);
        self.trans_sources.push(self.sources.len() as u32);
        (self.trans_target.len() - 1) as u32
    }

    /// Adds the next state.
    pub(crate) fn add_state(
        &mut self,
        kernel: u16,
        items: &[(u32, u32)],
        actions: &[u32; TERMINALS],
        gotos: &[(u32, u32)],
        shift_bytes: u32,
    ) {
        let mut row = vec![0u32; self.width];
        for (t, &action) in actions.iter().enumerate() {
            row[usize::from(self.class_of[t])] = action;
        }
        let filled = row.iter().filter(|&&a| a != 0).count();
        // A sparse entry costs six bytes, a dense one four.
        let sparse = filled <= SPARSE_MAX && filled * 6 < self.width * 4;
        let start = if sparse {
            let start = self.sparse_classes.len();
            for (class, &action) in row.iter().enumerate().filter(|(_, &a)| a != 0) {
                self.sparse_classes.push(class as u16);
                self.sparse_actions.push(action);
            }
            start
        } else {
            let start = self.actions.len();
            self.actions.extend(row);
            start
        };
        self.states.push(StateRecord {
            items: self.item_rule.len() as u32,
            gotos: self.gotos.len() as u32,
            row: start as u32,
            sparse: if sparse { filled as u16 } else { 0 },
            kernel,
            shift_bytes,
            scannable: false,
        });
        self.item_state
            .extend(items.iter().map(|&(state, _)| state));
        self.item_rule.extend(items.iter().map(|&(_, rule)| rule));
        let mut sorted = gotos.to_vec();
        sorted.sort_unstable();
        self.gotos.extend(sorted);
    }

    /// Sets what a token end does to the last state added (for every state, or none).
    pub(crate) fn set_token_end(&mut self, end: TokenEnd) {
        debug_assert_eq!(self.token_end.len() + 1, self.states.len());
        self.token_end.push(match end {
            TokenEnd::Stay => END_STAY,
            TokenEnd::Dead => END_DEAD,
            TokenEnd::Trans(trans) => trans,
        });
    }

    /// Whether token ends change states (the grammar has token limits).
    pub(crate) fn has_token_ends(&self) -> bool {
        !self.token_end.is_empty()
    }

    /// What a token end does to state `s`.
    #[inline]
    pub(crate) fn token_end(&self, s: u32) -> TokenEnd {
        match self.token_end.get(s as usize) {
            None | Some(&END_STAY) => TokenEnd::Stay,
            Some(&END_DEAD) => TokenEnd::Dead,
            Some(&trans) => TokenEnd::Trans(trans),
        }
    }

    /// Marks the start state, every shift target and every token end's target as scannable.
    pub(crate) fn mark_scannable(&mut self) {
        self.states[0].scannable = true;
        for &action in self.actions.iter().chain(&self.sparse_actions) {
            if action & !PAYLOAD == SHIFT {
                let target = self.trans_target[(action & PAYLOAD) as usize];
                self.states[target as usize].scannable = true;
            }
        }
        for s in 0..self.states.len() as u32 {
            if let TokenEnd::Trans(trans) = self.token_end(s) {
                let target = self.trans_target[trans as usize];
                self.states[target as usize].scannable = true;
            }
        }
    }

    pub(crate) fn state_count(&self) -> usize {
        self.states.len()
    }

    pub(crate) fn is_scannable(&self, s: u32) -> bool {
        self.states[s as usize].scannable
    }

    pub(crate) fn shift_bytes(&self, s: u32) -> u32 {
        self.states[s as usize].shift_bytes
    }

    #[inline]
    pub(crate) fn action(&self, s: u32, terminal: usize) -> u32 {
        let record = self.states[s as usize];
        let class = self.class_of[terminal];
        let row = record.row as usize;
        if record.sparse == 0 {
            return self.actions[row + usize::from(class)];
        }
        let classes = &self.sparse_classes[row..row + usize::from(record.sparse)];
        match classes.iter().position(|&c| c == class) {
            Some(i) => self.sparse_actions[row + i],
            None => 0,
        }
    }

    /// The terminal class of `terminal`.
    #[inline]
    pub(crate) fn class(&self, terminal: usize) -> u16 {
        self.class_of[terminal]
    }

    #[inline]
    pub(crate) fn kernel_len(&self, s: u32) -> usize {
        usize::from(self.states[s as usize].kernel)
    }

    /// The number of items of `s` (kernel, then closure).
    pub(crate) fn item_count(&self, s: u32) -> usize {
        let from = self.states[s as usize].items as usize;
        let to = self
            .states
            .get(s as usize + 1)
            .map_or(self.item_rule.len(), |next| next.items as usize);
        to - from
    }

    /// The global automaton state of item `item` of `s`.
    #[inline]
    pub(crate) fn item_state(&self, s: u32, item: usize) -> u32 {
        self.item_state[self.states[s as usize].items as usize + item]
    }

    #[inline]
    pub(crate) fn item_rule(&self, s: u32, item: usize) -> u32 {
        self.item_rule[self.states[s as usize].items as usize + item]
    }

    /// The transition on `rule` from `s`.
    #[inline]
    pub(crate) fn goto(&self, s: u32, rule: u32) -> Option<u32> {
        let row = self.gotos(s);
        row.binary_search_by_key(&rule, |g| g.0)
            .ok()
            .map(|i| row[i].1)
    }

    /// The gotos of `s`: `(rule, transition)`, sorted by rule.
    pub(crate) fn gotos(&self, s: u32) -> &[(u32, u32)] {
        let from = self.states[s as usize].gotos as usize;
        let to = self
            .states
            .get(s as usize + 1)
            .map_or(self.gotos.len(), |next| next.gotos as usize);
        &self.gotos[from..to]
    }

    #[inline]
    pub(crate) fn trans_target(&self, trans: u32) -> u32 {
        self.trans_target[trans as usize]
    }

    #[inline]
    pub(crate) fn trans_sources(&self, trans: u32) -> &[u16] {
        let from = self.trans_sources[trans as usize] as usize;
        let to = self.trans_sources[trans as usize + 1] as usize;
        &self.sources[from..to]
    }

    /// Heap bytes of the tables.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.states.len() * std::mem::size_of::<StateRecord>()
            + self.class_of.len() * 2
            + self.item_rule.len() * 8
            + self.actions.len() * 4
            + self.sparse_classes.len() * 2
            + self.sparse_actions.len() * 4
            + self.gotos.len() * 8
            + self.token_end.len() * 4
            + self.trans_target.len() * 4
            + self.trans_sources.len() * 4
            + self.sources.len() * 2
    }
}
