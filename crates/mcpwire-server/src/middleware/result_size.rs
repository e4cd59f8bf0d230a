//! A bound on the size of results: a handler that returns more than the client should get
//! (a tool that reads a whole file, say) fails instead.

use std::io;
use std::task::{Context as TaskContext, Poll};

use futures::future::BoxFuture;
use futures::FutureExt;
use mcpwire_protocol::message::ServerResult;
use mcpwire_protocol::types::CallToolResult;
use mcpwire_protocol::{ErrorObject, Method};
use tower::{Layer, Service};

use super::{McpRequest, McpResponse};

/// Refuses results larger than a number of bytes (as JSON): a tool's becomes a tool
/// execution error ("the result of the tool NAME is larger than 1048576 bytes"), any other
/// `-32603`. The size is counted by writing the result to nothing, stopping at the limit.
///
/// ```
/// use mcpwire_server::middleware::ResultSizeLayer;
///
/// let server = mcpwire_server::Server::builder("demo", "1.0").layer(ResultSizeLayer::new(1 << 20)).build();
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ResultSizeLayer {
    max: usize,
}

impl ResultSizeLayer {
    /// Results of at most `max` bytes.
    pub fn new(max: usize) -> Self {
        Self { max }
    }
}

impl<S> Layer<S> for ResultSizeLayer {
    type Service = ResultSize<S>;

    fn layer(&self, inner: S) -> ResultSize<S> {
        ResultSize { inner, max: self.max }
    }
}

/// The service of a [`ResultSizeLayer`].
#[derive(Debug, Clone)]
pub struct ResultSize<S> {
    inner: S,
    max: usize,
}

impl<S> Service<McpRequest> for ResultSize<S>
where
    S: Service<McpRequest, Response = McpResponse>,
    S::Future: Send + 'static,
{
    type Response = McpResponse;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<McpResponse, S::Error>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: McpRequest) -> Self::Future {
        let max = self.max;
        let (method, name) = (request.method(), request.name().map(str::to_owned));
        self.inner
            .call(request)
            .map(move |answer| {
                let response = answer?;
                let Some(result) = response.result() else { return Ok(response) };
                if fits(result, max) {
                    return Ok(response);
                }
                Ok(match (method, name) {
                    (Method::CallTool, Some(tool)) => McpResponse::Result(ServerResult::CallTool(
                        CallToolResult::error(format!("the result of the tool {tool} is larger than {max} bytes")),
                    )),
                    _ => McpResponse::Error(ErrorObject::internal(format!(
                        "the result of {method} is larger than {max} bytes"
                    ))),
                })
            })
            .boxed()
    }
}

/// Whether `result`, as JSON, is at most `max` bytes.
fn fits(result: &ServerResult, max: usize) -> bool {
    let mut counter = Counter { left: max };
    result.write_json(&mut counter).is_ok()
}

/// A writer that takes a number of bytes, then fails.
struct Counter {
    left: usize,
}

impl io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.left = self.left.checked_sub(buf.len()).ok_or_else(|| io::Error::other("over the limit"))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
