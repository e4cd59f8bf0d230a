//! The extension in capabilities: the server's entry, and whether a client declared it.

use mcpwire_protocol::types::{ClientCapabilities, JsonObject, APPS_EXTENSION, APPS_MIME_TYPES, APP_MIME_TYPE};
use serde_json::{json, Value};

/// Whether a client with these capabilities renders apps: it declared the extension, and,
/// if it lists the MIME types it renders, the app MIME type is one of them.
pub fn client_supports(capabilities: &ClientCapabilities) -> bool {
    let Some(declared) = capabilities.extensions.as_ref().and_then(|e| e.get(APPS_EXTENSION)) else { return false };
    match declared.get(APPS_MIME_TYPES) {
        Some(Value::Array(types)) => types.iter().any(|t| t.as_str() == Some(APP_MIME_TYPE)),
        _ => true,
    }
}

/// `extensions` with the server's entry added (made if there is none) when it offers apps.
pub(crate) fn declare(offers_apps: bool, extensions: Option<JsonObject>) -> Option<JsonObject> {
    if !offers_apps {
        return extensions;
    }
    let mut extensions = extensions.unwrap_or_default();
    extensions.insert(APPS_EXTENSION.to_owned(), json!({ APPS_MIME_TYPES: [APP_MIME_TYPE] }));
    Some(extensions)
}
