//! The request a middleware layer sees.

use mcpwire_protocol::message::{ClientRequest, RequestMeta};
use mcpwire_protocol::{Method, Principal, ProtocolVersion};

use crate::context::Context;
use crate::server::Server;

/// One request on its way to its handler, as the middleware layers see it: the typed
/// message (its method and params), its `_meta`, and the [`Context`] its handler will get
/// (revision, client, cancellation, application state).
pub struct McpRequest {
    pub(crate) message: ClientRequest,
    pub(crate) meta: RequestMeta,
    pub(crate) context: Context,
    pub(crate) server: Server,
}

impl McpRequest {
    /// The request's method.
    pub fn method(&self) -> Method {
        self.message.method()
    }

    /// What the request names: the tool (`tools/call`), the prompt (`prompts/get`), the
    /// resource URI (`resources/read`), the task (`tasks/*`); `None` for the others.
    pub fn name(&self) -> Option<&str> {
        self.message.name()
    }

    /// The typed message: method and params.
    pub fn message(&self) -> &ClientRequest {
        &self.message
    }

    /// The typed message, to change it before the handler sees it (the tool's arguments,
    /// say). Changed into a method the application does not serve, it is refused.
    pub fn message_mut(&mut self) -> &mut ClientRequest {
        &mut self.message
    }

    /// The request's `_meta`: the trace context and every other member the client sent.
    /// (The progress token is the context's: [`Context::wants_progress`].)
    pub fn meta(&self) -> &RequestMeta {
        &self.meta
    }

    /// The request's `_meta`, to change.
    pub fn meta_mut(&mut self) -> &mut RequestMeta {
        &mut self.meta
    }

    /// The context the handler gets.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// Who the request comes from, as its transport authorized it ([`Context::principal`]):
    /// what a rate limit per principal keys on, what visibility by scope reads.
    pub fn principal(&self) -> Option<&Principal> {
        self.context.principal()
    }

    /// The protocol revision the request was made in.
    pub fn revision(&self) -> ProtocolVersion {
        self.context.revision()
    }

    /// The server that serves the request (its configuration, its registries).
    pub fn server(&self) -> &Server {
        &self.server
    }
}

impl std::fmt::Debug for McpRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpRequest")
            .field("id", self.context.request_id())
            .field("method", &self.method())
            .field("name", &self.name())
            .field("revision", &self.revision())
            .finish_non_exhaustive()
    }
}
