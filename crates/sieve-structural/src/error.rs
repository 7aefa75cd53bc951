//! The structural-tag front-end's errors.
//!
//! Every error names the JSON pointer (RFC 6901) of the offending part of the structural-tag
//! document — a format object or one of its fields — so a user can find it:
//! `/format/tags/1/content/json_schema: …`.

/// Why a structural tag could not become a grammar.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", shown(pointer))]
pub struct Error {
    /// The JSON pointer of the offending value in the document, `""` for the whole document.
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
    /// The document is not a structural tag: not JSON, a missing or mistyped field, an
    /// unknown format type, a tag that matches no trigger, a token the vocabulary does not
    /// have.
    Invalid,
    /// A valid format or option sieve does not compile (yet): two of the `json_schema`
    /// styles, a schema keyword an XML style cannot write, `any_text`'s token budget, token
    /// names or excluded tokens without a vocabulary to resolve them.
    Unsupported,
    /// An embedded grammar, regex or JSON Schema was refused by its own front-end; the
    /// message is that front-end's, with its location inside the embedded text.
    Embedded,
    /// A limit of [`crate::Limits`] was reached.
    Limit,
}

impl Error {
    /// An error at `pointer`.
    pub fn new(kind: ErrorKind, pointer: &str, message: impl Into<String>) -> Error {
        Error {
            pointer: pointer.to_owned(),
            kind,
            message: message.into(),
        }
    }
}

/// The root's pointer is empty; show it as `#`.
fn shown(pointer: &str) -> &str {
    if pointer.is_empty() {
        "#"
    } else {
        pointer
    }
}

/// `pointer` extended by one reference token, escaped per RFC 6901 (`~` → `~0`, `/` → `~1`).
pub(crate) fn join(pointer: &str, token: impl std::fmt::Display) -> String {
    let token = token.to_string();
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
    fn pointers_escape_and_root_shows_as_hash() {
        assert_eq!(join("/a", "b/c~d"), "/a/b~1c~0d");
        let e = Error::new(ErrorKind::Invalid, "", "not an object");
        assert_eq!(e.to_string(), "#: not an object");
    }
}
