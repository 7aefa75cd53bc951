//! The schema walk: a set of schema locations (their intersection) becomes one grammar rule.
//!
//! A *set* is a list of [`Elem`]s — JSON pointers into the document, each with the
//! applicators already accounted for — whose schemas must all hold. [`Compiler::compile_set`]
//! first *flattens* it: `allOf` members and `$ref` targets join the set (in draft 2020-12 the
//! `$ref`'s siblings stay; in draft-07 they are ignored), `true` drops out, `false` makes the
//! set unsatisfiable. The flattened set is the cache key: equal sets share one rule, and a
//! recursive schema refers back to the rule being built, so recursion ends. `anyOf`, `oneOf`
//! and `if` distribute over the rest of the set (a union of intersections): a `oneOf` whose
//! branches may overlap adds to each branch the *negated* elements of the others, and `if`
//! has an `if ∧ then` side and a `¬if ∧ else` side. A negated element is never flattened;
//! only the negation code reads it, and it is exact or refused there.
//! What is left is one object per location; their keywords are merged into a [`Shape`]
//! (types intersected, bounds tightened, `enum`s intersected, object and array parts kept
//! apart so each keeps its own `additionalProperties` / `items` meaning), and the shape
//! becomes one alternative per JSON type.
//!
//! Invariants:
//! - every language built is a subset of the instances the set's schemas accept (exactness
//!   first: a keyword that cannot be enforced is an [`ErrorKind::Unsupported`] error, or in
//!   lenient mode a [`Warning`] with the keyword dropped);
//! - `None` means the empty language; it is never turned into a grammar rule that matches
//!   something;
//! - work is bounded: every rule counts against [`Limits::max_rules`], every expression and
//!   every checked value against [`Limits::fuel`], nesting against [`Limits::max_depth`].

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::cell::RefCell;
use std::rc::Rc;

use serde_json::{Map, Value};
use sieve_ir::reference::Recognizer;
use sieve_ir::{Expr, ExprKind, GrammarBuilder, RuleId};

use crate::keyword::get_keyword;
use crate::layout::Layout;
use crate::number::{number_schema, NumberSpec};
use crate::presence::{Formula, Presence, Reader};
use crate::refs::Refs;
use crate::string::{any_char, string_schema_limited, StringSpec};
use crate::{array, join_pointer, object, Error, ErrorKind, Escapes, Limits, Options, Warning};

/// A set of JSON types, as bits.
pub(crate) type Types = u8;
pub(crate) const NULL: Types = 1;
pub(crate) const BOOLEAN: Types = 2;
pub(crate) const OBJECT: Types = 4;
pub(crate) const ARRAY: Types = 8;
pub(crate) const STRING: Types = 16;
/// Numbers with a zero fractional part (`integer`).
pub(crate) const INTEGER: Types = 32;
/// Numbers with a non-zero fractional part.
pub(crate) const FRACTION: Types = 64;
pub(crate) const NUMBER: Types = INTEGER | FRACTION;
pub(crate) const ALL: Types = 127;

/// `Elem::done`: the location's `anyOf` is accounted for by a branch in the set.
const DONE_ANY_OF: u8 = 1;
/// `Elem::done`: the location's `oneOf` is accounted for by a branch in the set.
const DONE_ONE_OF: u8 = 2;
/// `Elem::done`: the location's `enum` and `const` are not applied (the enum filter), nor
/// a `not` without a grammar of its own (the filter decides it per value).
const DONE_ENUM: u8 = 4;
/// `Elem::done`: the element stands for the *negation* of the schema at its pointer (the
/// `else` side of an `if`); it is never flattened and only `negate` reads it.
const NEGATED: u8 = 8;
/// `Elem::done`: the location's `if`/`then`/`else` is accounted for by the set.
const DONE_IF: u8 = 16;
/// `Elem::done`, with [`NEGATED`]: the negation is of another branch of a `oneOf` whose
/// branches may overlap (for error messages).
const NEGATED_BRANCH: u8 = 32;
/// `Elem::done`, with [`NEGATED`]: the negation comes from a `not`, so it may leave out the
/// numbers that have no grammar of their own (see `negate`).
const NEGATED_LOSSY: u8 = 64;

/// The most branches of a `oneOf` made exclusive by negating the others (`n (n - 1)`
/// negations in all).
const MAX_EXCLUSIVE_BRANCHES: usize = 6;

/// Which draft's rules apply where drafts differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Draft {
    /// Draft-07 (and 06, 04): `$ref` siblings are ignored, `items` may be an array.
    Draft7,
    /// Draft 2020-12 (and 2019-09): `$ref` applies together with its siblings.
    Draft2020,
}

/// One schema location in a set.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Elem {
    /// The JSON pointer of the schema.
    pub ptr: String,
    /// Applicators already accounted for (`DONE_*` bits).
    pub done: u8,
}

impl Elem {
    pub(crate) fn new(ptr: String) -> Elem {
        Elem { ptr, done: 0 }
    }

    /// The negation of the schema at `ptr`; `lossy` as for a `not` (see `negate`).
    pub(crate) fn negated(ptr: String, lossy: bool) -> Elem {
        let lossy = if lossy { NEGATED_LOSSY } else { 0 };
        Elem {
            ptr,
            done: NEGATED | lossy,
        }
    }
}

/// Keywords sieve refuses (or drops, in lenient mode), with why.
const UNSUPPORTED: [(&str, &str); 10] = [
    (
        "not",
        "negation is not expressible in a context-free grammar built this way",
    ),
    ("if", "conditional schemas are not supported"),
    (
        "dependentRequired",
        "dependencies between properties are not supported",
    ),
    (
        "dependentSchemas",
        "dependencies between properties are not supported",
    ),
    (
        "dependencies",
        "dependencies between properties are not supported",
    ),
    (
        "unevaluatedProperties",
        "unevaluated* keywords are not supported",
    ),
    (
        "unevaluatedItems",
        "unevaluated* keywords are not supported",
    ),
    ("$dynamicRef", "dynamic references are not supported"),
    ("$recursiveRef", "recursive references are not supported"),
    (
        "uniqueItems",
        "uniqueness of array items is not expressible",
    ),
];

/// Keywords that constrain instances (anything else is an annotation or unknown).
const CONSTRAINING: [&str; 45] = [
    "type",
    "enum",
    "const",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "properties",
    "patternProperties",
    "additionalProperties",
    "required",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "items",
    "prefixItems",
    "additionalItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "unevaluatedItems",
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "then",
    "else",
    "contentSchema",
    "$schema",
];

/// The object keywords of one location (its own `additionalProperties` refers to its own
/// `properties` and `patternProperties`).
#[derive(Clone, Debug, Default)]
pub(crate) struct ObjectPart<'a> {
    /// The location's pointer.
    pub ptr: String,
    /// `properties`: name → pointer of its schema.
    pub props: Vec<(&'a str, String)>,
    /// `patternProperties`: pattern → pointer of its schema.
    pub patterns: Vec<(&'a str, String)>,
    /// `additionalProperties`: its pointer, `None` when absent (any value).
    pub additional: Option<String>,
}

/// The array keywords of one location.
#[derive(Clone, Debug, Default)]
pub(crate) struct ArrayPart {
    /// `prefixItems` (or a draft-07 `items` array): pointers.
    pub prefix: Vec<String>,
    /// The schema of the items after the prefix (`items`, or `additionalItems` after an
    /// `items` array): `None` when absent (any value).
    pub rest: Option<String>,
}

/// Whether `keyword` constrains instances (anything else is an annotation or unknown).
pub(crate) fn is_constraining(keyword: &str) -> bool {
    CONSTRAINING.contains(&keyword)
}

/// Whether `schema` constrains nothing (`true`, or no constraining keyword).
pub(crate) fn is_trivial_schema(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(map) => !map.keys().any(|k| is_constraining(k)),
        _ => false,
    }
}

