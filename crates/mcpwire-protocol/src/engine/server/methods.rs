//! Which methods exist in which revision, and whether the server offers them to this client
//! (the `-32021` errors of a capability the client did not declare).

use serde_json::json;

use super::{Feature, Offer, Scope, ServerPeer};
use crate::error::{ErrorObject, MISSING_REQUIRED_CLIENT_CAPABILITY};
use crate::method::Method;
use crate::revision::ProtocolVersion;
use crate::types::{JsonObject, TASKS_EXTENSION};

/// The `-32021` error of a 2026-07-28 request that needs a client capability not declared.
pub fn missing_capability(required: JsonObject, what: &str) -> ErrorObject {
    ErrorObject::new(MISSING_REQUIRED_CLIENT_CAPABILITY, format!("Missing required client capability: {what}"))
        .with_data(json!({ crate::error::REQUIRED_CAPABILITIES: required }))
}

/// The `-32021` error of a task method called by a 2026-07-28 client without the extension.
pub fn tasks_extension_missing() -> ErrorObject {
    missing_capability(
        JsonObject::from_iter([("extensions".to_owned(), json!({ TASKS_EXTENSION: {} }))]),
        &format!("the extension {TASKS_EXTENSION}"),
    )
}

/// The methods each revision has (for the server to answer).
pub(super) fn exists_in(method: Method, rev: ProtocolVersion) -> bool {
    use Method as M;
    let common = matches!(
        method,
        M::ListTools
            | M::CallTool
            | M::ListResources
            | M::ListResourceTemplates
            | M::ReadResource
            | M::ListPrompts
            | M::GetPrompt
            | M::Complete
    );
    if rev.is_modern() {
        // Tasks are the `io.modelcontextprotocol/tasks` extension here: no tasks/result or tasks/list.
        common || matches!(method, M::Discover | M::Listen | M::GetTask | M::UpdateTask | M::CancelTask)
    } else {
        common
            || matches!(method, M::Ping | M::Subscribe | M::Unsubscribe | M::SetLevel)
            || (rev == ProtocolVersion::V2025_11_25
                && matches!(method, M::GetTask | M::TaskResult | M::ListTasks | M::CancelTask))
    }
}

/// The feature a method needs offered.
fn feature_of(method: Method) -> Option<Feature> {
    use Method as M;
    Some(match method {
        M::ListTools | M::CallTool => Feature::Tools,
        M::ListResources | M::ListResourceTemplates | M::ReadResource | M::Subscribe | M::Unsubscribe => {
            Feature::Resources
        }
        M::ListPrompts | M::GetPrompt => Feature::Prompts,
        M::Complete => Feature::Completions,
        M::SetLevel => Feature::Logging,
        _ => return None,
    })
}

impl<W, H: Clone + Default> ServerPeer<W, H> {
    /// Whether the server offers what a method needs, for this client.
    pub(super) fn gate(&self, method: Method, scope: &Scope, offer: &dyn Offer) -> Result<(), ErrorObject> {
        let not_offered = || ErrorObject::method_not_found(method.as_str());
        if let Some(feature) = feature_of(method) {
            if feature == Feature::Logging && !self.settings.logging {
                return Err(not_offered());
            }
            return if offer.offers(feature) { Ok(()) } else { Err(not_offered()) };
        }
        if matches!(
            method,
            Method::GetTask | Method::TaskResult | Method::ListTasks | Method::CancelTask | Method::UpdateTask
        ) {
            let tasks = self.settings.tasks.ok_or_else(not_offered)?;
            if scope.revision.is_modern() {
                if !tasks.extension {
                    return Err(not_offered());
                }
                if !scope.declares_tasks_extension() {
                    return Err(tasks_extension_missing());
                }
            } else if method == Method::ListTasks && !tasks.list {
                return Err(not_offered());
            }
        }
        Ok(())
    }
}
