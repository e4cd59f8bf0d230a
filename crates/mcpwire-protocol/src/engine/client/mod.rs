//! The client role: finding out the server's era (a `server/discover` probe, falling back to
//! `initialize`, never on one error code alone), the `_meta` every 2026-07-28 request carries,
//! and the requests of the server's it serves.

mod listen;
mod reply;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::peer::{Core, Event, Events, Failure, Fifo, Now, SendOptions, Transmit, Transmits, Written};
use super::role::{Client, Role};
use crate::codec;
use crate::error::ErrorObject;
use crate::frame::{headers, Frame, Header};
use crate::jsonrpc::{self, InvalidMessage, RequestId, Response};
use crate::message::{
    to_raw, ClientNotification, ClientRequest, ClientResult, Decoded, FromServer, Notified, Received, Request,
    RequestMeta, RoundInput, ServerNotification, ServerRequest, WireMeta,
};
use crate::method::{Method, MethodName};
use crate::revision::{Era, ProtocolVersion, Sender};
use crate::types::{
    meta_keys, ClientCapabilities, DiscoverResult, Implementation, InitializeParams, LoggingLevel, ServerCapabilities,
    SetLevelParams,
};
use listen::Listens;
use reply::Expect;
pub use reply::{InputRequest, Reply, Resume};

/// A client's settings, shared by all its connections.
#[derive(Debug, Clone)]
pub struct ClientSettings {
    /// Who the client is.
    pub info: Implementation,
    /// What it declares, per revision (what has a handler, in the shape each revision
    /// defines): one entry per revision, oldest first.
    pub capabilities: Vec<(ProtocolVersion, ClientCapabilities)>,
    /// A revision to speak, instead of detecting the server's.
    pub pinned: Option<ProtocolVersion>,
    /// With a pinned legacy revision: accept another legacy revision the server answers.
    pub accept_negotiated: bool,
    /// How long the `server/discover` probe waits before deciding the server is legacy.
    pub probe_timeout: Duration,
    /// How long the handshake's requests may take.
    pub request_timeout: Duration,
    /// The log level asked for (legacy: `logging/setLevel` after the handshake; modern: in
    /// every request's `_meta`).
    pub log_level: Option<LoggingLevel>,
    /// How many times a 2026-07-28 request may be sent again with answers to the server's
    /// questions (`input_required`); one more question fails it with
    /// [`Failure::TooManyRounds`].
    pub max_input_rounds: u32,
}

impl ClientSettings {
    /// The capabilities declared to a server of revision `version`.
    pub fn capabilities(&self, version: ProtocolVersion) -> ClientCapabilities {
        self.declared(version).cloned().unwrap_or_default()
    }

    fn declared(&self, version: ProtocolVersion) -> Option<&ClientCapabilities> {
        self.capabilities.iter().find(|(v, _)| *v == version).map(|(_, c)| c)
    }

    /// Whether the tasks extension is declared to a server of revision `version`
    /// (2026-07-28).
    pub fn declares_tasks(&self, version: ProtocolVersion) -> bool {
        self.declared(version)
            .and_then(|c| c.extensions.as_ref())
            .is_some_and(|e| e.contains_key(crate::types::TASKS_EXTENSION))
    }

    /// The client's info as revision `version` writes it.
    pub fn info_value(&self, version: ProtocolVersion) -> Value {
        let mut value = serde_json::to_value(&self.info).unwrap_or(Value::Null);
        if let Value::Object(o) = &mut value {
            codec::shape_implementation(o, version);
        }
        value
    }
}

/// What was agreed with the server.
#[derive(Debug, Clone, PartialEq)]
pub struct Negotiated {
    /// The server's era.
    pub era: Era,
    /// The revision spoken.
    pub version: ProtocolVersion,
    /// Who the server says it is.
    pub server_info: Option<Implementation>,
    /// What it offers.
    pub capabilities: ServerCapabilities,
    /// How to use it.
    pub instructions: Option<String>,
}

/// Why connecting failed.
#[derive(Debug, Clone, PartialEq)]
pub enum ConnectError {
    /// The connection closed first.
    Closed,
    /// A handshake request got no answer in time.
    TimedOut {
        /// The method.
        method: Method,
        /// How long it waited.
        timeout: Duration,
    },
    /// The server refused a handshake request.
    Refused {
        /// The method.
        method: Method,
        /// The server's error.
        error: ErrorObject,
    },
    /// The server's answer is not what the method returns.
    Malformed {
        /// The method.
        method: Method,
        /// What is wrong.
        detail: String,
    },
    /// No revision could be agreed.
    Negotiation(String),
}

/// What the client role tells the application besides requests.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientNews {
    /// The server's era and revision are known: requests may be sent.
    Connected(Box<Negotiated>),
    /// Connecting failed; the connection is useless.
    ConnectFailed(ConnectError),
    /// A notification of an open `subscriptions/listen` stream of ours (2026-07-28): it
    /// carries the stream's request id as its `subscriptionId`.
    Listened {
        /// The listen request.
        id: RequestId,
        /// The notification (the acknowledgement first).
        notification: ServerNotification,
    },
}

/// What the client keeps about a request of the server's it serves.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct ClientServing;

impl Role for Client {
    type Served = Box<Request<ServerRequest>>;
    type Notified = Notified<ServerNotification>;
    type News = ClientNews;
    type Reply = Reply;
    type Serving = ClientServing;
}

