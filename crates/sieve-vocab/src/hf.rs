//! Hugging Face `tokenizer.json`: `model.vocab` (token string → id; a `[piece, score]` list
//! for Unigram models) and `added_tokens`.
//!
//! # Token string → bytes ([`VocabType`])
//!
//! Chosen from the file unless [`Options::vocab_type`] says otherwise, first match wins:
//! 1. [`VocabType::ByteLevel`] if the `decoder` or `pre_tokenizer` contains a `ByteLevel` step
//!    (GPT-2, Qwen, Llama-3);
//! 2. [`VocabType::ByteFallback`] if `model.byte_fallback` is true or the decoder contains
//!    `ByteFallback` (SentencePiece BPE: Llama-2, Mistral);
//! 3. [`VocabType::Metaspace`] if the decoder or pre-tokenizer contains `Metaspace`, or the
//!    decoder replaces `▁` (SentencePiece without byte fallback);
//! 4. [`VocabType::Raw`] otherwise.
//!
//! WordPiece models and BPE models with a `continuing_subword_prefix` or `end_of_word_suffix`
//! are rejected ([`Error::Unsupported`]): their tokens' bytes depend on the neighbours.
//!
//! # Added tokens
//!
//! `special: true` → a special token named by its `content` (it replaces the model's entry
//! with the same id). A non-special added token is text, decoded the way Hugging Face's
//! decoder does: like a model token, except that in byte-level mode a content with a character
//! outside the byte alphabet is its literal UTF-8.
//!
//! # Size and EOS
//!
//! `n_vocab` is one past the largest id unless [`Options::n_vocab`] gives more. EOS ids, first
//! rule that applies: [`Options::eos`] ids; else the token named by [`Options::eos_token`]
//! (which [`load`] fills from a sibling `tokenizer_config.json`'s `eos_token`, a string or
//! `{"content": …}`) followed by the specials named in
//! [`DEFAULT_EOS_NAMES`](crate::DEFAULT_EOS_NAMES); else just those defaults.
//!
//! # Errors
//!
//! JSON syntax and type errors carry serde_json's line and column ([`Error::Json`]); content
//! errors carry a JSON path such as `model.vocab["Ġthe"]` ([`Error::JsonContent`]).

use crate::error::{read_file, Error};
use crate::vocab::Builder;
use crate::{TokenId, Vocabulary};
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::borrow::Cow;
use std::fmt;
use std::path::Path;

/// How a `tokenizer.json` token string stands for bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VocabType {
    /// The string's UTF-8 bytes.
    Raw,
    /// GPT-2's byte↔unicode table: printable bytes `!`..`~`, `¡`..`¬`, `®`..`ÿ` are themselves,
    /// the other 68 bytes are U+0100.. in byte order (`Ġ` = space, `Ċ` = newline).
    ByteLevel,
    /// SentencePiece with byte fallback: `<0xNN>` is the byte NN; otherwise `▁` (U+2581) is a
    /// space and the rest is UTF-8.
    ByteFallback,
    /// SentencePiece without byte fallback: `▁` is a space, the rest UTF-8.
    Metaspace,
}

impl VocabType {
    /// The manifest's name (`raw`, `byte_level`, `byte_fallback`, `metaspace`).
    pub fn name(self) -> &'static str {
        match self {
            VocabType::Raw => "raw",
            VocabType::ByteLevel => "byte_level",
            VocabType::ByteFallback => "byte_fallback",
            VocabType::Metaspace => "metaspace",
        }
    }

    /// The type with manifest name `name`.
    pub fn from_name(name: &str) -> Option<VocabType> {
        [
            VocabType::Raw,
            VocabType::ByteLevel,
            VocabType::ByteFallback,
            VocabType::Metaspace,
        ]
        .into_iter()
        .find(|t| t.name() == name)
    }

    /// Appends the bytes that `token` stands for to `out`; `Err` names the character that is
    /// not in the byte-level alphabet.
    pub fn token_bytes(self, token: &str, out: &mut Vec<u8>) -> Result<(), char> {
        match self {
            VocabType::Raw => out.extend_from_slice(token.as_bytes()),
            VocabType::ByteLevel => {
                for c in token.chars() {
                    out.push(byte_level_byte(c).ok_or(c)?);
                }
            }
            VocabType::ByteFallback => match fallback_byte(token) {
                Some(b) => out.push(b),
                None => push_metaspace(token, out),
            },
            VocabType::Metaspace => push_metaspace(token, out),
        }
        Ok(())
    }
}

