//! tiktoken rank files: one line per token, `BASE64(token bytes) SP rank LF`.
//!
//! The rank is the token id. Ranks must be dense `0..N-1` (any order; the published files are
//! sorted). Special tokens are not in the file: they come as `(name, id)` pairs in
//! [`Options`], with ids that no ranked token has. `n_vocab` defaults to one past the largest
//! id; ids below it that are neither ranked nor special are *unused* and treated as special.
//!
//! Errors name the 1-based line: a missing field, bad base64, a bad rank, a duplicate rank
//! (with the line of the first), a gap in the ranks, an empty token. A trailing `\r` (CRLF
//! files) and a missing final newline are accepted; blank lines are not.
//!
//! EOS default: the special tokens named in [`DEFAULT_EOS_NAMES`](crate::DEFAULT_EOS_NAMES)
//! (for the OpenAI encodings, `<|endoftext|>`); [`Options::eos`] overrides it.

use crate::error::{read_file, Error};
use crate::vocab::Builder;
use crate::{TokenId, Vocabulary};
use std::path::Path;

/// How to read a tiktoken file: its special tokens, the vocabulary size, the EOS ids.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Options {
    /// Special tokens as `(name, id)`.
    pub special_tokens: Vec<(String, u32)>,
    /// The mask size (default: one past the largest ranked or special id).
    pub n_vocab: Option<u32>,
    /// The EOS ids (default: see the module docs).
    pub eos: Option<Vec<u32>>,
}

impl Options {
    /// No special tokens, default size and EOS.
    pub fn new() -> Options {
        Options::default()
    }

    /// Adds the special token `name` with id `id`.
    pub fn special(mut self, name: impl Into<String>, id: u32) -> Options {
        self.special_tokens.push((name.into(), id));
        self
    }

    /// Sets the mask size.
    pub fn n_vocab(mut self, n_vocab: u32) -> Options {
        self.n_vocab = Some(n_vocab);
        self
    }

    /// Sets the EOS ids.
    pub fn eos(mut self, ids: impl IntoIterator<Item = u32>) -> Options {
        self.eos = Some(ids.into_iter().collect());
        self
    }
}

/// Parses the contents of a tiktoken file.
pub fn parse(data: &[u8], options: &Options) -> Result<Vocabulary, Error> {
    // About 4/3 of the base64 part is bytes, plus a few digits of rank per line.
    let lines_guess = data.iter().filter(|&&b| b == b'\n').count() + 1;
    let mut builder = Builder::with_capacity(lines_guess, data.len() / 2);
    // For each rank, the line that defined it (to report duplicates and gaps).
    let mut rank_line: Vec<u32> = Vec::with_capacity(lines_guess);
    let mut max_rank: Option<(u32, usize)> = None;
    let mut body = data;
    if body.last() == Some(&b'\n') {
        body = &body[..body.len() - 1];
    }
    if !body.is_empty() {
        for (index, raw) in body.split(|&b| b == b'\n').enumerate() {
            let line_no = index + 1;
            let line = raw.strip_suffix(b"\r").unwrap_or(raw);
            let Some(space) = line.iter().position(|&b| b == b' ') else {
                return Err(Error::line(
                    line_no,
                    if line.is_empty() {
                        "empty line (expected `BASE64 RANK`)".to_owned()
                    } else {
                        "missing rank (expected `BASE64 RANK`)".to_owned()
                    },
                ));
            };
            let (b64, rank_text) = (&line[..space], &line[space + 1..]);
            let rank = parse_rank(rank_text).map_err(|m| Error::line(line_no, m))?;
            if rank >= crate::MAX_N_VOCAB {
                return Err(Error::line(
                    line_no,
                    format!(
                        "rank {rank} is above the limit MAX_N_VOCAB = {}",
                        crate::MAX_N_VOCAB
                    ),
                ));
            }
            let r = rank as usize;
            if r >= rank_line.len() {
                rank_line.resize(r + 1, 0);
            }
            if rank_line[r] != 0 {
                return Err(Error::DuplicateRank {
                    line: line_no,
                    rank,
                    first_line: rank_line[r] as usize,
                });
            }
            rank_line[r] = line_no as u32;
            if max_rank.is_none_or(|(m, _)| rank > m) {
                max_rank = Some((rank, line_no));
            }
            let start = builder.buffer().len();
            crate::base64::decode_into(b64, builder.buffer())
                .map_err(|m| Error::line(line_no, m))?;
            if builder.buffer().len() == start {
                return Err(Error::line(line_no, "empty token (base64 of no bytes)"));
            }
            builder.commit_text(
                u64::from(rank),
                start,
                &|| format!("line {line_no}"),
                &|_| unreachable_duplicate(),
            )?;
        }
    }
    if let Some((max, line)) = max_rank {
        if let Some(missing) = rank_line.iter().position(|&l| l == 0) {
            return Err(Error::RankGap {
                line,
                rank: max,
                missing: missing as u32,
            });
        }
    }
    let n_ranked = rank_line.len() as u64;
    for (name, id) in &options.special_tokens {
        if u64::from(*id) < n_ranked {
            return Err(Error::DuplicateId {
                id: *id,
                first: format!("ranked token on line {}", rank_line[*id as usize]),
                second: format!("special token {name:?}"),
            });
        }
        builder.set_special(
            u64::from(*id),
            name,
            false,
            &|| format!("special token {name:?}"),
            &|_| "another special token".to_owned(),
        )?;
    }
    let vocab = builder.finish(options.n_vocab.map(u64::from))?;
    finish_eos(vocab, options.eos.as_deref())
}

