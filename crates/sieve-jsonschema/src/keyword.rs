//! Looking up a member of a schema object.
//!
//! serde_json's map (an `IndexMap` with `preserve_order`) hashes every look-up with SipHash. A
//! schema object has a handful of keywords and the compiler asks each one for some forty of
//! them, so a small object is scanned instead: a few length checks and short comparisons
//! where a hash costs a couple of hundred instructions. Keys are unique, so both ways find
//! the same member.

use serde_json::{Map, Value};

/// Objects with up to this many members are scanned rather than hashed.
const SCAN_LIMIT: usize = 8;

/// The value of member `name` of `map`.
pub(crate) fn get_keyword<'m>(map: &'m Map<String, Value>, name: &str) -> Option<&'m Value> {
    if map.len() <= SCAN_LIMIT {
        map.iter()
            .find(|(key, _)| key.as_str() == name)
            .map(|(_, value)| value)
    } else {
        map.get(name)
    }
}

/// The value of member `name` of `value`, when it is an object.
pub(crate) fn get_member<'v>(value: &'v Value, name: &str) -> Option<&'v Value> {
    value.as_object().and_then(|map| get_keyword(map, name))
}

#[cfg(test)]
mod tests {
    use super::{get_keyword, get_member};
    use serde_json::json;

    /// Scanned (small) and hashed (large) objects answer as `Map::get` does.
    #[test]
    fn get_keyword_finds_what_get_finds() {
        let small = json!({"type": "string", "maxLength": 3, "pattern": "a+"});
        let mut large = serde_json::Map::new();
        for i in 0..20 {
            large.insert(format!("k{i}"), json!(i));
        }
        let large = serde_json::Value::Object(large);
        for value in [&small, &large] {
            let map = value.as_object().unwrap();
            for name in [
                "type",
                "maxLength",
                "pattern",
                "k0",
                "k19",
                "k20",
                "",
                "typ",
            ] {
                assert_eq!(get_keyword(map, name), map.get(name), "{name}");
                assert_eq!(get_member(value, name), value.get(name), "{name}");
            }
        }
        assert_eq!(get_member(&json!([1, 2]), "type"), None);
    }
}
