//! Reading members of the small JSON objects a message is made of.
//!
//! serde_json's map (kept in order by `preserve_order`) hashes every key it looks up with
//! SipHash. The objects of a request have a handful of members, where comparing the keys one
//! by one is several times cheaper; the hot paths read their members through these.

use serde_json::{Map, Value};

/// Objects up to this many members are searched key by key; larger ones through their index.
const LINEAR_MAX: usize = 8;

/// The member `key` of `obj`.
pub fn field<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if obj.len() <= LINEAR_MAX {
        obj.iter().find_map(|(k, v)| (k == key).then_some(v))
    } else {
        obj.get(key)
    }
}

/// The member `key` of `value`, when `value` is an object that has it.
pub fn member<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match value {
        Value::Object(obj) => field(obj, key),
        _ => None,
    }
}

/// The member `key` of `params`, when there are params and they are an object that has it.
pub fn param<'a>(params: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    params.and_then(|p| member(p, key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_members_in_small_and_large_objects() {
        let small = json!({"a": 1, "b": {"c": 2}});
        assert_eq!(member(&small, "a"), Some(&json!(1)));
        assert_eq!(param(Some(&small), "b").and_then(|b| member(b, "c")), Some(&json!(2)));
        assert_eq!(member(&small, "z"), None);
        assert_eq!(member(&json!([1]), "a"), None);
        assert_eq!(param(None, "a"), None);
        let large: Map<String, Value> = (0..20).map(|i| (format!("k{i}"), json!(i))).collect();
        assert_eq!(field(&large, "k17"), Some(&json!(17)));
        assert_eq!(field(&large, "k20"), None);
    }
}
