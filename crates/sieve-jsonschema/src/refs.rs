//! `$ref` resolution inside one schema document: `$id` base URIs, `$anchor`s and JSON
//! pointers.
//!
//! Invariants: every resolved reference is a JSON pointer into the document being compiled,
//! and the value there exists; nothing is fetched — a reference to a URI that no `$id` in the
//! document declares is refused as remote ([`ErrorKind::Unsupported`]). URI resolution is the
//! RFC 3986 §5.2 algorithm reduced to what schema documents use (absolute URIs, network-path,
//! absolute-path, relative-path and fragment-only references, dot segments removed).

use foldhash::{HashMap, HashMapExt};

use serde_json::Value;

use crate::keyword::{get_keyword, get_member};
use crate::{join_pointer, Error, ErrorKind};

/// The base URI of a document without `$id`: made up, so relative references resolve
/// against something, and never fetched.
const DEFAULT_BASE: &str = "https://sieve.invalid/schema.json";

/// Keywords whose values are instances, not schemas: their `$id`s are data.
const DATA_KEYWORDS: [&str; 4] = ["enum", "const", "examples", "default"];

/// The `$id`s and anchors of one document.
#[derive(Debug)]
pub(crate) struct Refs {
    /// Absolute URI (no fragment) → the pointer of the schema resource it names.
    ids: HashMap<String, String>,
    /// Absolute URI + `#` + anchor name → the pointer of the schema holding the anchor.
    anchors: HashMap<String, String>,
    /// The base URI of the document root.
    root_base: String,
    /// Whether `$id: "#name"` declares an anchor (draft-07 and earlier).
    legacy_ids: bool,
    /// The keyword that sets a base URI: `$id`, or `id` in draft-04 (where `$id` is not a
    /// keyword).
    id_keyword: &'static str,
}

impl Refs {
    /// Indexes the `$id`s and `$anchor`s of `doc`, iteratively (no recursion as deep as the
    /// document).
    pub(crate) fn index(doc: &Value, legacy_ids: bool, id_keyword: &'static str) -> Refs {
        let mut refs = Refs {
            ids: HashMap::new(),
            anchors: HashMap::new(),
            root_base: DEFAULT_BASE.to_owned(),
            legacy_ids,
            id_keyword,
        };
        let root_base = refs.apply_id(DEFAULT_BASE, doc);
        refs.root_base = root_base.clone();
        refs.ids.insert(root_base.clone(), String::new());
        let mut stack = vec![(doc, String::new(), root_base)];
        while let Some((value, pointer, base)) = stack.pop() {
            match value {
                Value::Object(map) => {
                    let base = if pointer.is_empty() {
                        base
                    } else {
                        let new = refs.apply_id(&base, value);
                        if new != base {
                            refs.ids.entry(new.clone()).or_insert(pointer.clone());
                        }
                        new
                    };
                    refs.record_anchors(&base, value, &pointer);
                    for (key, child) in map {
                        if DATA_KEYWORDS.contains(&key.as_str()) {
                            continue;
                        }
                        if child.is_object() || child.is_array() {
                            stack.push((child, join_pointer(&pointer, key), base.clone()));
                        }
                    }
                }
                Value::Array(items) => {
                    for (i, child) in items.iter().enumerate() {
                        if child.is_object() || child.is_array() {
                            stack.push((
                                child,
                                join_pointer(&pointer, &i.to_string()),
                                base.clone(),
                            ));
                        }
                    }
                }
                _ => {}
            }
        }
        refs
    }

    /// The base URI in force inside `value` when the enclosing base is `base`.
    fn apply_id(&self, base: &str, value: &Value) -> String {
        if self.legacy_ids && get_member(value, "$ref").is_some() {
            // Draft-07: `$ref` makes every sibling keyword, `$id` included, ignored.
            return base.to_owned();
        }
        match get_member(value, self.id_keyword).and_then(Value::as_str) {
            Some(id) if !(self.legacy_ids && id.starts_with('#')) => {
                let resolved = resolve(base, id);
                strip_fragment(&resolved).to_owned()
            }
            _ => base.to_owned(),
        }
    }

    fn record_anchors(&mut self, base: &str, value: &Value, pointer: &str) {
        if let Some(anchor) = get_member(value, "$anchor").and_then(Value::as_str) {
            self.anchors
                .entry(format!("{base}#{anchor}"))
                .or_insert_with(|| pointer.to_owned());
        }
        if self.legacy_ids {
            if let Some(id) = get_member(value, self.id_keyword).and_then(Value::as_str) {
                if let Some(name) = id.strip_prefix('#') {
                    self.anchors
                        .entry(format!("{base}#{name}"))
                        .or_insert_with(|| pointer.to_owned());
                }
            }
        }
    }

