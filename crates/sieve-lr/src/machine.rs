//! The DPDA step: one terminal's reductions and shift over a stack of frames that records
//! where every rule instance started.
//!
//! # Frames
//!
//! A frame is an LR state with, for each of its kernel items, the frame where that item's
//! rule instance started (its *origin*); the state's closure items start at the frame itself.
//! Frames live in an append-only arena and point to the frame below them (`parent`), so the
//! stack is the parent chain of the last frame, and undoing a byte is truncating the arena to
//! its length before the byte. Reducing an item pops to its origin `o` and pushes the goto of
//! `o`'s state on the item's rule; shifting pushes the shift's target. The new frame's items
//! inherit the origins of the items they advanced. A frame is pushed above the frame it came
//! from only if one of its items started there; otherwise it replaces it (a frame nothing
//! started at is never read again), so the stack holds one frame per open rule instance
//! rather than one per byte.
//!
//! # Unknown frames
//!
//! The classification runs the same step from a state whose frames below are unknown: an
//! origin may be [`UNKNOWN`], and a step that needs it reports [`Step::Unknown`]. A step
//! that never reads an unknown origin is exactly the step the full parser takes, whatever
//! the frames below are.
//!
//! # Token ends
//!
//! A token end ([`end_token`]) takes the top frame's state along its `⊥` transition: the
//! kernel items that survive keep their origins, nothing is reduced, and since no item starts
//! at the top frame the new frame replaces it.

use crate::tables::{Tables, TokenEnd, ACCEPT, PAYLOAD, REDUCE, SHIFT};

/// An origin or parent that is not known (below a classification's known frames). Every
/// value at or above [`crate::edges::SYMBOLIC`] is unknown to [`step`].
pub(crate) const UNKNOWN: u32 = u32::MAX;

/// One frame (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Frame {
    pub state: u32,
    pub parent: u32,
    /// Where its kernel items' origins start in the origin arena.
    pub origins: u32,
}

/// The outcome of one terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// The byte was shifted (after any reductions).
    Shifted,
    /// End of input reaches acceptance.
    Accepted,
    /// The terminal is an error here.
    Rejected,
    /// A reduction needs a frame that is not known.
    Unknown,
    /// More reductions than the fuel allows.
    OutOfFuel,
}

/// Frames and origins, readable and growable.
pub(crate) trait Frames {
    fn frame(&self, i: u32) -> Frame;
    fn origin(&self, at: u32) -> u32;
    fn frame_count(&self) -> u32;
    fn origin_count(&self) -> u32;
    fn push_frame(&mut self, frame: Frame);
    fn push_origin(&mut self, origin: u32);
}

/// The arena of a parser or a classification walk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stack {
    pub frames: Vec<Frame>,
    pub origins: Vec<u32>,
}

impl Stack {
    /// The arena lengths, to truncate back to.
    pub(crate) fn mark(&self) -> (u32, u32) {
        (self.frames.len() as u32, self.origins.len() as u32)
    }

    pub(crate) fn truncate(&mut self, (frames, origins): (u32, u32)) {
        self.frames.truncate(frames as usize);
        self.origins.truncate(origins as usize);
    }

    pub(crate) fn top(&self) -> Frame {
        *self.frames.last().expect("a stack always has a frame")
    }
}

impl Frames for Stack {
    #[inline]
    fn frame(&self, i: u32) -> Frame {
        self.frames[i as usize]
    }
    #[inline]
    fn origin(&self, at: u32) -> u32 {
        self.origins[at as usize]
    }
    fn frame_count(&self) -> u32 {
        self.frames.len() as u32
    }
    fn origin_count(&self) -> u32 {
        self.origins.len() as u32
    }
    fn push_frame(&mut self, frame: Frame) {
        self.frames.push(frame);
    }
    fn push_origin(&mut self, origin: u32) {
        self.origins.push(origin);
    }
}

/// A [`Stack`] read through, with frames added above it kept apart: what read-only queries
/// (can the input end, which bytes are allowed) step on.
pub(crate) struct Overlay<'a> {
    base: &'a Stack,
    frames: Vec<Frame>,
    origins: Vec<u32>,
}