/// The merged keywords of a flattened set.
#[derive(Clone, Debug, Default)]
pub(crate) struct Shape<'a> {
    pub types: Types,
    /// The intersection of every `enum` and `const`, with the pointer of the first.
    pub values: Option<(Vec<&'a Value>, String)>,
    pub string: StringSpec<'a>,
    pub string_ptr: String,
    pub number: NumberSpec<'a>,
    pub number_ptr: String,
    /// The least common multiple of several integer `multipleOf`s (it replaces
    /// `number.multiple_of` when set).
    pub multiple_of_lcm: Option<serde_json::Number>,
    pub objects: Vec<ObjectPart<'a>>,
    /// `required` names, in order, without repeats.
    pub required: Vec<&'a str>,
    pub min_properties: u64,
    pub max_properties: Option<u64>,
    /// `propertyNames` pointers.
    pub property_names: Vec<String>,
    pub arrays: Vec<ArrayPart>,
    pub min_items: u64,
    pub max_items: Option<u64>,
    /// `contains` pointers with `minContains`, `maxContains` and the location's pointer.
    pub contains: Vec<(String, u64, Option<u64>, String)>,
    /// `uniqueItems: true` at these locations.
    pub unique: Vec<String>,
    /// Property names an object must not have (from `not: {required: [name]}`).
    pub forbidden: Vec<&'a str>,
    /// Constraints on which names an object has (`not`, `oneOf` and dependencies over
    /// presence formulas).
    pub presence: Presence<'a>,
    /// Properties whose value must *not* meet a schema (name, pointer of the schema, whether
    /// from a `not`), from the negation of `{"properties": {name: S}}`.
    pub negated_members: Vec<(&'a str, String, bool)>,
    /// Pointers of `not` subschemas with no grammar of their own, beside an `enum`/`const`:
    /// the enum filter drops each listed value they accept.
    pub excluded: Vec<String>,
    /// The pointer of the first location (for errors about the set as a whole).
    pub ptr: String,
}

/// The compiler state of one compilation.
pub(crate) struct Compiler<'a> {
    pub doc: &'a Value,
    pub options: Options,
    pub draft: Draft,
    refs: Rc<Refs>,
    pub builder: GrammarBuilder,
    /// The grammar of each schema set compiled or being compiled (see [`Built`]).
    cache: HashMap<(Vec<Elem>, Types), Built>,
    pub warnings: Vec<Warning>,
    warned: HashSet<(String, String)>,
    /// Fuel spent so far.
    pub fuel: usize,
    pub layout: Layout,
    any_value: Option<RuleId>,
    bases: HashMap<String, String>,
    /// String and number schemas already compiled, by content (their pointer aside): equal
    /// constraints share one rule, so a `format` or `pattern` used by many properties is
    /// built, normalised and determinised once. Only successes are kept, so a refusal is
    /// still reported (or warned about) at every pointer.
    leaves: HashMap<LeafKey, Expr>,
    /// The shared rules made so far ([`Compiler::shared_tail`]), by body.
    shared_tails: HashMap<Hashed, Expr>,
    /// The rules made so far by [`Compiler::share_distinct`], by body.
    distinct: HashMap<Hashed, Expr>,
    /// The keys of open objects made so far (a string that is none of the declared names),
    /// by their declared names, sorted and without repeats: the language depends on the set
    /// alone, and large schemas repeat an object's properties in many places.
    pub(crate) excepts: HashMap<Vec<String>, Expr>,
    /// The values [`Compiler::at`] found, by pointer: the walk looks each schema location up
    /// several times, and a deep pointer is many steps from the document's root.
    located: RefCell<HashMap<String, &'a Value>>,
}

/// Where [`Compiler::compile_set`] stands with a schema set.
#[derive(Clone, Copy)]
enum Built {
    /// Its grammar is this rule, or `None`: no instance meets the set.
    Done(Option<RuleId>),
    /// Its grammar is being built; a reference reached it from inside (a recursive `$ref`)
    /// when this holds the rule declared for it, which the set's grammar then defines.
    Building(Option<RuleId>),
}

/// An expression with its hash, computed once: a map keyed by bodies hashes each body when
/// it is looked up, not again to insert it or when the map grows.
#[derive(PartialEq, Eq)]
struct Hashed {
    hash: u64,
    expr: Expr,
}

impl Hashed {
    fn new(expr: Expr) -> Hashed {
        use std::hash::BuildHasher;
        let hash = foldhash::fast::FixedState::default().hash_one(&expr);
        Hashed { hash, expr }
    }
}

impl std::hash::Hash for Hashed {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// What a string or number schema's grammar depends on: its keywords' values. The pointer
/// only names errors, and the escapes and limits are the compilation's own.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum LeafKey {
    String {
        min_length: u64,
        max_length: Option<u64>,
        pattern: Option<String>,
        format: Option<String>,
    },
    /// The bounds as written (`1` and `1.0` are different keys, which only costs sharing).
    Number {
        integer: bool,
        bounds: [Option<String>; 5],
    },
}

impl LeafKey {
    fn string(spec: &StringSpec<'_>) -> LeafKey {
        LeafKey::String {
            min_length: spec.min_length,
            max_length: spec.max_length,
            pattern: spec.pattern.map(str::to_owned),
            format: spec.format.map(str::to_owned),
        }
    }

    fn number(spec: &NumberSpec<'_>) -> LeafKey {
        let text = |n: Option<&serde_json::Number>| n.map(|n| n.to_string());
        LeafKey::Number {
            integer: spec.integer,
            bounds: [
                text(spec.minimum),
                text(spec.exclusive_minimum),
                text(spec.maximum),
                text(spec.exclusive_maximum),
                text(spec.multiple_of),
            ],
        }
    }
}

