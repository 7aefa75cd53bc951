//! Grammars: a list of named rules and a root.

use std::fmt::Write;

use foldhash::HashMap;

use serde::{Deserialize, Serialize};

use crate::{Expr, IrError, RuleId};

/// A named rule.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Rule {
    name: String,
    body: Expr,
    /// The most tokens one occurrence of the rule may span (see [`Rule::max_tokens`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    /// Whether the rule stays one rule (see [`Rule::is_shared`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    shared: bool,
}

impl Rule {
    /// The rule's name, unique in its grammar.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The rule's body.
    pub fn body(&self) -> &Expr {
        &self.body
    }

    /// The *token limit* of the rule: every occurrence of it in an output spans at most this
    /// many tokens, counting each token that holds at least one of its bytes (so an empty
    /// occurrence spans none, and the token that holds its last byte counts even when it goes
    /// on past it). XGrammar's `max_tokens` on rules and `any_text`, llguidance's lexeme
    /// `max_tokens`. At least 1; only the runtime's token-level matchers enforce it (a byte
    /// string has no tokens), and the rule's language must be regular.
    pub fn max_tokens(&self) -> Option<u32> {
        self.max_tokens
    }

    /// Whether the rule is *shared*: a front-end that refers to one regular rule from many
    /// places asks normalisation to keep it as one rule, never copied into its callers (a
    /// JSON Schema's string tail after a key's first character, reached from every node of
    /// the declared names' trie). Like a limited rule, its language must be regular; the
    /// hint changes no language, only how many automata carry it.
    pub fn is_shared(&self) -> bool {
        self.shared
    }
}

/// A grammar over bytes: rules whose bodies are [`Expr`]s, and the root rule whose language is
/// the grammar's.
///
/// Invariants (checked by [`crate::verify::verify`], which [`GrammarBuilder::build`] and
/// deserialisation run, and [`Grammar::from_rewrite`] in debug builds): rule names are unique
/// and non-empty, every reference names a rule of this grammar, the root is one of its rules,
/// and every expression keeps the invariants listed in [`crate::expr`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "RawGrammar")]
pub struct Grammar {
    rules: Vec<Rule>,
    root: RuleId,
}

#[derive(Deserialize)]
struct RawGrammar {
    rules: Vec<Rule>,
    root: RuleId,
}

impl TryFrom<RawGrammar> for Grammar {
    type Error = IrError;

    fn try_from(raw: RawGrammar) -> Result<Grammar, IrError> {
        let grammar = Grammar {
            rules: raw.rules,
            root: raw.root,
        };
        crate::verify::verify(&grammar)
            .map_err(|problems| IrError::Invalid(problems.join("; ")))?;
        Ok(grammar)
    }
}

impl Grammar {
    /// The rules, indexed by [`RuleId::index`].
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The rule with the given id.
    ///
    /// # Panics
    /// When `id` is not from this grammar.
    pub fn rule(&self, id: RuleId) -> &Rule {
        &self.rules[id.index()]
    }

    /// The root rule.
    pub fn root(&self) -> RuleId {
        self.root
    }

