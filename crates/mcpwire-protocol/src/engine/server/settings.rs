//! What a server offers and how it is set up: [`Offer`], [`Feature`], [`TaskMethods`],
//! [`ServerSettings`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::codec::ResultContext;
use crate::engine::request_state::StateSealer;
use crate::types::{CacheHint, ClientCapabilities, Implementation, ServerCapabilities};

/// What a server offers, asked when it matters (the registries change at any time).
pub trait Offer {
    /// Whether a feature is offered now.
    fn offers(&self, feature: Feature) -> bool;
    /// The capabilities declared now.
    fn capabilities(&self) -> ServerCapabilities;
}

/// A feature a server may offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// Tools.
    Tools,
    /// Resources and templates (and, in the legacy era, subscriptions to them).
    Resources,
    /// Prompts.
    Prompts,
    /// Log messages.
    Logging,
    /// Argument completion.
    Completions,
}

/// Which task methods a server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskMethods {
    /// `tasks/list` (2025-11-25).
    pub list: bool,
    /// The `io.modelcontextprotocol/tasks` extension for 2026-07-28 clients.
    pub extension: bool,
}

/// A server's settings, shared by all its connections.
#[derive(Debug, Clone)]
pub struct ServerSettings {
    /// Who the server is.
    pub info: Implementation,
    /// How to use it.
    pub instructions: Option<String>,
    /// Caching hints of cacheable results (2026-07-28).
    pub cache: CacheHint,
    /// Serve the modern era only: `initialize` is refused, naming the versions spoken.
    pub modern_only: bool,
    /// Send log messages (and answer `logging/setLevel`).
    pub logging: bool,
    /// Seals the state of multi-round requests.
    pub sealer: StateSealer,
    /// How long a sealed state stays valid.
    pub request_state_ttl: Duration,
    /// The task methods, when tasks are enabled.
    pub tasks: Option<TaskMethods>,
    /// What clients declared, kept once for all the sessions and listen streams that
    /// declared the same.
    pub declared: Declared,
}

/// The last client capabilities and client info a server's engines were given, handed out
/// again for an equal declaration: thousands of sessions of one kind of client declare the
/// same, and each would otherwise keep a copy of its own (about 600 bytes, mostly the optional
/// maps of [`ClientCapabilities`]). One comparison per handshake.
/// Settings cloned keep sharing it.
#[derive(Debug, Default, Clone)]
pub struct Declared {
    capabilities: Arc<Mutex<Option<Arc<ClientCapabilities>>>>,
    client_info: Arc<Mutex<Option<Arc<Implementation>>>>,
}

impl Declared {
    /// `capabilities`, shared with the last equal ones.
    pub fn capabilities(&self, capabilities: ClientCapabilities) -> Arc<ClientCapabilities> {
        shared(&self.capabilities, capabilities)
    }

    /// `info`, shared with the last equal one.
    pub fn client_info(&self, info: Implementation) -> Arc<Implementation> {
        shared(&self.client_info, info)
    }
}

fn shared<T: PartialEq>(last: &Mutex<Option<Arc<T>>>, value: T) -> Arc<T> {
    let mut last = last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    match last.as_ref() {
        Some(kept) if **kept == value => kept.clone(),
        _ => last.insert(Arc::new(value)).clone(),
    }
}

impl ServerSettings {
    /// Settings for a server with this info and nothing else set.
    pub fn new(info: Implementation) -> Self {
        Self {
            info,
            instructions: None,
            cache: CacheHint::default(),
            modern_only: false,
            logging: true,
            sealer: StateSealer::random(),
            request_state_ttl: Duration::from_secs(600),
            tasks: None,
            declared: Declared::default(),
        }
    }

    pub(super) fn result_context(&self) -> ResultContext<'_> {
        ResultContext { server_info: Some(&self.info), cache: self.cache }
    }
}
