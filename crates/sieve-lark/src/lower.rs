//! The AST to sieve's IR: names resolved (`%import common.…` against the shipped
//! `common.lark`), terminals and rules lowered, `%ignore` threaded before every lexeme.
//!
//! What each construct becomes (the semantics are written down in `docs/lark.md`):
//! - a rule becomes a rule; `?rule`, `!rule`, `_rule` and `-> alias` only shape Lark's trees;
//! - a terminal becomes a rule whose body references only other terminals (the IR passes
//!   inline them into one automaton); string literals and `/regex/`s in rules are anonymous
//!   terminals;
//! - with `%ignore`, a rule `__ignore ::= (I₁ | I₂ | …)*` is put before every lexeme used in a
//!   rule (terminal references, literals, regexes, lexeme rules) and after the start rule, so
//!   ignored text may come between any two lexemes and at both ends, never inside one;
//! - `&`, `~`, `[lazy]` and `[suffix=…]` go through byte automata (`dfa.rs`).
//!
//! Invariants: every error is located in the text (errors inside the shipped `common.lark`
//! point at the `%import` that brought the definition in); name errors are collected, not
//! stopped at; only definitions reachable from `start` and `%ignore` are lowered; nothing
//! recurses over user input except along the AST, whose depth the parser bounds.

use foldhash::{HashMap, HashSet};
use sieve_diagnostics::Span;
use sieve_ir::{ByteClass, Expr, Grammar, GrammarBuilder, IrError, RuleId};

use crate::ast::{is_terminal_name, Def, Expr as AstExpr, ExprKind, File, Item};
use crate::dfa::{Dfa, DfaError, Env};
use crate::error::{Error, ErrorKind, Errors};
use crate::json;
use crate::Options;

/// Which file a definition comes from: names in its body resolve there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ns {
    User,
    Common,
}

/// A definition to lower.
struct Entry<'a> {
    def: &'a Def,
    ns: Ns,
    /// Where errors in the definition point: the definition's name, or the `%import`.
    at: Option<Span>,
    id: Option<RuleId>,
}

/// The facts and variants of [`Lowerer::without_leading_ignore`].
struct First {
    /// Per rule: can it derive no lexeme?
    zero: HashMap<usize, bool>,
    /// Per rule: can it derive a lexeme?
    has: HashMap<usize, bool>,
    /// The `R°` variants declared so far.
    variants: HashMap<usize, RuleId>,
    /// Variants declared but not yet defined.
    pending: Vec<usize>,
}

impl First {
    fn zero_of_expr(&self, e: &AstExpr, ns: Ns, l: &Lowerer<'_>) -> bool {
        match &e.kind {
            ExprKind::Choice(xs) => xs.iter().any(|x| self.zero_of_expr(x, ns, l)),
            ExprKind::Seq(xs) => xs.iter().all(|x| self.zero_of_expr(x, ns, l)),
            ExprKind::Repeat { item, min, max } => {
                *min == 0 || *max == Some(0) || self.zero_of_expr(item, ns, l)
            }
            ExprKind::Name(name) => match l.resolve(name, ns) {
                Some(i) if !l.is_lexeme_def(i) => self.zero.get(&i).copied().unwrap_or(false),
                _ => false,
            },
            _ => false,
        }
    }

    fn has_of_expr(&self, e: &AstExpr, ns: Ns, l: &Lowerer<'_>) -> bool {
        match &e.kind {
            ExprKind::Choice(xs) | ExprKind::Seq(xs) => {
                xs.iter().any(|x| self.has_of_expr(x, ns, l))
            }
            ExprKind::Repeat { item, max, .. } => *max != Some(0) && self.has_of_expr(item, ns, l),
            ExprKind::Name(name) => match l.resolve(name, ns) {
                Some(i) if !l.is_lexeme_def(i) => self.has.get(&i).copied().unwrap_or(false),
                _ => true,
            },
            _ => true,
        }
    }
}

/// Lexeme options on a rule: `[lazy]`, `[suffix=…]`, `[max_tokens=N]`.
struct LexemeOptions<'a> {
    lazy: bool,
    suffix: Option<&'a AstExpr>,
    max_tokens: Option<u32>,
}

pub(crate) struct Lowerer<'a> {
    options: &'a Options,
    builder: GrammarBuilder,
    entries: Vec<Entry<'a>>,
    user: HashMap<&'a str, usize>,
    common: HashMap<&'a str, usize>,
    ignore: Option<RuleId>,
    /// The automata emitted as right-linear rules, by head rule.
    built: HashMap<RuleId, Dfa>,
    errors: Vec<Error>,
    /// Where the current definition's errors point, if not at the expression itself.
    at: Option<Span>,
}

fn ir_error(span: Span, e: IrError) -> Error {
    Error::new(
        ErrorKind::Limit,
        span,
        format!("cannot build the grammar: {e}"),
    )
}

