//! [`Vocabulary`]: token bytes in one contiguous buffer, the special set, names, EOS ids; and
//! the crate-private [`Builder`] every loader fills.
//!
//! Invariants (established by `Builder::finish`, kept by every method):
//! - `offsets.len() == n_vocab + 1`, non-decreasing; token `t`'s bytes are
//!   `bytes[offsets[t]..offsets[t + 1]]`, empty iff `t` is special.
//! - `special` has bit `t` set iff `t` is special; `special_ids` lists exactly those ids, sorted.
//! - `names` is sorted by id, at most one name per id, names unique; `by_name` indexes it sorted
//!   by name.
//! - every EOS id is below `n_vocab` and special; no duplicates.

use crate::error::Error;
use crate::TokenId;
use std::path::Path;

/// The largest vocabulary size accepted (`n_vocab`), so a wrong size in a file cannot make the
/// loader allocate without bound.
pub const MAX_N_VOCAB: u32 = 1 << 24;

/// The largest total size of all token byte strings together.
pub const MAX_TOTAL_BYTES: usize = 1 << 30;

/// The names of special tokens taken as EOS when a file declares nothing more specific, in
/// this order: the usual end-of-sequence and end-of-turn markers.
pub const DEFAULT_EOS_NAMES: &[&str] = &[
    "</s>",
    "<|im_end|>",
    "<|eot_id|>",
    "<|end_of_text|>",
    "<|endoftext|>",
    "<eos>",
    "<end_of_turn>",
];

/// A tokenizer's vocabulary: every token id's exact byte string, which ids are special, and the
/// EOS ids. See the [crate docs](crate) for the invariants.
///
/// Cheap to share (`Send + Sync`, immutable); clone it only to change the EOS ids.
#[derive(Clone)]
pub struct Vocabulary {
    n_vocab: u32,
    bytes: Vec<u8>,
    offsets: Vec<u32>,
    special: Vec<u64>,
    special_ids: Vec<TokenId>,
    names: Vec<(Box<str>, TokenId)>,
    by_name: Vec<u32>,
    eos: Vec<TokenId>,
}

impl std::fmt::Debug for Vocabulary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vocabulary")
            .field("n_vocab", &self.n_vocab)
            .field("text_tokens", &self.n_text_tokens())
            .field("special", &self.special_ids.len())
            .field("eos", &self.eos)
            .finish_non_exhaustive()
    }
}

impl Vocabulary {
    /// The mask size: ids are `0..n_vocab()`.
    #[inline]
    pub fn n_vocab(&self) -> usize {
        self.n_vocab as usize
    }

    /// How many ids are text tokens (not special).
    pub fn n_text_tokens(&self) -> usize {
        self.n_vocab() - self.special_ids.len()
    }

    /// `id` as a token of this vocabulary, if it is below `n_vocab`.
    #[inline]
    pub fn token(&self, id: u32) -> Option<TokenId> {
        if id < self.n_vocab {
            TokenId::new(id)
        } else {
            None
        }
    }