/// A step of the handshake waiting for its answer.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// The `server/discover` probe, as `version`.
    Probe(ProtocolVersion),
    /// `server/discover` as a chosen modern revision; `pinned`: the application chose it;
    /// `retried`: a `-32022` was already answered once.
    Discover { version: ProtocolVersion, pinned: bool, retried: bool },
    /// `initialize` offering a legacy revision; `strict`: only that one will do.
    Initialize { offered: ProtocolVersion, strict: bool },
    /// `logging/setLevel` after the handshake: its answer is not waited for.
    SetLevel,
}

/// What waits for a request of ours.
enum Waiting<W> {
    /// The application, and what the answer may be.
    App(W, Expect),
    Handshake(Step),
}

/// The client's engine for one connection.
pub struct ClientPeer<W = (), H = ()> {
    settings: Arc<ClientSettings>,
    negotiated: Negotiated,
    connected: bool,
    log_level: Option<LoggingLevel>,
    core: Core<Waiting<W>, H, ClientServing>,
    events: Fifo<Event<Client, W, H>, 1>,
    /// Our open `subscriptions/listen` requests.
    listens: Listens,
    /// What our 2026-07-28 requests declare, written once for the revision spoken.
    declaration: Option<Declaration>,
}

/// What every 2026-07-28 request of a connection declares in its `_meta`, written once: the
/// settings do not change, and writing the capabilities and `clientInfo` again for every
/// request was about 4% of the client's work on a small call (a profile over stdio).
struct Declaration {
    version: ProtocolVersion,
    /// `protocolVersion`.
    version_text: Box<RawValue>,
    /// `clientCapabilities` as the settings declare them.
    capabilities: Box<RawValue>,
    /// The same with the tasks extension added (a call the server runs only as a task).
    capabilities_with_tasks: Box<RawValue>,
    /// `clientInfo`.
    info: Box<RawValue>,
    /// The whole `_meta` of a request that has nothing else in it: the three members above.
    written: Box<RawValue>,
    /// The same with `capabilities_with_tasks`.
    written_with_tasks: Box<RawValue>,
}

impl Declaration {
    fn of(settings: &ClientSettings, version: ProtocolVersion) -> Self {
        let mut capabilities = settings.capabilities(version);
        let declared = to_raw(&capabilities);
        let extensions = capabilities.extensions.get_or_insert_with(Default::default);
        extensions.entry(crate::types::TASKS_EXTENSION).or_insert_with(|| serde_json::json!({}));
        let (version_text, with_tasks, info) =
            (to_raw(version.as_str()), to_raw(&capabilities), to_raw(&settings.info_value(version)));
        let written = |capabilities: &RawValue| {
            to_raw(&RequestMeta {
                protocol_version: Some(version_text.clone()),
                client_capabilities: Some(capabilities.to_owned()),
                client_info: Some(info.clone()),
                ..RequestMeta::default()
            })
        };
        Self {
            version,
            written: written(&declared),
            written_with_tasks: written(&with_tasks),
            version_text,
            capabilities: declared,
            capabilities_with_tasks: with_tasks,
            info,
        }
    }

    /// The `_meta` of a request with nothing else in it, written.
    fn written(&self, declare_tasks: bool) -> &RawValue {
        match declare_tasks {
            true => &self.written_with_tasks,
            false => &self.written,
        }
    }
}

/// How a request of ours is sent.
#[derive(Debug, Clone, Default)]
pub struct RequestOptions {
    /// Fail it after this long (the server is told).
    pub timeout: Option<Duration>,
    /// Ask for progress notifications.
    pub progress: bool,
    /// A multi-round retry's answers and state (2026-07-28).
    pub round: RoundInput,
    /// Extra `_meta` members (trace context, ...).
    pub meta: crate::types::Meta,
    /// Extra HTTP headers of a 2026-07-28 request (a tool's `Mcp-Param-*`).
    pub headers: Vec<(Header, String)>,
    /// Declare the tasks extension in this 2026-07-28 request's capabilities, whatever the
    /// client declares otherwise (a call that the server runs only as a task).
    pub declare_tasks: bool,
}

/// Why a request was not sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotSent {
    /// The connection is closed.
    Closed,
    /// The params cannot be sent (they must be a JSON object to carry `_meta`).
    InvalidParams(String),
    /// The method does not exist in the negotiated revision.
    Unsupported {
        /// The method.
        method: Method,
        /// The revision.
        version: ProtocolVersion,
    },
}

impl<W, H: Clone + Default> ClientPeer<W, H> {
    /// An engine for one connection; nothing is sent until [`Self::connect`].
    pub fn new(settings: Arc<ClientSettings>) -> Self {
        let version = settings.pinned.unwrap_or(ProtocolVersion::LATEST_LEGACY);
        let log_level = settings.log_level;
        Self {
            settings,
            negotiated: Negotiated {
                era: version.era(),
                version,
                server_info: None,
                capabilities: ServerCapabilities::default(),
                instructions: None,
            },
            connected: false,
            log_level,
            core: Core::default(),
            events: Fifo::default(),
            listens: Listens::default(),
            declaration: None,
        }
    }

