//! `compile_json_schema`, `compile_grammar`, `compile_regex`, `compile_lark`,
//! `compile_structural_tag` and `sieve.CompiledGrammar`.
//!
//! Each compile runs its front-end (`sieve_jsonschema`, `sieve_gbnf`, `sieve_regex`,
//! `sieve_lark`, `sieve_structural`), then
//! `sieve_matcher::CompiledGrammar::new` (the `sieve_matcher::pipeline` stages), with the GIL
//! released. Every compile takes ``backend=``: ``"earley"`` (the default, every grammar),
//! ``"lr"`` (LR(1) grammars), ``"token-dfa"`` (regular constraints) or ``"auto"``; a backend
//! that refuses the grammar raises ``CompileError`` saying why (docs/backends.md). Front-end
//! errors are rendered as the `sieve` command renders them: GBNF, Lark and
//! regex errors with `line:column`, the source line and a caret; JSON Schema errors with the
//! JSON pointer and keyword.

use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyString};
use sieve_diagnostics::SourceFile;
use sieve_ir::Grammar;
use sieve_matcher::{AheadOfTime, BackendChoice, Options};

use crate::tokenizer::Tokenizer;
use crate::CompileError;

/// A grammar compiled against a ``Tokenizer``: the recogniser tables and the token-mask
/// cache every ``Matcher`` of it shares.
///
/// Immutable and shareable across threads (compile once, create a ``Matcher`` per
/// request); not picklable: compile it again in another process.
#[pyclass(module = "sieve", frozen)]
pub struct CompiledGrammar {
    pub(crate) inner: Arc<sieve_matcher::CompiledGrammar>,
    warnings: Vec<String>,
}

#[pymethods]
impl CompiledGrammar {
    /// The number of token ids a bitmask row covers.
    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.vocabulary().n_vocab()
    }

    /// The backend that recognises the grammar: ``"earley"``, ``"lr"`` or ``"token-dfa"``
    /// (what ``backend=`` chose; ``"auto"`` resolves to one of them).
    #[getter]
    fn backend(&self) -> &'static str {
        self.inner.backend().name()
    }

    /// The keywords ``lenient=True`` dropped, one line each (``/pointer: `keyword` not
    /// enforced: why``); empty otherwise.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn __reduce__(&self) -> PyResult<()> {
        Err(crate::not_picklable("CompiledGrammar"))
    }

    fn __repr__(&self) -> String {
        format!(
            "sieve.CompiledGrammar(vocab_size={}, backend={:?})",
            self.vocab_size(),
            self.backend()
        )
    }
}

/// The compile options shared by every front-end.
fn options(ahead_of_time: &Bound<'_, PyAny>) -> PyResult<Options> {
    let ahead_of_time = if ahead_of_time.is_instance_of::<PyBool>() {
        if ahead_of_time.extract::<bool>()? {
            AheadOfTime::All { parallel: true }
        } else {
            AheadOfTime::Off
        }
    } else if let Ok(seconds) = ahead_of_time.extract::<f64>() {
        let budget = Duration::try_from_secs_f64(seconds).map_err(|_| {
            PyValueError::new_err(format!(
                "ahead_of_time={seconds}: a time budget is a finite number of seconds, \
                 at least 0"
            ))
        })?;
        AheadOfTime::Within {
            budget,
            parallel: true,
        }
    } else {
        return Err(PyTypeError::new_err(
            "ahead_of_time is a bool (classify every state while compiling, or none) or a \
             number of seconds (the costliest states first, within that time)",
        ));
    };
    Ok(Options {
        ahead_of_time,
        ..Options::default()
    })
}

/// Runs the pipeline after the front-end, with the GIL released.
fn finish(
    py: Python<'_>,
    tokenizer: &Tokenizer,
    name: &str,
    grammar: Result<Grammar, String>,
    options: &Options,
    warnings: Vec<String>,
) -> PyResult<CompiledGrammar> {
    let grammar = grammar.map_err(CompileError::new_err)?;
    let shared = tokenizer.inner.clone();
    let compiled = py
        .detach(|| sieve_matcher::CompiledGrammar::new(&grammar, shared, options))
        .map_err(|e| CompileError::new_err(format!("{name}: {e}")))?;
    Ok(CompiledGrammar {
        inner: Arc::new(compiled),
        warnings,
    })
}

/// A JSON document as text: a ``str`` as it is, anything else through ``json.dumps``.
fn json_text(schema: &Bound<'_, PyAny>) -> PyResult<String> {
    if schema.is_instance_of::<PyString>() {
        return schema.extract();
    }
    let json = schema.py().import("json")?;
    json.call_method1("dumps", (schema,))
        .map_err(|e| {
            PyTypeError::new_err(format!(
                "a JSON document is a str or a value json.dumps accepts: {e}"
            ))
        })?
        .extract()
}

