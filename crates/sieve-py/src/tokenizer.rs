//! `sieve.Tokenizer`: a vocabulary loaded once and shared by every grammar compiled against
//! it.
//!
//! Loading goes through `sieve_vocab`'s loaders (tokenizer.json, .tiktoken, plain lists), and
//! a transformers tokenizer is read through its backend's tokenizer.json, so the bytes of
//! every token are the ones the Rust side computes.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use sieve_vocab::Vocabulary;

/// A tokenizer's vocabulary prepared for masks: every token's bytes, the special tokens,
/// the EOS ids, and the shared store of token classifications.
///
/// Build one per tokenizer (``from_file`` or ``from_huggingface``) and compile every grammar
/// against it. Immutable and shareable across threads; not picklable.
#[pyclass(module = "sieve", frozen)]
pub struct Tokenizer {
    pub(crate) inner: Arc<sieve_matcher::Tokenizer>,
}

/// A loader's error, which names the file (when there is one) and the place in it.
fn load_error(error: sieve_vocab::Error) -> PyErr {
    PyValueError::new_err(error.to_string())
}

impl Tokenizer {
    /// Prepares `vocab` with the GIL released.
    fn build(py: Python<'_>, vocab: Vocabulary) -> Tokenizer {
        let inner = py.detach(|| Arc::new(sieve_matcher::Tokenizer::new(Arc::new(vocab))));
        Tokenizer { inner }
    }

    fn vocabulary(&self) -> &Vocabulary {
        self.inner.vocabulary()
    }

    fn token_id(&self, id: i64) -> PyResult<sieve_vocab::TokenId> {
        u32::try_from(id)
            .ok()
            .and_then(|id| self.vocabulary().token(id))
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "unknown token id {id}: the vocabulary has {} ids",
                    self.vocabulary().n_vocab()
                ))
            })
    }
}

#[pymethods]
impl Tokenizer {
    /// Loads a ``tokenizer.json`` (Hugging Face; a ``tokenizer_config.json`` beside it names
    /// the EOS token), a ``.tiktoken`` file, or a plain list (one token per line, as a JSON
    /// string, ``hex:…`` or ``special:…``), by extension.
    ///
    /// ``vocab_size`` widens the vocabulary to the model's logits (ids past the tokenizer's
    /// are never allowed); ``stop_token_ids`` replaces the EOS ids the file gives.
    /// Raises ``ValueError`` with the file and the location of the fault.
    #[staticmethod]
    #[pyo3(signature = (path, *, vocab_size=None, stop_token_ids=None))]
    fn from_file(
        py: Python<'_>,
        path: PathBuf,
        vocab_size: Option<u32>,
        stop_token_ids: Option<Vec<u32>>,
    ) -> PyResult<Tokenizer> {
        let (n_vocab, eos) = (vocab_size, stop_token_ids);
        let vocab = py.detach(|| match path.extension().and_then(|e| e.to_str()) {
            Some("json") => {
                let mut options = sieve_vocab::hf::Options::new();
                options.n_vocab = n_vocab;
                options.eos = eos;
                sieve_vocab::hf::load(&path, &options)
            }
            Some("tiktoken") => {
                let mut options = sieve_vocab::tiktoken::Options::new();
                if let Some(n) = n_vocab {
                    options = options.n_vocab(n);
                }
                if let Some(eos) = eos {
                    options = options.eos(eos);
                }
                sieve_vocab::tiktoken::load(&path, &options)
            }
            _ => {
                let mut options = sieve_vocab::plain::Options::new();
                if let Some(n) = n_vocab {
                    options = options.n_vocab(n);
                }
                if let Some(eos) = eos {
                    options = options.eos(eos);
                }
                sieve_vocab::plain::load(&path, &options)
            }
        });
        Ok(Tokenizer::build(py, vocab.map_err(load_error)?))
    }

    /// A transformers tokenizer (a "fast" one: its ``backend_tokenizer`` gives the
    /// tokenizer.json the vocabulary is read from). The EOS ids are ``stop_token_ids`` if
    /// given, otherwise the tokenizer's ``eos_token``. ``vocab_size`` defaults to
    /// ``len(tokenizer)``; give the model's ``config.vocab_size`` when its logits are wider.
    #[staticmethod]
    #[pyo3(signature = (tokenizer, *, vocab_size=None, stop_token_ids=None))]
    fn from_huggingface(
        py: Python<'_>,
        tokenizer: &Bound<'_, PyAny>,
        vocab_size: Option<u32>,
        stop_token_ids: Option<Vec<u32>>,
    ) -> PyResult<Tokenizer> {
        let backend = tokenizer.getattr("backend_tokenizer").map_err(|_| {
            PyTypeError::new_err(
                "from_huggingface needs a transformers fast tokenizer (one with a \
                 `backend_tokenizer`); load it with use_fast=True, or use Tokenizer.from_file \
                 on its tokenizer.json",
            )
        })?;
        let json: String = backend.call_method0("to_str")?.extract()?;
        let mut options = sieve_vocab::hf::Options::new();
        options.n_vocab = match vocab_size {
            Some(n) => Some(n),
            None => Some(tokenizer.len()?.try_into().map_err(|_| {
                PyValueError::new_err("the tokenizer has more ids than a vocabulary can hold")
            })?),
        };
        match stop_token_ids {
            Some(ids) => options.eos = Some(ids),
            None => {
                let name = tokenizer.getattr("eos_token")?;
                if !name.is_none() {
                    options.eos_token = Some(name.str()?.to_string());
                }
            }
        }
        let vocab = py.detach(|| sieve_vocab::hf::parse(json.as_bytes(), &options));
        Ok(Tokenizer::build(
            py,
            vocab.map_err(|e| {
                PyValueError::new_err(format!("the tokenizer's tokenizer.json: {e}"))
            })?,
        ))
    }

    /// The number of token ids (the width of a logits row and of a bitmask row in bits).
    #[getter]
    fn vocab_size(&self) -> usize {
        self.vocabulary().n_vocab()
    }

    /// The ids that end generation (allowed once the output is a complete sentence).
    #[getter]
    fn eos_token_ids(&self) -> Vec<u32> {
        self.vocabulary()
            .eos_ids()
            .iter()
            .map(|id| id.as_u32())
            .collect()
    }

    /// The bytes of token ``id`` (empty for special tokens). Raises ``ValueError`` for an id
    /// outside the vocabulary.
    fn token_bytes(&self, id: i64) -> PyResult<Vec<u8>> {
        let token = self.token_id(id)?;
        Ok(self.vocabulary().bytes(token).to_vec())
    }

    /// Whether token ``id`` is special (never text: EOS, control tokens, unused ids).
    fn is_special(&self, id: i64) -> PyResult<bool> {
        let token = self.token_id(id)?;
        Ok(self.vocabulary().is_special(token))
    }

    /// The same vocabulary (shared, not reloaded) with empty caches: grammars compiled
    /// against it reuse none of the rule automata or token classifications of grammars
    /// compiled against this one. For measuring a first request's cost.
    fn with_fresh_caches(&self) -> Tokenizer {
        Tokenizer {
            inner: Arc::new(self.inner.with_fresh_caches()),
        }
    }

    fn __reduce__(&self) -> PyResult<()> {
        Err(crate::not_picklable("Tokenizer"))
    }

    fn __repr__(&self) -> String {
        format!(
            "sieve.Tokenizer(vocab_size={}, eos_token_ids={:?})",
            self.vocab_size(),
            self.eos_token_ids()
        )
    }
}