    /// Starts the handshake: a pinned legacy revision goes straight to `initialize`; a
    /// pinned modern one to `server/discover` as it; otherwise the era is detected (a
    /// `server/discover` probe; a discover result means modern, a `-32022` naming a modern
    /// revision too; any other error, or no answer within the probe timeout, means legacy).
    /// A connection that closed before this call fails the handshake at once (the closing
    /// may have been seen first: a server that exits as it starts).
    pub fn connect(&mut self, now: Now) {
        if self.core.closed {
            return self.failed(ConnectError::Closed);
        }
        let settings = self.settings.clone();
        match settings.pinned {
            Some(v) if !v.is_modern() => self.initialize(v, !settings.accept_negotiated, now),
            Some(v) => self.discover(Step::Discover { version: v, pinned: true, retried: false }, now),
            None => self.discover(Step::Probe(ProtocolVersion::LATEST), now),
        }
    }

    /// What was agreed (before the handshake ends: what is being tried).
    pub fn negotiated(&self) -> &Negotiated {
        &self.negotiated
    }

    /// Whether the handshake has ended well.
    pub fn is_connected(&self) -> bool {
        self.connected
    }

    /// The settings.
    pub fn settings(&self) -> &Arc<ClientSettings> {
        &self.settings
    }

    /// Refreshes what is known of a modern server (a later `server/discover`).
    pub fn adopt_discovered(&mut self, discovered: DiscoverResult) {
        let version = self.negotiated.version;
        self.adopt_modern(version, discovered);
    }

    /// Switches the modern revision spoken (after a `-32022` naming another).
    pub fn set_version(&mut self, version: ProtocolVersion) {
        self.negotiated.version = version;
    }

    /// Sets the log level asked for in every later 2026-07-28 request.
    pub fn set_log_level(&mut self, level: LoggingLevel) {
        self.log_level = Some(level);
    }

    /// The `_meta` a request carries in revision `version`.
    fn request_meta(
        &mut self,
        version: ProtocolVersion,
        extra: crate::types::Meta,
        declare_tasks: bool,
    ) -> RequestMeta {
        let other = (!extra.is_empty()).then(|| Box::new(extra));
        let mut meta = RequestMeta { other, ..RequestMeta::default() };
        if version.is_modern() {
            let declaration = self.declaration(version);
            meta.protocol_version = Some(declaration.version_text.clone());
            meta.client_capabilities = Some(match declare_tasks {
                true => declaration.capabilities_with_tasks.clone(),
                false => declaration.capabilities.clone(),
            });
            meta.client_info = Some(declaration.info.clone());
            meta.log_level = self.log_level.map(|l| to_raw(&l));
        }
        meta
    }

    /// What the requests of `version` (2026-07-28) declare, written when first needed.
    fn declaration(&mut self, version: ProtocolVersion) -> &Declaration {
        if self.declaration.as_ref().is_some_and(|d| d.version != version) {
            self.declaration = None;
        }
        let settings = &self.settings;
        self.declaration.get_or_insert_with(|| Declaration::of(settings, version))
    }

    /// A request of ours written: its `_meta` as `request_meta` makes it, with `token` and
    /// `extra`. A 2026-07-28 request with nothing else in its `_meta` (most of them) gets
    /// the declaration written once for all: the same text, with neither its three members
    /// copied nor their keys escaped again for each request.
    #[allow(clippy::too_many_arguments)]
    fn write_request(
        &mut self,
        id: &RequestId,
        request: &ClientRequest,
        version: ProtocolVersion,
        token: Option<crate::types::ProgressToken>,
        extra: crate::types::Meta,
        declare_tasks: bool,
        round: &RoundInput,
    ) -> String {
        if version.is_modern() && token.is_none() && extra.is_empty() && self.log_level.is_none() {
            let written = WireMeta::Written(self.declaration(version).written(declare_tasks));
            return codec::write_client_request_with(id, request, written, round, version);
        }
        let mut meta = self.request_meta(version, extra, declare_tasks);
        meta.progress_token = token;
        codec::write_client_request(id, request, &meta, round, version)
    }

    /// The standard HTTP headers of a message of ours in `version` (2026-07-28: the version,
    /// the method and what the request is about; legacy: the version negotiated, once it is).
    fn headers(&self, version: ProtocolVersion, method: Method, name: Option<&str>) -> Vec<(Header, String)> {
        if version.is_modern() {
            let mut list = vec![
                (Header::Borrowed(headers::PROTOCOL_VERSION), version.as_str().to_owned()),
                (Header::Borrowed(headers::METHOD), method.as_str().to_owned()),
            ];
            if let Some(name) = name {
                list.push((Header::Borrowed(headers::NAME), headers::encode_value(name)));
            }
            list
        } else if self.connected || method == Method::Initialized {
            vec![(Header::Borrowed(headers::PROTOCOL_VERSION), version.as_str().to_owned())]
        } else {
            Vec::new()
        }
    }

    fn send_step(
        &mut self,
        request: ClientRequest,
        version: ProtocolVersion,
        step: Step,
        options: SendOptions,
        now: Now,
    ) {
        let (id, _) = self.core.allocate(false);
        let text = self.write_request(&id, &request, version, None, Default::default(), false, &RoundInput::default());
        let headers = self.headers(version, request.method(), request.name());
        let written = Written { id, method: request.method().into(), text, token: None, headers };
        self.core.send(written, &options, Waiting::Handshake(step), now.instant);
    }

