//! [`TokenId`]: a token's id, a `u32` newtype that is free inside `Option`.
//!
//! Invariant: the id is at most [`TokenId::MAX`] (`u32::MAX - 1`); it is stored as its bitwise
//! complement in a `NonZeroU32`, so `Option<TokenId>` is four bytes.

use std::fmt;
use std::num::NonZeroU32;

/// A token id: an index into a [`Vocabulary`](crate::Vocabulary) (bit `id` of a token mask).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TokenId(NonZeroU32);

impl TokenId {
    /// The largest representable id.
    pub const MAX: u32 = u32::MAX - 1;

    /// The id `id`, or `None` for `u32::MAX` (the one value that is not representable).
    #[inline]
    pub const fn new(id: u32) -> Option<TokenId> {
        match NonZeroU32::new(!id) {
            Some(n) => Some(TokenId(n)),
            None => None,
        }
    }

    /// The id as a `u32`.
    #[inline]
    pub const fn as_u32(self) -> u32 {
        !self.0.get()
    }

    /// The id as an index (into a mask or a per-token table).
    #[inline]
    pub const fn index(self) -> usize {
        self.as_u32() as usize
    }

    /// The id of a vocabulary index below [`MAX_N_VOCAB`](crate::MAX_N_VOCAB).
    #[inline]
    pub(crate) fn from_index(index: usize) -> TokenId {
        debug_assert!(index < crate::MAX_N_VOCAB as usize);
        TokenId(NonZeroU32::new(!(index as u32)).expect("index below MAX_N_VOCAB"))
    }
}

// Ordered by id (the stored complement would order them backwards).
impl Ord for TokenId {
    fn cmp(&self, other: &TokenId) -> std::cmp::Ordering {
        self.as_u32().cmp(&other.as_u32())
    }
}

impl PartialOrd for TokenId {
    fn partial_cmp(&self, other: &TokenId) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl TryFrom<u32> for TokenId {
    type Error = u32;

    /// Fails (giving the value back) only for `u32::MAX`.
    fn try_from(id: u32) -> Result<TokenId, u32> {
        TokenId::new(id).ok_or(id)
    }
}

impl From<TokenId> for u32 {
    fn from(id: TokenId) -> u32 {
        id.as_u32()
    }
}

impl fmt::Debug for TokenId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TokenId({})", self.as_u32())
    }
}

impl fmt::Display for TokenId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.as_u32())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_is_free_in_option() {
        for id in [0, 1, 50256, TokenId::MAX] {
            assert_eq!(TokenId::new(id).unwrap().as_u32(), id);
        }
        assert_eq!(TokenId::new(u32::MAX), None);
        assert_eq!(std::mem::size_of::<Option<TokenId>>(), 4);
        assert!(TokenId::new(3).unwrap() < TokenId::new(4).unwrap());
        assert_eq!(TokenId::from_index(7).index(), 7);
    }
}