pub(crate) fn lower(file: &File, common: &File, options: &Options) -> Result<Grammar, Errors> {
    let mut l = Lowerer {
        options,
        builder: GrammarBuilder::new(),
        entries: Vec::new(),
        user: HashMap::default(),
        common: HashMap::default(),
        ignore: None,
        built: HashMap::default(),
        errors: Vec::new(),
        at: None,
    };
    for item in &common.items {
        if let Item::Def(def) = item {
            l.common.insert(&def.name.text, l.entries.len());
            l.entries.push(Entry {
                def,
                ns: Ns::Common,
                at: None,
                id: None,
            });
        }
    }
    let mut ignores = Vec::new();
    for item in &file.items {
        match item {
            Item::Def(def) => {
                if l.user.contains_key(def.name.text.as_str()) {
                    l.errors.push(Error::new(
                        ErrorKind::Name,
                        def.name.span,
                        format!("`{}` is defined twice", def.name.text),
                    ));
                    continue;
                }
                l.user.insert(&def.name.text, l.entries.len());
                l.entries.push(Entry {
                    def,
                    ns: Ns::User,
                    at: None,
                    id: None,
                });
            }
            Item::Import(import) => {
                if import.module != ["common"] {
                    l.errors.push(Error::new(
                        ErrorKind::Unsupported,
                        import.span,
                        format!(
                            "only `%import common.NAME` is supported, not imports from `{}`",
                            import.module.join(".")
                        ),
                    ));
                    continue;
                }
                for (name, alias) in &import.names {
                    let Some(&index) = l.common.get(name.text.as_str()) else {
                        l.errors.push(Error::new(
                            ErrorKind::Name,
                            name.span,
                            format!("`common.lark` has no definition `{}`", name.text),
                        ));
                        continue;
                    };
                    if is_terminal_name(&name.text) != is_terminal_name(&alias.text) {
                        l.errors.push(Error::new(
                            ErrorKind::Name,
                            alias.span,
                            "an imported terminal must keep an upper-case name",
                        ));
                        continue;
                    }
                    if l.user.contains_key(alias.text.as_str()) {
                        l.errors.push(Error::new(
                            ErrorKind::Name,
                            alias.span,
                            format!("`{}` is defined twice", alias.text),
                        ));
                        continue;
                    }
                    let def = l.entries[index].def;
                    l.user.insert(&alias.text, l.entries.len());
                    l.entries.push(Entry {
                        def,
                        ns: Ns::Common,
                        at: Some(import.span),
                        id: None,
                    });
                }
            }
            Item::Ignore(expr) => ignores.push(expr),
            Item::Options { json, span } => l.llguidance_options(json, *span),
            Item::Unsupported { directive, span } => l.errors.push(Error::new(
                ErrorKind::Unsupported,
                *span,
                format!("`{directive}` is not supported"),
            )),
        }
    }
    let Some(&start) = l.user.get("start") else {
        l.errors.push(Error::new(
            ErrorKind::Name,
            Span::at(0),
            "the grammar has no `start` rule",
        ));
        return Err(Errors::new(l.errors));
    };
    // Names of user definitions come first so they keep their spelling.
    let reachable = l.reachable(start, &ignores);
    if !l.errors.is_empty() {
        return Err(Errors::new(l.errors));
    }
    l.run(&reachable, &ignores).map_err(Errors::from)?;
    if !l.errors.is_empty() {
        return Err(Errors::new(l.errors));
    }
    finish(l, start, &reachable)
}

fn finish(mut l: Lowerer<'_>, start: usize, reachable: &[usize]) -> Result<Grammar, Errors> {
    let start_id = l.entries[start].id.expect("start is declared");
    let root = if l.ignore.is_some() {
        l.without_leading_ignore(start, reachable)
            .map_err(Errors::from)?
    } else {
        start_id
    };
    l.builder
        .build(root)
        .map_err(|e| Errors::from(ir_error(Span::at(0), e)))
}

impl<'a> Lowerer<'a> {
    fn resolve(&self, name: &str, ns: Ns) -> Option<usize> {
        match ns {
            Ns::User => self.user.get(name).copied(),
            Ns::Common => self.common.get(name).copied(),
        }
    }

    fn span_of(&self, index: usize, span: Span) -> Span {
        self.entries[index].at.unwrap_or(span)
    }

