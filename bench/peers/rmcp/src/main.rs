//! `rmcp-echo`: benchmark peer built on the official Rust MCP SDK (rmcp).
//!
//! Usage:
//!   rmcp-echo stdio
//!   rmcp-echo http PORT sessions     (Streamable HTTP, stateful, SSE responses)
//!   rmcp-echo http PORT stateless    (Streamable HTTP, stateless, JSON responses)
//!
//! One tool, `echo`, returning its `text` argument as a single text block.
//! No tracing subscriber is installed, so the SDK logs nothing.

use std::time::Duration;

use rmcp::{
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    schemars, tool, tool_handler, tool_router,
    transport::streamable_http_server::{
        session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
    },
    ServerHandler, ServiceExt,
};
use tokio_util::sync::CancellationToken;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
}

#[derive(Clone)]
struct Echo {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Echo {
    fn new() -> Self {
        Self { tool_router: Self::tool_router() }
    }

    #[tool(description = "Echo the text back")]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }
}

#[tool_handler(router = self.tool_router, name = "rmcp-echo")]
impl ServerHandler for Echo {}

fn usage() -> ! {
    eprintln!("usage: rmcp-echo stdio | rmcp-echo http PORT (sessions|stateless)");
    std::process::exit(2);
}

/// Resolves on SIGTERM or SIGINT. The handlers are installed when this is
/// called, not when the returned future is first polled.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("install SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("install SIGINT handler");
    async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    }
}

async fn run_stdio() -> Result<(), Box<dyn std::error::Error>> {
    let shutdown = shutdown_signal();
    let serve = async {
        // `stdio_pipes` is rmcp's recommended transport when stdin/stdout are
        // pipes (it falls back to `stdio()` otherwise).
        // RMCP_ECHO_BLOCKING_STDIO=1 selects the plain blocking `stdio()`.
        let running = if std::env::var_os("RMCP_ECHO_BLOCKING_STDIO").is_some_and(|v| v == "1") {
            Echo::new().serve(rmcp::transport::stdio()).await?
        } else {
            Echo::new().serve(rmcp::transport::io::stdio_pipes()).await?
        };
        running.waiting().await?;
        Ok::<(), Box<dyn std::error::Error>>(())
    };
    tokio::select! {
        r = serve => r?,
        _ = shutdown => {}
    }
    // Do not let a pending blocking stdin read hold up runtime shutdown.
    std::process::exit(0);
}

async fn run_http(port: u16, stateful: bool) -> Result<(), Box<dyn std::error::Error>> {
    let ct = CancellationToken::new();
    let config = if stateful {
        // SDK defaults: session mode, SSE responses.
        StreamableHttpServerConfig::default()
    } else {
        StreamableHttpServerConfig::default().with_legacy_session_mode(false).with_json_response(true)
    }
    .with_cancellation_token(ct.child_token());
    let service: StreamableHttpService<Echo, LocalSessionManager> =
        StreamableHttpService::new(|| Ok(Echo::new()), Default::default(), config);
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    // The same socket setting as every other HTTP server measured (mcp, the axum baseline):
    // without it, rmcp's SSE answer, written in several small pieces, waits on delayed ACKs.
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let server = axum::serve(listener, router).with_graceful_shutdown({
        let ct = ct.clone();
        async move { ct.cancelled_owned().await }
    });
    let shutdown = shutdown_signal();
    tokio::spawn({
        let ct = ct.clone();
        async move {
            shutdown.await;
            ct.cancel();
            // Do not wait long for open streams to drain.
            tokio::time::sleep(Duration::from_secs(2)).await;
            std::process::exit(0);
        }
    });
    server.await?;
    Ok(())
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["stdio"] => run_stdio().await,
        ["http", port, mode] => {
            let port: u16 = port.parse().unwrap_or_else(|_| usage());
            match *mode {
                "sessions" => run_http(port, true).await,
                "stateless" => run_http(port, false).await,
                _ => usage(),
            }
        }
        _ => usage(),
    }
}