    /// The exact bytes of token `id`; empty for special tokens.
    ///
    /// # Panics
    ///
    /// If `id >= n_vocab()` (use [`Vocabulary::get_bytes`] for ids from outside).
    #[inline]
    pub fn bytes(&self, id: TokenId) -> &[u8] {
        let i = id.index();
        assert!(
            i < self.n_vocab(),
            "token id {id} out of range (n_vocab {})",
            self.n_vocab
        );
        &self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The bytes of token `id`, or `None` if it is out of range.
    #[inline]
    pub fn get_bytes(&self, id: TokenId) -> Option<&[u8]> {
        (id.index() < self.n_vocab()).then(|| self.bytes(id))
    }

    /// Whether `id` is special (a control token, an EOS id, or unused) — never text. Ids out of
    /// range are not special (they are not tokens at all).
    #[inline]
    pub fn is_special(&self, id: TokenId) -> bool {
        let i = id.index();
        i < self.n_vocab() && self.special[i / 64] >> (i % 64) & 1 == 1
    }

    /// Whether `id` is a token of the vocabulary — text, a named special or an EOS id — not an
    /// unused id. Out-of-range ids are not.
    pub fn is_defined(&self, id: TokenId) -> bool {
        id.index() < self.n_vocab()
            && (!self.is_special(id) || self.is_eos(id) || self.special_name(id).is_some())
    }

    /// Whether `id` can be read as text: a text token whose bytes do not hold the token
    /// marker `0xFF` (no grammar's text matches that byte; see `sieve_ir::token`).
    pub fn is_text_readable(&self, id: TokenId) -> bool {
        id.index() < self.n_vocab()
            && !self.is_special(id)
            && !self.bytes(id).contains(&sieve_ir::token::TOKEN_MARKER)
    }

    /// Every special id (named, EOS and unused), sorted.
    pub fn special_ids(&self) -> &[TokenId] {
        &self.special_ids
    }

    /// The EOS (stop) ids, in priority order: a matcher allows them iff the output is complete.
    pub fn eos_ids(&self) -> &[TokenId] {
        &self.eos
    }

    /// Whether `id` is one of the EOS ids.
    pub fn is_eos(&self, id: TokenId) -> bool {
        self.eos.contains(&id)
    }

    /// The special token named `name` (e.g. `"<|endoftext|>"`), if any.
    pub fn special_by_name(&self, name: &str) -> Option<TokenId> {
        self.by_name
            .binary_search_by(|&i| (*self.names[i as usize].0).cmp(name))
            .ok()
            .map(|k| self.names[self.by_name[k] as usize].1)
    }

    /// The name of special token `id`, if it has one (unused ids have none).
    pub fn special_name(&self, id: TokenId) -> Option<&str> {
        self.names
            .binary_search_by_key(&id, |&(_, t)| t)
            .ok()
            .map(|k| &*self.names[k].0)
    }

    /// The named special tokens, sorted by id.
    pub fn named_specials(&self) -> impl Iterator<Item = (&str, TokenId)> + '_ {
        self.names.iter().map(|(n, t)| (&**n, *t))
    }

