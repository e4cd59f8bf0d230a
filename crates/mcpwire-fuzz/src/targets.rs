//! The targets. Each is a plain function of bytes.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcpwire_protocol::codec;
use mcpwire_protocol::engine::cursor::CursorCodec;
use mcpwire_protocol::engine::request_state::StateSealer;
use mcpwire_protocol::engine::{Event, Feature, Now, Offer, ServerPeer, ServerSettings};
use mcpwire_protocol::frame::headers::{decode_value, encode_value};
use mcpwire_protocol::frame::{FrameKind, Outbound};
use mcpwire_protocol::jsonrpc::decode_raw;
use mcpwire_protocol::types::{Implementation, ServerCapabilities};
use mcpwire_protocol::uri_template::UriTemplate;
use mcpwire_protocol::{ErrorObject, RequestId};
use serde_json::value::RawValue;

fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// JSON-RPC framing: any text is read as a message, a batch or an error, never a panic.
pub fn jsonrpc_decode(data: &[u8]) {
    if let Some(t) = text(data) {
        let _ = decode_raw(t);
    }
}

/// The codec, both directions: any text is read in one pass, or refused.
pub fn codec_read(data: &[u8]) {
    if let Some(t) = text(data) {
        let _ = codec::read_from_client(t);
        let _ = codec::read_from_server(t);
    }
}

/// `Mcp-*` header values: decoding never panics, and what `encode_value` writes decodes
/// back to the same text.
pub fn header_value(data: &[u8]) {
    let lossy = String::from_utf8_lossy(data);
    let _ = decode_value(&lossy);
    assert_eq!(decode_value(&encode_value(&lossy)).as_deref(), Ok(&*lossy), "encode, then decode");
}

/// The SSE parser: the events do not depend on how the bytes are split into chunks.
pub fn sse_parser(data: &[u8]) {
    let mut whole = mcpwire_transport::http::sse::Parser::default();
    let at_once = whole.feed(data);
    let mut split = mcpwire_transport::http::sse::Parser::default();
    let mut one_by_one = Vec::new();
    for byte in data {
        one_by_one.extend(split.feed(std::slice::from_ref(byte)));
    }
    assert_eq!(at_once, one_by_one, "the same events, fed at once or byte by byte");
}

/// URI templates: the first line is a template, the second a URI matched against it; a
/// match's variables, expanded, give a URI that matches again.
pub fn uri_template(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let (template, uri) = t.split_once('\n').unwrap_or((t, ""));
    let Ok(parsed) = UriTemplate::parse(template) else { return };
    if let Some(vars) = parsed.matches(uri) {
        let expanded = parsed.expand(&vars);
        let _ = parsed.matches(&expanded);
    }
    let _ = parsed.expand(&HashMap::from([("id".to_owned(), t.to_owned())]));
}

/// Pagination cursors: a forged one is refused, never trusted, never a panic; a cursor we
/// made reads back to its offset.
pub fn cursor(data: &[u8]) {
    let codec = CursorCodec::with_key([7; 32]);
    if let Some(t) = text(data) {
        let _ = codec.decode(t, 1);
    }
    let offset = data.len();
    assert_eq!(codec.decode(&codec.encode(offset, 9), 9), Ok(offset));
    assert!(codec.decode(&codec.encode(offset, 9), 10).is_err(), "a cursor is bound to its list");
}

/// Sealed `requestState`: anything but what we sealed is refused.
pub fn request_state(data: &[u8]) {
    let sealer = StateSealer::with_key([3; 32]);
    if let Some(t) = text(data) {
        assert!(sealer.open(t, "req", None, 0).is_err(), "a state we did not seal is refused");
    }
}

/// `WWW-Authenticate` challenges.
pub fn bearer_challenge(data: &[u8]) {
    if let Some(t) = text(data) {
        let _ = mcpwire_auth::BearerChallenge::parse(t);
        let _ = mcpwire_auth::BearerChallenge::parse_scheme(t, "DPoP");
    }
}