/// `<0xNN>` → NN (either case of hex digits).
fn fallback_byte(token: &str) -> Option<u8> {
    let hex = token.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

fn push_metaspace(token: &str, out: &mut Vec<u8>) {
    for (i, part) in token.split('\u{2581}').enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        out.extend_from_slice(part.as_bytes());
    }
}

/// Whether GPT-2's table maps byte `b` to the character with the same code.
fn byte_is_printable(b: u8) -> bool {
    matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF)
}

/// The byte a GPT-2 byte-level character stands for.
pub fn byte_level_byte(c: char) -> Option<u8> {
    const TABLE: [u8; 68] = {
        let mut t = [0u8; 68];
        let mut n = 0;
        let mut b = 0usize;
        while b < 256 {
            let byte = b as u8;
            let printable =
                (byte >= b'!' && byte <= b'~') || (byte >= 0xA1 && byte <= 0xAC) || (byte >= 0xAE);
            if !printable {
                t[n] = byte;
                n += 1;
            }
            b += 1;
        }
        t
    };
    let code = c as u32;
    if code < 256 {
        let b = code as u8;
        byte_is_printable(b).then_some(b)
    } else {
        TABLE.get((code - 256) as usize).copied()
    }
}

/// The GPT-2 byte-level character for byte `b` (the inverse of [`byte_level_byte`]).
pub fn byte_level_char(b: u8) -> char {
    if byte_is_printable(b) {
        char::from(b)
    } else {
        let n = (0..b).filter(|&x| !byte_is_printable(x)).count() as u32;
        char::from_u32(256 + n).expect("below U+0144")
    }
}

/// How to read a `tokenizer.json`.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Options {
    /// Overrides the detected [`VocabType`].
    pub vocab_type: Option<VocabType>,
    /// The mask size (default: one past the largest id).
    pub n_vocab: Option<u32>,
    /// EOS ids (overrides every other rule).
    pub eos: Option<Vec<u32>>,
    /// The name of the EOS token as a `tokenizer_config.json` gives it.
    pub eos_token: Option<String>,
    /// More tokens to flag special, as `(name, id)` (e.g. a manifest's `special_tokens`).
    pub special_tokens: Vec<(String, u32)>,
}

impl Options {
    /// Everything detected from the file.
    pub fn new() -> Options {
        Options::default()
    }

    /// Sets the vocabulary type instead of detecting it.
    pub fn vocab_type(mut self, t: VocabType) -> Options {
        self.vocab_type = Some(t);
        self
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

    /// Sets the EOS token's name (as `tokenizer_config.json`'s `eos_token`).
    pub fn eos_token(mut self, name: impl Into<String>) -> Options {
        self.eos_token = Some(name.into());
        self
    }

    /// Flags `id` special with name `name`.
    pub fn special(mut self, name: impl Into<String>, id: u32) -> Options {
        self.special_tokens.push((name.into(), id));
        self
    }
}

/// A string that borrows from the input when it has no escapes.
struct Str<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Str<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V(std::marker::PhantomData))
    }
}

/// `model.vocab`: a map (BPE, WordLevel, WordPiece) or a list of `[piece, score]` (Unigram).
/// Entries are kept in file order as `(token, id)`.
struct VocabField<'a> {
    entries: Vec<(Str<'a>, u64)>,
    is_list: bool,
}

impl<'de: 'a, 'a> Deserialize<'de> for VocabField<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = VocabField<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map from token to id, or a list of [token, score]")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some((k, v)) = map.next_entry::<Str<'a>, u64>()? {
                    entries.push((k, v));
                }
                Ok(VocabField {
                    entries,
                    is_list: false,
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some((k, _score)) = seq.next_element::<(Str<'a>, IgnoredAny)>()? {
                    let id = entries.len() as u64;
                    entries.push((k, id));
                }
                Ok(VocabField {
                    entries,
                    is_list: true,
                })
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
struct Added<'a> {
    id: u64,
    #[serde(borrow)]
    content: Str<'a>,
    #[serde(default)]
    special: bool,
}

#[derive(Deserialize)]
struct Model<'a> {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(borrow)]
    vocab: VocabField<'a>,
    #[serde(default)]
    byte_fallback: Option<bool>,
    #[serde(default)]
    continuing_subword_prefix: Option<String>,
    #[serde(default)]
    end_of_word_suffix: Option<String>,
}

