//! A session with one server: era detection, the request path, closing.

use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_protocol::error::UNSUPPORTED_PROTOCOL_VERSION;
use mcp_protocol::jsonrpc;
use mcp_protocol::types::{
    meta_keys, DiscoverResult, Implementation, LoggingLevel, ProgressParams, ProgressToken, ServerCapabilities,
};
use mcp_protocol::{Era, ErrorObject, ProtocolVersion};
use mcp_transport::child::ChildProcess;
use mcp_transport::Connection;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use tokio::task::JoinHandle;

use crate::client::Config;
use crate::error::ClientError;
use crate::shared::{drive, with_meta, Negotiated, ProgressCallback, Shared};

/// Per-call settings carried by a [`ClientSession`] handle.
#[derive(Clone, Default)]
pub(crate) struct CallOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) progress: Option<ProgressCallback>,
}

pub(crate) struct SessionInner {
    pub(crate) shared: Arc<Shared>,
    driver: Mutex<Option<JoinHandle<()>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
    child: tokio::sync::Mutex<Option<ChildProcess>>,
}

impl Drop for SessionInner {
    fn drop(&mut self) {
        // The last handle is gone without `close`: stop reading and sending. A child process
        // is killed when its handle drops.
        self.shared.close_outgoing();
        self.shared.shutdown.cancel();
    }
}

/// A connection to one server, in the era and revision agreed with it.
///
/// Cheap to clone: clones share the connection. [`Self::with_timeout`] and
/// [`Self::with_progress`] return handles whose calls use those settings. Every call is
/// bounded by a timeout; dropping a call's future cancels the request on the server
/// (`notifications/cancelled`) and any late answer is ignored.
#[derive(Clone)]
pub struct ClientSession {
    pub(crate) inner: Arc<SessionInner>,
    pub(crate) options: CallOptions,
}

impl std::fmt::Debug for ClientSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.shared().negotiated();
        f.debug_struct("ClientSession")
            .field("era", &n.era)
            .field("protocol_version", &n.version)
            .field("server_info", &n.server_info)
            .field("timeout", &self.options.timeout)
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Decodes a result, tolerating unknown members.
pub(crate) fn decode<T: DeserializeOwned>(method: &str, value: Value) -> Result<T, ClientError> {
    serde_json::from_value(value).map_err(|e| ClientError::decode(method, e))
}

/// What `resultType` says about a result: `Ok(true)` complete, `Ok(false)` input required.
/// Absent means complete (a server of an earlier revision); any other value is invalid.
pub(crate) fn result_type(method: &str, result: &Value) -> Result<bool, ClientError> {
    match result.get("resultType") {
        None | Some(Value::Null) => Ok(true),
        Some(Value::String(s)) if s == "complete" => Ok(true),
        Some(Value::String(s)) if s == "input_required" => Ok(false),
        Some(other) => Err(ClientError::decode(method, format!("unknown resultType {other}"))),
    }
}

impl ClientSession {
    pub(crate) async fn start(
        config: Arc<Config>,
        connection: Connection,
        child: Option<ChildProcess>,
    ) -> Result<Self, ClientError> {
        let Connection { incoming, outgoing, writer } = connection;
        let initial = config.pinned.unwrap_or(ProtocolVersion::LATEST);
        let shared = Arc::new(Shared::new(config, outgoing, initial));
        let driver = tokio::spawn(drive(shared.clone(), incoming));
        let session = Self {
            inner: Arc::new(SessionInner {
                shared,
                driver: Mutex::new(Some(driver)),
                writer: Mutex::new(writer),
                child: tokio::sync::Mutex::new(child),
            }),
            options: CallOptions::default(),
        };
        match session.negotiate().await {
            Ok(()) => Ok(session),
            Err(e) => {
                if let Err(close) = session.close().await {
                    tracing::debug!("closing after a failed connect: {close}");
                }
                Err(e)
            }
        }
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.inner.shared
    }

    fn config(&self) -> &Config {
        &self.inner.shared.config
    }

    /// The timeout of this handle's calls.
    pub(crate) fn timeout(&self) -> Duration {
        self.options.timeout.unwrap_or(self.config().request_timeout)
    }

