//! Sampling: random sentences of each compiled grammar must be JSON texts the schema
//! accepts. The judge is a small validator written here for a subset of JSON Schema
//! (it answers `None` for anything outside the subset, and those samples are skipped), so
//! this catches accepted-invalid bugs the hand-picked instances miss.
//!
//! Invariant: the validator is deliberately naive (direct recursion over the schema, local
//! `#…` references only, depth-bounded) so that it is obviously right on its subset.

use std::path::Path;

use serde_json::{json, Value};
use sieve_ir::reference::Recognizer;
use sieve_jsonschema::{compile, Options, PropertyOrder, Whitespace};

/// Whether `instance` is valid against `schema` (inside document `root`), or `None` when
/// the schema uses something this validator does not know.
fn valid(
    root: &Value,
    schema: &Value,
    instance: &Value,
    draft7: bool,
    depth: usize,
) -> Option<bool> {
    if depth > 64 {
        return None;
    }
    let map = match schema {
        Value::Bool(b) => return Some(*b),
        Value::Object(map) => map,
        _ => return None,
    };
    let mut ok = true;
    let sub = |s: &Value, i: &Value| valid(root, s, i, draft7, depth + 1);
    if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
        let target = root.pointer(reference.strip_prefix('#')?)?;
        ok &= sub(target, instance)?;
        if draft7 {
            return Some(ok);
        }
    }
    for (key, value) in map {
        let here = match key.as_str() {
            "type" => {
                let names: Vec<&str> = match value {
                    Value::String(s) => vec![s.as_str()],
                    Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                    _ => return None,
                };
                names.iter().any(|name| match *name {
                    "null" => instance.is_null(),
                    "boolean" => instance.is_boolean(),
                    "object" => instance.is_object(),
                    "array" => instance.is_array(),
                    "string" => instance.is_string(),
                    "number" => instance.is_number(),
                    "integer" => instance.as_f64().is_some_and(|f| f.fract() == 0.0),
                    _ => false,
                })
            }
            "enum" => value.as_array()?.iter().any(|v| eq(v, instance)),
            "const" => eq(value, instance),
            "allOf" => {
                let mut all = true;
                for s in value.as_array()? {
                    all &= sub(s, instance)?;
                }
                all
            }
            "anyOf" | "oneOf" => {
                let mut hits = 0;
                for s in value.as_array()? {
                    hits += usize::from(sub(s, instance)?);
                }
                if key == "anyOf" {
                    hits >= 1
                } else {
                    hits == 1
                }
            }
            "minLength" | "maxLength" => match instance.as_str() {
                Some(s) => {
                    let n = s.chars().count() as u64;
                    let bound = value.as_u64()?;
                    if key == "minLength" {
                        n >= bound
                    } else {
                        n <= bound
                    }
                }
                None => true,
            },
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                match instance.as_f64() {
                    Some(x) => {
                        let b = value.as_f64()?;
                        match key.as_str() {
                            "minimum" => x >= b,
                            "maximum" => x <= b,
                            "exclusiveMinimum" => x > b,
                            _ => x < b,
                        }
                    }
                    None => true,
                }
            }
            "required" => match instance.as_object() {
                Some(o) => value
                    .as_array()?
                    .iter()
                    .all(|n| n.as_str().is_some_and(|n| o.contains_key(n))),
                None => true,
            },
            "minProperties" | "maxProperties" => match instance.as_object() {
                Some(o) => {
                    let b = value.as_u64()?;
                    if key == "minProperties" {
                        o.len() as u64 >= b
                    } else {
                        o.len() as u64 <= b
                    }
                }
                None => true,
            },
            "properties" | "additionalProperties" => match instance.as_object() {
                Some(o) => {
                    if map.contains_key("patternProperties") {
                        return None;
                    }
                    let declared = map.get("properties").and_then(Value::as_object);
                    let mut all = true;
                    for (name, v) in o {
                        let s = declared.and_then(|d| d.get(name));
                        match (key.as_str(), s) {
                            ("properties", Some(s)) => all &= sub(s, v)?,
                            ("additionalProperties", None) => all &= sub(value, v)?,
                            _ => {}
                        }
                    }
                    all
                }
                None => true,
            },
            "items" | "prefixItems" | "additionalItems" => match instance.as_array() {
                Some(a) => {
                    let tuple_key = if draft7 { "items" } else { "prefixItems" };
                    let rest_key = if draft7 { "additionalItems" } else { "items" };
                    let prefix = map.get(tuple_key).and_then(Value::as_array);
                    let n = prefix.map_or(0, Vec::len);
                    let mut all = true;
                    if key == tuple_key {
                        for (s, v) in value.as_array()?.iter().zip(a) {
                            all &= sub(s, v)?;
                        }
                    } else if key == rest_key {
                        if draft7 && key == "additionalItems" && prefix.is_none() {
                            continue;
                        }
                        if !draft7 && key == "items" && value.is_array() {
                            return None;
                        }
                        for v in a.iter().skip(n) {
                            all &= sub(value, v)?;
                        }
                    } else {
                        return None;
                    }
                    all
                }
                None => true,
            },
            "minItems" | "maxItems" => match instance.as_array() {
                Some(a) => {
                    let b = value.as_u64()?;
                    if key == "minItems" {
                        a.len() as u64 >= b
                    } else {
                        a.len() as u64 <= b
                    }
                }
                None => true,
            },
            "contains" => match instance.as_array() {
                Some(a) => {
                    let min = map.get("minContains").map_or(Some(1), Value::as_u64)?;
                    let mut hits = 0;
                    for v in a {
                        hits += u64::from(sub(value, v)?);
                    }
                    hits >= min
                }
                None => true,
            },
            "not" => !sub(value, instance)?,
            "if" => {
                let side = if sub(value, instance)? {
                    "then"
                } else {
                    "else"
                };
                match map.get(side) {
                    Some(schema) => sub(schema, instance)?,
                    None => true,
                }
            }
            "then" | "else" => true,
            "$ref" | "$defs" | "definitions" | "$schema" | "description" | "title"
            | "minContains" | "$comment" => true,
            _ => return None,
        };
        ok &= here;
    }
    Some(ok)
}

