//! Reading frames into typed messages: the envelope first, then the params straight into the
//! method's own types, in one pass over the text.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserializer, Error as _, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::jsonrpc::{decode_raw, DecodeError, Notification, RawIncoming, RawMessage, RequestId};
use crate::message::{
    request_from_raw, Body, BodySeed, ClientNotification, ClientRequest, Decoded, FromClient, FromServer, Key,
    NotificationMeta, Notified, Received, Request, ServerNotification, ServerRequest, Split,
};
use crate::method::{Method, MethodName};

/// A request read in one pass over its text: its params go straight into the method's type
/// when `method` comes before `params` (as every client writes them). Anything else (a
/// notification, a response, an unknown method, params that do not read, odd members) fails,
/// and the frame is read again by the general path, which says precisely what is wrong.
struct OnePass<B> {
    id: RequestId,
    method: Method,
    split: Split<B>,
}

impl<'de, B: Body> Deserialize<'de> for OnePass<B> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct OnePassVisitor<B>(PhantomData<B>);
        impl<'de, B: Body> Visitor<'de> for OnePassVisitor<B> {
            type Value = OnePass<B>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a request")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OnePass<B>, A::Error> {
                let (mut version, mut id, mut method) = (false, None, None);
                let (mut split, mut raw): (Option<Split<B>>, Option<&'de RawValue>) = (None, None);
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    match key.as_ref() {
                        "jsonrpc" if !version => {
                            version = map.next_value::<Key<'de>>()?.0 == "2.0";
                            if !version {
                                return Err(A::Error::custom("not JSON-RPC 2.0"));
                            }
                        }
                        "id" if id.is_none() => id = Some(map.next_value::<RequestId>()?),
                        "method" if method.is_none() => {
                            let name = map.next_value::<Key<'de>>()?;
                            method = Some(Method::parse(&name.0).ok_or_else(|| A::Error::custom("unknown method"))?);
                        }
                        "params" if split.is_none() && raw.is_none() => match method {
                            Some(m) => split = Some(map.next_value_seed(BodySeed::<B>(m, PhantomData))?),
                            None => raw = Some(map.next_value()?),
                        },
                        "jsonrpc" | "id" | "method" | "params" | "result" | "error" => {
                            return Err(A::Error::custom("not a plain request"))
                        }
                        _ => drop(map.next_value::<IgnoredAny>()?),
                    }
                }
                let (true, Some(id), Some(method)) = (version, id, method) else {
                    return Err(A::Error::custom("not a request"));
                };
                let split = match split {
                    Some(split) => split,
                    None => B::decode(method, raw).map_err(A::Error::custom)?,
                };
                Ok(OnePass { id, method, split })
            }
        }
        d.deserialize_map(OnePassVisitor(PhantomData))
    }
}

/// A request read in one pass, if `text` is a plain request.
fn one_pass<B: Body>(text: &str) -> Option<Box<Request<B>>> {
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let OnePass { id, method, split } = serde_json::from_str::<OnePass<B>>(text).ok()?;
    let Split { meta, round, params } = split;
    Some(Box::new(Request { id, method: MethodName::Known(method), meta, round, body: Ok(params) }))
}

fn notification(method: String, params: Option<&RawValue>) -> (Notification, NotificationMeta) {
    // Params were checked to be an object or an array, which always read as a value.
    let params = params.map(|p| serde_json::from_str(p.get()).unwrap_or(serde_json::Value::Null));
    let meta = NotificationMeta::of(params.as_ref());
    (Notification { method, params }, meta)
}

fn from_client(raw: RawMessage<'_>) -> FromClient {
    match raw {
        RawMessage::Request { id, method, params } => {
            Received::Request(request_from_raw(id, method, params, ClientRequest::decode))
        }
        RawMessage::Notification { method, params } => {
            let (raw, meta) = notification(method, params);
            Received::Notification(Notified { meta, body: ClientNotification::decode(raw) })
        }
        RawMessage::Response(r) => Received::Response(r),
    }
}

fn from_server(raw: RawMessage<'_>) -> FromServer {
    match raw {
        RawMessage::Request { id, method, params } => {
            Received::Request(request_from_raw(id, method, params, ServerRequest::decode))
        }
        RawMessage::Notification { method, params } => {
            let (raw, meta) = notification(method, params);
            Received::Notification(Notified { meta, body: ServerNotification::decode(raw) })
        }
        RawMessage::Response(r) => Received::Response(r),
    }
}