    /// The base URI in force at `pointer` (walking from the root, applying each `$id`).
    pub(crate) fn base_at(&self, doc: &Value, pointer: &str) -> String {
        let mut base = self.root_base.clone();
        let mut node = doc;
        if pointer.is_empty() {
            return base;
        }
        for token in tokens(&pointer[1..]) {
            let next = match node {
                Value::Object(map) => get_keyword(map, token.as_ref()),
                Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
                _ => None,
            };
            match next {
                Some(next) => {
                    node = next;
                    if node.is_object() {
                        base = self.apply_id(&base, node);
                    }
                }
                None => break,
            }
        }
        base
    }

    /// The pointer `reference` (the value of `$ref` at `pointer`, whose base URI is `base`)
    /// names.
    pub(crate) fn resolve(
        &self,
        doc: &Value,
        base: &str,
        reference: &str,
        pointer: &str,
    ) -> Result<String, Error> {
        let absolute = resolve(base, reference);
        let (resource, fragment) = match absolute.split_once('#') {
            Some((resource, fragment)) => (resource, fragment),
            None => (absolute.as_str(), ""),
        };
        let Some(resource_pointer) = self.ids.get(resource) else {
            return Err(Error::new(
                ErrorKind::Unsupported,
                pointer,
                "$ref",
                format!("`{reference}` names `{resource}`, which is not in this document; remote references are not fetched"),
            ));
        };
        let fragment = percent_decode(fragment);
        let target = if fragment.is_empty() {
            resource_pointer.clone()
        } else if fragment.starts_with('/') {
            format!("{resource_pointer}{fragment}")
        } else {
            match self.anchors.get(&format!("{resource}#{fragment}")) {
                Some(target) => target.clone(),
                None => {
                    return Err(Error::new(
                        ErrorKind::Invalid,
                        pointer,
                        "$ref",
                        format!("`{reference}`: no anchor `{fragment}` in `{resource}`"),
                    ))
                }
            }
        };
        if lookup(doc, &target).is_none() {
            return Err(Error::new(
                ErrorKind::Invalid,
                pointer,
                "$ref",
                format!("`{reference}` resolves to `{target}`, which is not in the document"),
            ));
        }
        Ok(target)
    }
}

/// The value `pointer` (RFC 6901) names in `doc`, as `serde_json::Value::pointer` finds it,
/// without allocating for tokens that hold no `~` escape: the compiler looks schema
/// locations up by pointer at every visit, and deep pointers have many tokens.
pub(crate) fn lookup<'v>(doc: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.is_empty() {
        return Some(doc);
    }
    let mut node = doc;
    for token in tokens(pointer.strip_prefix('/')?) {
        node = match node {
            Value::Object(map) => get_keyword(map, token.as_ref())?,
            Value::Array(items) => items.get(array_index(&token)?)?,
            _ => return None,
        };
    }
    Some(node)
}

/// The reference tokens of a pointer after its first `/`, unescaped (`~1` is `/`, `~0` is
/// `~`), borrowed unless they hold an escape.
fn tokens(rest: &str) -> impl Iterator<Item = std::borrow::Cow<'_, str>> {
    rest.split('/').map(|token| {
        if token.contains('~') {
            token.replace("~1", "/").replace("~0", "~").into()
        } else {
            token.into()
        }
    })
}

/// An array index token: decimal digits without a leading zero (`0` itself aside).
fn array_index(token: &str) -> Option<usize> {
    if token.starts_with('+') || (token.starts_with('0') && token.len() != 1) {
        return None;
    }
    token.parse().ok()
}

fn strip_fragment(uri: &str) -> &str {
    uri.split_once('#').map_or(uri, |(head, _)| head)
}

/// Percent-decoding of a URI fragment (invalid escapes are kept as written).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(byte) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(byte);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The scheme of `uri`, if it has one (`https`, `urn`, `tag`).
fn scheme(uri: &str) -> Option<&str> {
    let end = uri.find(':')?;
    let candidate = &uri[..end];
    let mut chars = candidate.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(candidate)
}

