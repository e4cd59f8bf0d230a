//! The command line of the client commands (`info`, `list`, `call`, `read`, `prompt`,
//! `complete`): what each takes, with the options every one of them shares.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

/// How to reach a server and how to talk to it: the options every client command takes.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Connection options")]
pub struct ConnectOptions {
    /// Print the raw result as JSON on stdout (for scripts); messages still go to stderr.
    #[arg(long)]
    pub json: bool,
    /// Pin the protocol revision (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28)
    /// instead of detecting it.
    #[arg(long = "protocol-version", value_name = "V", value_parser = parse_version)]
    pub protocol_version: Option<mcpwire_client::ProtocolVersion>,
    /// Seconds any one request (and the connection itself) may take.
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = parse_seconds)]
    pub timeout: std::time::Duration,
    /// An HTTP header sent with every request to an http(s) target (repeatable).
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// A bearer token sent as `Authorization: Bearer TOKEN` to an http(s) target (no OAuth
    /// flow then). A token may begin with `-` (base64url tokens do, one in 32).
    #[arg(long, value_name = "TOKEN", env = "MCP_BEARER_TOKEN", hide_env_values = true, allow_hyphen_values = true)]
    pub bearer: Option<String>,
    /// OAuth: a client registered in advance with the target's authorization server (else
    /// a client ID metadata document or dynamic registration, as it offers).
    #[arg(long = "client-id", value_name = "ID")]
    pub client_id: Option<String>,
    /// OAuth: the https URL of a client ID metadata document describing this client (its
    /// redirect URIs must allow http://127.0.0.1/callback on any port), used as the client id
    /// where the authorization server takes them; else --client-id or dynamic registration.
    #[arg(long = "client-metadata-url", value_name = "URL")]
    pub client_metadata_url: Option<String>,
    /// OAuth: the secret of --client-id.
    #[arg(
        long = "client-secret",
        value_name = "SECRET",
        env = "MCP_CLIENT_SECRET",
        hide_env_values = true,
        requires = "client_id"
    )]
    pub client_secret: Option<String>,
    /// OAuth: authorize as the client itself (client credentials grant, for machines) rather
    /// than through a user's browser. Needs --client-id and --client-secret.
    #[arg(long = "client-credentials", requires_all = ["client_id", "client_secret"])]
    pub client_credentials: bool,
    /// OAuth: never authorize; a 401 from the target is an error.
    #[arg(long = "no-oauth", conflicts_with_all = ["client_id", "client_credentials"])]
    pub no_oauth: bool,
    /// Trace the protocol on stderr: every message sent (→) and received (←), and the
    /// server's own stderr. Twice (-vv): long messages in full and the client's debug log.
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// An `mcpServers` JSON config file in which TARGET names a server (instead of the
    /// default search; `mcp --help` shows the search order).
    #[arg(long, value_name = "FILE", env = "MCP_CONFIG")]
    pub config: Option<PathBuf>,
    /// The least severe server log level to ask for and show: debug, info, notice, warning,
    /// error, critical, alert, emergency, or off.
    #[arg(long = "log-level", value_name = "LEVEL", default_value = "info", hide_possible_values = true)]
    pub log_level: LogLevel,
    /// A directory offered to the server as a root (answers `roots/list`; repeatable).
    #[arg(long = "root", value_name = "PATH")]
    pub roots: Vec<PathBuf>,
}

impl ConnectOptions {
    /// How to authorize with an http(s) target: `None` with --bearer or --no-oauth.
    pub fn oauth(&self) -> Option<super::oauth::OAuthSettings> {
        (self.bearer.is_none() && !self.no_oauth).then(|| super::oauth::OAuthSettings {
            client_id: self.client_id.clone(),
            client_secret: self.client_secret.clone(),
            client_credentials: self.client_credentials,
            client_metadata_url: self.client_metadata_url.clone(),
        })
    }
}

/// How to answer what the server asks for during a call: elicitation, sampling, and where
/// binary content goes.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Answering the server")]
pub struct InteractOptions {
    /// Answer the server's elicitation requests by accepting with this JSON object (fields
    /// left out take the form's defaults).
    #[arg(long, value_name = "JSON", conflicts_with = "decline")]
    pub elicit: Option<String>,
    /// Decline the server's elicitation requests.
    #[arg(long)]
    pub decline: bool,
    /// Answer the server's sampling requests (a model reply) with this text; refused
    /// otherwise.
    #[arg(long = "sample-reply", value_name = "TEXT")]
    pub sample_reply: Option<String>,
    /// Directory where images, audio and binary resources are saved (default: a new
    /// temporary directory).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// A log level to ask servers for, or `off`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    /// Ask for no log messages and show none.
    Off,
    /// debug and above.
    Debug,
    /// info and above.
    Info,
    /// notice and above.
    Notice,
    /// warning and above.
    Warning,
    /// error and above.
    Error,
    /// critical and above.
    Critical,
    /// alert and above.
    Alert,
    /// emergency only.
    Emergency,
}

