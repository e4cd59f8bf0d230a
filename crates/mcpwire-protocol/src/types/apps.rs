//! The words of MCP Apps (the `io.modelcontextprotocol/ui` extension): a tool that carries an
//! interactive HTML interface, served as a `ui://` resource and rendered by the host in a
//! sandboxed frame.

/// The extension identifier of MCP Apps (`capabilities.extensions` key, both sides).
pub const APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an app's HTML resource.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The scheme of an app resource's URI (with its `://`).
pub const APP_URI_SCHEME: &str = "ui://";

/// The `_meta` key of a tool's, a resource's or a resource read item's app metadata.
pub const UI_META: &str = "ui";

/// The deprecated flat `_meta` key of a tool's app resource URI, read by older hosts.
pub const UI_RESOURCE_URI_META: &str = "ui/resourceUri";

/// The member of the extension's capability object (either side) that lists the MIME types
/// of app resources.
pub const APPS_MIME_TYPES: &str = "mimeTypes";
