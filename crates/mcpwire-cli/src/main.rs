//! `mcp`: the Model Context Protocol command-line tool.
#![deny(missing_docs)]

mod cli;
mod limits;
mod proxy;
mod telemetry;

use crate::cli::ClientCommand;
use crate::telemetry::{Telemetry, TelemetryOptions};
use mcpwire_reference as reference;

use std::process::ExitCode;

/// mimalloc: a server's many small, short-lived allocations (one JSON tree per message)
/// cost less than with the system allocator (measured in docs/BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

/// The Model Context Protocol tool: talk to any MCP server from the shell, or run the
/// reference server.
#[derive(Parser)]
#[command(name = "mcp", version, after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const AFTER_HELP: &str = "\
Examples:
  mcp list \"npx -y @modelcontextprotocol/server-everything\"
  mcp call \"mcp serve\" add a=1 b=2
  mcp info my-server                 # a server named in an mcpServers config
  mcp serve                          # the reference server on stdio
  mcp proxy \"mcp serve\" --http 3000  # any server, served again over HTTP (or --stdio)

TARGET is one of:
  a URL            http(s)://host/mcp (Streamable HTTP or HTTP+SSE, era detected)
  a server name    from an mcpServers config: --config FILE, or the first of ./.mcp.json,
                   ./mcp.json, ~/.config/mcp/mcp.json, Claude Desktop's
                   claude_desktop_config.json, ~/.cursor/mcp.json, ./.vscode/mcp.json
                   that names it
  a command line   quoted, run as a child process over stdio

Exit codes:
  0 ok   1 the tool reported an error   2 usage or bad argument
  3 connection failure   4 protocol error   5 timeout   130 interrupted";

// Parsed once, then taken apart: the size of a variant does not matter.
#[allow(clippy::large_enum_variant)]
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
        #[command(flatten)]
        http_options: crate::proxy::HttpOptions,
        #[command(flatten)]
        limits: crate::limits::LimitOptions,
        #[command(flatten)]
        telemetry: TelemetryOptions,
        /// Speak only the stateless 2026-07-28 revision: `initialize` is refused (with the
        /// supported versions), as a modern-only server would.
        #[arg(long)]
        modern_only: bool,
    },
    /// Serve any MCP server again, on stdio or HTTP, translating transports and eras.
    #[command(
        after_help = "Examples:\n  mcp proxy \"npx -y @modelcontextprotocol/server-everything\" --http 127.0.0.1:3000\n  mcp proxy http://127.0.0.1:3000/mcp --stdio\n  mcp proxy --config mcp.json --http 3000   # every server of the file, as a gateway"
    )]
    Proxy {
        /// The server: a quoted command line, a server name from an mcpServers config, or an
        /// http(s) URL. Without it, `--config FILE` is required and every server of the file
        /// is served at once, each under its name as prefix (`everything_echo`).
        target: Option<String>,
        /// Serve Streamable HTTP (both eras, at /mcp) and HTTP+SSE (at /sse) on this address.
        #[arg(long, value_name = "ADDR", conflicts_with = "stdio", required_unless_present = "stdio")]
        http: Option<String>,
        /// Serve on this process's stdin/stdout.
        #[arg(long)]
        stdio: bool,
        #[command(flatten)]
        http_options: crate::proxy::HttpOptions,
        /// How to reach the upstream server.
        #[command(flatten)]
        connect: crate::cli::args::ConnectOptions,
        #[command(flatten)]
        limits: crate::limits::LimitOptions,
        #[command(flatten)]
        telemetry: TelemetryOptions,
    },
    /// Open the web inspector: a local page (served by this binary) to connect to any server,
    /// call its tools, read its resources, get its prompts, answer what it asks, and see every
    /// message. Prints its URL (with its token) and opens the browser.
    #[command(
        after_help = "Examples:\n  mcp inspect \"mcp serve\"\n  mcp inspect http://127.0.0.1:3000/mcp --no-open\n  mcp inspect my-server --port 6274"
    )]
    Inspect(crate::cli::inspect::InspectArgs),
    /// Log in to a protected http(s) server, log out, or list the tokens kept.
    #[command(subcommand)]
    Auth(crate::cli::auth::AuthCommand),
    #[command(flatten)]
    Client(ClientCommand),
}

fn init_tracing(telemetry: &Telemetry) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;
    // stdout carries protocol messages only: every diagnostic goes to stderr.
    let filter = tracing_subscriber::EnvFilter::try_from_env("MCP_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let fmt = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(false).with_filter(filter);
    tracing_subscriber::registry().with(telemetry.layer()).with(fmt).init();
}

/// Starts the telemetry `options` ask for, or says why it cannot (exit code 2).
fn start_telemetry(options: &TelemetryOptions, command: &str, service_name: &str) -> Result<Telemetry, ExitCode> {
    Telemetry::start(options, service_name).map_err(|e| {
        eprintln!("{command}: {e}");
        ExitCode::from(2)
    })
}

