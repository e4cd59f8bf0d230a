//! Targets: which server to talk to, given as one string, and opening a connection to it.
//!
//! A target is, in this order:
//! 1. an `http://` or `https://` URL;
//! 2. the name of a server in an `mcpServers` config file (the file given, or the default
//!    search of [`config::search_paths`]) — a single word only;
//! 3. otherwise a command line, run as a child process spoken to over stdio (quoted as a
//!    shell would, but never run through a shell).
//!
//! [`resolve`] turns the string into a [`Target`]; [`Target::open`] starts the process or
//! opens the HTTP connection, and [`Target::connect`] goes on to the handshake. Opening an
//! http(s) target takes the `http` feature.
//!
//! ```no_run
//! use mcpwire_client::target::{self, ResolveOptions};
//! use mcpwire_client::Client;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let target = target::resolve("npx -y @modelcontextprotocol/server-everything", &ResolveOptions::default())?;
//! let session = target.connect(&Client::builder("my-app", "1.0").build()).await?;
//! println!("{} speaks {}", target.label(), session.protocol_version());
//! session.close().await?;
//! # Ok(())
//! # }
//! ```

use std::path::PathBuf;

use mcpwire_protocol::error::chain;
use mcpwire_transport::child::{ChildCommand, ChildError, ChildProcess};
use mcpwire_transport::Connection;

use crate::config::{self, NamedServer, ServerSpec};
use crate::{Client, ClientError, ClientSession};

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
        /// Headers for every request (from the config file, then those given).
        headers: Vec<(String, String)>,
        /// A bearer token.
        bearer: Option<String>,
        /// The config file says it speaks the old HTTP+SSE transport.
        sse: bool,
        /// Where it came from: the config file and server name, if any.
        named: Option<(String, PathBuf)>,
    },
}

/// What [`resolve`] takes besides the target's text.
#[derive(Debug, Clone, Default)]
pub struct ResolveOptions {
    /// The `mcpServers` file to look names up in; `None`: the default search
    /// ([`config::search_paths`]). Given, any target that is not a URL is looked up in it
    /// first, and a single word it does not name is an error.
    pub config: Option<PathBuf>,
    /// Headers for every request to an http(s) target; they replace the config file's
    /// headers of the same name (compared without case).
    pub headers: Vec<(String, String)>,
    /// A bearer token for an http(s) target.
    pub bearer: Option<String>,
}

/// Why a target could not be resolved or opened.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The target's text, or the config file naming it, is not usable (an empty target, a
    /// broken command line, a config file that cannot be read or an entry that cannot be
    /// decoded).
    #[error("{0}")]
    Invalid(String),
    /// The config file given names no server of this (single-word) name.
    #[error("{} names no server `{name}`; its servers: {}", file.display(), list_or_none(names))]
    UnknownName {
        /// The name looked up.
        name: String,
        /// The config file.
        file: PathBuf,
        /// The names the file has.
        names: Vec<String>,
    },
    /// The server process could not be started, or the HTTP connection opened.
    #[error("{0}")]
    Connect(String),
    /// An http(s) target, and this build has no HTTP transport (the `http` feature).
    #[error("{url}: HTTP targets need mcpwire-client's `http` feature")]
    NoHttp {
        /// The target's URL.
        url: String,
    },
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
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

    /// The target of a server named in a config file; `headers` (replacing the file's of the
    /// same name) and `bearer` apply to a remote server.
    pub fn from_named(server: NamedServer, headers: Vec<(String, String)>, bearer: Option<String>) -> Target {
        let named = Some((server.name, server.file));
        match server.spec {
            ServerSpec::Stdio { command, args, env, cwd } => {
                let mut cmd = ChildCommand::new(command).args(args).envs(env);
                if let Some(dir) = cwd {
                    cmd = cmd.current_dir(dir);
                }
                Target::Stdio { command: cmd, named, searched: None }
            }
            ServerSpec::Http { url, headers: mut file_headers, sse } => {
                file_headers.retain(|(n, _)| !headers.iter().any(|(c, _)| c.eq_ignore_ascii_case(n)));
                file_headers.extend(headers);
                Target::Http { url, headers: file_headers, bearer, sse, named }
            }
        }
    }

    /// Starts the server process, or opens the HTTP connection (Streamable HTTP or, as the
    /// config file says, HTTP+SSE; the era is detected at the handshake).
    pub fn open(&self) -> Result<Opened, TargetError> {
        match self {
            Self::Stdio { .. } => self.open_stdio(),
            #[cfg(feature = "http")]
            Self::Http { .. } => self.open_with(mcpwire_transport::http::HttpOptions::default()),
            #[cfg(not(feature = "http"))]
            Self::Http { url, .. } => Err(TargetError::NoHttp { url: url.clone() }),
        }
    }

    /// [`Self::open`], an http(s) target with `options` (an authorization provider, say);
    /// the target's headers, bearer token and transport replace those of `options`.
    #[cfg(feature = "http")]
    pub fn open_with(&self, options: mcpwire_transport::http::HttpOptions) -> Result<Opened, TargetError> {
        use mcpwire_transport::http::HttpMode;
        match self {
            Self::Stdio { .. } => self.open_stdio(),
            Self::Http { url, headers, bearer, sse, .. } => {
                let options = mcpwire_transport::http::HttpOptions {
                    headers: headers.clone(),
                    bearer: bearer.clone(),
                    mode: if *sse { HttpMode::Sse } else { HttpMode::Auto },
                    ..options
                };
                let connection = mcpwire_transport::http::connect(url, options)
                    .map_err(|e| TargetError::Connect(format!("{url}: {}", chain(&e))))?;
                Ok(Opened { connection, child: None })
            }
        }
    }

    fn open_stdio(&self) -> Result<Opened, TargetError> {
        let Self::Stdio { command, searched, .. } = self else { unreachable!("a stdio target") };
        match command.spawn() {
            Ok((connection, child)) => Ok(Opened { connection, child: Some(child) }),
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
                Err(TargetError::Connect(message))
            }
            Err(other) => Err(TargetError::Invalid(chain(&other))),
        }
    }

    /// Opens the target and connects `client` to it (era detection, handshake). The
    /// session owns the server process, if any: [`ClientSession::close`] ends it.
    pub async fn connect(&self, client: &Client) -> Result<ClientSession, ClientError> {
        let Opened { connection, child } =
            self.open().map_err(|e| ClientError::Io(std::io::Error::other(e.to_string())))?;
        client.connect_with_child(connection, child).await
    }
}

