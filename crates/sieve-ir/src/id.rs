//! Newtype identifiers used across the IR.
//!
//! A [`RuleId`] is an index into [`crate::Grammar::rules`]. It is only meaningful for the grammar
//! that produced it; the verifier checks that every reference is in range.

use serde::{Deserialize, Serialize};

/// The index of a rule in its [`crate::Grammar`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RuleId(u32);

impl RuleId {
    /// The largest number of rules a grammar may hold.
    pub const LIMIT: usize = u32::MAX as usize;

    /// Builds an id from an index; `None` when the index is over [`RuleId::LIMIT`].
    pub fn new(index: usize) -> Option<RuleId> {
        u32::try_from(index).ok().map(RuleId)
    }

    /// The index into the grammar's rule list.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "r{}", self.0)
    }
}
