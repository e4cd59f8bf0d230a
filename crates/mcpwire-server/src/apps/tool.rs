//! An app tool: a tool whose `_meta.ui` names the `ui://` resource a host renders for it.

use mcpwire_protocol::types::{Tool, APP_URI_SCHEME, UI_META, UI_RESOURCE_URI_META};
use serde_json::Value;

use super::error::AppError;

/// Who may see and call an app tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// The model: the tool is listed to the agent, which may call it.
    Model,
    /// The app: the tool may be called by an app of this server (through the host).
    App,
}

/// What makes a tool an app tool: the URI of its interface, who may call it, and whether the
/// deprecated flat key is written too. Given to [`ToolDef::app`](crate::ToolDef::app), or by
/// `#[tool(app = "ui://…")]`.
///
/// ```
/// use mcpwire_server::apps::{AppTool, Visibility};
///
/// let app = AppTool::new("ui://clock/view.html").visibility([Visibility::App]).with_legacy_key();
/// assert_eq!(app.meta()["visibility"][0], "app");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppTool {
    resource_uri: String,
    visibility: Option<Vec<Visibility>>,
    legacy_key: bool,
}

impl AppTool {
    /// An app tool whose interface is the resource at `resource_uri` (a `ui://` URI), visible
    /// to the model and to apps (the host's default).
    pub fn new(resource_uri: impl Into<String>) -> Self {
        Self { resource_uri: resource_uri.into(), visibility: None, legacy_key: false }
    }

    /// Who may see and call the tool (`[Visibility::App]`: only apps, hidden from the model).
    pub fn visibility(mut self, visibility: impl IntoIterator<Item = Visibility>) -> Self {
        self.visibility = Some(visibility.into_iter().collect());
        self
    }

    /// Also writes the URI under the deprecated flat key `_meta["ui/resourceUri"]`, for hosts
    /// that read only that.
    pub fn with_legacy_key(mut self) -> Self {
        self.legacy_key = true;
        self
    }

    /// The URI of the tool's interface.
    pub fn resource_uri(&self) -> &str {
        &self.resource_uri
    }

    /// The tool's `_meta.ui`.
    pub fn meta(&self) -> Value {
        let ui = ToolUi { resource_uri: &self.resource_uri, visibility: self.visibility.as_deref() };
        serde_json::to_value(ui).unwrap_or_default()
    }

    /// Writes the app metadata into `tool`'s `_meta`, refusing a URI that is not `ui://` and
    /// app metadata already there.
    pub(crate) fn apply(&self, tool: &mut Tool) -> Result<(), AppError> {
        let name = || tool.name.clone();
        if !is_ui_uri(&self.resource_uri) {
            return Err(AppError::ToolUriNotUi { tool: name(), uri: self.resource_uri.clone() });
        }
        let meta = tool.meta.get_or_insert_with(Default::default);
        if let Some(key) = [UI_META, UI_RESOURCE_URI_META].into_iter().find(|k| meta.contains_key(*k)) {
            return Err(AppError::MetaSetByHand { tool: tool.name.clone(), key: key.to_owned() });
        }
        meta.insert(UI_META.to_owned(), self.meta());
        if self.legacy_key {
            meta.insert(UI_RESOURCE_URI_META.to_owned(), Value::String(self.resource_uri.clone()));
        }
        Ok(())
    }
}

/// A tool's `_meta.ui`, as written.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolUi<'a> {
    resource_uri: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    visibility: Option<&'a [Visibility]>,
}

impl From<&str> for AppTool {
    fn from(uri: &str) -> Self {
        Self::new(uri)
    }
}

impl From<String> for AppTool {
    fn from(uri: String) -> Self {
        Self::new(uri)
    }
}

/// Whether `uri` is a `ui://` URI with something after the scheme.
pub(crate) fn is_ui_uri(uri: &str) -> bool {
    uri.strip_prefix(APP_URI_SCHEME).is_some_and(|rest| !rest.is_empty())
}

/// Whether a registered tool is an app tool (it has a `_meta.ui`).
pub(crate) fn is_app_tool(tool: &Tool) -> bool {
    tool.meta.as_ref().is_some_and(|m| m.contains_key(UI_META))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool() -> Tool {
        Tool::new("clock", "", json!({"type": "object"}))
    }

    #[test]
    fn writes_the_resource_uri_the_visibility_and_the_flat_key_if_asked() {
        let mut t = tool();
        AppTool::new("ui://clock/view").apply(&mut t).unwrap();
        assert_eq!(json!(t.meta), json!({"ui": {"resourceUri": "ui://clock/view"}}));

        let mut t = tool();
        let app = AppTool::new("ui://clock/view").visibility([Visibility::Model, Visibility::App]).with_legacy_key();
        app.apply(&mut t).unwrap();
        assert_eq!(
            json!(t.meta),
            json!({"ui": {"resourceUri": "ui://clock/view", "visibility": ["model", "app"]},
                   "ui/resourceUri": "ui://clock/view"})
        );
        assert!(is_app_tool(&t));
    }

    #[test]
    fn other_meta_is_kept() {
        let mut t = tool();
        t.meta = Some(json!({"x": 1}).as_object().unwrap().clone());
        AppTool::new("ui://clock/view").apply(&mut t).unwrap();
        assert_eq!(t.meta.unwrap()["x"], 1);
    }

    #[test]
    fn refuses_a_uri_that_is_not_ui() {
        for uri in ["https://x.example/app.html", "ui://", "ui:/x", ""] {
            let err = AppTool::new(uri).apply(&mut tool()).unwrap_err();
            assert_eq!(err, AppError::ToolUriNotUi { tool: "clock".into(), uri: uri.into() });
        }
    }

    #[test]
    fn refuses_app_meta_set_by_hand() {
        for key in ["ui", "ui/resourceUri"] {
            let mut t = tool();
            t.meta = Some(json!({key: "ui://other"}).as_object().unwrap().clone());
            let err = AppTool::new("ui://clock/view").apply(&mut t).unwrap_err();
            assert_eq!(err, AppError::MetaSetByHand { tool: "clock".into(), key: key.into() });
            assert!(err.to_string().contains("set by hand"));
        }
    }
}
