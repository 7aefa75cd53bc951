//! The JSON Schema front-end's errors and warnings.
//!
//! Every error names the schema keyword and the JSON pointer (RFC 6901) of the schema
//! location it concerns, so a user can find it in their document: `/properties/age/minimum`.

use std::fmt;

/// Why a schema could not become a grammar.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{pointer}: `{keyword}`: {message}")]
pub struct Error {
    /// The keyword at fault (`"not"`, `"$ref"`, `"minimum"`), or `""` for the schema as a whole.
    pub keyword: String,
    /// The JSON pointer of the keyword's value in the schema document, `""` for the root.
    pub pointer: String,
    /// What kind of failure.
    pub kind: ErrorKind,
    /// The message for the user.
    pub message: String,
}

/// The kinds of [`Error`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The schema is not a valid schema (wrong type for a keyword, a `$ref` that resolves to
    /// nothing, a `pattern` that is not a regex).
    Invalid,
    /// A valid keyword that sieve cannot enforce exactly (`not`, `uniqueItems`, …). In
    /// lenient mode these become [`Warning`]s instead.
    Unsupported,
    /// The schema accepts no instance at all.
    Unsatisfiable,
    /// A limit of [`crate::Limits`] was reached.
    Limit,
}

impl Error {
    /// An error at `pointer` (the pointer of the schema object) for `keyword`.
    pub fn new(kind: ErrorKind, pointer: &str, keyword: &str, message: impl Into<String>) -> Self {
        Error {
            keyword: keyword.to_owned(),
            pointer: join_pointer(pointer, keyword),
            kind,
            message: message.into(),
        }
    }
}

/// A keyword dropped in lenient mode: the grammar accepts more than the schema there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// The keyword dropped.
    pub keyword: String,
    /// Its JSON pointer.
    pub pointer: String,
    /// Why it could not be enforced.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: `{}` not enforced: {}",
            self.pointer, self.keyword, self.message
        )
    }
}

/// `pointer` extended by one reference token, escaped per RFC 6901 (`~` → `~0`, `/` → `~1`).
/// An empty `token` leaves the pointer as it is.
pub fn join_pointer(pointer: &str, token: &str) -> String {
    if token.is_empty() {
        return pointer.to_owned();
    }
    let mut out = String::with_capacity(pointer.len() + token.len() + 1);
    out.push_str(pointer);
    out.push('/');
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_escape_tilde_and_slash() {
        assert_eq!(join_pointer("", "properties"), "/properties");
        assert_eq!(join_pointer("/properties", "a/b~c"), "/properties/a~1b~0c");
        assert_eq!(join_pointer("/x", ""), "/x");
    }
}