    /// Every rule id, ascending.
    pub fn rule_ids(&self) -> impl ExactSizeIterator<Item = RuleId> + '_ {
        (0..self.rules.len()).map(|i| RuleId::new(i).expect("checked when built"))
    }

    /// The rule with the given name.
    pub fn lookup(&self, name: &str) -> Option<RuleId> {
        self.rules
            .iter()
            .position(|r| r.name == name)
            .and_then(RuleId::new)
    }

    /// The total number of expression nodes over all rules.
    pub fn size(&self) -> usize {
        self.rules.iter().map(|r| r.body.size()).sum()
    }

    /// The rules each rule references directly (sorted, without repeats), indexed by rule.
    pub fn references(&self) -> Vec<Vec<RuleId>> {
        self.rules
            .iter()
            .map(|rule| {
                let mut refs = Vec::new();
                rule.body.for_each_ref(&mut |id| refs.push(id));
                refs.sort();
                refs.dedup();
                refs
            })
            .collect()
    }

    /// The rules as `(name, body)` pairs in id order, and the root: the inverse of
    /// [`Grammar::from_rewrite`], for passes that rewrite bodies in place instead of copying them.
    pub fn into_rewrite(self) -> (Vec<(String, Expr)>, RuleId) {
        let rules = self
            .rules
            .into_iter()
            .map(|rule| (rule.name, rule.body))
            .collect();
        (rules, self.root)
    }

    /// A grammar from the rules of a rewrite, for passes that rebuild whole grammars many
    /// times. Expression invariants hold by construction (expressions are only made through
    /// their constructors) and the caller keeps names unique, so only what a faulty rewrite
    /// could break cheaply is checked always: every reference and the root name one of the
    /// rules. Debug builds run the whole verifier. Anything built from outside input goes
    /// through [`GrammarBuilder`], which always does.
    pub fn from_rewrite(rules: Vec<(String, Expr)>, root: RuleId) -> Result<Grammar, IrError> {
        let count = rules.len();
        let mut dangling = None;
        for (name, body) in &rules {
            body.for_each_ref(&mut |r| {
                if r.index() >= count {
                    dangling.get_or_insert_with(|| name.clone());
                }
            });
        }
        if let Some(name) = dangling {
            return Err(IrError::Invalid(format!(
                "rule `{name}` refers to a rule that does not exist"
            )));
        }
        Grammar::from_checked_rewrite(rules, root)
    }

    /// [`Grammar::from_rewrite`] for a caller that has just seen every reference of `rules`
    /// name one of them (a pass whose reachability walk over the rewrite checks each one), so
    /// the references are not walked again: only the root is checked. Debug builds run the
    /// whole verifier.
    pub fn from_checked_rewrite(
        rules: Vec<(String, Expr)>,
        root: RuleId,
    ) -> Result<Grammar, IrError> {
        let count = rules.len();
        if root.index() >= count {
            return Err(IrError::Invalid(format!(
                "the root is rule {} of {count}",
                root.index()
            )));
        }
        let grammar = Grammar {
            rules: rules
                .into_iter()
                .map(|(name, body)| Rule {
                    name,
                    body,
                    max_tokens: None,
                    shared: false,
                })
                .collect(),
            root,
        };
        if cfg!(debug_assertions) {
            crate::verify::verify(&grammar)
                .map_err(|problems| IrError::Invalid(problems.join("; ")))?;
        }
        Ok(grammar)
    }

    /// A builder holding this grammar's rules, to derive a new grammar from it.
    pub fn to_builder(&self) -> GrammarBuilder {
        let mut builder = GrammarBuilder::new();
        for rule in &self.rules {
            let id = builder
                .declare(&rule.name)
                .expect("names are unique in a verified grammar");
            builder.define(id, rule.body.clone());
            if let Some(limit) = rule.max_tokens {
                builder.limit_tokens(id, limit);
            }
            if rule.shared {
                builder.share(id);
            }
        }
        builder
    }

    /// The rules with a token limit ([`Rule::max_tokens`]), with their limits, in id order.
    pub fn token_limits(&self) -> impl Iterator<Item = (RuleId, u32)> + '_ {
        self.rule_ids()
            .zip(&self.rules)
            .filter_map(|(id, rule)| rule.max_tokens.map(|limit| (id, limit)))
    }

    /// The shared rules ([`Rule::is_shared`]), in id order.
    pub fn shared_rules(&self) -> impl Iterator<Item = RuleId> + '_ {
        self.rule_ids()
            .zip(&self.rules)
            .filter_map(|(id, rule)| rule.shared.then_some(id))
    }

    /// Gives rule `id` the token limit `limit` (or removes it): for passes that rebuild a
    /// grammar and put back what they set aside.
    ///
    /// # Panics
    /// When `id` is not from this grammar, or `limit` is `Some(0)`.
    pub fn set_token_limit(&mut self, id: RuleId, limit: Option<u32>) {
        assert_ne!(limit, Some(0), "a token limit is at least 1");
        self.rules[id.index()].max_tokens = limit;
    }
}

/// Builds a [`Grammar`]: declare rules (so bodies can reference rules defined later), define
/// their bodies, then [`GrammarBuilder::build`] with the root.
#[derive(Clone, Debug, Default)]
pub struct GrammarBuilder {
    names: Vec<String>,
    bodies: Vec<Option<Expr>>,
    limits: Vec<Option<u32>>,
    shared: Vec<bool>,
    by_name: HashMap<String, RuleId>,
    fresh_names: FreshNames,
}

/// Fresh names derived from a base: `base` itself, else `base_1`, `base_2`, … — the first one
/// not taken. A cursor per base remembers where the last search ended (every smaller suffix
/// was taken, and names are never given back), so many calls with one base stay linear
/// instead of rescanning from `base_1` each time.
#[derive(Clone, Debug, Default)]
pub struct FreshNames {
    next_suffix: HashMap<String, usize>,
}

