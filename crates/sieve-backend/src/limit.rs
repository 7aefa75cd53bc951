//! [`LimitError`]: a backend's configured bound on work or memory was reached.

use std::fmt;

/// A backend's limit was hit; the recogniser is unchanged. Opaque: read
/// [`LimitError::limit_name`], [`LimitError::limit`] or the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitError {
    name: &'static str,
    limit: usize,
    what: String,
}

impl LimitError {
    /// A limit named `name` (the configuration field), set to `limit`, with `what` saying in
    /// words what would have exceeded it.
    pub fn new(name: &'static str, limit: usize, what: impl Into<String>) -> LimitError {
        LimitError {
            name,
            limit,
            what: what.into(),
        }
    }

    /// The name of the configuration field whose limit was hit, e.g. `"max_items_per_set"`.
    pub fn limit_name(&self) -> &'static str {
        self.name
    }

    /// The configured value of that limit.
    pub fn limit(&self) -> usize {
        self.limit
    }
}

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} is {}", self.what, self.name, self.limit)
    }
}

impl std::error::Error for LimitError {}
