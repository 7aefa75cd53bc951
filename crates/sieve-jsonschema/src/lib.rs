//! sieve's JSON Schema front-end: a schema (draft 2020-12 or draft-07, as a
//! [`serde_json::Value`]) becomes a [`Grammar`] whose language is the set of JSON texts, in
//! the layout [`Options`] chooses, that the schema accepts.
//!
//! # Contract: strict by default
//!
//! Every keyword that constrains instances is either enforced exactly or refused with an
//! [`Error`] naming the keyword and its JSON pointer. The grammar may reject some valid
//! instances only through layout choices documented on [`Options`] (whitespace, separators,
//! escapes, property order) and the documented spelling restrictions below; it never accepts
//! an instance the schema forbids (accepted-invalid is a bug; rejected-valid is a documented
//! gap). With [`Options::lenient`], keywords that cannot be enforced are dropped and listed as
//! [`Warning`]s instead, one per JSON pointer and keyword: the grammar then accepts a
//! superset of the schema's instances at those places.
//!
//! Annotations (`title`, `description`, `examples`, `default`, `$comment`, `deprecated`,
//! `readOnly`, `writeOnly`, `contentMediaType`, …) and unknown keywords are ignored.
//!
//! # What is enforced
//!
//! - `true`, `false`, `{}`; `type` (a name or a list); `enum` and `const` (printed in the
//!   output layout; with other keywords beside them, each listed value is kept only if the
//!   grammar of the other keywords accepts it — decided by the reference recogniser, so a
//!   value is never kept wrongly);
//! - strings and numbers through the `string` and `number` modules;
//! - objects: `properties`, `required`, `additionalProperties`, `patternProperties` (in one
//!   location of an intersection; a key meets the schemas of exactly the patterns it matches,
//!   or `additionalProperties` if none — up to 4 patterns when they differ in schema or
//!   `additionalProperties` is not `false`), `propertyNames` (on declared names always; on
//!   other keys when there are no declared names and no patterns), `minProperties`,
//!   `maxProperties`;
//! - arrays: `prefixItems`, `items`, draft-07 `items` arrays with `additionalItems`,
//!   `minItems`, `maxItems`, `contains` with `minContains` (no `maxContains`, no prefix, no
//!   length bounds), `uniqueItems` when at most one item is allowed or the items
//!   can only be up to 8 listed (`enum`/`const`) values;
//! - `anyOf`; `oneOf` when its branches are provably disjoint (different types, disjoint
//!   `const`/`enum` values, or a required property with different `const`s) or are all
//!   presence formulas (below); otherwise, up to 6 branches, each branch with the negations
//!   (below) of the others; `allOf` and
//!   2020-12 `$ref` siblings as an intersection (types intersected, bounds tightened, each
//!   location's object and array keywords kept apart so `additionalProperties` and `items`
//!   keep their local meaning); `anyOf`/`oneOf` inside an intersection distribute over it;
//! - `$ref` to `#`, JSON pointers, `$defs`/`definitions`, `$id` (relative resolution) and
//!   `$anchor` (draft-07 `$id: "#name"` too); recursion becomes recursive rules.
//!
//! - `not` of `true`, `false`, `{}`, `{"type": …}` (non-integer numbers are then left out;
//!   negations for `if` and `oneOf` refuse instead),
//!   `{"required": [one name]}` (the property is forbidden), `{"not": S}` (which is `S`),
//!   `{"properties": {name: S}}` with or without `required: [name]` and `type: "object"`
//!   (the property's value gets the negation of `S`, present unless `required` is there;
//!   non-objects pass when the type is there) and presence formulas;
//!   beside an `enum`/`const`, `not` of any schema sieve compiles: each
//!   listed value its grammar accepts is dropped, and so is each value on which that grammar
//!   might not be exact (a number it might spell differently, an object of more than
//!   [`Options::max_any_order_properties`] or 8 members) — rejected-valid, never
//!   accepted-invalid;
//! - presence formulas — schemas of `required`, `allOf`, `anyOf`, `oneOf`, `not`,
//!   `type: "object"` and `properties` that constrain nothing, over at most 8 names per
//!   object — under `not` and `oneOf`, and as `dependencies`, `dependentRequired` and
//!   `dependentSchemas` (`presence`): the object layouts track which of the names are present.
//!
//! - `if`/`then`/`else` as `(if ∧ then) ∨ (¬if ∧ else)` (disjoint sides), where `¬if` is one
//!   of the negations above (refused otherwise, naming `if`).
//!
//! Refused ([`ErrorKind::Unsupported`]): other `not`s and `if`s, dependencies
//! other than over presence, `unevaluatedProperties`, `unevaluatedItems`, `$dynamicRef`,
//! `$recursiveRef`, remote `$ref`s (never fetched), and the cases above that cannot be made
//! exact.
//!
//! # Layout of the output text
//!
//! Compact by default: no whitespace, `,` and `:`. Under [`Whitespace::Flexible`] every gap
//! between tokens (and, with [`Options::outer_whitespace`], before and after the whole text)
//! holds up to [`Options::max_whitespace`] whitespace bytes, written as one shared rule
//! ([`sieve_ir::Rule::is_shared`]) that every gap refers to. Objects list declared
//! properties in schema order, then the others ([`PropertyOrder::Any`]: any order, at most
//! [`Options::max_any_order_properties`] declared properties). Documented rejected-valid gaps:
//! a `const`/`enum` object must list its members in the value's own order (under
//! [`PropertyOrder::Any`], objects of up to 8 members come in any order); a `const`/`enum`
//! number is spelled as `serde_json` prints it (integral values also as `2` and `2.0`).
//! Property names and `const`/`enum` strings are written one way by default
//! ([`Options::key_escapes`], [`Options::literal_escapes`]), as XGrammar and llguidance write
//! them; string values take every spelling [`Options::escapes`] allows.
//!
//! Known limit of any grammar: additional (undeclared) keys are not checked against each
//! other, so an object may repeat an additional key (`{"x":1,"x":2}`); declared names never
//! repeat. RFC 8259 leaves such objects' meaning to the parser; with `minProperties` a parser
//! that keeps one of the duplicates sees fewer properties than the grammar counted.
//!
//! Known gap: an `enum`/`const` whose sibling keywords lead back to the same schema (a
//! recursive schema filtered by its own enum) ends in a depth [`ErrorKind::Limit`] error.
//!
//! # Draft
//!
//! `$schema` naming draft-07, -06 or -04 selects draft-07 rules (siblings of `$ref` are
//! ignored, `items` may be an array; in draft-04 `id`, not `$id`, sets base URIs and
//! `#name` anchors); anything else, or none, is draft 2020-12.
//!
//! # Modules
//!
//! - `lib.rs`: options, limits, the entry point [`compile`], the final productivity check.
//! - `error`: [`Error`] (keyword, pointer, kind, message) and [`Warning`].
//! - `walk`: sets of schema locations (intersections), flattening, the merged `Shape`,
//!   composition, `enum`/`const`, the rule cache.
//! - `object`, `array`: object and array layouts.
//! - `layout`: gaps, separators, literal values, keys avoiding a finite set of names.
//! - `refs`: `$id`, `$anchor` and `$ref` resolution inside the document.
//! - `presence`: presence formulas and the table of allowed name assignments.
//! - `string`: JSON string literals and string schemas (`minLength`, `maxLength`, `pattern`,
//!   `format`), RFC 8259 escapes.
//! - `number`: `integer` and `number` schemas with bounds and `multipleOf`.

