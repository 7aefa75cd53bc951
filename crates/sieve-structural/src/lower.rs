//! Lowering the typed model to the IR, one rule per format (named after its type), as
//! XGrammar's converter does, so the language of each format is XGrammar's:
//!
//! - `tag`: `begin content end` (several ends: a choice).
//! - `any_text` and `triggered_tags` exclude, besides their own `excludes`, the end strings of
//!   the nearest enclosing `tag` (XGrammar's analyser does the same), so free text inside a tag
//!   cannot run past the tag's end.
//! - `triggered_tags`: each tag belongs to the one trigger that is a prefix of its begin; the
//!   free text dispatches on the trigger to the rest of the begin, the content and the end.
//!   With `at_least_one` the output starts with a tag (no free text before the first one);
//!   with `stop_after_first` too, it is exactly one tag.
//! - Embedded grammars, regexes and JSON Schemas are compiled by their own front-ends and
//!   their rules copied in under fresh names.
//! - Token formats become token terminals (`sieve_ir::token`): `token` one encoding,
//!   `exclude_token` a negated set, `any_tokens` a repetition of one (bounded by
//!   `max_tokens`: each repetition is exactly one token), `token_triggered_tags` and
//!   `token_dispatch` free tokens `F* (T R F*)*` (or `F* (T R)?` without looping) where `F`
//!   is every token but the triggers and the excluded ones. `exclude_token`, `any_tokens` and
//!   `token_triggered_tags` also leave out the nearest enclosing tag's end token (XGrammar's
//!   analyser does the same; `token_dispatch` does not, as in XGrammar). Names resolve
//!   against [`Options::tokens`]; one that does not is an error at its own pointer.
//!
//! Equal formats (same canonical JSON, same enclosing end strings) are compiled once.

use foldhash::HashMap;
use sieve_ir::token::{TokenError, TokenItem, TokenSet, TOKEN_MARKER};
use sieve_ir::{Expr, ExprKind, Grammar, GrammarBuilder, RuleId};

use crate::dispatch::{self, FreeText};
use crate::error::{join, Error, ErrorKind};
use crate::model::{Begin, Ends, Format, FormatKey, JsonSchema, Kind, Style, Tag, Tok};
use crate::{strict, Options};

mod xml;

/// The end of an enclosing tag, as free text and free tokens inside it must avoid it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum End {
    /// Its end strings.
    Text(Vec<String>),
    /// Its end token's id.
    Token(u32),
}

/// The lowering state: the grammar being built and the compiled formats.
pub(crate) struct Lowerer<'a> {
    builder: GrammarBuilder,
    options: &'a Options,
    cache: HashMap<(FormatKey, Option<End>), RuleId>,
    /// The shared rules of tags' common begin endings, by their bytes (see
    /// [`Lowerer::choice_of_tags`]).
    begin_endings: HashMap<Vec<u8>, RuleId>,
    /// The ends of the enclosing tags, innermost last.
    ends: Vec<End>,
}

