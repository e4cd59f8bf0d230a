//! TARGET: which server a command talks to, and opening a connection to it.
//!
//! A target is, in this order:
//! 1. an `http://` or `https://` URL;
//! 2. the name of a server in an `mcpServers` config file (`--config FILE`, or the default
//!    search of [`super::config::search_paths`]) — a single word only;
//! 3. otherwise a command line, run as a child process spoken to over stdio (quoted as a
//!    shell would, but never run through a shell).
//!
//! Every kind ends as a [`Connection`] (plus the child process, if any), so the rest of the
//! command does not care which it was.

use std::path::PathBuf;
use std::sync::Arc;

use mcpwire_transport::child::{ChildCommand, ChildError, ChildProcess, StderrMode};
use mcpwire_transport::Connection;

use super::args::ConnectOptions;
use super::config::{self, ServerSpec};
use super::error::{chain, CliError};

/// A resolved target.
#[derive(Debug, Clone)]
pub enum Target {
    /// A server process spoken to over its stdin and stdout.
    Stdio {
        /// What to run.
        command: ChildCommand,
        /// Where it came from: the config file and server name, if any.
        named: Option<(String, PathBuf)>,
        /// For a single word that no config names: the files that were searched, to say
        /// so if the word is not a program either.
        searched: Option<Vec<PathBuf>>,
    },
    /// A server reached over HTTP.
    Http {
        /// Its URL.
        url: String,
        /// Headers for every request (from the config file, then `--header`).
        headers: Vec<(String, String)>,
        /// A bearer token (`--bearer`).
        bearer: Option<String>,
        /// How to authorize on a 401 (`None`: do not).
        oauth: Option<super::oauth::OAuthSettings>,
        /// The config file says it speaks the old HTTP+SSE transport.
        sse: bool,
        /// Where it came from: the config file and server name, if any.
        named: Option<(String, PathBuf)>,
    },
}

impl Target {
    /// How to name the target in messages: the server's config name or the command line or
    /// URL.
    pub fn label(&self) -> String {
        match self {
            Self::Stdio { named: Some((name, _)), .. } | Self::Http { named: Some((name, _)), .. } => {
                format!("`{name}`")
            }
            Self::Stdio { command, .. } => format!("`{}`", command.display()),
            Self::Http { url, .. } => url.clone(),
        }
    }

