//! TARGET: which server a command talks to ([`mcpwire_client::target`]: a URL, a server named in
//! an `mcpServers` config file, or a command line), with the command line's options
//! (`--header`, `--bearer`, `--config`) and OAuth on a 401 from an http(s) server.
//!
//! Every kind ends as a [`Connection`] (plus the child process, if any), so the rest of the
//! command does not care which it was.

use std::sync::Arc;

use mcpwire_client::target::{self as client_target, ResolveOptions, TargetError};
use mcpwire_transport::child::ChildProcess;
use mcpwire_transport::Connection;

use super::args::ConnectOptions;
use super::error::CliError;
use super::oauth::OAuthSettings;

/// A resolved target, and how to authorize with it.
#[derive(Debug, Clone)]
pub struct Target {
    /// Where the server is.
    pub spec: client_target::Target,
    /// How to authorize on a 401 (`None`: do not); for an http(s) target only.
    pub oauth: Option<OAuthSettings>,
}

impl Target {
    /// How to name the target in messages: the server's config name or the command line or
    /// URL.
    pub fn label(&self) -> String {
        self.spec.label()
    }

    /// `stdio` or `http`.
    pub fn transport(&self) -> &'static str {
        self.spec.transport()
    }

    /// Whether the server is run over stdio.
    pub fn is_stdio(&self) -> bool {
        matches!(self.spec, client_target::Target::Stdio { .. })
    }
}

/// Parses `--header 'Name: value'`.
pub fn parse_header(text: &str) -> Result<(String, String), CliError> {
    match text.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() && !name.trim().contains(char::is_whitespace) => {
            Ok((name.trim().to_owned(), value.trim().to_owned()))
        }
        _ => Err(CliError::usage(format!("--header {text:?}: expected 'Name: value'"))),
    }
}

/// What the command line's options say about resolving a target: `--config`, `--header`
/// and `--bearer`.
pub fn resolve_options(options: &ConnectOptions) -> Result<ResolveOptions, CliError> {
    Ok(ResolveOptions {
        config: options.config.clone(),
        headers: options.headers.iter().map(|h| parse_header(h)).collect::<Result<Vec<_>, _>>()?,
        bearer: options.bearer.clone(),
    })
}

/// Resolves TARGET with the command's options.
pub fn resolve(target: &str, options: &ConnectOptions) -> Result<Target, CliError> {
    let spec = client_target::resolve(target, &resolve_options(options)?).map_err(error)?;
    let oauth = if matches!(spec, client_target::Target::Http { .. }) { options.oauth() } else { None };
    Ok(Target { spec, oauth })
}

/// The user's message and exit code for a target that cannot be resolved or opened: a
/// usage error (2), or a connection error (3) for a server that cannot be started or
/// reached.
pub fn error(e: TargetError) -> CliError {
    match e {
        TargetError::UnknownName { name, file, names } => {
            let hint = super::arguments::suggest(&name, names.iter().map(String::as_str))
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            let names = if names.is_empty() { "none".to_owned() } else { names.join(", ") };
            CliError::usage(format!("{} names no server `{name}`{hint}; its servers: {names}", file.display()))
        }
        TargetError::Invalid(message) => CliError::usage(message),
        e @ (TargetError::Connect(_) | TargetError::NoHttp { .. }) => CliError::connection(e.to_string()),
    }
}

/// An open connection to the target, and the child process behind it, if any.
pub struct Opened {
    /// The connection.
    pub connection: Connection,
    /// The server process, for a stdio target.
    pub child: Option<ChildProcess>,
    /// The OAuth client of an http(s) target, and its URL: what it obtains is kept
    /// ([`super::oauth::persist`]).
    pub oauth: Option<(String, Arc<mcpwire_auth::OAuthClient>)>,
}

/// Starts the server process or opens the HTTP connection.
pub fn open(target: &Target) -> Result<Opened, CliError> {
    let oauth = match (&target.spec, &target.oauth) {
        (client_target::Target::Http { url, .. }, Some(settings)) => {
            Some((url.clone(), super::oauth::client(url, settings)?))
        }
        _ => None,
    };
    let options = mcpwire_transport::http::HttpOptions {
        auth: oauth.as_ref().map(|(_, c)| c.clone() as Arc<dyn mcpwire_transport::http::AuthProvider>),
        ..Default::default()
    };
    let client_target::Opened { connection, child } = target.spec.open_with(options).map_err(error)?;
    Ok(Opened { connection, child, oauth })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Opts {
        #[command(flatten)]
        connect: ConnectOptions,
    }

    fn options(args: &[&str]) -> ConnectOptions {
        let mut all = vec!["x"];
        all.extend_from_slice(args);
        Opts::parse_from(all).connect
    }

    #[test]
    fn urls_commands_and_headers() {
        let o = options(&["-H", "X-Key: v:1", "--bearer", "tok"]);
        match resolve("https://example.com/mcp", &o).unwrap().spec {
            client_target::Target::Http { url, headers, bearer, .. } => {
                assert_eq!(url, "https://example.com/mcp");
                assert_eq!(headers, vec![("X-Key".into(), "v:1".into())]);
                assert_eq!(bearer.as_deref(), Some("tok"));
            }
            other => panic!("{other:?}"),
        }
        match resolve("python 'my server.py' --flag", &options(&[])).unwrap().spec {
            client_target::Target::Stdio { command, named: None, searched: None } => {
                assert_eq!(command.display(), "python 'my server.py' --flag")
            }
            other => panic!("{other:?}"),
        }
        assert!(parse_header("no colon").is_err());
        assert!(resolve("   ", &options(&[])).is_err());
    }
}
