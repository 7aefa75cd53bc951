//! The IR's error type.

/// An error building or checking a [`crate::Grammar`].
///
/// Front-ends check what users write before building the IR and report it with a location;
/// these errors are for callers that build the IR directly.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IrError {
    /// A repetition's lower bound is over its upper bound.
    #[error("repetition bounds {{{min},{max}}}: the minimum is greater than the maximum")]
    RepeatBounds {
        /// The lower bound.
        min: u32,
        /// The upper bound.
        max: u32,
    },
    /// Two rules have the same name.
    #[error("rule `{0}` is defined twice")]
    DuplicateRule(String),
    /// A rule was declared but never given a body.
    #[error("rule `{0}` is declared but has no body")]
    UndefinedRule(String),
    /// More rules than [`crate::RuleId::LIMIT`].
    #[error("too many rules")]
    TooManyRules,
    /// An invariant does not hold; the text says which.
    #[error("invalid IR: {0}")]
    Invalid(String),
}