impl<'a> Compiler<'a> {
    pub(crate) fn new(doc: &'a Value, options: Options) -> Compiler<'a> {
        let draft = match doc.get("$schema").and_then(Value::as_str) {
            Some(uri)
                if ["draft-07", "draft-06", "draft-04"]
                    .iter()
                    .any(|d| uri.contains(d)) =>
            {
                Draft::Draft7
            }
            _ => Draft::Draft2020,
        };
        let draft4 = doc
            .get("$schema")
            .and_then(Value::as_str)
            .is_some_and(|uri| uri.contains("draft-04"));
        let id_keyword = if draft4 { "id" } else { "$id" };
        let refs = Rc::new(Refs::index(doc, draft == Draft::Draft7, id_keyword));
        Compiler::with_refs(doc, options, draft, refs)
    }

    fn with_refs(doc: &'a Value, options: Options, draft: Draft, refs: Rc<Refs>) -> Compiler<'a> {
        let mut builder = GrammarBuilder::new();
        let layout =
            Layout::new(&options, &mut builder).expect("a new builder has room for one rule");
        Compiler {
            doc,
            layout,
            options,
            draft,
            refs,
            builder,
            cache: HashMap::new(),
            warnings: Vec::new(),
            warned: HashSet::new(),
            fuel: 0,
            any_value: None,
            bases: HashMap::new(),
            leaves: HashMap::new(),
            shared_tails: HashMap::new(),
            distinct: HashMap::new(),
            excepts: HashMap::new(),
            located: RefCell::new(HashMap::new()),
        }
    }

    fn limits(&self) -> &Limits {
        &self.options.limits
    }

    /// Spends `amount` fuel; past the limit, a [`ErrorKind::Limit`] error at `ptr`.
    pub(crate) fn spend(&mut self, amount: usize, ptr: &str) -> Result<(), Error> {
        self.fuel = self.fuel.saturating_add(amount);
        if self.fuel > self.limits().fuel {
            return Err(Error::new(
                ErrorKind::Limit,
                ptr,
                "",
                format!(
                    "the grammar grows past the fuel limit ({}) here",
                    self.limits().fuel
                ),
            ));
        }
        Ok(())
    }

    /// A new rule named after `base`, counted against the rule limit.
    pub(crate) fn new_rule(&mut self, base: &str, ptr: &str) -> Result<RuleId, Error> {
        if self.builder.len() >= self.limits().max_rules {
            return Err(Error::new(
                ErrorKind::Limit,
                ptr,
                "",
                format!("more than {} grammar rules", self.limits().max_rules),
            ));
        }
        // Names carry the rule count (`schema_12`), as dumps show them; `fresh` only settles a
        // clash with a name made otherwise.
        let name = format!("{base}_{}", self.builder.len());
        let id = self.builder.declare_or_fresh(name);
        id.map_err(|e| Error::new(ErrorKind::Limit, ptr, "", e.to_string()))
    }

    /// Defines `id` as `body`, spending its size as fuel.
    pub(crate) fn define(&mut self, id: RuleId, body: Expr, ptr: &str) -> Result<(), Error> {
        self.spend(body.size(), ptr)?;
        self.builder.define(id, body);
        Ok(())
    }

    /// `body` as a rule of its own (so it can be referenced many times cheaply).
    pub(crate) fn share(&mut self, base: &str, body: Expr, ptr: &str) -> Result<Expr, Error> {
        let size = body.size();
        if size <= 2 {
            return Ok(body);
        }
        let id = self.new_rule(base, ptr)?;
        self.spend(size, ptr)?;
        self.builder.define(id, body);
        Ok(Expr::rule(id))
    }

    /// [`Compiler::share`], but one rule per distinct body in the whole compilation: for the
    /// many small rules that recur across schemas (the ways to leave a trie of property
    /// names), which would otherwise be built, and merged again by normalisation, once per
    /// use. Hashes the body, so it is for small bodies.
    pub(crate) fn share_distinct(
        &mut self,
        base: &str,
        body: Expr,
        ptr: &str,
    ) -> Result<Expr, Error> {
        let body = Hashed::new(body);
        if let Some(rule) = self.distinct.get(&body) {
            return Ok(rule.clone());
        }
        let rule = self.share(base, body.expr.clone(), ptr)?;
        self.distinct.insert(body, rule.clone());
        Ok(rule)
    }

    /// A reference to a shared rule ([`sieve_ir::Rule::is_shared`]) with this body: one rule
    /// per distinct body in the whole compilation, which normalisation keeps as one automaton
    /// however many rules refer to it.
    pub(crate) fn shared_tail(&mut self, base: &str, body: Expr, ptr: &str) -> Result<Expr, Error> {
        let body = Hashed::new(body);
        if let Some(rule) = self.shared_tails.get(&body) {
            return Ok(rule.clone());
        }
        let id = self.new_rule(base, ptr)?;
        self.define(id, body.expr.clone(), ptr)?;
        self.builder.share(id);
        let rule = Expr::rule(id);
        self.shared_tails.insert(body, rule.clone());
        Ok(rule)
    }

    /// Refuses `keyword` at `ptr`: an [`ErrorKind::Unsupported`] error, or in lenient mode a
    /// warning (once per pointer and keyword) and `Ok` — the caller then drops the keyword.
    pub(crate) fn refuse(&mut self, ptr: &str, keyword: &str, why: &str) -> Result<(), Error> {
        let error = Error::new(ErrorKind::Unsupported, ptr, keyword, why);
        self.refuse_error(error)
    }

    /// [`Compiler::refuse`] for an error built elsewhere (the string and number helpers).
    pub(crate) fn refuse_error(&mut self, error: Error) -> Result<(), Error> {
        if !self.options.lenient || error.kind != ErrorKind::Unsupported {
            return Err(error);
        }
        if self
            .warned
            .insert((error.pointer.clone(), error.keyword.clone()))
        {
            self.warnings.push(Warning {
                keyword: error.keyword,
                pointer: error.pointer,
                message: error.message,
            });
        }
        Ok(())
    }

    /// The value at `ptr` (which exists: pointers come from the document or from `$ref`
    /// resolution, which checks).
    pub(crate) fn at(&self, ptr: &str) -> &'a Value {
        if let Some(&value) = self.located.borrow().get(ptr) {
            return value;
        }
        let value = crate::refs::lookup(self.doc, ptr).unwrap_or(&Value::Null);
        self.located.borrow_mut().insert(ptr.to_owned(), value);
        value
    }

    /// The rule for any JSON value.
    pub(crate) fn any_value(&mut self) -> Result<Expr, Error> {
        if let Some(id) = self.any_value {
            return Ok(Expr::rule(id));
        }
        let id = self.new_rule("json_value", "")?;
        self.any_value = Some(id);
        let value = Expr::rule(id);
        let string = any_string(self.layout.escapes);
        let string = self.share("json_string", string, "")?;
        let number = number_schema(&mut self.builder, &NumberSpec::default())?;
        let l = self.layout.clone();
        let items = Expr::seq([
            l.gap.clone(),
            value.clone(),
            Expr::star(Expr::seq([l.item_sep.clone(), value.clone()])),
        ]);
        let array = Expr::seq([
            Expr::bytes(*b"["),
            Expr::optional(items),
            l.gap.clone(),
            Expr::bytes(*b"]"),
        ]);
        let member = l.member(string.clone(), value.clone());
        let members = Expr::seq([
            l.gap.clone(),
            member.clone(),
            Expr::star(Expr::seq([l.item_sep.clone(), member])),
        ]);
        let object = Expr::seq([
            Expr::bytes(*b"{"),
            Expr::optional(members),
            l.gap.clone(),
            Expr::bytes(*b"}"),
        ]);
        let body = Expr::choice([
            Expr::bytes(*b"null"),
            Expr::bytes(*b"true"),
            Expr::bytes(*b"false"),
            number,
            string,
            array,
            object,
        ])
        .expect("seven alternatives");
        self.define(id, body, "")?;
        Ok(Expr::rule(id))
    }

    fn base_at(&mut self, ptr: &str) -> String {
        if let Some(base) = self.bases.get(ptr) {
            return base.clone();
        }
        let base = self.refs.base_at(self.doc, ptr);
        self.bases.insert(ptr.to_owned(), base.clone());
        base
    }

    /// The locations `elems` stand for: `allOf` members and `$ref` targets added, `true`
    /// dropped, the same pointer merged (its `done` bits or-ed), sorted. `None` when a
    /// `false` schema is in the set.
    fn flatten(&mut self, elems: Vec<Elem>, depth: usize) -> Result<Option<Vec<Elem>>, Error> {
        let mut done: HashMap<String, u8> = HashMap::new();
        let (mut negated, mut stack): (Vec<Elem>, Vec<Elem>) =
            elems.into_iter().partition(|e| e.done & NEGATED != 0);
        let mut steps = 0usize;
        while let Some(elem) = stack.pop() {
            steps += 1;
            if steps > self.limits().max_depth.saturating_mul(64).max(4096) {
                return Err(Error::new(
                    ErrorKind::Limit,
                    &elem.ptr,
                    "",
                    "too many `allOf` members and `$ref`s in one intersection",
                ));
            }
            self.spend(1, &elem.ptr)?;
            if let Some(bits) = done.get_mut(&elem.ptr) {
                *bits |= elem.done;
                continue;
            }
            let value = self.at(&elem.ptr);
            let map = match value {
                Value::Bool(true) => continue,
                Value::Bool(false) => return Ok(None),
                Value::Object(map) => map,
                _ => {
                    return Err(Error::new(
                        ErrorKind::Invalid,
                        &elem.ptr,
                        "",
                        "a schema must be an object or a boolean",
                    ))
                }
            };
            let mut keep = true;
            if let Some(reference) = get_keyword(map, "$ref") {
                let Some(reference) = reference.as_str() else {
                    return Err(Error::new(
                        ErrorKind::Invalid,
                        &elem.ptr,
                        "$ref",
                        "must be a string",
                    ));
                };
                let base = self.base_at(&elem.ptr);
                match self.refs.resolve(self.doc, &base, reference, &elem.ptr) {
                    Ok(target) => stack.push(Elem::new(target)),
                    // Lenient: a remote reference is dropped (any value there).
                    Err(error) => self.refuse_error(error)?,
                }
                if self.draft == Draft::Draft7 {
                    keep = false;
                }
            }
            if !keep {
                // Draft-07: the location is its `$ref`; record it so a cycle of pure
                // references ends.
                done.insert(elem.ptr.clone(), u8::MAX);
                continue;
            }
            // `not: {not: S}` is `S`: it joins the set (`negate` then skips the outer `not`).
            if self.at(&elem.ptr).get("not").is_some_and(double_negation) {
                stack.push(Elem::new(join_pointer(
                    &join_pointer(&elem.ptr, "not"),
                    "not",
                )));
            }
            if let Some(all) = get_keyword(map, "allOf") {
                let items = schema_array(all, &elem.ptr, "allOf")?;
                for i in 0..items {
                    stack.push(Elem::new(join_pointer(
                        &join_pointer(&elem.ptr, "allOf"),
                        &i.to_string(),
                    )));
                }
            }
            done.insert(elem.ptr.clone(), elem.done);
        }
        let _ = depth;
        let mut out: Vec<Elem> = done
            .into_iter()
            .filter(|(_, bits)| *bits != u8::MAX)
            .map(|(ptr, done)| Elem { ptr, done })
            .collect();
        negated.dedup();
        out.extend(negated);
        out.sort();
        out.dedup();
        Ok(Some(out))
    }

    /// The grammar of the instances every schema of `elems` accepts and whose type is in
    /// `only`; `None` when there are none.
    pub(crate) fn compile_set(
        &mut self,
        elems: Vec<Elem>,
        only: Types,
        depth: usize,
    ) -> Result<Option<Expr>, Error> {
        let ptr = elems.first().map(|e| e.ptr.clone()).unwrap_or_default();
        if depth > self.limits().max_depth {
            return Err(Error::new(
                ErrorKind::Limit,
                &ptr,
                "",
                format!("schemas nest deeper than {}", self.limits().max_depth),
            ));
        }
        let Some(flat) = self.flatten(elems, depth)? else {
            return Ok(None);
        };
        if only == ALL
            && flat
                .iter()
                .all(|e| e.done & NEGATED == 0 && self.is_trivial(&e.ptr))
        {
            return self.any_value().map(Some);
        }
        let key = (flat, only);
        match self.cache.get(&key) {
            Some(Built::Done(rule)) => return Ok(rule.map(Expr::rule)),
            Some(Built::Building(Some(id))) => return Ok(Some(Expr::rule(*id))),
            Some(Built::Building(None)) => {
                // A reference from inside the set's own grammar: the set needs its rule now.
                let id = self.new_rule("schema", &ptr)?;
                self.cache.insert(key, Built::Building(Some(id)));
                return Ok(Some(Expr::rule(id)));
            }
            None => {}
        }
        self.cache.insert(key.clone(), Built::Building(None));
        let body = self.compile_flat(&key.0, only, depth)?;
        let declared = match self.cache.get(&key) {
            Some(Built::Building(id)) => *id,
            _ => None,
        };
        let rule = match (body, declared) {
            (Some(body), Some(id)) => {
                self.define(id, body, &ptr)?;
                Some(id)
            }
            (Some(body), None) => match body.kind() {
                // Already one rule (a shared string or number): no rule that only renames it.
                ExprKind::Ref(rule) => Some(*rule),
                _ => {
                    let id = self.new_rule("schema", &ptr)?;
                    self.define(id, body, &ptr)?;
                    Some(id)
                }
            },
            (None, Some(id)) => {
                // The empty language: a rule that only derives itself (no sentence), for
                // the references made to it while it was being built.
                self.define(id, Expr::rule(id), &ptr)?;
                None
            }
            (None, None) => None,
        };
        self.cache.insert(key, Built::Done(rule));
        Ok(rule.map(Expr::rule))
    }

    /// Whether the schema at `ptr` has no constraining keyword.
    fn is_trivial(&self, ptr: &str) -> bool {
        is_trivial_schema(self.at(ptr))
    }

    fn compile_flat(
        &mut self,
        flat: &[Elem],
        only: Types,
        depth: usize,
    ) -> Result<Option<Expr>, Error> {
        // Distribute the first `anyOf` / `oneOf` / `if` over the rest of the set.
        for (i, elem) in flat.iter().enumerate() {
            if elem.done & NEGATED != 0 {
                continue;
            }
            let map = self.at(&elem.ptr).as_object().expect("flattened");
            for (keyword, bit) in [("anyOf", DONE_ANY_OF), ("oneOf", DONE_ONE_OF)] {
                if elem.done & bit != 0 {
                    continue;
                }
                let Some(branches) = get_keyword(map, keyword) else {
                    continue;
                };
                let n = schema_array(branches, &elem.ptr, keyword)?;
                let base = join_pointer(&elem.ptr, keyword);
                let branch_ptrs: Vec<String> = (0..n)
                    .map(|j| join_pointer(&base, &j.to_string()))
                    .collect();
                if keyword == "oneOf" && n > 1 && presence_one_of(branches).is_some() {
                    // Exact as a presence constraint of the shape (`shape`).
                    continue;
                }
                let mut exclusive = false;
                if keyword == "oneOf" && n > 1 {
                    // The types the rest of the set allows: only they can overlap.
                    let mut context = only;
                    for other in flat.iter().filter(|e| e.done & NEGATED == 0) {
                        if let Some(t) = self.at(&other.ptr).get("type") {
                            context &= parse_types(t, &other.ptr)?;
                        }
                    }
                    if let Some((a, b)) = self.overlap(&branch_ptrs, context)? {
                        // Each branch with the negations of the others: exact when the
                        // negations are (`negation` refuses otherwise, naming `oneOf`).
                        exclusive = true;
                        if n > MAX_EXCLUSIVE_BRANCHES {
                            exclusive = false;
                            self.refuse(
                                &elem.ptr,
                                "oneOf",
                                &format!(
                                    "branches {a} and {b} are not provably disjoint (different \
                                     types, different const/enum values or a required property \
                                     with different const values), and {n} branches are too \
                                     many to negate each other"
                                ),
                            )?;
                        }
                    }
                }
                let mut alternatives = Vec::new();
                for (j, branch) in branch_ptrs.iter().enumerate() {
                    let mut set = flat.to_vec();
                    set[i].done |= bit;
                    set.push(Elem::new(branch.clone()));
                    if exclusive {
                        for (m, other) in branch_ptrs.iter().enumerate() {
                            if m != j {
                                set.push(Elem {
                                    ptr: other.clone(),
                                    done: NEGATED | NEGATED_BRANCH,
                                });
                            }
                        }
                    }
                    if let Some(expr) = self.compile_set(set, only, depth + 1)? {
                        alternatives.push(expr);
                    }
                }
                return Ok(Expr::choice(alternatives));
            }
            if elem.done & DONE_IF == 0 && get_keyword(map, "if").is_some() {
                // (if ∧ then) ∨ (¬if ∧ else): disjoint sides, so the union is exact.
                let side = |keyword: &str| {
                    get_keyword(map, keyword)
                        .is_some()
                        .then(|| Elem::new(join_pointer(&elem.ptr, keyword)))
                };
                let condition = join_pointer(&elem.ptr, "if");
                let mut alternatives = Vec::new();
                for (test, branch) in [
                    (Elem::new(condition.clone()), side("then")),
                    (
                        Elem {
                            ptr: condition,
                            done: NEGATED,
                        },
                        side("else"),
                    ),
                ] {
                    let mut set = flat.to_vec();
                    set[i].done |= DONE_IF;
                    set.push(test);
                    set.extend(branch);
                    if let Some(expr) = self.compile_set(set, only, depth + 1)? {
                        alternatives.push(expr);
                    }
                }
                return Ok(Expr::choice(alternatives));
            }
        }
        let shape = self.shape(flat)?;
        let types = shape.types & only;
        if types == 0 {
            return Ok(None);
        }
        if let Some((values, values_ptr)) = &shape.values {
            return self.compile_values(flat, &shape, types, values, values_ptr, depth);
        }
        let mut alternatives = Vec::new();
        if types & NULL != 0 {
            alternatives.push(Expr::bytes(*b"null"));
        }
        if types & BOOLEAN != 0 {
            alternatives.push(Expr::bytes(*b"true"));
            alternatives.push(Expr::bytes(*b"false"));
        }
        if types & NUMBER != 0 {
            let mut spec = NumberSpec {
                integer: types & FRACTION == 0,
                pointer: &shape.number_ptr,
                ..shape.number.clone()
            };
            if let Some(lcm) = &shape.multiple_of_lcm {
                spec.multiple_of = Some(lcm);
            }
            alternatives.push(self.number(spec)?);
        }
        if types & STRING != 0 {
            let spec = StringSpec {
                pointer: &shape.string_ptr,
                ..shape.string.clone()
            };
            alternatives.push(self.string(spec)?);
        }
        if types & OBJECT != 0 {
            if let Some(expr) = object::compile(self, &shape, depth)? {
                alternatives.push(expr);
            }
        }
        if types & ARRAY != 0 {
            if let Some(expr) = array::compile(self, &shape, depth)? {
                alternatives.push(expr);
            }
        }
        Ok(Expr::choice(alternatives))
    }

    /// A string schema; in lenient mode the keywords the string module refuses are dropped.
    fn string(&mut self, mut spec: StringSpec<'_>) -> Result<Expr, Error> {
        loop {
            let key = LeafKey::string(&spec);
            if let Some(expr) = self.leaves.get(&key) {
                return Ok(expr.clone());
            }
            let limits = self.options.limits.clone();
            match string_schema_limited(&mut self.builder, &spec, self.layout.escapes, &limits) {
                Ok(expr) => return self.keep_leaf(key, "string", expr, spec.pointer),
                Err(error) => {
                    let keyword = error.keyword.clone();
                    self.refuse_error(error)?;
                    match keyword.as_str() {
                        "minLength" if spec.min_length > 0 => spec.min_length = 0,
                        "maxLength" if spec.max_length.is_some() => spec.max_length = None,
                        "pattern" if spec.pattern.is_some() => spec.pattern = None,
                        "format" if spec.format.is_some() => spec.format = None,
                        _ => spec = StringSpec::default(),
                    }
                }
            }
        }
    }

    /// `expr`, a leaf schema's grammar, as a shared rule remembered under `key`.
    fn keep_leaf(
        &mut self,
        key: LeafKey,
        base: &str,
        expr: Expr,
        ptr: &str,
    ) -> Result<Expr, Error> {
        let expr = self.share(base, expr, ptr)?;
        self.leaves.insert(key, expr.clone());
        Ok(expr)
    }

    /// A number schema; in lenient mode the keywords the number module refuses are dropped.
    fn number(&mut self, mut spec: NumberSpec<'_>) -> Result<Expr, Error> {
        loop {
            let key = LeafKey::number(&spec);
            if let Some(expr) = self.leaves.get(&key) {
                return Ok(expr.clone());
            }
            match number_schema(&mut self.builder, &spec) {
                Ok(expr) => return self.keep_leaf(key, "number", expr, spec.pointer),
                Err(error) => {
                    let keyword = error.keyword.clone();
                    self.refuse_error(error)?;
                    match keyword.as_str() {
                        "minimum" if spec.minimum.is_some() => spec.minimum = None,
                        "maximum" if spec.maximum.is_some() => spec.maximum = None,
                        "exclusiveMinimum" if spec.exclusive_minimum.is_some() => {
                            spec.exclusive_minimum = None
                        }
                        "exclusiveMaximum" if spec.exclusive_maximum.is_some() => {
                            spec.exclusive_maximum = None
                        }
                        "multipleOf" if spec.multiple_of.is_some() => spec.multiple_of = None,
                        _ => {
                            spec = NumberSpec {
                                integer: spec.integer,
                                ..NumberSpec::default()
                            }
                        }
                    }
                }
            }
        }
    }

    /// `enum` / `const`: the listed values of the right types that meet the set's other
    /// keywords, printed in the layout.
    fn compile_values(
        &mut self,
        flat: &[Elem],
        shape: &Shape<'a>,
        types: Types,
        values: &[&'a Value],
        values_ptr: &str,
        depth: usize,
    ) -> Result<Option<Expr>, Error> {
        let mut kept: Vec<&'a Value> = values
            .iter()
            .copied()
            .filter(|v| value_types(v) & types != 0)
            .collect();
        let residual = flat.iter().any(|e| {
            self.at(&e.ptr).as_object().is_some_and(|map| {
                map.keys().any(|k| {
                    CONSTRAINING.contains(&k.as_str())
                        && !matches!(k.as_str(), "type" | "enum" | "const" | "$schema")
                })
            })
        });
        if residual && !kept.is_empty() {
            let elems = flat
                .iter()
                .map(|e| Elem {
                    ptr: e.ptr.clone(),
                    done: e.done | DONE_ENUM,
                })
                .collect();
            let verdicts = self.check_values(elems, types, &kept, values_ptr, depth)?;
            kept = kept
                .into_iter()
                .zip(verdicts)
                .filter_map(|(v, ok)| ok.then_some(v))
                .collect();
        }
        for excluded in &shape.excluded {
            if kept.is_empty() {
                break;
            }
            kept = self.exclude_values(excluded, kept, depth)?;
        }
        let mut alternatives = Vec::with_capacity(kept.len());
        for value in kept {
            alternatives.push(self.value_literal(value, values_ptr)?);
        }
        Ok(Expr::choice(alternatives))
    }

    /// A literal value under [`crate::PropertyOrder::Any`]: objects with at most
    /// `max_any_order_properties` (and at most 8) members in any order (each member exactly
    /// once), larger ones in their own order.
    fn literal_any_order(&mut self, value: &Value, depth: usize, ptr: &str) -> Result<Expr, Error> {
        let nested = |v: &Value| match v {
            Value::Array(items) => !items.is_empty(),
            Value::Object(map) => !map.is_empty(),
            _ => false,
        };
        if depth == 0 || !nested(value) {
            return self.layout.literal(value, depth.max(1), ptr, "");
        }
        match value {
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(self.literal_any_order(item, depth - 1, ptr)?);
                }
                Ok(self.layout.bracket(b'[', out, b']'))
            }
            Value::Object(map) => {
                let mut members = Vec::with_capacity(map.len());
                for (key, item) in map {
                    members.push(object::Member {
                        key: crate::string::string_literal(key, self.layout.literal_escapes),
                        value: self.literal_any_order(item, depth - 1, ptr)?,
                        required: true,
                    });
                }
                // 2^n (n + 1) rules: at most 8 members, whatever the option says.
                if members.len() < 2 || members.len() > self.options.max_any_order_properties.min(8)
                {
                    let out = members
                        .into_iter()
                        .map(|m| self.layout.member(m.key, m.value))
                        .collect();
                    return Ok(self.layout.bracket(b'{', out, b'}'));
                }
                let n = members.len() as u64;
                let tracking = object::Tracking::none(members.len());
                let body = object::any_order(self, members, None, n, Some(n), &tracking, ptr)?
                    .expect("every permutation is allowed");
                Ok(Expr::seq([
                    Expr::bytes(*b"{"),
                    body,
                    self.layout.gap.clone(),
                    Expr::bytes(*b"}"),
                ]))
            }
            _ => self.layout.literal(value, depth, ptr, ""),
        }
    }

