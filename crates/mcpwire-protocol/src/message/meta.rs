//! What every request carries beside its own params: `_meta`, and in 2026-07-28 the members of
//! a multi-round retry (`inputResponses`, `requestState`).
//!
//! They are split off the params while the params are read, in one pass: the params of each
//! method are then plain types, and the per-request members are read once, here.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{BorrowedStrDeserializer, MapAccessDeserializer, StringDeserializer};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::jsonrpc::RequestId;
use crate::types::{meta_keys, Meta, ProgressToken};

/// A member kept as the JSON text it was sent as, to be read when (and if) it is needed.
pub type Raw = Box<RawValue>;

/// The content of a raw JSON string that has no escapes (as version strings never do);
/// `None` for anything else.
pub fn raw_str(raw: &RawValue) -> Option<&str> {
    let inner = raw.get().strip_prefix('"')?.strip_suffix('"')?;
    (!inner.contains(['\\', '"'])).then_some(inner)
}

/// A value as raw JSON text (for what a client writes into `_meta`).
pub fn to_raw<T: Serialize + ?Sized>(value: &T) -> Raw {
    // Plain data always serializes; `null` stands in should it not.
    serde_json::value::to_raw_value(value).unwrap_or_else(|_| RawValue::from_string("null".into()).expect("null"))
}

/// The `_meta` of a request: the members the protocol defines, and the rest as sent.
///
/// The 2026-07-28 members are kept as the JSON text they were sent as: what is wrong with
/// them is the server's to say, with the error the specification gives, once it knows the
/// request is a 2026-07-28 one, and they are read straight into their types from the text.
#[derive(Debug, Clone, Default)]
pub struct RequestMeta {
    /// `progressToken`: the client wants progress notifications with this token. A token that
    /// is neither a string nor an integer is ignored.
    pub progress_token: Option<ProgressToken>,
    /// `io.modelcontextprotocol/protocolVersion` (2026-07-28).
    pub protocol_version: Option<Raw>,
    /// `io.modelcontextprotocol/clientCapabilities` (2026-07-28).
    pub client_capabilities: Option<Raw>,
    /// `io.modelcontextprotocol/clientInfo` (2026-07-28).
    pub client_info: Option<Raw>,
    /// `io.modelcontextprotocol/logLevel` (2026-07-28).
    pub log_level: Option<Raw>,
    /// Every other member (trace context, a related task, vendor keys), as sent; `None` when
    /// there is none (most requests).
    pub other: Option<Box<Meta>>,
}

fn same_raw(a: &Option<Raw>, b: &Option<Raw>) -> bool {
    a.as_ref().map(|r| r.get()) == b.as_ref().map(|r| r.get())
}

impl PartialEq for RequestMeta {
    fn eq(&self, other: &Self) -> bool {
        self.progress_token == other.progress_token
            && same_raw(&self.protocol_version, &other.protocol_version)
            && same_raw(&self.client_capabilities, &other.client_capabilities)
            && same_raw(&self.client_info, &other.client_info)
            && same_raw(&self.log_level, &other.log_level)
            && self.other == other.other
    }
}

impl RequestMeta {
    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        self.progress_token.is_none()
            && self.protocol_version.is_none()
            && self.client_capabilities.is_none()
            && self.client_info.is_none()
            && self.log_level.is_none()
            && self.other.as_ref().is_none_or(|o| o.is_empty())
    }

    /// The protocol version named, when it is a string.
    pub fn protocol_version_str(&self) -> Option<&str> {
        self.protocol_version.as_deref().and_then(raw_str)
    }

    /// Sets a member other than the protocol's own.
    pub fn insert_other(&mut self, key: impl Into<String>, value: Value) {
        self.other.get_or_insert_with(Default::default).insert(key.into(), value);
    }
}

/// A map key, borrowed from the input when it has no escapes.
pub(crate) struct Key<'de>(pub(crate) Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// A progress token read leniently: anything but a string or an integer is no token.
struct LenientToken(Option<ProgressToken>);

impl<'de> Deserialize<'de> for LenientToken {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self(match Value::deserialize(d)? {
            Value::String(s) => Some(ProgressToken::String(s)),
            Value::Number(n) => n.as_i64().map(ProgressToken::Number),
            _ => None,
        }))
    }
}