mod array;
mod error;
mod keyword;
mod layout;
mod number;
mod object;
mod presence;
mod refs;
mod string;
mod walk;

pub use error::{join_pointer, Error, ErrorKind, Warning};

use sieve_ir::{Expr, ExprKind, Grammar};

/// Whitespace between JSON tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Whitespace {
    /// None: the separators only (the default, as XGrammar and llguidance in compact mode).
    #[default]
    Compact,
    /// Up to [`Options::max_whitespace`] characters of `' '`, `\t`, `\n`, `\r` in every gap
    /// between tokens. Bounded, so a model cannot loop on whitespace.
    Flexible,
}

/// The order of an object's properties.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PropertyOrder {
    /// The order of `properties` in the schema (the default).
    #[default]
    Schema,
    /// Any order, each property at most once and each required property exactly once; over
    /// [`Options::max_any_order_properties`] properties this is an error.
    Any,
}

/// How characters inside strings may be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Escapes {
    /// Everything RFC 8259 allows: any character may be written as `\uXXXX` (hex digits in
    /// either case, characters outside the BMP as a surrogate pair), `\/` is allowed, and
    /// `"`, `\` and U+0000–U+001F must be escaped (the default).
    #[default]
    Any,
    /// One spelling per string: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00XX`
    /// (lowercase hex) for the other control characters, everything else raw.
    Canonical,
}

