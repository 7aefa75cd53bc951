//! Plain token lists: one token per line, line `k` (1-based) is token id `k - 1`.
//!
//! Each line is one of:
//!
//! | line | token |
//! |---|---|
//! | `"text"` | a text token: the UTF-8 of the JSON string (JSON escapes: `\n`, `\"`, `\u00e9`, …) |
//! | `hex:0aff` | a text token with exactly these bytes (for byte strings that are not UTF-8) |
//! | `special:"<\|endoftext\|>"` | a special token with this name (a JSON string) |
//! | *(empty)* | an unused id (special, no name) |
//!
//! A trailing `\r` is ignored and the last line need not end with a newline (a final newline
//! does not add an id). Anything else is an error naming the line, as is an empty text token
//! (`""` or `hex:`). Names must be unique. `n_vocab` is the number of lines unless
//! [`Options::n_vocab`] gives more; EOS ids default to the specials named in
//! [`DEFAULT_EOS_NAMES`](crate::DEFAULT_EOS_NAMES).
//!
//! ```
//! let list = "\"a\"\nhex:ff0a\n\"\\u00e9\"\nspecial:\"</s>\"\n";
//! let vocab = sieve_vocab::plain::parse(list.as_bytes(), &Default::default()).unwrap();
//! let t = |i| sieve_vocab::TokenId::new(i).unwrap();
//! assert_eq!(vocab.bytes(t(1)), [0xff, b'\n']);
//! assert_eq!(vocab.bytes(t(2)), "é".as_bytes());
//! assert_eq!(vocab.eos_ids(), &[t(3)]);
//! ```

use crate::error::{read_file, Error};
use crate::vocab::Builder;
use crate::Vocabulary;
use std::path::Path;

/// How to read a plain list.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Options {
    /// The mask size (default: the number of lines).
    pub n_vocab: Option<u32>,
    /// The EOS ids (default: see the module docs).
    pub eos: Option<Vec<u32>>,
}

impl Options {
    /// Default size and EOS.
    pub fn new() -> Options {
        Options::default()
    }

    /// Sets the mask size.
    pub fn n_vocab(mut self, n: u32) -> Options {
        self.n_vocab = Some(n);
        self
    }

    /// Sets the EOS ids.
    pub fn eos(mut self, ids: impl IntoIterator<Item = u32>) -> Options {
        self.eos = Some(ids.into_iter().collect());
        self
    }
}

fn json_string(text: &str, line: usize) -> Result<String, Error> {
    serde_json::from_str::<String>(text).map_err(|e| {
        Error::line(
            line,
            format!("expected a JSON string, `hex:…` or `special:\"…\"`: {e}"),
        )
    })
}

fn hex(text: &str, line: usize, out: &mut Vec<u8>) -> Result<(), Error> {
    let digits = text.as_bytes();
    if digits.len() % 2 != 0 {
        return Err(Error::line(line, "odd number of hex digits"));
    }
    for (i, pair) in digits.chunks(2).enumerate() {
        let s = std::str::from_utf8(pair).unwrap_or("?");
        let byte = u8::from_str_radix(s, 16)
            .ok()
            .filter(|_| pair.iter().all(u8::is_ascii_hexdigit))
            .ok_or_else(|| {
                Error::line(
                    line,
                    format!("invalid hex digits {s:?} at byte {i} after `hex:`"),
                )
            })?;
        out.push(byte);
    }
    Ok(())
}

/// Parses a plain list.
pub fn parse(data: &[u8], options: &Options) -> Result<Vocabulary, Error> {
    let text = std::str::from_utf8(data).map_err(|e| {
        let line = data[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        Error::line(line, "not UTF-8 (use `hex:` for byte strings)")
    })?;
    let body = text.strip_suffix('\n').unwrap_or(text);
    let mut builder = Builder::new();
    let mut count = 0u64;
    if !text.is_empty() {
        for (index, raw) in body.split('\n').enumerate() {
            let line_no = index + 1;
            let line = raw.strip_suffix('\r').unwrap_or(raw);
            let id = index as u64;
            count = id + 1;
            let here = || format!("line {line_no}");
            let dup = |_| String::new();
            if line.is_empty() {
                continue;
            } else if let Some(name) = line.strip_prefix("special:") {
                let name = json_string(name, line_no)?;
                builder.set_special(id, &name, false, &here, &dup)?;
            } else {
                let start = builder.buffer().len();
                if let Some(digits) = line.strip_prefix("hex:") {
                    hex(digits, line_no, builder.buffer())?;
                } else {
                    let s = json_string(line, line_no)?;
                    builder.buffer().extend_from_slice(s.as_bytes());
                }
                if builder.buffer().len() == start {
                    return Err(Error::line(line_no, "empty token"));
                }
                builder.commit_text(id, start, &here, &dup)?;
            }
        }
    }
    let n_vocab = options.n_vocab.map(u64::from).or(Some(count));
    let vocab = builder.finish(n_vocab)?;
    crate::tiktoken::finish_eos(vocab, options.eos.as_deref())
}

/// Reads and parses a plain list; errors name the file.
pub fn load(path: &Path, options: &Options) -> Result<Vocabulary, Error> {
    let data = read_file(path)?;
    parse(&data, options).map_err(|e| e.in_file(path))
}