    /// The entries reachable from `start` and the ignored expressions, in discovery order;
    /// reports unknown names and terminals that use rules.
    fn reachable(&mut self, start: usize, ignores: &[&'a AstExpr]) -> Vec<usize> {
        let mut seen = HashSet::default();
        let mut order = Vec::new();
        let mut queue = vec![start];
        seen.insert(start);
        let mut roots: Vec<(&AstExpr, Ns, Option<Span>, bool)> =
            ignores.iter().map(|e| (*e, Ns::User, None, true)).collect();
        let mut i = 0;
        loop {
            while let Some((expr, ns, at, terminal)) = roots.pop() {
                let mut names = Vec::new();
                collect_names(expr, &mut names);
                for (name, span) in names {
                    let shown = at.unwrap_or(span);
                    match self.resolve(&name, ns) {
                        Some(index) => {
                            if terminal && !is_terminal_name(&name) {
                                self.errors.push(Error::new(
                                    ErrorKind::Name,
                                    shown,
                                    format!(
                                        "a terminal cannot use the rule `{name}`: terminals are regular, name it in upper case or make this a rule"
                                    ),
                                ));
                            } else if seen.insert(index) {
                                queue.push(index);
                            }
                        }
                        None => self.errors.push(Error::new(
                            ErrorKind::Name,
                            shown,
                            format!("unknown name `{name}`"),
                        )),
                    }
                }
            }
            if i == queue.len() {
                break;
            }
            let index = queue[i];
            i += 1;
            order.push(index);
            let entry = &self.entries[index];
            let def = entry.def;
            let terminal = is_terminal_name(&def.name.text);
            roots.push((&def.body, entry.ns, entry.at, terminal));
            for attr in &def.attrs {
                if let Some(value) = &attr.value {
                    if attr.name.text == "suffix" || attr.name.text == "stop" {
                        roots.push((value, entry.ns, entry.at, true));
                    }
                }
            }
        }
        order
    }

    fn run(&mut self, reachable: &[usize], ignores: &[&AstExpr]) -> Result<(), Error> {
        // Declare: user names keep their spelling; common definitions get fresh names.
        for &index in reachable {
            let entry = &self.entries[index];
            let name = &entry.def.name.text;
            let span = self.span_of(index, entry.def.name.span);
            let id = match (entry.ns, entry.at) {
                (Ns::Common, None) => self.builder.fresh(&format!("common_{name}")),
                _ => self.builder.fresh(name),
            }
            .map_err(|e| ir_error(span, e))?;
            self.entries[index].id = Some(id);
        }
        for index in self.terminal_order(reachable)? {
            self.definition(index)?;
        }
        // The ignore rule: after the terminals it may use, before the rules that use it.
        if !ignores.is_empty() {
            let mut alts = Vec::new();
            for expr in ignores {
                self.at = None;
                if let Some(e) = self.expr(expr, Ns::User, true)? {
                    alts.push(e);
                }
            }
            if let Some(choice) = Expr::choice(alts) {
                let id = self
                    .builder
                    .fresh("__ignore")
                    .map_err(|e| ir_error(Span::at(0), e))?;
                self.builder.define(id, Expr::star(choice));
                self.ignore = Some(id);
            }
        }
        for &index in reachable {
            if !is_terminal_name(&self.entries[index].def.name.text) {
                self.definition(index)?;
            }
        }
        Ok(())
    }

    /// Terminals in an order where each comes after the terminals it uses (automaton
    /// operations inline the bodies they use, so those must exist first).
    fn terminal_order(&self, reachable: &[usize]) -> Result<Vec<usize>, Error> {
        let terminals: Vec<usize> = reachable
            .iter()
            .copied()
            .filter(|&i| is_terminal_name(&self.entries[i].def.name.text))
            .collect();
        let position: HashMap<usize, usize> =
            terminals.iter().enumerate().map(|(k, &i)| (i, k)).collect();
        let mut users: Vec<Vec<usize>> = vec![Vec::new(); terminals.len()];
        let mut pending = vec![0usize; terminals.len()];
        for (k, &index) in terminals.iter().enumerate() {
            let entry = &self.entries[index];
            let mut names = Vec::new();
            collect_names(&entry.def.body, &mut names);
            let mut deps: Vec<usize> = names
                .iter()
                .filter_map(|(n, _)| self.resolve(n, entry.ns))
                .filter_map(|i| position.get(&i).copied())
                .collect();
            deps.sort_unstable();
            deps.dedup();
            pending[k] = deps.len();
            for d in deps {
                users[d].push(k);
            }
        }
        let mut ready: Vec<usize> = (0..terminals.len()).filter(|&k| pending[k] == 0).collect();
        let mut order = Vec::with_capacity(terminals.len());
        while let Some(k) = ready.pop() {
            order.push(terminals[k]);
            for &u in &users[k] {
                pending[u] -= 1;
                if pending[u] == 0 {
                    ready.push(u);
                }
            }
        }
        if let Some(k) = (0..terminals.len()).find(|&k| pending[k] > 0) {
            let entry = &self.entries[terminals[k]];
            return Err(Error::new(
                ErrorKind::Name,
                self.span_of(terminals[k], entry.def.name.span),
                format!(
                    "the terminal `{}` refers to itself (through other terminals or directly): terminals must be regular; make it a rule (lower-case name)",
                    entry.def.name.text
                ),
            ));
        }
        Ok(order)
    }

    fn definition(&mut self, index: usize) -> Result<(), Error> {
        let entry = &self.entries[index];
        let def = entry.def;
        let ns = entry.ns;
        let id = entry.id.expect("reachable definitions are declared");
        self.at = entry.at;
        if let Some(param) = def.params.first() {
            return Err(self.located(
                ErrorKind::Unsupported,
                param.span,
                "templates (rules with `{parameters}`) are not supported",
            ));
        }
        let terminal = is_terminal_name(&def.name.text);
        let lexeme = self.lexeme_options(def)?;
        let body = if lexeme.lazy || lexeme.suffix.is_some() {
            let Some(body) = self.expr(&def.body, ns, true)? else {
                return Err(self.empty_terminal(def.body.span));
            };
            let body = match lexeme.suffix {
                Some(suffix) => match self.expr(suffix, ns, true)? {
                    Some(s) => Expr::seq([body, s]),
                    None => return Err(self.empty_terminal(suffix.span)),
                },
                None => body,
            };
            let dfa = self.dfa(&body, def.body.span)?.minimize().lazy().minimize();
            let lazy = self.emit(dfa, &def.name.text, def.body.span)?;
            if terminal {
                lazy
            } else {
                self.lexeme(lazy)
            }
        } else {
            match self.expr(&def.body, ns, terminal)? {
                Some(body) => body,
                None => return Err(self.empty_terminal(def.body.span)),
            }
        };
        self.builder.define(id, body);
        if let Some(k) = lexeme.max_tokens {
            self.builder.limit_tokens(id, k);
        }
        Ok(())
    }

    fn lexeme_options(&mut self, def: &'a Def) -> Result<LexemeOptions<'a>, Error> {
        let mut options = LexemeOptions {
            lazy: false,
            suffix: None,
            max_tokens: None,
        };
        for attr in &def.attrs {
            match (attr.name.text.as_str(), &attr.value) {
                ("lazy", None) => options.lazy = true,
                ("suffix", Some(value)) => options.suffix = Some(value),
                // Captures and sampling temperature do not change the language.
                ("capture" | "stop_capture", _) | ("temperature", Some(_)) => {}
                ("stop", _) => {
                    return Err(self.located(
                        ErrorKind::Unsupported,
                        attr.name.span,
                        "`stop=` hides text from the output, which sieve does not do; use `suffix=` (the same language with the suffix kept) or `lazy`",
                    ))
                }
                ("max_tokens", value) => {
                    let limit = value.as_ref().and_then(|value| match &value.kind {
                        ExprKind::Name(n) => n.parse::<u32>().ok().filter(|&k| k >= 1),
                        _ => None,
                    });
                    match limit {
                        Some(k) if options.max_tokens.is_none() => options.max_tokens = Some(k),
                        Some(_) => {
                            return Err(self.located(
                                ErrorKind::Syntax,
                                attr.name.span,
                                "`max_tokens=` is given twice",
                            ))
                        }
                        None => {
                            return Err(self.located(
                                ErrorKind::Syntax,
                                value.as_ref().map_or(attr.name.span, |v| v.span),
                                "`max_tokens=` takes a whole number of tokens, at least 1, as in `name[max_tokens=8]: /[a-z ]+/`",
                            ))
                        }
                    }
                }
                (name, _) => {
                    return Err(self.located(
                        ErrorKind::Unsupported,
                        attr.name.span,
                        format!("unknown or malformed rule attribute `{name}`"),
                    ))
                }
            }
        }
        Ok(options)
    }

    fn located(&self, kind: ErrorKind, span: Span, message: impl Into<String>) -> Error {
        Error::new(kind, self.at.unwrap_or(span), message)
    }

    fn empty_terminal(&self, span: Span) -> Error {
        self.located(
            ErrorKind::Empty,
            span,
            "this matches no text at all, so nothing could ever match it",
        )
    }

    /// `x` as a lexeme used in a rule: preceded by ignored text, if any.
    fn lexeme(&self, x: Expr) -> Expr {
        match self.ignore {
            Some(ignore) => Expr::seq([Expr::rule(ignore), x]),
            None => x,
        }
    }

    fn dfa(&self, expr: &Expr, span: Span) -> Result<Dfa, Error> {
        let env = Env {
            builder: &self.builder,
            built: &self.built,
        };
        Dfa::from_expr(expr, &env, self.options.limits.max_automaton_states)
            .map_err(|e| self.dfa_error(e, span))
    }

    fn dfa_error(&self, e: DfaError, span: Span) -> Error {
        match e {
            DfaError::TooLarge => self.located(
                ErrorKind::Limit,
                span,
                format!(
                    "the automaton for this terminal needs more than {} states (Limits::max_automaton_states)",
                    self.options.limits.max_automaton_states
                ),
            ),
            DfaError::Recursive(id) => self.located(
                ErrorKind::Name,
                span,
                format!("`{}` refers to itself, so it is not regular", self.builder.name(id)),
            ),
        }
    }

    fn emit(&mut self, dfa: Dfa, base: &str, span: Span) -> Result<Expr, Error> {
        let head = self
            .builder
            .fresh(&format!("{}_dfa", base.trim_start_matches('_')))
            .map_err(|e| ir_error(span, e))?;
        if !dfa
            .emit(&mut self.builder, head, base)
            .map_err(|e| ir_error(span, e))?
        {
            return Err(self.empty_terminal(span));
        }
        self.built.insert(head, dfa);
        Ok(Expr::rule(head))
    }

    /// The automaton of a terminal expression; `&` and `~` combine automata directly, so
    /// their operands are never emitted as rules of their own. `None` is the empty language.
    fn term_dfa(&mut self, e: &AstExpr, ns: Ns) -> Result<Option<Dfa>, Error> {
        let limit = self.options.limits.max_automaton_states;
        Ok(match &e.kind {
            ExprKind::And(items) => {
                let mut acc: Option<Dfa> = None;
                for item in items {
                    let Some(d) = self.term_dfa(item, ns)? else {
                        return Ok(None);
                    };
                    acc = Some(match acc {
                        None => d,
                        Some(a) => a
                            .intersect(&d, limit)
                            .map_err(|err| self.dfa_error(err, e.span))?
                            .minimize(),
                    });
                }
                acc
            }
            ExprKind::Not(item) => Some(match self.term_dfa(item, ns)? {
                Some(d) => d.complement(),
                None => Dfa::everything(),
            }),
            _ => match self.expr(e, ns, true)? {
                Some(x) => Some(self.dfa(&x, e.span)?.minimize()),
                None => None,
            },
        })
    }

    /// Lowers an expression; `terminal` says whether it is inside a terminal (where literals
    /// are not lexemes of their own and `&`, `~` are allowed). `None` is the empty language.
    fn expr(&mut self, e: &AstExpr, ns: Ns, terminal: bool) -> Result<Option<Expr>, Error> {
        let lexeme = |l: &Self, x: Expr| if terminal { x } else { l.lexeme(x) };
        Ok(Some(match &e.kind {
            ExprKind::Choice(alts) => {
                let mut out = Vec::with_capacity(alts.len());
                for a in alts {
                    if let Some(x) = self.expr(a, ns, terminal)? {
                        out.push(x);
                    }
                }
                return Ok(Expr::choice(out));
            }
            ExprKind::Seq(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    match self.expr(item, ns, terminal)? {
                        Some(x) => out.push(x),
                        None => return Ok(None),
                    }
                }
                Expr::seq(out)
            }
            ExprKind::Repeat { item, min, max } => match self.expr(item, ns, terminal)? {
                Some(x) => Expr::repeat(x, *min, *max).map_err(|err| {
                    self.located(ErrorKind::Limit, e.span, format!("bad repetition: {err}"))
                })?,
                None if *min == 0 => Expr::empty(),
                None => return Ok(None),
            },
            ExprKind::Name(name) => {
                let index = self.resolve(name, ns).expect("names were resolved");
                let id = self.entries[index]
                    .id
                    .expect("reachable definitions are declared");
                if is_terminal_name(name) {
                    lexeme(self, Expr::rule(id))
                } else {
                    Expr::rule(id)
                }
            }
            ExprKind::Template(name) => {
                return Err(self.located(
                    ErrorKind::Unsupported,
                    e.span,
                    format!("templates (`{name}{{…}}`) are not supported"),
                ))
            }
            ExprKind::Literal { value, insensitive } => {
                let x = if *insensitive {
                    self.regex(&regex_syntax::escape(value), "i", e.span, None)?
                } else {
                    Expr::bytes(value.as_bytes())
                };
                lexeme(self, x)
            }
            ExprKind::Regex {
                pattern,
                pattern_start,
                flags,
            } => {
                let x = self.regex(pattern, flags, e.span, Some(*pattern_start))?;
                lexeme(self, x)
            }
            ExprKind::Range(a, b) => {
                let x = if b.is_ascii() {
                    Expr::class(ByteClass::range(*a as u8, *b as u8)).expect("a non-empty range")
                } else {
                    let pattern = format!("[\\x{{{:x}}}-\\x{{{:x}}}]", *a as u32, *b as u32);
                    self.regex(&pattern, "", e.span, None)?
                };
                lexeme(self, x)
            }
            ExprKind::Json(text) => {
                if terminal {
                    return Err(self.located(
                        ErrorKind::Unsupported,
                        e.span,
                        "`%json` is a rule, not a terminal: use it in a lower-case rule",
                    ));
                }
                let grammar = json::compile(
                    text,
                    &self.options.json,
                    self.options.json_max_whitespace,
                    self.at.unwrap_or(e.span),
                )?;
                self.import(grammar, "json", e.span)?
            }
            ExprKind::StructuredRegex(text) => {
                let x = self.structured_regex(text, e.span)?;
                lexeme(self, x)
            }
            ExprKind::SpecialToken(token) => {
                let set = sieve_ir::token::parse_syntax(token)
                    .map_err(|message| self.located(ErrorKind::Syntax, e.span, message))?;
                let names = self.options.tokens.as_ref().map(|names| &*names.0);
                let x = set.expr(names).map_err(|reason| {
                    self.located(
                        ErrorKind::Token,
                        e.span,
                        format!("token `{token}`: {reason}"),
                    )
                })?;
                lexeme(self, x)
            }
            ExprKind::And(_) | ExprKind::Not(_) => {
                if !terminal {
                    return Err(self.and_not_in_rule(e.span));
                }
                let Some(dfa) = self.term_dfa(e, ns)? else {
                    return Ok(None);
                };
                let base = if matches!(e.kind, ExprKind::And(_)) {
                    "and"
                } else {
                    "not"
                };
                self.emit(dfa, base, e.span)?
            }
        }))
    }

    /// Whether the definition is a lexeme: a terminal, or a rule with lexeme options.
    fn is_lexeme_def(&self, index: usize) -> bool {
        let def = self.entries[index].def;
        is_terminal_name(&def.name.text)
            || def
                .attrs
                .iter()
                .any(|a| a.name.text == "lazy" || a.name.text == "suffix")
    }

    /// The root when `%ignore` is in force: ignored text may only come *between* lexemes
    /// (llguidance), but the lowering put it before every lexeme. So the root is a copy of
    /// `start` in which the first lexeme has no ignored text before it: every rule `R` on the
    /// way to a first lexeme gets a variant `R°` (the derivations of `R` with at least one
    /// lexeme, the first without its prefix), plus ε if `start` can derive no lexeme at all.
    fn without_leading_ignore(
        &mut self,
        start: usize,
        reachable: &[usize],
    ) -> Result<RuleId, Error> {
        let (zero, has) = self.lexeme_facts(reachable);
        let mut first = First {
            zero,
            has,
            variants: HashMap::default(),
            pending: Vec::new(),
        };
        let start_entry = &self.entries[start];
        let start_body = start_entry.def.body.clone();
        let start_ns = start_entry.ns;
        let root = self
            .builder
            .fresh("start_first")
            .map_err(|e| ir_error(Span::at(0), e))?;
        let body = self.first(&start_body, start_ns, &mut first)?;
        let mut alts: Vec<Expr> = body.into_iter().collect();
        if first.zero_of_expr(&start_body, start_ns, self) {
            alts.push(Expr::empty());
        }
        let Some(root_body) = Expr::choice(alts) else {
            return Err(self.empty_terminal(start_body.span));
        };
        self.builder.define(root, root_body);
        while let Some(index) = first.pending.pop() {
            let entry = &self.entries[index];
            let (body, ns) = (&entry.def.body, entry.ns);
            self.at = entry.at;
            let id = first.variants[&index];
            // A rule none of whose derivations has a lexeme is never asked for; should the
            // grammar have unproductive rules, their variant is the rule itself.
            let lowered = match self.first(body, ns, &mut first)? {
                Some(x) => x,
                None => Expr::rule(self.entries[index].id.expect("declared")),
            };
            self.builder.define(id, lowered);
        }
        Ok(root)
    }

    /// For every reachable rule: whether it can derive no lexeme (`zero`), and whether it can
    /// derive one (`has`); least fixpoints.
    fn lexeme_facts(&self, reachable: &[usize]) -> (HashMap<usize, bool>, HashMap<usize, bool>) {
        let mut facts = First {
            zero: reachable.iter().map(|&i| (i, false)).collect(),
            has: reachable.iter().map(|&i| (i, false)).collect(),
            variants: HashMap::default(),
            pending: Vec::new(),
        };
        loop {
            let mut changed = false;
            for &index in reachable {
                if self.is_lexeme_def(index) {
                    continue;
                }
                let entry = &self.entries[index];
                let z = facts.zero_of_expr(&entry.def.body, entry.ns, self);
                let h = facts.has_of_expr(&entry.def.body, entry.ns, self);
                if z && !facts.zero[&index] {
                    facts.zero.insert(index, true);
                    changed = true;
                }
                if h && !facts.has[&index] {
                    facts.has.insert(index, true);
                    changed = true;
                }
            }
            if !changed {
                return (facts.zero, facts.has);
            }
        }
    }

    /// The derivations of `e` with at least one lexeme, the first without ignored text
    /// before it; `None` if there are none.
    fn first(&mut self, e: &AstExpr, ns: Ns, f: &mut First) -> Result<Option<Expr>, Error> {
        Ok(match &e.kind {
            ExprKind::Choice(alts) => {
                let mut out = Vec::new();
                for a in alts {
                    if let Some(x) = self.first(a, ns, f)? {
                        out.push(x);
                    }
                }
                Expr::choice(out)
            }
            ExprKind::Seq(items) => {
                let mut out = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    if let Some(head) = self.first(item, ns, f)? {
                        let mut seq = vec![head];
                        let mut alive = true;
                        for rest in &items[i + 1..] {
                            match self.expr(rest, ns, false)? {
                                Some(x) => seq.push(x),
                                None => alive = false,
                            }
                        }
                        if alive {
                            out.push(Expr::seq(seq));
                        }
                    }
                    if !f.zero_of_expr(item, ns, self) {
                        break;
                    }
                }
                Expr::choice(out)
            }
            ExprKind::Repeat { item, min, max } => {
                if *max == Some(0) {
                    return Ok(None);
                }
                let Some(head) = self.first(item, ns, f)? else {
                    return Ok(None);
                };
                let Some(rest) = self.expr(item, ns, false)? else {
                    return Ok(Some(head));
                };
                let rest = Expr::repeat(rest, min.saturating_sub(1), max.map(|m| m - 1)).map_err(
                    |err| self.located(ErrorKind::Limit, e.span, format!("bad repetition: {err}")),
                )?;
                Some(Expr::seq([head, rest]))
            }
            ExprKind::Name(name) => {
                let index = self.resolve(name, ns).expect("names were resolved");
                if self.is_lexeme_def(index) {
                    let id = self.entries[index].id.expect("declared");
                    if is_terminal_name(name) {
                        Some(Expr::rule(id))
                    } else {
                        // A lexeme rule's body is `ignore x`: take `x`.
                        Some(self.lexeme_body_without_ignore(id))
                    }
                } else if !f.has[&index] {
                    None
                } else {
                    let id = match f.variants.get(&index) {
                        Some(&id) => id,
                        None => {
                            let base = format!("{}_first", self.entries[index].def.name.text);
                            let id = self
                                .builder
                                .fresh(&base)
                                .map_err(|err| ir_error(e.span, err))?;
                            f.variants.insert(index, id);
                            f.pending.push(index);
                            id
                        }
                    };
                    Some(Expr::rule(id))
                }
            }
            ExprKind::Json(_) => self.expr(e, ns, false)?,
            // Every other form is one lexeme: lowered inside a terminal, it has no prefix.
            _ => self.expr(e, ns, true)?,
        })
    }