impl FreshNames {
    /// The first name derived from `base` for which `taken` is false.
    pub fn next(&mut self, base: &str, taken: impl Fn(&str) -> bool) -> String {
        if !taken(base) {
            return base.to_owned();
        }
        let n = match self.next_suffix.get_mut(base) {
            Some(n) => n,
            None => self.next_suffix.entry(base.to_owned()).or_insert(1),
        };
        let mut name = String::with_capacity(base.len() + 4);
        loop {
            name.clear();
            // Writing into a `String` cannot fail.
            let _ = write!(name, "{base}_{n}");
            *n += 1;
            if !taken(&name) {
                return name;
            }
        }
    }
}

impl GrammarBuilder {
    /// An empty builder.
    pub fn new() -> GrammarBuilder {
        GrammarBuilder::default()
    }

    /// Declares a rule named `name`; fails if the name is taken.
    pub fn declare(&mut self, name: &str) -> Result<RuleId, IrError> {
        if self.by_name.contains_key(name) {
            return Err(IrError::DuplicateRule(name.to_owned()));
        }
        self.declare_untaken(name.to_owned())
    }

    /// Declares a rule named `name` if no rule has that name, else one with a fresh name
    /// derived from it (as [`GrammarBuilder::fresh`]).
    pub fn declare_or_fresh(&mut self, name: String) -> Result<RuleId, IrError> {
        if self.by_name.contains_key(&name) {
            return self.fresh(&name);
        }
        self.declare_untaken(name)
    }

    /// Declares a rule named `name`, which no rule has.
    fn declare_untaken(&mut self, name: String) -> Result<RuleId, IrError> {
        let id = RuleId::new(self.names.len()).ok_or(IrError::TooManyRules)?;
        self.names.push(name.clone());
        self.bodies.push(None);
        self.limits.push(None);
        self.shared.push(false);
        self.by_name.insert(name, id);
        Ok(id)
    }

    /// Declares a rule with a new name derived from `base` (`base`, or `base_1`, `base_2`, …).
    pub fn fresh(&mut self, base: &str) -> Result<RuleId, IrError> {
        let by_name = &self.by_name;
        let name = self
            .fresh_names
            .next(base, |name| by_name.contains_key(name));
        self.declare_untaken(name)
    }

    /// Sets (or replaces) the body of a declared rule.
    ///
    /// # Panics
    /// When `id` was not declared by this builder.
    pub fn define(&mut self, id: RuleId, body: Expr) {
        self.bodies[id.index()] = Some(body);
    }

    /// Gives a declared rule a token limit ([`Rule::max_tokens`]; at least 1, which
    /// [`GrammarBuilder::build`] checks).
    ///
    /// # Panics
    /// When `id` was not declared by this builder.
    pub fn limit_tokens(&mut self, id: RuleId, max_tokens: u32) {
        self.limits[id.index()] = Some(max_tokens);
    }

    /// Marks a declared rule shared ([`Rule::is_shared`]).
    ///
    /// # Panics
    /// When `id` was not declared by this builder.
    pub fn share(&mut self, id: RuleId) {
        self.shared[id.index()] = true;
    }

    /// Whether a declared rule is marked shared ([`GrammarBuilder::share`]).
    ///
    /// # Panics
    /// When `id` was not declared by this builder.
    pub fn is_shared(&self, id: RuleId) -> bool {
        self.shared[id.index()]
    }

    /// Copies every rule of `grammar` in, under fresh names derived from `{base}_{name}`, with
    /// its marks ([`Rule::max_tokens`], [`Rule::is_shared`]) and its references renamed to the
    /// copies; returns the copy of `grammar`'s root. For front-ends that embed a grammar
    /// compiled on its own (a JSON Schema inside a structural tag or a Lark grammar).
    ///
    /// A shared rule that refers to no rule names a fixed language; when the builder already
    /// has a defined shared rule without references with the same body and token limit (the
    /// whitespace of an earlier embedded schema), references go to that rule instead of a
    /// copy, so a hundred embedded schemas bring one whitespace rule, not a hundred.
    pub fn import(&mut self, grammar: &Grammar, base: &str) -> Result<RuleId, IrError> {
        let (ids, copied) = self.import_names(grammar, base)?;
        for ((rule, &id), copy) in grammar.rules.iter().zip(&ids).zip(copied) {
            if copy {
                self.define_imported(id, rule.body.clone(), rule.max_tokens, rule.shared, &ids);
            }
        }
        Ok(ids[grammar.root.index()])
    }

