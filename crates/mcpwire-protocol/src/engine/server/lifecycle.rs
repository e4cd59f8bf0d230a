//! The lifecycle and revision negotiation: `initialize` (the legacy session), the revision and
//! client context of each request (a session's, or a 2026-07-28 request's own `_meta`), and
//! `server/discover`.

use std::sync::Arc;

use serde_json::{json, Value};

use super::{declaration, Offer, Scope, ServerPeer, Session};
use crate::error::{ErrorObject, UNSUPPORTED_PROTOCOL_VERSION};
use crate::message::{raw_str, ClientRequest, RequestMeta, ServerResult};
use crate::method::Method;
use crate::revision::ProtocolVersion;
use crate::types::{meta_keys, DiscoverResult, InitializeResult, JsonObject, LoggingLevel};

fn supported_modern() -> Vec<&'static str> {
    ProtocolVersion::ALL.iter().filter(|v| v.is_modern()).map(|v| v.as_str()).collect()
}

impl<W, H: Clone + Default> ServerPeer<W, H> {
    /// The log level a 2026-07-28 request asks for (`None`: no log messages).
    pub(super) fn request_log_level(&self, meta: &RequestMeta) -> Result<Option<LoggingLevel>, ErrorObject> {
        meta.log_level
            .as_ref()
            .map(|raw| serde_json::from_str::<LoggingLevel>(raw.get()))
            .transpose()
            .map_err(|e| ErrorObject::invalid_params(format!("bad logLevel: {e}")))
    }

    /// Decides the revision and client context of a request, or the error to answer.
    pub(super) fn scope(&self, method: &crate::method::MethodName, meta: &RequestMeta) -> Result<Scope, ErrorObject> {
        if let Some(session) = &self.session {
            return Ok(Scope {
                revision: session.revision,
                capabilities: session.capabilities.clone(),
                client_info: Some(session.client_info.clone()),
            });
        }
        let Some(version) = &meta.protocol_version else {
            let probe = match method.known() {
                Some(Method::Ping) => Some(ProtocolVersion::LATEST_LEGACY),
                Some(Method::Discover) => Some(ProtocolVersion::LATEST),
                _ => None,
            };
            if let Some(revision) = probe {
                // A probe before any handshake: answered in the newest revision of its era.
                return Ok(Scope { revision, capabilities: Arc::default(), client_info: None });
            }
            return Err(ErrorObject::invalid_params(format!(
                "missing _meta[\"{}\"]: a 2026-07-28 request carries its protocol version; \
                 a client of an earlier revision must send `initialize` first",
                meta_keys::PROTOCOL_VERSION
            )));
        };
        let capabilities = meta.client_capabilities.as_ref().ok_or_else(|| {
            ErrorObject::invalid_params(format!("missing _meta[\"{}\"]", meta_keys::CLIENT_CAPABILITIES))
        })?;
        let requested = raw_str(version).unwrap_or_default();
        let revision = ProtocolVersion::parse(requested).filter(|v| v.is_modern()).ok_or_else(|| {
            let sent: Value = serde_json::from_str(version.get()).unwrap_or(Value::Null);
            ErrorObject::new(UNSUPPORTED_PROTOCOL_VERSION, format!("unsupported protocol version {requested:?}"))
                .with_data(json!({"supported": supported_modern(), "requested": sent}))
        })?;
        let capabilities = declaration::capabilities(capabilities)
            .map_err(|e| ErrorObject::invalid_params(format!("bad clientCapabilities: {e}")))?;
        let client_info = meta
            .client_info
            .as_deref()
            .map(declaration::client_info)
            .transpose()
            .map_err(|e| ErrorObject::invalid_params(format!("bad clientInfo: {e}")))?;
        // A listen stream keeps its scope for as long as it lasts: shared with its likes on
        // every thread. (Other requests keep it for their call only.)
        let (capabilities, client_info) = if method.known() == Some(Method::Listen) {
            let declared = &self.settings.declared;
            (
                declared.capabilities(Arc::unwrap_or_clone(capabilities)),
                client_info.map(|i| declared.client_info(Arc::unwrap_or_clone(i))),
            )
        } else {
            (capabilities, client_info)
        };
        Ok(Scope { revision, capabilities, client_info })
    }

    /// Answers `initialize`: negotiates the version and makes this a legacy session.
    pub(super) fn initialize(&mut self, params: ClientRequest, offer: &dyn Offer) -> Result<ServerResult, ErrorObject> {
        let ClientRequest::Initialize(params) = params else {
            return Err(ErrorObject::internal("initialize read as another request"));
        };
        if self.session.is_some() {
            return Err(ErrorObject::invalid_request("the connection is already initialized"));
        }
        if self.settings.modern_only {
            // A modern-only server names what it speaks, so that a dual-era client can switch.
            let supported = supported_modern();
            return Err(ErrorObject::new(
                UNSUPPORTED_PROTOCOL_VERSION,
                format!("this server speaks only {} (no initialize)", supported.join(", ")),
            )
            .with_data(json!({"supported": supported, "requested": params.protocol_version})));
        }
        let params = *params;
        let mut capabilities = offer.capabilities();
        // `extensions` is 2026-07-28's member, yet legacy hosts that negotiate extensions (MCP
        // Apps) send theirs in `initialize`: those get the server's, other clients none.
        if params.capabilities.extensions.is_none() {
            capabilities.extensions = None;
        }
        let revision = ProtocolVersion::parse(&params.protocol_version)
            .filter(|v| !v.is_modern())
            .unwrap_or(ProtocolVersion::LATEST_LEGACY);
        self.session = Some(Session {
            revision,
            capabilities: self.settings.declared.capabilities(params.capabilities),
            client_info: self.settings.declared.client_info(params.client_info),
        });
        self.state_changes += 1;
        Ok(ServerResult::Initialize(Box::new(InitializeResult {
            protocol_version: revision,
            capabilities,
            server_info: self.settings.info.clone(),
            instructions: self.settings.instructions.clone(),
        })))
    }

    pub(super) fn discover(&self, offer: &dyn Offer) -> ServerResult {
        let supported = ProtocolVersion::ALL
            .iter()
            .rev()
            .filter(|v| v.is_modern() || !self.settings.modern_only)
            .map(|v| v.as_str().to_owned())
            .collect();
        ServerResult::Discover(Box::new(DiscoverResult {
            supported_versions: supported,
            capabilities: offer.capabilities(),
            instructions: self.settings.instructions.clone(),
            extra: JsonObject::new(),
        }))
    }
}