    /// The body of a lexeme rule (`ignore x`, as `definition` builds it), without `ignore`.
    fn lexeme_body_without_ignore(&self, id: RuleId) -> Expr {
        let body = self.builder.body(id).expect("lexeme rules are defined");
        match body.kind() {
            sieve_ir::ExprKind::Seq(items) if items.len() == 2 => items[1].clone(),
            _ => body.clone(),
        }
    }

    fn and_not_in_rule(&self, span: Span) -> Error {
        self.located(
            ErrorKind::Unsupported,
            span,
            "`&` and `~` are only allowed in terminal definitions (upper-case names)",
        )
    }

    /// A `/regex/flags` (or a literal's escaped text) through sieve's regex front-end.
    fn regex(
        &mut self,
        pattern: &str,
        flags: &str,
        span: Span,
        pattern_start: Option<usize>,
    ) -> Result<Expr, Error> {
        let mut inline = String::new();
        for f in flags.chars() {
            match f {
                'i' | 'm' | 's' | 'x' | 'u' => {
                    if !inline.contains(f) {
                        inline.push(f);
                    }
                }
                _ => {
                    return Err(self.located(
                        ErrorKind::Unsupported,
                        span,
                        format!("the regex flag `{f}` is not supported (use i, m, s, x or u)"),
                    ))
                }
            }
        }
        let prefix = if inline.is_empty() {
            String::new()
        } else {
            format!("(?{inline})")
        };
        let located = |l: &Self, offset: usize, len: usize| match pattern_start {
            Some(start) if l.at.is_none() => Span::new(start + offset, start + offset + len),
            _ => span,
        };
        let has_lookaround = |p: &str| ["(?=", "(?!", "(?<=", "(?<!"].iter().any(|o| p.contains(o));
        if has_lookaround(pattern) {
            let alternatives = crate::lookaround::alternatives(pattern);
            let mut dfas = Vec::with_capacity(alternatives.len());
            for (offset, alternative) in &alternatives {
                let dfa = match crate::lookaround::split(alternative) {
                    Ok(Some(split)) => {
                        self.lookaround(&split, *offset, &prefix, span, pattern_start)?
                    }
                    // No top-level look-around here (a nested one is refused by the regex
                    // front-end, with its location).
                    Ok(None) => self.piece_dfa(
                        &(*offset, alternative.clone()),
                        &prefix,
                        span,
                        pattern_start,
                    )?,
                    Err(crate::lookaround::SplitError::Mixed(at)) => {
                        return Err(self.located(
                            ErrorKind::Unsupported,
                            located(self, offset + at, 3),
                            "look-ahead and look-behind in one alternative are not supported: use `&` between two terminals",
                        ))
                    }
                };
                dfas.push(dfa);
            }
            let limit = self.options.limits.max_automaton_states;
            let dfa = Dfa::union(&dfas, limit)
                .map_err(|e| self.dfa_error(e, span))?
                .minimize();
            return self.emit(dfa, "lookaround", span);
        }
        let grammar = self.regex_grammar(pattern, 0, &prefix, span, pattern_start)?;
        self.import(grammar, "regex", span)
    }