/// Bounds on the work and the size of one compilation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The deepest nesting of subschemas followed (`$ref` chains included).
    pub max_depth: usize,
    /// The most grammar rules generated.
    pub max_rules: usize,
    /// Compile fuel: an upper bound on the grammar's total expression size.
    pub fuel: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 128,
            max_rules: 100_000,
            fuel: 2_000_000,
        }
    }
}

/// How to compile a schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Whitespace between tokens (default compact).
    pub whitespace: Whitespace,
    /// The most whitespace characters per gap in [`Whitespace::Flexible`] mode (default 4).
    pub max_whitespace: u32,
    /// Whether [`Whitespace::Flexible`] also allows whitespace before and after the whole text
    /// (default `true`). Off for JSON inside a larger grammar, where XGrammar and llguidance
    /// allow whitespace only between the value's own tokens.
    pub outer_whitespace: bool,
    /// Between array items and object members (default `","`): a comma with optional
    /// whitespace around it.
    pub item_separator: String,
    /// Between a key and its value (default `":"`): a colon with optional whitespace around
    /// it.
    pub key_separator: String,
    /// The order of object properties (default [`PropertyOrder::Schema`]).
    pub property_order: PropertyOrder,
    /// The most properties an object may have under [`PropertyOrder::Any`] (default 8).
    pub max_any_order_properties: usize,
    /// How string characters may be written (default [`Escapes::Any`]).
    pub escapes: Escapes,
    /// How the characters of property names may be written, when they differ from string
    /// values' (`None`: as [`Options::escapes`]). The default, `Some(Escapes::Canonical)`,
    /// writes every name one way, as XGrammar and llguidance do: `{"a":1}` but not
    /// `{"\u0061":1}`. `Some(Escapes::Any)` accepts every spelling RFC 8259 allows, at about
    /// five more automaton states per character of every declared name.
    pub key_escapes: Option<Escapes>,
    /// How `const` and `enum` values may be written: their strings and the keys of their
    /// objects (`None`: as [`Options::escapes`]). The default, `Some(Escapes::Canonical)`,
    /// writes each listed value one way, as XGrammar and llguidance do: `"draft"` but not
    /// `"\u0064raft"`. `Some(Escapes::Any)` accepts every spelling RFC 8259 allows, at about
    /// five more automaton states per character of every listed string.
    pub literal_escapes: Option<Escapes>,
    /// Drop keywords that cannot be enforced, with a warning each, instead of failing.
    pub lenient: bool,
    /// Work and size limits.
    pub limits: Limits,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            whitespace: Whitespace::Compact,
            max_whitespace: 4,
            outer_whitespace: true,
            item_separator: ",".to_owned(),
            key_separator: ":".to_owned(),
            property_order: PropertyOrder::Schema,
            max_any_order_properties: 8,
            escapes: Escapes::Any,
            key_escapes: Some(Escapes::Canonical),
            literal_escapes: Some(Escapes::Canonical),
            lenient: false,
            limits: Limits::default(),
        }
    }
}