    /// Which of `values` the set `elems` accepts, decided by compiling the set on its own
    /// (compact layout) and running the reference recogniser on each value's compact text.
    /// A value the grammar rejects is dropped: at worst a valid value lost (rejected-valid),
    /// never an invalid one kept, since the grammar accepts only valid instances.
    pub(crate) fn check_values(
        &mut self,
        elems: Vec<Elem>,
        types: Types,
        values: &[&Value],
        ptr: &str,
        depth: usize,
    ) -> Result<Vec<bool>, Error> {
        self.recognise_values(elems, types, values, ptr, depth, true)
    }

    /// The values of `values` that the schema at `negated` (a `not`) rejects. A value is kept
    /// only when the schema's grammar rejects it and that grammar is exact on it
    /// ([`decidable`]): then the value is not an instance of the negated schema.
    fn exclude_values(
        &mut self,
        negated: &str,
        values: Vec<&'a Value>,
        depth: usize,
    ) -> Result<Vec<&'a Value>, Error> {
        let parent = negated.strip_suffix("/not").unwrap_or(negated);
        let verdicts = match self.recognise_values(
            vec![Elem::new(negated.to_owned())],
            ALL,
            &values,
            negated,
            depth,
            false,
        ) {
            Ok(verdicts) => verdicts,
            Err(e) if e.kind == ErrorKind::Limit && e.keyword == "properties" => {
                self.refuse(
                    parent,
                    "not",
                    "the negated schema has too many properties to decide the listed values in any property order",
                )?;
                // Lenient: the `not` is dropped.
                return Ok(values);
            }
            Err(e) => return Err(e),
        };
        let max_members = self.options.max_any_order_properties.min(8);
        Ok(values
            .into_iter()
            .zip(verdicts)
            .filter_map(|(v, inside)| (!inside && decidable(v, max_members)).then_some(v))
            .collect())
    }

    /// Runs the reference recogniser on each value's compact text against the set `elems`
    /// compiled on its own. With `retry`, objects too large for any property order are
    /// decided in schema order (a valid value may then be rejected).
    fn recognise_values(
        &mut self,
        elems: Vec<Elem>,
        types: Types,
        values: &[&Value],
        ptr: &str,
        depth: usize,
        retry: bool,
    ) -> Result<Vec<bool>, Error> {
        // Member order does not matter to the schema: decide with any order, or in schema
        // order when objects are too large for that (a valid value may then be lost).
        // The fuel of a failed first attempt stays spent, so retries cannot multiply work.
        let attempt = |order, fuel| {
            let options = Options {
                whitespace: crate::Whitespace::Compact,
                item_separator: ",".to_owned(),
                key_separator: ":".to_owned(),
                property_order: order,
                escapes: Escapes::Any,
                ..self.options.clone()
            };
            let mut sub = Compiler::with_refs(self.doc, options, self.draft, self.refs.clone());
            sub.fuel = fuel;
            let root = sub.compile_set(elems.clone(), types, depth + 1);
            (sub, root)
        };
        let (mut sub, mut root) = attempt(crate::PropertyOrder::Any, self.fuel);
        // Only the any-order size limit is worth a retry (not depth, rules or fuel).
        if retry
            && root
                .as_ref()
                .is_err_and(|e| e.kind == ErrorKind::Limit && e.keyword == "properties")
        {
            let fuel = sub.fuel;
            (sub, root) = attempt(crate::PropertyOrder::Schema, fuel);
        }
        self.fuel = sub.fuel;
        for warning in std::mem::take(&mut sub.warnings) {
            if self
                .warned
                .insert((warning.pointer.clone(), warning.keyword.clone()))
            {
                self.warnings.push(warning);
            }
        }
        let Some(root) = root? else {
            return Ok(vec![false; values.len()]);
        };
        let id = sub.new_rule("check", ptr)?;
        sub.builder.define(id, root);
        let grammar = sub
            .builder
            .build(id)
            .map_err(|e| Error::new(ErrorKind::Limit, ptr, "", e.to_string()))?;
        let Ok(recognizer) = Recognizer::new(&grammar) else {
            return Err(Error::new(
                ErrorKind::Unsupported,
                ptr,
                "",
                "cannot decide which listed values meet the other keywords (repetition bounds too large)",
            ));
        };
        let mut out = Vec::with_capacity(values.len());
        for value in values {
            let text = serde_json::to_string(value).expect("a Value always serialises");
            self.spend(
                text.len().saturating_mul(grammar.size().min(1000)) / 8 + 1,
                ptr,
            )?;
            out.push(recognizer.accepts(text.as_bytes()));
        }
        Ok(out)
    }

    /// Two branches not provably disjoint in `context`, if any.
    fn overlap(
        &mut self,
        branches: &[String],
        context: Types,
    ) -> Result<Option<(usize, usize)>, Error> {
        let mut summaries = Vec::with_capacity(branches.len());
        for branch in branches {
            summaries.push(self.summary(branch)?);
        }
        for i in 0..summaries.len() {
            for j in i + 1..summaries.len() {
                if !summaries[i].disjoint(&summaries[j], context) {
                    return Ok(Some((i, j)));
                }
            }
        }
        Ok(None)
    }

    /// The values the `enum`s and `const`s of the intersection at `ptr` list (a superset of
    /// its instances), `None` when it lists none.
    pub(crate) fn listed_values(&mut self, ptr: &str) -> Result<Option<Vec<&'a Value>>, Error> {
        Ok(self.summary(ptr)?.values)
    }

    /// A listed value in the output layout (any member order under
    /// [`crate::PropertyOrder::Any`]).
    pub(crate) fn value_literal(&mut self, value: &Value, ptr: &str) -> Result<Expr, Error> {
        let expr = if self.options.property_order == crate::PropertyOrder::Any {
            self.literal_any_order(value, self.limits().max_depth, ptr)?
        } else {
            self.layout
                .literal(value, self.limits().max_depth, ptr, "")?
        };
        self.spend(expr.size(), ptr)?;
        Ok(expr)
    }

    /// Whether the schema at `ptr` accepts at most one value (a `const` or one-value `enum`
    /// somewhere in its intersection).
    pub(crate) fn single_valued(&mut self, ptr: &str) -> Result<bool, Error> {
        let summary = self.summary(ptr)?;
        Ok(summary.types == 0 || summary.values.is_some_and(|v| v.len() <= 1))
    }

    /// A superset description of what the schema at `ptr` accepts.
    fn summary(&mut self, ptr: &str) -> Result<Summary<'a>, Error> {
        let Some(flat) = self.flatten(vec![Elem::new(ptr.to_owned())], 0)? else {
            return Ok(Summary {
                types: 0,
                values: None,
                tags: Vec::new(),
                required: Vec::new(),
                false_props: Vec::new(),
                closed: Vec::new(),
            });
        };
        let mut summary = Summary {
            types: ALL,
            values: None,
            tags: Vec::new(),
            required: Vec::new(),
            false_props: Vec::new(),
            closed: Vec::new(),
        };
        let mut required: Vec<&'a str> = Vec::new();
        let mut consts: Vec<(&'a str, &'a Value)> = Vec::new();
        // A negated element only narrows the set: a superset may leave it out.
        for elem in flat.iter().filter(|e| e.done & NEGATED == 0) {
            let map = self.at(&elem.ptr).as_object().expect("flattened");
            if let Some(t) = get_keyword(map, "type") {
                summary.types &= parse_types(t, &elem.ptr)?;
            }
            for (keyword, list) in [
                ("enum", get_keyword(map, "enum")),
                ("const", get_keyword(map, "const")),
            ] {
                let Some(list) = list else { continue };
                let list: Vec<&'a Value> = match (keyword, list) {
                    ("const", v) => vec![v],
                    (_, Value::Array(items)) => items.iter().collect(),
                    _ => continue,
                };
                summary.values = Some(match summary.values.take() {
                    None => list,
                    Some(old) => old
                        .into_iter()
                        .filter(|a| list.iter().any(|b| json_eq(a, b)))
                        .collect(),
                });
            }
            if let Some(Value::Array(names)) = get_keyword(map, "required") {
                required.extend(names.iter().filter_map(Value::as_str));
            }
            let declared: Vec<&'a str> = match get_keyword(map, "properties") {
                Some(Value::Object(props)) => props.keys().map(String::as_str).collect(),
                _ => Vec::new(),
            };
            if get_keyword(map, "additionalProperties") == Some(&Value::Bool(false))
                && get_keyword(map, "patternProperties").is_none()
            {
                summary.closed.push(declared);
            }
            if let Some(Value::Object(props)) = get_keyword(map, "properties") {
                for (name, schema) in props {
                    if schema == &Value::Bool(false) {
                        summary.false_props.push(name);
                    }
                    if let Some(v) = schema.get("const") {
                        consts.push((name, v));
                    } else if let Some(Value::Array(items)) = schema.get("enum") {
                        if items.len() == 1 {
                            consts.push((name, &items[0]));
                        }
                    }
                }
            }
        }
        for (name, value) in consts {
            if required.contains(&name) {
                summary.tags.push((name, value));
            }
        }
        summary.required = required;
        if let Some(values) = &summary.values {
            summary.types &= values.iter().fold(0, |acc, v| acc | value_types(v));
        }
        Ok(summary)
    }

    /// Merges the keywords of the flattened set `flat`.
    fn shape(&mut self, flat: &[Elem]) -> Result<Shape<'a>, Error> {
        let mut s = Shape {
            types: ALL,
            ptr: flat.first().map(|e| e.ptr.clone()).unwrap_or_default(),
            ..Shape::default()
        };
        // Document order (`/allOf/2` before `/allOf/10`): it decides the property order.
        let mut ordered: Vec<&Elem> = flat.iter().collect();
        ordered.sort_by(|a, b| document_order(&a.ptr, &b.ptr));
        // With an `enum`/`const` in the set, a `not` without a grammar becomes a filter on the
        // listed values (`compile_values`).
        let listed = flat.iter().any(|e| {
            e.done & (DONE_ENUM | NEGATED) == 0
                && self
                    .at(&e.ptr)
                    .as_object()
                    .is_some_and(|m| m.contains_key("enum") || m.contains_key("const"))
        });
        for elem in ordered {
            let ptr = elem.ptr.as_str();
            if elem.done & NEGATED != 0 {
                // The negation of the schema here: the `else` side of an `if`, or another
                // branch of an overlapping `oneOf`.
                let parent = |p: &'_ str| p.rsplit_once('/').map_or("", |(up, _)| up).to_owned();
                let (at, keyword) = if elem.done & NEGATED_BRANCH != 0 {
                    (parent(&parent(ptr)), "oneOf")
                } else if elem.done & NEGATED_LOSSY != 0 {
                    (parent(ptr), "not")
                } else {
                    (parent(ptr), "if")
                };
                self.negation(&mut s, ptr, &at, keyword, elem.done, listed)?;
                continue;
            }
            let map: &'a Map<String, Value> = self.at(ptr).as_object().expect("flattened");
            self.spend(map.len(), ptr)?;
            if get_keyword(map, "not").is_some() {
                let negated = join_pointer(ptr, "not");
                self.negation(&mut s, &negated, ptr, "not", elem.done, listed)?;
            }
            if elem.done & DONE_ONE_OF == 0 {
                if let Some((formula, reader)) = get_keyword(map, "oneOf").and_then(presence_one_of)
                {
                    if !s.presence.add(formula, reader) {
                        self.refuse(ptr, "oneOf", TOO_MANY_NAMES)?;
                    }
                }
            }
            let mut dependencies_done: Vec<&str> = Vec::new();
            for keyword in ["dependencies", "dependentRequired", "dependentSchemas"] {
                let Some(Value::Object(entries)) = get_keyword(map, keyword) else {
                    continue;
                };
                // Draft-07 `dependencies` holds both forms; 2020-12 splits them.
                let (lists, schemas) = match keyword {
                    "dependencies" => (true, true),
                    "dependentRequired" => (true, false),
                    _ => (false, true),
                };
                let mut reader = Reader::new();
                let handled = match reader.dependencies(entries, lists, schemas) {
                    Some(formula) => s.presence.add(formula, reader),
                    None => false,
                };
                if !handled {
                    self.refuse(
                        ptr,
                        keyword,
                        "dependencies are supported only over property presence \
                         (lists of names, or schemas of `required`, `not`, `allOf`, `anyOf`, \
                         `oneOf`), with at most 8 names per object",
                    )?;
                }
                dependencies_done.push(keyword);
            }
            for (keyword, why) in UNSUPPORTED {
                if keyword == "uniqueItems"
                    || keyword == "not"
                    || (keyword == "if" && elem.done & DONE_IF != 0)
                {
                    continue;
                }
                if dependencies_done.contains(&keyword) {
                    continue;
                }
                if get_keyword(map, keyword).is_some() {
                    self.refuse(ptr, keyword, why)?;
                }
            }
            if let Some(t) = get_keyword(map, "type") {
                s.types &= parse_types(t, ptr)?;
            }
            if elem.done & DONE_ENUM == 0 {
                let mut lists: Vec<Vec<&'a Value>> = Vec::new();
                if let Some(list) = get_keyword(map, "enum") {
                    match list {
                        Value::Array(items) => lists.push(items.iter().collect()),
                        _ => return Err(invalid(ptr, "enum", "must be an array")),
                    }
                }
                if let Some(value) = get_keyword(map, "const") {
                    lists.push(vec![value]);
                }
                for list in lists {
                    s.values = Some(match s.values.take() {
                        None => (list, join_pointer(ptr, "enum")),
                        Some((old, p)) => (
                            old.into_iter()
                                .filter(|a| list.iter().any(|b| json_eq(a, b)))
                                .collect(),
                            p,
                        ),
                    });
                }
            }
            self.string_keywords(&mut s, map, ptr)?;
            self.number_keywords(&mut s, map, ptr)?;
            self.object_keywords(&mut s, map, ptr)?;
            self.array_keywords(&mut s, map, ptr)?;
        }
        if !s.presence.allows_non_objects() {
            s.types &= OBJECT;
        }
        Ok(s)
    }

    /// The negation of the schema at `negated` (a `not`, or an `if` on its `else` side), of
    /// an element with `done` bits, in a set that lists values or not; refusals name
    /// `keyword` at `at`.
    fn negation(
        &mut self,
        s: &mut Shape<'a>,
        negated: &str,
        at: &str,
        keyword: &str,
        done: u8,
        listed: bool,
    ) -> Result<(), Error> {
        let value = self.at(negated);
        // Only `not` itself may leave out the numbers that have no grammar of their own.
        let lossy = keyword == "not";
        if self.negate(s, value, negated, lossy, !listed)? || presence_not(&mut s.presence, value) {
            return Ok(());
        }
        if done & DONE_ENUM != 0 {
            // The caller's enum filter decides this negation.
        } else if listed {
            s.excluded.push(negated.to_owned());
        } else {
            self.refuse(
                at,
                keyword,
                "negation (of `not`, of `if` for `else`, of the other branches of a `oneOf` \
                 whose branches may overlap) is supported only for `true`, `false`, `{}`, `{\"type\": …}`, \
                 presence formulas, `{\"not\": …}`, `{\"properties\": {one name}}` (with or \
                 without it required) and, beside an `enum` or `const`, any schema sieve can \
                 compile",
            )?;
        }
        Ok(())
    }

    /// `not` in the forms that have an exact complement here: `true`, `false`,
    /// `{"type": …}`, `{"required": [name]}`, `{"not": …}` (the inner schema joined the set
    /// in `flatten`) and `{"properties": {name: S}}`, `required: [name]` and
    /// `type: "object"` or not (the property present unless required there, its value not
    /// meeting `S`; non-objects allowed only with the type). `negated_ptr` is the
    /// pointer of `negated`. `false` for any other form: the caller filters or refuses it.
    fn negate(
        &mut self,
        s: &mut Shape<'a>,
        negated: &'a Value,
        negated_ptr: &str,
        lossy: bool,
        members: bool,
    ) -> Result<bool, Error> {
        fn keys(map: &Map<String, Value>) -> Vec<&str> {
            map.keys()
                .map(String::as_str)
                .filter(|k| CONSTRAINING.contains(k))
                .collect()
        }
        match negated {
            Value::Bool(true) => s.types = 0,
            Value::Bool(false) => {}
            Value::Object(map) if keys(map).is_empty() => s.types = 0,
            _ if double_negation(negated) => {}
            Value::Object(map) if keys(map) == ["type"] => {
                let mut types = s.types & !parse_types(&map["type"], negated_ptr)?;
                // Numbers that are not integers have no grammar of their own: leave them
                // out (rejected-valid, never accepted-invalid), where `lossy` allows.
                if types & NUMBER == FRACTION {
                    if !lossy {
                        return Ok(false);
                    }
                    types &= !FRACTION;
                }
                s.types = types;
            }
            Value::Object(map)
                if keys(map) == ["required"]
                    && map["required"]
                        .as_array()
                        .is_some_and(|names| names.len() == 1 && names[0].is_string()) =>
            {
                // Only an object without the property fails `required`.
                s.types &= OBJECT;
                let name = map["required"][0].as_str().expect("checked");
                if !s.forbidden.contains(&name) {
                    s.forbidden.push(name);
                }
            }
            // Beside listed values the enum filter decides instead (exact on more schemas).
            Value::Object(map) if members && one_property(map).is_some() => {
                let (name, required, typed) = one_property(map).expect("checked");
                // Non-objects meet `properties` (so fail its negation) unless the type is
                // required; an object fails it only through this name.
                if !typed {
                    s.types &= OBJECT;
                }
                if !required && !s.required.contains(&name) {
                    s.required.push(name);
                }
                let schema = member_pointer(&join_pointer(negated_ptr, "properties"), name);
                s.negated_members.push((name, schema, lossy));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn string_keywords(
        &mut self,
        s: &mut Shape<'a>,
        map: &'a Map<String, Value>,
        ptr: &str,
    ) -> Result<(), Error> {
        if let Some(v) = get_keyword(map, "minLength") {
            s.string.min_length = s.string.min_length.max(non_negative(v, ptr, "minLength")?);
            s.string_ptr = ptr.to_owned();
        }
        if let Some(v) = get_keyword(map, "maxLength") {
            let v = non_negative(v, ptr, "maxLength")?;
            s.string.max_length = Some(s.string.max_length.map_or(v, |m| m.min(v)));
            s.string_ptr = ptr.to_owned();
        }
        for keyword in ["pattern", "format"] {
            let Some(v) = get_keyword(map, keyword) else {
                continue;
            };
            let Some(text) = v.as_str() else {
                return Err(invalid(ptr, keyword, "must be a string"));
            };
            let slot = if keyword == "pattern" {
                &mut s.string.pattern
            } else {
                &mut s.string.format
            };
            match slot {
                Some(old) if *old != text => {
                    self.refuse(
                        ptr,
                        keyword,
                        &format!("a second, different `{keyword}` in an intersection"),
                    )?;
                }
                _ => *slot = Some(text),
            }
        }
        if s.string_ptr.is_empty() && (s.string.pattern.is_some() || s.string.format.is_some()) {
            s.string_ptr = ptr.to_owned();
        }
        Ok(())
    }

    fn number_keywords(
        &mut self,
        s: &mut Shape<'a>,
        map: &'a Map<String, Value>,
        ptr: &str,
    ) -> Result<(), Error> {
        for keyword in [
            "minimum",
            "exclusiveMinimum",
            "maximum",
            "exclusiveMaximum",
            "multipleOf",
        ] {
            let Some(v) = get_keyword(map, keyword) else {
                continue;
            };
            let Value::Number(n) = v else {
                if v.is_boolean() && keyword.starts_with("exclusive") {
                    self.refuse(
                        ptr,
                        keyword,
                        "draft-04 boolean exclusive bounds are not supported",
                    )?;
                    continue;
                }
                return Err(invalid(ptr, keyword, "must be a number"));
            };
            if keyword == "multipleOf" && n.as_f64().is_none_or(|f| f <= 0.0) {
                return Err(invalid(ptr, keyword, "must be greater than 0"));
            }
            let slot = match keyword {
                "minimum" => &mut s.number.minimum,
                "exclusiveMinimum" => &mut s.number.exclusive_minimum,
                "maximum" => &mut s.number.maximum,
                "exclusiveMaximum" => &mut s.number.exclusive_maximum,
                _ => &mut s.number.multiple_of,
            };
            match *slot {
                None => *slot = Some(n),
                Some(old) if json_eq_number(old, n) => {}
                Some(old) => {
                    let (a, b) = (old.as_f64(), n.as_f64());
                    let tighter = match (a, b, keyword) {
                        (Some(a), Some(b), "minimum" | "exclusiveMinimum") if a != b => {
                            Some(if b > a { n } else { old })
                        }
                        (Some(a), Some(b), "maximum" | "exclusiveMaximum") if a != b => {
                            Some(if b < a { n } else { old })
                        }
                        _ => None,
                    };
                    if keyword == "multipleOf" {
                        let current = s.multiple_of_lcm.as_ref().and_then(|m| m.as_u64());
                        if let (Some(x), Some(y)) = (current.or(old.as_u64()), n.as_u64()) {
                            if let Some(l) = lcm(x, y) {
                                s.multiple_of_lcm = Some(l.into());
                                s.number_ptr = ptr.to_owned();
                                continue;
                            }
                        }
                    }
                    match tighter {
                        Some(t) => *slot = Some(t),
                        None => self.refuse(
                            ptr,
                            keyword,
                            "two different values in an intersection that sieve cannot combine",
                        )?,
                    }
                }
            }
            s.number_ptr = ptr.to_owned();
        }
        Ok(())
    }

    fn object_keywords(
        &mut self,
        s: &mut Shape<'a>,
        map: &'a Map<String, Value>,
        ptr: &str,
    ) -> Result<(), Error> {
        let mut part = ObjectPart {
            ptr: ptr.to_owned(),
            ..ObjectPart::default()
        };
        let mut has_part = false;
        for (keyword, slot) in [("properties", 0), ("patternProperties", 1)] {
            let Some(v) = get_keyword(map, keyword) else {
                continue;
            };
            let Value::Object(props) = v else {
                return Err(invalid(ptr, keyword, "must be an object"));
            };
            has_part = true;
            let base = join_pointer(ptr, keyword);
            for (name, _) in props {
                let entry = (name.as_str(), member_pointer(&base, name));
                if slot == 0 {
                    part.props.push(entry);
                } else {
                    part.patterns.push(entry);
                }
            }
        }
        if get_keyword(map, "additionalProperties").is_some() {
            has_part = true;
            part.additional = Some(join_pointer(ptr, "additionalProperties"));
        }
        if has_part {
            s.objects.push(part);
        }
        if let Some(v) = get_keyword(map, "required") {
            let Value::Array(names) = v else {
                return Err(invalid(ptr, "required", "must be an array of strings"));
            };
            for name in names {
                let Some(name) = name.as_str() else {
                    return Err(invalid(ptr, "required", "must be an array of strings"));
                };
                if !s.required.contains(&name) {
                    s.required.push(name);
                }
            }
        }
        if let Some(v) = get_keyword(map, "minProperties") {
            s.min_properties = s.min_properties.max(non_negative(v, ptr, "minProperties")?);
        }
        if let Some(v) = get_keyword(map, "maxProperties") {
            let v = non_negative(v, ptr, "maxProperties")?;
            s.max_properties = Some(s.max_properties.map_or(v, |m| m.min(v)));
        }
        if get_keyword(map, "propertyNames").is_some() {
            s.property_names.push(join_pointer(ptr, "propertyNames"));
        }
        Ok(())
    }

    fn array_keywords(
        &mut self,
        s: &mut Shape<'a>,
        map: &'a Map<String, Value>,
        ptr: &str,
    ) -> Result<(), Error> {
        let mut part = ArrayPart::default();
        let mut has_part = false;
        let items = get_keyword(map, "items");
        if let Some(Value::Array(tuple)) = items {
            // Draft-07 tuple form (also accepted in 2019-09 style documents).
            has_part = true;
            let base = join_pointer(ptr, "items");
            part.prefix = (0..tuple.len())
                .map(|i| join_pointer(&base, &i.to_string()))
                .collect();
            if get_keyword(map, "additionalItems").is_some() {
                part.rest = Some(join_pointer(ptr, "additionalItems"));
            }
            if get_keyword(map, "prefixItems").is_some() {
                return Err(invalid(
                    ptr,
                    "items",
                    "an `items` array together with `prefixItems`",
                ));
            }
        } else {
            if let Some(v) = get_keyword(map, "prefixItems") {
                let n = schema_array(v, ptr, "prefixItems")?;
                has_part = true;
                let base = join_pointer(ptr, "prefixItems");
                part.prefix = (0..n)
                    .map(|i| join_pointer(&base, &i.to_string()))
                    .collect();
            }
            if items.is_some() {
                has_part = true;
                part.rest = Some(join_pointer(ptr, "items"));
            }
        }
        if has_part {
            s.arrays.push(part);
        }
        if let Some(v) = get_keyword(map, "minItems") {
            s.min_items = s.min_items.max(non_negative(v, ptr, "minItems")?);
        }
        if let Some(v) = get_keyword(map, "maxItems") {
            let v = non_negative(v, ptr, "maxItems")?;
            s.max_items = Some(s.max_items.map_or(v, |m| m.min(v)));
        }
        if get_keyword(map, "contains").is_some() {
            let min = match get_keyword(map, "minContains") {
                Some(v) => non_negative(v, ptr, "minContains")?,
                None => 1,
            };
            let max = match get_keyword(map, "maxContains") {
                Some(v) => Some(non_negative(v, ptr, "maxContains")?),
                None => None,
            };
            s.contains
                .push((join_pointer(ptr, "contains"), min, max, ptr.to_owned()));
        }
        match get_keyword(map, "uniqueItems") {
            Some(Value::Bool(true)) => s.unique.push(ptr.to_owned()),
            Some(Value::Bool(false)) | None => {}
            Some(_) => return Err(invalid(ptr, "uniqueItems", "must be a boolean")),
        }
        Ok(())
    }
}

/// Pointers compared token by token, array indices as numbers.
fn document_order(a: &str, b: &str) -> std::cmp::Ordering {
    let mut x = a.split('/');
    let mut y = b.split('/');
    loop {
        match (x.next(), y.next()) {
            (None, None) => return std::cmp::Ordering::Equal,
            (None, Some(_)) => return std::cmp::Ordering::Less,
            (Some(_), None) => return std::cmp::Ordering::Greater,
            (Some(s), Some(t)) => {
                let order = match (s.parse::<u64>(), t.parse::<u64>()) {
                    (Ok(m), Ok(n)) => m.cmp(&n),
                    _ => s.cmp(t),
                };
                if order != std::cmp::Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

/// A superset description of a schema's instances, for `oneOf` disjointness.
#[derive(Debug)]
struct Summary<'a> {
    types: Types,
    values: Option<Vec<&'a Value>>,
    /// Required properties with a fixed value.
    tags: Vec<(&'a str, &'a Value)>,
    /// Required properties.
    required: Vec<&'a str>,
    /// Properties whose schema is `false`.
    false_props: Vec<&'a str>,
    /// Locations with `additionalProperties: false` and no `patternProperties`: their
    /// declared names.
    closed: Vec<Vec<&'a str>>,
}

impl Summary<'_> {
    /// Whether an object with property `name` fails this schema.
    fn forbids(&self, name: &str) -> bool {
        self.false_props.contains(&name) || self.closed.iter().any(|d| !d.contains(&name))
    }
}

impl Summary<'_> {
    /// Whether no instance of a type in `context` meets both.
    fn disjoint(&self, other: &Summary<'_>, context: Types) -> bool {
        let common = self.types & other.types & context;
        if common == 0 {
            return true;
        }
        if let (Some(a), Some(b)) = (&self.values, &other.values) {
            if !a.iter().any(|x| b.iter().any(|y| json_eq(x, y))) {
                return true;
            }
        }
        // Tags (required properties with a fixed value) only say something about objects:
        // any other instance meets `required` and `properties` vacuously.
        if common != OBJECT {
            return false;
        }
        for (name, value) in &self.tags {
            for (other_name, other_value) in &other.tags {
                if name == other_name && !json_eq(value, other_value) {
                    return true;
                }
            }
        }
        self.required.iter().any(|k| other.forbids(k))
            || other.required.iter().any(|k| self.forbids(k))
    }
}

/// The pointer of the member `name` of the object at `base`. Unlike [`join_pointer`] (where
/// an empty token means the location itself), an empty name is a member too.
fn member_pointer(base: &str, name: &str) -> String {
    let mut out = join_pointer(base, name);
    if name.is_empty() {
        out.push('/');
    }
    out
}

/// `{"properties": {name: S}}` with nothing else constraining but `required: [name]` and
/// `type: "object"`: the name, whether it is required and whether the type is there.
fn one_property(map: &Map<String, Value>) -> Option<(&str, bool, bool)> {
    let props = get_keyword(map, "properties")?.as_object()?;
    if props.len() != 1 {
        return None;
    }
    let name = props.keys().next()?.as_str();
    let required = match get_keyword(map, "required") {
        None => false,
        Some(Value::Array(names)) if names.len() == 1 && names[0] == name => true,
        Some(_) => return None,
    };
    let typed = match get_keyword(map, "type") {
        None => false,
        Some(t) if t == "object" => true,
        Some(_) => return None,
    };
    map.keys()
        .all(|k| matches!(k.as_str(), "properties" | "required" | "type") || !is_constraining(k))
        .then_some((name, required, typed))
}

/// Why a presence constraint is refused when an object would track too many names.
const TOO_MANY_NAMES: &str = "presence constraints over more than 8 names in one object";

/// A `oneOf` whose branches are all presence formulas, as one formula.
fn presence_one_of<'a>(branches: &'a Value) -> Option<(Formula, Reader<'a>)> {
    let mut reader = Reader::new();
    let formulas = reader.list(branches)?;
    Some((Formula::One(formulas), reader))
}

/// Adds `not` of a presence formula to `presence`; `false` when it is none (or too large).
fn presence_not<'a>(presence: &mut Presence<'a>, negated: &'a Value) -> bool {
    let mut reader = Reader::new();
    match reader.schema(negated) {
        Some(formula) => presence.add(Formula::Not(Box::new(formula)), reader),
        None => false,
    }
}

/// Whether `negated` (the value of a `not`) is `{"not": …}` and nothing else that constrains.
fn double_negation(negated: &Value) -> bool {
    negated.as_object().is_some_and(|map| {
        get_keyword(map, "not").is_some()
            && map
                .keys()
                .all(|k| k == "not" || !CONSTRAINING.contains(&k.as_str()))
    })
}

/// Whether a schema's grammar (compact layout, any property order) rejects `value`'s
/// compact text only when the schema does: the grammar's documented rejected-valid gaps
/// are all about spellings this rules out — numbers it might spell differently from a listed
/// `const`/`enum` value of equal value (`-0.0`, integral values beyond 2^53) and objects of
/// more than `max_members` members (listed object values larger than that keep their own
/// member order).
fn decidable(value: &Value, max_members: usize) -> bool {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    match value {
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.unsigned_abs() <= EXACT as u64,
            (_, Some(u), _) => u <= EXACT as u64,
            (_, _, Some(f)) => f.is_finite() && f != 0.0 && (f.fract() != 0.0 || f.abs() <= EXACT),
            _ => false,
        },
        Value::Array(items) => items.iter().all(|v| decidable(v, max_members)),
        Value::Object(map) => {
            map.len() <= max_members && map.values().all(|v| decidable(v, max_members))
        }
        _ => true,
    }
}