impl<'de> Deserialize<'de> for RequestMeta {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MetaVisitor;
        impl<'de> Visitor<'de> for MetaVisitor {
            type Value = RequestMeta;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a _meta object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RequestMeta, A::Error> {
                let mut meta = RequestMeta::default();
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    match key.0.as_ref() {
                        meta_keys::PROGRESS_TOKEN => meta.progress_token = map.next_value::<LenientToken>()?.0,
                        meta_keys::PROTOCOL_VERSION => meta.protocol_version = Some(map.next_value()?),
                        meta_keys::CLIENT_CAPABILITIES => meta.client_capabilities = Some(map.next_value()?),
                        meta_keys::CLIENT_INFO => meta.client_info = Some(map.next_value()?),
                        meta_keys::LOG_LEVEL => meta.log_level = Some(map.next_value()?),
                        _ => {
                            let value = map.next_value()?;
                            meta.insert_other(key.0.into_owned(), value);
                        }
                    }
                }
                Ok(meta)
            }
            // `_meta: null` (or anything not an object) is taken as no metadata.
            fn visit_unit<E>(self) -> Result<RequestMeta, E> {
                Ok(RequestMeta::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<RequestMeta, E> {
                Ok(RequestMeta::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<RequestMeta, E> {
                Ok(RequestMeta::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<RequestMeta, E> {
                Ok(RequestMeta::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<RequestMeta, E> {
                Ok(RequestMeta::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<RequestMeta, E> {
                Ok(RequestMeta::default())
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<RequestMeta, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(RequestMeta::default())
            }
        }
        d.deserialize_any(MetaVisitor)
    }
}

impl Serialize for RequestMeta {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        let members = [
            (meta_keys::PROTOCOL_VERSION, &self.protocol_version),
            (meta_keys::CLIENT_CAPABILITIES, &self.client_capabilities),
            (meta_keys::CLIENT_INFO, &self.client_info),
            (meta_keys::LOG_LEVEL, &self.log_level),
        ];
        for (key, value) in members {
            if let Some(v) = value {
                map.serialize_entry(key, v)?;
            }
        }
        if let Some(token) = &self.progress_token {
            map.serialize_entry(meta_keys::PROGRESS_TOKEN, token)?;
        }
        for (k, v) in self.other.iter().flat_map(|o| o.iter()) {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// The members of a 2026-07-28 retry of a multi-round request, as sent.
#[derive(Debug, Clone, Default)]
pub struct RoundInput {
    /// `inputResponses`: the answers, by the keys of the `inputRequests` asked.
    pub input_responses: Option<Raw>,
    /// `requestState`: the state the server sealed in the previous round.
    pub request_state: Option<Raw>,
}

impl PartialEq for RoundInput {
    fn eq(&self, other: &Self) -> bool {
        same_raw(&self.input_responses, &other.input_responses) && same_raw(&self.request_state, &other.request_state)
    }
}

impl RoundInput {
    /// Whether neither member is present.
    pub fn is_empty(&self) -> bool {
        self.input_responses.is_none() && self.request_state.is_none()
    }
}

/// Params read with their per-request members split off.
pub(crate) struct Split<P> {
    pub(crate) meta: RequestMeta,
    pub(crate) round: RoundInput,
    pub(crate) params: P,
}

/// The per-request members found while reading params.
#[derive(Default)]
struct Extras {
    meta: RequestMeta,
    round: RoundInput,
}

/// Hands the members of a params object to the params' own reader, keeping back `_meta`,
/// and `inputResponses` and `requestState` when the method has rounds (for `tasks/update`,
/// `inputResponses` is its own).
struct Filtered<'a, A> {
    inner: A,
    extras: &'a mut Extras,
    rounds: bool,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Filtered<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(Key(key)) = self.inner.next_key::<Key<'de>>()? else { return Ok(None) };
            match key.as_ref() {
                "_meta" => self.extras.meta = self.inner.next_value()?,
                "inputResponses" if self.rounds => self.extras.round.input_responses = Some(self.inner.next_value()?),
                "requestState" if self.rounds => self.extras.round.request_state = Some(self.inner.next_value()?),
                _ => {
                    return match key {
                        Cow::Borrowed(k) => seed.deserialize(BorrowedStrDeserializer::new(k)).map(Some),
                        Cow::Owned(k) => seed.deserialize(StringDeserializer::new(k)).map(Some),
                    }
                }
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.inner.next_value_seed(seed)
    }
}

/// Reads params into a [`Split`]: `rounds` says whether the method has multi-round members.
pub(crate) struct SplitSeed<P> {
    pub(crate) rounds: bool,
    pub(crate) params: PhantomData<P>,
}

impl<'de, P: Deserialize<'de>> DeserializeSeed<'de> for SplitSeed<P> {
    type Value = Split<P>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Split<P>, D::Error> {
        struct SplitVisitor<P>(bool, PhantomData<P>);
        impl<'de, P: Deserialize<'de>> Visitor<'de> for SplitVisitor<P> {
            type Value = Split<P>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a params object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Split<P>, A::Error> {
                let mut extras = Extras::default();
                let filtered = Filtered { inner: map, extras: &mut extras, rounds: self.0 };
                let params = P::deserialize(MapAccessDeserializer::new(filtered))?;
                Ok(Split { meta: extras.meta, round: extras.round, params })
            }
        }
        d.deserialize_map(SplitVisitor(self.rounds, PhantomData))
    }
}

impl<'de, P: Deserialize<'de>> Deserialize<'de> for Split<P> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        SplitSeed { rounds: true, params: PhantomData }.deserialize(d)
    }
}

/// Params as they go on the wire: the method's own members, then the per-request ones.
#[derive(Serialize)]
pub(crate) struct WireParams<'a, P: Serialize> {
    #[serde(flatten)]
    pub(crate) params: &'a P,
    #[serde(rename = "inputResponses", skip_serializing_if = "Option::is_none")]
    pub(crate) input_responses: Option<&'a RawValue>,
    #[serde(rename = "requestState", skip_serializing_if = "Option::is_none")]
    pub(crate) request_state: Option<&'a RawValue>,
    #[serde(rename = "_meta", skip_serializing_if = "WireMeta::is_empty")]
    pub(crate) meta: WireMeta<'a>,
}

impl<'a, P: Serialize> WireParams<'a, P> {
    pub(crate) fn new(params: &'a P, meta: impl Into<WireMeta<'a>>, round: &'a RoundInput) -> Self {
        Self {
            params,
            input_responses: round.input_responses.as_deref(),
            request_state: round.request_state.as_deref(),
            meta: meta.into(),
        }
    }
}

/// A request's `_meta` as it is written: its members, or the whole object written before (the
/// 2026-07-28 declaration alone, the same for every request of a connection).
#[derive(Clone, Copy)]
pub(crate) enum WireMeta<'a> {
    /// Written from its members.
    Members(&'a RequestMeta),
    /// Written already: an object.
    Written(&'a RawValue),
}

impl WireMeta<'_> {
    fn is_empty(&self) -> bool {
        match self {
            Self::Members(meta) => meta.is_empty(),
            Self::Written(_) => false,
        }
    }
}

impl<'a> From<&'a RequestMeta> for WireMeta<'a> {
    fn from(meta: &'a RequestMeta) -> Self {
        Self::Members(meta)
    }
}

impl Serialize for WireMeta<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Members(meta) => meta.serialize(s),
            Self::Written(raw) => raw.serialize(s),
        }
    }
}