impl LogLevel {
    /// The protocol's level, `None` for `off`.
    pub fn level(self) -> Option<mcpwire_protocol::types::LoggingLevel> {
        use mcpwire_protocol::types::LoggingLevel as L;
        Some(match self {
            Self::Off => return None,
            Self::Debug => L::Debug,
            Self::Info => L::Info,
            Self::Notice => L::Notice,
            Self::Warning => L::Warning,
            Self::Error => L::Error,
            Self::Critical => L::Critical,
            Self::Alert => L::Alert,
            Self::Emergency => L::Emergency,
        })
    }
}

/// What `mcp list` lists.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// Tools, with their argument signatures.
    Tools,
    /// Resources.
    Resources,
    /// Resource templates.
    Templates,
    /// Prompts, with their arguments.
    Prompts,
}

/// The client commands.
#[derive(Subcommand, Debug, Clone)]
pub enum ClientCommand {
    /// Show who a server is: name, version, era, protocol revision, capabilities, instructions.
    #[command(after_help = "Examples:\n  \
        mcp info \"npx -y @modelcontextprotocol/server-everything\"\n  \
        mcp info my-server --config ~/.cursor/mcp.json\n  \
        mcp info \"mcp serve\" --json")]
    Info {
        /// The server: a quoted command line, a server name from an mcpServers config, or an
        /// http(s) URL.
        target: String,
        /// How to reach the server.
        #[command(flatten)]
        connect: ConnectOptions,
    },
    /// List a server's tools, resources, resource templates and prompts.
    #[command(after_help = "Examples:\n  \
        mcp list \"mcp serve\"                 # everything, grouped\n  \
        mcp list \"mcp serve\" tools           # tools with their argument signatures\n  \
        mcp list \"mcp serve\" prompts --json")]
    List {
        /// The server: a quoted command line, a server name from an mcpServers config, or an
        /// http(s) URL.
        target: String,
        /// What to list (default: everything the server offers).
        kind: Option<ListKind>,
        /// Milliseconds after the handshake during which the lists follow the server's
        /// changes. A server may add tools, prompts or resources just after the handshake
        /// (once it knows the client) and announce them with a list_changed notification:
        /// each list announced as changed within this window is taken again, and the wait
        /// ends 250 ms after the last change followed (or after the lists were taken, when
        /// changes came before). Only in the legacy era, and only for lists the server says
        /// can change. 0 lists at once.
        #[arg(long, value_name = "MS", default_value = "500")]
        settle: u64,
        /// How to reach the server.
        #[command(flatten)]
        connect: ConnectOptions,
    },
    /// Call a tool with `key=value` arguments and print its result.
    ///
    /// Arguments are read against the tool's input schema (numbers, booleans, JSON arrays and
    /// objects where the schema wants them; repeat a key to build an array); `key:=JSON`
    /// passes JSON as is; `--args` gives them all as one JSON object. Arguments that do not
    /// fit the schema are refused before the call is sent.
    ///
    /// The result's content is printed: text as text, images, audio and binary resources saved
    /// to files (their paths printed). Its structured content is printed (as pretty JSON) only
    /// when no content block is text: a tool that returns structured content should also
    /// return it as text, which is then what is printed. `--json` prints the whole result.
    #[command(after_help = "Examples:\n  \
        mcp call \"mcp serve\" echo text=hello\n  \
        mcp call \"mcp serve\" add a=1 b=2.5              # numbers, as the schema says\n  \
        mcp call \"mcp serve\" add --args '{\"a\": 1, \"b\": 2}'\n  \
        mcp call \"mcp serve\" test_image_content --out ./images\n  \
        mcp call \"mcp serve\" test_elicitation message=hi --elicit '{\"username\": \"ada\", \"email\": \"ada@example.com\"}'")]
    Call {
        /// The server: a quoted command line, a server name from an mcpServers config, or an
        /// http(s) URL.
        target: String,
        /// The tool's name.
        tool: String,
        /// Arguments as `key=value` (or `key:=JSON`).
        #[arg(value_name = "KEY=VALUE")]
        arguments: Vec<String>,
        /// All arguments as one JSON object (`key=value` pairs override its members).
        #[arg(long = "args", value_name = "JSON")]
        args_json: Option<String>,
        /// Send the arguments without looking the tool up or checking them against its
        /// schema (values that parse as JSON are sent as JSON, the rest as strings).
        #[arg(long = "no-check")]
        no_check: bool,
        /// How to answer the server.
        #[command(flatten)]
        interact: InteractOptions,
        /// How to reach the server.
        #[command(flatten)]
        connect: ConnectOptions,
    },
    /// Read a resource: text is printed, binary contents saved to a file.
    #[command(after_help = "Examples:\n  \
        mcp read \"mcp serve\" test://static-text\n  \
        mcp read \"mcp serve\" test://static-binary --out .\n  \
        mcp read \"mcp serve\" test://template/42/data --json")]
    Read {
        /// The server: a quoted command line, a server name from an mcpServers config, or an
        /// http(s) URL.
        target: String,
        /// The resource's URI.
        uri: String,
        /// How to answer the server.
        #[command(flatten)]
        interact: InteractOptions,
        /// How to reach the server.
        #[command(flatten)]
        connect: ConnectOptions,
    },
    /// Get a prompt filled in with `key=value` arguments, and print its messages.
    #[command(after_help = "Examples:\n  \
        mcp prompt \"mcp serve\" test_simple_prompt\n  \
        mcp prompt \"mcp serve\" test_prompt_with_arguments arg1=hello arg2=world")]
    Prompt {
        /// The server: a quoted command line, a server name from an mcpServers config, or an
        /// http(s) URL.
        target: String,
        /// The prompt's name.
        name: String,
        /// Arguments as `key=value`.
        #[arg(value_name = "KEY=VALUE")]
        arguments: Vec<String>,
        /// Send the arguments without looking the prompt up and checking them.
        #[arg(long = "no-check")]
        no_check: bool,
        /// How to answer the server.
        #[command(flatten)]
        interact: InteractOptions,
        /// How to reach the server.
        #[command(flatten)]
        connect: ConnectOptions,
    },
    /// Ask for completions of a prompt argument or a resource template variable.
    #[command(after_help = "Examples:\n  \
        mcp complete \"mcp serve\" --prompt test_prompt_with_arguments arg1 te\n  \
        mcp complete \"mcp serve\" --resource 'test://template/{id}/data' id 1")]
    #[command(group = clap::ArgGroup::new("reference").required(true).args(["prompt", "resource"]))]
    Complete {
        /// The server: a quoted command line, a server name from an mcpServers config, or an
        /// http(s) URL.
        target: String,
        /// The prompt whose argument is completed.
        #[arg(long, value_name = "NAME")]
        prompt: Option<String>,
        /// The resource template whose variable is completed.
        #[arg(long, value_name = "TEMPLATE")]
        resource: Option<String>,
        /// The argument (or template variable) to complete.
        argument: String,
        /// What has been typed so far.
        #[arg(default_value = "")]
        prefix: String,
        /// Values already chosen for other arguments, as `key=value` (repeatable).
        #[arg(long = "context", value_name = "KEY=VALUE")]
        context: Vec<String>,
        /// How to reach the server.
        #[command(flatten)]
        connect: ConnectOptions,
    },
}