/// `reference` resolved against `base` (RFC 3986 §5.2, without query subtleties).
pub(crate) fn resolve(base: &str, reference: &str) -> String {
    if scheme(reference).is_some() {
        return remove_dot_segments_uri(reference);
    }
    let base = strip_fragment(base);
    if reference.is_empty() {
        return base.to_owned();
    }
    if reference.starts_with('#') {
        return format!("{base}{reference}");
    }
    let Some(scheme) = scheme(base) else {
        return reference.to_owned();
    };
    let rest = &base[scheme.len() + 1..];
    if let Some(stripped) = reference.strip_prefix("//") {
        return remove_dot_segments_uri(&format!("{scheme}://{stripped}"));
    }
    let (authority, path) = match rest.strip_prefix("//") {
        Some(after) => match after.find('/') {
            Some(i) => (format!("//{}", &after[..i]), &after[i..]),
            None => (format!("//{after}"), ""),
        },
        None => (String::new(), rest),
    };
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    let merged = if reference.starts_with('/') {
        reference.to_owned()
    } else if path.is_empty() && !authority.is_empty() {
        format!("/{reference}")
    } else {
        match path.rfind('/') {
            Some(i) => format!("{}{}", &path[..=i], reference),
            None => reference.to_owned(),
        }
    };
    format!("{scheme}:{authority}{}", remove_dot_segments(&merged))
}

fn remove_dot_segments_uri(uri: &str) -> String {
    let Some(scheme) = scheme(uri) else {
        return uri.to_owned();
    };
    let rest = &uri[scheme.len() + 1..];
    let Some(after) = rest.strip_prefix("//") else {
        return uri.to_owned();
    };
    let (authority, path) = match after.find('/') {
        Some(i) => (&after[..i], &after[i..]),
        None => return uri.to_owned(),
    };
    format!("{scheme}://{authority}{}", remove_dot_segments(path))
}

/// RFC 3986 §5.2.4 on a path (the query and fragment, if any, are kept after it).
fn remove_dot_segments(path: &str) -> String {
    let (path, tail) = match path.find(['?', '#']) {
        Some(i) => (&path[..i], &path[i..]),
        None => (path, ""),
    };
    let absolute = path.starts_with('/');
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    let last = segments.len().saturating_sub(1);
    for (i, segment) in segments.iter().enumerate() {
        match *segment {
            "." => {
                if i == last {
                    out.push("");
                }
            }
            ".." => {
                if out.len() > usize::from(absolute) {
                    out.pop();
                }
                if i == last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    let mut joined = out.join("/");
    if absolute && !joined.starts_with('/') {
        joined.insert(0, '/');
    }
    format!("{joined}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_relative_references() {
        let base = "http://example.com/root.json";
        assert_eq!(resolve(base, "item.json"), "http://example.com/item.json");
        assert_eq!(resolve(base, "#foo"), "http://example.com/root.json#foo");
        assert_eq!(
            resolve("http://example.com/a/b.json", "../c.json#/x"),
            "http://example.com/c.json#/x"
        );
        assert_eq!(resolve(base, "/d/e.json"), "http://example.com/d/e.json");
        assert_eq!(resolve(base, "urn:x:y"), "urn:x:y");
        assert_eq!(resolve("urn:x:y", "#a"), "urn:x:y#a");
    }

    /// `lookup` finds what serde_json's `Value::pointer` finds, on every pointer of a
    /// document with escaped keys, array indices and missing or malformed steps.
    #[test]
    fn lookup_agrees_with_serde_json() {
        let doc = serde_json::json!({
            "a/b": {"c~d": [1, {"e": null}], "": 2},
            "list": [[3], {"0": 4}],
            "x": {"01": 5}
        });
        let pointers = [
            "",
            "/",
            "/a~1b",
            "/a~1b/c~0d",
            "/a~1b/c~0d/1/e",
            "/a~1b/",
            "/a~1b/c~0d/01",
            "/a~1b/c~0d/+1",
            "/a~1b/c~0d/2",
            "/list/0/0",
            "/list/1/0",
            "/x/01",
            "/missing",
            "a",
            "/a~1b/c~0d/1/e/f",
            "/list/-1",
            "/a~2b",
        ];
        for pointer in pointers {
            assert_eq!(
                lookup(&doc, pointer),
                doc.pointer(pointer),
                "pointer {pointer:?}"
            );
        }
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("/a%25b"), "/a%b");
        assert_eq!(percent_decode("/%7e"), "/~");
        assert_eq!(percent_decode("%"), "%");
    }
}