/// A compiled schema: the grammar, and the keywords dropped in lenient mode.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The grammar; its root rule is the whole JSON text.
    pub grammar: Grammar,
    /// Keywords not enforced (always empty unless [`Options::lenient`]).
    pub warnings: Vec<Warning>,
}

/// Compiles `schema` to a grammar.
///
/// The draft is read from `$schema` (draft-07, -06 and -04 URIs select draft-07 rules: the
/// siblings of `$ref` are ignored); anything else, or no `$schema`, is draft 2020-12.
pub fn compile(schema: &serde_json::Value, options: &Options) -> Result<Compiled, Error> {
    let ws: &[char] = &[' ', '\t', '\n', '\r'];
    for (separator, token) in [
        (&options.item_separator, ","),
        (&options.key_separator, ":"),
    ] {
        if separator.trim_matches(ws) != token {
            return Err(Error::new(
                ErrorKind::Invalid,
                "",
                "",
                format!("separator {separator:?} is not `{token}` with optional whitespace around it: the output would not be JSON"),
            ));
        }
    }
    let mut compiler = walk::Compiler::new(schema, options.clone());
    let value = compiler.compile_set(vec![walk::Elem::new(String::new())], walk::ALL, 0)?;
    let Some(value) = value else {
        return Err(Error::new(
            ErrorKind::Unsatisfiable,
            "",
            "",
            "no JSON value meets this schema",
        ));
    };
    let text = if options.outer_whitespace {
        let gap = compiler.layout.gap.clone();
        Expr::seq([gap.clone(), value, gap])
    } else {
        value
    };
    let root = match text.kind() {
        // The value's rule is the root when nothing surrounds it (JSON embedded in a larger
        // grammar, or compact), rather than a rule that only renames it; a shared rule is set
        // apart by normalisation, so it is never the root.
        ExprKind::Ref(rule) if !compiler.builder.is_shared(*rule) => *rule,
        _ => {
            let root = compiler.new_rule("root", "")?;
            compiler.define(root, text, "")?;
            root
        }
    };
    let warnings = std::mem::take(&mut compiler.warnings);
    let grammar = compiler.builder.build(root).map_err(|e| {
        Error::new(
            ErrorKind::Limit,
            "",
            "",
            format!("building the grammar: {e}"),
        )
    })?;
    if !productive(&grammar)[root.index()] {
        return Err(Error::new(
            ErrorKind::Unsatisfiable,
            "",
            "",
            "no finite JSON value meets this schema (every instance would nest forever)",
        ));
    }
    Ok(Compiled { grammar, warnings })
}

/// Which rules derive at least one string (a fixpoint over the rules).
fn productive(grammar: &Grammar) -> Vec<bool> {
    fn derives(expr: &Expr, done: &[bool]) -> bool {
        match expr.kind() {
            ExprKind::Empty | ExprKind::Bytes(_) | ExprKind::Class(_) => true,
            ExprKind::Ref(id) => done[id.index()],
            ExprKind::Seq(items) => items.iter().all(|e| derives(e, done)),
            ExprKind::Choice(items) => items.iter().any(|e| derives(e, done)),
            ExprKind::Repeat { item, min, .. } => *min == 0 || derives(item, done),
        }
    }
    let rules = grammar.rules();
    let mut done = vec![false; rules.len()];
    // Alternating sweeps: chains of rules built in either order converge in a few passes.
    for pass in 0.. {
        let mut changed = false;
        for k in 0..rules.len() {
            let i = if pass % 2 == 0 {
                rules.len() - 1 - k
            } else {
                k
            };
            if !done[i] && derives(rules[i].body(), &done) {
                done[i] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    done
}
