//! [`ToolRequest`]: an OpenAI-style tool-calling request (`tools`, `tool_choice`,
//! `parallel_tool_calls`, a reasoning mode and XGrammar's argument options), read strictly from
//! JSON so every mistake is an [`ErrorKind::Invalid`] error at its JSON pointer.
//!
//! Shapes (those of XGrammar's `get_model_structural_tag`): a function tool is
//! `{"type": "function", "function": {"name", "description"?, "parameters"?, "strict"?}}`; any
//! other `type` is a builtin tool `{"type", "name"?, "parameters"?}` whose name in the output is
//! `name`, else `type`. `tool_choice` is `"auto"` (also `null`), `"none"`, `"required"`,
//! `{"type": "function", "function": {"name"}}`, `{"type": BUILTIN_TYPE}` or
//! `{"type": "allowed_tools", "allowed_tools": {"mode": "auto"|"required", "tools": [refs]}}`.
//! `reasoning` is `"enabled"` (default), `"disabled"`, `"auto"`, or a boolean.
//!
//! Unlike XGrammar's pydantic models, unknown fields are errors: a misspelt `parameters` would
//! otherwise leave a tool's arguments unconstrained.

use serde_json::{Map, Value};

use crate::error::{join, Error, ErrorKind};

/// A tool-calling request: what a model format's structural tag is built from.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolRequest {
    /// The tools, in the order given.
    pub tools: Vec<Tool>,
    /// Whether and which tools may or must be called.
    pub tool_choice: ToolChoice,
    /// More than one call per response. Default: `true`.
    pub parallel_tool_calls: bool,
    /// The reasoning section. Default: [`Reasoning::Enabled`].
    pub reasoning: Reasoning,
    /// Object properties of tool arguments in any order (XGrammar's `any_order`). Default:
    /// `false`.
    pub any_order: bool,
    /// Keep the model's special strings (`<think>`, …) out of free text. Default: `true`.
    pub exclude_special_tokens: bool,
    /// The most consecutive whitespace characters in tool arguments, `None` for the compiler's
    /// default. Default: `None`.
    pub max_whitespace_cnt: Option<u32>,
}

impl Default for ToolRequest {
    fn default() -> ToolRequest {
        ToolRequest {
            tools: Vec::new(),
            tool_choice: ToolChoice::Auto,
            parallel_tool_calls: true,
            reasoning: Reasoning::Enabled,
            any_order: false,
            exclude_special_tokens: true,
            max_whitespace_cnt: None,
        }
    }
}

/// One tool.
#[derive(Clone, Debug, PartialEq)]
pub enum Tool {
    /// A function tool.
    Function(FunctionTool),
    /// A builtin (hosted) tool, such as Harmony's `browser.search`.
    Builtin(BuiltinTool),
}

/// A function tool (`tools[i].function`).
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionTool {
    /// The name the model writes.
    pub name: String,
    /// The description (not part of the structural tag).
    pub description: Option<String>,
    /// The arguments' JSON Schema; `None` leaves them unconstrained JSON.
    pub parameters: Option<Value>,
    /// `Some(false)` leaves the arguments unconstrained JSON, as in XGrammar.
    pub strict: Option<bool>,
}

/// A builtin tool.
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltinTool {
    /// The provider's tool type (`web_search_preview`); a tool choice names it by this.
    pub kind: String,
    /// The name the model writes, when it differs from `kind`.
    pub name: Option<String>,
    /// The arguments' JSON Schema; `None` leaves them unconstrained JSON.
    pub parameters: Option<Value>,
}

impl FunctionTool {
    /// The schema the arguments are constrained by (`true` for any JSON).
    pub(crate) fn schema(&self) -> Value {
        match (&self.parameters, self.strict) {
            (_, Some(false)) | (None, _) => Value::Bool(true),
            (Some(p), _) => p.clone(),
        }
    }
}

impl BuiltinTool {
    /// The name the model writes.
    pub(crate) fn output_name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.kind)
    }

    /// The schema the arguments are constrained by (`true` for any JSON).
    pub(crate) fn schema(&self) -> Value {
        self.parameters.clone().unwrap_or(Value::Bool(true))
    }
}

/// `tool_choice`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolChoice {
    /// Text or calls of any tool.
    Auto,
    /// No tools: text only.
    None,
    /// At least one call.
    Required,
    /// Exactly this function tool.
    Function(String),
    /// Exactly the builtin tool of this type.
    Builtin(String),
    /// Only these tools, with `mode` auto or required.
    Allowed {
        /// `true` for `"required"`, `false` for `"auto"`.
        required: bool,
        /// The allowed function tools, by name.
        functions: Vec<String>,
        /// The allowed builtin tools, by type.
        builtins: Vec<String>,
    },
}