impl<'a> Overlay<'a> {
    pub(crate) fn new(base: &'a Stack) -> Overlay<'a> {
        Overlay {
            base,
            frames: Vec::new(),
            origins: Vec::new(),
        }
    }
}

impl Frames for Overlay<'_> {
    #[inline]
    fn frame(&self, i: u32) -> Frame {
        match (i as usize).checked_sub(self.base.frames.len()) {
            Some(j) => self.frames[j],
            None => self.base.frames[i as usize],
        }
    }
    #[inline]
    fn origin(&self, at: u32) -> u32 {
        match (at as usize).checked_sub(self.base.origins.len()) {
            Some(j) => self.origins[j],
            None => self.base.origins[at as usize],
        }
    }
    fn frame_count(&self) -> u32 {
        (self.base.frames.len() + self.frames.len()) as u32
    }
    fn origin_count(&self) -> u32 {
        (self.base.origins.len() + self.origins.len()) as u32
    }
    fn push_frame(&mut self, frame: Frame) {
        self.frames.push(frame);
    }
    fn push_origin(&mut self, origin: u32) {
        self.origins.push(origin);
    }
}

/// Runs terminal `terminal` (a byte, or end of input) on the stack whose top is the last
/// frame: the reductions it selects, then its shift (or acceptance). Appends frames; on any
/// outcome but [`Step::Shifted`] the caller discards what was appended. `fuel` bounds the
/// reductions.
pub(crate) fn step<F: Frames>(
    tables: &Tables,
    frames: &mut F,
    terminal: usize,
    fuel: &mut usize,
) -> Step {
    loop {
        let top = frames.frame_count() - 1;
        let state = frames.frame(top).state;
        let action = tables.action(state, terminal);
        if action == 0 {
            return Step::Rejected;
        }
        if action == ACCEPT {
            return Step::Accepted;
        }
        let payload = action & PAYLOAD;
        if action & !PAYLOAD == SHIFT {
            advance(tables, frames, top, payload);
            return Step::Shifted;
        }
        debug_assert_eq!(action & !PAYLOAD, REDUCE);
        if *fuel == 0 {
            return Step::OutOfFuel;
        }
        *fuel -= 1;
        let item = payload as usize;
        let origin = if item < tables.kernel_len(state) {
            frames.origin(frames.frame(top).origins + item as u32)
        } else {
            top
        };
        if origin >= crate::edges::SYMBOLIC {
            return Step::Unknown;
        }
        let rule = tables.item_rule(state, item);
        let Some(trans) = tables.goto(frames.frame(origin).state, rule) else {
            // The tables give every rule a goto where it can start; a missing one would be a
            // construction bug, and rejecting is the safe answer.
            debug_assert!(false, "no goto on a reduced rule");
            return Step::Rejected;
        };
        advance(tables, frames, origin, trans);
    }
}

/// Ends a token on the stack whose top is the last frame (see the module docs): `false`
/// when the token end kills every item (nothing appended).
pub(crate) fn end_token<F: Frames>(tables: &Tables, frames: &mut F) -> bool {
    let top = frames.frame_count() - 1;
    match tables.token_end(frames.frame(top).state) {
        TokenEnd::Stay => true,
        TokenEnd::Dead => false,
        TokenEnd::Trans(trans) => {
            advance(tables, frames, top, trans);
            true
        }
    }
}

/// Pushes the target of transition `trans` taken from frame `from`.
fn advance<F: Frames>(tables: &Tables, frames: &mut F, from: u32, trans: u32) {
    let source = frames.frame(from);
    let kernel = tables.kernel_len(source.state);
    let start = frames.origin_count();
    let mut started_here = false;
    for &item in tables.trans_sources(trans) {
        let origin = if usize::from(item) < kernel {
            frames.origin(source.origins + u32::from(item))
        } else {
            started_here = true;
            from
        };
        frames.push_origin(origin);
    }
    let parent = if started_here { from } else { source.parent };
    frames.push_frame(Frame {
        state: tables.trans_target(trans),
        parent,
        origins: start,
    });
}
