//! Typed messages: what each side sends, as Rust enums, read once by the codec.
//!
//! - [`ClientRequest`], [`ClientNotification`], [`ClientResult`]: what a client sends.
//! - [`ServerRequest`], [`ServerNotification`], [`ServerResult`]: what a server sends.
//! - [`Request`]: a received request, its per-request members ([`RequestMeta`],
//!   [`RoundInput`]) split off, its params read into the method's type.
//! - [`Received`]: one received message of either kind; [`Decoded`]: a frame, single or batch.
//!
//! Reading is [`crate::codec::read_from_client`] and [`crate::codec::read_from_server`];
//! writing, for a revision, is [`crate::codec`]'s too.

/// Reads the params of `method` from a deserializer into a request of this type, splitting
/// off the per-request members.
macro_rules! decode_request {
    ($method:expr, $d:expr, $($m:ident => $v:ident $(($p:ty))?),* $(,)?) => {
        match $method {
            $(Method::$m => decode_request!(@one $d, $v $(($p))?),)*
            other => Err(not_a_request(other)),
        }
    };
    (@one $d:expr, $v:ident ($p:ty)) => {
        params_from::<$p, D>(Method::$v, $d).map(|s| Split { meta: s.meta, round: s.round, params: Self::$v(s.params) })
    };
    (@one $d:expr, $v:ident) => {
        params_from::<NoParams, D>(Method::$v, $d).map(|s| Split { meta: s.meta, round: s.round, params: Self::$v })
    };
}

mod client;
mod meta;
mod server;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

pub use client::{ClientNotification, ClientRequest, ClientResult};
pub use meta::{raw_str, to_raw, NotificationMeta, Raw, RequestMeta, RoundInput};
pub use server::{InputRequiredResult, ServerNotification, ServerRequest, ServerResult};

pub(crate) use meta::{Key, Split, WireMeta, WireParams};

use crate::error::ErrorObject;
use crate::jsonrpc::{InvalidMessage, RequestId, Response};
use crate::method::{Method, MethodName};

/// A received request: its id and method, its per-request members, and its params read into
/// the method's own type (or why they could not be).
///
/// The params are read before anything is decided about the request, but an error in them is
/// kept rather than answered at once: what the request is answered depends first on the
/// revision it is served in (which methods exist, which capabilities are offered), and only
/// then on its params.
#[derive(Debug, Clone, PartialEq)]
pub struct Request<B> {
    /// The id the response must carry.
    pub id: RequestId,
    /// The method, as sent.
    pub method: MethodName,
    /// `_meta`.
    pub meta: RequestMeta,
    /// `inputResponses` and `requestState` (2026-07-28 multi-round requests).
    pub round: RoundInput,
    /// The request, or the error that answers it: `-32601` for a method that is not a
    /// request of this direction, `-32602` for params that do not read.
    pub body: Result<B, ErrorObject>,
}

/// A received notification, with the `_meta` members that route it.
#[derive(Debug, Clone, PartialEq)]
pub struct Notified<N> {
    /// `_meta`.
    pub meta: NotificationMeta,
    /// The notification.
    pub body: N,
}

/// One received message.
#[derive(Debug, Clone, PartialEq)]
pub enum Received<Req, Note> {
    /// A request (boxed: it is large, and handed on several times before it is served).
    Request(Box<Request<Req>>),
    /// A notification.
    Notification(Notified<Note>),
    /// A response to one of our requests.
    Response(Response),
}

/// What a server receives.
pub type FromClient = Received<ClientRequest, ClientNotification>;
/// What a client receives.
pub type FromServer = Received<ServerRequest, ServerNotification>;

/// A received frame: one message, or a JSON-RPC batch of them.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded<M> {
    /// One message.
    Single(M),
    /// A batch; each element read on its own.
    Batch(Vec<Result<M, InvalidMessage>>),
}

/// Params for methods that have none of their own (any members are ignored).
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct NoParams {}

/// Why a request's params could not be read.
#[derive(Debug)]
pub(crate) enum ParamsError {
    /// The method is not a request of this direction.
    NotARequest(Method),
    /// The params do not have the method's shape.
    Invalid(serde_json::Error),
}

impl std::fmt::Display for ParamsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotARequest(m) => write!(f, "{m} is not a request"),
            Self::Invalid(e) => e.fmt(f),
        }
    }
}

