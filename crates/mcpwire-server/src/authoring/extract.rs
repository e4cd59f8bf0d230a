//! Extractors: handler parameters filled from the request's context rather than from the
//! client's arguments. They are not part of a tool's input schema.

use std::ops::{Deref, DerefMut};

use mcpwire_protocol::{ErrorObject, Principal};

use crate::context::Context;
use crate::error::HandlerError;

/// A value a handler takes from the request's context instead of the client's arguments.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be taken from the request's context",
    label = "not an extractor",
    note = "the extractors are `Context`, `State<T>` and `Principal` (or `Option<Principal>`); a parameter the client gives is a plain `Deserialize + JsonSchema` type"
)]
pub trait FromContext: Sized {
    /// Takes the value out of the context.
    fn from_context(ctx: &Context) -> Result<Self, HandlerError>;
}

impl FromContext for Context {
    fn from_context(ctx: &Context) -> Result<Self, HandlerError> {
        Ok(ctx.clone())
    }
}

/// Who the request comes from ([`Context::principal`]). A handler taking a `Principal`
/// serves only authorized requests: one without (over stdio, or an HTTP endpoint without a
/// resource server) is refused with `-32600`. Take an `Option<Principal>` to serve both.
impl FromContext for Principal {
    fn from_context(ctx: &Context) -> Result<Self, HandlerError> {
        match ctx.principal() {
            Some(p) => Ok(p.clone()),
            None => Err(HandlerError::Protocol(ErrorObject::invalid_request(
                "this handler serves authorized requests only, and the request came without authorization",
            ))),
        }
    }
}

/// Who the request comes from, if its transport authorized it.
impl FromContext for Option<Principal> {
    fn from_context(ctx: &Context) -> Result<Self, HandlerError> {
        Ok(ctx.principal().cloned())
    }
}

/// Application state given to [`crate::ServerBuilder::state`]: a clone of the value of type
/// `T` (give an `Arc<T>` to share one value). A handler that takes a type never given fails
/// with `-32603`, naming the type.
///
/// ```ignore
/// async fn note(id: usize, State(notes): State<Arc<Notes>>) -> Option<String> { ... }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct State<T>(pub T);

impl<T: Clone + Send + Sync + 'static> FromContext for State<T> {
    fn from_context(ctx: &Context) -> Result<Self, HandlerError> {
        match ctx.state::<T>() {
            Some(value) => Ok(State(value.clone())),
            None => Err(HandlerError::Protocol(ErrorObject::internal(format!(
                "the server has no state of type {}: give it with ServerBuilder::state",
                std::any::type_name::<T>()
            )))),
        }
    }
}

impl<T> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for State<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}
