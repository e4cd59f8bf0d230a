//! What every request to an MCP route passes before anything else is read: the server is not
//! shutting down (`503`), the Host and Origin are allowed (`403`, DNS rebinding), and the
//! caller is authorized (`401`/`403` with the challenge, when the server is protected). One
//! extractor, so that no route can forget a step or take them in another order.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::Response;

use crate::auth::{self, Caller};
use crate::{plain, Inner};

/// A request that passed the guard, and who sent it (`None` on an unprotected server).
pub(crate) struct Admitted(pub(crate) Caller);

impl FromRequestParts<Arc<Inner>> for Admitted {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, inner: &Arc<Inner>) -> Result<Self, Response> {
        if let Some(refused) = inner.refuse_while_shutting_down() {
            return Err(refused);
        }
        if let Err(why) = inner.config.hosts.check(&parts.headers) {
            return Err(plain(StatusCode::FORBIDDEN, &why));
        }
        // HTTP/2 names the host in `:authority` (the request's URI), not in a `Host` header.
        if let Err(why) = inner.config.hosts.check_authority(&parts.uri) {
            return Err(plain(StatusCode::FORBIDDEN, &why));
        }
        auth::authorize(inner, &parts.headers).await.map(Admitted)
    }
}
