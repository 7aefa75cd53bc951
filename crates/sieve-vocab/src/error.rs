//! [`Error`]: everything that can go wrong loading or using a vocabulary, each variant with
//! the location a user needs to fix the file (a line, a JSON path or a line:column).

use std::path::PathBuf;

/// A vocabulary error. Loaders report the first problem they find, with its location.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Another error, in this file.
    #[error("{}: {error}", path.display())]
    InFile {
        /// The file the error is in.
        path: PathBuf,
        /// The error.
        error: Box<Error>,
    },
    /// A malformed line of a line-based file (tiktoken, plain list).
    #[error("line {line}: {message}")]
    Line {
        /// 1-based line number.
        line: usize,
        /// What is wrong, in words.
        message: String,
    },
    /// Two lines of a tiktoken file give the same rank.
    #[error("line {line}: rank {rank} already given on line {first_line}")]
    DuplicateRank {
        /// The line of the second occurrence.
        line: usize,
        /// The rank.
        rank: u32,
        /// The line of the first occurrence.
        first_line: usize,
    },
    /// The ranks of a tiktoken file are not dense `0..N`.
    #[error("line {line}: rank {rank} leaves a gap: no line has rank {missing} (ranks must be 0..N-1 without gaps)")]
    RankGap {
        /// The line with the highest rank.
        line: usize,
        /// The highest rank.
        rank: u32,
        /// The smallest missing rank.
        missing: u32,
    },
    /// A JSON syntax or type error, located by serde_json.
    #[error("JSON error at line {line}, column {column}: {message}")]
    Json {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde_json's message.
        message: String,
    },
    /// Well-formed JSON with wrong content, located by a JSON path (`model.vocab["Ġa"]`).
    #[error("at {path}: {message}")]
    JsonContent {
        /// Where, as a JSON path.
        path: String,
        /// What is wrong, in words.
        message: String,
    },
    /// Two definitions for one token id.
    #[error("token id {id} is defined twice: {first} and {second}")]
    DuplicateId {
        /// The id.
        id: u32,
        /// Where the first definition is.
        first: String,
        /// Where the second definition is.
        second: String,
    },
    /// A token id at or above the vocabulary size (in a file, an option, or a decode call).
    #[error(
        "token id {id} is out of range (n_vocab = {n_vocab}){}",
        context_suffix(context)
    )]
    IdOutOfRange {
        /// The id.
        id: u64,
        /// The vocabulary size.
        n_vocab: u32,
        /// Where it came from (may be empty).
        context: String,
    },
    /// The requested `n_vocab` is smaller than the tokens the file defines, or too large.
    #[error("n_vocab {n_vocab} is invalid: {message}")]
    BadNVocab {
        /// The requested size.
        n_vocab: u64,
        /// Why it does not fit.
        message: String,
    },
    /// A special-token name that the vocabulary does not have (e.g. a configured EOS token).
    #[error("no token named {name:?}{}", context_suffix(context))]
    UnknownName {
        /// The name.
        name: String,
        /// Where it came from (may be empty).
        context: String,
    },
    /// A feature of the input this crate does not support.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The vocabulary exceeds a size limit.
    #[error("too large: {0}")]
    TooLarge(String),
}

fn context_suffix(context: &str) -> String {
    if context.is_empty() {
        String::new()
    } else {
        format!(" ({context})")
    }
}

impl Error {
    /// The error itself, without the [`Error::InFile`] wrappers that say which file it is in.
    pub fn innermost(&self) -> &Error {
        let mut error = self;
        while let Error::InFile { error: inner, .. } = error {
            error = inner;
        }
        error
    }

    pub(crate) fn line(line: usize, message: impl Into<String>) -> Error {
        Error::Line {
            line,
            message: message.into(),
        }
    }

    pub(crate) fn content(path: impl Into<String>, message: impl Into<String>) -> Error {
        Error::JsonContent {
            path: path.into(),
            message: message.into(),
        }
    }

    pub(crate) fn json(e: &serde_json::Error) -> Error {
        Error::Json {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        }
    }

    pub(crate) fn in_file(self, path: &std::path::Path) -> Error {
        match self {
            e @ Error::Io { .. } => e,
            e => Error::InFile {
                path: path.to_path_buf(),
                error: Box::new(e),
            },
        }
    }
}

/// Reads a whole file, mapping the error to [`Error::Io`].
pub(crate) fn read_file(path: &std::path::Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}