    /// The concatenated bytes of `ids`. Special tokens (EOS included) decode to nothing, like
    /// `skip_special_tokens` in Hugging Face tokenizers: they are not text. An id at or above
    /// `n_vocab` is an [`Error::IdOutOfRange`] naming its position.
    pub fn decode(&self, ids: &[TokenId]) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        for (position, &id) in ids.iter().enumerate() {
            match self.get_bytes(id) {
                Some(b) => out.extend_from_slice(b),
                None => {
                    return Err(Error::IdOutOfRange {
                        id: id.as_u32().into(),
                        n_vocab: self.n_vocab,
                        context: format!("at position {position} of the decoded sequence"),
                    })
                }
            }
        }
        Ok(out)
    }

    /// This vocabulary with `ids` as its EOS ids (in this order, duplicates dropped). EOS ids
    /// become special if they were not: an end-of-sequence marker is never text. An id out of
    /// range is an error. An empty list is allowed (nothing ends generation but a limit).
    pub fn with_eos(mut self, ids: impl IntoIterator<Item = TokenId>) -> Result<Self, Error> {
        let mut eos: Vec<TokenId> = Vec::new();
        for id in ids {
            if id.index() >= self.n_vocab() {
                return Err(Error::IdOutOfRange {
                    id: id.as_u32().into(),
                    n_vocab: self.n_vocab,
                    context: "EOS id".to_owned(),
                });
            }
            if !eos.contains(&id) {
                eos.push(id);
            }
        }
        let mut changed = false;
        for &id in &eos {
            if !self.is_special(id) {
                let i = id.index();
                self.special[i / 64] |= 1 << (i % 64);
                changed = true;
                // Clear its bytes: offsets after `i` shift down by the token's length.
                let (start, end) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
                let len = (end - start) as u32;
                self.bytes.drain(start..end);
                for o in &mut self.offsets[i + 1..] {
                    *o -= len;
                }
            }
        }
        if changed {
            self.special_ids = special_list(&self.special, self.n_vocab);
        }
        self.eos = eos;
        Ok(self)
    }

    /// This vocabulary with the special tokens named `names` as EOS ids (see
    /// [`Vocabulary::with_eos`]); a name it does not have is an [`Error::UnknownName`].
    pub fn with_eos_names(self, names: &[&str]) -> Result<Self, Error> {
        let ids = names
            .iter()
            .map(|&name| {
                self.special_by_name(name)
                    .ok_or_else(|| Error::UnknownName {
                        name: name.to_owned(),
                        context: "EOS token".to_owned(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.with_eos(ids)
    }

    /// The default EOS ids: the named specials listed in [`DEFAULT_EOS_NAMES`], in that order.
    pub(crate) fn default_eos(&self) -> Vec<TokenId> {
        DEFAULT_EOS_NAMES
            .iter()
            .filter_map(|n| self.special_by_name(n))
            .collect()
    }

    /// The token trie over the text tokens (see [`TokenTrie`](crate::TokenTrie)).
    pub fn trie(&self) -> crate::TokenTrie {
        crate::TokenTrie::new(self)
    }

    /// Loads a vocabulary from an entry of a `manifest.json` (see [`crate::manifest`]); relative
    /// paths are resolved against `base_dir`.
    pub fn from_manifest_entry(entry: &serde_json::Value, base_dir: &Path) -> Result<Self, Error> {
        crate::manifest::load_entry(entry, base_dir)
    }

    /// GPT-2's `r50k_base`, shipped inside this crate (OpenAI tiktoken, MIT): 50257 ids,
    /// `<|endoftext|>` = 50256 is special and the EOS. Parsed once, on first use.
    pub fn embedded_default() -> &'static Vocabulary {
        crate::embedded::get()
    }
}

fn special_list(bits: &[u64], n_vocab: u32) -> Vec<TokenId> {
    (0..n_vocab as usize)
        .filter(|&i| bits[i / 64] >> (i % 64) & 1 == 1)
        .map(TokenId::from_index)
        .collect()
}

/// A definition of one id while loading: where its bytes are in the builder's buffer, or its
/// special name.
#[derive(Clone, Copy)]
enum Slot {
    Unset,
    Text { start: u32, end: u32 },
    Special { name: u32 },
}

/// Collects token definitions in any id order; `finish` lays them out by id.
pub(crate) struct Builder {
    buf: Vec<u8>,
    slots: Vec<Slot>,
    /// Where each id was defined (a line or a JSON path), only kept for error messages.
    names: Vec<String>,
}

impl Builder {
    pub(crate) fn new() -> Builder {
        Builder {
            buf: Vec::new(),
            slots: Vec::new(),
            names: Vec::new(),
        }
    }

    pub(crate) fn with_capacity(tokens: usize, bytes: usize) -> Builder {
        Builder {
            buf: Vec::with_capacity(bytes),
            slots: Vec::with_capacity(tokens),
            names: Vec::new(),
        }
    }

    fn slot(&mut self, id: u64, context: &dyn Fn() -> String) -> Result<&mut Slot, Error> {
        if id >= u64::from(MAX_N_VOCAB) {
            return Err(Error::IdOutOfRange {
                id,
                n_vocab: MAX_N_VOCAB,
                context: format!("{}; the limit is MAX_N_VOCAB", context()),
            });
        }
        let i = id as usize;
        if i >= self.slots.len() {
            self.slots.resize(i + 1, Slot::Unset);
        }
        Ok(&mut self.slots[i])
    }

    /// Reserves room and returns the buffer to append a text token's bytes to; call
    /// [`Builder::commit_text`] after appending.
    pub(crate) fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Defines `id` as the text bytes appended to the buffer since `start`. `describe` says
    /// where the definition is (for the duplicate-id error); `previous` describes the earlier
    /// definition site when it is called.
    pub(crate) fn commit_text(
        &mut self,
        id: u64,
        start: usize,
        describe: &dyn Fn() -> String,
        previous: &dyn Fn(u64) -> String,
    ) -> Result<(), Error> {
        let end = self.buf.len();
        if end > MAX_TOTAL_BYTES {
            return Err(Error::TooLarge(format!(
                "token bytes exceed {MAX_TOTAL_BYTES} bytes in total"
            )));
        }
        let slot = self.slot(id, describe)?;
        if !matches!(slot, Slot::Unset) {
            return Err(Error::DuplicateId {
                id: id as u32,
                first: previous(id),
                second: describe(),
            });
        }
        *slot = Slot::Text {
            start: start as u32,
            end: end as u32,
        };
        Ok(())
    }

    /// Defines `id` as the special token `name`, replacing any earlier definition when
    /// `override_existing` (Hugging Face added tokens override the model's entry).
    pub(crate) fn set_special(
        &mut self,
        id: u64,
        name: &str,
        override_existing: bool,
        describe: &dyn Fn() -> String,
        previous: &dyn Fn(u64) -> String,
    ) -> Result<(), Error> {
        let index = self.names.len() as u32;
        let slot = self.slot(id, describe)?;
        if !override_existing && !matches!(slot, Slot::Unset) {
            return Err(Error::DuplicateId {
                id: id as u32,
                first: previous(id),
                second: describe(),
            });
        }
        *slot = Slot::Special { name: index };
        self.names.push(name.to_owned());
        Ok(())
    }

    /// Defines `id` as text `bytes`, replacing any earlier definition.
    pub(crate) fn override_text(&mut self, id: u64, bytes: &[u8]) -> Result<(), Error> {
        let start = self.buf.len() as u32;
        self.buf.extend_from_slice(bytes);
        let end = self.buf.len() as u32;
        let slot = self.slot(id, &|| "added token".to_owned())?;
        *slot = Slot::Text { start, end };
        Ok(())
    }

    /// Lays the tokens out by id with `n_vocab` ids (default: one past the largest defined
    /// id). Undefined ids and empty text tokens become special; special names must be unique.
    pub(crate) fn finish(self, n_vocab: Option<u64>) -> Result<Vocabulary, Error> {
        let defined = self.slots.len() as u64;
        let n = match n_vocab {
            None => defined,
            Some(n) if n < defined => {
                return Err(Error::BadNVocab {
                    n_vocab: n,
                    message: format!("the vocabulary defines ids up to {}", defined - 1),
                })
            }
            Some(n) if n > u64::from(MAX_N_VOCAB) => {
                return Err(Error::BadNVocab {
                    n_vocab: n,
                    message: format!("above the limit MAX_N_VOCAB = {MAX_N_VOCAB}"),
                })
            }
            Some(n) => n,
        };
        let n_vocab = n as u32;
        let n = n as usize;
        let mut bytes = Vec::with_capacity(self.buf.len());
        let mut offsets = Vec::with_capacity(n + 1);
        let mut special = vec![0u64; n.div_ceil(64)];
        let mut names: Vec<(Box<str>, TokenId)> = Vec::new();
        offsets.push(0u32);
        for i in 0..n {
            match self.slots.get(i).copied().unwrap_or(Slot::Unset) {
                Slot::Text { start, end } if end > start => {
                    bytes.extend_from_slice(&self.buf[start as usize..end as usize]);
                }
                Slot::Special { name } => {
                    special[i / 64] |= 1 << (i % 64);
                    names.push((
                        self.names[name as usize].clone().into_boxed_str(),
                        TokenId::from_index(i),
                    ));
                }
                Slot::Text { .. } | Slot::Unset => special[i / 64] |= 1 << (i % 64),
            }
            offsets.push(bytes.len() as u32);
        }
        let mut by_name: Vec<u32> = (0..names.len() as u32).collect();
        by_name.sort_by(|&a, &b| names[a as usize].0.cmp(&names[b as usize].0));
        for w in by_name.windows(2) {
            let (a, b) = (&names[w[0] as usize], &names[w[1] as usize]);
            if a.0 == b.0 {
                return Err(Error::DuplicateId {
                    id: b.1.as_u32(),
                    first: format!("special token {:?} with id {}", a.0, a.1),
                    second: format!("the same name with id {}", b.1),
                });
            }
        }
        let special_ids = special_list(&special, n_vocab);
        Ok(Vocabulary {
            n_vocab,
            bytes,
            offsets,
            special,
            special_ids,
            names,
            by_name,
            eos: Vec::new(),
        })
    }
}

/// Token terminals resolve names and ids against the vocabulary.
impl sieve_ir::token::TokenNames for Vocabulary {
    fn n_vocab(&self) -> u32 {
        self.n_vocab
    }

    fn special_id(&self, name: &str) -> Option<u32> {
        self.special_by_name(name).map(|t| t.index() as u32)
    }

    fn text_id(&self, text: &[u8]) -> Option<u32> {
        (0..self.n_vocab())
            .map(TokenId::from_index)
            .find(|&t| !self.is_special(t) && self.bytes(t) == text)
            .map(|t| t.index() as u32)
    }

    fn is_defined(&self, id: u32) -> bool {
        self.token(id)
            .is_some_and(|t| Vocabulary::is_defined(self, t))
    }

    fn eos_and_unused(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = self
            .special_ids
            .iter()
            .filter(|&&t| self.is_eos(t) || self.special_name(t).is_none())
            .map(|t| t.index() as u32)
            .collect();
        ids.sort_unstable();
        ids
    }
}
