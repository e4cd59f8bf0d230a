//! The app metadata of a resource (`_meta.ui` of its list entry and of its read item): the
//! content security policy, the sandbox permissions, the dedicated origin and the border.

use serde::ser::{Serialize, SerializeMap, Serializer};

use mcpwire_protocol::types::{
    CSP_BASE_URI_DOMAINS, CSP_CONNECT_DOMAINS, CSP_FRAME_DOMAINS, CSP_RESOURCE_DOMAINS, PERMISSION_CAMERA,
    PERMISSION_CLIPBOARD_WRITE, PERMISSION_GEOLOCATION, PERMISSION_MICROPHONE,
};

use super::error::AppError;

/// The origins an app may reach, from which the host builds the frame's Content Security
/// Policy. Each list is empty by default: no network, no external resources, no nested frames,
/// the base URI its own origin. An origin is `scheme://host[:port]`; the host may start with
/// `*.` for every subdomain.
///
/// ```
/// use mcpwire_server::apps::Csp;
///
/// let csp = Csp::new().connect("https://api.example.com").resource("https://*.cdn.example.com");
/// assert_eq!(csp.connect_domains, ["https://api.example.com"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Csp {
    /// Origins of network requests: fetch, XHR, WebSocket (`connect-src`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub connect_domains: Vec<String>,
    /// Origins of images, scripts, stylesheets, fonts and media (`img-src`, `script-src`, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resource_domains: Vec<String>,
    /// Origins of nested frames (`frame-src`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub frame_domains: Vec<String>,
    /// Origins the document's base URI may have (`base-uri`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub base_uri_domains: Vec<String>,
}

impl Csp {
    /// A policy that allows nothing beyond the app itself.
    pub fn new() -> Self {
        Self::default()
    }

    /// Allows network requests to `origin`.
    pub fn connect(mut self, origin: impl Into<String>) -> Self {
        self.connect_domains.push(origin.into());
        self
    }

    /// Allows static resources (images, scripts, styles, fonts, media) from `origin`.
    pub fn resource(mut self, origin: impl Into<String>) -> Self {
        self.resource_domains.push(origin.into());
        self
    }

    /// Allows nested frames from `origin`.
    pub fn frame(mut self, origin: impl Into<String>) -> Self {
        self.frame_domains.push(origin.into());
        self
    }

    /// Allows `origin` as the document's base URI.
    pub fn base_uri(mut self, origin: impl Into<String>) -> Self {
        self.base_uri_domains.push(origin.into());
        self
    }

    /// Each list with the name of its wire member.
    fn lists(&self) -> [(&'static str, &[String]); 4] {
        [
            (CSP_CONNECT_DOMAINS, &self.connect_domains),
            (CSP_RESOURCE_DOMAINS, &self.resource_domains),
            (CSP_FRAME_DOMAINS, &self.frame_domains),
            (CSP_BASE_URI_DOMAINS, &self.base_uri_domains),
        ]
    }

    /// Checks that every entry is an origin.
    pub(crate) fn check(&self, uri: &str) -> Result<(), AppError> {
        for (directive, origins) in self.lists() {
            for origin in origins {
                if let Err(reason) = mcpwire_protocol::types::csp_origin(origin) {
                    let origin = origin.clone();
                    return Err(AppError::MalformedOrigin { uri: uri.to_owned(), directive, origin, reason });
                }
            }
        }
        Ok(())
    }
}

/// The sandbox permissions an app asks for; the host decides whether to grant them. None by
/// default.
///
/// ```
/// use mcpwire_server::apps::Permissions;
///
/// let permissions = Permissions::new().camera().clipboard_write();
/// assert!(permissions.camera && !permissions.microphone);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Permissions {
    /// The camera (`camera`).
    pub camera: bool,
    /// The microphone (`microphone`).
    pub microphone: bool,
    /// The position (`geolocation`).
    pub geolocation: bool,
    /// Writing to the clipboard (`clipboardWrite`).
    pub clipboard_write: bool,
}

impl Permissions {
    /// No permission.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks for the camera.
    pub fn camera(mut self) -> Self {
        self.camera = true;
        self
    }

    /// Asks for the microphone.
    pub fn microphone(mut self) -> Self {
        self.microphone = true;
        self
    }

    /// Asks for the position.
    pub fn geolocation(mut self) -> Self {
        self.geolocation = true;
        self
    }

    /// Asks to write to the clipboard.
    pub fn clipboard_write(mut self) -> Self {
        self.clipboard_write = true;
        self
    }

    /// Whether it asks for nothing.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Written as `{"camera": {}, ...}`: one empty object per permission asked for.
impl Serialize for Permissions {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let asked = [
            (PERMISSION_CAMERA, self.camera),
            (PERMISSION_MICROPHONE, self.microphone),
            (PERMISSION_GEOLOCATION, self.geolocation),
            (PERMISSION_CLIPBOARD_WRITE, self.clipboard_write),
        ];
        let mut map = serializer.serialize_map(None)?;
        for (name, _) in asked.iter().filter(|(_, yes)| *yes) {
            map.serialize_entry(name, &serde_json::Map::new())?;
        }
        map.end()
    }
}

/// The `_meta.ui` of an app resource: written on its `resources/list` entry and on the item
/// of its `resources/read`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceUi {
    /// The content security policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub csp: Option<Csp>,
    /// The sandbox permissions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permissions: Option<Permissions>,
    /// A dedicated origin for the app's frame (its format is the host's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether the app wants the host to draw a border and background around it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
}

impl ResourceUi {
    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// As a JSON object.
    pub fn to_json(&self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn written_in_camel_case() {
        let ui = ResourceUi {
            csp: Some(
                Csp::new()
                    .connect("https://a.example")
                    .resource("https://b.example")
                    .frame("https://c.example")
                    .base_uri("https://d.example"),
            ),
            permissions: Some(Permissions::new().camera().microphone().geolocation().clipboard_write()),
            domain: Some("x.example".into()),
            prefers_border: Some(false),
        };
        assert_eq!(
            serde_json::to_value(&ui).unwrap(),
            json!({
                "csp": {"connectDomains": ["https://a.example"], "resourceDomains": ["https://b.example"],
                        "frameDomains": ["https://c.example"], "baseUriDomains": ["https://d.example"]},
                "permissions": {"camera": {}, "microphone": {}, "geolocation": {}, "clipboardWrite": {}},
                "domain": "x.example",
                "prefersBorder": false,
            })
        );
        assert_eq!(serde_json::to_value(Permissions::new().geolocation()).unwrap(), json!({"geolocation": {}}));
        assert_eq!(serde_json::to_value(Csp::new()).unwrap(), json!({}));
        assert!(ResourceUi::default().is_empty());
    }

    #[test]
    fn a_malformed_origin_names_the_resource_the_member_and_the_value() {
        let err = Csp::new().connect("https://ok.example").frame("example.com").check("ui://a/b").unwrap_err();
        assert_eq!(
            err,
            AppError::MalformedOrigin {
                uri: "ui://a/b".into(),
                directive: "frameDomains",
                origin: "example.com".into(),
                reason: "it has no scheme (`https://`)",
            }
        );
        assert!(err.to_string().contains("`frameDomains`"));
    }
}
