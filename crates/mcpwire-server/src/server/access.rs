//! Which scopes a request needs: those of the tool, resource (or the template that matches
//! it) or prompt it names. What a transport asks before serving (HTTP answers `403` with the
//! scopes to step up to), and what the server checks again when it serves.

use mcpwire_protocol::message::ClientRequest;
use mcpwire_protocol::types::CompletionReference;
use mcpwire_protocol::Principal;

use super::Server;
use crate::refusal::Refusal;
use crate::scopes::Scopes;

impl Server {
    /// The scopes `request` needs: those of what it names (`tools/call`, `resources/read`,
    /// `prompts/get`, `completion/complete`), none for the rest and for names that do not
    /// exist (those are refused as unknown, whoever asks).
    pub fn required_scopes(&self, request: &ClientRequest) -> Scopes {
        let inner = &self.inner;
        match request {
            ClientRequest::CallTool(call) => inner.tools.with_all(|t| t.get(&call.name).map(|e| e.scopes.clone())),
            ClientRequest::ReadResource(read) => self.resource_scopes(&read.uri),
            ClientRequest::GetPrompt(get) => inner.prompts.with_all(|p| p.get(&get.name).map(|e| e.scopes.clone())),
            ClientRequest::Complete(complete) => match &complete.reference {
                CompletionReference::Prompt { name } => {
                    inner.prompts.with_all(|p| p.get(name).map(|e| e.scopes.clone()))
                }
                CompletionReference::Resource { uri } => {
                    inner.templates.with_all(|t| t.get(uri).map(|e| e.scopes.clone()))
                }
            },
            _ => None,
        }
        .unwrap_or_default()
    }

    /// The scopes of the resource at `uri`, or of the first template that matches it.
    fn resource_scopes(&self, uri: &str) -> Option<Scopes> {
        let inner = &self.inner;
        if let Some(scopes) = inner.resources.with_all(|r| r.get(uri).map(|e| e.scopes.clone())) {
            return Some(scopes);
        }
        inner.templates.with_all(|t| t.values().find(|e| e.parsed.matches(uri).is_some()).map(|e| e.scopes.clone()))
    }

    /// The refusal of a request whose principal lacks a scope what it names needs.
    pub(crate) fn refuse_scope(&self, request: &ClientRequest, principal: Option<&Principal>) -> Option<Refusal> {
        let principal = principal?;
        let needed = self.required_scopes(request);
        if needed.permit(Some(principal)) {
            return None;
        }
        let target = match request {
            ClientRequest::CallTool(c) => format!("the tool {}", c.name),
            ClientRequest::ReadResource(r) => format!("the resource {}", r.uri),
            ClientRequest::GetPrompt(p) => format!("the prompt {}", p.name),
            other => format!("this {} request", other.method()),
        };
        Some(Refusal::InsufficientScope { target, scopes: needed.as_slice().to_vec() })
    }
}