/// Compiles a JSON Schema (draft 2020-12 or draft-07; a ``str`` or a ``dict``) into the
/// grammar of the JSON texts it accepts.
///
/// ``whitespace``: ``"compact"`` (none between tokens) or ``"flexible"`` (a few whitespace
/// characters in every gap). ``order``: ``"schema"`` (properties in the schema's order) or
/// ``"any"``. ``escapes``: ``"any"`` (every escape RFC 8259 allows) or ``"canonical"``.
/// ``key_escapes``: the same for property names, ``"canonical"`` by default (declared names
/// written literally, as XGrammar and llguidance write them). ``literal_escapes``: the same
/// for ``const`` and ``enum`` values, ``"canonical"`` by default.
/// ``lenient``: drop keywords sieve cannot enforce (listed in ``warnings``) instead of
/// raising. ``ahead_of_time``: ``True`` classifies every state while compiling, a number of
/// seconds the costliest first within that time, ``False`` none (masks classify as they go).
///
/// Raises ``CompileError`` with the JSON pointer and keyword at fault.
#[pyfunction]
#[pyo3(signature = (
    tokenizer, schema, *, whitespace="compact", order="schema", escapes="any",
    key_escapes="canonical", literal_escapes="canonical", lenient=false, ahead_of_time=None, backend="earley"
))]
#[allow(clippy::too_many_arguments)] // The keyword arguments of the Python API, one each.
pub fn compile_json_schema(
    py: Python<'_>,
    tokenizer: &Tokenizer,
    schema: &Bound<'_, PyAny>,
    whitespace: &str,
    order: &str,
    escapes: &str,
    key_escapes: &str,
    literal_escapes: &str,
    lenient: bool,
    ahead_of_time: Option<&Bound<'_, PyAny>>,
    backend: &str,
) -> PyResult<CompiledGrammar> {
    use sieve_jsonschema::{PropertyOrder, Whitespace};
    let json_options = sieve_jsonschema::Options {
        whitespace: match whitespace {
            "compact" => Whitespace::Compact,
            "flexible" => Whitespace::Flexible,
            _ => return Err(choice_error("whitespace", whitespace, "compact, flexible")),
        },
        property_order: match order {
            "schema" => PropertyOrder::Schema,
            "any" => PropertyOrder::Any,
            _ => return Err(choice_error("order", order, "schema, any")),
        },
        escapes: escapes_choice("escapes", escapes)?,
        key_escapes: Some(escapes_choice("key_escapes", key_escapes)?),
        literal_escapes: Some(escapes_choice("literal_escapes", literal_escapes)?),
        lenient,
        ..sieve_jsonschema::Options::default()
    };
    let options = options_or_default(ahead_of_time, backend)?;
    let text = json_text(schema)?;
    let name = "<schema>";
    let front = py.detach(|| {
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("{name}:{}:{}: not JSON: {e}", e.line(), e.column()))?;
        sieve_jsonschema::compile(&value, &json_options).map_err(|e| {
            let root = if e.pointer.is_empty() { "#" } else { "" };
            format!("{name}: {root}{e}")
        })
    });
    let (grammar, warnings) = match front {
        Ok(compiled) => (
            Ok(compiled.grammar),
            compiled.warnings.iter().map(ToString::to_string).collect(),
        ),
        Err(message) => (Err(message), Vec::new()),
    };
    finish(py, tokenizer, name, grammar, &options, warnings)
}

/// Compiles a GBNF grammar (llama.cpp's syntax; XGrammar's EBNF is read the same way) whose
/// start is rule ``root_rule``.
///
/// Raises ``CompileError`` listing every error with its line, column and the line itself.
#[pyfunction]
#[pyo3(signature = (tokenizer, grammar, *, root_rule="root", ahead_of_time=None, backend="earley"))]
pub fn compile_grammar(
    py: Python<'_>,
    tokenizer: &Tokenizer,
    grammar: &str,
    root_rule: &str,
    ahead_of_time: Option<&Bound<'_, PyAny>>,
    backend: &str,
) -> PyResult<CompiledGrammar> {
    let options = options_or_default(ahead_of_time, backend)?;
    let name = "<grammar>";
    let mut gbnf_options = sieve_gbnf::Options::with_root(root_rule.to_owned());
    gbnf_options.tokens = Some(token_names(tokenizer));
    let front = py.detach(|| {
        sieve_gbnf::compile(grammar, &gbnf_options)
            .map_err(|errors| render_all(name, grammar, errors.as_slice()))
    });
    finish(py, tokenizer, name, front, &options, Vec::new())
}