fn main() -> ExitCode {
    match Cli::parse().command {
        // The client commands set up their own diagnostics (the -v trace).
        Command::Client(client) => crate::cli::run(client),
        Command::Auth(auth) => crate::cli::auth::run(auth),
        Command::Inspect(args) => crate::cli::inspect::run(args),
        Command::Serve { http, http_options, limits, modern_only, telemetry } => {
            if let Err(e) = http_options.auth.check() {
                eprintln!("mcp serve: {e}");
                return ExitCode::from(2);
            }
            let telemetry = match start_telemetry(&telemetry, "mcp serve", "mcp-serve") {
                Ok(t) => t,
                Err(code) => return code,
            };
            init_tracing(&telemetry);
            // With --store, tasks are kept in the shared store, and the sealing keys come from
            // it, rotated (or from --state-key-file), so that every instance serves every request.
            let server = |shared: Option<&crate::proxy::Shared>| {
                let mut builder = telemetry.apply(limits.apply(reference::builder()));
                if let Some(shared) = shared {
                    builder = shared.apply(builder);
                }
                reference::server_from(builder, modern_only)
            };
            let code = match http {
                Some(addr) => with_runtime(true, |rt| {
                    rt.block_on(async {
                        // The shared store is reached, and the keys had, before anything is
                        // served: unreachable (exit 3) or a bad key file (exit 2), nothing starts.
                        let shared = match crate::proxy::Shared::prepare(&http_options).await {
                            Ok(shared) => shared,
                            Err((line, code)) => {
                                eprintln!("mcp: {line}");
                                return code;
                            }
                        };
                        let server = server(Some(&shared));
                        // The keys are kept (and rotated) while the server serves.
                        let crate::proxy::Shared { store, keys: _keys } = shared;
                        serve_http(&addr, &http_options, server, store).await
                    })
                }),
                // One client on one stream: one thread serves it with the least handing over.
                None => with_runtime(false, |rt| rt.block_on(serve_stdio(server(None)))),
            };
            telemetry.shutdown();
            code
        }
        Command::Proxy { target, http, stdio: _, http_options, connect, limits, telemetry } => {
            // A usage error is told before anything starts (the upstream is not reached).
            if let Err(e) = http_options.auth.check() {
                eprintln!("mcp proxy: {e}");
                return ExitCode::from(2);
            }
            let telemetry = match start_telemetry(&telemetry, "mcp proxy", "mcp-proxy") {
                Ok(t) => t,
                Err(code) => return code,
            };
            let listen = match http {
                Some(addr) => crate::proxy::Listen::Http { addr, options: Box::new(http_options) },
                None => crate::proxy::Listen::Stdio,
            };
            // Its own diagnostics: the -v trace of the upstream traffic.
            let ui = crate::proxy::init_diagnostics(&connect, &telemetry);
            let code = with_runtime(true, |rt| {
                rt.block_on(async {
                    // Listened for from the start: a signal never finds the default action.
                    let stop = crate::cli::interrupted();
                    match (&target, &connect.config) {
                        (Some(target), _) => {
                            crate::proxy::run(target, &connect, &limits, &telemetry, ui, listen, stop).await
                        }
                        (None, Some(file)) => {
                            crate::proxy::run_gateway(file, &connect, &limits, &telemetry, ui, listen, stop).await
                        }
                        (None, None) => {
                            eprintln!("mcp proxy: give a TARGET, or --config FILE to serve every server it names");
                            ExitCode::from(2)
                        }
                    }
                })
            });
            telemetry.shutdown();
            code
        }
    }
}

/// Runs `f` on a runtime (multi-threaded, or on this thread alone), then shuts the runtime
/// down without waiting on a blocking read of stdin (which cannot be interrupted).
fn with_runtime(multi_thread: bool, f: impl FnOnce(&tokio::runtime::Runtime) -> ExitCode) -> ExitCode {
    let mut builder = if multi_thread {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcp: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = f(&runtime);
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    code
}

async fn serve_stdio(server: mcpwire_server::Server) -> ExitCode {
    let serving = server.serve(mcpwire_transport::stdio::stdio());
    tokio::select! {
        _ = serving => ExitCode::SUCCESS,
        _ = crate::cli::interrupted() => ExitCode::SUCCESS,
    }
}

async fn serve_http(
    addr: &str,
    options: &crate::proxy::HttpOptions,
    server: mcpwire_server::Server,
    store: Option<mcpwire_store_redis::RedisStore>,
) -> ExitCode {
    let addr = if addr.contains(':') { addr.to_owned() } else { format!("127.0.0.1:{addr}") };
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("mcp: cannot listen on {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let config = match crate::proxy::http_config_with_auth(options) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("mcp: {e}");
            return ExitCode::from(2);
        }
    };
    crate::proxy::prepare_auth(&config);
    let http = match crate::proxy::endpoint_with(server, config, options, store).await {
        Ok(http) => http,
        Err(e) => {
            eprintln!("mcp: {e}");
            return ExitCode::from(3);
        }
    };
    // On SIGTERM/SIGINT: a graceful shutdown (see `HttpOptions`), then exit 0. Listened for
    // before saying it serves.
    let stop = crate::cli::interrupted();
    let local = listener.local_addr().map(|a| a.to_string()).unwrap_or(addr);
    eprintln!("mcp: serving on http://{local}/mcp (Streamable HTTP) and http://{local}/sse (HTTP+SSE)");
    match http.serve_until(listener, stop).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp: HTTP server failed: {e}");
            ExitCode::FAILURE
        }
    }
}
