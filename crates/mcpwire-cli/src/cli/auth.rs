//! `mcp auth login|logout|status`: the OAuth tokens the client commands keep per server
//! (see [`super::oauth`]).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use clap::Subcommand;

use super::args::{ConnectOptions, InteractOptions};
use super::error::{CliError, Exit};
use super::{connection, interact, oauth, target, trace, ui};

/// What `mcp auth` does.
#[derive(Subcommand, Debug)]
pub enum AuthCommand {
    /// Authorize with a protected http(s) server now (in the browser, or with
    /// --client-credentials) and keep the token, replacing any kept before.
    #[command(after_help = "Examples:\n  \
        mcp auth login https://mcp.example.com/mcp\n  \
        mcp auth login https://mcp.example.com/mcp --client-id ID --client-secret S --client-credentials")]
    Login {
        /// The server: an http(s) URL, or a server name from an mcpServers config.
        target: String,
        /// How to reach the server.
        #[command(flatten)]
        connect: ConnectOptions,
    },
    /// Forget the token kept for a server.
    Logout {
        /// The server: an http(s) URL, or a server name from an mcpServers config.
        target: String,
        /// How to reach the server.
        #[command(flatten)]
        connect: ConnectOptions,
    },
    /// List the servers a token is kept for: issuer, client, scopes, expiry.
    Status,
}

/// Runs `mcp auth …` and returns the exit code.
pub fn run(command: AuthCommand) -> ExitCode {
    let Some(runtime) = super::runtime() else { return Exit::Connection.into() };
    let outcome = runtime.block_on(super::until_interrupted(execute(command)));
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp: {}", super::error::one_line(&e.message));
            e.exit.into()
        }
    }
}

/// The URL of an http(s) target.
fn url_of(target: &str, options: &ConnectOptions) -> Result<(target::Target, String), CliError> {
    let resolved = target::resolve(target, options)?;
    match &resolved.spec {
        mcpwire_client::target::Target::Http { url, .. } => {
            let url = url.clone();
            Ok((resolved, url))
        }
        mcpwire_client::target::Target::Stdio { .. } => {
            Err(CliError::usage(format!("{target} is not an http(s) server: servers over stdio use no OAuth")))
        }
    }
}

async fn execute(command: AuthCommand) -> Result<(), CliError> {
    match command {
        AuthCommand::Login { target, connect } => {
            let ui = Arc::new(ui::Ui::new(connect.verbose, connect.log_level.level()));
            trace::init(ui.clone(), None);
            let (resolved, url) = url_of(&target, &connect)?;
            if connect.oauth().is_none() {
                return Err(CliError::usage("--bearer and --no-oauth leave nothing to log in with"));
            }
            oauth::remove(&url);
            let client = interact::build_client(&connect, &InteractOptions::default(), ui.clone(), Default::default())?;
            let connected = connection::connect(resolved, &client, ui, connect.timeout).await?;
            connected.close().await;
            match oauth::load(&url) {
                Some(saved) => {
                    println!(
                        "Logged in to {url}\n  issuer  {}\n  client  {}\n  scopes  {}",
                        saved.issuer(),
                        saved.client_id,
                        saved.scopes.join(" ")
                    );
                    Ok(())
                }
                None => {
                    println!("{url} asked for no authorization: nothing to keep");
                    Ok(())
                }
            }
        }
        AuthCommand::Logout { target, connect } => {
            let (_, url) = url_of(&target, &connect)?;
            match oauth::remove(&url) {
                true => println!("Logged out of {url}"),
                false => println!("No token was kept for {url}"),
            }
            Ok(())
        }
        AuthCommand::Status => {
            let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default();
            let all = oauth::list();
            if all.is_empty() {
                println!("No token is kept.");
            }
            for stored in all {
                let a = &stored.authorization;
                let expiry = match a.expires_at {
                    Some(at) if at <= now => {
                        let renew = if a.refresh_token.is_some() { ", renewed on next use" } else { "" };
                        format!("expired{renew}")
                    }
                    Some(at) => format!("expires in {} s", at - now),
                    None => "no expiry given".into(),
                };
                println!(
                    "{}\n  issuer  {}\n  client  {}\n  scopes  {}\n  token   {expiry}",
                    stored.server,
                    a.issuer(),
                    a.client_id,
                    a.scopes.join(" ")
                );
            }
            Ok(())
        }
    }
}