/// Compiles a regular expression matched against the whole output (Rust ``regex`` syntax,
/// without look-around or backreferences).
///
/// Raises ``CompileError`` with the column of the fault and a caret under it.
#[pyfunction]
#[pyo3(signature = (tokenizer, pattern, *, ahead_of_time=None, backend="earley"))]
pub fn compile_regex(
    py: Python<'_>,
    tokenizer: &Tokenizer,
    pattern: &str,
    ahead_of_time: Option<&Bound<'_, PyAny>>,
    backend: &str,
) -> PyResult<CompiledGrammar> {
    let options = options_or_default(ahead_of_time, backend)?;
    let name = "<regex>";
    let front = py.detach(|| {
        sieve_regex::compile(pattern, &sieve_regex::Options::default()).map_err(|e| {
            SourceFile::new(name, pattern)
                .render_error(&e)
                .trim_end()
                .to_owned()
        })
    });
    finish(py, tokenizer, name, front, &options, Vec::new())
}

/// Compiles a Lark grammar in llguidance's dialect (the language starts at ``start``;
/// terminals are lexemes, ``%ignore`` between them, ``%json`` for inline JSON Schemas).
///
/// Raises ``CompileError`` listing every error with its line, column and the line itself.
#[pyfunction]
#[pyo3(signature = (tokenizer, grammar, *, ahead_of_time=None, backend="earley"))]
pub fn compile_lark(
    py: Python<'_>,
    tokenizer: &Tokenizer,
    grammar: &str,
    ahead_of_time: Option<&Bound<'_, PyAny>>,
    backend: &str,
) -> PyResult<CompiledGrammar> {
    let options = options_or_default(ahead_of_time, backend)?;
    let name = "<lark>";
    let front = py.detach(|| {
        let lark = sieve_lark::Options {
            tokens: Some(token_names(tokenizer)),
            ..sieve_lark::Options::default()
        };
        sieve_lark::compile(grammar, &lark)
            .map_err(|errors| render_all(name, grammar, errors.as_slice()))
    });
    finish(py, tokenizer, name, front, &options, Vec::new())
}

/// Compiles an XGrammar structural tag (``{"type": "structural_tag", "format": {…}}``, a
/// ``str`` or a ``dict``; the format of xgrammar 0.2.8): tags, triggers and free text around
/// JSON Schemas, grammars and regexes, for tool calls and reasoning formats.
///
/// Token formats resolve against ``tokenizer``. Raises ``CompileError`` with the JSON
/// pointer of what cannot be compiled (see docs/structural-tags.md).
#[pyfunction]
#[pyo3(signature = (tokenizer, structural_tag, *, ahead_of_time=None, backend="earley"))]
pub fn compile_structural_tag(
    py: Python<'_>,
    tokenizer: &Tokenizer,
    structural_tag: &Bound<'_, PyAny>,
    ahead_of_time: Option<&Bound<'_, PyAny>>,
    backend: &str,
) -> PyResult<CompiledGrammar> {
    let options = options_or_default(ahead_of_time, backend)?;
    let text = json_text(structural_tag)?;
    let name = "<structural tag>";
    let structural = sieve_structural::Options {
        tokens: Some(token_names(tokenizer)),
        ..sieve_structural::Options::default()
    };
    let front = py.detach(|| {
        sieve_structural::compile_str(&text, &structural).map_err(|e| format!("{name}: {e}"))
    });
    finish(py, tokenizer, name, front, &options, Vec::new())
}

/// What token terminals (`<|im_end|>`, `<[^7]>`) resolve against: the tokenizer's vocabulary.
fn token_names(tokenizer: &Tokenizer) -> sieve_ir::token::SharedNames {
    sieve_ir::token::SharedNames(tokenizer.inner.vocabulary().clone())
}

/// Every error rendered against `text` (its line, column, the line and a caret), one after
/// another.
fn render_all<E: sieve_diagnostics::Located>(name: &str, text: &str, errors: &[E]) -> String {
    let source = SourceFile::new(name, text);
    let rendered: String = errors.iter().map(|e| source.render_error(e)).collect();
    rendered.trim_end().to_owned()
}

