//! The two roles an engine plays: types, as hyper's `Client` and `Server` are.

use super::client::{ClientNews, ClientServing};
use super::server::{ServedRequest, ServerNews, ServerServing};
use crate::message::{ClientNotification, Notified, Request, ServerNotification, ServerRequest};

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Server {}
    impl Sealed for super::Client {}
}

/// A role: what it receives and what it tells the application.
pub trait Role: sealed::Sealed {
    /// A request of the peer's, as the application serves it.
    type Served: std::fmt::Debug;
    /// A notification of the peer's, as the application sees it.
    type Notified: std::fmt::Debug;
    /// The role's own news.
    type News: std::fmt::Debug;
    /// What the role keeps about a request of the peer's while it is served.
    #[doc(hidden)]
    type Serving;
}

/// The server role (see [`super::ServerPeer`]).
#[derive(Debug, Clone, Copy)]
pub struct Server;

/// The client role (see [`super::ClientPeer`]).
#[derive(Debug, Clone, Copy)]
pub struct Client;

impl Role for Server {
    type Served = Box<ServedRequest>;
    type Notified = Notified<ClientNotification>;
    type News = ServerNews;
    type Serving = ServerServing;
}

impl Role for Client {
    type Served = Box<Request<ServerRequest>>;
    type Notified = Notified<ServerNotification>;
    type News = ClientNews;
    type Serving = ClientServing;
}
