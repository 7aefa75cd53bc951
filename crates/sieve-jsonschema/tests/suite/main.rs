//! The JSON Schema front-end's test suite: per-feature schemas with hand-picked valid and
//! invalid instances, error cases (kind, keyword, pointer), layout options, adversarial
//! limits, and the JSON-Schema-Test-Suite fixtures under `tests/fixtures/`.
//!
//! Invariant checked everywhere: a compiled grammar never accepts an instance the schema
//! rejects (accepted-invalid = 0). The reference recogniser of `sieve-ir` is the oracle;
//! instances are serialised compactly by `serde_json` (canonical escapes), the layout of
//! [`Options::default`].

use serde_json::{json, Value};
use sieve_ir::reference::Recognizer;
use sieve_jsonschema::{compile, ErrorKind, Options, PropertyOrder, Whitespace};

mod fixtures;
mod samples;

/// Compiles `schema` with `options` into a recogniser.
fn recognizer_with(schema: &Value, options: &Options) -> Recognizer {
    let compiled = compile(schema, options).unwrap_or_else(|e| panic!("{schema}: {e}"));
    Recognizer::new(&compiled.grammar).expect("small repetition bounds")
}

/// Checks that `schema` (default options) accepts each of `valid` and rejects each of
/// `invalid`, as compact JSON texts.
fn check(schema: Value, valid: &[Value], invalid: &[Value]) {
    let r = recognizer_with(&schema, &Options::default());
    for v in valid {
        let text = serde_json::to_string(v).unwrap();
        assert!(r.accepts(text.as_bytes()), "{schema}: should accept {text}");
    }
    for v in invalid {
        let text = serde_json::to_string(v).unwrap();
        assert!(
            !r.accepts(text.as_bytes()),
            "{schema}: should reject {text}"
        );
    }
}

/// Checks raw texts (for layout tests).
fn check_texts(schema: Value, options: &Options, valid: &[&str], invalid: &[&str]) {
    let r = recognizer_with(&schema, options);
    for text in valid {
        assert!(
            r.accepts(text.as_bytes()),
            "{schema}: should accept {text:?}"
        );
    }
    for text in invalid {
        assert!(
            !r.accepts(text.as_bytes()),
            "{schema}: should reject {text:?}"
        );
    }
}

/// Checks that `schema` fails with `kind` at `pointer` naming `keyword`.
fn check_error(schema: Value, kind: ErrorKind, keyword: &str, pointer: &str) {
    check_error_with(schema, &Options::default(), kind, keyword, pointer);
}

fn check_error_with(
    schema: Value,
    options: &Options,
    kind: ErrorKind,
    keyword: &str,
    pointer: &str,
) {
    match compile(&schema, options) {
        Ok(_) => panic!("{schema}: compiled, expected {kind:?} at {pointer}"),
        Err(e) => {
            assert_eq!(e.kind, kind, "{schema}: {e}");
            assert_eq!(e.keyword, keyword, "{schema}: {e}");
            assert_eq!(e.pointer, pointer, "{schema}: {e}");
        }
    }
}

#[test]
fn boolean_and_empty_schemas() {
    let any = [
        json!(null),
        json!(true),
        json!(1),
        json!(-2.5e3),
        json!("x"),
        json!([1, {"a": []}]),
        json!({"a": {"b": null}}),
    ];
    check(json!(true), &any, &[]);
    check(json!({}), &any, &[]);
    check(
        json!({"title": "annotations only", "x-unknown": 1}),
        &any,
        &[],
    );
    check_error(json!(false), ErrorKind::Unsatisfiable, "", "");
}

#[test]
fn types() {
    check(
        json!({"type": "null"}),
        &[json!(null)],
        &[json!(0), json!("null")],
    );
    check(
        json!({"type": "boolean"}),
        &[json!(true), json!(false)],
        &[json!(null), json!(1)],
    );
    check(
        json!({"type": "integer"}),
        &[json!(0), json!(-17)],
        &[json!(1.5), json!("1")],
    );
    check(
        json!({"type": "number"}),
        &[json!(0), json!(1.5), json!(-1e10)],
        &[json!("1"), json!(null)],
    );
    check(
        json!({"type": "string"}),
        &[json!(""), json!("a\"b\\c\n")],
        &[json!(1)],
    );
    check(
        json!({"type": ["string", "null"]}),
        &[json!("a"), json!(null)],
        &[json!(1), json!([])],
    );
    check(
        json!({"type": "array"}),
        &[json!([]), json!([1, "a"])],
        &[json!({})],
    );
    check(
        json!({"type": "object"}),
        &[json!({}), json!({"a": 1})],
        &[json!([])],
    );
    check_error(
        json!({"type": "strnig"}),
        ErrorKind::Invalid,
        "type",
        "/type",
    );
    check_error(json!({"type": 3}), ErrorKind::Invalid, "type", "/type");
    check_error(
        json!({"allOf": [{"type": "string"}, {"type": "integer"}]}),
        ErrorKind::Unsatisfiable,
        "",
        "",
    );
}

#[test]
fn const_and_enum() {
    check(
        json!({"const": {"b": [1, null], "a": "x"}}),
        &[json!({"b": [1, null], "a": "x"})],
        &[
            json!({"a": "x", "b": [1, null]}),
            json!({"b": [1], "a": "x"}),
        ],
    );
    check(
        json!({"enum": ["a", 1, null, [true]]}),
        &[json!("a"), json!(1), json!(null), json!([true])],
        &[json!("b"), json!(2), json!([])],
    );
    // enum with other keywords: filtered by them.
    check(
        json!({"enum": ["a", 1, "bb"], "type": "string"}),
        &[json!("a"), json!("bb")],
        &[json!(1)],
    );
    check(
        json!({"enum": [1, "a", {"x": 1}, {"x": "s"}], "properties": {"x": {"type": "integer"}}}),
        &[json!(1), json!("a"), json!({"x": 1})],
        &[json!({"x": "s"})],
    );
    // The filter ignores member order.
    check(
        json!({"enum": [{"b": 1, "a": 2}, {"a": "x"}], "properties": {"a": {"type": "integer"}, "b": {}}}),
        &[json!({"b": 1, "a": 2})],
        &[json!({"a": "x"})],
    );
    check(
        json!({"allOf": [{"enum": [1, 2, 3]}, {"enum": [2, 3, 4]}]}),
        &[json!(2), json!(3)],
        &[json!(1), json!(4)],
    );
    check_error(
        json!({"const": 1, "type": "string"}),
        ErrorKind::Unsatisfiable,
        "",
        "",
    );
    check_error(json!({"enum": 1}), ErrorKind::Invalid, "enum", "/enum");
}