#[derive(Deserialize)]
struct File<'a> {
    #[serde(borrow, default)]
    added_tokens: Vec<Added<'a>>,
    #[serde(default)]
    pre_tokenizer: Option<serde_json::Value>,
    #[serde(default)]
    decoder: Option<serde_json::Value>,
    #[serde(borrow)]
    model: Model<'a>,
}

/// Whether `step` is, or is a `Sequence` containing, a step of type `kind` satisfying `also`.
fn has_step(
    step: Option<&serde_json::Value>,
    kind: &str,
    also: &dyn Fn(&serde_json::Value) -> bool,
) -> bool {
    let Some(step) = step else { return false };
    if step.get("type").and_then(|t| t.as_str()) == Some(kind) && also(step) {
        return true;
    }
    ["decoders", "pretokenizers"].iter().any(|key| {
        step.get(*key)
            .and_then(|s| s.as_array())
            .is_some_and(|steps| steps.iter().any(|s| has_step(Some(s), kind, also)))
    })
}

fn detect(file: &File<'_>) -> VocabType {
    let any = |_: &serde_json::Value| true;
    let (dec, pre) = (file.decoder.as_ref(), file.pre_tokenizer.as_ref());
    if has_step(dec, "ByteLevel", &any) || has_step(pre, "ByteLevel", &any) {
        VocabType::ByteLevel
    } else if file.model.byte_fallback == Some(true) || has_step(dec, "ByteFallback", &any) {
        VocabType::ByteFallback
    } else if has_step(dec, "Metaspace", &any)
        || has_step(pre, "Metaspace", &any)
        || has_step(dec, "Replace", &|s| {
            s.pointer("/pattern/String").and_then(|p| p.as_str()) == Some("\u{2581}")
        })
    {
        VocabType::Metaspace
    } else {
        VocabType::Raw
    }
}

/// `model.vocab["tok"]` or `model.vocab[3][0]`.
fn vocab_path(field: &VocabField<'_>, index: usize, token: &str) -> String {
    if field.is_list {
        format!("model.vocab[{index}][0]")
    } else {
        format!("model.vocab[{}]", serde_json::Value::from(token))
    }
}

/// Parses the contents of a `tokenizer.json`.
pub fn parse(data: &[u8], options: &Options) -> Result<Vocabulary, Error> {
    let file: File<'_> = serde_json::from_slice(data).map_err(|e| Error::json(&e))?;
    let model = &file.model;
    match model.kind.as_deref() {
        Some("WordPiece") => {
            return Err(Error::Unsupported(
                "at model.type: WordPiece models (a token's bytes depend on its neighbours)"
                    .to_owned(),
            ))
        }
        None | Some("BPE" | "Unigram" | "WordLevel") => {}
        Some(other) => {
            return Err(Error::Unsupported(format!(
                "at model.type: unknown model type {other:?}"
            )))
        }
    }
    for (field, value) in [
        (
            "continuing_subword_prefix",
            &model.continuing_subword_prefix,
        ),
        ("end_of_word_suffix", &model.end_of_word_suffix),
    ] {
        if value.as_deref().is_some_and(|v| !v.is_empty()) {
            return Err(Error::Unsupported(format!(
                "at model.{field}: a non-empty {field} (a token's bytes would depend on its neighbours)"
            )));
        }
    }
    let vocab_type = options.vocab_type.unwrap_or_else(|| detect(&file));
    let entries = &model.vocab.entries;
    let mut builder = Builder::with_capacity(entries.len(), entries.len() * 8);
    // Index of the entry defining each id, for duplicate-id messages.
    let mut defined_by: Vec<u32> = Vec::new();
    for (index, (token, id)) in entries.iter().enumerate() {
        let start = builder.buffer().len();
        if let Err(c) = vocab_type.token_bytes(&token.0, builder.buffer()) {
            return Err(Error::content(
                vocab_path(&model.vocab, index, &token.0),
                format!(
                    "character {c:?} (U+{:04X}) is not in the GPT-2 byte-level alphabet",
                    c as u32
                ),
            ));
        }
        builder.commit_text(
            *id,
            start,
            &|| vocab_path(&model.vocab, index, &token.0),
            &|id| {
                let first = defined_by[id as usize] as usize;
                vocab_path(&model.vocab, first, &entries[first].0 .0)
            },
        )?;
        let i = *id as usize;
        if i >= defined_by.len() {
            defined_by.resize(i + 1, 0);
        }
        defined_by[i] = index as u32;
    }
    let mut scratch = Vec::new();
    for (index, added) in file.added_tokens.iter().enumerate() {
        let path = || format!("added_tokens[{index}]");
        if added.special {
            builder.set_special(added.id, &added.content.0, true, &path, &|_| String::new())?;
        } else {
            scratch.clear();
            if vocab_type
                .token_bytes(&added.content.0, &mut scratch)
                .is_err()
            {
                scratch.clear();
                scratch.extend_from_slice(added.content.0.as_bytes());
            }
            builder
                .override_text(added.id, &scratch)
                .map_err(|e| Error::content(path(), e.to_string()))?;
        }
    }
    for (name, id) in &options.special_tokens {
        builder.set_special(
            u64::from(*id),
            name,
            true,
            &|| format!("special token {name:?}"),
            &|_| String::new(),
        )?;
    }
    let vocab = builder.finish(options.n_vocab.map(u64::from))?;
    if let Some(ids) = &options.eos {
        return crate::tiktoken::finish_eos(vocab, Some(ids));
    }
    let mut eos: Vec<TokenId> = Vec::new();
    if let Some(name) = &options.eos_token {
        let id = vocab
            .special_by_name(name)
            .or_else(|| {
                file.added_tokens
                    .iter()
                    .find(|a| *a.content.0 == **name)
                    .and_then(|a| vocab.token(a.id.try_into().ok()?))
            })
            .or_else(|| {
                entries
                    .iter()
                    .find(|(t, _)| *t.0 == **name)
                    .and_then(|(_, id)| vocab.token((*id).try_into().ok()?))
            })
            .ok_or_else(|| Error::UnknownName {
                name: name.clone(),
                context: "the configured eos_token".to_owned(),
            })?;
        eos.push(id);
    }
    for id in vocab.default_eos() {
        if !eos.contains(&id) {
            eos.push(id);
        }
    }
    vocab.with_eos(eos)
}

