//! A handler that panics fails its own request only: the panic is caught where the request
//! is served, logged with what panicked, and answered (a tool execution error for a tool,
//! `-32603` otherwise); the connection, the session and every other request go on.

use std::any::Any;
use std::borrow::Cow;

use mcpwire_protocol::message::{ClientRequest, ServerResult};
use mcpwire_protocol::types::{CallToolResult, CompletionReference};
use mcpwire_protocol::Method;

use crate::answer::Answer;
use crate::refusal::Refusal;

/// What a panic's payload says (`panic!` with a message carries a `&str` or a `String`).
pub(crate) fn message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

/// The answer to a request whose handler panicked with `payload`, logged. The panic's
/// message goes to the log only: it may tell internals the client has no business seeing.
pub(crate) fn answer(request: &ClientRequest, payload: &(dyn Any + Send)) -> Answer {
    Subject::of(request).panicked(Culprit::Handler, payload)
}

/// What panicked: the request's handler, or a middleware layer around it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Culprit {
    Handler,
    Middleware,
}

/// What a request is about, for a log line and for the answer to its failure: its method,
/// what it names, and whether that is the tool of a `tools/call`.
pub(crate) struct Subject<'a> {
    pub(crate) method: Method,
    pub(crate) what: Cow<'a, str>,
    /// `what` is a tool's name (the request is a `tools/call`): its failure is answered as
    /// a tool execution error.
    pub(crate) tool: bool,
}

impl<'a> Subject<'a> {
    /// The subject of `request`.
    pub(crate) fn of(request: &'a ClientRequest) -> Self {
        Self { method: request.method(), what: what(request), tool: matches!(request, ClientRequest::CallTool(_)) }
    }

    /// The same, owning its text (to outlive the request): one copy of the name.
    pub(crate) fn into_owned(self) -> Subject<'static> {
        Subject { method: self.method, what: Cow::Owned(self.what.into_owned()), tool: self.tool }
    }

    /// The answer to the request, whose `culprit` panicked with `payload`; logged.
    pub(crate) fn panicked(&self, culprit: Culprit, payload: &(dyn Any + Send)) -> Answer {
        let Self { method, what, tool } = self;
        let message = message(payload);
        match culprit {
            Culprit::Handler => tracing::error!(%method, name = %what, "the handler panicked: {message}"),
            Culprit::Middleware => tracing::error!(%method, name = %what, "a middleware layer panicked: {message}"),
        }
        if *tool {
            Answer::Result(ServerResult::CallTool(tool_error(what)))
        } else {
            Answer::Refused(Refusal::Panicked(*method))
        }
    }
}

/// What a request is about, for the log: the tool, prompt or resource it names; for a
/// completion, the prompt or resource and the argument completed.
fn what(request: &ClientRequest) -> Cow<'_, str> {
    match request {
        ClientRequest::Complete(p) => {
            let of = match &p.reference {
                CompletionReference::Prompt { name } => name,
                CompletionReference::Resource { uri } => uri,
            };
            Cow::Owned(format!("{of} (argument {})", p.argument.name))
        }
        other => Cow::Borrowed(other.name().unwrap_or_default()),
    }
}

/// The tool execution error of a tool that panicked.
pub(crate) fn tool_error(tool: &str) -> CallToolResult {
    CallToolResult::error(format!("the tool {tool} failed unexpectedly (it panicked; the server's log says why)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_of_both_payload_kinds_and_of_neither() {
        let payload = |f: fn()| std::panic::catch_unwind(f).expect_err("it panics");
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let literal = payload(|| panic!("a literal"));
        let formatted = payload(|| panic!("formatted {}", 7));
        let other = payload(|| std::panic::panic_any(7_u8));
        std::panic::set_hook(prev);
        assert_eq!(message(&*literal), "a literal");
        assert_eq!(message(&*formatted), "formatted 7");
        assert_eq!(message(&*other), "(no message)");
    }
}
