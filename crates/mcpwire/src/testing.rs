//! A client session on a server in the same process, for tests.

use mcpwire_client::{Client, ClientError, ClientSession};
use mcpwire_server::Server;

/// Connects a client to a server in memory: what a unit test of a server needs.
///
/// ```
/// use mcpwire::{tool, Server, TestClient};
///
/// /// Says hello.
/// #[tool]
/// fn hello(name: String) -> String {
///     format!("Hello, {name}!")
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mcpwire::ClientError> {
/// let server = Server::builder("test", "1.0").tool(hello_tool()).build();
/// let client = server.test_client().await?;
/// let result = client.call_tool("hello", serde_json::json!({"name": "Ada"})).await?;
/// assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"));
/// # Ok(())
/// # }
/// ```
pub trait TestClient {
    /// A client session (of the latest revision) on this server, connected in memory.
    fn test_client(&self) -> impl std::future::Future<Output = Result<ClientSession, ClientError>> + Send;

    /// A client session on this server made by `client` (a revision pinned, handlers for
    /// sampling or elicitation, ...).
    fn test_client_with(
        &self,
        client: &Client,
    ) -> impl std::future::Future<Output = Result<ClientSession, ClientError>> + Send;
}

impl TestClient for Server {
    async fn test_client(&self) -> Result<ClientSession, ClientError> {
        self.test_client_with(&Client::builder("test-client", "1.0").build()).await
    }

    async fn test_client_with(&self, client: &Client) -> Result<ClientSession, ClientError> {
        let (server_end, client_end) = mcpwire_transport::memory::pair();
        let server = self.clone();
        tokio::spawn(async move { server.serve(server_end).await });
        client.connect(client_end).await
    }
}