    /// Compiles `piece` (at `offset` in the pattern) through sieve's regex front-end, with
    /// the flags `prefix`; errors point into the pattern when its position is known.
    fn regex_grammar(
        &self,
        piece: &str,
        offset: usize,
        prefix: &str,
        span: Span,
        pattern_start: Option<usize>,
    ) -> Result<Grammar, Error> {
        let full = format!("{prefix}{piece}");
        let options = sieve_regex::Options {
            rule_name: "regex".to_owned(),
            ..sieve_regex::Options::default()
        };
        sieve_regex::compile(&full, &options).map_err(|err| {
            use sieve_diagnostics::Located;
            let inner = err.span();
            let located = match pattern_start {
                Some(start) if self.at.is_none() && inner.start >= prefix.len() => {
                    let from = start + offset + inner.start - prefix.len();
                    let to = (start + offset + inner.end.saturating_sub(prefix.len())).max(from);
                    Span::new(from, to)
                }
                _ => span,
            };
            self.located(ErrorKind::Regex, located, format!("in this regex: {err}"))
        })
    }

    /// The automaton of a regex piece (an empty piece is the empty string).
    fn piece_dfa(
        &self,
        piece: &(usize, String),
        prefix: &str,
        span: Span,
        pattern_start: Option<usize>,
    ) -> Result<Dfa, Error> {
        let limit = self.options.limits.max_automaton_states;
        let built = HashMap::default();
        if piece.1.is_empty() {
            let b = GrammarBuilder::new();
            let env = Env {
                builder: &b,
                built: &built,
            };
            return Dfa::from_expr(&Expr::empty(), &env, limit)
                .map_err(|e| self.dfa_error(e, span));
        }
        let grammar = self.regex_grammar(&piece.1, piece.0, prefix, span, pattern_start)?;
        let builder = grammar.to_builder();
        let env = Env {
            builder: &builder,
            built: &built,
        };
        Dfa::from_expr(grammar.rule(grammar.root()).body(), &env, limit)
            .map(|d| d.minimize())
            .map_err(|e| self.dfa_error(e, span))
    }

