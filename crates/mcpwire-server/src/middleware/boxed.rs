//! [`Stack`]: the layers built so far, type-erased, as the next layer wraps them.
//!
//! Tower's `BoxCloneSyncService` would do, but at a price paid on every request: it boxes
//! each layer's future again although every layer of this crate already answers a boxed
//! future, and the server would clone it (a heap allocation) to call it. Here a future that
//! is already the stack's boxed future is passed on as it is, and the server calls the stack
//! through a shared reference, cloning the concrete outermost service (reference counts, no
//! allocation for the layers of this crate).

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::task::{Context as TaskContext, Poll, Waker};

use futures::future::{self, BoxFuture};
use futures::TryFutureExt;
use tower::{Service, ServiceExt};

use super::{BoxError, McpRequest, McpResponse};

/// The future of a [`Stack`]: the response, or a layer's error.
type StackFuture = BoxFuture<'static, Result<McpResponse, BoxError>>;

/// The handlers with the layers added so far, type-erased: what the next layer given to
/// [`crate::ServerBuilder::layer`] wraps (its `Layer<Stack>`). A [`tower::Service`] of
/// [`McpRequest`], cloneable and shareable between threads, whose readiness is the
/// readiness of the layer it holds.
pub struct Stack(Box<dyn Erased>);

impl Stack {
    /// Erases `service`.
    pub(crate) fn new<S>(service: S) -> Self
    where
        S: Service<McpRequest, Response = McpResponse> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        Stack(Box::new(service))
    }

    /// Serves `request` with a clone of the service inside, as `ServiceExt::oneshot` would,
    /// without a clone of the stack. A service ready at once (every layer of this crate,
    /// and tower's until a limit is reached) is called at once; the others are waited for
    /// in the returned future.
    pub(crate) fn oneshot(&self, request: McpRequest) -> StackFuture {
        self.0.oneshot(request)
    }
}

impl Clone for Stack {
    fn clone(&self) -> Self {
        Stack(self.0.clone_box())
    }
}

impl fmt::Debug for Stack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Stack")
    }
}

impl Service<McpRequest> for Stack {
    type Response = McpResponse;
    type Error = BoxError;
    type Future = StackFuture;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: McpRequest) -> StackFuture {
        self.0.call(request)
    }
}

/// A service the way a [`Stack`] holds it.
trait Erased: Send + Sync {
    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>>;
    fn call(&mut self, request: McpRequest) -> StackFuture;
    fn oneshot(&self, request: McpRequest) -> StackFuture;
    fn clone_box(&self) -> Box<dyn Erased>;
}

impl<S> Erased for S
where
    S: Service<McpRequest, Response = McpResponse> + Clone + Send + Sync + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Service::poll_ready(self, cx).map_err(Into::into)
    }

    fn call(&mut self, request: McpRequest) -> StackFuture {
        boxed(Service::call(self, request))
    }

    fn oneshot(&self, request: McpRequest) -> StackFuture {
        let mut service = self.clone();
        // Asked once without a waker: when it is not ready, the future below asks again
        // with the task's, and that is the one it keeps.
        match Service::poll_ready(&mut service, &mut TaskContext::from_waker(Waker::noop())) {
            Poll::Ready(Ok(())) => boxed(Service::call(&mut service, request)),
            Poll::Ready(Err(e)) => Box::pin(future::ready(Err(e.into()))),
            Poll::Pending => Box::pin(ServiceExt::oneshot(service, request).map_err(Into::into)),
        }
    }

    fn clone_box(&self) -> Box<dyn Erased> {
        Box::new(self.clone())
    }
}

/// `future` as the stack's future: as it is when it is one already, else boxed.
fn boxed<F, E>(future: F) -> StackFuture
where
    F: Future<Output = Result<McpResponse, E>> + Send + 'static,
    E: Into<BoxError>,
{
    let mut slot = Some(future);
    if let Some(future) = (&mut slot as &mut dyn Any).downcast_mut::<Option<StackFuture>>().and_then(Option::take) {
        return future;
    }
    let future = slot.expect("still there: it was not the stack's future");
    Box::pin(async move { future.await.map_err(Into::into) })
}

#[cfg(test)]
mod tests {
    use futures::FutureExt;

    use super::*;

    #[test]
    fn a_boxed_future_of_the_stack_is_not_boxed_again() {
        let inner: StackFuture = Box::pin(future::pending());
        let address = &*inner as *const _ as *const () as usize;
        let outer = boxed(inner);
        assert_eq!(&*outer as *const _ as *const () as usize, address);
    }

    #[test]
    fn another_future_is_boxed_with_its_error_converted() {
        let answer = future::ready(Err::<McpResponse, std::io::Error>(std::io::Error::other("refused")));
        let outer = boxed(answer);
        let Some(Err(error)) = outer.now_or_never() else { panic!("the error was lost") };
        assert_eq!(error.to_string(), "refused");
    }
}