impl ParamsError {
    pub(crate) fn into_error(self, method: Method) -> ErrorObject {
        match self {
            Self::NotARequest(m) => ErrorObject::method_not_found(m.as_str()),
            Self::Invalid(e) => ErrorObject::invalid_params(format!("{method}: {e}")),
        }
    }
}

/// Reads params from `d` with the per-request members split off: `_meta`, and for a method
/// with multi-round requests `inputResponses` and `requestState`.
pub(crate) fn params_from<'de, P: serde::Deserialize<'de>, D: serde::Deserializer<'de>>(
    method: Method,
    d: D,
) -> Result<Split<P>, D::Error> {
    use serde::de::DeserializeSeed;
    meta::SplitSeed { rounds: method.allows_input_rounds(), params: std::marker::PhantomData }.deserialize(d)
}

/// A request body of one direction, read once its method is known.
pub(crate) trait Body: Sized {
    /// Reads the params of `method` from `d` into a body.
    fn decode_from<'de, D: serde::Deserializer<'de>>(method: Method, d: D) -> Result<Split<Self>, D::Error>;

    /// Reads params given as a slice of the input (absent: an empty object).
    fn decode(method: Method, params: Option<&RawValue>) -> Result<Split<Self>, ParamsError> {
        let mut reader = serde_json::Deserializer::from_str(params.map_or("{}", RawValue::get));
        let split = Self::decode_from(method, &mut reader).map_err(|e| {
            if e.to_string().starts_with(NOT_A_REQUEST) {
                ParamsError::NotARequest(method)
            } else {
                ParamsError::Invalid(e)
            }
        })?;
        reader.end().map_err(ParamsError::Invalid)?;
        Ok(split)
    }
}

/// The start of the error a [`Body`] gives for a method that is no request of its direction.
pub(crate) const NOT_A_REQUEST: &str = "not a request of this direction: ";

/// The error of a method that is no request of this direction.
pub(crate) fn not_a_request<E: serde::de::Error>(method: Method) -> E {
    E::custom(format_args!("{NOT_A_REQUEST}{method}"))
}

/// Reads `method`'s request from `d` as the [`Body`] `B` (a `DeserializeSeed`).
pub(crate) struct BodySeed<B>(pub(crate) Method, pub(crate) std::marker::PhantomData<B>);

impl<'de, B: Body> serde::de::DeserializeSeed<'de> for BodySeed<B> {
    type Value = Split<B>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Split<B>, D::Error> {
        B::decode_from(self.0, d)
    }
}

/// Reads the params of a notification leniently: `None` when they do not have the shape.
pub(crate) fn value_params<T: serde::de::DeserializeOwned>(params: Option<&Value>) -> Option<T> {
    match params {
        Some(v) => T::deserialize(v).ok(),
        None => T::deserialize(&Value::Object(Default::default())).ok(),
    }
}

/// Only `_meta`, read from params that do not otherwise have their method's shape (so that
/// the error can still be answered in the right revision).
#[derive(Deserialize)]
struct MetaOnly {
    #[serde(rename = "_meta", default)]
    meta: RequestMeta,
}

/// Builds a received request from its raw parts with `decode` (the direction's reader).
pub(crate) fn request_from_raw<B>(
    id: RequestId,
    method: String,
    params: Option<&RawValue>,
    decode: impl FnOnce(Method, Option<&RawValue>) -> Result<Split<B>, ParamsError>,
) -> Box<Request<B>> {
    let name = MethodName::parse(&method);
    let Some(known) = name.known() else {
        let meta = params.and_then(|p| serde_json::from_str::<MetaOnly>(p.get()).ok()).map(|m| m.meta);
        let body = Err(ErrorObject::method_not_found(&method));
        return Box::new(Request {
            id,
            method: name,
            meta: meta.unwrap_or_default(),
            round: RoundInput::default(),
            body,
        });
    };
    match decode(known, params) {
        Ok(split) => {
            Box::new(Request { id, method: name, meta: split.meta, round: split.round, body: Ok(split.params) })
        }
        Err(e) => {
            let meta = params.and_then(|p| serde_json::from_str::<MetaOnly>(p.get()).ok()).map(|m| m.meta);
            let body = Err(e.into_error(known));
            Box::new(Request { id, method: name, meta: meta.unwrap_or_default(), round: RoundInput::default(), body })
        }
    }
}