    /// A regex with top-level look-arounds (see `lookaround.rs`), as automata.
    fn lookaround(
        &mut self,
        split: &crate::lookaround::Split,
        offset: usize,
        prefix: &str,
        span: Span,
        pattern_start: Option<usize>,
    ) -> Result<Dfa, Error> {
        let pattern_start = pattern_start.map(|p| p + offset);
        let limit = self.options.limits.max_automaton_states;
        let err = |l: &Self, e: DfaError| l.dfa_error(e, span);
        let everything = Dfa::everything();
        let constraint = |l: &Self, look: &crate::lookaround::LookAround| -> Result<Dfa, Error> {
            let body = l.piece_dfa(&look.body, prefix, span, pattern_start)?;
            let d = if look.behind {
                everything.concat(&body, limit)
            } else {
                body.concat(&everything, limit)
            }
            .map_err(|e| err(l, e))?
            .minimize();
            Ok(if look.negative { d.complement() } else { d })
        };
        let n = split.looks.len();
        let dfa = if split.looks[0].behind {
            // Left to right: the text so far must end as each look-behind says.
            let mut acc = self.piece_dfa(&split.pieces[0], prefix, span, pattern_start)?;
            for i in 0..n {
                let c = constraint(self, &split.looks[i])?;
                let next = self.piece_dfa(&split.pieces[i + 1], prefix, span, pattern_start)?;
                acc = acc
                    .intersect(&c, limit)
                    .and_then(|a| a.minimize().concat(&next, limit))
                    .map_err(|e| err(self, e))?
                    .minimize();
            }
            acc
        } else {
            // Right to left: the rest of the text must start as each look-ahead says.
            let mut acc = self.piece_dfa(&split.pieces[n], prefix, span, pattern_start)?;
            for i in (0..n).rev() {
                let c = constraint(self, &split.looks[i])?;
                let before = self.piece_dfa(&split.pieces[i], prefix, span, pattern_start)?;
                acc = acc
                    .intersect(&c, limit)
                    .and_then(|a| before.concat(&a.minimize(), limit))
                    .map_err(|e| err(self, e))?
                    .minimize();
            }
            acc
        };
        Ok(dfa)
    }