    fn discover(&mut self, step: Step, now: Now) {
        let (version, timeout, cancel_on_timeout) = match step {
            Step::Probe(v) => (v, self.settings.probe_timeout, false),
            Step::Discover { version, .. } => (version, self.settings.request_timeout, true),
            _ => return,
        };
        let options = SendOptions { timeout: Some(timeout), cancel_on_timeout, ..SendOptions::default() };
        self.send_step(ClientRequest::Discover, version, step, options, now);
    }

    fn initialize(&mut self, offered: ProtocolVersion, strict: bool, now: Now) {
        self.negotiated.era = Era::Legacy;
        self.negotiated.version = offered;
        let params = InitializeParams {
            protocol_version: offered.as_str().to_owned(),
            capabilities: self.settings.capabilities(offered),
            client_info: self.settings.info.clone(),
        };
        // `initialize` must not be cancelled.
        let options = SendOptions { timeout: Some(self.settings.request_timeout), ..SendOptions::default() };
        self.send_step(
            ClientRequest::Initialize(Box::new(params)),
            offered,
            Step::Initialize { offered, strict },
            options,
            now,
        );
    }

    /// The modern revision to use from a server's list, respecting a pinned one.
    fn pick_modern<'a>(&self, supported: impl IntoIterator<Item = &'a str>) -> Option<ProtocolVersion> {
        let pinned = self.settings.pinned;
        supported
            .into_iter()
            .filter_map(ProtocolVersion::parse)
            .filter(|v| v.is_modern() && pinned.is_none_or(|p| p == *v))
            .max()
    }

    fn adopt_modern(&mut self, version: ProtocolVersion, discovered: DiscoverResult) {
        let server_info = discovered
            .extra
            .get("_meta")
            .and_then(|m| m.get(meta_keys::SERVER_INFO))
            .and_then(|i| Implementation::deserialize(i).ok());
        self.negotiated = Negotiated {
            era: Era::Modern,
            version,
            server_info,
            capabilities: discovered.capabilities,
            instructions: discovered.instructions,
        };
    }

    fn connected(&mut self) {
        self.connected = true;
        self.events.push_back(Event::Role(ClientNews::Connected(Box::new(self.negotiated.clone()))));
    }

    fn failed(&mut self, error: ConnectError) {
        self.events.push_back(Event::Role(ClientNews::ConnectFailed(error)));
    }

    /// The supported modern revision a `-32022` names, if any.
    fn modern_from_error(&self, error: &ErrorObject) -> Option<ProtocolVersion> {
        self.pick_modern(error.supported_versions())
    }

    fn step_answered(&mut self, step: Step, outcome: Result<Box<RawValue>, Failure>, now: Now) {
        match step {
            Step::Probe(_) => match outcome.map(|raw| read_discovered(&raw)) {
                Ok(Ok(discovered)) => {
                    match self.pick_modern(discovered.supported_versions.iter().map(String::as_str)) {
                        Some(v) if v == ProtocolVersion::LATEST => {
                            self.adopt_modern(v, discovered);
                            self.connected();
                        }
                        Some(v) => self.discover(Step::Discover { version: v, pinned: false, retried: false }, now),
                        // No modern revision in common: legacy.
                        None => self.initialize(ProtocolVersion::LATEST_LEGACY, false, now),
                    }
                }
                Err(Failure::Closed) => self.failed(ConnectError::Closed),
                Err(Failure::Error(e)) => match self.modern_from_error(&e) {
                    Some(v) => self.discover(Step::Discover { version: v, pinned: false, retried: false }, now),
                    None => self.initialize(ProtocolVersion::LATEST_LEGACY, false, now),
                },
                // No answer in time, or one that is not a discover result: legacy.
                Ok(Err(_)) | Err(Failure::TimedOut | Failure::Malformed(_) | Failure::TooManyRounds(_)) => {
                    self.initialize(ProtocolVersion::LATEST_LEGACY, false, now)
                }
            },
            Step::Discover { version, pinned, retried } => match outcome {
                Ok(value) => match read_discovered(&value) {
                    Ok(discovered) => {
                        let common = self.pick_modern(discovered.supported_versions.iter().map(String::as_str));
                        if pinned && common.is_none() {
                            return self.failed(ConnectError::Negotiation(format!(
                                "the server supports {:?}, not the pinned {version}",
                                discovered.supported_versions
                            )));
                        }
                        self.adopt_modern(version, discovered);
                        self.connected();
                    }
                    Err(detail) => self.failed(ConnectError::Malformed { method: Method::Discover, detail }),
                },
                Err(Failure::Error(e)) => {
                    // A server may refuse a first request it cannot yet place: once more, if
                    // it names the pinned revision among those it supports.
                    let names_it = self.modern_from_error(&e) == Some(version);
                    if pinned && !retried && names_it {
                        self.discover(Step::Discover { version, pinned, retried: true }, now);
                    } else {
                        self.failed(ConnectError::Refused { method: Method::Discover, error: e });
                    }
                }
                Err(f) => self.failed(self.failure_error(Method::Discover, f)),
            },
            Step::Initialize { offered, strict } => match outcome {
                Ok(raw) => match self.read_initialized(&raw, offered, strict) {
                    Ok(()) => {
                        let text = codec::write_client_notification(&ClientNotification::Initialized);
                        let version = self.negotiated.version;
                        let headers = self.headers(version, Method::Initialized, None);
                        self.core.notify_with(Method::Initialized.into(), text, headers);
                        let level = self.log_level.filter(|_| self.negotiated.capabilities.logging.is_some());
                        if let Some(level) = level {
                            let options =
                                SendOptions { timeout: Some(self.settings.request_timeout), ..SendOptions::default() };
                            let request = ClientRequest::SetLevel(SetLevelParams { level });
                            self.send_step(request, self.negotiated.version, Step::SetLevel, options, now);
                        }
                        self.connected();
                    }
                    Err(e) => self.failed(e),
                },
                Err(Failure::Error(e)) => self.failed(ConnectError::Refused { method: Method::Initialize, error: e }),
                Err(f) => self.failed(self.failure_error(Method::Initialize, f)),
            },
            Step::SetLevel => {}
        }
    }

    fn failure_error(&self, method: Method, failure: Failure) -> ConnectError {
        match failure {
            Failure::Closed => ConnectError::Closed,
            Failure::TimedOut => ConnectError::TimedOut { method, timeout: self.settings.request_timeout },
            Failure::Malformed(detail) => ConnectError::Malformed { method, detail },
            // A handshake request has no rounds.
            failure @ Failure::TooManyRounds(_) => ConnectError::Malformed { method, detail: failure.to_string() },
            Failure::Error(error) => ConnectError::Refused { method, error },
        }
    }

    fn read_initialized(&mut self, raw: &RawValue, offered: ProtocolVersion, strict: bool) -> Result<(), ConnectError> {
        let malformed = |detail: String| ConnectError::Malformed { method: Method::Initialize, detail };
        // Read member by member, once a connection: what is wrong is told precisely.
        let result: Value = serde_json::from_str(raw.get()).map_err(|e| malformed(e.to_string()))?;
        let answered = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| malformed("the result has no protocolVersion".into()))?;
        let version = ProtocolVersion::parse(answered).filter(|v| !v.is_modern()).ok_or_else(|| {
            ConnectError::Negotiation(format!("the server answered initialize with protocol version {answered:?}"))
        })?;
        if strict && version != offered {
            return Err(ConnectError::Negotiation(format!(
                "protocol version {offered} is pinned but the server offers {version}"
            )));
        }
        let capabilities = match result.get("capabilities") {
            Some(c) => ServerCapabilities::deserialize(c).map_err(|e| malformed(e.to_string()))?,
            None => ServerCapabilities::default(),
        };
        self.negotiated = Negotiated {
            era: Era::Legacy,
            version,
            server_info: result.get("serverInfo").and_then(|i| Implementation::deserialize(i).ok()),
            capabilities,
            instructions: result.get("instructions").and_then(Value::as_str).map(str::to_owned),
        };
        Ok(())
    }

    // ---------------------------------------------------------------------------------------
    // Inputs
    // ---------------------------------------------------------------------------------------

    /// Handles a decoded frame from the server.
    pub fn handle(&mut self, frame: Decoded<FromServer>, now: Now) {
        match frame {
            Decoded::Single(message) => self.handle_message(message, now),
            Decoded::Batch(items) => {
                for item in items {
                    match item {
                        Ok(message) => self.handle_message(message, now),
                        Err(invalid) => self.handle_invalid(invalid, now),
                    }
                }
            }
        }
    }

    /// A message that is not valid JSON-RPC. A bad request with an id is answered with the
    /// error; a bad response naming one of our requests fails that request now rather than
    /// at its deadline.
    pub fn handle_invalid(&mut self, invalid: InvalidMessage, now: Now) {
        let Some(id) = invalid.id else { return };
        if invalid.names_method {
            return self.core.reject(Some(&id), &invalid.error);
        }
        self.resolve(&id, Err(Failure::Malformed(invalid.error.message)), now);
    }

    /// Fails every request of ours whose deadline passed.
    pub fn handle_timeout(&mut self, now: Now) {
        for (id, _, waiting) in self.core.expire(now.instant) {
            match waiting {
                Waiting::App(waiter, _) => {
                    self.listens.end(&id);
                    self.events.push_back(Event::Response { id, waiter, outcome: Err(Failure::TimedOut) })
                }
                Waiting::Handshake(step) => self.step_answered(step, Err(Failure::TimedOut), now),
            }
        }
    }

    fn handle_message(&mut self, message: FromServer, now: Now) {
        match message {
            Received::Response(Response { id: Some(id), outcome }) => {
                self.resolve(&id, outcome.map_err(Failure::Error), now)
            }
            // An error naming no request answers nothing we can name.
            Received::Response(Response { id: None, .. }) => {}
            Received::Notification(n) => self.handle_notification(n),
            Received::Request(r) => self.handle_request(r),
        }
    }

    fn resolve(&mut self, id: &RequestId, outcome: Result<Box<RawValue>, Failure>, now: Now) {
        let Some((_, waiting, outcome)) = self.core.complete(id, outcome) else { return };
        match waiting {
            Waiting::App(waiter, expect) => {
                self.listens.end(id);
                let outcome = outcome.and_then(|raw| expect.read(raw, self.settings.max_input_rounds));
                self.events.push_back(Event::Response { id: id.clone(), waiter, outcome })
            }
            Waiting::Handshake(step) => self.step_answered(step, outcome, now),
        }
    }

    fn handle_notification(&mut self, n: Notified<ServerNotification>) {
        let n = match self.listened(n) {
            Some(n) => n,
            None => return,
        };
        match &n.body {
            ServerNotification::Progress(p) => {
                if let Some(id) = self.core.progress_of(&p.progress_token) {
                    return self.events.push_back(Event::Progress { id, params: p.clone() });
                }
            }
            ServerNotification::Cancelled(c) => {
                if let Some(id) = &c.request_id {
                    // The server ended a listen stream of ours (stdio): it is over.
                    self.listen_ended(id);
                    // The server gave up on a request it sent us.
                    if let Some(serving) = self.core.end(id) {
                        self.events.push_back(Event::Cancelled {
                            id: id.clone(),
                            reason: c.reason.clone(),
                            handling: serving.handling,
                        });
                    }
                }
            }
            _ => {}
        }
        self.events.push_back(Event::Notification(n));
    }

    fn handle_request(&mut self, request: Box<Request<ServerRequest>>) {
        if self.core.serving.contains_key(&request.id) {
            let e = ErrorObject::invalid_request(format!("request id {} is already in use", request.id));
            return self.core.reject(Some(&request.id), &e);
        }
        // A question of a kind the client did not declare it answers is no method of its:
        // refused before its params are even looked at.
        if let Some(method) = request.method.known() {
            if !self.answers(method) {
                let e = ErrorObject::method_not_found(method.as_str());
                return self.core.reject(Some(&request.id), &e);
            }
        }
        match &request.body {
            Err(e) => return self.core.reject(Some(&request.id), e),
            Ok(ServerRequest::Ping) => {
                let text = codec::write_client_result(
                    &request.id,
                    &ClientResult::Empty(Default::default()),
                    self.negotiated.version,
                );
                let frame = Frame::response(text, Some(request.id.clone()), None);
                return self.core.transmit(Some(request.id), frame);
            }
            Ok(_) => {}
        }
        let handling = H::default();
        self.core.begin(request.id.clone(), None, handling.clone(), ClientServing);
        self.events.push_back(Event::Request { request, handling });
    }

    /// Whether the client answers requests of `method` (what it declared, for the revision
    /// spoken).
    fn answers(&self, method: Method) -> bool {
        let caps = self.settings.capabilities(self.negotiated.version);
        match method {
            Method::CreateMessage => caps.sampling.is_some(),
            Method::Elicit => caps.elicitation.is_some(),
            Method::ListRoots => caps.roots.is_some(),
            Method::GetTask | Method::TaskResult | Method::ListTasks | Method::CancelTask => {
                caps.answers_task_request(method)
            }
            _ => true,
        }
    }

    // ---------------------------------------------------------------------------------------
    // Outputs
    // ---------------------------------------------------------------------------------------

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<Event<Client, W, H>> {
        self.events.pop_front()
    }

    /// The next frame to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.core.poll_transmit()
    }

    /// Every frame to send, oldest first (the queue is left empty).
    pub fn take_transmits(&mut self) -> Transmits {
        self.core.take_transmits()
    }

    /// Every event, oldest first (the queue is left empty).
    pub fn take_events(&mut self) -> Events<Client, W, H> {
        self.events.take()
    }

    /// When [`Self::handle_timeout`] must be called next: no later than the earliest deadline
    /// of a request of ours, and possibly earlier (a request answered since set it; the call
    /// then finds nothing due and this moves on). It changes only when a request with an
    /// earlier deadline is sent or [`Self::handle_timeout`] has run, so a driver that keeps
    /// one timer resets it rarely.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.core.next_deadline()
    }

    // ---------------------------------------------------------------------------------------
    // Mutators
    // ---------------------------------------------------------------------------------------

    /// Sends a request in the negotiated revision (with the `_meta` a 2026-07-28 request
    /// carries); its answer comes as an [`Event::Response`] carrying `waiter`. A method the
    /// revision does not have ([`ProtocolVersion::has_request`]) is not sent:
    /// [`NotSent::Unsupported`].
    ///
    /// A 2026-07-28 answer is read for what it may be ([`Reply`]): `input_required` for a
    /// `tools/call`, `prompts/get` or `resources/read`, a task for a `tools/call` when the
    /// tasks extension is declared; a 2025-11-25 `tools/call` that asks for a task may become
    /// one. A `subscriptions/listen` request's notifications come as
    /// [`ClientNews::Listened`] until it ends.
    pub fn send_request(
        &mut self,
        request: &ClientRequest,
        options: RequestOptions,
        waiter: W,
        now: Now,
    ) -> Result<RequestId, NotSent> {
        self.send_typed(request, options, waiter, 0, now)
    }

    /// Sends `request` again with the answers to the questions of its `input_required` answer
    /// (2026-07-28), under the keys asked, and the state the server sealed, as a new request
    /// (a new id, the same params). Its answer comes as [`Event::Response`] carrying `waiter`;
    /// a server that asks again after [`ClientSettings::max_input_rounds`] retries fails it
    /// with [`Failure::TooManyRounds`].
    pub fn retry(
        &mut self,
        request: &ClientRequest,
        resume: &Resume,
        answers: &[(String, ClientResult)],
        mut options: RequestOptions,
        waiter: W,
        now: Now,
    ) -> Result<RequestId, NotSent> {
        options.round = reply::round_input(resume, answers);
        self.send_typed(request, options, waiter, resume.retries + 1, now)
    }

    fn send_typed(
        &mut self,
        request: &ClientRequest,
        options: RequestOptions,
        waiter: W,
        retries: u32,
        now: Now,
    ) -> Result<RequestId, NotSent> {
        if self.core.closed {
            return Err(NotSent::Closed);
        }
        let version = self.negotiated.version;
        let method = request.method();
        if !version.has_request(method, Sender::Client) {
            return Err(NotSent::Unsupported { method, version });
        }
        let (id, token) = self.core.allocate(options.progress);
        let tasks_declared = options.declare_tasks || self.settings.declares_tasks(version);
        let expect = Expect::of(request, version.era(), tasks_declared, retries);
        let text = self.write_request(
            &id,
            request,
            version,
            token.clone(),
            options.meta,
            options.declare_tasks,
            &options.round,
        );
        let send = SendOptions {
            timeout: options.timeout,
            cancel_on_timeout: true,
            progress: options.progress,
            related: None,
        };
        let mut headers = self.headers(version, request.method(), request.name());
        if version.is_modern() {
            headers.extend(options.headers);
        }
        let written = Written { id: id.clone(), method: request.method().into(), text, token, headers };
        self.core.send(written, &send, Waiting::App(waiter, expect), now.instant);
        if matches!(request, ClientRequest::Listen(_)) {
            self.listens.open(id.clone());
        }
        Ok(id)
    }

    /// Sends a request of a method the protocol does not define (a vendor extension), params
    /// as given, with the 2026-07-28 `_meta` added to them.
    pub fn send_custom(
        &mut self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
        waiter: W,
        now: Now,
    ) -> Result<RequestId, NotSent> {
        if self.core.closed {
            return Err(NotSent::Closed);
        }
        let version = self.negotiated.version;
        let mut meta = self.request_meta(version, options.meta, options.declare_tasks);
        let (id, token) = self.core.allocate(options.progress);
        meta.progress_token = token.clone();
        let params = match params {
            None | Some(Value::Null) if meta.is_empty() => None,
            None | Some(Value::Null) => Some(serde_json::Map::new()),
            Some(Value::Object(o)) => Some(o),
            Some(other) if meta.is_empty() => {
                return Ok(self.send_custom_text(id, method, Some(other), token, options.timeout, waiter, now));
            }
            Some(_) => return Err(NotSent::InvalidParams("request params must be a JSON object".into())),
        };
        let params = params.map(|mut params| {
            if !meta.is_empty() {
                let mut merged = match params.remove("_meta") {
                    Some(Value::Object(m)) => m,
                    _ => serde_json::Map::new(),
                };
                if let Value::Object(ours) = serde_json::to_value(&meta).unwrap_or_default() {
                    merged.extend(ours);
                }
                params.insert("_meta".into(), Value::Object(merged));
            }
            Value::Object(params)
        });
        Ok(self.send_custom_text(id, method, params, token, options.timeout, waiter, now))
    }

    #[allow(clippy::too_many_arguments)]
    fn send_custom_text(
        &mut self,
        id: RequestId,
        method: &str,
        params: Option<Value>,
        token: Option<crate::types::ProgressToken>,
        timeout: Option<Duration>,
        waiter: W,
        now: Now,
    ) -> RequestId {
        let text = jsonrpc::encode_request(&id, method, params.as_ref());
        let send = SendOptions { timeout, cancel_on_timeout: true, progress: token.is_some(), related: None };
        let version = self.negotiated.version;
        let name = MethodName::parse(method);
        let headers = match (&name, version.is_modern()) {
            (MethodName::Known(m), _) => self.headers(version, *m, params.as_ref().and_then(target_of)),
            (MethodName::Unknown(m), true) => {
                vec![
                    (Header::Borrowed(headers::PROTOCOL_VERSION), version.as_str().to_owned()),
                    (Header::Borrowed(headers::METHOD), m.clone()),
                ]
            }
            (MethodName::Unknown(_), false) => self.headers(version, Method::Ping, None),
        };
        let written = Written { id: id.clone(), method: name, text, token, headers };
        self.core.send(written, &send, Waiting::App(waiter, Expect::Plain), now.instant);
        id
    }

    /// Sends a notification.
    pub fn notify(&mut self, notification: &ClientNotification) {
        let text = codec::write_client_notification(notification);
        let method = match notification {
            ClientNotification::Other(n) => MethodName::parse(&n.method),
            known => MethodName::Known(known.method().unwrap_or(Method::Initialized)),
        };
        let headers = self.headers(self.negotiated.version, method.known().unwrap_or(Method::Ping), None);
        self.core.notify_with(method, text, headers);
    }

    /// Answers a request of the server's; `false` when no answer is due any more (the server
    /// cancelled it).
    pub fn respond(&mut self, id: &RequestId, outcome: Result<ClientResult, ErrorObject>) -> bool {
        if self.core.end(id).is_none() {
            return false;
        }
        let (text, error) = match outcome {
            Ok(result) => (codec::write_client_result(id, &result, self.negotiated.version), None),
            Err(e) => (codec::write_error(Some(id), &e), Some(e.code)),
        };
        self.core.transmit(Some(id.clone()), Frame::response(text, Some(id.clone()), error));
        true
    }

    /// Gives up on a request of ours: the server is told, and a late answer is ignored.
    /// Returns its waiter if it was still waiting.
    pub fn cancel(&mut self, id: &RequestId, reason: &str) -> Option<W> {
        self.listens.end(id);
        match self.core.cancel(id, reason)? {
            Waiting::App(w, _) => Some(w),
            Waiting::Handshake(_) => None,
        }
    }

    /// Forgets a request of ours without telling the server.
    pub fn forget(&mut self, id: &RequestId) -> Option<W> {
        self.listens.end(id);
        match self.core.forget(id)? {
            Waiting::App(w, _) => Some(w),
            Waiting::Handshake(_) => None,
        }
    }

    /// The waiter of a request of ours still waiting.
    pub fn waiter(&self, id: &RequestId) -> Option<&W> {
        match self.core.waiter(id)? {
            Waiting::App(w, _) => Some(w),
            Waiting::Handshake(_) => None,
        }
    }

    /// The connection closed: every request of ours fails, every request of the server's
    /// being served is cancelled.
    pub fn close(&mut self) {
        if self.core.closed {
            return;
        }
        self.core.closed = true;
        let connecting = !self.connected;
        self.listens = Listens::default();
        for (id, waiting) in self.core.drain_pending() {
            match waiting {
                Waiting::App(waiter, _) => {
                    self.events.push_back(Event::Response { id, waiter, outcome: Err(Failure::Closed) })
                }
                Waiting::Handshake(Step::SetLevel) => {}
                Waiting::Handshake(_) => {}
            }
        }
        if connecting {
            self.failed(ConnectError::Closed);
        }
        let served: Vec<RequestId> = self.core.serving.keys().cloned().collect();
        for id in served {
            if let Some(s) = self.core.end(&id) {
                self.events.push_back(Event::Cancelled { id, reason: None, handling: s.handling });
            }
        }
    }

    /// Whether the connection is closed.
    pub fn is_closed(&self) -> bool {
        self.core.closed
    }

    /// How many requests of ours wait for an answer.
    pub fn waiting(&self) -> usize {
        self.core.pending_len()
    }
}

