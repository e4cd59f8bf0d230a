//! An app resource: the HTML of an app's interface, at a `ui://` URI, served with the app MIME
//! type and its `_meta.ui` (CSP, permissions, domain, border).

use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use mcpwire_protocol::types::{ReadResourceResult, Resource, ResourceContents, APP_MIME_TYPE, UI_META};

use super::error::AppError;
use super::meta::{Csp, Permissions, ResourceUi};
use super::tool::is_ui_uri;
use crate::authoring::{IntoResourceDef, ResourceDef};
use crate::context::Context;
use crate::error::{HandlerError, HandlerResult};
use mcpwire_protocol::ErrorObject;

type HtmlFn = Arc<dyn Fn(Context) -> BoxFuture<'static, HandlerResult<String>> + Send + Sync>;

/// Where an app's HTML comes from.
#[derive(Clone)]
enum Html {
    /// Given once.
    Text(Arc<str>),
    /// Read from a file at each read (edits show without a restart).
    File(PathBuf),
    /// Made by a function at each read.
    Function(HtmlFn),
}

/// An app's interface: HTML at a `ui://` URI, served with the MIME type
/// `text/html;profile=mcp-app`. Registered like any resource
/// ([`ServerBuilder::resource`](crate::ServerBuilder::resource)).
///
/// ```
/// use mcpwire_server::apps::{AppResource, Csp, Permissions};
///
/// let view = AppResource::html("ui://clock/view.html", "clock-view", "<!doctype html><p>…</p>")
///     .csp(Csp::new().connect("https://time.example.com"))
///     .permissions(Permissions::new().clipboard_write())
///     .prefers_border(true);
/// assert_eq!(view.uri(), "ui://clock/view.html");
/// ```
#[derive(Clone)]
pub struct AppResource {
    resource: Resource,
    html: Html,
    ui: ResourceUi,
    scopes: Vec<String>,
}

impl AppResource {
    fn new(uri: impl Into<String>, name: impl Into<String>, html: Html) -> Self {
        let mut resource = Resource::new(uri, name);
        resource.mime_type = Some(APP_MIME_TYPE.to_owned());
        Self { resource, html, ui: ResourceUi::default(), scopes: Vec::new() }
    }

    /// An app whose HTML is `html`.
    pub fn html(uri: impl Into<String>, name: impl Into<String>, html: impl Into<String>) -> Self {
        Self::new(uri, name, Html::Text(html.into().into()))
    }

    /// An app whose HTML is read from the file at `path` at each read. The server refuses to
    /// be built if there is no file there.
    pub fn file(uri: impl Into<String>, name: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Self::new(uri, name, Html::File(path.into()))
    }

    /// An app whose HTML `html(ctx)` makes at each read.
    pub fn from_fn<F, Fut>(uri: impl Into<String>, name: impl Into<String>, html: F) -> Self
    where
        F: Fn(Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<String>> + Send + 'static,
    {
        Self::new(uri, name, Html::Function(Arc::new(move |ctx| Box::pin(html(ctx)))))
    }

    /// The display name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.resource.title = Some(title.into());
        self
    }

    /// The description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.resource.description = Some(description.into());
        self
    }

    /// Another MIME type than the app MIME type. The server refuses to be built with any
    /// other: this exists so that a mistaken one is caught rather than silently replaced.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.resource.mime_type = Some(mime_type.into());
        self
    }

    /// The origins the app may reach (see [`Csp`]). The server refuses to be built if one is
    /// not an origin.
    pub fn csp(mut self, csp: Csp) -> Self {
        self.ui.csp = Some(csp);
        self
    }

    /// The sandbox permissions the app asks for.
    pub fn permissions(mut self, permissions: Permissions) -> Self {
        self.ui.permissions = Some(permissions);
        self
    }

    /// A dedicated origin for the app's frame (its format is the host's).
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.ui.domain = Some(domain.into());
        self
    }

    /// Whether the app wants the host to draw a visible border and background around it.
    pub fn prefers_border(mut self, yes: bool) -> Self {
        self.ui.prefers_border = Some(yes);
        self
    }

    /// The OAuth scopes a client's token must grant to see the resource listed and read it.
    pub fn with_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The URI.
    pub fn uri(&self) -> &str {
        &self.resource.uri
    }

    /// The `_meta.ui` written on the list entry and on the read item.
    pub fn ui(&self) -> &ResourceUi {
        &self.ui
    }

    /// What the server checks when it is built.
    pub(crate) fn check(&self) -> Result<(), AppError> {
        let uri = &self.resource.uri;
        if !is_ui_uri(uri) {
            return Err(AppError::ResourceUriNotUi { uri: uri.clone() });
        }
        match self.resource.mime_type.as_deref() {
            Some(APP_MIME_TYPE) | None => {}
            Some(other) => return Err(AppError::WrongMimeType { uri: uri.clone(), mime_type: other.to_owned() }),
        }
        if let Some(csp) = &self.ui.csp {
            csp.check(uri)?;
        }
        if let Html::File(path) = &self.html {
            if !path.is_file() {
                return Err(AppError::MissingFile { uri: uri.clone(), path: path.display().to_string() });
            }
        }
        Ok(())
    }
}

impl fmt::Debug for AppResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppResource").field("resource", &self.resource).field("ui", &self.ui).finish_non_exhaustive()
    }
}

async fn read(html: &Html, ctx: Context) -> HandlerResult<String> {
    match html {
        Html::Text(text) => Ok(text.to_string()),
        Html::File(path) => {
            let file = path.clone();
            let read = tokio::task::spawn_blocking(move || std::fs::read_to_string(file)).await;
            let why = match read {
                Ok(Ok(text)) => return Ok(text),
                Ok(Err(e)) => e.to_string(),
                Err(e) => e.to_string(),
            };
            let message = format!("the app's HTML `{}` cannot be read: {why}", path.display());
            Err(HandlerError::Protocol(ErrorObject::internal(message)))
        }
        Html::Function(f) => f(ctx).await,
    }
}

impl IntoResourceDef for AppResource {
    fn into_resource_def(self) -> ResourceDef {
        let check = self.check();
        let meta = (!self.ui.is_empty())
            .then(|| serde_json::Map::from_iter([(UI_META.to_owned(), serde_json::Value::Object(self.ui.to_json()))]));
        let mut resource = self.resource.clone();
        resource.meta = meta.clone();
        let mime_type = resource.mime_type.clone();
        let html = self.html.clone();
        let def = ResourceDef::fixed(resource, move |uri: String, ctx: Context| {
            let (html, meta, mime_type) = (html.clone(), meta.clone(), mime_type.clone());
            async move {
                let text = read(&html, ctx).await?;
                let mut item = ResourceContents::text(uri, mime_type.as_deref(), text);
                item.meta = meta;
                Ok(ReadResourceResult { contents: vec![item], meta: None })
            }
        });
        let def = if self.scopes.is_empty() { def } else { def.with_scopes(self.scopes) };
        def.with_app_check(check)
    }
}
