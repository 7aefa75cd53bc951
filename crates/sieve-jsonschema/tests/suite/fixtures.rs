//! JSON-Schema-Test-Suite fixtures (draft 2020-12, MIT, see `tests/fixtures/LICENSE`).
//!
//! For every schema that compiles: no instance marked invalid is accepted (accepted-invalid =
//! 0, no exceptions), and every instance marked valid is accepted except the ones listed in
//! [`REJECTED_VALID`], each with its reason. Schemas sieve refuses are counted, not failed:
//! refusing is the strict contract working.

use std::path::Path;

use serde_json::Value;
use sieve_ir::reference::Recognizer;
use sieve_jsonschema::{compile, Options};

pub(crate) const FILES: [&str; 26] = [
    "additionalProperties.json",
    "allOf.json",
    "anchor.json",
    "anyOf.json",
    "boolean_schema.json",
    "const.json",
    "contains.json",
    "enum.json",
    "infinite-loop-detection.json",
    "items.json",
    "maxContains.json",
    "maxItems.json",
    "maxProperties.json",
    "minContains.json",
    "minItems.json",
    "minProperties.json",
    "not.json",
    "oneOf.json",
    "patternProperties.json",
    "prefixItems.json",
    "properties.json",
    "propertyNames.json",
    "ref.json",
    "required.json",
    "type.json",
    "uniqueItems.json",
];

/// Draft-07 files (under `draft7/`; their schemas get `$schema: draft-07` when they have
/// none, as the suite intends).
pub(crate) const DRAFT7_FILES: [&str; 13] = [
    "additionalItems.json",
    "additionalProperties.json",
    "allOf.json",
    "anyOf.json",
    "const.json",
    "enum.json",
    "items.json",
    "not.json",
    "oneOf.json",
    "properties.json",
    "ref.json",
    "required.json",
    "type.json",
];

/// Valid instances sieve rejects: (file, group description, test description, why); an entry
/// covers the file of both drafts.
const REJECTED_VALID: &[(&str, &str, &str, &str)] = &[
    ("allOf.json", "allOf", "allOf", ORDER),
    ("allOf.json", "allOf with base schema", "valid", ORDER),
    (
        "const.json",
        "const with object",
        "same object with different property order is valid",
        LITERAL_ORDER,
    ),
    (
        "type.json",
        "integer type matches integers",
        "a float with zero fractional part is an integer",
        INTEGER_SPELLING,
    ),
];

const ORDER: &str = "PropertyOrder::Schema: declared properties come in schema order";
const LITERAL_ORDER: &str = "a const object is printed in its own member order";
const INTEGER_SPELLING: &str = "integers are spelled without a fraction (number module)";

#[test]
fn json_schema_test_suite() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut accepted_invalid = Vec::new();
    let mut unexpected_rejections = Vec::new();
    let (mut groups, mut refused, mut instances) = (0, 0, 0);
    let files = FILES
        .iter()
        .map(|f| (f.to_string(), false))
        .chain(DRAFT7_FILES.iter().map(|f| (format!("draft7/{f}"), true)));
    for (file, draft7) in files {
        let file = file.as_str();
        for (description, schema, tests) in load(&dir.join(file), draft7) {
            groups += 1;
            let description = description.as_str();
            let compiled = match compile(&schema, &Options::default()) {
                Ok(compiled) => compiled,
                Err(e) => {
                    if std::env::var_os("SIEVE_SHOW_REFUSED").is_some() {
                        eprintln!("refused: {file} / {description}: {e}");
                    }
                    refused += 1;
                    continue;
                }
            };
            let recognizer = Recognizer::new(&compiled.grammar).unwrap();
            for test in &tests {
                instances += 1;
                let data = serde_json::to_string(&test["data"]).unwrap();
                let valid = test["valid"].as_bool().unwrap();
                let name = test["description"].as_str().unwrap();
                let accepted = recognizer.accepts(data.as_bytes());
                if accepted && !valid {
                    accepted_invalid.push(format!("{file} / {description} / {name}: {data}"));
                }
                if !accepted && valid {
                    let listed = REJECTED_VALID.iter().any(|(f, g, t, _)| {
                        *f == file.trim_start_matches("draft7/") && *g == description && *t == name
                    });
                    if !listed {
                        unexpected_rejections
                            .push(format!("{file} / {description} / {name}: {data}"));
                    }
                }
            }
        }
    }
    eprintln!("{groups} groups, {refused} refused, {instances} instances checked");
    assert!(
        accepted_invalid.is_empty(),
        "accepted invalid instances:\n{}",
        accepted_invalid.join("\n")
    );
    assert!(
        unexpected_rejections.is_empty(),
        "valid instances rejected (add to REJECTED_VALID with a reason, or fix):\n{}",
        unexpected_rejections.join("\n")
    );
}

/// The groups of a fixture file: description, schema (with `$schema: draft-07` added for
/// draft-07 files that lack it) and tests.
pub(crate) fn load(path: &Path, draft7: bool) -> Vec<(String, Value, Vec<Value>)> {
    let cases: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut out = Vec::new();
    for group in cases.as_array().unwrap() {
        let mut schema = group["schema"].clone();
        if draft7 {
            if let Value::Object(map) = &mut schema {
                map.entry("$schema")
                    .or_insert_with(|| Value::from("http://json-schema.org/draft-07/schema#"));
            }
        }
        out.push((
            group["description"].as_str().unwrap().to_owned(),
            schema,
            group["tests"].as_array().unwrap().clone(),
        ));
    }
    out
}