/// Reads a discover result, which must be complete (no `input_required`).
fn read_discovered(raw: &RawValue) -> Result<DiscoverResult, String> {
    use codec::answer::AnswerError;
    codec::answer::read_complete(raw).map_err(|e| match e {
        AnswerError::UnknownResultType(kind) => format!("server/discover answered with resultType {kind:?}"),
        AnswerError::NotComplete(kind) => format!("server/discover answered with resultType {:?}", kind.as_str()),
        e => e.to_string(),
    })
}

/// What a request given as JSON is about, for `Mcp-Name`: its `name`, `uri` or `taskId`.
fn target_of(params: &Value) -> Option<&str> {
    ["name", "uri", "taskId"].iter().find_map(|k| params.get(*k)).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{meta_keys, CallToolParams, ClientCapabilities, Implementation, Meta, ProgressToken};

    #[test]
    fn a_request_with_only_the_declaration_in_its_meta_is_written_as_its_members_would_be() {
        let settings = ClientSettings {
            info: Implementation::new("test-client", "1"),
            capabilities: ProtocolVersion::ALL
                .iter()
                .map(|v| (*v, ClientCapabilities { roots: Some(Default::default()), ..Default::default() }))
                .collect(),
            pinned: None,
            accept_negotiated: false,
            probe_timeout: Duration::from_secs(3),
            request_timeout: Duration::from_secs(60),
            log_level: None,
            max_input_rounds: 8,
        };
        let mut peer: ClientPeer<(), ()> = ClientPeer::new(Arc::new(settings));
        let arguments = serde_json::json!({"text": "\"quoted\" \u{e9}"}).as_object().cloned();
        let call = ClientRequest::CallTool(CallToolParams { name: "echo".into(), arguments, task: None });
        let (id, round, version) = (RequestId::Number(7), RoundInput::default(), ProtocolVersion::LATEST);
        for declare_tasks in [false, true] {
            let written = peer.write_request(&id, &call, version, None, Meta::new(), declare_tasks, &round);
            let members = peer.request_meta(version, Meta::new(), declare_tasks);
            assert_eq!(written, codec::write_client_request(&id, &call, &members, &round, version));
            let meta = &serde_json::from_str::<Value>(&written).unwrap()["params"]["_meta"];
            assert_eq!(meta[meta_keys::CLIENT_INFO]["name"], "test-client");
            let tasks = &meta[meta_keys::CLIENT_CAPABILITIES]["extensions"][crate::types::TASKS_EXTENSION];
            assert_eq!(tasks.is_object(), declare_tasks, "{written}");
        }
        // Anything more in `_meta` is written from the members, with the declaration.
        let token = Some(ProgressToken::Number(1));
        let mut extra = Meta::new();
        extra.insert("vendor/key".into(), Value::Bool(true));
        let written = peer.write_request(&id, &call, version, token, extra, false, &round);
        let meta = &serde_json::from_str::<Value>(&written).unwrap()["params"]["_meta"];
        assert_eq!((&meta["progressToken"], &meta["vendor/key"]), (&Value::from(1), &Value::Bool(true)));
        assert_eq!(meta[meta_keys::PROTOCOL_VERSION], version.as_str());
        // A legacy request declares nothing.
        let legacy = peer.write_request(&id, &call, ProtocolVersion::V2025_11_25, None, Meta::new(), false, &round);
        assert!(!legacy.contains("_meta"), "{legacy}");
    }
}