/// The `_meta` of a notification: the members that route it, and the rest as sent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NotificationMeta {
    /// `io.modelcontextprotocol/subscriptionId`: the listen stream it belongs to (2026-07-28).
    pub subscription_id: Option<RequestId>,
    /// Every member, as sent.
    pub all: Meta,
}

impl NotificationMeta {
    /// Reads the `_meta` of a notification's params.
    pub fn of(params: Option<&Value>) -> Self {
        let Some(Value::Object(meta)) = params.and_then(|p| p.get("_meta")) else { return Self::default() };
        let subscription_id = meta.get(meta_keys::SUBSCRIPTION_ID).and_then(RequestId::from_value);
        Self { subscription_id, all: meta.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};

    #[derive(Debug, Deserialize, Serialize, PartialEq)]
    struct Named {
        name: String,
        #[serde(default)]
        arguments: Option<Map<String, Value>>,
    }

    #[test]
    fn per_request_members_are_split_off_in_one_pass() {
        let text = r#"{"name":"t","_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "traceparent":"00-ab","io.modelcontextprotocol/clientCapabilities":{}},"arguments":{"a":1},
            "requestState":"s","inputResponses":{"k":{}}}"#;
        let split: Split<Named> = serde_json::from_str(text).unwrap();
        assert_eq!(
            split.params,
            Named { name: "t".into(), arguments: Some(json!({"a": 1}).as_object().unwrap().clone()) }
        );
        assert_eq!(split.meta.progress_token, Some(ProgressToken::Number(7)));
        assert_eq!(split.meta.protocol_version_str(), Some("2026-07-28"));
        assert_eq!(split.meta.client_capabilities.as_deref().map(RawValue::get), Some("{}"));
        assert_eq!(split.meta.other.as_ref().and_then(|o| o.get("traceparent")), Some(&json!("00-ab")));
        assert_eq!(split.round.request_state.as_deref().and_then(raw_str), Some("s"));
        assert_eq!(split.round.input_responses.as_deref().map(RawValue::get), Some(r#"{"k":{}}"#));
        let back = serde_json::to_string(&WireParams::new(&split.params, &split.meta, &split.round));
        let again: Split<Named> = serde_json::from_str(&back.unwrap()).unwrap();
        assert_eq!((again.params, again.meta, again.round), (split.params, split.meta, split.round));
    }

    #[test]
    fn odd_meta_is_no_meta_and_odd_tokens_are_no_tokens() {
        let split: Split<Named> = serde_json::from_str(r#"{"name":"t","_meta":null}"#).unwrap();
        assert!(split.meta.is_empty());
        let split: Split<Named> = serde_json::from_str(r#"{"name":"t","_meta":{"progressToken":1.5}}"#).unwrap();
        assert_eq!(split.meta.progress_token, None);
        let escaped: Split<Named> = serde_json::from_str(r#"{"n\u0061me":"t"}"#).unwrap();
        assert_eq!(escaped.params.name, "t");
        assert!(serde_json::from_str::<Split<Named>>(r#"{"_meta":{}}"#).is_err(), "name is still required");
    }
}