    /// Copies `grammar`'s rules in under fresh names, marks included; a grammar of one rule is
    /// inlined.
    fn import(&mut self, grammar: Grammar, base: &str, span: Span) -> Result<Expr, Error> {
        if grammar.rules().len() == 1 {
            let (mut rules, root) = grammar.into_rewrite();
            return Ok(rules.swap_remove(root.index()).1);
        }
        let root = self
            .builder
            .import_owned(grammar, base)
            .map_err(|e| ir_error(span, e))?;
        Ok(Expr::rule(root))
    }

    /// `%regex { "substring_chunks" | "substring_words" | "substring_chars": … }`.
    fn structured_regex(&mut self, text: &str, span: Span) -> Result<Expr, Error> {
        let bad = |l: &Self, m: &str| l.located(ErrorKind::Syntax, span, m.to_owned());
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|err| bad(self, &format!("`%regex` needs a JSON object: {err}")))?;
        let serde_json::Value::Object(map) = value else {
            return Err(bad(self, "`%regex` needs a JSON object"));
        };
        if map.len() != 1 {
            return Err(bad(
                self,
                "`%regex` takes exactly one of `substring_chunks`, `substring_words`, `substring_chars`",
            ));
        }
        let (key, value) = map.iter().next().expect("one entry");
        let chunks: Vec<String> = match (key.as_str(), value) {
            ("substring_chunks", serde_json::Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<_>>()
                .ok_or_else(|| bad(self, "`substring_chunks` must be a list of strings"))?,
            ("substring_words", serde_json::Value::String(s)) => words(s),
            ("substring_chars", serde_json::Value::String(s)) => {
                s.chars().map(String::from).collect()
            }
            _ => {
                return Err(self.located(
                    ErrorKind::Unsupported,
                    span,
                    format!("`%regex` key `{key}` is not supported (or its value has the wrong type): use substring_chunks (a list of strings), substring_words or substring_chars (a string)"),
                ))
            }
        };
        // P_i = chunk_i P_{i+1}?, and the substring is (P_0 | … | P_{n-1})?.
        let mut heads = Vec::with_capacity(chunks.len());
        let mut next: Option<RuleId> = None;
        for chunk in chunks.iter().rev() {
            let id = self
                .builder
                .fresh("substring")
                .map_err(|e| ir_error(span, e))?;
            let body = match next {
                Some(n) => {
                    Expr::seq([Expr::bytes(chunk.as_bytes()), Expr::optional(Expr::rule(n))])
                }
                None => Expr::bytes(chunk.as_bytes()),
            };
            self.builder.define(id, body);
            heads.push(Expr::rule(id));
            next = Some(id);
        }
        Ok(match Expr::choice(heads) {
            Some(c) => Expr::optional(c),
            None => Expr::empty(),
        })
    }

