//! Bitmasks as Python sees them, and the batch fill.
//!
//! A bitmask is an `int32` array of shape `(words,)` or `(batch, words)`, C-contiguous,
//! `words >= ceil(vocab_size / 32)`; bit `t` of a row is bit `t % 32` of word `t / 32` (the
//! layout of XGrammar and llguidance). It may be a NumPy array, a CPU torch tensor (filled in
//! place through the NumPy view torch gives of it) or a torch tensor on another device (filled
//! on the CPU, then copied over with `Tensor.copy_`).
//!
//! # Invariants
//!
//! - Rows are filled with the GIL released; the closure given the rows sees plain `u32`
//!   words (the `int32` buffer reinterpreted in place, never copied for NumPy and CPU
//!   tensors).
//! - A bitmask of the wrong dtype, rank or layout raises before anything is written.

use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::matcher::{matcher_error, Matcher};

/// Calls `fill(words, rows, words_per_row)` on the words of `bitmask`, wherever it lives.
pub(crate) fn with_rows<R>(
    bitmask: &Bound<'_, PyAny>,
    fill: impl FnOnce(&mut [u32], usize, usize) -> PyResult<R>,
) -> PyResult<R> {
    if bitmask.is_instance_of::<PyUntypedArray>() {
        return with_numpy_rows(bitmask, fill);
    }
    if bitmask.hasattr("device")? && bitmask.hasattr("numpy")? {
        let device: String = bitmask.getattr("device")?.getattr("type")?.extract()?;
        if device == "cpu" {
            return with_numpy_rows(&bitmask.call_method0("numpy")?, fill);
        }
        let cpu = bitmask.call_method1("to", ("cpu",))?;
        let result = with_numpy_rows(&cpu.call_method0("numpy")?, fill)?;
        bitmask.call_method1("copy_", (cpu,))?;
        return Ok(result);
    }
    Err(PyTypeError::new_err(format!(
        "a bitmask is an int32 numpy array or torch tensor (sieve.allocate_token_bitmask \
         makes one), not {}",
        bitmask.get_type().name()?
    )))
}

fn with_numpy_rows<R>(
    array: &Bound<'_, PyAny>,
    fill: impl FnOnce(&mut [u32], usize, usize) -> PyResult<R>,
) -> PyResult<R> {
    let untyped = array.cast::<PyUntypedArray>()?;
    let array = array.cast::<PyArrayDyn<i32>>().map_err(|_| {
        let dtype = untyped
            .dtype()
            .str()
            .map(|s| s.to_string())
            .unwrap_or_default();
        PyTypeError::new_err(format!(
            "a bitmask has dtype int32, this one {dtype} (sieve.allocate_token_bitmask makes \
             one)"
        ))
    })?;
    let (rows, words_per_row) = match *untyped.shape() {
        [words] => (1, words),
        [rows, words] => (rows, words),
        ref shape => {
            return Err(PyValueError::new_err(format!(
                "a bitmask has shape (words,) or (batch, words), this one {shape:?}"
            )))
        }
    };
    let mut view = array
        .try_readwrite()
        .map_err(|e| PyValueError::new_err(format!("the bitmask cannot be written: {e}")))?;
    let words = view.as_slice_mut().map_err(|_| {
        PyValueError::new_err("the bitmask must be C-contiguous (numpy.ascontiguousarray)")
    })?;
    fill(bytemuck::cast_slice_mut(words), rows, words_per_row)
}

/// Fills row ``i`` of ``bitmask`` with the tokens ``matchers[i]`` allows next, exactly as
/// ``matchers[i].fill_next_token_bitmask(bitmask, i)`` would, across threads (from 16
/// matchers on) with the GIL released. With ``indices`` (XGrammar's argument), matcher ``i``
/// fills row ``indices[i]`` instead, and no other row is touched.
///
/// ``bitmask`` has at least ``len(matchers)`` rows (or the rows ``indices`` names) of at
/// least ``ceil(vocab_size / 32)`` words; the matchers share a vocabulary size. Raises
/// ``ValueError`` (nothing written) when they do not, or when ``indices`` has another length
/// than ``matchers``, repeats a row or names one past the bitmask; ``LimitError`` when a
/// matcher hit a recogniser limit (its row is then all zero, the other rows filled);
/// ``RuntimeError`` when a matcher appears twice.
#[pyfunction]
#[pyo3(signature = (matchers, bitmask, indices = None))]
pub fn fill_next_token_bitmasks(
    py: Python<'_>,
    matchers: Vec<PyRefMut<'_, Matcher>>,
    bitmask: &Bound<'_, PyAny>,
    indices: Option<Vec<usize>>,
) -> PyResult<()> {
    let mut matchers = matchers;
    let mut inner: Vec<&mut sieve_matcher::Matcher> =
        matchers.iter_mut().map(|m| &mut m.inner).collect();
    with_rows(bitmask, |words, rows, words_per_row| {
        if indices.is_none() && rows < inner.len() {
            return Err(PyValueError::new_err(format!(
                "the bitmask has {rows} rows for {} matchers",
                inner.len()
            )));
        }
        let results = py
            .detach(|| match &indices {
                Some(indices) => sieve_matcher::fill_next_token_bitmasks_at(
                    &mut inner,
                    indices,
                    words,
                    words_per_row,
                ),
                None => sieve_matcher::fill_next_token_bitmasks(&mut inner, words, words_per_row),
            })
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        for (index, result) in results.into_iter().enumerate() {
            result.map_err(|e| {
                let error = matcher_error(e);
                let message = format!("matcher {index}: {}", error.value(py));
                PyErr::from_type(error.get_type(py), message)
            })?;
        }
        Ok(())
    })
}