/// Applies explicit EOS ids, or the default rule.
pub(crate) fn finish_eos(vocab: Vocabulary, eos: Option<&[u32]>) -> Result<Vocabulary, Error> {
    let ids = match eos {
        Some(ids) => ids
            .iter()
            .map(|&id| {
                vocab.token(id).ok_or(Error::IdOutOfRange {
                    id: id.into(),
                    n_vocab: vocab.n_vocab() as u32,
                    context: "EOS id".to_owned(),
                })
            })
            .collect::<Result<Vec<TokenId>, _>>()?,
        None => vocab.default_eos(),
    };
    vocab.with_eos(ids)
}

/// Ranks are checked for duplicates before their bytes are committed, so the builder never
/// sees the same rank twice.
fn unreachable_duplicate() -> String {
    "an earlier line".to_owned()
}

fn parse_rank(text: &[u8]) -> Result<u32, String> {
    if text.is_empty() {
        return Err("missing rank after the space".to_owned());
    }
    if text.len() > 10 || !text.iter().all(u8::is_ascii_digit) {
        return Err(format!(
            "rank {:?} is not a decimal number",
            String::from_utf8_lossy(text)
        ));
    }
    let value = text
        .iter()
        .fold(0u64, |acc, &d| acc * 10 + u64::from(d - b'0'));
    u32::try_from(value).map_err(|_| format!("rank {value} is too large"))
}

/// Reads and parses a tiktoken file; errors name the file.
pub fn load(path: &Path, options: &Options) -> Result<Vocabulary, Error> {
    let data = read_file(path)?;
    parse(&data, options).map_err(|e| e.in_file(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ranks_specials_and_unused_ids() {
        let data = b"YQ== 0\nYg== 1\nYWI= 2\n";
        let v = parse(data, &Options::new().special("<|endoftext|>", 4).n_vocab(6)).unwrap();
        assert_eq!(v.n_vocab(), 6);
        let t = |i| TokenId::new(i).unwrap();
        assert_eq!(v.bytes(t(2)), b"ab");
        assert!(!v.is_special(t(2)));
        assert!(v.is_special(t(3)) && v.is_special(t(4)) && v.is_special(t(5)));
        assert_eq!(v.eos_ids(), &[t(4)]);
        assert_eq!(v.special_name(t(4)), Some("<|endoftext|>"));
        assert_eq!(v.special_name(t(3)), None);
    }

    #[test]
    fn locates_errors() {
        let err = |d: &[u8]| parse(d, &Options::new()).unwrap_err();
        assert!(matches!(
            err(b"YQ== 0\nYg==\n"),
            Error::Line { line: 2, .. }
        ));
        assert!(matches!(
            err(b"YQ== 0\nY!== 1\n"),
            Error::Line { line: 2, .. }
        ));
        assert!(matches!(
            err(b"YQ== 0\nYg== x\n"),
            Error::Line { line: 2, .. }
        ));
        assert!(matches!(
            err(b"YQ== 0\nYg== 0\n"),
            Error::DuplicateRank {
                line: 2,
                rank: 0,
                first_line: 1
            }
        ));
        assert!(matches!(
            err(b"YQ== 0\nYg== 2\n"),
            Error::RankGap {
                line: 2,
                rank: 2,
                missing: 1
            }
        ));
        assert!(matches!(
            err(b"YQ== 0\n\nYg== 1\n"),
            Error::Line { line: 2, .. }
        ));
    }
}
