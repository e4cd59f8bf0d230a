//! A client's capabilities as each revision writes them: what the client can answer is said
//! once ([`ClientAbilities`]), and the codec shapes it for the revision spoken.
//!
//! - `elicitation` exists from 2025-06-18; from 2025-11-25 it names its modes (`form`, and
//!   `url` when the client opens links).
//! - `sampling.tools` (requests that offer tools) is 2025-11-25 and later.
//! - `roots.listChanged` is legacy only: 2026-07-28 has no roots notifications.
//! - The 2025-11-25 `tasks` capability says which questions the client answers as tasks when
//!   asked (those it answers at all), and that it lists and cancels them; 2026-07-28 has the
//!   tasks extension instead, declared with the other extensions.

use serde_json::{json, Value};

use crate::revision::ProtocolVersion;
use crate::types::{ClientCapabilities, JsonObject, TASKS_EXTENSION};

/// What a client can answer and take part in, whatever the revision.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientAbilities {
    /// It answers `sampling/createMessage`.
    pub sampling: bool,
    /// Its sampling answers requests that offer tools (`tools`, `toolChoice`).
    pub sampling_tools: bool,
    /// It answers `elicitation/create` with a form.
    pub elicitation: bool,
    /// Its elicitation also takes URL mode (the user is sent to a link).
    pub elicitation_url: bool,
    /// It answers `roots/list`.
    pub roots: bool,
    /// It follows tasks of the 2026-07-28 tasks extension.
    pub tasks_extension: bool,
    /// It answers questions as tasks when a 2025-11-25 server asks it to.
    pub task_requests: bool,
    /// Other extensions it declares (`capabilities.extensions`), by id.
    pub extensions: JsonObject,
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(members) => members,
        _ => JsonObject::new(),
    }
}

impl ClientAbilities {
    /// The capabilities declared to a server of revision `version`.
    pub fn capabilities(&self, version: ProtocolVersion) -> ClientCapabilities {
        let elicitation = match version {
            v if v >= ProtocolVersion::V2025_11_25 => {
                let mut modes = json!({"form": {}});
                if self.elicitation_url {
                    modes["url"] = json!({});
                }
                Some(object(modes))
            }
            v if v >= ProtocolVersion::V2025_06_18 => Some(JsonObject::new()),
            _ => None,
        };
        let sampling = match self.sampling_tools && version >= ProtocolVersion::V2025_11_25 {
            true => object(json!({"tools": {}})),
            false => JsonObject::new(),
        };
        let roots = match version.is_modern() {
            true => JsonObject::new(),
            false => object(json!({"listChanged": true})),
        };
        let mut extensions = self.extensions.clone();
        if self.tasks_extension && version.is_modern() {
            extensions.insert(TASKS_EXTENSION.into(), json!({}));
        }
        ClientCapabilities {
            sampling: self.sampling.then_some(sampling),
            elicitation: elicitation.filter(|_| self.elicitation),
            roots: self.roots.then_some(roots),
            tasks: self.task_requests_capability(version),
            extensions: (!extensions.is_empty()).then_some(extensions),
            ..ClientCapabilities::default()
        }
    }

    /// The 2025-11-25 `tasks` capability of a client that answers questions as tasks.
    fn task_requests_capability(&self, version: ProtocolVersion) -> Option<JsonObject> {
        if !self.task_requests || version != ProtocolVersion::V2025_11_25 {
            return None;
        }
        let mut requests = JsonObject::new();
        if self.elicitation {
            requests.insert("elicitation".into(), json!({"create": {}}));
        }
        if self.sampling {
            requests.insert("sampling".into(), json!({"createMessage": {}}));
        }
        if requests.is_empty() {
            return None;
        }
        Some(object(json!({"list": {}, "cancel": {}, "requests": requests})))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Method;

    fn everything() -> ClientAbilities {
        ClientAbilities {
            sampling: true,
            sampling_tools: true,
            elicitation: true,
            elicitation_url: true,
            roots: true,
            tasks_extension: true,
            task_requests: true,
            extensions: JsonObject::from_iter([("x.example/y".to_owned(), json!({"v": 1}))]),
        }
    }

    #[test]
    fn each_revision_gets_its_shape() {
        let caps = |v| serde_json::to_value(everything().capabilities(v)).unwrap();
        assert_eq!(
            caps(ProtocolVersion::V2024_11_05),
            json!({"sampling": {}, "roots": {"listChanged": true}, "extensions": {"x.example/y": {"v": 1}}})
        );
        assert_eq!(caps(ProtocolVersion::V2025_06_18)["elicitation"], json!({}));
        let v11 = caps(ProtocolVersion::V2025_11_25);
        assert_eq!(v11["elicitation"], json!({"form": {}, "url": {}}));
        assert_eq!(v11["sampling"], json!({"tools": {}}));
        let declared = everything().capabilities(ProtocolVersion::V2025_11_25);
        assert!(declared.takes_task_requests(Method::Elicit) && declared.takes_task_requests(Method::CreateMessage));
        let v26 = caps(ProtocolVersion::V2026_07_28);
        assert_eq!(v26["roots"], json!({}));
        assert!(v26.get("tasks").is_none());
        assert_eq!(v26["extensions"], json!({"x.example/y": {"v": 1}, TASKS_EXTENSION: {}}));
        assert_eq!(ClientAbilities::default().capabilities(ProtocolVersion::LATEST), ClientCapabilities::default());
    }
}