/// Whether some object in the JSON text `text` repeats a key (decoded).
fn has_duplicate_keys(text: &[u8]) -> bool {
    let mut stack: Vec<Option<std::collections::HashSet<String>>> = Vec::new();
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'{' => stack.push(Some(Default::default())),
            b'[' => stack.push(None),
            b'}' | b']' => {
                stack.pop();
            }
            b'"' => {
                let start = i;
                i += 1;
                while text[i] != b'"' {
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
                let mut j = i + 1;
                while j < text.len() && text[j].is_ascii_whitespace() {
                    j += 1;
                }
                if j < text.len() && text[j] == b':' {
                    let key: String = serde_json::from_slice(&text[start..=i]).unwrap();
                    if let Some(Some(keys)) = stack.last_mut() {
                        if !keys.insert(key) {
                            return true;
                        }
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// JSON Schema equality.
fn eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| eq(v, w)))
        }
        _ => a == b,
    }
}

/// Samples `schema`'s grammar under `options` and judges each sample.
fn check_samples(schema: &Value, options: &Options) -> usize {
    let Ok(compiled) = compile(schema, options) else {
        return 0;
    };
    let recognizer = Recognizer::new(&compiled.grammar).unwrap();
    let draft7 = schema
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|s| s.contains("draft-07"));
    let mut judged = 0;
    for seed in 0..60 {
        let Some(text) = recognizer.sample(seed, 10) else {
            break;
        };
        let instance: Value = match serde_json::from_slice(&text) {
            Ok(instance) => instance,
            // Valid JSON that serde_json's f64 cannot hold (`1e999`): not judged.
            Err(e) if e.to_string().contains("number out of range") => continue,
            Err(e) => panic!(
                "{schema}: sample is not JSON ({e}): {}",
                String::from_utf8_lossy(&text)
            ),
        };
        // Repeated additional keys are a documented limit of any grammar (see the crate
        // docs): such samples are not judged.
        if has_duplicate_keys(&text) {
            continue;
        }
        if let Some(ok) = valid(schema, schema, &instance, draft7, 0) {
            assert!(
                ok,
                "{schema}: sample {} is invalid",
                String::from_utf8_lossy(&text)
            );
            judged += 1;
        }
    }
    judged
}