#[test]
fn objects_in_schema_order() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
        "required": ["b"],
        "additionalProperties": false
    });
    check(
        schema,
        &[json!({"b": "x"}), json!({"a": 1, "b": "x"})],
        &[
            json!({}),
            json!({"a": 1}),
            json!({"b": "x", "a": 1}),
            json!({"a": "s", "b": "x"}),
            json!({"b": "x", "c": 1}),
        ],
    );
    // additionalProperties default: any other key, but never a declared one again.
    let schema = json!({"properties": {"a": {"type": "integer"}}});
    check(
        schema.clone(),
        &[
            json!({}),
            json!({"a": 1}),
            json!({"a": 1, "ab": "s"}),
            json!({"b": [1]}),
            json!({"": 0}),
        ],
        &[json!({"a": "s"})],
    );
    let r = recognizer_with(&schema, &Options::default());
    assert!(!r.accepts(br#"{"a":1,"a":"s"}"#));
    assert!(!r.accepts(br#"{"b":1,"a":"s"}"#));
    // additionalProperties as a schema.
    check(
        json!({"properties": {"a": {}}, "additionalProperties": {"type": "boolean"}}),
        &[json!({"a": "x", "b": true})],
        &[json!({"b": 1})],
    );
    // A false property is forbidden; a required false property is unsatisfiable.
    check(
        json!({"properties": {"a": false}}),
        &[json!({}), json!({"b": 1})],
        &[json!({"a": 1})],
    );
    check_error(
        json!({"properties": {"a": false}, "required": ["a"], "type": "object"}),
        ErrorKind::Unsatisfiable,
        "",
        "",
    );
    // Required but not declared: governed by additionalProperties.
    check(
        json!({"required": ["x"], "additionalProperties": {"type": "integer"}, "type": "object"}),
        &[json!({"x": 1}), json!({"x": 1, "y": 2})],
        &[json!({}), json!({"x": "s"})],
    );
}

#[test]
fn property_counts() {
    let schema = json!({"type": "object", "properties": {"a": {}, "b": {}}, "minProperties": 1, "maxProperties": 2});
    check(
        schema,
        &[
            json!({"a": 1}),
            json!({"b": 1}),
            json!({"a": 1, "c": 1}),
            json!({"c": 1, "d": 2}),
        ],
        &[
            json!({}),
            json!({"a": 1, "b": 2, "c": 3}),
            json!({"c": 1, "d": 2, "e": 3}),
        ],
    );
    check_error(
        json!({"type": "object", "additionalProperties": false, "properties": {"a": {}}, "minProperties": 2}),
        ErrorKind::Unsatisfiable,
        "",
        "",
    );
}

#[test]
fn objects_in_any_order() {
    let options = Options {
        property_order: PropertyOrder::Any,
        ..Options::default()
    };
    let schema = json!({"properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a"], "additionalProperties": false});
    check_texts(
        schema,
        &options,
        &[r#"{"a":1}"#, r#"{"b":"x","a":1}"#, r#"{"a":1,"b":"x"}"#],
        &[
            r#"{}"#,
            r#"{"b":"x"}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":1,"b":"x","b":"y"}"#,
        ],
    );
    let schema = json!({"properties": {"a": {}}});
    check_texts(
        schema,
        &options,
        &[r#"{"x":1,"a":1,"y":2}"#],
        &[r#"{"a":1,"x":1,"a":2}"#],
    );
    // Literal objects too, nested ones included.
    check_texts(
        json!({"const": {"a": 1, "b": [{"c": 2, "d": 3}]}}),
        &options,
        &[
            r#"{"b":[{"d":3,"c":2}],"a":1}"#,
            r#"{"a":1,"b":[{"c":2,"d":3}]}"#,
        ],
        &[
            r#"{"a":1}"#,
            r#"{"a":1,"a":1,"b":[{"c":2,"d":3}]}"#,
            r#"{"b":[{"d":3,"c":2}]}"#,
        ],
    );
    let many: serde_json::Map<String, Value> =
        (0..9).map(|i| (format!("p{i}"), json!({}))).collect();
    check_error_with(
        json!({"properties": many}),
        &options,
        ErrorKind::Limit,
        "properties",
        "/properties",
    );
}

#[test]
fn arrays() {
    check(
        json!({"items": {"type": "integer"}}),
        &[json!([]), json!([1, 2, 3])],
        &[json!([1, "a"])],
    );
    check(
        json!({"items": {"type": "integer"}, "minItems": 2, "maxItems": 3}),
        &[json!([1, 2]), json!([1, 2, 3])],
        &[json!([1]), json!([1, 2, 3, 4])],
    );
    check(
        json!({"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false}),
        &[json!([]), json!(["a"]), json!(["a", 1])],
        &[json!([1]), json!(["a", 1, 2])],
    );
    check(
        json!({"prefixItems": [{"type": "string"}], "items": {"type": "boolean"}, "minItems": 2}),
        &[json!(["a", true]), json!(["a", true, false])],
        &[json!(["a"]), json!(["a", 1])],
    );
    check(
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}], "additionalItems": {"type": "integer"}}),
        &[json!(["a", 1, 2])],
        &[json!([1]), json!(["a", "b"])],
    );
    check(
        json!({"contains": {"const": 5}}),
        &[json!([5]), json!([1, 5, 2])],
        &[json!([]), json!([1, 2])],
    );
    check(
        json!({"contains": {"const": 5}, "minContains": 2, "items": {"type": "integer"}}),
        &[json!([5, 1, 5])],
        &[json!([5]), json!([5, "a", 5])],
    );
    check(
        json!({"uniqueItems": true, "maxItems": 1}),
        &[json!([]), json!([1])],
        &[json!([1, 1])],
    );
    check(
        json!({"uniqueItems": true, "items": {"const": 3}}),
        &[json!([]), json!([3])],
        &[json!([3, 3])],
    );
    check_error(
        json!({"uniqueItems": true}),
        ErrorKind::Unsupported,
        "uniqueItems",
        "/uniqueItems",
    );
    check_error(
        json!({"contains": {}, "maxContains": 2}),
        ErrorKind::Unsupported,
        "maxContains",
        "/maxContains",
    );
    check_error(
        json!({"minItems": -1}),
        ErrorKind::Invalid,
        "minItems",
        "/minItems",
    );
}

#[test]
fn composition() {
    check(
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
        &[json!("a"), json!(1)],
        &[json!(null)],
    );
    check(
        json!({"oneOf": [{"type": "string"}, {"type": "integer"}]}),
        &[json!("a"), json!(1)],
        &[json!(null)],
    );
    check(
        json!({"oneOf": [{"properties": {"k": {"const": "a"}, "v": {"type": "integer"}}, "required": ["k"]}, {"properties": {"k": {"const": "b"}}, "required": ["k"]}], "type": "object"}),
        &[json!({"k": "a", "v": 1}), json!({"k": "b", "v": "s"})],
        &[json!({"k": "a", "v": "s"}), json!({"k": "c"})],
    );
    check_error(
        json!({"oneOf": [{"type": "integer"}, {"type": "number"}]}),
        ErrorKind::Unsupported,
        "oneOf",
        "/oneOf",
    );
    check(
        json!({"allOf": [{"properties": {"a": {"type": "integer"}}}, {"properties": {"b": {"type": "string"}}, "required": ["b"]}], "type": "object"}),
        &[json!({"a": 1, "b": "x"}), json!({"b": "x"})],
        &[json!({"a": 1}), json!({"a": "s", "b": "x"})],
    );
    // Each allOf branch keeps its own additionalProperties meaning.
    check(
        json!({"allOf": [{"properties": {"a": {}}, "additionalProperties": false}, {"properties": {"b": {}}}]}),
        &[json!({}), json!({"a": 1})],
        &[json!({"b": 1}), json!({"a": 1, "b": 1})],
    );
    // anyOf distributes over the rest of the intersection.
    check(
        json!({"type": "integer", "anyOf": [{"const": 1}, {"const": "a"}, {"const": 2}]}),
        &[json!(1), json!(2)],
        &[json!("a"), json!(3)],
    );
    check(
        json!({"not": {"type": ["string", "null"]}}),
        &[json!(1), json!([]), json!({})],
        &[json!("a"), json!(null)],
    );
    check(
        json!({"not": {"type": "integer"}, "type": ["number", "string"]}),
        &[json!("a")],
        &[json!(1)],
    );
    check(
        json!({"not": {"required": ["a"]}}),
        &[json!({}), json!({"b": 1}), json!({"ab": 1})],
        &[json!({"a": 1}), json!(1), json!("s")],
    );
    check(
        json!({"properties": {"a": {"type": "integer"}}, "not": {"required": ["a"]}}),
        &[json!({"b": 1})],
        &[json!({"a": 1})],
    );
    check(json!({"not": false, "type": "null"}), &[json!(null)], &[]);
    check_error(json!({"not": {}}), ErrorKind::Unsatisfiable, "", "");
    check_error(
        json!({"not": {"minimum": 3}}),
        ErrorKind::Unsupported,
        "not",
        "/not",
    );
    for keyword in ["unevaluatedItems", "unevaluatedProperties"] {
        check_error(
            json!({"properties": {"x": {keyword: {}}}}),
            ErrorKind::Unsupported,
            keyword,
            &format!("/properties/x/{keyword}"),
        );
    }
}

#[test]
fn refs() {
    check(
        json!({"$defs": {"n": {"type": "integer"}}, "items": {"$ref": "#/$defs/n"}}),
        &[json!([1])],
        &[json!(["a"])],
    );
    check(
        json!({"definitions": {"n": {"type": "integer"}}, "properties": {"x": {"$ref": "#/definitions/n"}}}),
        &[json!({"x": 1})],
        &[json!({"x": "a"})],
    );
    // Recursion: a tree of integers.
    let tree = json!({"type": "object", "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#"}}}, "required": ["v"], "additionalProperties": false});
    check(
        tree,
        &[
            json!({"v": 1}),
            json!({"v": 1, "kids": [{"v": 2, "kids": []}, {"v": 3}]}),
        ],
        &[
            json!({"v": 1, "kids": [{}]}),
            json!({"v": 1, "kids": [{"v": "x"}]}),
        ],
    );
    // $id and $anchor, relative resolution.
    let schema = json!({
        "$id": "http://example.com/root.json",
        "properties": {"a": {"$ref": "item.json"}, "b": {"$ref": "#num"}},
        "$defs": {"item": {"$id": "item.json", "type": "string"}, "n": {"$anchor": "num", "type": "number"}}
    });
    check(
        schema,
        &[json!({"a": "s", "b": 1.5})],
        &[json!({"a": 1}), json!({"b": "s"})],
    );
    // 2020-12: siblings apply; draft-07: they are ignored.
    check(json!({"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "maxLength": 0, "type": ["string", "integer"]}).clone(), &[], &[json!(1)]);
    check(
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"s": {"type": "string"}}, "$ref": "#/definitions/s", "type": "integer"}),
        &[json!("x")],
        &[json!(1)],
    );
    check_error(
        json!({"$ref": "#/$defs/missing"}),
        ErrorKind::Invalid,
        "$ref",
        "/$ref",
    );
    check_error(
        json!({"properties": {"a": {"$ref": "http://example.com/other.json"}}}),
        ErrorKind::Unsupported,
        "$ref",
        "/properties/a/$ref",
    );
    // A required self-reference has no finite instance.
    check_error(
        json!({"type": "object", "properties": {"a": {"$ref": "#"}}, "required": ["a"]}),
        ErrorKind::Unsatisfiable,
        "",
        "",
    );
}

