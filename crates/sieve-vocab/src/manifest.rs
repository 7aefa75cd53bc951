//! Entries of a tokenizer manifest (`shared/tokenizers/manifest.json`), the same object the
//! `sieve bench` engine protocol passes as `tokenizer`.
//!
//! Fields read (others are ignored):
//!
//! | field | meaning |
//! |---|---|
//! | `format` | `tiktoken`, `hf_tokenizer_json` or `plain` (required) |
//! | `path` | the file, relative to the base folder unless absolute (required) |
//! | `vocab_type` | `raw`, `byte_level`, `byte_fallback`, `metaspace`: overrides detection for `hf_tokenizer_json`; must be `raw` (or absent) otherwise |
//! | `n_vocab` | the mask size |
//! | `special_tokens` | `{name: id}`: the special tokens of a tiktoken file; flagged special in the other formats too |
//! | `eos_token_ids` | the EOS ids, in order (when absent: the format's default rule) |
//!
//! Errors in the entry name the field (`special_tokens["<|x|>"]`); errors in the file it
//! points to name the file.

use crate::error::{read_file, Error};
use crate::{hf, plain, tiktoken, VocabType, Vocabulary};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn field<'a>(entry: &'a Value, name: &str) -> Option<&'a Value> {
    entry.get(name).filter(|v| !v.is_null())
}

fn u32_at(value: &Value, path: &str) -> Result<u32, Error> {
    value
        .as_u64()
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| Error::content(path, format!("expected a token id (u32), found {value}")))
}

fn string_at<'a>(entry: &'a Value, name: &str) -> Result<&'a str, Error> {
    match field(entry, name) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(Error::content(
            name,
            format!("expected a string, found {other}"),
        )),
        None => Err(Error::content(name, "missing (required)")),
    }
}

/// Loads the vocabulary an entry describes; relative `path`s are resolved against `base_dir`.
pub fn load_entry(entry: &Value, base_dir: &Path) -> Result<Vocabulary, Error> {
    if !entry.is_object() {
        return Err(Error::content(
            "",
            "a tokenizer entry must be a JSON object",
        ));
    }
    let format = string_at(entry, "format")?;
    let path = base_dir.join(string_at(entry, "path")?);
    let vocab_type = match field(entry, "vocab_type") {
        None => None,
        Some(Value::String(s)) => Some(VocabType::from_name(s).ok_or_else(|| {
            Error::content(
                "vocab_type",
                format!("unknown vocab_type {s:?} (raw, byte_level, byte_fallback, metaspace)"),
            )
        })?),
        Some(other) => {
            return Err(Error::content(
                "vocab_type",
                format!("expected a string, found {other}"),
            ))
        }
    };
    let n_vocab = field(entry, "n_vocab")
        .map(|v| u32_at(v, "n_vocab"))
        .transpose()?;
    let mut specials = Vec::new();
    match field(entry, "special_tokens") {
        None => {}
        Some(Value::Object(map)) => {
            for (name, id) in map {
                let path = format!("special_tokens[{}]", Value::from(name.as_str()));
                specials.push((name.clone(), u32_at(id, &path)?));
            }
        }
        Some(other) => {
            return Err(Error::content(
                "special_tokens",
                format!("expected an object {{name: id}}, found {other}"),
            ))
        }
    }
    let eos = match field(entry, "eos_token_ids") {
        None => None,
        Some(Value::Array(ids)) => Some(
            ids.iter()
                .enumerate()
                .map(|(i, v)| u32_at(v, &format!("eos_token_ids[{i}]")))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(other) => {
            return Err(Error::content(
                "eos_token_ids",
                format!("expected an array of ids, found {other}"),
            ))
        }
    };
    if format != "hf_tokenizer_json" && vocab_type.is_some_and(|t| t != VocabType::Raw) {
        return Err(Error::content(
            "vocab_type",
            format!("a {format} vocabulary is raw bytes; vocab_type must be \"raw\""),
        ));
    }
    match format {
        "tiktoken" => {
            let mut options = tiktoken::Options::new();
            options.special_tokens = specials;
            options.n_vocab = n_vocab;
            options.eos = eos;
            tiktoken::load(&path, &options)
        }
        "hf_tokenizer_json" => {
            let mut options = hf::Options::new();
            options.vocab_type = vocab_type;
            options.special_tokens = specials;
            options.n_vocab = n_vocab;
            options.eos = eos;
            hf::load(&path, &options)
        }
        "plain" => {
            let mut options = plain::Options::new();
            options.n_vocab = n_vocab;
            options.eos = eos;
            let vocab = plain::load(&path, &options)?;
            // The list names its own specials; the entry's must agree.
            for (name, id) in &specials {
                if vocab.token(*id).map(|t| vocab.special_name(t)) != Some(Some(name.as_str())) {
                    return Err(Error::content(
                        format!("special_tokens[{}]", Value::from(name.as_str())),
                        format!(
                            "id {id} is not the special token {name:?} in {}",
                            path.display()
                        ),
                    ));
                }
            }
            Ok(vocab)
        }
        other => Err(Error::content(
            "format",
            format!("unknown format {other:?} (tiktoken, hf_tokenizer_json, plain)"),
        )),
    }
}

/// Loads entry `name` of the manifest file at `manifest` (paths relative to its folder).
pub fn load_named(manifest: &Path, name: &str) -> Result<Vocabulary, Error> {
    let text = read_file(manifest)?;
    let value: Value =
        serde_json::from_slice(&text).map_err(|e| Error::json(&e).in_file(manifest))?;
    let entry = value.get(name).ok_or_else(|| {
        Error::UnknownName {
            name: name.to_owned(),
            context: "tokenizer entry of the manifest".to_owned(),
        }
        .in_file(manifest)
    })?;
    let base: PathBuf = manifest.parent().map(Path::to_path_buf).unwrap_or_default();
    load_entry(entry, &base).map_err(|e| match e {
        e @ (Error::Io { .. } | Error::InFile { .. }) => e,
        e => Error::InFile {
            path: manifest.join(name),
            error: Box::new(e),
        },
    })
}
