//! XGrammar's strict mode for the JSON Schemas of structural tags, as a schema rewrite.
//!
//! XGrammar compiles a structural tag's `json_schema` with `strict_mode` on: an object schema
//! that says nothing about additional properties allows none, and an array schema that says
//! nothing about further items allows none. sieve's JSON Schema front-end follows the
//! specification (both allowed), so the schema is rewritten first: `additionalProperties:
//! false` is added to every object schema (a `type` naming `object`, or `properties`) without
//! `additionalProperties` or `unevaluatedProperties`, and `items: false` to every array schema
//! (a `type` naming `array`, or `prefixItems`) without `items` or `unevaluatedItems`. Schemas
//! that name neither type (`{}`, a bare `anyOf`) are left as they are, as XGrammar leaves them
//! open, and so are the *bare* schemas `{"type": "object"}` and `{"type": "array"}` (`type`
//! alone, as a name or a one-name list, besides annotations): XGrammar 0.2.8 compiles them to
//! its open `basic_object` and `basic_array` rules, strict mode or not ([`bare`]).
//!
//! The rewrite visits every place a subschema can stand; its recursion is bounded by the
//! depth of the JSON value, which `serde_json` limits when parsing.

use serde_json::{Map, Value};

/// Keywords whose value is one subschema.
const ONE: [&str; 10] = [
    "items",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
];

/// Keywords whose value is an array of subschemas.
const MANY: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];

/// Keywords whose value maps names to subschemas.
const MAP: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Keywords that constrain nothing (XGrammar leaves them out of its schema cache keys).
pub(crate) const ANNOTATIONS: [&str; 9] = [
    "title",
    "description",
    "$comment",
    "examples",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
];

/// Whether `obj` says only that its instances are of type `ty` (annotations aside):
/// `{"type": "object"}`, `{"type": ["object"]}`.
pub(crate) fn bare(obj: &Map<String, Value>, ty: &str) -> bool {
    obj.get("type").is_some_and(|t| names_only(t, ty))
        && obj
            .keys()
            .all(|k| k == "type" || ANNOTATIONS.contains(&k.as_str()))
}

/// Whether a `type` value names `ty` alone: `"object"` or `["object"]`.
pub(crate) fn names_only(value: &Value, ty: &str) -> bool {
    match value {
        Value::String(s) => s == ty,
        Value::Array(items) => items.len() == 1 && items[0].as_str() == Some(ty),
        _ => false,
    }
}

/// `schema` with XGrammar's strict-mode defaults written out.
pub(crate) fn strict(schema: &Value) -> Value {
    match schema {
        Value::Object(obj) => Value::Object(strict_object(obj)),
        other => other.clone(),
    }
}

fn strict_object(obj: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::with_capacity(obj.len() + 1);
    for (key, value) in obj {
        let value = if ONE.contains(&key.as_str()) {
            strict(value)
        } else if MANY.contains(&key.as_str()) {
            match value {
                Value::Array(items) => Value::Array(items.iter().map(strict).collect()),
                other => other.clone(),
            }
        } else if MAP.contains(&key.as_str()) {
            match value {
                Value::Object(map) => {
                    Value::Object(map.iter().map(|(k, v)| (k.clone(), strict(v))).collect())
                }
                other => other.clone(),
            }
        } else {
            value.clone()
        };
        out.insert(key.clone(), value);
    }
    let names = |t: &str| match obj.get("type") {
        Some(Value::String(s)) => s == t,
        Some(Value::Array(items)) => items.iter().any(|i| i.as_str() == Some(t)),
        _ => false,
    };
    if (names("object") || obj.contains_key("properties"))
        && !bare(obj, "object")
        && !obj.contains_key("additionalProperties")
        && !obj.contains_key("unevaluatedProperties")
    {
        out.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    if (names("array") || obj.contains_key("prefixItems"))
        && !bare(obj, "array")
        && !obj.contains_key("items")
        && !obj.contains_key("unevaluatedItems")
    {
        out.insert("items".to_owned(), Value::Bool(false));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn closes_objects_and_arrays_that_say_nothing_but_bare_ones() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "array", "prefixItems": [{"type": "object"}]}},
            "$defs": {"x": {"properties": {}, "additionalProperties": true}},
            "anyOf": [{}],
            "items": {"type": "object", "description": "open"},
            "not": {"type": ["array"]}
        });
        assert_eq!(
            strict(&schema),
            json!({
                "type": "object",
                "properties": {"a": {"type": "array", "prefixItems": [{"type": "object"}], "items": false}},
                "$defs": {"x": {"properties": {}, "additionalProperties": true}},
                "anyOf": [{}],
                "items": {"type": "object", "description": "open"},
                "not": {"type": ["array"]},
                "additionalProperties": false
            })
        );
    }
}