    /// `stdio` or `http`.
    pub fn transport(&self) -> &'static str {
        match self {
            Self::Stdio { .. } => "stdio",
            Self::Http { .. } => "http",
        }
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

fn is_url(target: &str) -> bool {
    let lower = target.trim_start().to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// Resolves TARGET with the command's options.
pub fn resolve(target: &str, options: &ConnectOptions) -> Result<Target, CliError> {
    let cli_headers = options.headers.iter().map(|h| parse_header(h)).collect::<Result<Vec<_>, _>>()?;
    let target = target.trim();
    if target.is_empty() {
        return Err(CliError::usage("TARGET is empty: give a command line, a server name or a URL"));
    }
    if is_url(target) {
        return Ok(Target::Http {
            url: target.to_owned(),
            headers: cli_headers,
            bearer: options.bearer.clone(),
            oauth: options.oauth(),
            sse: false,
            named: None,
        });
    }
    // A path (`./server`, `/usr/bin/x`) is never a server name.
    let single_word = !target.contains(char::is_whitespace) && !target.contains(['/', '\\']);
    let mut searched = None;
    if single_word || options.config.is_some() {
        let lookup = config::lookup(target, options.config.as_deref()).map_err(CliError::usage)?;
        match lookup.found {
            Some(server) => {
                let named = Some((server.name.clone(), server.file.clone()));
                return Ok(match server.spec {
                    ServerSpec::Stdio { command, args, env, cwd } => {
                        let mut cmd = ChildCommand::new(command).args(args).envs(env);
                        if let Some(dir) = cwd {
                            cmd = cmd.current_dir(dir);
                        }
                        Target::Stdio { command: cmd, named, searched: None }
                    }
                    ServerSpec::Http { url, mut headers, sse } => {
                        headers.retain(|(n, _)| !cli_headers.iter().any(|(c, _)| c.eq_ignore_ascii_case(n)));
                        headers.extend(cli_headers);
                        Target::Http {
                            url,
                            headers,
                            bearer: options.bearer.clone(),
                            oauth: options.oauth(),
                            sse,
                            named,
                        }
                    }
                });
            }
            None if single_word && options.config.is_some() => {
                let file = options.config.as_deref().unwrap_or_else(|| std::path::Path::new(""));
                let hint = super::arguments::suggest(target, lookup.names.iter().map(String::as_str))
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                let names = if lookup.names.is_empty() { "none".to_owned() } else { lookup.names.join(", ") };
                return Err(CliError::usage(format!(
                    "{} names no server `{target}`{hint}; its servers: {names}",
                    file.display()
                )));
            }
            None => {
                for (file, why) in &lookup.broken {
                    tracing::warn!("config file {} skipped: {why}", file.display());
                }
                if single_word {
                    searched = Some(lookup.searched);
                }
            }
        }
    }
    let command =
        ChildCommand::parse(target).map_err(|e| CliError::usage(format!("TARGET {target:?}: {}", chain(&e))))?;
    Ok(Target::Stdio { command, named: None, searched })
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
    match target {
        Target::Stdio { command, searched, .. } => {
            let command = command.clone().stderr(StderrMode::Log);
            match command.spawn() {
                Ok((connection, child)) => Ok(Opened { connection, child: Some(child), oauth: None }),
                Err(ChildError::Spawn { program, source }) => {
                    let mut message = format!("cannot start `{program}`: {}", source_text(&source));
                    if let Some(files) = searched {
                        if files.is_empty() {
                            message.push_str(" (nor is it a server name: no mcpServers config file was found)");
                        } else {
                            let list: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
                            message.push_str(&format!(" (nor is it a server name in {})", list.join(", ")));
                        }
                    }
                    Err(CliError::connection(message))
                }
                Err(other) => Err(CliError::usage(chain(&other))),
            }
        }
        Target::Http { url, headers, bearer, oauth, sse, .. } => {
            let oauth = oauth.as_ref().map(|settings| super::oauth::client(url, settings)).transpose()?;
            let options = mcpwire_transport::http::HttpOptions {
                headers: headers.clone(),
                bearer: bearer.clone(),
                mode: if *sse {
                    mcpwire_transport::http::HttpMode::Sse
                } else {
                    mcpwire_transport::http::HttpMode::Auto
                },
                auth: oauth.clone().map(|c| c as Arc<dyn mcpwire_transport::http::AuthProvider>),
                ..Default::default()
            };
            let connection = mcpwire_transport::http::connect(url, options)
                .map_err(|e| CliError::connection(format!("{url}: {}", chain(&e))))?;
            Ok(Opened { connection, child: None, oauth: oauth.map(|c| (url.clone(), c)) })
        }
    }
}

fn source_text(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such program".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
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
        match resolve("https://example.com/mcp", &o).unwrap() {
            Target::Http { url, headers, bearer, .. } => {
                assert_eq!(url, "https://example.com/mcp");
                assert_eq!(headers, vec![("X-Key".into(), "v:1".into())]);
                assert_eq!(bearer.as_deref(), Some("tok"));
            }
            other => panic!("{other:?}"),
        }
        match resolve("python 'my server.py' --flag", &options(&[])).unwrap() {
            Target::Stdio { command, named: None, searched: None } => {
                assert_eq!(command.display(), "python 'my server.py' --flag")
            }
            other => panic!("{other:?}"),
        }
        assert!(parse_header("no colon").is_err());
        assert!(resolve("   ", &options(&[])).is_err());
    }
}
