//! The targets. Each is a plain function of bytes.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_protocol::codec;
use mcp_protocol::engine::cursor::CursorCodec;
use mcp_protocol::engine::request_state::StateSealer;
use mcp_protocol::engine::{Event, Feature, Now, Offer, ServerPeer, ServerSettings};
use mcp_protocol::frame::headers::{decode_value, encode_value};
use mcp_protocol::frame::{FrameKind, Outbound};
use mcp_protocol::jsonrpc::decode_raw;
use mcp_protocol::types::{Implementation, ServerCapabilities};
use mcp_protocol::uri_template::UriTemplate;
use mcp_protocol::{ErrorObject, RequestId};

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
    let mut whole = mcp_transport::http::sse::Parser::default();
    let at_once = whole.feed(data);
    let mut split = mcp_transport::http::sse::Parser::default();
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
        let _ = mcp_auth::BearerChallenge::parse(t);
        let _ = mcp_auth::BearerChallenge::parse_scheme(t, "DPoP");
    }
}

/// The ids of the messages of a line (one message or a batch), as JSON text.
fn ids_in(line: &str) -> Vec<String> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else { return Vec::new() };
    let messages = match value {
        serde_json::Value::Array(items) => items,
        single => vec![single],
    };
    messages.iter().filter_map(|m| m.get("id")).map(|id| id.to_string()).collect()
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

/// The server engine fed one frame per input line, each request answered at once (an error)
/// or left pending: whatever the frames, it never answers an id more often than messages
/// with that id came in (so it invents no id and answers nothing twice), and never panics.
pub fn server_engine(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let settings = Arc::new(ServerSettings::new(Implementation::new("fuzz", "1")));
    let mut peer: ServerPeer<(), ()> = ServerPeer::new(settings);
    let start = Instant::now();
    let mut answered: HashMap<String, usize> = HashMap::new();
    let mut sent: HashMap<String, usize> = HashMap::new();
    for (i, line) in t.split('\n').enumerate() {
        for id in ids_in(line) {
            *sent.entry(id).or_default() += 1;
        }
        let now = Now::new(start + Duration::from_millis(i as u64 * 100), 1_700_000_000_000 + i as u64 * 100);
        match codec::read_from_client(line) {
            Ok(frame) => peer.handle(frame, now, &Everything),
            Err(e) => peer.handle_unreadable(e.id(), e.error()),
        }
        let requests: Vec<RequestId> = peer
            .take_events()
            .into_iter()
            .filter_map(|e| match e {
                Event::Request { request, .. } => Some(request.id.clone()),
                _ => None,
            })
            .collect();
        for (n, id) in requests.into_iter().enumerate() {
            // Every other request is answered now; the rest stay pending.
            if n % 2 == 0 {
                peer.respond(&id, Err(ErrorObject::internal("fuzz")));
            }
        }
        peer.handle_timeout(now);
        for transmit in peer.take_transmits() {
            let Outbound::Frame(frame) = transmit.out else { continue };
            if let FrameKind::Response { id: Some(id), .. } = &frame.kind {
                let key = serde_json::to_string(id).unwrap_or_default();
                let count = answered.entry(key.clone()).or_default();
                *count += 1;
                let came_in = sent.get(&key).copied().unwrap_or(0);
                assert!(*count <= came_in, "id {key} answered {count} times, sent {came_in} times: {}", frame.text);
            }
        }
    }
}