/// The `eos_token` of a `tokenizer_config.json` (a string or `{"content": …}`), if any.
pub fn config_eos_token(config: &[u8]) -> Result<Option<String>, Error> {
    let value: serde_json::Value = serde_json::from_slice(config).map_err(|e| Error::json(&e))?;
    match value.get("eos_token") {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => match v.get("content").and_then(|c| c.as_str()) {
            Some(s) => Ok(Some(s.to_owned())),
            None => Err(Error::content(
                "eos_token",
                "expected a string or an object with a string `content`",
            )),
        },
    }
}

/// Reads a `tokenizer.json`. Unless `options` sets the EOS, a `tokenizer_config.json` in the
/// same folder, if there is one, supplies the EOS token's name.
pub fn load(path: &Path, options: &Options) -> Result<Vocabulary, Error> {
    let data = read_file(path)?;
    let mut options = options.clone();
    if options.eos.is_none() && options.eos_token.is_none() {
        let config = path.with_file_name("tokenizer_config.json");
        if config.is_file() {
            let text = read_file(&config)?;
            options.eos_token = config_eos_token(&text).map_err(|e| e.in_file(&config))?;
        }
    }
    parse(&data, &options).map_err(|e| e.in_file(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_level_table_is_a_bijection() {
        let mut seen = std::collections::HashSet::new();
        for b in 0..=255u8 {
            let c = byte_level_char(b);
            assert!(seen.insert(c));
            assert_eq!(byte_level_byte(c), Some(b), "{b}");
        }
        assert_eq!(byte_level_char(b' '), 'Ġ');
        assert_eq!(byte_level_char(b'\n'), 'Ċ');
        assert_eq!(byte_level_char(0), '\u{100}');
        assert_eq!(byte_level_byte('\u{144}'), None);
        assert_eq!(byte_level_byte(' '), None);
    }

    #[test]
    fn sentencepiece_pieces() {
        let bytes = |t: VocabType, s: &str| {
            let mut out = Vec::new();
            t.token_bytes(s, &mut out).unwrap();
            out
        };
        assert_eq!(bytes(VocabType::ByteFallback, "<0x0A>"), b"\n");
        assert_eq!(bytes(VocabType::ByteFallback, "<0xff>"), [0xff]);
        assert_eq!(bytes(VocabType::ByteFallback, "▁the▁"), b" the ");
        assert_eq!(bytes(VocabType::ByteFallback, "<0x0AB>"), b"<0x0AB>");
        assert_eq!(bytes(VocabType::Metaspace, "<0x0A>"), b"<0x0A>");
        assert_eq!(bytes(VocabType::Raw, "▁"), "▁".as_bytes());
    }
}
