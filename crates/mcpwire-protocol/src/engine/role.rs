//! The two roles an engine plays: types, as hyper's `Client` and `Server` are.
//!
//! Each role's associated types are given beside its engine (`server/mod.rs`, `client.rs`),
//! so that this file, which both engines and their common core use, uses neither of them.

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
    /// The answer to a request of ours, as the role reads it.
    type Reply: std::fmt::Debug;
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