/// The ids of the messages of a line (one message or a batch), as JSON text. Read as the
/// engine reads a message: its other members are only checked to be JSON, so that a number
/// too large for a float (`1e400`, valid JSON) elsewhere does not hide the id.
fn ids_in(line: &str) -> Vec<String> {
    let Ok(raw) = serde_json::from_str::<&RawValue>(line) else { return Vec::new() };
    let messages: Vec<&RawValue> = match raw.get().trim_start().starts_with('[') {
        true => serde_json::from_str(raw.get()).unwrap_or_default(),
        false => vec![raw],
    };
    messages.iter().filter_map(|m| id_member(m.get())).collect()
}

/// The `id` of one message, as JSON text (see [`id_key`]), if it has one.
fn id_member(message: &str) -> Option<String> {
    let members: HashMap<String, &RawValue> = serde_json::from_str(message).ok()?;
    let id = members.get("id")?;
    Some(match serde_json::from_str::<serde_json::Value>(id.get()) {
        Ok(value) => id_key(&value),
        Err(_) => id.get().to_owned(),
    })
}

/// An id as the engine reads it, as JSON text (`-0` is the id `0`, which serde_json reads
/// as the float -0.0; what is not a valid id stays as written, to match nothing).
fn id_key(id: &serde_json::Value) -> String {
    if id.as_f64() == Some(0.0) {
        return "0".to_owned();
    }
    serde_json::from_value::<RequestId>(id.clone())
        .ok()
        .and_then(|id| serde_json::to_string(&id).ok())
        .unwrap_or_else(|| id.to_string())
}

struct Everything;

impl Offer for Everything {
    fn offers(&self, _: Feature) -> bool {
        true
    }

    fn capabilities(&self) -> ServerCapabilities {
        ServerCapabilities::default()
    }
}

/// Checks that a frame the engine sent is JSON-RPC: one message or a non-empty batch of
/// them, each `"jsonrpc": "2.0"` and either a request or notification (a `method`) or a
/// response (an `id` and exactly one of `result` and `error`, an error with an integer `code`
/// and a string `message`). Returns the ids of the responses, as JSON text (`null` left out).
fn response_ids(text: &str) -> Vec<String> {
    let value: serde_json::Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("the engine sent text that is not JSON ({e}): {text}"));
    let messages = match value {
        serde_json::Value::Array(items) => {
            assert!(!items.is_empty(), "the engine sent an empty batch");
            items
        }
        single => vec![single],
    };
    let mut ids = Vec::new();
    for m in &messages {
        assert_eq!(m.get("jsonrpc").and_then(|v| v.as_str()), Some("2.0"), "not JSON-RPC 2.0: {text}");
        if m.get("method").is_some() {
            assert!(m["method"].is_string(), "a method that is not a string: {text}");
            continue;
        }
        let id = m.get("id").unwrap_or_else(|| panic!("a response without an id: {text}"));
        match (m.get("result"), m.get("error")) {
            (Some(_), None) => {}
            (None, Some(error)) => {
                assert!(error["code"].is_i64(), "an error without an integer code: {text}");
                assert!(error["message"].is_string(), "an error without a message: {text}");
            }
            _ => panic!("a response needs exactly one of result and error: {text}"),
        }
        // `null`: the answer to what could not be read as a request (no id to answer).
        if !id.is_null() {
            ids.push(id_key(id));
        }
    }
    ids
}

/// Takes what the engine sent and checks it (see [`server_engine`]), counting the answers.
fn check_transmits(
    peer: &mut ServerPeer<(), ()>,
    answered: &mut HashMap<String, usize>,
    sent: &HashMap<String, usize>,
) {
    for transmit in peer.take_transmits() {
        let Outbound::Frame(frame) = transmit.out else { continue };
        let in_text = response_ids(&frame.text);
        if let FrameKind::Response { id: Some(id), .. } = &frame.kind {
            let key = serde_json::to_string(id).unwrap_or_default();
            assert_eq!(in_text, std::slice::from_ref(&key), "the frame's id is not its text's: {}", frame.text);
        }
        for key in in_text {
            let count = answered.entry(key.clone()).or_default();
            *count += 1;
            let came_in = sent.get(&key).copied().unwrap_or(0);
            assert!(*count <= came_in, "id {key} answered {count} times, sent {came_in} times: {}", frame.text);
        }
    }
}

