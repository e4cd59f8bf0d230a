//! The client half of the `mcp` tool: `info`, `list`, `call`, `read`, `prompt` and
//! `complete` against any server.
//!
//! - [`target`]: TARGET (a command line, a config name, a URL) to a connection, through
//!   [`mcpwire_client::target`] (which reads `mcpServers` config files: [`mcpwire_client::config`]).
//! - [`arguments`]: `key=value` tool arguments read against the tool's input schema.
//! - [`interact`]: the client's handlers (elicitation forms, sampling, roots).
//! - [`ui`] and [`trace`]: stderr (progress, logs, the protocol trace); [`output`]: stdout.
//! - [`error`]: one-line failures and the exit-code table.
//! - [`inspect`]: `mcp inspect`, the web inspector (crate `mcpwire-inspector`) launched on a target.

pub mod args;
pub mod arguments;
pub mod auth;
pub mod commands;
pub mod connection;
pub mod error;
pub mod inspect;
pub mod interact;
pub mod oauth;
pub mod output;
pub mod settle;
pub mod target;
pub mod trace;
pub mod ui;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

pub use args::ClientCommand;
use error::{CliError, Exit};

/// Runs a client command to its end and returns the exit code. Every failure is printed as
/// one line on stderr (`mcp: …`).
pub fn run(command: ClientCommand) -> ExitCode {
    let options = command.connect_options().clone();
    let ui = Arc::new(ui::Ui::new(options.verbose, options.log_level.level()));
    trace::init(ui.clone(), None);
    let Some(runtime) = runtime() else { return Exit::Connection.into() };
    let outcome = runtime.block_on(until_interrupted(execute(command, ui.clone())));
    // A prompt still waiting for the terminal must not hold the exit up.
    runtime.shutdown_timeout(Duration::from_millis(500));
    ui.finish_progress();
    if matches!(&outcome, Err(e) if e.exit == Exit::Interrupted) && ui.stderr_is_tty() {
        // An interrupted form may have hidden the cursor.
        let _ = console::Term::stderr().show_cursor();
    }
    match outcome {
        Ok(exit) => exit.into(),
        Err(e) => {
            eprintln!("mcp: {}", error::one_line(&e.message));
            e.exit.into()
        }
    }
}

async fn execute(command: ClientCommand, ui: Arc<ui::Ui>) -> Result<Exit, CliError> {
    let options = command.connect_options().clone();
    let interact = command.interact_options();
    let target = target::resolve(command.target(), &options)?;
    if target.is_stdio() && !options.headers.is_empty() {
        ui.note("--header applies to http(s) targets only; ignored for a server run over stdio");
    }
    let changes = Arc::new(settle::ListChanges::default());
    let client = interact::build_client(&options, &interact, ui.clone(), changes.clone())?;
    let saver = output::Saver::new(interact.out.clone());
    let connected = connection::connect(target, &client, ui.clone(), options.timeout).await?;
    let outcome = match commands::run(&connected, command, &saver, &changes).await {
        Ok(exit) => Ok(exit),
        Err(commands::CommandError::Cli(e)) => Err(e),
        Err(commands::CommandError::Client(e)) => Err(connected.explain(*e).await),
    };
    connected.close().await;
    // A failure that follows a refused request (no --elicit, no --sample-reply) is the
    // command line's to fix.
    match outcome {
        Ok(Exit::ToolError) if ui.refused() => Ok(Exit::Usage),
        Err(e) if ui.refused() && e.exit == Exit::Protocol => Err(CliError::usage(e.message)),
        other => other,
    }
}

/// The runtime of a command, or `None` (said on stderr) when it cannot start.
pub(crate) fn runtime() -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => Some(rt),
        Err(e) => {
            eprintln!("mcp: cannot start the async runtime: {e}");
            None
        }
    }
}

/// `work`, unless an interrupt comes first.
pub(crate) async fn until_interrupted<T>(
    work: impl std::future::Future<Output = Result<T, CliError>>,
) -> Result<T, CliError> {
    tokio::select! {
        outcome = work => outcome,
        _ = interrupted() => Err(CliError::new(Exit::Interrupted, "interrupted")),
    }
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM. The handlers are installed when this is called
/// (within a runtime), not when the future is first polled: a signal that comes in between
/// (a server that said it is ready, and is told to stop at once) is not lost, nor does it
/// kill the process the default way.
pub fn interrupted() -> impl std::future::Future<Output = ()> + Send {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let term = signal(SignalKind::terminate()).ok();
        let int = signal(SignalKind::interrupt()).ok();
        async move {
            let received = |s: Option<tokio::signal::unix::Signal>| async move {
                match s {
                    Some(mut s) => {
                        let _ = s.recv().await;
                    }
                    None => std::future::pending().await,
                }
            };
            match (term.is_some(), int.is_some()) {
                (false, false) => {
                    let _ = tokio::signal::ctrl_c().await;
                }
                _ => tokio::select! {
                    () = received(term) => {}
                    () = received(int) => {}
                },
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
