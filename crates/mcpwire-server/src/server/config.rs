//! How a server is configured.

use std::time::Duration;

use mcpwire_protocol::types::CacheHint;

/// Settings of a server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Items per page of a list result.
    pub page_size: usize,
    /// How long a request to the client (sampling, elicitation, roots) may take.
    pub request_timeout: Duration,
    /// How long in-flight requests may run on after the client closed its side.
    pub shutdown_grace: Duration,
    /// Caching hints for cacheable results (2026-07-28).
    pub cache: CacheHint,
    /// How long a sealed `requestState` stays valid (2026-07-28 multi-round requests).
    pub request_state_ttl: Duration,
    /// Declare `tools` even when no tool is registered (tools come later).
    pub tools: bool,
    /// Declare `resources` even when none is registered.
    pub resources: bool,
    /// Declare `prompts` even when none is registered.
    pub prompts: bool,
    /// Declare `logging` and send log messages.
    pub logging: bool,
    /// Declare `completions`.
    pub completions: bool,
    /// Serve only the modern era (2026-07-28): `initialize` is refused with the supported
    /// versions, and `server/discover` lists only modern ones.
    pub modern_only: bool,
    /// Requests served at once, of all connections; one more is refused (`-32603`, "too
    /// many requests in flight"). Tasks running in the background are bounded by
    /// [`crate::TaskConfig::max_tasks`] instead.
    pub max_in_flight: usize,
    /// Requests served at once on one connection (a session); one more is refused.
    pub max_in_flight_per_session: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            page_size: 100,
            request_timeout: Duration::from_secs(60),
            shutdown_grace: Duration::from_secs(10),
            cache: CacheHint::default(),
            request_state_ttl: Duration::from_secs(600),
            tools: false,
            resources: false,
            prompts: false,
            logging: true,
            completions: false,
            modern_only: false,
            max_in_flight: 10_000,
            max_in_flight_per_session: 1_000,
        }
    }
}
