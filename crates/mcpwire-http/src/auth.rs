//! The endpoint as an OAuth protected resource ([`crate::HttpConfig::auth`]): every request's
//! bearer token checked before its body is read, the principal handed to the server, a
//! legacy session bound to the party that opened it, scopes checked before a request is
//! served (so that a missing one is a `403` the client can step up from), and the protected
//! resource metadata served.
//!
//! Without the `auth` feature, or without a resource server configured, every request goes
//! through without a principal.

use std::sync::Arc;

use axum::http::HeaderMap;
use axum::response::Response;
use mcpwire_protocol::message::ClientRequest;
use mcpwire_protocol::Principal;

use crate::session::Session;
use crate::Inner;

/// Who a request comes from: `None` when the endpoint is not protected.
pub(crate) type Caller = Option<Arc<Principal>>;

#[cfg(feature = "auth")]
mod protected {
    use super::*;
    use axum::http::{header, HeaderValue};
    use axum::response::IntoResponse;
    use mcpwire_auth::resource::{Rejection, ResourceServer};

    /// The request's principal, or the answer that refuses it.
    pub(crate) async fn authorize(inner: &Inner, headers: &HeaderMap) -> Result<Caller, Response> {
        let Some(rs) = &inner.config.auth else { return Ok(None) };
        match rs.authorize(headers).await {
            Ok(principal) => Ok(Some(Arc::new(principal))),
            Err(rejection) => Err(refuse(rs, &rejection)),
        }
    }

    /// `403 insufficient_scope` when the principal lacks a scope of what `request` names.
    pub(crate) fn refuse_scopes(inner: &Inner, caller: &Caller, request: &ClientRequest) -> Option<Response> {
        let (Some(rs), Some(principal)) = (&inner.config.auth, caller) else { return None };
        let needed = inner.server.required_scopes(request);
        match needed.permit(Some(principal)) {
            true => None,
            false => Some(refuse(rs, &Rejection::InsufficientScope(needed.as_slice().to_vec()))),
        }
    }

    fn refuse(rs: &ResourceServer, rejection: &Rejection) -> Response {
        tracing::debug!("request refused: {rejection}");
        let refusal = rs.refusal(rejection);
        let mut response = (refusal.status, refusal.message).into_response();
        if let Some(challenge) = refusal.www_authenticate {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
        }
        if let Some(after) = refusal.retry_after {
            // Whole seconds, at least one (RFC 9110 §10.2.3).
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(after.as_secs().max(1)));
        }
        response
    }

    /// The protected resource metadata (RFC 9728), readable from any origin (browser clients
    /// discover with it).
    pub(crate) fn metadata(rs: &ResourceServer) -> Response {
        let body = serde_json::to_string(&rs.metadata()).unwrap_or_default();
        let mut r = crate::reply::json_response(axum::http::StatusCode::OK, body, &[]);
        r.headers_mut().insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("max-age=3600"));
        r
    }
}

#[cfg(feature = "auth")]
pub(crate) use protected::{authorize, metadata, refuse_scopes};

#[cfg(not(feature = "auth"))]
pub(crate) async fn authorize(_: &Inner, _: &HeaderMap) -> Result<Caller, Response> {
    Ok(None)
}

#[cfg(not(feature = "auth"))]
pub(crate) fn refuse_scopes(_: &Inner, _: &Caller, _: &ClientRequest) -> Option<Response> {
    None
}

/// Whether `caller` may use `session`: the party that opened it (or anybody, unprotected).
/// The session's principal becomes the caller's, whose scopes may have grown (a step-up).
/// A session used with another party's token is answered as unknown: its id tells nothing.
pub(crate) fn may_use(session: &Session, caller: &Caller) -> bool {
    let Some(caller) = caller else { return true };
    match session.core.principal() {
        Some(owner) if !owner.same_party(caller) => false,
        _ => {
            session.core.set_principal(Some(caller.clone()));
            true
        }
    }
}