/// The reasoning section of formats that have one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reasoning {
    /// The output starts inside (or with) the reasoning block, which must be closed.
    Enabled,
    /// No reasoning block.
    Disabled,
    /// A complete reasoning block or none.
    Auto,
}

impl Reasoning {
    /// Reads `enabled`, `disabled` or `auto`.
    pub fn parse(text: &str) -> Option<Reasoning> {
        match text {
            "enabled" => Some(Reasoning::Enabled),
            "disabled" => Some(Reasoning::Disabled),
            "auto" => Some(Reasoning::Auto),
            _ => None,
        }
    }
}

impl ToolRequest {
    /// Reads a request object; see the module docs for the shapes.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Invalid`] at the pointer of the first wrong, missing or unknown field.
    pub fn from_json(value: &Value) -> Result<ToolRequest, Error> {
        let obj = object(value, "")?;
        let mut request = ToolRequest::default();
        for (key, v) in obj {
            let p = join("", key);
            match key.as_str() {
                "tools" => request.tools = tools(v, &p)?,
                "tool_choice" => request.tool_choice = tool_choice(v, &p)?,
                "parallel_tool_calls" => request.parallel_tool_calls = boolean(v, &p)?,
                "reasoning" => {
                    request.reasoning = match v {
                        Value::Bool(true) => Reasoning::Enabled,
                        Value::Bool(false) => Reasoning::Disabled,
                        Value::String(s) => {
                            Reasoning::parse(s).ok_or_else(|| reasoning_error(&p))?
                        }
                        _ => return Err(reasoning_error(&p)),
                    }
                }
                "any_order" => request.any_order = boolean(v, &p)?,
                "exclude_special_tokens" => request.exclude_special_tokens = boolean(v, &p)?,
                "max_whitespace_cnt" => {
                    request.max_whitespace_cnt = match v {
                        Value::Null => None,
                        v => Some(
                            v.as_u64()
                                .and_then(|n| u32::try_from(n).ok())
                                .filter(|&n| n > 0)
                                .ok_or_else(|| {
                                    invalid(
                                        &p,
                                        "`max_whitespace_cnt` must be a positive integer or null",
                                    )
                                })?,
                        ),
                    }
                }
                _ => return Err(invalid(&p, format!("unknown field `{key}`"))),
            }
        }
        Ok(request)
    }

    /// [`ToolRequest::from_json`] from JSON text.
    pub fn from_json_str(text: &str) -> Result<ToolRequest, Error> {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            invalid(
                "",
                format!("not JSON (line {}, column {}): {e}", e.line(), e.column()),
            )
        })?;
        ToolRequest::from_json(&value)
    }
}

/// Reads a `tools` array.
pub fn tools(value: &Value, pointer: &str) -> Result<Vec<Tool>, Error> {
    let items = value
        .as_array()
        .ok_or_else(|| invalid(pointer, "`tools` must be an array of tools"))?;
    items
        .iter()
        .enumerate()
        .map(|(i, v)| tool(v, &join(pointer, i)))
        .collect()
}

fn tool(value: &Value, pointer: &str) -> Result<Tool, Error> {
    let obj = object(value, pointer)?;
    let ty = match obj.get("type") {
        None => "function",
        Some(t) => t
            .as_str()
            .ok_or_else(|| invalid(&join(pointer, "type"), "`type` must be a string"))?,
    };
    if ty == "function" {
        only(obj, pointer, &["type", "function"])?;
        let p = join(pointer, "function");
        let f = object(
            obj.get("function")
                .ok_or_else(|| invalid(pointer, "a function tool needs `function`"))?,
            &p,
        )?;
        only(f, &p, &["name", "description", "parameters", "strict"])?;
        Ok(Tool::Function(FunctionTool {
            name: string(f.get("name"), &p, "name")?,
            description: optional_string(f.get("description"), &p, "description")?,
            parameters: parameters(f.get("parameters"), &p)?,
            strict: match f.get("strict") {
                None | Some(Value::Null) => None,
                Some(v) => Some(boolean(v, &join(&p, "strict"))?),
            },
        }))
    } else {
        only(obj, pointer, &["type", "name", "parameters"])?;
        Ok(Tool::Builtin(BuiltinTool {
            kind: ty.to_owned(),
            name: optional_string(obj.get("name"), pointer, "name")?,
            parameters: parameters(obj.get("parameters"), pointer)?,
        }))
    }
}

