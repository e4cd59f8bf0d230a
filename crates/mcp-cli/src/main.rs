//! `mcp`: the Model Context Protocol command-line tool.

use mcp_cli::reference;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The Model Context Protocol tool: a reference server, and (soon) a client and a bridge.
#[derive(Parser)]
#[command(name = "mcp", version, about, after_help = "Example:\n  mcp serve          # the reference server on stdio")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the reference server (every MCP feature) on stdio.
    #[command(
        after_help = "Example:\n  mcp serve\n  echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"}' | mcp serve"
    )]
    Serve {
        /// Serve HTTP on this address instead of stdio: Streamable HTTP (both eras) at /mcp,
        /// legacy HTTP+SSE at /sse. Binds to loopback unless told otherwise.
        #[arg(long, value_name = "ADDR")]
        http: Option<String>,
        /// Host names accepted in Host/Origin headers besides the loopback names (repeatable);
        /// `*` accepts any (only behind a proxy that checks them).
        #[arg(long = "allow-host", value_name = "HOST")]
        allow_hosts: Vec<String>,
    },
}

fn init_tracing() {
    // stdout carries protocol messages only: every diagnostic goes to stderr.
    let filter = tracing_subscriber::EnvFilter::try_from_env("MCP_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false).init();
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcp: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match cli.command {
        Command::Serve { http: Some(addr), allow_hosts } => runtime.block_on(serve_http(&addr, allow_hosts)),
        Command::Serve { http: None, .. } => {
            let code = runtime.block_on(serve_stdio());
            // A blocking read of stdin cannot be interrupted: after SIGTERM, do not wait for it.
            runtime.shutdown_timeout(std::time::Duration::from_millis(100));
            code
        }
    }
}

async fn serve_stdio() -> ExitCode {
    let server = reference::server();
    let serving = server.serve(mcp_transport::stdio::stdio());
    tokio::select! {
        _ = serving => ExitCode::SUCCESS,
        _ = terminated() => ExitCode::SUCCESS,
    }
}

async fn serve_http(addr: &str, allow_hosts: Vec<String>) -> ExitCode {
    let addr = if addr.contains(':') { addr.to_owned() } else { format!("127.0.0.1:{addr}") };
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("mcp: cannot listen on {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut config = mcp_http::HttpConfig::default();
    if allow_hosts.iter().any(|h| h == "*") {
        config.hosts = mcp_http::HostPolicy::any();
    } else {
        config.hosts.allowed_hosts.extend(allow_hosts);
    }
    let local = listener.local_addr().map(|a| a.to_string()).unwrap_or(addr);
    eprintln!("mcp: serving on http://{local}/mcp (Streamable HTTP) and http://{local}/sse (HTTP+SSE)");
    let http = mcp_http::McpHttp::new(reference::server(), config);
    tokio::select! {
        r = http.serve(listener) => match r {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("mcp: HTTP server failed: {e}");
                ExitCode::FAILURE
            }
        },
        _ = terminated() => ExitCode::SUCCESS,
    }
}

/// Resolves on SIGTERM or SIGINT.
async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