/// The server engine fed one frame per input line, every other request it surfaces answered
/// at once (an error), the rest at the end. Whatever the frames, it never panics, and:
///
/// - everything it sends is JSON-RPC (see `response_ids`), and a single response's frame
///   names the id its text answers;
/// - it never answers an id more often than messages with that id came in (it invents no id
///   and answers nothing twice), batches included;
/// - it never surfaces a request whose id is in use by a request it surfaced and that is
///   neither answered nor cancelled;
/// - a request it said was cancelled gets no answer when the application answers it anyway;
/// - every other request the application answers has its answer sent (alone or in its batch).
pub fn server_engine(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let settings = Arc::new(ServerSettings::new(Implementation::new("fuzz", "1")));
    let mut peer: ServerPeer<(), ()> = ServerPeer::new(settings);
    let start = Instant::now();
    let mut answered: HashMap<String, usize> = HashMap::new();
    let mut sent: HashMap<String, usize> = HashMap::new();
    let mut pending: Vec<RequestId> = Vec::new();
    let mut cancelled: Vec<RequestId> = Vec::new();
    let mut delivered: Vec<RequestId> = Vec::new();
    let mut now = Now::new(start, 1_700_000_000_000);
    for (i, line) in t.split('\n').enumerate() {
        for id in ids_in(line) {
            *sent.entry(id).or_default() += 1;
        }
        now = Now::new(start + Duration::from_millis(i as u64 * 100), 1_700_000_000_000 + i as u64 * 100);
        match codec::read_from_client(line) {
            Ok(frame) => peer.handle(frame, now, &Everything),
            Err(e) => peer.handle_unreadable(e.id(), e.error()),
        }
        let mut requests = Vec::new();
        for event in peer.take_events() {
            match event {
                Event::Request { request, .. } => {
                    let id = request.id.clone();
                    assert!(!pending.contains(&id), "request id {id} surfaced again while in flight");
                    requests.push(id);
                }
                Event::Cancelled { id, .. } => {
                    // Of this frame (a batch may cancel its own request) or an earlier one.
                    requests.retain(|r| *r != id);
                    pending.retain(|p| *p != id);
                    cancelled.push(id);
                }
                _ => {}
            }
        }
        for (n, id) in requests.into_iter().enumerate() {
            if n % 2 == 0 {
                peer.respond(&id, Err(ErrorObject::internal("fuzz")));
                delivered.push(id);
            } else {
                pending.push(id);
            }
        }
        peer.handle_timeout(now);
        check_transmits(&mut peer, &mut answered, &sent);
    }
    // A cancelled request's answer goes nowhere.
    for id in &cancelled {
        if pending.contains(id) {
            continue; // the id came back in a new request since
        }
        peer.respond(id, Err(ErrorObject::internal("fuzz, after the cancellation")));
        let key = serde_json::to_string(id).unwrap_or_default();
        let before = answered.get(&key).copied().unwrap_or(0);
        check_transmits(&mut peer, &mut answered, &sent);
        assert_eq!(answered.get(&key).copied().unwrap_or(0), before, "cancelled request {key} answered");
    }
    for id in std::mem::take(&mut pending) {
        peer.respond(&id, Err(ErrorObject::internal("fuzz, at the end")));
        delivered.push(id);
    }
    peer.handle_timeout(now);
    check_transmits(&mut peer, &mut answered, &sent);
    // Every request answered (and not cancelled before) has had its answer sent.
    for id in delivered {
        let key = serde_json::to_string(&id).unwrap_or_default();
        assert!(answered.contains_key(&key), "request {key} was answered, but the answer was never sent");
    }
}