/// Reads a `tool_choice` value.
pub fn tool_choice(value: &Value, pointer: &str) -> Result<ToolChoice, Error> {
    let obj = match value {
        Value::Null => return Ok(ToolChoice::Auto),
        Value::String(s) => {
            return match s.as_str() {
                "auto" => Ok(ToolChoice::Auto),
                "none" => Ok(ToolChoice::None),
                "required" => Ok(ToolChoice::Required),
                _ => Err(invalid(
                    pointer,
                    format!(
                    "unknown tool choice {s:?} (auto, none, required, or an object naming a tool)"
                ),
                )),
            }
        }
        v => object(v, pointer)?,
    };
    let ty = string(obj.get("type"), pointer, "type")?;
    match ty.as_str() {
        "function" => {
            only(obj, pointer, &["type", "function"])?;
            Ok(ToolChoice::Function(function_ref(obj, pointer)?))
        }
        "allowed_tools" => {
            only(obj, pointer, &["type", "allowed_tools"])?;
            let p = join(pointer, "allowed_tools");
            let allowed = object(
                obj.get("allowed_tools")
                    .ok_or_else(|| invalid(pointer, "missing field `allowed_tools`"))?,
                &p,
            )?;
            only(allowed, &p, &["mode", "tools"])?;
            let required = match string(allowed.get("mode"), &p, "mode")?.as_str() {
                "auto" => false,
                "required" => true,
                _ => {
                    return Err(invalid(
                        &join(&p, "mode"),
                        "`mode` must be \"auto\" or \"required\"",
                    ))
                }
            };
            let tp = join(&p, "tools");
            let refs = allowed
                .get("tools")
                .ok_or_else(|| invalid(&p, "missing field `tools`"))?
                .as_array()
                .ok_or_else(|| invalid(&tp, "`tools` must be an array of tool references"))?;
            let (mut functions, mut builtins) = (Vec::new(), Vec::new());
            for (i, r) in refs.iter().enumerate() {
                let rp = join(&tp, i);
                let r = object(r, &rp)?;
                let ty = string(r.get("type"), &rp, "type")?;
                if ty == "function" {
                    only(r, &rp, &["type", "function"])?;
                    functions.push(function_ref(r, &rp)?);
                } else {
                    only(r, &rp, &["type", "name"])?;
                    optional_string(r.get("name"), &rp, "name")?;
                    builtins.push(ty);
                }
            }
            Ok(ToolChoice::Allowed {
                required,
                functions,
                builtins,
            })
        }
        _ => {
            only(obj, pointer, &["type", "name"])?;
            optional_string(obj.get("name"), pointer, "name")?;
            Ok(ToolChoice::Builtin(ty))
        }
    }
}

/// `{"function": {"name": …}}` of a named choice or an allowed-tools reference.
fn function_ref(obj: &Map<String, Value>, pointer: &str) -> Result<String, Error> {
    let p = join(pointer, "function");
    let f = object(
        obj.get("function")
            .ok_or_else(|| invalid(pointer, "a function reference needs `function`"))?,
        &p,
    )?;
    only(f, &p, &["name"])?;
    string(f.get("name"), &p, "name")
}

fn parameters(value: Option<&Value>, pointer: &str) -> Result<Option<Value>, Error> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v @ Value::Object(_)) => Ok(Some(v.clone())),
        Some(_) => Err(invalid(
            &join(pointer, "parameters"),
            "`parameters` must be a JSON Schema object or null",
        )),
    }
}

fn only(obj: &Map<String, Value>, pointer: &str, known: &[&str]) -> Result<(), Error> {
    match obj.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(invalid(&join(pointer, k), format!("unknown field `{k}`"))),
        None => Ok(()),
    }
}

fn string(value: Option<&Value>, pointer: &str, name: &str) -> Result<String, Error> {
    match value {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(invalid(
            &join(pointer, name),
            format!("`{name}` must be a string"),
        )),
        None => Err(invalid(pointer, format!("missing field `{name}`"))),
    }
}

fn optional_string(
    value: Option<&Value>,
    pointer: &str,
    name: &str,
) -> Result<Option<String>, Error> {
    match value {
        None | Some(Value::Null) => Ok(None),
        v => string(v, pointer, name).map(Some),
    }
}

fn boolean(value: &Value, pointer: &str) -> Result<bool, Error> {
    value
        .as_bool()
        .ok_or_else(|| invalid(pointer, "expected a boolean"))
}

fn object<'a>(value: &'a Value, pointer: &str) -> Result<&'a Map<String, Value>, Error> {
    value
        .as_object()
        .ok_or_else(|| invalid(pointer, "expected a JSON object"))
}

fn reasoning_error(pointer: &str) -> Error {
    invalid(
        pointer,
        "`reasoning` must be \"enabled\", \"disabled\", \"auto\" or a boolean",
    )
}

fn invalid(pointer: &str, message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Invalid, pointer, message)
}