#[test]
fn whitespace_and_separators() {
    let options = Options {
        whitespace: Whitespace::Flexible,
        max_whitespace: 2,
        ..Options::default()
    };
    let schema = json!({"properties": {"a": {"type": "array"}}, "additionalProperties": false});
    check_texts(
        schema.clone(),
        &options,
        &[
            r#" { "a" : [ 1 , 2 ] } "#,
            "{}",
            "{ }",
            "{\"a\":[]}",
            "{\n\"a\":\t[\r\n]}",
        ],
        &["{   }", "  {}   ", "{\"a\":[1,2   ]}"],
    );
    let options = Options {
        item_separator: ", ".into(),
        key_separator: ": ".into(),
        ..Options::default()
    };
    check_texts(schema, &options, &[r#"{"a": [1, 2]}"#], &[r#"{"a":[1,2]}"#]);
    let bad = Options {
        item_separator: ";".into(),
        ..Options::default()
    };
    check_error_with(json!({}), &bad, ErrorKind::Invalid, "", "");
    let options = Options {
        whitespace: Whitespace::Flexible,
        max_whitespace: 1,
        ..Options::default()
    };
    check_texts(
        json!({"const": [1, {"k": null}]}),
        &options,
        &["[1, {\"k\" : null}]", "[ 1,{\"k\":null} ]"],
        &["[1,  {\"k\":null}]", "[1,{\"k\":nul}]"],
    );
}

/// Flexible whitespace is one shared rule that every gap refers to, however many gaps the
/// schema has; without outer whitespace the text starts and ends with the value itself.
#[test]
fn whitespace_is_one_shared_rule() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "array", "items": {"type": "integer"}}, "b": {"type": "object"}},
        "additionalProperties": false
    });
    let flexible = Options {
        whitespace: Whitespace::Flexible,
        max_whitespace: 3,
        ..Options::default()
    };
    let compiled = sieve_jsonschema::compile(&schema, &flexible).unwrap();
    let shared: Vec<&str> = compiled
        .grammar
        .shared_rules()
        .map(|id| compiled.grammar.rule(id).name())
        .collect();
    assert_eq!(shared, ["ws"], "{}", compiled.grammar);
    check_texts(
        schema.clone(),
        &flexible,
        &[" {\"a\" : [ 1 ,2 ] }\n", "{\"b\":{   }}"],
        &["{\"b\":{    }}", "{ \"a\":[1,2]}    "],
    );
    let inner = Options {
        outer_whitespace: false,
        ..flexible
    };
    check_texts(
        schema.clone(),
        &inner,
        &["{\"a\" : [ 1 ,2 ] }", "{ }"],
        &[" {}", "{}\n", " { }  "],
    );
    let compact = sieve_jsonschema::compile(&schema, &Options::default()).unwrap();
    assert_eq!(compact.grammar.shared_rules().count(), 0);
}

/// The rules of `grammar` that no path from the root reaches, and those whose body is only a
/// reference to another rule, by name.
fn unreachable_and_renaming_rules(grammar: &sieve_ir::Grammar) -> (Vec<String>, Vec<String>) {
    let references = grammar.references();
    let mut reached = vec![false; grammar.rules().len()];
    let mut stack = vec![grammar.root()];
    reached[grammar.root().index()] = true;
    while let Some(id) = stack.pop() {
        for &callee in &references[id.index()] {
            if !std::mem::replace(&mut reached[callee.index()], true) {
                stack.push(callee);
            }
        }
    }
    let unreachable = grammar
        .rule_ids()
        .filter(|id| !reached[id.index()])
        .map(|id| grammar.rule(id).name().to_owned())
        .collect();
    let renaming = grammar
        .rule_ids()
        .filter(|&id| {
            matches!(grammar.rule(id).body().kind(), sieve_ir::ExprKind::Ref(callee) if *callee != id)
        })
        .map(|id| grammar.rule(id).name().to_owned())
        .collect();
    (unreachable, renaming)
}

