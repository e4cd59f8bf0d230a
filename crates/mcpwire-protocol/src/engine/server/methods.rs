//! Whether the server offers a method to this client (the `-32021` errors of a capability
//! the client did not declare). Which methods each revision has is
//! [`ProtocolVersion::has_request`](crate::ProtocolVersion::has_request).

use serde_json::json;

use super::{Feature, Offer, Scope, ServerPeer};
use crate::error::{ErrorObject, MISSING_REQUIRED_CLIENT_CAPABILITY};
use crate::method::Method;
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