impl<'a> Lowerer<'a> {
    pub(crate) fn new(options: &'a Options) -> Lowerer<'a> {
        Lowerer {
            builder: GrammarBuilder::new(),
            options,
            cache: HashMap::default(),
            begin_endings: HashMap::default(),
            ends: Vec::new(),
        }
    }

    /// Lowers the document's format and finishes the grammar with a `root` rule.
    pub(crate) fn finish(mut self, format: &Format) -> Result<Grammar, Error> {
        let root = self.fresh("root", "")?;
        let body = self.format(format)?;
        self.builder.define(root, Expr::rule(body));
        self.builder
            .build(root)
            .map_err(|e| Error::new(ErrorKind::Limit, "", format!("building the grammar: {e}")))
    }

    fn fresh(&mut self, base: &str, pointer: &str) -> Result<RuleId, Error> {
        self.make_room(1, pointer)?;
        self.builder
            .fresh(base)
            .map_err(|e| Error::new(ErrorKind::Limit, pointer, e.to_string()))
    }

    /// An error when `count` more rules would pass [`Limits::max_rules`].
    fn make_room(&self, count: usize, pointer: &str) -> Result<(), Error> {
        if self.builder.len().saturating_add(count) > self.options.limits.max_rules {
            return Err(Error::new(
                ErrorKind::Limit,
                pointer,
                format!(
                    "more than {} grammar rules (Limits::max_rules)",
                    self.options.limits.max_rules
                ),
            ));
        }
        Ok(())
    }

    /// A rule named after `base` with this body.
    fn rule(&mut self, base: &str, body: Expr, pointer: &str) -> Result<RuleId, Error> {
        let id = self.fresh(base, pointer)?;
        self.builder.define(id, body);
        Ok(id)
    }

    /// `any_text`'s text: UTF-8 without the excluded strings (and the enclosing tag's end),
    /// up to `max_chars` characters.
    fn any_text(
        &mut self,
        excludes: &[String],
        max_chars: Option<u32>,
        p: &str,
    ) -> Result<RuleId, Error> {
        let mut all = excludes.to_vec();
        all.extend(self.enclosing_ends());
        check_strings(&all, &join(p, "excludes"), "an excluded string")?;
        if all.is_empty() {
            let body = match max_chars {
                None => Expr::star(dispatch::utf8_char()),
                Some(max) => Expr::repeat(dispatch::utf8_char(), 0, Some(max))
                    .map_err(|e| Error::new(ErrorKind::Invalid, p, e.to_string()))?,
            };
            return self.rule("any_text", body, p);
        }
        let text = FreeText {
            triggers: &[],
            excludes: &all,
            looping: true,
            max_chars,
        };
        dispatch::build(
            &mut self.builder,
            "any_text",
            &text,
            self.options.limits.max_free_text_states,
            p,
        )
    }

    /// The end strings free text must avoid here: the nearest enclosing tag's, non-empty.
    fn enclosing_ends(&self) -> Vec<String> {
        match self.ends.last() {
            Some(End::Text(ends)) => ends.iter().filter(|e| !e.is_empty()).cloned().collect(),
            _ => Vec::new(),
        }
    }

    /// The end token free tokens must avoid here: the nearest enclosing tag's, if a token.
    fn enclosing_end_token(&self) -> Option<u32> {
        match self.ends.last() {
            Some(&End::Token(id)) => Some(id),
            _ => None,
        }
    }

    /// The id of a token as written, resolved against [`Options::tokens`].
    fn resolve(&self, tok: &Tok) -> Result<u32, Error> {
        let set = TokenSet {
            items: vec![tok.item.clone()],
            negated: false,
        };
        let ranges = match (&self.options.tokens, &tok.item) {
            (Some(names), _) => set.resolve(&*names.0),
            (None, &TokenItem::Ids(id, _)) => Ok(vec![(id, id)]),
            (None, TokenItem::Named(_)) => Err(TokenError::NoTokenizer),
        };
        match ranges {
            Ok(ranges) => Ok(ranges[0].0),
            Err(e) => Err(token_error(&tok.pointer, &e)),
        }
    }

    /// The bytes of a delimiter or constant string, where each part that spells a special
    /// token's name (`<|channel|>`) may also be that special token: XGrammar reads special
    /// tokens as their text, so its delimiters match them; sieve never reads a special token
    /// as text, so it offers the token terminal beside the spelling. Without a vocabulary,
    /// just the bytes.
    fn literal(&self, text: &str) -> Expr {
        let Some(names) = &self.options.tokens else {
            return Expr::bytes(text.as_bytes());
        };
        let names = &*names.0;
        let bytes = text.as_bytes();
        let mut pieces = Vec::new();
        let (mut start, mut i) = (0, 0);
        while i < bytes.len() {
            // The longest special name starting here (names are short: at most 64 bytes).
            let special = (bytes[i] == b'<')
                .then(|| {
                    (i + 2..=bytes.len().min(i + 64)).rev().find_map(|end| {
                        let name = text.get(i..end)?;
                        name.ends_with('>')
                            .then(|| names.special_id(name))
                            .flatten()
                            .map(|id| (end, id))
                    })
                })
                .flatten();
            match special {
                Some((end, id)) => {
                    if start < i {
                        pieces.push(Expr::bytes(&bytes[start..i]));
                    }
                    let spelled = Expr::bytes(&bytes[i..end]);
                    pieces.push(Expr::choice([spelled, token(id)]).expect("two alternatives"));
                    (start, i) = (end, end);
                }
                None => i += 1,
            }
        }
        if start < bytes.len() || pieces.is_empty() {
            pieces.push(Expr::bytes(&bytes[start..]));
        }
        Expr::seq(pieces)
    }

    /// The ids of `tokens` (and `extra`), resolved.
    fn resolve_all(&self, tokens: &[Tok], extra: Option<u32>) -> Result<Vec<u32>, Error> {
        let mut ids = tokens
            .iter()
            .map(|t| self.resolve(t))
            .collect::<Result<Vec<_>, _>>()?;
        ids.extend(extra);
        Ok(ids)
    }

    /// One token that is none of `ids` (nor EOS nor an unused id); `None` when no token is
    /// left.
    fn other_token(&self, ids: &[u32], pointer: &str) -> Result<Option<Expr>, Error> {
        let set = TokenSet {
            items: ids.iter().map(|&id| TokenItem::Ids(id, id)).collect(),
            negated: true,
        };
        let names = self.options.tokens.as_ref().map(|n| &*n.0);
        match set.expr(names) {
            Ok(expr) => Ok(Some(expr)),
            Err(TokenError::Empty) => Ok(None),
            Err(e) => Err(token_error(pointer, &e)),
        }
    }

    /// `F* (dispatch F*)*`, or `F* dispatch?` without looping, where `F` is one free token.
    fn free_tokens(
        &mut self,
        base: &str,
        free: Option<Expr>,
        dispatch: Option<Expr>,
        looping: bool,
        pointer: &str,
    ) -> Result<RuleId, Error> {
        let free = free.map(Expr::star);
        let body = match (dispatch, looping) {
            (None, _) => free.unwrap_or_else(Expr::empty),
            (Some(dispatch), true) => {
                let again = Expr::seq([dispatch].into_iter().chain(free.clone()));
                Expr::seq(free.into_iter().chain([Expr::star(again)]))
            }
            (Some(dispatch), false) => {
                Expr::seq(free.into_iter().chain([Expr::optional(dispatch)]))
            }
        };
        self.rule(base, body, pointer)
    }

    fn format(&mut self, format: &Format) -> Result<RuleId, Error> {
        let key = (format.key, self.ends.last().cloned());
        if let Some(&id) = self.cache.get(&key) {
            return Ok(id);
        }
        let id = self.format_uncached(format)?;
        self.cache.insert(key, id);
        Ok(id)
    }

    fn format_uncached(&mut self, format: &Format) -> Result<RuleId, Error> {
        let p = format.pointer.as_str();
        match &format.kind {
            Kind::ConstString(s) => self.rule("const_string", self.literal(s), p),
            Kind::JsonSchema(schema) => self.json_schema(schema, p),
            Kind::Grammar(text) => {
                let mut options = sieve_gbnf::Options::default();
                options.tokens.clone_from(&self.options.tokens);
                let grammar = sieve_gbnf::compile(text, &options).map_err(|errors| {
                    let source = sieve_diagnostics::SourceFile::new("grammar", text);
                    let messages: Vec<String> = errors
                        .as_slice()
                        .iter()
                        .map(|e| source.render_error(e))
                        .collect();
                    Error::new(ErrorKind::Embedded, &join(p, "grammar"), messages.concat())
                })?;
                self.import(grammar, "grammar", p)
            }
            Kind::Regex(pattern) => {
                let grammar = sieve_regex::compile(pattern, &sieve_regex::Options::default())
                    .map_err(|e| {
                        let source = sieve_diagnostics::SourceFile::new("pattern", pattern);
                        Error::new(
                            ErrorKind::Embedded,
                            &join(p, "pattern"),
                            source.render_error(&e),
                        )
                    })?;
                self.import(grammar, "regex", p)
            }
            Kind::Sequence(elements) => {
                let mut items = Vec::with_capacity(elements.len());
                for element in elements {
                    items.push(Expr::rule(self.format(element)?));
                }
                self.rule("sequence", Expr::seq(items), p)
            }
            Kind::Or(elements) => {
                let mut items = Vec::with_capacity(elements.len());
                for element in elements {
                    items.push(Expr::rule(self.format(element)?));
                }
                let body = Expr::choice(items).expect("at least one element");
                self.rule("or", body, p)
            }
            Kind::Tag(tag) => {
                let begin = self.begin(&tag.begin)?;
                let body = self.tag(tag, begin)?;
                self.rule("tag", body, p)
            }
            Kind::Token(tok) => {
                let id = self.resolve(tok)?;
                self.rule("token", token(id), p)
            }
            Kind::ExcludeToken(excludes) => {
                let ids = self.resolve_all(excludes, self.enclosing_end_token())?;
                let Some(body) = self.other_token(&ids, p)? else {
                    return Err(Error::new(
                        ErrorKind::Invalid,
                        &join(p, "exclude_tokens"),
                        "every token is excluded",
                    ));
                };
                self.rule("exclude_token", body, p)
            }
            Kind::AnyTokens {
                excludes,
                max_tokens,
            } => {
                let ids = self.resolve_all(excludes, self.enclosing_end_token())?;
                let body = match (self.other_token(&ids, p)?, max_tokens) {
                    (None, _) => Expr::empty(),
                    (Some(one), None) => Expr::star(one),
                    (Some(one), Some(max)) => Expr::repeat(one, 0, Some(*max))
                        .map_err(|e| Error::new(ErrorKind::Invalid, p, e.to_string()))?,
                };
                self.rule("any_tokens", body, p)
            }
            Kind::TokenTriggeredTags {
                triggers,
                tags,
                excludes,
                at_least_one,
                stop_after_first,
            } => self.token_triggered_tags(
                p,
                triggers,
                tags,
                excludes,
                *at_least_one,
                *stop_after_first,
            ),
            Kind::TokenDispatch {
                rules,
                looping,
                excludes,
            } => {
                let mut patterns: Vec<u32> = Vec::with_capacity(rules.len());
                let mut alternatives = Vec::with_capacity(rules.len());
                for (pattern, format) in rules {
                    let id = self.resolve(pattern)?;
                    if patterns.contains(&id) {
                        return Err(Error::new(
                            ErrorKind::Invalid,
                            &pattern.pointer,
                            format!("token {id} is the pattern of two rules"),
                        ));
                    }
                    patterns.push(id);
                    let rule = self.format(format)?;
                    alternatives.push(Expr::seq([token(id), Expr::rule(rule)]));
                }
                // XGrammar's token dispatch does not leave out an enclosing tag's end token.
                let ids = self.resolve_all(excludes, None)?;
                let free = self.other_token(&[patterns, ids].concat(), p)?;
                self.free_tokens(
                    "token_dispatch",
                    free,
                    Expr::choice(alternatives),
                    *looping,
                    p,
                )
            }
            Kind::AnyText {
                excludes,
                max_chars,
                max_tokens,
            } => {
                let text = self.any_text(excludes, *max_chars, p)?;
                match max_tokens {
                    None => Ok(text),
                    // No token may hold a byte of it: the text is empty (as in XGrammar).
                    Some(0) => self.rule("any_text", Expr::empty(), p),
                    Some(k) => {
                        // A rule of its own carries the limit: the text's rule may be shared.
                        let limited = self.rule("any_text", Expr::rule(text), p)?;
                        self.builder.limit_tokens(limited, *k);
                        Ok(limited)
                    }
                }
            }
            Kind::TriggeredTags {
                triggers,
                tags,
                at_least_one,
                stop_after_first,
                excludes,
            } => self.triggered_tags(
                p,
                triggers,
                tags,
                *at_least_one,
                *stop_after_first,
                excludes,
            ),
            Kind::TagsWithSeparator {
                tags,
                separator,
                at_least_one,
                stop_after_first,
            } => {
                let mut alternatives = Vec::with_capacity(tags.len());
                for tag in tags {
                    let begin = self.begin(&tag.begin)?;
                    let body = self.tag(tag, begin)?;
                    alternatives.push(Expr::rule(self.rule("tag", body, &tag.pointer)?));
                }
                let Some(any_tag) = Expr::choice(alternatives) else {
                    // No tags: only the empty output.
                    return self.rule("tags_with_separator", Expr::empty(), p);
                };
                let any_tag = Expr::rule(self.rule("tags_with_separator_tags", any_tag, p)?);
                let body = if *stop_after_first {
                    any_tag
                } else {
                    let more = Expr::star(Expr::seq([self.literal(separator), any_tag.clone()]));
                    Expr::seq([any_tag, more])
                };
                let body = if *at_least_one {
                    body
                } else {
                    Expr::optional(body)
                };
                self.rule("tags_with_separator", body, p)
            }
            Kind::Repeat { content, min, max } => {
                let content = self.format(content)?;
                let body = Expr::repeat(Expr::rule(content), *min, *max)
                    .map_err(|e| Error::new(ErrorKind::Invalid, p, e.to_string()))?;
                self.rule("repeat", body, p)
            }
            Kind::Dispatch {
                rules,
                looping,
                excludes,
            } => {
                check_strings(excludes, &join(p, "excludes"), "an excluded string")?;
                let mut triggers: Vec<(String, Option<RuleId>)> = Vec::with_capacity(rules.len());
                for (i, (pattern, format)) in rules.iter().enumerate() {
                    let at = join(&join(&join(p, "rules"), i), 0);
                    if pattern.is_empty() {
                        return Err(Error::new(
                            ErrorKind::Invalid,
                            &at,
                            "a dispatch pattern must not be empty",
                        ));
                    }
                    if triggers.iter().any(|(t, _)| t == pattern) {
                        return Err(Error::new(
                            ErrorKind::Invalid,
                            &at,
                            format!("the pattern {pattern:?} appears twice"),
                        ));
                    }
                    let rule = self.format(format)?;
                    triggers.push((pattern.clone(), Some(rule)));
                }
                let text = FreeText {
                    triggers: &triggers,
                    excludes,
                    looping: *looping,
                    max_chars: None,
                };
                dispatch::build(
                    &mut self.builder,
                    "dispatch",
                    &text,
                    self.options.limits.max_free_text_states,
                    p,
                )
            }
        }
    }

    /// A tag's whole begin.
    fn begin(&self, begin: &Begin) -> Result<Expr, Error> {
        Ok(match begin {
            Begin::Text(text) => self.literal(text),
            Begin::Token(tok) => token(self.resolve(tok)?),
        })
    }

    /// `begin content end` with the begin given (the whole begin, or its part after the
    /// trigger).
    fn tag(&mut self, tag: &Tag, begin: Expr) -> Result<Expr, Error> {
        let parts = self.tag_parts(tag, begin)?;
        Ok(Expr::seq([
            parts.begin,
            Expr::rule(parts.content),
            parts.end,
        ]))
    }

    /// A tag's begin, content and end apart (see [`Lowerer::choice_of_tags`]).
    fn tag_parts(&mut self, tag: &Tag, begin: Expr) -> Result<TagParts, Error> {
        let (end, inside) = match &tag.ends {
            Ends::Text(ends) => {
                if is_unlimited(&tag.content)
                    && !is_excluding(&tag.content)
                    && ends.iter().all(String::is_empty)
                {
                    return Err(Error::new(
                        ErrorKind::Invalid,
                        &join(&tag.pointer, "end"),
                        "the content is unlimited, so at least one end string must be non-empty",
                    ));
                }
                let end =
                    Expr::choice(ends.iter().map(|e| self.literal(e))).expect("at least one end");
                (end, End::Text(ends.clone()))
            }
            Ends::Token(tok) => {
                let id = self.resolve(tok)?;
                (token(id), End::Token(id))
            }
        };
        self.ends.push(inside);
        let content = self.format(&tag.content);
        self.ends.pop();
        Ok(TagParts {
            begin,
            content: content?,
            end,
        })
    }

    /// The choice of `tags`, or `None` for no tag. When every tag has the same end (a model
    /// format's tool calls all close alike), it is written once after the choice:
    /// `(b₁ c₁ | b₂ c₂ | …) e`, the same language as `b₁ c₁ e | b₂ c₂ e | …`, whose automaton
    /// would carry a copy of `e` per tag until minimised (a hundred tools' ends are most of
    /// the states subset construction builds). Likewise, when the begins are strings that end
    /// alike (`…"name": "NAME", "arguments": `), that ending is one shared rule every tag
    /// refers to: a different content follows each begin, so in the tags' automaton the
    /// ending could never merge, and would be a chain of states per tag.
    fn choice_of_tags(&mut self, mut tags: Vec<TagParts>, p: &str) -> Result<Option<Expr>, Error> {
        if let Some(ending) = common_ending(&tags) {
            let rule = match self.begin_endings.get(&ending) {
                Some(&rule) => rule,
                None => {
                    let rule = self.rule("tag_begin_end", Expr::bytes(&ending[..]), p)?;
                    self.builder.share(rule);
                    self.begin_endings.insert(ending.clone(), rule);
                    rule
                }
            };
            for tag in &mut tags {
                let ExprKind::Bytes(begin) = tag.begin.kind() else {
                    unreachable!("common_ending reads only byte-string begins");
                };
                let start = &begin[..begin.len() - ending.len()];
                tag.begin = if start.is_empty() {
                    Expr::rule(rule)
                } else {
                    Expr::seq([Expr::bytes(start), Expr::rule(rule)])
                };
            }
        }
        let shared_end = tags.len() > 1 && tags.windows(2).all(|pair| pair[0].end == pair[1].end);
        let head = |tag: TagParts| Expr::seq([tag.begin, Expr::rule(tag.content)]);
        if shared_end {
            let end = tags[0].end.clone();
            let Some(heads) = Expr::choice(tags.into_iter().map(head)) else {
                return Ok(None);
            };
            return Ok(Some(Expr::seq([heads, end])));
        }
        Ok(Expr::choice(tags.into_iter().map(|tag| {
            let end = tag.end.clone();
            Expr::seq([head(tag), end])
        })))
    }

    fn token_triggered_tags(
        &mut self,
        p: &str,
        triggers: &[Tok],
        tags: &[Tag],
        excludes: &[Tok],
        at_least_one: bool,
        stop_after_first: bool,
    ) -> Result<RuleId, Error> {
        let trigger_ids = self.resolve_all(triggers, None)?;
        let mut groups: Vec<Vec<TagParts>> = (0..triggers.len()).map(|_| Vec::new()).collect();
        let mut whole: Vec<TagParts> = Vec::new();
        for tag in tags {
            let at = join(&tag.pointer, "begin");
            let Begin::Token(begin) = &tag.begin else {
                return Err(Error::new(
                    ErrorKind::Invalid,
                    &at,
                    "a tag of token_triggered_tags must begin with a token format",
                ));
            };
            let id = self.resolve(begin)?;
            let mut matched = trigger_ids.iter().enumerate().filter(|&(_, &t)| t == id);
            let Some((i, _)) = matched.next() else {
                return Err(Error::new(
                    ErrorKind::Invalid,
                    &at,
                    format!("the begin token {id} is none of the trigger tokens"),
                ));
            };
            if matched.next().is_some() {
                return Err(Error::new(
                    ErrorKind::Invalid,
                    &at,
                    format!("the begin token {id} is two of the trigger tokens"),
                ));
            }
            groups[i].push(self.tag_parts(tag, Expr::empty())?);
            if at_least_one {
                whole.push(self.tag_parts(tag, token(id))?);
            }
        }
        // The tags with their whole begins, for the first call when one is required.
        let first = match at_least_one {
            true => Some(self.choice_of_tags(whole, p)?.expect("at least one tag")),
            false => None,
        };
        if let (true, Some(first)) = (stop_after_first, &first) {
            return self.rule("token_triggered_tags", first.clone(), p);
        }
        let mut alternatives = Vec::with_capacity(triggers.len());
        for (&id, group) in trigger_ids.iter().zip(groups) {
            // A trigger without tags dispatches to nothing: it is refused, as in XGrammar.
            if let Some(group) = self.choice_of_tags(group, p)? {
                let group = self.rule("token_triggered_tags_group", group, p)?;
                alternatives.push(Expr::seq([token(id), Expr::rule(group)]));
            }
        }
        let mut ids = self.resolve_all(excludes, self.enclosing_end_token())?;
        ids.extend(&trigger_ids);
        let free = self.other_token(&ids, p)?;
        let dispatch = self.free_tokens(
            "token_triggered_tags_text",
            free,
            Expr::choice(alternatives),
            !stop_after_first,
            p,
        )?;
        let Some(first) = first else {
            return Ok(dispatch);
        };
        let first = self.rule("token_triggered_tags_first", first, p)?;
        self.rule(
            "token_triggered_tags",
            Expr::seq([Expr::rule(first), Expr::rule(dispatch)]),
            p,
        )
    }

    fn triggered_tags(
        &mut self,
        p: &str,
        triggers: &[String],
        tags: &[Tag],
        at_least_one: bool,
        stop_after_first: bool,
        excludes: &[String],
    ) -> Result<RuleId, Error> {
        check_strings(triggers, &join(p, "triggers"), "a trigger")?;
        let mut groups: Vec<Vec<TagParts>> = (0..triggers.len()).map(|_| Vec::new()).collect();
        let mut whole: Vec<TagParts> = Vec::new();
        for tag in tags {
            let Begin::Text(begin) = &tag.begin else {
                return Err(Error::new(
                    ErrorKind::Invalid,
                    &join(&tag.pointer, "begin"),
                    "a tag of triggered_tags must begin with a string (token_triggered_tags takes token begins)",
                ));
            };
            let mut matched = triggers
                .iter()
                .enumerate()
                .filter(|(_, t)| begin.starts_with(t.as_str()));
            let Some((i, trigger)) = matched.next() else {
                return Err(Error::new(
                    ErrorKind::Invalid,
                    &join(&tag.pointer, "begin"),
                    format!("the begin {begin:?} starts with no trigger"),
                ));
            };
            if let Some((_, other)) = matched.next() {
                return Err(Error::new(
                    ErrorKind::Invalid,
                    &join(&tag.pointer, "begin"),
                    format!(
                        "the begin {begin:?} starts with two triggers, {trigger:?} and {other:?}"
                    ),
                ));
            }
            let rest = self.literal(&begin[trigger.len()..]);
            groups[i].push(self.tag_parts(tag, rest)?);
            if at_least_one {
                whole.push(self.tag_parts(tag, self.literal(begin))?);
            }
        }
        // The tags with their whole begins, for the first call when one is required.
        let first = self.choice_of_tags(whole, p)?;
        if at_least_one && stop_after_first {
            let Some(first) = first else {
                return Err(Error::new(
                    ErrorKind::Invalid,
                    &join(p, "tags"),
                    "`at_least_one` needs at least one tag",
                ));
            };
            return self.rule("triggered_tags", first, p);
        }
        let mut dispatch_triggers = Vec::with_capacity(triggers.len());
        for (trigger, group) in triggers.iter().zip(groups) {
            let rule = match self.choice_of_tags(group, p)? {
                Some(body) => Some(self.rule("triggered_tags_group", body, p)?),
                None => None,
            };
            dispatch_triggers.push((trigger.clone(), rule));
        }
        let mut all_excludes = excludes.to_vec();
        all_excludes.extend(self.enclosing_ends());
        check_strings(&all_excludes, &join(p, "excludes"), "an excluded string")?;
        let text = FreeText {
            triggers: &dispatch_triggers,
            excludes: &all_excludes,
            looping: !stop_after_first,
            max_chars: None,
        };
        let free = dispatch::build(
            &mut self.builder,
            "triggered_tags_text",
            &text,
            self.options.limits.max_free_text_states,
            p,
        )?;
        if !at_least_one {
            return Ok(free);
        }
        let Some(first) = first else {
            return Err(Error::new(
                ErrorKind::Invalid,
                &join(p, "tags"),
                "`at_least_one` needs at least one tag",
            ));
        };
        let first = self.rule("triggered_tags_first", first, p)?;
        self.rule(
            "triggered_tags",
            Expr::seq([Expr::rule(first), Expr::rule(free)]),
            p,
        )
    }

    fn json_schema(&mut self, schema: &JsonSchema, p: &str) -> Result<RuleId, Error> {
        if !schema.excludes.is_empty() && schema.style != Style::KimiK3Xml {
            return Err(Error::new(
                ErrorKind::Unsupported,
                &join(p, "excludes"),
                "excluded substrings in JSON strings are not supported yet (only kimi_k3_xml's text values take `excludes`)",
            ));
        }
        let max_whitespace = schema
            .max_whitespace
            .unwrap_or(self.options.json_max_whitespace);
        let document = strict::strict(&schema.schema);
        let at = join(p, "json_schema");
        if schema.style != Style::Json {
            let values = crate::xml::Values::Xml(schema.style);
            let limit = self.options.limits.max_formats;
            let members = crate::xml::read(&document, values, schema.any_order, &at, limit)?;
            let body = xml::Xml::new(self, schema.style, at, max_whitespace)?
                .excluding(&schema.excludes)
                .members(&members)?;
            return self.rule("xml_parameters", body, p);
        }
        if schema.any_order && crate::xml::mentions(&document, "properties") {
            // XGrammar's any_order: members in any order, repeats allowed, required ones
            // counted but not enforced. Without `properties` anywhere it changes nothing.
            let limit = self.options.limits.max_formats;
            let members = crate::xml::read(&document, crate::xml::Values::Json, true, &at, limit)?;
            let body =
                xml::Xml::new(self, schema.style, at, max_whitespace)?.json_object(&members)?;
            return self.rule("json_any_order", body, p);
        }
        let mut options = self.options.json.clone();
        options.whitespace = sieve_jsonschema::Whitespace::Flexible;
        options.max_whitespace = max_whitespace;
        // XGrammar's JSON allows whitespace between tokens only, not around the value.
        options.outer_whitespace = false;
        let compiled = sieve_jsonschema::compile(&document, &options).map_err(|e| {
            Error::new(
                ErrorKind::Embedded,
                &format!("{}{}", join(p, "json_schema"), e.pointer),
                format!("`{}`: {}", e.keyword, e.message),
            )
        })?;
        self.import(compiled.grammar, "json", p)
    }

    /// Copies `grammar`'s rules in under fresh names derived from `base`, marks included;
    /// returns the copy of its root.
    fn import(&mut self, grammar: Grammar, base: &str, pointer: &str) -> Result<RuleId, Error> {
        self.make_room(grammar.rules().len(), pointer)?;
        self.builder
            .import_owned(grammar, base)
            .map_err(|e| Error::new(ErrorKind::Limit, pointer, e.to_string()))
    }
}

/// Whether the format matches unboundedly long text (XGrammar's `IsUnlimited`).
fn is_unlimited(format: &Format) -> bool {
    match &format.kind {
        Kind::AnyText { .. }
        | Kind::TriggeredTags { .. }
        | Kind::Dispatch { .. }
        | Kind::TagsWithSeparator { .. }
        | Kind::AnyTokens { .. }
        | Kind::TokenTriggeredTags { .. }
        | Kind::TokenDispatch { .. } => true,
        Kind::Sequence(items) | Kind::Or(items) => {
            items.iter().any(|f| is_unlimited(f) && !is_excluding(f))
        }
        Kind::Repeat { content, max, .. } => {
            max.is_none() || (*max != Some(0) && is_unlimited(content))
        }
        Kind::ConstString(_)
        | Kind::JsonSchema(_)
        | Kind::Grammar(_)
        | Kind::Regex(_)
        | Kind::Tag(_)
        | Kind::Token(_)
        | Kind::ExcludeToken(_) => false,
    }
}

/// Whether the format's free text has its own excluded strings (XGrammar's `IsExcluded`).
fn is_excluding(format: &Format) -> bool {
    match &format.kind {
        Kind::AnyText { excludes, .. }
        | Kind::TriggeredTags { excludes, .. }
        | Kind::Dispatch { excludes, .. } => !excludes.is_empty(),
        Kind::AnyTokens { excludes, .. }
        | Kind::TokenTriggeredTags { excludes, .. }
        | Kind::TokenDispatch { excludes, .. } => !excludes.is_empty(),
        _ => false,
    }
}

/// A tag apart: its begin, its content's rule and its end.
struct TagParts {
    begin: Expr,
    content: RuleId,
    end: Expr,
}

/// The shortest ending worth a rule of its own in [`Lowerer::choice_of_tags`]: a rule costs a
/// prediction at run time, a few bytes of chain do not.
const MIN_COMMON_ENDING: usize = 4;

/// The longest ending that every tag's begin has, when there are several tags, every begin is
/// a plain byte string (no token terminal) and the ending is at least [`MIN_COMMON_ENDING`]
/// bytes.
fn common_ending(tags: &[TagParts]) -> Option<Vec<u8>> {
    if tags.len() < 2 {
        return None;
    }
    let mut begins = Vec::with_capacity(tags.len());
    for tag in tags {
        match tag.begin.kind() {
            ExprKind::Bytes(bytes) if !bytes.contains(&TOKEN_MARKER) => {
                begins.push(&bytes[..]);
            }
            _ => return None,
        }
    }
    let first = begins[0];
    let len = begins[1..].iter().fold(first.len(), |len, begin| {
        first
            .iter()
            .rev()
            .zip(begin.iter().rev())
            .take(len)
            .take_while(|(a, b)| a == b)
            .count()
    });
    (len >= MIN_COMMON_ENDING).then(|| first[first.len() - len..].to_vec())
}

/// The token terminal of token `id`.
fn token(id: u32) -> Expr {
    Expr::bytes(sieve_ir::token::encode(id))
}

/// A token that does not resolve, at its pointer.
fn token_error(pointer: &str, e: &TokenError) -> Error {
    let kind = match e {
        TokenError::NoTokenizer => ErrorKind::Unsupported,
        _ => ErrorKind::Invalid,
    };
    let message = match e {
        TokenError::NoTokenizer => {
            "token names and excluded tokens need a tokenizer (Options::tokens), and none was given"
                .to_owned()
        }
        e => e.to_string(),
    };
    Error::new(kind, pointer, message)
}

/// Triggers and excluded strings must be non-empty (an empty one would match everywhere).
fn check_strings(strings: &[String], pointer: &str, what: &str) -> Result<(), Error> {
    match strings.iter().position(String::is_empty) {
        Some(i) => Err(Error::new(
            ErrorKind::Invalid,
            &join(pointer, i),
            format!("{what} must not be empty"),
        )),
        None => Ok(()),
    }
}