#[test]
fn samples_of_fixture_schemas_are_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut judged = 0;
    let files = super::fixtures::FILES
        .iter()
        .map(|f| (f.to_string(), false))
        .chain(
            super::fixtures::DRAFT7_FILES
                .iter()
                .map(|f| (format!("draft7/{f}"), true)),
        );
    for (file, draft7) in files {
        for (_, schema, _) in super::fixtures::load(&dir.join(file), draft7) {
            judged += check_samples(&schema, &Options::default());
        }
    }
    assert!(judged > 500, "only {judged} samples judged");
}

#[test]
fn samples_of_hand_schemas_are_valid() {
    let schemas = [
        json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string", "maxLength": 2}}, "required": ["b"], "minProperties": 2, "maxProperties": 3}),
        json!({"properties": {"a": {}, "b": {}}, "additionalProperties": {"type": "boolean"}, "maxProperties": 2}),
        json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "null"}], "items": {"type": "integer"}, "minItems": 1, "maxItems": 4}),
        json!({"type": "array", "contains": {"const": 5}, "minContains": 2, "items": {"type": "integer", "minimum": 0, "maximum": 9}}),
        json!({"allOf": [{"properties": {"a": {"type": "integer"}}, "additionalProperties": false}, {"properties": {"b": {}}, "minProperties": 1}]}),
        json!({"oneOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#"}}]}),
        json!({"$defs": {"t": {"type": "object", "properties": {"v": {"enum": [1, 2, "x"]}, "k": {"type": "array", "items": {"$ref": "#/$defs/t"}}}, "required": ["v"], "additionalProperties": false}}, "$ref": "#/$defs/t"}),
        json!({"enum": [1, "a", {"x": 1}, {"x": "s"}, [1, 2]], "properties": {"x": {"type": "integer"}}, "maxItems": 1}),
        json!({"anyOf": [{"type": "integer", "minimum": 10}, {"type": "string", "minLength": 3}], "not_a_keyword": 1}),
        json!({"type": "object", "properties": {"kind": {"enum": ["x", "y"]}, "n": {}}, "if": {"properties": {"kind": {"const": "x"}}}, "then": {"properties": {"n": {"type": "integer"}}}, "else": {"properties": {"n": {"type": "string"}}}}),
        json!({"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}], "not": {"required": ["a", "c"]}, "maxProperties": 3}),
    ];
    let layouts = [
        Options::default(),
        Options {
            property_order: PropertyOrder::Any,
            ..Options::default()
        },
        Options {
            whitespace: Whitespace::Flexible,
            max_whitespace: 2,
            ..Options::default()
        },
    ];
    for schema in &schemas {
        for options in &layouts {
            let judged = check_samples(schema, options);
            assert!(
                judged > 0 || schema.get("not_a_keyword").is_some(),
                "{schema}: nothing judged"
            );
        }
    }
}

/// A tiny seeded generator for random schemas.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