/// A JSON string of any value (quotes included).
pub(crate) fn any_string(escapes: Escapes) -> Expr {
    Expr::seq([
        Expr::bytes(*b"\""),
        Expr::star(any_char(escapes)),
        Expr::bytes(*b"\""),
    ])
}

pub(crate) fn invalid(ptr: &str, keyword: &str, message: &str) -> Error {
    Error::new(ErrorKind::Invalid, ptr, keyword, message)
}

/// The number of schemas in the array `value` of `keyword` (which must be a non-empty array).
fn schema_array(value: &Value, ptr: &str, keyword: &str) -> Result<usize, Error> {
    match value {
        Value::Array(items) if !items.is_empty() => Ok(items.len()),
        _ => Err(invalid(
            ptr,
            keyword,
            "must be a non-empty array of schemas",
        )),
    }
}

/// A non-negative integer keyword value.
pub(crate) fn non_negative(value: &Value, ptr: &str, keyword: &str) -> Result<u64, Error> {
    if let Some(n) = value.as_u64() {
        return Ok(n);
    }
    if let Some(f) = value.as_f64() {
        if f >= 0.0 && f.fract() == 0.0 {
            return Ok(if f >= u64::MAX as f64 {
                u64::MAX
            } else {
                f as u64
            });
        }
    }
    Err(invalid(ptr, keyword, "must be a non-negative integer"))
}