/// Resolves `target` (a URL, a server name or a command line: see the module's docs).
pub fn resolve(target: &str, options: &ResolveOptions) -> Result<Target, TargetError> {
    let target = target.trim();
    if target.is_empty() {
        return Err(TargetError::Invalid("TARGET is empty: give a command line, a server name or a URL".into()));
    }
    if is_url(target) {
        return Ok(Target::Http {
            url: target.to_owned(),
            headers: options.headers.clone(),
            bearer: options.bearer.clone(),
            sse: false,
            named: None,
        });
    }
    // A path (`./server`, `/usr/bin/x`) is never a server name.
    let single_word = !target.contains(char::is_whitespace) && !target.contains(['/', '\\']);
    let mut searched = None;
    if single_word || options.config.is_some() {
        let lookup = config::lookup(target, options.config.as_deref()).map_err(TargetError::Invalid)?;
        match lookup.found {
            Some(server) => return Ok(Target::from_named(server, options.headers.clone(), options.bearer.clone())),
            None if single_word && options.config.is_some() => {
                return Err(TargetError::UnknownName {
                    name: target.to_owned(),
                    file: options.config.clone().unwrap_or_default(),
                    names: lookup.names,
                });
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
        ChildCommand::parse(target).map_err(|e| TargetError::Invalid(format!("TARGET {target:?}: {}", chain(&e))))?;
    Ok(Target::Stdio { command, named: None, searched })
}

fn is_url(target: &str) -> bool {
    let lower = target.trim_start().to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// An open connection to a target, and the child process behind it, if any.
#[derive(Debug)]
pub struct Opened {
    /// The connection.
    pub connection: Connection,
    /// The server process, for a stdio target.
    pub child: Option<ChildProcess>,
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

    #[test]
    fn urls_and_commands() {
        let o = ResolveOptions {
            headers: vec![("X-Key".into(), "v:1".into())],
            bearer: Some("tok".into()),
            ..ResolveOptions::default()
        };
        match resolve("https://example.com/mcp", &o).unwrap() {
            Target::Http { url, headers, bearer, .. } => {
                assert_eq!(url, "https://example.com/mcp");
                assert_eq!(headers, vec![("X-Key".into(), "v:1".into())]);
                assert_eq!(bearer.as_deref(), Some("tok"));
            }
            other => panic!("{other:?}"),
        }
        match resolve("python 'my server.py' --flag", &ResolveOptions::default()).unwrap() {
            Target::Stdio { command, named: None, searched: None } => {
                assert_eq!(command.display(), "python 'my server.py' --flag")
            }
            other => panic!("{other:?}"),
        }
        assert!(resolve("   ", &ResolveOptions::default()).is_err());
    }
}
