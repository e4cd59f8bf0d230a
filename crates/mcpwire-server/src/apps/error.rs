//! What is wrong with an app tool or an app resource, found when the server is built.

/// A mistake in an app tool or an app resource: the server refuses to be built with it
/// ([`ServerBuilder::try_build`](crate::ServerBuilder::try_build)), so that it shows at start-up
/// rather than in a host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AppError {
    /// An app tool names a resource whose URI is not a `ui://` URI.
    #[error("the app tool `{tool}` names `{uri}`, which is not a `ui://` URI")]
    ToolUriNotUi {
        /// The tool.
        tool: String,
        /// The URI it names.
        uri: String,
    },
    /// An app resource's URI is not a `ui://` URI.
    #[error("the app resource `{uri}` does not have a `ui://` URI")]
    ResourceUriNotUi {
        /// The resource's URI.
        uri: String,
    },
    /// An app tool names a resource the server does not have.
    #[error("the app tool `{tool}` names `{uri}`, but the server has no resource with that URI")]
    MissingResource {
        /// The tool.
        tool: String,
        /// The URI it names.
        uri: String,
    },
    /// An app tool's `_meta` already holds app metadata (`ui` or `ui/resourceUri`), set by
    /// hand: the two would disagree.
    #[error("the app tool `{tool}` already has `_meta.{key}` set by hand; let the app settings write it")]
    MetaSetByHand {
        /// The tool.
        tool: String,
        /// The key found.
        key: String,
    },
    /// An app resource is given a MIME type other than the app MIME type.
    #[error("the app resource `{uri}` has the MIME type `{mime_type}`; an app is served as `{expected}`", expected = mcpwire_protocol::types::APP_MIME_TYPE)]
    WrongMimeType {
        /// The resource's URI.
        uri: String,
        /// The MIME type it was given.
        mime_type: String,
    },
    /// An origin of an app resource's CSP is not an origin.
    #[error("the CSP of the app resource `{uri}` lists `{origin}` in `{directive}`, which is not an origin: {reason}")]
    MalformedOrigin {
        /// The resource's URI.
        uri: String,
        /// The CSP member (`connectDomains`, `resourceDomains`, `frameDomains`, `baseUriDomains`).
        directive: &'static str,
        /// The value given.
        origin: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An app resource served from a file names a file that does not exist.
    #[error("the app resource `{uri}` is served from `{path}`, which is not a file")]
    MissingFile {
        /// The resource's URI.
        uri: String,
        /// The path given.
        path: String,
    },
}