impl ClientCommand {
    /// The options shared by every client command.
    pub fn connect_options(&self) -> &ConnectOptions {
        match self {
            Self::Info { connect, .. }
            | Self::List { connect, .. }
            | Self::Call { connect, .. }
            | Self::Read { connect, .. }
            | Self::Prompt { connect, .. }
            | Self::Complete { connect, .. } => connect,
        }
    }

    /// The options for answering the server, for the commands that take them.
    pub fn interact_options(&self) -> InteractOptions {
        match self {
            Self::Call { interact, .. } | Self::Read { interact, .. } | Self::Prompt { interact, .. } => {
                interact.clone()
            }
            _ => InteractOptions::default(),
        }
    }

    /// The TARGET argument.
    pub fn target(&self) -> &str {
        match self {
            Self::Info { target, .. }
            | Self::List { target, .. }
            | Self::Call { target, .. }
            | Self::Read { target, .. }
            | Self::Prompt { target, .. }
            | Self::Complete { target, .. } => target,
        }
    }
}

fn parse_version(s: &str) -> Result<mcpwire_client::ProtocolVersion, String> {
    mcpwire_client::ProtocolVersion::parse(s).ok_or_else(|| {
        let known: Vec<&str> = mcpwire_client::ProtocolVersion::ALL.iter().map(|v| v.as_str()).collect();
        format!("unknown protocol revision (known: {})", known.join(", "))
    })
}

fn parse_seconds(s: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = s.trim().parse().map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !secs.is_finite() || secs <= 0.0 || secs > 86_400.0 * 365.0 {
        return Err(format!("`{s}` is not a positive number of seconds"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}