fn read<M>(text: &str, each: fn(RawMessage<'_>) -> M) -> Result<Decoded<M>, DecodeError> {
    Ok(match decode_raw(text)? {
        RawIncoming::Single(m) => Decoded::Single(each(m)),
        RawIncoming::Batch(items) => Decoded::Batch(items.into_iter().map(|i| i.map(each)).collect()),
    })
}

/// Reads a frame a client sent (what a server receives).
pub fn read_from_client(text: &str) -> Result<Decoded<FromClient>, DecodeError> {
    if let Some(request) = one_pass::<ClientRequest>(text) {
        return Ok(Decoded::Single(Received::Request(request)));
    }
    read(text, from_client)
}

/// Reads a frame a server sent (what a client receives).
pub fn read_from_server(text: &str) -> Result<Decoded<FromServer>, DecodeError> {
    read(text, from_server)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{write_client_request, write_server_result, ResultContext};
    use crate::message::{RequestMeta, RoundInput, ServerResult};
    use crate::method::{Method, MethodName};
    use crate::types::{CacheHint, CallToolParams, PaginatedParams};
    use crate::{ProtocolVersion, RequestId};
    use serde_json::json;

    fn single_request(text: &str) -> crate::message::Request<ClientRequest> {
        match read_from_client(text) {
            Ok(Decoded::Single(Received::Request(r))) => *r,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn requests_are_read_into_their_types() {
        let r = single_request(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},
            "_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        assert_eq!(r.id, RequestId::Number(3));
        assert_eq!(r.method, MethodName::Known(Method::CallTool));
        let Ok(ClientRequest::CallTool(call)) = &r.body else { panic!("{r:?}") };
        assert_eq!(call.name, "echo");
        assert_eq!(call.arguments.as_ref().and_then(|a| a.get("text")), Some(&json!("hi")));
        assert_eq!(r.meta.protocol_version_str(), Some("2026-07-28"));

        // `inputResponses` is a round member of tools/call, but tasks/update's own param.
        let r = single_request(
            r#"{"jsonrpc":"2.0","id":2,"method":"tasks/update","params":{"taskId":"t","inputResponses":{"k":{}}}}"#,
        );
        let Ok(ClientRequest::UpdateTask(update)) = &r.body else { panic!("{r:?}") };
        assert!(update.input_responses.contains_key("k") && r.round.is_empty());

        let r = single_request(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        assert_eq!(r.body, Ok(ClientRequest::Ping));
        let r = single_request(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c"}}"#);
        assert_eq!(r.body, Ok(ClientRequest::ListTools(PaginatedParams { cursor: Some("c".into()) })));
    }

    #[test]
    fn the_one_pass_reader_and_the_general_one_agree() {
        for text in [
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"e","arguments":{"t":"\u00e9"},"_meta":{"progressToken":"p"}}}"#,
            r#"{"id":"x","params":{"cursor":"c"},"method":"tools/list","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","requestState":"s","inputResponses":{}},"extra":1}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
        ] {
            let fast = one_pass::<ClientRequest>(text).expect(text);
            let general = match read(text, from_client) {
                Ok(Decoded::Single(Received::Request(r))) => r,
                other => panic!("{other:?}"),
            };
            assert_eq!(fast, general, "{text}");
        }
        // What the one pass does not take is read by the general path, with its errors.
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"ping","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x/y"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        ] {
            assert!(one_pass::<ClientRequest>(text).is_none(), "{text}");
        }
    }

    #[test]
    fn errors_are_kept_with_what_could_be_read() {
        let r = single_request(r#"{"jsonrpc":"2.0","id":1,"method":"nope/x","params":{"_meta":{"progressToken":1}}}"#);
        assert_eq!(r.method, MethodName::Unknown("nope/x".into()));
        assert_eq!(r.body.unwrap_err().code, crate::error::METHOD_NOT_FOUND);
        assert!(r.meta.progress_token.is_some(), "the meta of an unknown method is still read");
        let r =
            single_request(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1}}}"#);
        let e = r.body.unwrap_err();
        assert_eq!(e.code, crate::error::INVALID_PARAMS);
        assert!(e.message.contains("tools/call"), "{e}");
        assert!(r.meta.progress_token.is_some());
        let r = single_request(r#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}"#);
        assert_eq!(r.body.unwrap_err().code, crate::error::METHOD_NOT_FOUND, "not a request a client makes");
    }

    #[test]
    fn notifications_and_batches() {
        let Ok(Decoded::Single(Received::Notification(n))) =
            read_from_client(r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":4}}"#)
        else {
            panic!()
        };
        let ClientNotification::Cancelled(c) = n.body else { panic!("{n:?}") };
        assert_eq!(c.request_id, Some(RequestId::Number(4)));
        let Ok(Decoded::Batch(items)) =
            read_from_client(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},7,{"jsonrpc":"2.0","method":"x/y"}]"#)
        else {
            panic!()
        };
        assert!(matches!(items[0], Ok(Received::Request(_))));
        assert!(items[1].is_err());
        assert!(matches!(&items[2], Ok(Received::Notification(n)) if matches!(n.body, ClientNotification::Other(_))));
        let Ok(Decoded::Single(Received::Notification(n))) = read_from_server(
            r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":9}}}"#,
        ) else {
            panic!()
        };
        assert_eq!(n.body, ServerNotification::ToolsListChanged);
        assert_eq!(n.meta.subscription_id, Some(RequestId::Number(9)));
    }

    #[test]
    fn written_requests_read_back() {
        let call = ClientRequest::CallTool(CallToolParams {
            name: "t".into(),
            arguments: Some(json!({"a": [1, 2]}).as_object().unwrap().clone()),
            task: None,
        });
        let meta = RequestMeta { progress_token: Some(crate::types::ProgressToken::Number(5)), ..Default::default() };
        let round = RoundInput {
            input_responses: Some(crate::message::to_raw(&json!({"k": {}}))),
            request_state: Some(crate::message::to_raw("s")),
        };
        let text = write_client_request(&RequestId::Number(9), &call, &meta, &round, ProtocolVersion::LATEST);
        let back = single_request(&text);
        assert_eq!((back.body, back.meta, back.round), (Ok(call), meta, round));
    }

    #[test]
    fn results_are_written_per_revision() {
        let ctx = ResultContext { server_info: None, cache: CacheHint::default() };
        let list = ServerResult::ListTools(crate::types::ListToolsResult { tools: vec![], next_cursor: None });
        let modern = write_server_result(&RequestId::Number(1), &list, ProtocolVersion::LATEST, &ctx);
        let modern: serde_json::Value = serde_json::from_str(&modern).unwrap();
        assert_eq!(modern["result"]["resultType"], "complete");
        assert_eq!(modern["result"]["cacheScope"], "private");
        let legacy = write_server_result(&RequestId::Number(1), &list, ProtocolVersion::V2025_06_18, &ctx);
        assert_eq!(legacy, r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#);
    }
}