/// The `type` keyword as a set of types.
fn parse_types(value: &Value, ptr: &str) -> Result<Types, Error> {
    let one = |name: &str| -> Result<Types, Error> {
        Ok(match name {
            "null" => NULL,
            "boolean" => BOOLEAN,
            "object" => OBJECT,
            "array" => ARRAY,
            "string" => STRING,
            "integer" => INTEGER,
            "number" => NUMBER,
            _ => return Err(invalid(ptr, "type", &format!("unknown type `{name}`"))),
        })
    };
    match value {
        Value::String(name) => one(name),
        Value::Array(names) => {
            let mut types = 0;
            for name in names {
                let Some(name) = name.as_str() else {
                    return Err(invalid(
                        ptr,
                        "type",
                        "must be a string or an array of strings",
                    ));
                };
                types |= one(name)?;
            }
            Ok(types)
        }
        _ => Err(invalid(
            ptr,
            "type",
            "must be a string or an array of strings",
        )),
    }
}

/// The type of a JSON value (`1.0` is an integer, as JSON Schema says).
pub(crate) fn value_types(value: &Value) -> Types {
    match value {
        Value::Null => NULL,
        Value::Bool(_) => BOOLEAN,
        Value::Object(_) => OBJECT,
        Value::Array(_) => ARRAY,
        Value::String(_) => STRING,
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) {
                INTEGER
            } else {
                FRACTION
            }
        }
    }
}

/// The least common multiple of two positive integers (`None` on overflow): an integer is a
/// multiple of both exactly when it is a multiple of it.
fn lcm(a: u64, b: u64) -> Option<u64> {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    (a / x).checked_mul(b)
}

fn json_eq_number(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    match (a.as_i64(), b.as_i64(), a.as_u64(), b.as_u64()) {
        (Some(x), Some(y), _, _) => x == y,
        (_, _, Some(x), Some(y)) => x == y,
        _ => a.as_f64() == b.as_f64(),
    }
}

/// JSON Schema equality: numbers by value, objects regardless of member order.
pub(crate) fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => json_eq_number(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}
