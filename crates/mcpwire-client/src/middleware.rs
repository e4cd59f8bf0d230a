//! Middleware over the client's outgoing requests: tower layers around the sending of each
//! typed request, as the server has around the handling of each incoming one.
//!
//! [`ClientBuilder::layer`](crate::ClientBuilder::layer) wraps a
//! `tower::Service<ClientCall, Response = ClientReply, Error = BoxError>`, whose innermost
//! service sends the request and waits for its answer. A layer sees the typed request (and
//! may change it), its `_meta`, the session, and the typed answer ([`ClientReply`]: the
//! [`ServerResult`] of the method, a task, or the server's questions) or the error; it may
//! short-circuit (answer from a cache, refuse), retry, time, or fail. tower's own layers work
//! unchanged: `tower::timeout::TimeoutLayer`, `ConcurrencyLimitLayer`, `RateLimitLayer`, ...
//!
//! With layers, a result is read into the [`ServerResult`] of its method once, and the call
//! takes its own type out of it; without layers it is read straight into that type.
//!
//! - Each round trip is one call through the stack: a 2026-07-28 request answered with
//!   `input_required` goes through once per round, a legacy request once.
//! - A layer's error that is a [`ClientError`] is returned as it is; any other becomes
//!   [`ClientError::Middleware`], with the layer's error as its source
//!   ([`ClientError::is_middleware`]).
//! - Requests sent with [`ClientSession::request`] (a method by name) and notifications do
//!   not go through the layers.
//! - Without layers requests are sent directly: no allocation, no indirection.

use std::fmt;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use futures::future::BoxFuture;
use mcpwire_protocol::message::ClientRequest;
#[cfg(doc)]
use mcpwire_protocol::message::ServerResult;
use mcpwire_protocol::types::Meta;
use mcpwire_protocol::{Method, ProtocolVersion};
use tower::util::BoxCloneSyncService;
use tower::{Layer, Service, ServiceExt};

use crate::driver::{Outgoing, Retry};
use crate::error::ClientError;
use crate::session::ClientSession;

pub use crate::error::BoxError;
pub use crate::reply::ClientReply;

/// One outgoing request, as the client's layers see it.
pub struct ClientCall {
    /// The request. A layer may change its parameters (not its method).
    pub request: ClientRequest,
    /// `_meta` members sent with it, besides those the session adds itself (the protocol
    /// version and client of the 2026-07-28 era, the trace context). A layer may add some.
    pub meta: Meta,
    session: ClientSession,
    retry: Option<Retry>,
}

impl ClientCall {
    /// The method.
    pub fn method(&self) -> Method {
        self.request.method()
    }

    /// The tool, prompt or resource the request names (`tools/call`, `prompts/get`,
    /// `resources/read`, ...), if any.
    pub fn target(&self) -> Option<&str> {
        mcpwire_protocol::telemetry::target(&self.request).map(|(_, name)| name)
    }

    /// The session it is sent on.
    pub fn session(&self) -> &ClientSession {
        &self.session
    }

    /// The revision it is sent in.
    pub fn revision(&self) -> ProtocolVersion {
        self.session.protocol_version()
    }

    /// Whether this is a retry answering an `input_required` round (2026-07-28).
    pub fn is_round(&self) -> bool {
        self.retry.is_some()
    }
}

impl fmt::Debug for ClientCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCall").field("method", &self.method()).field("target", &self.target()).finish()
    }
}

/// The sending of a request with its layers, type-erased.
pub type ClientStack = BoxCloneSyncService<ClientCall, ClientReply, BoxError>;

type Wrap = Arc<dyn Fn(ClientStack) -> ClientStack + Send + Sync>;

/// The layers given to the builder, innermost first.
#[derive(Clone, Default)]
pub(crate) struct Layers(Vec<Wrap>);

impl Layers {
    /// Adds `layer` around the ones before.
    pub(crate) fn push<L>(&mut self, layer: L)
    where
        L: Layer<ClientStack> + Send + Sync + 'static,
        L::Service: Service<ClientCall, Response = ClientReply> + Clone + Send + Sync + 'static,
        <L::Service as Service<ClientCall>>::Error: Into<BoxError>,
        <L::Service as Service<ClientCall>>::Future: Send + 'static,
    {
        self.0.push(Arc::new(move |inner| ClientStack::new(layer.layer(inner).map_err(Into::into))));
    }

    /// The stack, `None` without layers.
    pub(crate) fn build(&self) -> Option<ClientStack> {
        if self.0.is_empty() {
            return None;
        }
        Some(self.0.iter().fold(ClientStack::new(Transmit), |stack, wrap| wrap(stack)))
    }
}

impl fmt::Debug for Layers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Layers({})", self.0.len())
    }
}

/// The innermost service: the request sent on its session.
#[derive(Debug, Clone, Copy)]
struct Transmit;

impl Service<ClientCall> for Transmit {
    type Response = ClientReply;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<ClientReply, BoxError>>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: ClientCall) -> Self::Future {
        Box::pin(async move {
            let ClientCall { request, meta, session, retry } = call;
            let reply = session.send_direct(Outgoing::Typed(&request), retry.as_ref(), meta).await?;
            Ok(ClientReply::read(reply, request.method(), session.protocol_version())?)
        })
    }
}

/// Sends `request` through `stack`.
pub(crate) async fn through(
    stack: &ClientStack,
    session: &ClientSession,
    request: &ClientRequest,
    retry: Option<Retry>,
) -> Result<ClientReply, ClientError> {
    let call = ClientCall { request: request.clone(), meta: Meta::new(), session: session.clone(), retry };
    stack.clone().oneshot(call).await.map_err(|error| match error.downcast::<ClientError>() {
        Ok(error) => *error,
        Err(other) => ClientError::Middleware(other),
    })
}
