//! `mcp inspect`: the web inspector (crate `mcpwire-inspector`), launched on TARGET. This module
//! only resolves targets the way the other client commands do (URLs, configured server
//! names, command lines) and opens the browser; the inspector is the crate's.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use mcpwire_inspector::{Inspector, InspectorError, Target as InspectorTarget, TransportChoice};

use super::args::{ConnectOptions, LogLevel};
use super::error::Exit;
use super::target::{self, Target};

/// The options of `mcp inspect`.
#[derive(Args, Debug, Clone)]
pub struct InspectArgs {
    /// The server to open the inspector on: a quoted command line, a server name from an
    /// mcpServers config, or an http(s) URL (the page can connect to another).
    pub target: Option<String>,
    /// The port to serve the page on (default: a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// The address to serve the page on. Loopback only, unless --allow-remote.
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    pub host: String,
    /// Allow a --host that is not a loopback address: whoever reaches it with the token can
    /// start processes on this machine.
    #[arg(long)]
    pub allow_remote: bool,
    /// Do not open the browser (the URL is printed either way).
    #[arg(long)]
    pub no_open: bool,
    /// An HTTP header sent with every request to an http(s) target (repeatable).
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// An `mcpServers` JSON config file in which TARGET names a server.
    #[arg(long, value_name = "FILE", env = "MCP_CONFIG")]
    pub config: Option<PathBuf>,
}

fn connect_options(args: &InspectArgs) -> ConnectOptions {
    ConnectOptions {
        json: false,
        protocol_version: None,
        timeout: std::time::Duration::from_secs(60),
        headers: args.headers.clone(),
        bearer: None,
        client_id: None,
        client_metadata_url: None,
        client_secret: None,
        client_credentials: false,
        no_oauth: true,
        verbose: 0,
        config: args.config.clone(),
        log_level: LogLevel::Info,
        roots: Vec::new(),
    }
}

/// A target of the client commands as the inspector takes it.
fn convert(target: Target) -> InspectorTarget {
    InspectorTarget::from(target.spec)
}

/// Runs `mcp inspect` until interrupted.
pub fn run(args: InspectArgs) -> ExitCode {
    // Diagnostics on stderr: warnings unless MCP_LOG says otherwise.
    let filter = tracing_subscriber::EnvFilter::try_from_env("MCP_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt().with_writer(std::io::stderr).with_ansi(false).with_env_filter(filter).try_init();
    let options = connect_options(&args);
    let initial = match args.target.as_deref().map(|t| target::resolve(t, &options)) {
        None => None,
        Some(Ok(t)) => Some(convert(t)),
        Some(Err(e)) => {
            eprintln!("mcp inspect: {}", e.message);
            return e.exit.into();
        }
    };
    let Some(runtime) = super::runtime() else { return Exit::Connection.into() };
    let code = runtime.block_on(async move {
        let stop = super::interrupted();
        let resolver_options = options.clone();
        let built = Inspector::builder()
            .host(args.host.clone())
            .port(args.port)
            .allow_remote(args.allow_remote)
            .target(initial)
            .resolver(move |text, transport| match transport {
                TransportChoice::Auto => target::resolve(text, &resolver_options).map(convert).map_err(|e| e.message),
                other => InspectorTarget::parse_with(text, other),
            })
            .build()
            .await;
        let inspector = match built {
            Ok(i) => i,
            Err(e) => {
                eprintln!("mcp inspect: {e}");
                return match e {
                    InspectorError::Bind { .. } => Exit::Connection,
                    _ => Exit::Usage,
                };
            }
        };
        println!("MCP Inspector: {}", inspector.url());
        eprintln!("(the URL holds the token that lets a page act here: keep it to yourself; Ctrl-C stops)");
        if !args.no_open {
            open_browser(inspector.url());
        }
        stop.await;
        inspector.shutdown();
        inspector.wait().await;
        Exit::Ok
    });
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    code.into()
}

/// Opens `url` in the default browser; a failure is only said.
fn open_browser(url: &str) {
    use std::process::{Command, Stdio};
    let mut command = if cfg!(target_os = "macos") {
        Command::new("open")
    } else if cfg!(windows) {
        let mut c = Command::new("cmd");
        c.args(["/C", "start", ""]);
        c
    } else {
        Command::new("xdg-open")
    };
    command.arg(url).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    match command.spawn() {
        // Reaped on a thread of its own: the opener exits at once, or hangs on to nothing.
        Ok(mut child) => {
            std::thread::spawn(move || {
                let _ = child.wait();
            });
        }
        Err(e) => eprintln!("mcp inspect: cannot open a browser ({e}): open the URL above yourself"),
    }
}