#[test]
fn objects_build_only_the_rules_they_reach() {
    // Optional and required members in every arrangement, leaf schemas shared between
    // members, a nested object and a recursive reference: the member chain builds a rule only
    // for the member counts a prefix can have, and a schema that is one shared leaf rule is
    // referred to directly, not through a rule that renames it.
    let schemas = [
        json!({"type": "object", "properties": {"a": {"type": "string"}}}),
        json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
               "required": ["a", "b"], "additionalProperties": false}),
        json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"},
               "c": {"type": "number"}}, "required": ["b"], "additionalProperties": false}),
        json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
               "required": ["b"], "minProperties": 2, "additionalProperties": {"type": "boolean"}}),
        json!({"type": "object", "properties": {
            "inner": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
            "next": {"$ref": "#"}}}),
        json!({"type": "string", "maxLength": 3}),
    ];
    let embedded = Options {
        outer_whitespace: false,
        ..Options::default()
    };
    for schema in &schemas {
        for options in [&Options::default(), &embedded] {
            let compiled = compile(schema, options).unwrap_or_else(|e| panic!("{schema}: {e}"));
            let (unreachable, renaming) = unreachable_and_renaming_rules(&compiled.grammar);
            assert!(
                unreachable.is_empty(),
                "{schema}: unreachable rules {unreachable:?}\n{}",
                compiled.grammar
            );
            assert!(
                renaming.is_empty(),
                "{schema}: rules that only rename another {renaming:?}\n{}",
                compiled.grammar
            );
        }
    }
    check(
        schemas[3].clone(),
        &[
            json!({"a": "x", "b": "y"}),
            json!({"b": "y", "z": true}),
            json!({"a": "", "b": "", "q": false}),
        ],
        &[
            json!({"b": "y"}),
            json!({"a": "x"}),
            json!({"b": "y", "z": 1}),
        ],
    );
    check(
        schemas[2].clone(),
        &[
            json!({"b": ""}),
            json!({"a": "", "b": "", "c": 1}),
            json!({"b": "", "c": 2.5}),
        ],
        &[json!({}), json!({"a": ""}), json!({"b": 1})],
    );
}