    /// [`GrammarBuilder::import`] for a grammar the caller no longer needs: its bodies are
    /// moved in rather than copied.
    pub fn import_owned(&mut self, grammar: Grammar, base: &str) -> Result<RuleId, IrError> {
        let (ids, copied) = self.import_names(&grammar, base)?;
        let root = ids[grammar.root.index()];
        for ((rule, &id), copy) in grammar.rules.into_iter().zip(&ids).zip(copied) {
            if copy {
                let Rule {
                    body,
                    max_tokens,
                    shared,
                    ..
                } = rule;
                self.define_imported(id, body, max_tokens, shared, &ids);
            }
        }
        Ok(root)
    }

    /// The builder's rule for each rule of `grammar` (an equal shared rule it already has, or
    /// a fresh declaration), and whether each is a copy to define.
    fn import_names(
        &mut self,
        grammar: &Grammar,
        base: &str,
    ) -> Result<(Vec<RuleId>, Vec<bool>), IrError> {
        let mut ids = Vec::with_capacity(grammar.rules.len());
        let mut copied = Vec::with_capacity(grammar.rules.len());
        for rule in &grammar.rules {
            match self.equal_shared_rule(rule) {
                Some(id) => {
                    ids.push(id);
                    copied.push(false);
                }
                None => {
                    ids.push(self.fresh(&format!("{base}_{}", rule.name))?);
                    copied.push(true);
                }
            }
        }
        Ok((ids, copied))
    }

    /// Defines `id`, the copy of an imported rule, with its body (references renamed by `ids`)
    /// and its marks.
    fn define_imported(
        &mut self,
        id: RuleId,
        mut body: Expr,
        max_tokens: Option<u32>,
        shared: bool,
        ids: &[RuleId],
    ) {
        body.rename_refs(&mut |r| ids[r.index()]);
        self.define(id, body);
        self.limits[id.index()] = max_tokens;
        self.shared[id.index()] = shared;
    }

    /// A defined shared rule of this builder without references whose body and token limit
    /// are `rule`'s, when `rule` is shared and refers to no rule.
    fn equal_shared_rule(&self, rule: &Rule) -> Option<RuleId> {
        if !rule.shared || rule.body.ref_count() > 0 {
            return None;
        }
        (0..self.names.len())
            .filter(|&i| self.shared[i] && self.limits[i] == rule.max_tokens)
            .find(|&i| self.bodies[i].as_ref() == Some(&rule.body))
            .and_then(RuleId::new)
    }

    /// The id of the rule named `name`.
    pub fn lookup(&self, name: &str) -> Option<RuleId> {
        self.by_name.get(name).copied()
    }

    /// The name of a declared rule.
    pub fn name(&self, id: RuleId) -> &str {
        &self.names[id.index()]
    }

    /// The body of a declared rule, if defined yet.
    pub fn body(&self, id: RuleId) -> Option<&Expr> {
        self.bodies[id.index()].as_ref()
    }

