//! MCP Apps (the `io.modelcontextprotocol/ui` extension): tools that carry an interactive HTML
//! interface, which hosts render in a sandboxed frame.
//!
//! An app is two things registered together:
//!
//! - an **app resource** ([`AppResource`]): the HTML, at a `ui://` URI, served with the MIME
//!   type [`APP_MIME_TYPE`] and its `_meta.ui` (the [`Csp`] of the origins it may reach, the
//!   [`Permissions`] it asks for, a dedicated `domain`, a border preference);
//! - an **app tool**: a tool whose `_meta.ui.resourceUri` names that resource
//!   (`#[tool(app = "ui://…")]`, or [`ToolDef::app`](crate::ToolDef::app) with an [`AppTool`]).
//!
//! The host calls the tool as usual, renders the resource, and hands the app the tool's input
//! and result over `postMessage`; the app may call the server's tools through the host.
//!
//! Mistakes are found when the server is built ([`ServerBuilder::try_build`] returns an
//! [`AppError`], [`ServerBuilder::build`] panics with it): a URI that is not `ui://`, an app
//! tool naming a resource the server does not have, `_meta.ui` also set by hand, another MIME
//! type, a malformed CSP origin. A server with an app tool or resource declares the extension
//! in `capabilities.extensions`: in 2026-07-28 (`server/discover`), and to a legacy client
//! that sent `extensions` in `initialize` (as hosts of that era that render apps do, though
//! their revision lacks the member). [`Context::client_supports_apps`] says whether the client
//! declared it (in 2026-07-28, on the request at hand).
//!
//! ```
//! use mcpwire_server::apps::{AppResource, AppTool, Csp, Visibility};
//! use mcpwire_server::{Server, ToolDef};
//! use mcpwire_protocol::types::{CallToolResult, Tool};
//! use serde_json::json;
//!
//! let clock = ToolDef::new(Tool::new("clock", "The time, on a clock face", json!({"type": "object"})), |_, _| async {
//!     Ok(CallToolResult::text("12:00"))
//! })
//! .app(AppTool::new("ui://clock/view.html").visibility([Visibility::Model, Visibility::App]));
//!
//! let view = AppResource::html("ui://clock/view.html", "clock-view", "<!doctype html><div id=clock></div>")
//!     .csp(Csp::new().connect("https://time.example.com"));
//!
//! let server = Server::builder("clock", "1.0").tool(clock).resource(view).try_build().unwrap();
//! let listed = server.tool_definition("clock").unwrap();
//! assert_eq!(listed.meta.unwrap()["ui"]["resourceUri"], "ui://clock/view.html");
//!
//! // A tool naming a resource the server does not have is refused.
//! let orphan = ToolDef::new(Tool::new("orphan", "", json!({"type": "object"})), |_, _| async {
//!     Ok(CallToolResult::text(""))
//! })
//! .app("ui://nowhere");
//! assert!(Server::builder("x", "1").tool(orphan).try_build().is_err());
//! ```
//!
//! [`ServerBuilder::try_build`]: crate::ServerBuilder::try_build
//! [`ServerBuilder::build`]: crate::ServerBuilder::build

mod capability;
mod error;
mod meta;
mod resource;
mod tool;

use std::collections::HashSet;

pub use capability::client_supports;
pub(crate) use capability::declare;
pub use error::AppError;
pub use mcpwire_protocol::types::{APPS_EXTENSION, APP_MIME_TYPE, APP_URI_SCHEME, UI_META, UI_RESOURCE_URI_META};
pub use meta::{Csp, Permissions, ResourceUi};
pub use resource::AppResource;
pub(crate) use tool::is_app_tool;
pub use tool::{AppTool, Visibility};

use crate::authoring::definition::ResourceKind;
use crate::authoring::{ResourceDef, ToolDef};
use crate::context::Context;

impl Context {
    /// Whether the client renders apps (see [`client_supports`]): what it declared when it
    /// initialized, or, in 2026-07-28, what this request declares. A tool may answer in plain
    /// text to a client that does not.
    pub fn client_supports_apps(&self) -> bool {
        client_supports(self.client_capabilities())
    }
}

impl ToolDef {
    /// Makes this tool an app tool: when it is registered, its `_meta.ui` names the `ui://`
    /// resource the host renders for it (a URI, or an [`AppTool`] with more settings). The
    /// server refuses to be built if the URI is not `ui://`, if it has no resource at that
    /// URI, or if the tool's `_meta` already holds app metadata (see [`AppError`]).
    pub fn app(mut self, app: impl Into<AppTool>) -> Self {
        self.app = Some(app.into());
        self
    }

    /// The app settings given to [`Self::app`], if any.
    pub fn app_settings(&self) -> Option<&AppTool> {
        self.app.as_ref()
    }
}

/// The checks made when a server is built: each app resource's own, then each app tool's (its
/// URI, its `_meta`, and that a resource of the server has that URI).
pub(crate) fn check(tools: &[ToolDef], resources: &[ResourceDef]) -> Result<(), AppError> {
    for resource in resources {
        if let Some(Err(e)) = &resource.app_check {
            return Err(e.clone());
        }
    }
    let uris: HashSet<&str> =
        resources.iter().filter(|r| matches!(r.kind, ResourceKind::Fixed(..))).map(ResourceDef::uri).collect();
    for def in tools {
        let Some(app) = &def.app else { continue };
        app.apply(&mut def.tool.clone())?;
        if !uris.contains(app.resource_uri()) {
            return Err(AppError::MissingResource { tool: def.tool.name.clone(), uri: app.resource_uri().to_owned() });
        }
    }
    Ok(())
}
