//! A result read without the member the protocol writes into its `_meta` for itself.
//!
//! A 2026-07-28 server says who it is in the `_meta` of every result
//! (`io.modelcontextprotocol/serverInfo`). That is the protocol's bookkeeping, as the
//! declaration in a request's `_meta` is (which the server keeps out of the params its
//! handlers see): the client learned who the server is when it discovered it, and a result's
//! `_meta` is left with what the server put there for the caller. Left in, it would also
//! cost every call a map of maps built, hashed and dropped.
//!
//! The members are passed over while the result is read, not removed afterwards: a reader
//! over the result object that hands every member to the result's own reader, except that
//! its `_meta` is read here, without that member, and given as absent when nothing is left.

use std::borrow::Cow;
use std::fmt;

use serde::de::value::{BorrowedStrDeserializer, StringDeserializer};
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::Value;

use crate::message::Key;
use crate::mismatch::{self, Mismatch};
use crate::types::meta_keys::SERVER_INFO;
use crate::types::Meta;

/// The member of a result that holds its metadata.
const META: &str = "_meta";

/// Reads the JSON text of a result as a `T`, its `_meta` without the server's info.
///
/// A text that does not read is read again as [`mismatch::from_str`] reads it, to say why
/// in its words (leaving a member out cannot make a result readable that was not).
pub(crate) fn read<T: DeserializeOwned>(text: &str) -> Result<T, Mismatch> {
    let mut reader = serde_json::Deserializer::from_str(text);
    match T::deserialize(ResultObject(&mut reader)) {
        Ok(value) if reader.end().is_ok() => Ok(value),
        _ => mismatch::from_str(text),
    }
}

/// Reads a result object as its inner reader would, its `_meta` through [`MetaValue`].
struct ResultObject<D>(D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for ResultObject<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(ObjectVisitor(visitor))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_struct(name, fields, ObjectVisitor(visitor))
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(ObjectVisitor(visitor))
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct enum identifier ignored_any
    }
}

/// The result's own visitor, given the object's members through [`Members`]. Anything but
/// an object is refused (and then read again plainly, which says what it is).
struct ObjectVisitor<V>(V);

impl<'de, V: Visitor<'de>> Visitor<'de> for ObjectVisitor<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(Members { inner: map, meta_next: false })
    }
}

/// The members of a result object; the value of `_meta` is read through [`MetaValue`].
struct Members<A> {
    inner: A,
    /// The key just handed over was `_meta`.
    meta_next: bool,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Members<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        let Some(Key(key)) = self.inner.next_key::<Key<'de>>()? else { return Ok(None) };
        self.meta_next = key == META;
        match key {
            Cow::Borrowed(k) => seed.deserialize(BorrowedStrDeserializer::new(k)).map(Some),
            Cow::Owned(k) => seed.deserialize(StringDeserializer::new(k)).map(Some),
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        match std::mem::take(&mut self.meta_next) {
            true => self.inner.next_value_seed(MetaSeed(seed)),
            false => self.inner.next_value_seed(seed),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// Reads the value of `_meta` for the result's own reader of it, through [`MetaValue`].
struct MetaSeed<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for MetaSeed<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(MetaValue(d))
    }
}

/// The value of `_meta`, for a field that is an optional map (as every result's is): read
/// without the server's info, and absent when nothing else is in it. A field of another
/// shape reads it as it came.
struct MetaValue<D>(D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for MetaValue<D> {
    type Error = D::Error;

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        match self.0.deserialize_option(KeptMembers)? {
            None => visitor.visit_none(),
            // Rare (a result with metadata of its own): handed over as a value, read again.
            Some(kept) => visitor.visit_some(Value::Object(kept)).map_err(de::Error::custom),
        }
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_ignored_any(visitor)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
    }
}

/// The members of a `_meta` other than the server's info; `None` when there is none.
struct KeptMembers;

impl<'de> Visitor<'de> for KeptMembers {
    type Value = Option<Meta>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_none<E>(self) -> Result<Option<Meta>, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Option<Meta>, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<Meta>, D::Error> {
        d.deserialize_map(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<Meta>, A::Error> {
        let mut kept = Meta::new();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            match key.as_ref() == SERVER_INFO {
                true => {
                    map.next_value::<IgnoredAny>()?;
                }
                false => {
                    kept.insert(key.into_owned(), map.next_value()?);
                }
            }
        }
        Ok(Some(kept).filter(|m| !m.is_empty()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{CallToolResult, ListToolsResult};
    use serde_json::json;

    #[test]
    fn the_server_info_is_left_out_of_a_results_meta_and_everything_else_kept() {
        let only_info = r#"{"content":[{"type":"text","text":"hi"}],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}"#;
        let r: CallToolResult = read(only_info).unwrap();
        assert_eq!(r.meta, None, "nothing left: absent");
        assert_eq!(
            r,
            serde_json::from_str::<CallToolResult>(
                &only_info.replace(r#","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}"#, "")
            )
            .unwrap()
        );

        let with_own = r#"{"content":[{"type":"text","text":"hi","_meta":{"io.modelcontextprotocol/serverInfo":1}}],"_meta":{"a":[1,{"b":null}],"io.modelcontextprotocol/serverInfo":{"name":"s"},"z\"q":"x"},"isError":true}"#;
        let r: CallToolResult = read(with_own).unwrap();
        assert_eq!(
            r.meta.as_ref().map(|m| m.keys().cloned().collect::<Vec<_>>()),
            Some(vec!["a".to_owned(), "z\"q".to_owned()])
        );
        assert_eq!(r.meta.unwrap()["a"], json!([1, {"b": null}]));
        assert_eq!(r.is_error, Some(true));
        // Only the result's own _meta: a content block's is its own.
        assert_eq!(serde_json::to_value(&r.content[0]).unwrap()["_meta"][SERVER_INFO], json!(1));

        for absent in [r#"{"content":[]}"#, r#"{"content":[],"_meta":null}"#, r#"{"content":[],"_meta":{}}"#] {
            let r: CallToolResult = read(absent).unwrap();
            assert_eq!(r.meta, None, "{absent}");
        }
        // A result with no _meta of its own passes it over, as before.
        let r: ListToolsResult =
            read(r#"{"tools":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"}},"nextCursor":"c"}"#)
                .unwrap();
        assert_eq!(r.next_cursor.as_deref(), Some("c"));
    }

    #[test]
    fn a_result_that_does_not_read_is_told_as_it_was_before() {
        for bad in [
            r#"{"content":"x","_meta":{"io.modelcontextprotocol/serverInfo":{}}}"#,
            r#"{"content":[]} x"#,
            "[1]",
            r#"{"content":[],"_meta":3}"#,
        ] {
            let ours = read::<CallToolResult>(bad).unwrap_err().to_string();
            let plain = mismatch::from_str::<CallToolResult>(bad).unwrap_err().to_string();
            assert_eq!(ours, plain, "{bad}");
        }
    }
}
