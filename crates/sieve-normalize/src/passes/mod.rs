//! The passes, one module each. [`crate::PASSES`] gives their order.

pub mod dedupe;
pub mod flatten;
pub mod inline_terminals;
pub mod merge_identical;
pub mod merge_literals;
pub mod nullable;
pub mod repetition;
pub mod tail_loops;
pub mod unit_rules;
pub mod useless;