/// A random schema over the validator's subset, `depth` levels deep at most.
fn random_schema(rng: &mut Rng, depth: u32) -> Value {
    let names = ["a", "b", "ab", "c"];
    let values = [
        json!(1),
        json!("a"),
        json!(null),
        json!([1]),
        json!({"a": 1}),
        json!(2.5),
        json!(true),
    ];
    let types = [
        "null", "boolean", "object", "array", "string", "integer", "number",
    ];
    let mut map = serde_json::Map::new();
    let keywords = 1 + rng.below(3);
    for _ in 0..keywords {
        let leaf = depth == 0;
        match rng.below(if leaf { 10 } else { 25 }) {
            0 => {
                map.insert("type".into(), json!(types[rng.below(7) as usize]));
            }
            1 => {
                let n = 1 + rng.below(3);
                let list: Vec<Value> = (0..n)
                    .map(|_| values[rng.below(7) as usize].clone())
                    .collect();
                map.insert("enum".into(), json!(list));
            }
            2 => {
                map.insert("const".into(), values[rng.below(7) as usize].clone());
            }
            3 => {
                map.insert("minLength".into(), json!(rng.below(3)));
            }
            4 => {
                map.insert("maxItems".into(), json!(rng.below(3)));
            }
            5 => {
                map.insert("required".into(), json!([names[rng.below(4) as usize]]));
            }
            6 => {
                map.insert("minimum".into(), json!(rng.below(5) as i64 - 2));
            }
            7 => {
                map.insert("maxProperties".into(), json!(rng.below(3)));
            }
            18 | 8 => {
                map.insert("not".into(), json!({"type": types[rng.below(7) as usize]}));
            }
            19 | 9 => {
                map.insert(
                    "not".into(),
                    json!({"required": [names[rng.below(4) as usize]]}),
                );
            }
            20 => {
                map.insert("$ref".into(), json!("#"));
            }
            10 | 11 => {
                let mut props = serde_json::Map::new();
                for _ in 0..1 + rng.below(3) {
                    props.insert(
                        names[rng.below(4) as usize].into(),
                        random_schema(rng, depth - 1),
                    );
                }
                map.insert("properties".into(), Value::Object(props));
            }
            12 => {
                let s = if rng.below(2) == 0 {
                    json!(false)
                } else {
                    random_schema(rng, depth - 1)
                };
                map.insert("additionalProperties".into(), s);
            }
            13 => {
                map.insert("items".into(), random_schema(rng, depth - 1));
            }
            14 => {
                let n = 1 + rng.below(2);
                let list: Vec<Value> = (0..n).map(|_| random_schema(rng, depth - 1)).collect();
                map.insert("prefixItems".into(), json!(list));
            }
            15 | 16 => {
                let n = 1 + rng.below(3);
                let list: Vec<Value> = (0..n).map(|_| random_schema(rng, depth - 1)).collect();
                let key = ["anyOf", "allOf", "oneOf"][rng.below(3) as usize];
                map.insert(key.into(), json!(list));
            }
            17 => {
                map.insert("minProperties".into(), json!(rng.below(3)));
            }
            21 => {
                map.insert("minItems".into(), json!(rng.below(3)));
            }
            22 => {
                map.insert("not".into(), random_schema(rng, depth - 1));
            }
            23 => {
                map.insert("if".into(), random_schema(rng, depth - 1));
                map.insert("then".into(), random_schema(rng, depth - 1));
                map.insert("else".into(), random_schema(rng, depth - 1));
            }
            _ => {
                map.insert("contains".into(), random_schema(rng, depth - 1));
            }
        }
    }
    Value::Object(map)
}

#[test]
fn samples_of_random_schemas_are_valid() {
    let mut rng = Rng(7);
    let mut judged = 0;
    let layouts = [
        Options::default(),
        Options {
            property_order: PropertyOrder::Any,
            ..Options::default()
        },
    ];
    let rounds: usize = std::env::var("SIEVE_RANDOM_SCHEMAS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    for i in 0..rounds {
        let schema = random_schema(&mut rng, 2 + (i % 2) as u32);
        if std::env::var_os("SIEVE_SHOW_SCHEMA").is_some() {
            eprintln!("{i}: {schema}");
        }
        judged += check_samples(&schema, &layouts[i % 2]);
    }
    assert!(judged > 1000, "only {judged} samples judged");
}