/// The options of a compile: `ahead_of_time` as [`options`] reads it (none when absent) and
/// the backend by name (`earley`, `lr`, `token-dfa`, `auto`).
fn options_or_default(
    ahead_of_time: Option<&Bound<'_, PyAny>>,
    backend: &str,
) -> PyResult<Options> {
    let mut options = match ahead_of_time {
        Some(value) => options(value)?,
        None => Options::default(),
    };
    options.backend = backend
        .parse::<BackendChoice>()
        .map_err(|e| PyValueError::new_err(format!("backend={backend:?}: {e}")))?;
    Ok(options)
}

/// The [`sieve_jsonschema::Escapes`] a keyword argument names.
fn escapes_choice(name: &str, given: &str) -> PyResult<sieve_jsonschema::Escapes> {
    match given {
        "any" => Ok(sieve_jsonschema::Escapes::Any),
        "canonical" => Ok(sieve_jsonschema::Escapes::Canonical),
        _ => Err(choice_error(name, given, "any, canonical")),
    }
}

fn choice_error(name: &str, given: &str, choices: &str) -> PyErr {
    PyValueError::new_err(format!("{name}={given:?}: expected one of {choices}"))
}

/// Compiles OpenAI-style tools in a model's tool-call format: the structural tag XGrammar
/// 0.2.8's ``get_model_structural_tag`` builds for ``format`` (``"llama"``, ``"qwen_3"``,
/// ``"harmony"``, …), compiled as :func:`compile_structural_tag` compiles it.
///
/// ``tools``: a list of tools (``{"type": "function", "function": {"name", "parameters"}}``,
/// or builtin tools ``{"type", "name", "parameters"}``), or its JSON text. ``tool_choice``:
/// ``"auto"`` (default), ``"none"``, ``"required"``, ``{"type": "function", "function":
/// {"name": …}}``, a builtin tool's ``{"type": …}`` or ``{"type": "allowed_tools", …}``.
/// ``parallel_tool_calls``: ``False`` allows at most one call. ``reasoning``: ``"enabled"``
/// (default), ``"disabled"``, ``"auto"`` or a bool. See docs/tool-formats.md.
///
/// Raises ``CompileError`` with the JSON pointer at fault (an unknown format lists the known
/// ones).
#[pyfunction]
#[pyo3(signature = (
    tokenizer, tools, *, format, tool_choice=None, parallel_tool_calls=true, reasoning=None,
    ahead_of_time=None, backend="earley"
))]
#[allow(clippy::too_many_arguments)] // the Python keyword arguments, one each
pub fn compile_tools(
    py: Python<'_>,
    tokenizer: &Tokenizer,
    tools: &Bound<'_, PyAny>,
    format: &str,
    tool_choice: Option<&Bound<'_, PyAny>>,
    parallel_tool_calls: bool,
    reasoning: Option<&Bound<'_, PyAny>>,
    ahead_of_time: Option<&Bound<'_, PyAny>>,
    backend: &str,
) -> PyResult<CompiledGrammar> {
    use serde_json::Value;
    let options = options_or_default(ahead_of_time, backend)?;
    let mut request = serde_json::Map::new();
    let tools: Value = serde_json::from_str(&json_text(tools)?)
        .map_err(|e| PyValueError::new_err(format!("tools: not JSON: {e}")))?;
    request.insert("tools".into(), tools);
    if let Some(choice) = tool_choice {
        request.insert("tool_choice".into(), json_value(choice, "tool_choice")?);
    }
    request.insert(
        "parallel_tool_calls".into(),
        Value::Bool(parallel_tool_calls),
    );
    if let Some(reasoning) = reasoning {
        request.insert("reasoning".into(), json_value(reasoning, "reasoning")?);
    }
    let name = format!("<tools: {format}>");
    let structural = sieve_structural::Options {
        tokens: Some(token_names(tokenizer)),
        ..sieve_structural::Options::default()
    };
    let front = py.detach(|| {
        let request = sieve_structural::ToolRequest::from_json(&Value::Object(request))
            .map_err(|e| format!("{name}: {e}"))?;
        let document = sieve_structural::model_structural_tag(format, &request)
            .map_err(|e| format!("{name}: {e}"))?;
        sieve_structural::compile(&document, &structural)
            .map_err(|e| format!("{name}: the structural tag: {e}"))
    });
    finish(py, tokenizer, &name, front, &options, Vec::new())
}

/// A keyword argument as a JSON value: a ``str`` is a JSON string, anything else goes
/// through ``json.dumps``.
fn json_value(value: &Bound<'_, PyAny>, name: &str) -> PyResult<serde_json::Value> {
    if value.is_instance_of::<PyString>() {
        return Ok(serde_json::Value::String(value.extract()?));
    }
    serde_json::from_str(&json_text(value)?)
        .map_err(|e| PyValueError::new_err(format!("{name}: not JSON: {e}")))
}
