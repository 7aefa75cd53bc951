//! `sieve._sieve`: the native half of the `sieve` Python package (the Python half, under
//! `python/sieve/`, adds the torch helpers and the transformers logits processor).
//!
//! The classes wrap the runtime of `sieve_matcher` one to one:
//!
//! | Python | Rust |
//! |---|---|
//! | `Tokenizer` | `Arc<sieve_matcher::Tokenizer>` (a `sieve_vocab::Vocabulary` and its trie) |
//! | `CompiledGrammar` | `Arc<sieve_matcher::CompiledGrammar>` and the schema's warnings |
//! | `Matcher` | `sieve_matcher::Matcher` |
//! | `fill_next_token_bitmasks` | `sieve_matcher::fill_next_token_bitmasks` |
//! | `DraftTree` | `sieve_matcher::DraftTree` |
//! | `Matcher.fill_draft_bitmasks`, `.traverse_draft_tree`, `.fill_draft_tree_bitmasks` | `sieve_matcher::Matcher::fill_draft_bitmasks`, `…::fill_draft_tree_bitmasks` |
//! | `fill_draft_tree_bitmasks_batch`, `validate_tokens_batch` | the functions of the same names |
//!
//! # Invariants
//!
//! - Every compile goes through the same front-ends and `sieve_matcher::pipeline` stages as
//!   the `sieve` command, so a grammar compiles the same way from Python and from Rust.
//! - Bad input raises a Python exception (`CompileError`, `ValueError`, `TypeError`,
//!   `LimitError`), never a panic; a refused matcher call leaves the matcher unchanged (the
//!   Rust contract).
//! - Compiling, tokenizer loading and mask filling run with the GIL released; nothing that
//!   holds Python objects crosses into those sections.
//! - `Tokenizer` and `CompiledGrammar` are immutable and shareable across threads; they are
//!   not picklable (pickling raises `TypeError`: compile again in the other process).

mod bitmask;
mod compile;
mod matcher;
mod speculative;
mod tokenizer;

use pyo3::prelude::*;

pyo3::create_exception!(
    sieve,
    CompileError,
    pyo3::exceptions::PyValueError,
    "A grammar, regex or JSON Schema that cannot be compiled; the message locates the fault."
);

pyo3::create_exception!(
    sieve,
    LimitError,
    pyo3::exceptions::PyRuntimeError,
    "The recogniser reached one of its configured limits while filling a mask or accepting \
     input; the matcher is unchanged."
);

/// The raise for an object that must be rebuilt rather than pickled.
fn not_picklable(what: &str) -> PyErr {
    pyo3::exceptions::PyTypeError::new_err(format!(
        "a sieve.{what} is not picklable: build it again in the other process \
         (it is shareable across threads of one process)"
    ))
}

/// The module `sieve._sieve`.
#[pymodule]
fn _sieve(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("CompileError", py.get_type::<CompileError>())?;
    m.add("LimitError", py.get_type::<LimitError>())?;
    m.add_class::<tokenizer::Tokenizer>()?;
    m.add_class::<compile::CompiledGrammar>()?;
    m.add_class::<matcher::Matcher>()?;
    m.add_function(wrap_pyfunction!(compile::compile_json_schema, m)?)?;
    m.add_function(wrap_pyfunction!(compile::compile_grammar, m)?)?;
    m.add_function(wrap_pyfunction!(compile::compile_regex, m)?)?;
    m.add_function(wrap_pyfunction!(compile::compile_lark, m)?)?;
    m.add_function(wrap_pyfunction!(compile::compile_structural_tag, m)?)?;
    m.add_function(wrap_pyfunction!(compile::compile_tools, m)?)?;
    m.add_function(wrap_pyfunction!(bitmask::fill_next_token_bitmasks, m)?)?;
    m.add_class::<speculative::DraftTree>()?;
    m.add_function(wrap_pyfunction!(
        speculative::fill_draft_tree_bitmasks_batch,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(speculative::validate_tokens_batch, m)?)?;
    Ok(())
}