#[test]
fn lenient_mode_warns_and_drops() {
    let options = Options {
        lenient: true,
        ..Options::default()
    };
    let schema = json!({"properties": {"a": {"not": {"minimum": 3}}, "b": {"uniqueItems": true}}});
    let compiled = compile(&schema, &options).unwrap();
    let pointers: Vec<_> = compiled
        .warnings
        .iter()
        .map(|w| (w.keyword.as_str(), w.pointer.as_str()))
        .collect();
    assert_eq!(
        pointers,
        [
            ("not", "/properties/a/not"),
            ("uniqueItems", "/properties/b/uniqueItems")
        ]
    );
    assert!(compile(&schema, &Options::default()).is_err());
    // A remote reference is dropped: any value there.
    let schema = json!({"properties": {"a": {"$ref": "https://example.com/x.json"}}});
    let compiled = compile(&schema, &options).unwrap();
    assert_eq!(compiled.warnings.len(), 1);
    assert_eq!(compiled.warnings[0].pointer, "/properties/a/$ref");
    let r = Recognizer::new(&compiled.grammar).unwrap();
    assert!(r.accepts(br#"{"a":[1]}"#));
    // Equal string and number schemas share one compiled rule, but a refusal is reported at
    // every pointer: the shared rule is only reused once the keyword is dropped there too.
    let unknown = json!({"type": "string", "format": "no-such-format", "maxLength": 3});
    let schema = json!({"properties": {"a": unknown, "b": unknown, "c": {"type": "string", "maxLength": 3}}});
    let compiled = compile(&schema, &options).unwrap();
    let pointers: Vec<_> = compiled
        .warnings
        .iter()
        .map(|w| w.pointer.as_str())
        .collect();
    assert_eq!(pointers, ["/properties/a/format", "/properties/b/format"]);
    let r = Recognizer::new(&compiled.grammar).unwrap();
    assert!(r.accepts(br#"{"a":"xyz","b":"","c":"q"}"#));
    assert!(!r.accepts(br#"{"a":"wxyz"}"#));
}

#[test]
fn adversarial_inputs_end_in_bounded_time() {
    // Deep nesting.
    let mut deep = json!({"type": "integer"});
    for _ in 0..500 {
        deep = json!({"items": deep});
    }
    assert_eq!(
        compile(&deep, &Options::default()).unwrap_err().kind,
        ErrorKind::Limit
    );
    // A big enum and many properties compile.
    let values: Vec<Value> = (0..10_000).map(|i| json!(format!("value-{i}"))).collect();
    let compiled = compile(&json!({"enum": values}), &Options::default()).unwrap();
    assert!(compiled.grammar.rules().len() < 10);
    let props: serde_json::Map<String, Value> = (0..2_000)
        .map(|i| (format!("p{i}"), json!({"type": "integer"})))
        .collect();
    compile(&json!({"properties": props}), &Options::default()).unwrap();
    // Without other keys, many optional properties take rules linear in their number (the
    // count is not tracked when no count keyword binds it).
    let props: serde_json::Map<String, Value> = (0..2_000)
        .map(|i| (format!("p{i}"), json!({"type": "integer"})))
        .collect();
    let closed = json!({"properties": props, "additionalProperties": false});
    let compiled = compile(&closed, &Options::default()).unwrap();
    let n = compiled.grammar.rules().len();
    assert!(n < 8 * 2_000, "{n} rules");
    // Equal string and number schemas share their rules: a format's automaton is built once.
    let rules = |n: usize| {
        let props: serde_json::Map<String, Value> = (0..n)
            .map(|i| {
                let value = if i % 2 == 0 {
                    json!({"type": "string", "format": "email"})
                } else {
                    json!({"type": "number", "minimum": 0.5, "maximum": 99.25})
                };
                (format!("p{i}"), value)
            })
            .collect();
        let schema = json!({"properties": props, "additionalProperties": false});
        compile(&schema, &Options::default())
            .unwrap()
            .grammar
            .rules()
            .len()
    };
    let (two, three_hundred) = (rules(2), rules(300));
    assert!(
        three_hundred < two + 4 * 300,
        "{two} rules for 2 properties, {three_hundred} for 300"
    );
    // Open objects with the same property names have the same key tries: their rules are
    // made once per compilation, so more such objects add no `key_chars` rule.
    let key_chars = |objects: usize| {
        let props = json!({"metadata": {"type": "string"}, "name": {}, "namespace": {}});
        let items: Vec<Value> = (0..objects).map(|_| json!({"properties": props})).collect();
        let schema = json!({"type": "array", "prefixItems": items, "items": false});
        let compiled = compile(&schema, &Options::default()).unwrap();
        let count = compiled
            .grammar
            .rules()
            .iter()
            .filter(|rule| rule.name().starts_with("key_chars"))
            .count();
        (count, compiled)
    };
    let ((one, _), (twenty, compiled)) = (key_chars(1), key_chars(20));
    assert!(one > 0, "the trie has rules");
    assert_eq!(one, twenty, "{}", compiled.grammar);
    let r = Recognizer::new(&compiled.grammar).unwrap();
    let mut items = vec![r#"{}"#; 20];
    items[3] = r#"{"name":1,"nam":2,"namespaces":3}"#;
    items[19] = r#"{"metadat":{}}"#;
    assert!(r.accepts(format!("[{}]", items.join(",")).as_bytes()));
    items[3] = r#"{"metadata":1}"#;
    assert!(!r.accepts(format!("[{}]", items.join(",")).as_bytes()));
    // The key exclusion is made once per set of names (in any order); an object with other
    // names gets its own: `b` is another key of the third object but a declared one of the
    // first two.
    let objects = json!({"type": "array", "prefixItems": [
        {"properties": {"a": {"type": "string"}, "b": {"type": "integer"}}},
        {"properties": {"b": {"type": "string"}, "a": {"type": "integer"}}},
        {"properties": {"a": {"type": "string"}, "c": {"type": "integer"}}}
    ], "items": false});
    let r = Recognizer::new(&compile(&objects, &Options::default()).unwrap().grammar).unwrap();
    for (text, verdict) in [
        (r#"[{"a":"x","b":1},{"b":"x","a":1},{"a":"x","c":1}]"#, true),
        (r#"[{"d":1},{"ab":"x"},{"b":"x"}]"#, true),
        (r#"[{"b":"x"},{},{}]"#, false),
        (r#"[{},{"a":"x"},{}]"#, false),
        (r#"[{},{},{"c":"x"}]"#, false),
    ] {
        assert_eq!(r.accepts(text.as_bytes()), verdict, "{text}");
    }
    // A very long property name (the key exclusion walks it character by character).
    let long = "k".repeat(50_000);
    compile(&json!({"properties": {long: {}}}), &Options::default()).unwrap();
    // Many names checked against a pattern.
    let props: serde_json::Map<String, Value> =
        (0..500).map(|i| (format!("p{i}"), json!({}))).collect();
    let schema = json!({"properties": props, "patternProperties": {"^q": {}}, "additionalProperties": false});
    compile(&schema, &Options::default()).unwrap();
    // Tight fuel.
    let options = Options {
        limits: sieve_jsonschema::Limits {
            fuel: 100,
            ..Default::default()
        },
        ..Options::default()
    };
    let props: serde_json::Map<String, Value> = (0..200)
        .map(|i| (format!("p{i}"), json!({"type": "integer"})))
        .collect();
    assert_eq!(
        compile(&json!({"properties": props}), &options)
            .unwrap_err()
            .kind,
        ErrorKind::Limit
    );
}

#[test]
fn pattern_properties() {
    let schema = json!({
        "properties": {"name": {"type": "string"}},
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": false
    });
    check(
        schema,
        &[
            json!({}),
            json!({"name": "a", "x-1": 1, "x-b": 2}),
            json!({"x-": 0}),
        ],
        &[
            json!({"x-1": "s"}),
            json!({"other": 1}),
            json!({"x-1": 1, "name": "a"}),
        ],
    );
    // Several patterns with one schema.
    check(
        json!({"patternProperties": {"^a": {"type": "integer"}, "b$": {"type": "integer"}}, "additionalProperties": false}),
        &[json!({"ab": 1, "xb": 2})],
        &[json!({"c": 1}), json!({"ab": "s"})],
    );
    // A declared name matching a pattern meets both schemas; the pattern's other keys are
    // the pattern's language less the declared names.
    check(
        json!({"properties": {"x-a": {"type": "integer"}}, "patternProperties": {"^x-": {"minimum": 0}}, "additionalProperties": false}),
        &[json!({"x-a": 1, "x-b": 2}), json!({"x-b": "s"}), json!({})],
        &[
            json!({"x-a": -1}),
            json!({"x-a": "s"}),
            json!({"x-b": -1}),
            json!({"y": 1}),
            json!({"x-b": 1, "x-a": 1}),
        ],
    );
    // Keys matching no pattern meet additionalProperties (absent: anything).
    check(
        json!({"patternProperties": {"^x-": {"type": "integer"}}}),
        &[
            json!({"x-a": 1, "b": "s"}),
            json!({"b": [], "x-": 0}),
            json!({"xy": "s"}),
        ],
        &[json!({"x-a": "s"}), json!({"b": 1, "x-b": null})],
    );
    check(
        json!({"properties": {"id": {"type": "string"}}, "patternProperties": {"^[0-9]+$": {"type": "integer"}}, "additionalProperties": {"type": "boolean"}}),
        &[
            json!({"id": "a", "1": 2, "ab": true}),
            json!({"id": "7"}),
            json!({"12": 3}),
        ],
        &[
            json!({"id": 1}),
            json!({"1": true}),
            json!({"ab": 1}),
            json!({"1a": 1}),
        ],
    );
    // Overlapping patterns with different schemas: a key matching both meets both.
    check(
        json!({"patternProperties": {"a": {"type": "integer"}, "b": {"minimum": 3}}, "additionalProperties": false}),
        &[json!({"a": 1, "b": 5, "ab": 4, "xb": "s"})],
        &[
            json!({"ab": 1}),
            json!({"ab": "s"}),
            json!({"b": 2}),
            json!({"c": 1}),
            json!({"a": "s"}),
        ],
    );
    // Any property order too.
    let any = Options {
        property_order: PropertyOrder::Any,
        ..Options::default()
    };
    check_texts(
        json!({"properties": {"n": {"type": "null"}}, "patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": {"type": "string"}}),
        &any,
        &[r#"{"x1":1,"n":null,"y":"s"}"#, r#"{"y":"s","x":2}"#],
        &[r#"{"x1":"s"}"#, r#"{"y":1}"#, r#"{"n":1}"#],
    );
    // Patterns whose schemas are empty constrain nothing.
    check(
        json!({"patternProperties": {"^x-": {}}}),
        &[json!({"x-a": [1], "b": 2})],
        &[],
    );
}

#[test]
fn property_names() {
    check(
        json!({"propertyNames": {"maxLength": 3}}),
        &[json!({}), json!({"abc": 1, "x": 2})],
        &[json!({"abcd": 1})],
    );
    check(
        json!({"properties": {"ab": {}, "abcd": {}}, "propertyNames": {"maxLength": 3}, "additionalProperties": false}),
        &[json!({"ab": 1})],
        &[json!({"abcd": 1}), json!({"x": 1})],
    );
    check(
        json!({"propertyNames": false}),
        &[json!({}), json!(1)],
        &[json!({"a": 1})],
    );
    check(
        json!({"propertyNames": {"enum": ["a", "b"]}}),
        &[json!({"a": 1, "b": [2]})],
        &[json!({"c": 1})],
    );
}

/// Every spelling of a key, as RFC 8259 allows them (not the default).
fn any_key_spelling() -> Options {
    Options {
        key_escapes: Some(sieve_jsonschema::Escapes::Any),
        ..Options::default()
    }
}

/// By default keys are written one way, as XGrammar and llguidance write them: a declared name
/// literally, another key in its canonical spelling, and the exclusion of the declared names
/// still decides by value.
#[test]
fn keys_are_spelled_canonically_by_default() {
    let schema = json!({"properties": {"a": {"type": "integer"}, "é\\": {"type": "integer"}}});
    check_texts(
        schema,
        &Options::default(),
        &[
            r#"{"a":1}"#,
            r#"{"a":1,"b":"s"}"#,
            r#"{"é\\":1}"#,
            r#"{"é\\x":"s"}"#,
            r#"{"ab":"s"}"#,
            r#"{"\n":"s"}"#,
            r#"{"😀":"s"}"#,
        ],
        &[
            r#"{"\u0061":1}"#,
            r#"{"a":"s"}"#,
            r#"{"\u0062":"s"}"#,
            r#"{"\/":"s"}"#,
            r#"{"é\\":"s"}"#,
            r#"{"\u00e9\\":1}"#,
            r#"{"\ud83d\ude00":"s"}"#,
        ],
    );
}

/// `const` and `enum` values are written one way by default, keys of listed objects included,
/// as XGrammar and llguidance write them; `literal_escapes: Some(Any)` accepts every spelling,
/// and string values keep theirs either way.
#[test]
fn listed_values_are_spelled_canonically_by_default() {
    let schema = json!({"properties": {
        "s": {"enum": ["ok", "é\n", {"k": "v"}]},
        "c": {"const": "/"},
        "free": {"type": "string"}
    }, "additionalProperties": false});
    check_texts(
        schema.clone(),
        &Options::default(),
        &[
            r#"{"s":"ok"}"#,
            r#"{"s":"é\n"}"#,
            r#"{"s":{"k":"v"}}"#,
            r#"{"c":"/"}"#,
            r#"{"free":"\u006fk"}"#,
        ],
        &[
            r#"{"s":"\u006fk"}"#,
            r#"{"s":"\u00e9\n"}"#,
            r#"{"s":"é\u000a"}"#,
            r#"{"s":{"\u006b":"v"}}"#,
            r#"{"s":{"k":"\u0076"}}"#,
            r#"{"c":"\/"}"#,
        ],
    );
    let any = Options {
        literal_escapes: Some(sieve_jsonschema::Escapes::Any),
        ..Options::default()
    };
    check_texts(
        schema,
        &any,
        &[
            r#"{"s":"\u006fk"}"#,
            r#"{"s":"\u00e9\n"}"#,
            r#"{"s":"é\u000a"}"#,
            r#"{"s":{"\u006b":"v"}}"#,
            r#"{"c":"\/"}"#,
        ],
        &[r#"{"s":"\u006f"}"#, r#"{"s":{"k":"\u0077"}}"#],
    );
}

/// The string tails of other keys (after the character that leaves the declared names) are
/// shared rules, one per kind for the whole schema however many open objects it has, so
/// normalisation builds each once instead of once per trie node.
#[test]
fn other_keys_share_their_string_tails() {
    let object = |names: &[&str]| {
        let properties: serde_json::Map<String, serde_json::Value> = names
            .iter()
            .map(|n| (n.to_string(), json!({"type": "integer"})))
            .collect();
        json!({"type": "object", "properties": properties})
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "first": object(&["alpha", "beta"]),
            "second": object(&["gamma", "delta", "epsilon"]),
            "third": {"type": "array", "items": object(&["zeta"])}
        }
    });
    for (options, tails) in [(Options::default(), 2), (any_key_spelling(), 1)] {
        let compiled = sieve_jsonschema::compile(&schema, &options).unwrap();
        let shared: Vec<&str> = compiled
            .grammar
            .shared_rules()
            .map(|id| compiled.grammar.rule(id).name())
            .collect();
        assert_eq!(shared.len(), tails, "{shared:?}");
    }
}

#[test]
fn keys_are_compared_decoded() {
    let schema = json!({"properties": {"a": {"type": "integer"}}});
    check_texts(
        schema,
        &any_key_spelling(),
        &[
            r#"{"\u0061":1}"#,
            r#"{"a":1,"b\u0062":"s"}"#,
            r#"{"ab":"s"}"#,
            r#"{"\u0062":1}"#,
            r#"{"\u0061\u0062":"s"}"#,
            r#"{"\/":1}"#,
            r#"{"\ud83d\ude00":1}"#,
        ],
        &[
            r#"{"\u0061":"s"}"#,
            r#"{"a":1,"\u0061":1}"#,
            r#"{"\u0061":1,"a":1}"#,
            r#"{"\ud83d":1}"#,
        ],
    );
    let options = Options {
        escapes: sieve_jsonschema::Escapes::Canonical,
        ..Options::default()
    };
    check_texts(
        json!({"const": "a\u{1}\"/"}),
        &options,
        &[r#""a\u0001\"/""#],
        &[r#""\u0061\u0001\"/""#, r#""a\u0001\"\/""#],
    );
}

#[test]
fn keys_avoid_names_in_every_spelling() {
    // Names with escapes, non-BMP characters and a shared prefix.
    let schema = json!({"properties": {"a/\"": {"type": "integer"}, "\u{1F600}x": {"type": "integer"}, "ab": {"type": "integer"}}});
    check_texts(
        schema,
        &any_key_spelling(),
        &[
            r#"{"a\/\"":1}"#,
            r#"{"\ud83d\ude00x":1}"#,
            r#"{"\ud83d\ude01x":"s"}"#,
            r#"{"a":"s"}"#,
            r#"{"abc":"s"}"#,
        ],
        &[
            r#"{"a\/\"":"s"}"#,
            r#"{"a/\u0022":"s"}"#,
            r#"{"\uD83D\uDE00x":"s"}"#,
            r#"{"😀x":"s"}"#,
            r#"{"\u0061b":"s"}"#,
        ],
    );
}

#[test]
fn intersections_of_numbers_and_strings() {
    check(
        json!({"allOf": [{"multipleOf": 2}, {"multipleOf": 3}], "type": "integer"}),
        &[json!(0), json!(6), json!(-12)],
        &[json!(4), json!(9)],
    );
    check(
        json!({"allOf": [{"minimum": 1}, {"minimum": 3}, {"maximum": 10}, {"maximum": 5}], "type": "integer"}),
        &[json!(3), json!(5)],
        &[json!(2), json!(6)],
    );
    check(
        json!({"allOf": [{"minLength": 2}, {"maxLength": 3}, {"type": "string"}]}),
        &[json!("ab"), json!("abc")],
        &[json!("a"), json!("abcd")],
    );
    check_error(
        json!({"allOf": [{"pattern": "a"}, {"pattern": "b"}]}),
        ErrorKind::Unsupported,
        "pattern",
        "/allOf/1/pattern",
    );
}

#[test]
fn one_of_disjointness_needs_the_type_context() {
    // Without `type: object`, a string meets both branches (vacuously): not provably
    // disjoint, so each branch gets the negation of the other, which leaves strings out.
    let branches = json!([
        {"properties": {"k": {"const": "a"}}, "required": ["k"]},
        {"properties": {"k": {"const": "b"}}, "required": ["k"]}
    ]);
    check(
        json!({"oneOf": branches}),
        &[json!({"k": "a"}), json!({"k": "b"})],
        &[json!("x"), json!(1), json!({}), json!({"k": "c"})],
    );
    check(
        json!({"oneOf": branches, "type": "object"}),
        &[json!({"k": "a"}), json!({"k": "b"})],
        &[json!("x"), json!({"k": "c"})],
    );
    // Closed objects with different required properties are disjoint.
    let closed = json!({"type": "object", "oneOf": [
        {"properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": false},
        {"properties": {"b": {"type": "integer"}}, "required": ["b"], "additionalProperties": false}
    ]});
    check(
        closed,
        &[json!({"a": 1}), json!({"b": 2})],
        &[json!({"a": 1, "b": 2}), json!({})],
    );
}

#[test]
fn pydantic_style_schema() {
    let schema = json!({
        "$defs": {
            "Cat": {"properties": {"pet_type": {"const": "cat", "title": "Pet Type", "type": "string"}, "lives": {"type": "integer"}}, "required": ["pet_type", "lives"], "title": "Cat", "type": "object"},
            "Dog": {"properties": {"pet_type": {"enum": ["dog"], "title": "Pet Type", "type": "string"}, "name": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}}, "required": ["pet_type"], "title": "Dog", "type": "object"}
        },
        "properties": {
            "pet": {"discriminator": {"mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog"}, "propertyName": "pet_type"}, "oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}], "title": "Pet"},
            "owners": {"items": {"type": "string"}, "title": "Owners", "type": "array"}
        },
        "required": ["pet"],
        "title": "Model",
        "type": "object",
        "additionalProperties": false
    });
    check(
        schema,
        &[
            json!({"pet": {"pet_type": "cat", "lives": 9}}),
            json!({"pet": {"pet_type": "dog", "name": null}, "owners": ["a"]}),
            json!({"pet": {"pet_type": "dog", "name": "Rex", "x": 1}}),
        ],
        &[
            json!({"pet": {"pet_type": "cat"}}),
            json!({"pet": {"pet_type": "bird"}}),
            json!({"owners": []}),
            json!({"pet": {"pet_type": "dog"}, "extra": 1}),
        ],
    );
}

#[test]
fn all_of_parts_keep_document_order() {
    let parts: Vec<Value> = (0..12)
        .map(|i| json!({"properties": {format!("p{i}"): {"type": "integer"}}}))
        .collect();
    let schema = json!({"allOf": parts});
    let r = recognizer_with(&schema, &Options::default());
    assert!(r.accepts(br#"{"p2":1,"p10":2}"#));
    assert!(!r.accepts(br#"{"p10":2,"p2":1}"#));
}

#[test]
fn enum_filter_through_recursion_ends() {
    // The enum filter compiles the other keywords on their own; when they lead back to the
    // same enum, each level starts a new filter, so this ends at the depth limit (a known
    // gap: an error, not a wrong grammar).
    let schema = json!({"$defs": {"t": {"enum": [[], [[]]], "items": {"$ref": "#/$defs/t"}}}, "$ref": "#/$defs/t"});
    let options = Options {
        limits: sieve_jsonschema::Limits {
            max_depth: 24,
            ..Default::default()
        },
        ..Options::default()
    };
    assert_eq!(
        compile(&schema, &options).unwrap_err().kind,
        ErrorKind::Limit
    );
}

#[test]
fn double_negation_is_the_schema() {
    check(
        json!({"not": {"not": {"type": "string", "minLength": 2}}}),
        &[json!("ab"), json!("abc")],
        &[json!("a"), json!(1), json!(null)],
    );
    check(
        json!({"not": {"not": {"not": {"type": "integer"}}}}),
        &[json!("x"), json!(null), json!([1])],
        &[json!(1), json!(-3)],
    );
    // Beside other keywords the inner schema joins the intersection.
    check(
        json!({"type": "object", "not": {"not": {"required": ["a"]}}, "properties": {"a": {"type": "integer"}}}),
        &[json!({"a": 1})],
        &[json!({}), json!({"a": "x"}), json!("a")],
    );
}

#[test]
fn negation_beside_an_enum_filters_the_values() {
    check(
        json!({"allOf": [{"enum": [1, 2, 3, "a"]}, {"not": {"minimum": 2}}]}),
        &[json!(1)],
        // `"a"` meets `minimum` (it constrains numbers only), so it fails the `not`.
        &[json!(2), json!(3), json!(0), json!("a")],
    );
    check(
        json!({"enum": [{"a": 1}, {"a": "x"}, [1], {"b": 2, "a": 3}], "not": {"properties": {"a": {"type": "integer"}}}}),
        &[json!({"a": "x"})],
        &[
            json!({"a": 1}),
            json!([1]),
            json!({"b": 2, "a": 3}),
            json!({"a": 3, "b": 2}),
        ],
    );
    // Members in another order than the listed value's: the negated schema is decided in
    // any property order, so `{"a": 1, "b": 2}` is dropped although listed as `{"b": 2, "a": 1}`.
    check(
        json!({"enum": [{"b": 2, "a": 1}, {"a": 5}], "not": {"properties": {"a": {"const": 1}, "b": {"const": 2}}, "required": ["a", "b"]}}),
        &[json!({"a": 5})],
        &[json!({"b": 2, "a": 1}), json!({"a": 1, "b": 2})],
    );
    // Several negations, one of them with a form of its own.
    check(
        json!({"const": "abc", "allOf": [{"not": {"pattern": "^x"}}, {"not": {"type": "null"}}]}),
        &[json!("abc")],
        &[json!("x")],
    );
    check(
        json!({"enum": ["xa", "b"], "not": {"pattern": "^x"}}),
        &[json!("b")],
        &[json!("xa")],
    );
    // A value the negated grammar might spell differently (an integral float beyond 2^53)
    // is left out: rejected-valid, never accepted-invalid.
    check(
        json!({"enum": [1e300, 5], "not": {"maximum": 0}}),
        &[json!(5)],
        &[json!(1e300)],
    );
    // Without an enum, such a negation is still refused; a refused keyword inside the
    // negated schema is refused as well.
    check_error(
        json!({"not": {"minimum": 3}}),
        ErrorKind::Unsupported,
        "not",
        "/not",
    );
    check_error(
        json!({"enum": [1], "not": {"unevaluatedItems": {}}}),
        ErrorKind::Unsupported,
        "unevaluatedItems",
        "/not/unevaluatedItems",
    );
}

#[test]
fn presence_constraints() {
    // oneOf over `required`: exactly one branch's names all present.
    let one_of = json!({"properties": {"r": {}, "l": {}, "w": {}, "x": {"type": "integer"}}, "oneOf": [{"required": ["r"]}, {"required": ["l", "w"]}]});
    check(
        one_of.clone(),
        &[
            json!({"r": 1}),
            json!({"l": 1, "w": 2}),
            json!({"r": 1, "l": 2}),
            json!({"r": 1, "w": 2, "x": 3}),
        ],
        &[
            json!({}),
            json!({"l": 1}),
            json!({"r": 1, "l": 1, "w": 2}),
            json!({"r": 1, "x": "s"}),
            json!(1),
            json!("s"),
        ],
    );
    let any = Options {
        property_order: PropertyOrder::Any,
        ..Options::default()
    };
    check_texts(
        one_of,
        &any,
        &[
            r#"{"w":2,"l":1}"#,
            r#"{"x":3,"r":1,"w":2}"#,
            r#"{"q":[],"r":1}"#,
        ],
        &[r#"{"w":2,"r":1,"l":1}"#, r#"{"w":2}"#],
    );
    // Keys not declared anywhere are tracked too (they are kept out of the other keys).
    check(
        json!({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}),
        &[json!({"a": 1}), json!({"b": 1, "c": 2})],
        &[
            json!({"a": 1, "b": 2}),
            json!({"b": 1, "a": 2}),
            json!({"c": 1}),
            json!(null),
        ],
    );
    // not over several names: not all of them.
    check(
        json!({"not": {"required": ["a", "b"]}}),
        &[json!({}), json!({"a": 1}), json!({"b": 1, "c": 1})],
        &[json!({"a": 1, "b": 2}), json!({"b": 1, "a": 2}), json!(3)],
    );
    check(
        json!({"type": "object", "not": {"anyOf": [{"required": ["a"]}, {"allOf": [{"required": ["b"]}, {"required": ["c"]}]}]}}),
        &[json!({}), json!({"b": 1}), json!({"c": 1, "d": 1})],
        &[
            json!({"a": 1}),
            json!({"b": 1, "c": 2}),
            json!({"c": 1, "b": 2}),
        ],
    );
    // Dependencies: a list of names, or a schema over presence.
    check(
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"a": {}, "b": {}, "c": {}}, "dependencies": {"a": ["b"], "c": {"not": {"required": ["a"]}}}}),
        &[
            json!({}),
            json!({"b": 1}),
            json!({"a": 1, "b": 2}),
            json!({"b": 1, "c": 1}),
            json!(1),
            json!("x"),
        ],
        &[
            json!({"a": 1}),
            json!({"a": 1, "b": 2, "c": 3}),
            json!({"a": 1, "c": 3}),
        ],
    );
    check(
        json!({"dependentRequired": {"a": ["b", "c"]}}),
        &[json!({"b": 1}), json!({"a": 1, "b": 2, "c": 3}), json!([])],
        &[json!({"a": 1, "b": 2}), json!({"c": 1, "a": 2})],
    );
    check(
        json!({"dependentSchemas": {"a": {"required": ["b"]}}, "maxProperties": 2}),
        &[json!({"a": 1, "b": 2}), json!({"b": 1, "c": 2})],
        &[
            json!({"a": 1}),
            json!({"a": 1, "c": 2}),
            json!({"a": 1, "b": 2, "c": 3}),
        ],
    );
    // Under an `anyOf`, a property required by a branch and the presence table together.
    check(
        json!({"anyOf": [{"required": ["a"]}, {"required": ["c"]}], "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}),
        &[json!({"a": 1}), json!({"c": 1, "b": 1})],
        &[json!({"b": 1}), json!({"a": 1, "b": 1}), json!({"c": 1})],
    );
    // A dependency schema that is not about presence stays refused.
    check_error(
        json!({"dependentSchemas": {"a": {"properties": {"b": {"type": "integer"}}}}}),
        ErrorKind::Unsupported,
        "dependentSchemas",
        "/dependentSchemas",
    );
}

#[test]
fn draft4_ids() {
    let draft4 = "http://json-schema.org/draft-04/schema#";
    // `id: "#name"` is an anchor in draft-04.
    check(
        json!({"$schema": draft4, "definitions": {"n": {"id": "#num", "type": "integer"}}, "properties": {"a": {"$ref": "#num"}}}),
        &[json!({"a": 1})],
        &[json!({"a": "s"})],
    );
    // `$id` is no keyword in draft-04: it does not move the base URI.
    check(
        json!({"$schema": draft4, "id": "https://example.com/root", "definitions": {"s": {"type": "string"}}, "properties": {"a": {"$id": "/elsewhere", "properties": {"b": {"$ref": "#/definitions/s"}}}}}),
        &[json!({"a": {"b": "x"}})],
        &[json!({"a": {"b": 1}})],
    );
}

#[test]
fn unique_items_over_listed_values() {
    let schema = json!({"type": "array", "uniqueItems": true, "items": {"enum": ["a", "b", 1, 1.0, {"k": 1}]}, "minItems": 1});
    check(
        schema.clone(),
        &[
            json!(["a"]),
            json!(["b", "a"]),
            json!([1, "a", {"k": 1}, "b"]),
        ],
        &[
            json!([]),
            json!(["a", "a"]),
            json!(["a", "b", "a"]),
            json!([1, 1.0]),
            json!([{"k": 1}, {"k": 1}]),
            json!(["c"]),
        ],
    );
    // Length bounds, and values the item schema's other keywords rule out.
    check(
        json!({"uniqueItems": true, "maxItems": 2, "items": {"type": "string", "enum": ["x", "y", "z", 5]}}),
        &[
            json!(["x", "y"]),
            json!(["z"]),
            json!([]),
            json!("not an array"),
        ],
        &[json!(["x", "y", "z"]), json!([5]), json!(["y", "y"])],
    );
    // Items that are not listed values stay refused.
    check_error(
        json!({"uniqueItems": true, "items": {"type": "string"}}),
        ErrorKind::Unsupported,
        "uniqueItems",
        "/uniqueItems",
    );
}

#[test]
fn empty_names_and_patterns_are_members() {
    // The pattern "" matches every key; its schema lives at `/patternProperties/`, not at
    // `/patternProperties`.
    for additional in [json!(false), json!(true)] {
        check(
            json!({"patternProperties": {"": {"type": "object", "properties": {"href": {"type": "string"}}}}, "additionalProperties": additional}),
            &[json!({"self": {"href": "x"}}), json!({"": {}})],
            &[json!({"self": {"href": 123}}), json!({"a": 1})],
        );
    }
    check(
        json!({"properties": {"": {"type": "integer"}}}),
        &[json!({"": 1}), json!({"a": "s"})],
        &[json!({"": "s"})],
    );
}

#[test]
fn if_then_else() {
    // A presence condition.
    check(
        json!({"if": {"required": ["a"]}, "then": {"required": ["b"]}, "else": {"type": "object", "maxProperties": 1}}),
        // A non-object meets `required`, so `then`, which it meets too.
        &[
            json!({"a": 1, "b": 2}),
            json!({"c": 1}),
            json!({}),
            json!(1),
        ],
        &[json!({"a": 1}), json!({"c": 1, "d": 2})],
    );
    // A discriminator property: its values come from a listed set.
    let schema = json!({
        "type": "object",
        "properties": {"kind": {"enum": ["x", "y", "z"]}, "n": {}},
        "if": {"properties": {"kind": {"const": "x"}}},
        "then": {"properties": {"n": {"type": "integer"}}},
        "else": {"properties": {"n": {"type": "string"}}}
    });
    check(
        schema,
        &[
            json!({"kind": "x", "n": 1}),
            json!({"kind": "y", "n": "s"}),
            json!({"n": 2}),
            json!({}),
        ],
        &[
            json!({"kind": "x", "n": "s"}),
            json!({"kind": "z", "n": 1}),
            json!({"n": "s"}),
            json!({"kind": "w"}),
        ],
    );
    // With the property required in `if`: an object without it takes `else`.
    check(
        json!({"properties": {"t": {"enum": [1, 2]}}, "if": {"properties": {"t": {"const": 1}}, "required": ["t"]}, "then": {"required": ["u"]}, "else": {"not": {"required": ["u"]}}}),
        &[
            json!({"t": 1, "u": 0}),
            json!({"t": 2}),
            json!({}),
            json!(5),
        ],
        &[json!({"t": 1}), json!({"t": 2, "u": 0}), json!({"u": 0})],
    );
    // Without `then`/`else`, and a condition that is a boolean.
    check(
        json!({"if": true, "then": {"type": "null"}}),
        &[json!(null)],
        &[json!(1)],
    );
    check(
        json!({"if": false, "else": {"type": "null"}}),
        &[json!(null)],
        &[json!(1)],
    );
    check(
        json!({"if": {"type": "string"}}),
        &[json!(1), json!("s")],
        &[],
    );
    // A condition whose negation has no grammar stays refused.
    check_error(
        json!({"if": {"minimum": 3}, "then": {"multipleOf": 2}}),
        ErrorKind::Unsupported,
        "if",
        "/if",
    );
}

#[test]
fn overlapping_one_of_branches_negate_each_other() {
    // A discriminator that is not required: an object without it meets both branches.
    check(
        json!({"properties": {"t": {"enum": ["a", "b", "c"]}}, "oneOf": [
            {"properties": {"t": {"const": "a"}}},
            {"properties": {"t": {"const": "b"}}}
        ]}),
        &[json!({"t": "a"}), json!({"t": "b", "u": 1})],
        &[json!({}), json!({"t": "c"}), json!({"u": 1}), json!("x")],
    );
    // Negating a branch of two properties is no form here: refused.
    check_error(
        json!({"oneOf": [
            {"properties": {"t": {"const": "a"}, "v": {"type": "integer"}}},
            {"properties": {"t": {"const": "b"}}}
        ]}),
        ErrorKind::Unsupported,
        "oneOf",
        "/oneOf",
    );
    // Types: `number` less `integer` has no grammar here, so the negation is refused rather
    // than made smaller.
    check_error(
        json!({"oneOf": [{"type": "integer"}, {"type": "number"}]}),
        ErrorKind::Unsupported,
        "oneOf",
        "/oneOf",
    );
    check(
        json!({"oneOf": [{"type": ["string", "null"]}, {"type": ["null", "boolean"]}]}),
        &[json!("s"), json!(true)],
        &[json!(null), json!(1)],
    );
    // A branch whose negation has no grammar keeps the `oneOf` refused.
    check_error(
        json!({"oneOf": [{"minimum": 3}, {"type": "integer"}]}),
        ErrorKind::Unsupported,
        "oneOf",
        "/oneOf",
    );
}

#[test]
fn negating_one_typed_property() {
    // ¬(object ∧ t = "x") = non-object ∨ (t present ∧ t ≠ "x").
    check(
        json!({"properties": {"t": {"enum": ["x", "y"]}}, "if": {"type": "object", "properties": {"t": {"const": "x"}}, "required": ["t"]}, "then": {"required": ["a"]}, "else": {"maxProperties": 1}}),
        &[
            json!({"t": "x", "a": 1}),
            json!({"t": "y"}),
            json!({}),
            json!(3),
            json!("s"),
        ],
        &[
            json!({"t": "x"}),
            json!({"t": "y", "a": 1}),
            json!({"b": 1, "c": 2}),
        ],
    );
}