    /// The number of rules declared so far.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no rule is declared yet.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Finishes the grammar with the given root; every declared rule must have a body, and the
    /// result must pass the verifier (construction already keeps the node invariants, so only
    /// the root, names, token limits and references are checked here; debug builds check all).
    pub fn build(self, root: RuleId) -> Result<Grammar, IrError> {
        let mut rules = Vec::with_capacity(self.names.len());
        let attributes = self.limits.into_iter().zip(self.shared);
        for ((name, body), (max_tokens, shared)) in
            self.names.into_iter().zip(self.bodies).zip(attributes)
        {
            match body {
                Some(body) => rules.push(Rule {
                    name,
                    body,
                    max_tokens,
                    shared,
                }),
                None => return Err(IrError::UndefinedRule(name)),
            }
        }
        let grammar = Grammar { rules, root };
        crate::verify::verify_assembled(&grammar)
            .map_err(|problems| IrError::Invalid(problems.join("; ")))?;
        Ok(grammar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Grammar {
        let mut b = GrammarBuilder::new();
        let root = b.declare("root").unwrap();
        let item = b.declare("item").unwrap();
        b.define(root, Expr::plus(Expr::rule(item)));
        b.define(item, Expr::bytes("ab"));
        b.build(root).unwrap()
    }

    #[test]
    fn rewrites_are_checked_for_dangling_references() {
        let ok = Grammar::from_rewrite(
            vec![
                ("root".into(), Expr::rule(RuleId::new(1).unwrap())),
                ("item".into(), Expr::bytes("a")),
            ],
            RuleId::new(0).unwrap(),
        );
        assert_eq!(ok.unwrap(), sample_pair());
        let dangling = Grammar::from_rewrite(
            vec![("root".into(), Expr::rule(RuleId::new(1).unwrap()))],
            RuleId::new(0).unwrap(),
        );
        assert!(matches!(dangling, Err(IrError::Invalid(m)) if m.contains("`root`")));
        let no_root = Grammar::from_rewrite(
            vec![("r".into(), Expr::bytes("a"))],
            RuleId::new(1).unwrap(),
        );
        assert!(no_root.is_err());
        let no_root = Grammar::from_checked_rewrite(
            vec![("r".into(), Expr::bytes("a"))],
            RuleId::new(1).unwrap(),
        );
        assert!(no_root.is_err());
    }

    fn sample_pair() -> Grammar {
        let mut b = GrammarBuilder::new();
        let root = b.declare("root").unwrap();
        let item = b.declare("item").unwrap();
        b.define(root, Expr::rule(item));
        b.define(item, Expr::bytes("a"));
        b.build(root).unwrap()
    }

    #[test]
    fn fresh_names_take_the_smallest_free_suffix() {
        let mut b = GrammarBuilder::new();
        b.declare("r").unwrap();
        b.declare("r_2").unwrap();
        let names: Vec<String> = (0..3)
            .map(|_| {
                let id = b.fresh("r").unwrap();
                b.name(id).to_owned()
            })
            .collect();
        assert_eq!(names, ["r_1", "r_3", "r_4"]);
        let id = b.fresh("s").unwrap();
        assert_eq!(b.name(id), "s");
    }

    #[test]
    fn builder_rejects_duplicates_and_undefined_rules() {
        let mut b = GrammarBuilder::new();
        let root = b.declare("root").unwrap();
        assert_eq!(
            b.declare("root"),
            Err(IrError::DuplicateRule("root".into()))
        );
        b.declare("missing").unwrap();
        b.define(root, Expr::bytes("x"));
        assert_eq!(b.build(root), Err(IrError::UndefinedRule("missing".into())));
    }

    #[test]
    fn fresh_names_are_unique() {
        let mut b = GrammarBuilder::new();
        let a = b.fresh("x").unwrap();
        let c = b.fresh("x").unwrap();
        let d = b.fresh("x").unwrap();
        assert_eq!((b.name(a), b.name(c), b.name(d)), ("x", "x_1", "x_2"));
    }

    #[test]
    fn serde_round_trip_and_verification() {
        let grammar = sample();
        let json = serde_json::to_string(&grammar).unwrap();
        let back: Grammar = serde_json::from_str(&json).unwrap();
        assert_eq!(back, grammar);
        let dangling = json.replace(r#"{"Ref":1}"#, r#"{"Ref":7}"#);
        assert_ne!(dangling, json);
        assert!(serde_json::from_str::<Grammar>(&dangling).is_err());
    }

    /// The shared mark goes through the builder, `to_builder`, the text form and serde, and
    /// a grammar without one serialises as before (no `shared` field).
    #[test]
    fn shared_rules_keep_their_mark() {
        let plain = sample();
        assert_eq!(plain.shared_rules().count(), 0);
        assert!(!serde_json::to_string(&plain).unwrap().contains("shared"));
        let mut b = plain.to_builder();
        let item = b.lookup("item").unwrap();
        b.share(item);
        let grammar = b.build(plain.root()).unwrap();
        assert_eq!(grammar.shared_rules().collect::<Vec<_>>(), [item]);
        assert!(grammar.rule(item).is_shared());
        assert!(
            grammar.to_string().contains("item[shared] ::= \"ab\""),
            "{grammar}"
        );
        let again = grammar.to_builder().build(grammar.root()).unwrap();
        assert_eq!(again, grammar);
        let json = serde_json::to_string(&grammar).unwrap();
        assert_eq!(serde_json::from_str::<Grammar>(&json).unwrap(), grammar);
    }

    /// [`sample`] with its `item` rule shared and limited to 3 tokens: a grammar to import.
    fn marked_sample() -> Grammar {
        let mut inner = sample().to_builder();
        let item = inner.lookup("item").unwrap();
        inner.share(item);
        inner.limit_tokens(item, 3);
        inner.build(sample().root()).unwrap()
    }

    /// Moving a grammar in gives the host what copying it in gives, names, marks and shared
    /// rules met again included.
    #[test]
    fn import_owned_builds_what_import_builds() {
        let inner = marked_sample();
        let host = |owned: bool| {
            let mut host = GrammarBuilder::new();
            let taken = host.declare("json_item").unwrap();
            host.define(taken, Expr::bytes("x"));
            let first = host.import(&inner, "json").unwrap();
            // The second import meets the first one's names and its shared rule.
            let second = if owned {
                host.import_owned(inner.clone(), "json").unwrap()
            } else {
                host.import(&inner, "json").unwrap()
            };
            let root = host.declare("host").unwrap();
            host.define(
                root,
                Expr::seq([Expr::rule(first), Expr::rule(second), Expr::rule(taken)]),
            );
            host.build(root).unwrap()
        };
        assert_eq!(host(true), host(false));
    }

    /// An imported grammar keeps its structure and its marks under fresh names, beside the
    /// host's rules.
    #[test]
    fn import_renames_rules_and_keeps_their_marks() {
        let inner = marked_sample();

        let mut host = GrammarBuilder::new();
        let taken = host.declare("json_item").unwrap();
        host.define(taken, Expr::bytes("x"));
        let copy = host.import(&inner, "json").unwrap();
        let root = host.declare("host").unwrap();
        host.define(root, Expr::seq([Expr::rule(copy), Expr::rule(taken)]));
        let grammar = host.build(root).unwrap();

        assert_eq!(grammar.rule(copy).name(), "json_root");
        let item_copy = grammar.lookup("json_item_1").unwrap();
        assert_eq!(
            grammar.rule(copy).body(),
            &Expr::plus(Expr::rule(item_copy))
        );
        assert!(grammar.rule(item_copy).is_shared());
        assert_eq!(grammar.rule(item_copy).max_tokens(), Some(3));
        assert!(!grammar.rule(taken).is_shared());
    }

    /// A shared rule without references that the builder already has (an earlier import's)
    /// is referred to, not copied again; other rules, and shared rules with references or a
    /// different token limit, are copied.
    #[test]
    fn import_reuses_equal_shared_rules_without_references() {
        let embedded = |limit: Option<u32>| {
            let mut b = GrammarBuilder::new();
            let ws = b.declare("ws").unwrap();
            b.define(ws, Expr::plus(Expr::bytes(" ")));
            b.share(ws);
            if let Some(k) = limit {
                b.limit_tokens(ws, k);
            }
            let list = b.declare("list").unwrap();
            b.define(
                list,
                Expr::seq([
                    Expr::bytes("["),
                    Expr::optional(Expr::rule(ws)),
                    Expr::bytes("]"),
                ]),
            );
            b.share(list);
            let root = b.declare("root").unwrap();
            b.define(root, Expr::seq([Expr::rule(list), Expr::rule(ws)]));
            b.build(root).unwrap()
        };
        let mut host = GrammarBuilder::new();
        let first = host.import(&embedded(None), "a").unwrap();
        let second = host.import(&embedded(None), "b").unwrap();
        let limited = host.import(&embedded(Some(4)), "c").unwrap();
        let root = host.declare("host").unwrap();
        host.define(
            root,
            Expr::seq([Expr::rule(first), Expr::rule(second), Expr::rule(limited)]),
        );
        let grammar = host.build(root).unwrap();
        let names: Vec<&str> = grammar.rules().iter().map(|r| r.name()).collect();
        assert_eq!(
            names,
            ["a_ws", "a_list", "a_root", "b_list", "b_root", "c_ws", "c_list", "c_root", "host"]
        );
        let ws = grammar.lookup("a_ws").unwrap();
        assert_eq!(
            grammar.rule(grammar.lookup("b_root").unwrap()).body(),
            &Expr::seq([
                Expr::rule(grammar.lookup("b_list").unwrap()),
                Expr::rule(ws)
            ])
        );
        assert_eq!(
            grammar.rule(grammar.lookup("c_ws").unwrap()).max_tokens(),
            Some(4)
        );
    }

    #[test]
    fn references_are_sorted_and_unique() {
        let grammar = sample();
        assert_eq!(grammar.references()[0], vec![RuleId::new(1).unwrap()]);
        assert!(grammar.references()[1].is_empty());
        assert_eq!(grammar.lookup("item"), RuleId::new(1));
    }
}