    fn llguidance_options(&mut self, json: &str, span: Span) {
        match serde_json::from_str::<serde_json::Value>(json) {
            Ok(serde_json::Value::Object(map)) => {
                for key in map.keys() {
                    // Options that steer llguidance's runtime, not the language.
                    if !matches!(key.as_str(), "no_forcing" | "allow_invalid_utf8") {
                        self.errors.push(Error::new(
                            ErrorKind::Unsupported,
                            span,
                            format!("the `%llguidance` option `{key}` is not supported"),
                        ));
                    }
                }
            }
            _ => self.errors.push(Error::new(
                ErrorKind::Syntax,
                span,
                "`%llguidance` needs a JSON object",
            )),
        }
    }
}

/// `"foo bar. baz"` → `["foo", " ", "bar", ".", " ", "baz"]`: runs of word characters, and
/// every other character alone.
fn words(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut in_word = false;
    for c in s.chars() {
        let word = c.is_alphanumeric() || c == '_';
        if word && in_word {
            out.last_mut().expect("a word is open").push(c);
        } else {
            out.push(c.to_string());
        }
        in_word = word;
    }
    out
}

/// The names an expression uses, with their spans (iteratively: no recursion on user input).
fn collect_names(expr: &AstExpr, out: &mut Vec<(String, Span)>) {
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        match &e.kind {
            ExprKind::Choice(xs) | ExprKind::Seq(xs) | ExprKind::And(xs) => stack.extend(xs),
            ExprKind::Not(x) | ExprKind::Repeat { item: x, .. } => stack.push(x),
            ExprKind::Name(n) => out.push((n.clone(), e.span)),
            _ => {}
        }
    }
}