    /// A handle whose calls time out after `timeout` instead of the client's default.
    pub fn with_timeout(&self, timeout: Duration) -> Self {
        let mut s = self.clone();
        s.options.timeout = Some(timeout);
        s
    }

    /// A handle whose calls ask for progress (`_meta.progressToken`, a fresh token per call)
    /// and hand each `notifications/progress` for them to `callback` (on the connection's
    /// task: keep it short). Such notifications do not reach [`Self::notifications`].
    pub fn with_progress<F>(&self, callback: F) -> Self
    where
        F: Fn(ProgressParams) + Send + Sync + 'static,
    {
        let mut s = self.clone();
        s.options.progress = Some(Arc::new(callback));
        s
    }

    // ---- what was negotiated ----

    /// The era of the server.
    pub fn era(&self) -> Era {
        self.shared().negotiated().era
    }

    /// The protocol revision in use.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.shared().version()
    }

    /// Who the server says it is (`serverInfo` of `initialize`, or the `_meta` of
    /// `server/discover`).
    pub fn server_info(&self) -> Option<Implementation> {
        self.shared().negotiated().server_info
    }

    /// The server's capabilities.
    pub fn server_capabilities(&self) -> ServerCapabilities {
        self.shared().negotiated().capabilities
    }

    /// The server's instructions, if it gave any.
    pub fn instructions(&self) -> Option<String> {
        self.shared().negotiated().instructions
    }

    /// Whether the connection has closed (nothing more will be received).
    pub fn is_closed(&self) -> bool {
        self.shared().ended.is_cancelled()
    }

    /// Resolves when the connection has closed (the server went away, or [`Self::close`]).
    pub async fn closed(&self) {
        self.shared().ended.cancelled().await
    }

    // ---- the request path ----

    /// The `_meta` every request of revision `version` carries.
    pub(crate) fn request_meta(
        &self,
        version: ProtocolVersion,
        progress: Option<&ProgressToken>,
    ) -> Map<String, Value> {
        let config = self.config();
        let mut meta = Map::new();
        if version.is_modern() {
            meta.insert(meta_keys::PROTOCOL_VERSION.into(), version.as_str().into());
            let caps = serde_json::to_value(config.capabilities(version)).unwrap_or_else(|_| json!({}));
            meta.insert(meta_keys::CLIENT_CAPABILITIES.into(), caps);
            meta.insert(meta_keys::CLIENT_INFO.into(), config.info_value(version));
            if let Some(level) = *lock(&self.shared().log_level) {
                meta.insert(meta_keys::LOG_LEVEL.into(), json!(level));
            }
        }
        if let Some(token) = progress {
            meta.insert(meta_keys::PROGRESS_TOKEN.into(), json!(token));
        }
        meta
    }

    /// The modern revision to use from a server's list, respecting a pinned one.
    fn pick_modern<'a>(&self, supported: impl IntoIterator<Item = &'a str>) -> Option<ProtocolVersion> {
        let pinned = self.config().pinned;
        supported
            .into_iter()
            .filter_map(ProtocolVersion::parse)
            .filter(|v| v.is_modern() && pinned.is_none_or(|p| p == *v))
            .max()
    }

    /// One request in the session's revision: `_meta` added in the modern era; a `-32022`
    /// answer is retried once with a mutually supported version.
    pub(crate) async fn send_request(
        &self,
        method: &str,
        params: Option<Value>,
        progress: Option<&ProgressToken>,
    ) -> Result<Value, ClientError> {
        let shared = self.shared();
        let mut retried = false;
        loop {
            let version = shared.version();
            let p = with_meta(params.clone(), self.request_meta(version, progress))?;
            let result = shared.round_trip(method, p, self.timeout(), true).await;
            if let Err(e) = &result {
                if version.is_modern() && !retried && e.code() == Some(UNSUPPORTED_PROTOCOL_VERSION) {
                    if let Some(v) = supported_versions(e.error_object()).and_then(|s| self.pick_modern(s)) {
                        tracing::debug!(from = %version, to = %v, "server does not support the version; retrying");
                        retried = true;
                        shared.state.write().unwrap_or_else(|e| e.into_inner()).version = v;
                        continue;
                    }
                }
            }
            return result;
        }
    }

    /// A typed call: progress registration, the request, a complete result decoded.
    pub(crate) async fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<T, ClientError> {
        let shared = self.shared();
        let progress = self.options.progress.clone().map(|cb| shared.register_progress(cb));
        let result = self.send_request(method, params, progress.as_ref().map(|g| g.token())).await?;
        if self.era() == Era::Modern && !result_type(method, &result)? {
            return Err(ClientError::decode(
                method,
                "input_required is only allowed on tools/call, prompts/get and resources/read",
            ));
        }
        decode(method, result)
    }

    // ---- era detection ----

    async fn negotiate(&self) -> Result<(), ClientError> {
        let config = self.config();
        match config.pinned {
            Some(v) if !v.is_modern() => self.initialize(v, !config.accept_negotiated).await,
            Some(v) => {
                let discovered = match self.discover_as(v, config.request_timeout, true).await {
                    // -32022 naming the pinned version among the supported ones: try once more
                    // (a server may refuse a first request it cannot yet place).
                    Err(e) if e.code() == Some(mcp_protocol::error::UNSUPPORTED_PROTOCOL_VERSION) => {
                        let supported = e
                            .error_object()
                            .and_then(|o| o.data.as_ref())
                            .and_then(|d| d.get("supported"))
                            .and_then(Value::as_array)
                            .is_some_and(|s| s.iter().any(|x| x.as_str() == Some(v.as_str())));
                        if !supported {
                            return Err(e);
                        }
                        self.discover_as(v, config.request_timeout, true).await?
                    }
                    other => other?,
                };
                if self.pick_modern(discovered.supported_versions.iter().map(String::as_str)).is_none() {
                    return Err(ClientError::Negotiation(format!(
                        "the server supports {:?}, not the pinned {v}",
                        discovered.supported_versions
                    )));
                }
                self.adopt_modern(v, discovered);
                Ok(())
            }
            None => self.detect().await,
        }
    }

    /// The dual-era probe (PROTOCOL.md §f): never keyed on a single error code.
    async fn detect(&self) -> Result<(), ClientError> {
        let config = self.config();
        let probe = self.discover_as(ProtocolVersion::LATEST, config.probe_timeout, false).await;
        let modern = match probe {
            Ok(discovered) => match self.pick_modern(discovered.supported_versions.iter().map(String::as_str)) {
                Some(v) if v == ProtocolVersion::LATEST => Some((v, discovered)),
                Some(v) => Some((v, self.discover_as(v, config.request_timeout, true).await?)),
                None => {
                    tracing::debug!(supported = ?discovered.supported_versions, "no modern revision in common: legacy");
                    None
                }
            },
            Err(ClientError::Closed) => return Err(ClientError::Closed),
            Err(e) => {
                let modern = supported_versions(e.error_object())
                    .filter(|_| e.code() == Some(UNSUPPORTED_PROTOCOL_VERSION))
                    .and_then(|s| self.pick_modern(s));
                match modern {
                    Some(v) => Some((v, self.discover_as(v, config.request_timeout, true).await?)),
                    None => {
                        tracing::debug!(error = %e, "server/discover probe failed: legacy");
                        None
                    }
                }
            }
        };
        match modern {
            Some((v, discovered)) => {
                self.adopt_modern(v, discovered);
                Ok(())
            }
            None => self.initialize(ProtocolVersion::LATEST_LEGACY, false).await,
        }
    }

    /// Sends `server/discover` as revision `version`.
    async fn discover_as(
        &self,
        version: ProtocolVersion,
        timeout: Duration,
        cancel_on_timeout: bool,
    ) -> Result<DiscoverResult, ClientError> {
        const METHOD: &str = "server/discover";
        let params = Value::Object(self.request_meta(version, None));
        let params = json!({ "_meta": params });
        let result = self.shared().round_trip(METHOD, Some(params), timeout, cancel_on_timeout).await?;
        if !result_type(METHOD, &result)? {
            return Err(ClientError::decode(METHOD, "server/discover cannot require input"));
        }
        decode(METHOD, result)
    }

    pub(crate) fn adopt_modern(&self, version: ProtocolVersion, discovered: DiscoverResult) {
        let server_info = discovered
            .extra
            .get("_meta")
            .and_then(|m| m.get(meta_keys::SERVER_INFO))
            .and_then(|i| serde_json::from_value(i.clone()).ok());
        tracing::debug!(%version, "modern server");
        self.shared().set_negotiated(Negotiated {
            era: Era::Modern,
            version,
            server_info,
            capabilities: discovered.capabilities,
            instructions: discovered.instructions,
        });
    }

    /// The legacy handshake: `initialize` offering `offered`, then `notifications/initialized`.
    async fn initialize(&self, offered: ProtocolVersion, strict: bool) -> Result<(), ClientError> {
        const METHOD: &str = "initialize";
        let shared = self.shared();
        let config = self.config();
        {
            let mut state = shared.state.write().unwrap_or_else(|e| e.into_inner());
            state.era = Era::Legacy;
            state.version = offered;
        }
        let params = json!({
            "protocolVersion": offered,
            "capabilities": config.capabilities(offered),
            "clientInfo": config.info_value(offered),
        });
        let result = shared.round_trip(METHOD, Some(params), config.request_timeout, false).await?;
        let answered = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| ClientError::decode(METHOD, "the result has no protocolVersion"))?;
        let version = ProtocolVersion::parse(answered).filter(|v| !v.is_modern()).ok_or_else(|| {
            ClientError::Negotiation(format!("the server answered initialize with protocol version {answered:?}"))
        })?;
        if strict && version != offered {
            return Err(ClientError::Negotiation(format!(
                "protocol version {offered} is pinned but the server offers {version}"
            )));
        }
        let capabilities: ServerCapabilities = match result.get("capabilities") {
            Some(c) => decode(METHOD, c.clone())?,
            None => ServerCapabilities::default(),
        };
        let server_info = result.get("serverInfo").and_then(|i| serde_json::from_value(i.clone()).ok());
        let instructions = result.get("instructions").and_then(Value::as_str).map(str::to_owned);
        let logging = capabilities.logging.is_some();
        shared.set_negotiated(Negotiated { era: Era::Legacy, version, server_info, capabilities, instructions });
        shared.send(jsonrpc::encode_notification("notifications/initialized", None)).await?;
        tracing::debug!(%version, "legacy server");
        if let (Some(level), true) = (config.log_level, logging) {
            if let Err(e) = self.set_logging_level(level).await {
                tracing::warn!("logging/setLevel after initialize failed: {e}");
            }
        }
        Ok(())
    }

    /// Sets the least severe log level wanted. Legacy: sends `logging/setLevel`. Modern:
    /// every later request carries it in `_meta` (`io.modelcontextprotocol/logLevel`).
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        *lock(&self.shared().log_level) = Some(level);
        if self.era() == Era::Legacy {
            let _: Value = self.call("logging/setLevel", Some(json!({ "level": level }))).await?;
        }
        Ok(())
    }

    // ---- closing ----

    /// Ends the connection: stops sending (the transport flushes and closes its side),
    /// ends a child process (stdin closed, then SIGTERM, then SIGKILL, each after the close
    /// grace period) and stops reading. Outstanding calls fail with
    /// [`ClientError::Closed`]. Returns the child's exit status when there is a child.
    pub async fn close(&self) -> Result<Option<ExitStatus>, ClientError> {
        let inner = &self.inner;
        let shared = &inner.shared;
        let grace = shared.config.close_grace;
        shared.close_outgoing();
        let writer = lock(&inner.writer).take();
        if let Some(writer) = writer {
            if tokio::time::timeout(grace, writer).await.is_err() {
                tracing::debug!("the transport did not finish writing in time");
            }
        }
        let child = inner.child.lock().await.take();
        let status = match child {
            Some(child) => Some(child.close(grace).await),
            None => None,
        };
        shared.shutdown.cancel();
        let driver = lock(&inner.driver).take();
        if let Some(driver) = driver {
            let _ = tokio::time::timeout(Duration::from_secs(1), driver).await;
        }
        Ok(status.transpose()?)
    }
}

/// `data.supported` of a `-32022` error.
fn supported_versions(error: Option<&ErrorObject>) -> Option<impl Iterator<Item = &str>> {
    let list = error?.data.as_ref()?.get("supported")?.as_array()?;
    Some(list.iter().filter_map(Value::as_str))
}
