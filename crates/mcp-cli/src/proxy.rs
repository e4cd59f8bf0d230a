//! `mcp proxy TARGET (--http ADDR | --stdio)`: any server, served again on stdio or on HTTP
//! (Streamable HTTP for both eras, and HTTP+SSE), through the bridge of `mcp-bridge`.
//!
//! The upstream connection takes the client commands' options: `--header` and `--bearer` go
//! on every request to an http(s) upstream, and `-v` traces the upstream traffic (and the
//! upstream process's stderr) on stderr, as `mcp call -v` does; stdout stays the downstream
//! protocol's alone.

use std::process::ExitCode;
use std::sync::Arc;

use mcp_bridge::{client_builder, Bridge, CallRouter};

use crate::cli::args::ConnectOptions;
use crate::cli::error::chain;
use crate::cli::target::{self, Opened, Target};
use crate::cli::trace;
use crate::cli::ui::Ui;

/// Where the proxy serves.
pub enum Listen {
    /// On this process's stdin/stdout.
    Stdio,
    /// On HTTP at this address, accepting these extra host names.
    Http {
        /// `host:port` or a port.
        addr: String,
        /// Extra accepted Host/Origin names (`*`: any).
        allow_hosts: Vec<String>,
    },
}

/// The HTTP settings of `mcp serve --http` and `mcp proxy --http`: loopback names plus
/// `allow_hosts` in Host/Origin (`*`: any).
pub fn http_config(allow_hosts: Vec<String>) -> mcp_http::HttpConfig {
    let mut config = mcp_http::HttpConfig::default();
    if allow_hosts.iter().any(|h| h == "*") {
        config.hosts = mcp_http::HostPolicy::any();
    } else {
        config.hosts.allowed_hosts.extend(allow_hosts);
    }
    config
}

fn fail(message: String) -> ExitCode {
    eprintln!("mcp proxy: {message}");
    ExitCode::from(3)
}

/// Sets up the proxy's diagnostics on stderr (before anything is logged): the libraries'
/// warnings, and with `-v` the upstream process's stderr lines. The returned [`Ui`] is the
/// one [`run`] traces on.
pub fn init_diagnostics(options: &ConnectOptions) -> Arc<Ui> {
    let ui = Arc::new(Ui::new(options.verbose, None));
    trace::init(ui.clone());
    ui
}

/// Connects to `target` and serves it; returns when the downstream side ends (stdio) or on
/// SIGTERM/SIGINT. With `-v` (`ui.verbose()`), every message to and from the upstream server
/// is traced on stderr.
pub async fn run(
    target_text: &str,
    options: &ConnectOptions,
    ui: Arc<Ui>,
    listen: Listen,
    terminated: impl std::future::Future<Output = ()>,
) -> ExitCode {
    let target = match target::resolve(target_text, options) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("mcp proxy: {e}");
            return ExitCode::from(2);
        }
    };
    if matches!(target, Target::Stdio { .. }) && !options.headers.is_empty() {
        eprintln!("mcp proxy: --header applies to http(s) upstreams only; ignored for a server run over stdio");
    }
    let Opened { connection, child } = match target::open(&target) {
        Ok(o) => o,
        Err(e) => return fail(e.to_string()),
    };
    let connection = if ui.verbose() > 0 { trace::tee(connection, ui) } else { connection };
    let router = CallRouter::default();
    let mut builder = client_builder("mcp-proxy", env!("CARGO_PKG_VERSION"), &router).request_timeout(options.timeout);
    if let Some(v) = options.protocol_version {
        builder = builder.protocol_version(v).accept_negotiated(true);
    }
    let session = match tokio::time::timeout(options.timeout, builder.build().connect(connection)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return fail(format!("cannot connect to {}: {}", target.label(), chain(&e))),
        Err(_) => return fail(format!("{} did not complete the handshake in time", target.label())),
    };
    eprintln!("mcp proxy: upstream {} speaks {} ({:?} era)", target.label(), session.protocol_version(), session.era());
    let bridge = match Bridge::mirror(session.clone(), router).await {
        Ok(b) => b,
        Err(e) => return fail(format!("cannot list what {} offers: {}", target.label(), chain(&e))),
    };
    let code = match listen {
        Listen::Stdio => {
            tokio::select! {
                _ = bridge.server().serve(mcp_transport::stdio::stdio()) => ExitCode::SUCCESS,
                _ = session.closed() => fail("the upstream server went away".into()),
                _ = terminated => ExitCode::SUCCESS,
            }
        }
        Listen::Http { addr, allow_hosts } => {
            let addr = if addr.contains(':') { addr } else { format!("127.0.0.1:{addr}") };
            let listener = match tokio::net::TcpListener::bind(&addr).await {
                Ok(l) => l,
                Err(e) => return fail(format!("cannot listen on {addr}: {e}")),
            };
            let config = http_config(allow_hosts);
            let local = listener.local_addr().map(|a| a.to_string()).unwrap_or(addr);
            eprintln!("mcp proxy: serving on http://{local}/mcp (Streamable HTTP) and http://{local}/sse (HTTP+SSE)");
            let http = mcp_http::McpHttp::new(bridge.server().clone(), config);
            tokio::select! {
                r = http.serve(listener) => match r {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => fail(format!("HTTP server failed: {e}")),
                },
                _ = session.closed() => fail("the upstream server went away".into()),
                _ = terminated => ExitCode::SUCCESS,
            }
        }
    };
    let _ = session.close().await;
    if let Some(child) = child {
        let _ = child.close(std::time::Duration::from_secs(2)).await;
    }
    code
}
