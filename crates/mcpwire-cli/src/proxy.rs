//! `mcp proxy TARGET (--http ADDR | --stdio)`: any server, served again on stdio or on HTTP
//! (Streamable HTTP for both eras, and HTTP+SSE), through the bridge of `mcpwire-bridge`.
//!
//! The upstream connection takes the client commands' options: `--header` and `--bearer` go
//! on every request to an http(s) upstream, and `-v` traces the upstream traffic (and the
//! upstream process's stderr) on stderr, as `mcp call -v` does; stdout stays the downstream
//! protocol's alone.

use std::process::ExitCode;
use std::sync::Arc;

use mcpwire_bridge::{Bridge, CallRouter};

use crate::cli::args::ConnectOptions;
use crate::cli::error::chain;
use crate::cli::target::{self, Opened, Target};
use crate::cli::trace;
use crate::cli::ui::Ui;
use crate::telemetry::Telemetry;

/// Where the proxy serves.
pub enum Listen {
    /// On this process's stdin/stdout.
    Stdio,
    /// On HTTP at this address, with these settings.
    Http {
        /// `host:port` or a port.
        addr: String,
        /// Accepted hosts, limits and shutdown.
        options: Box<HttpOptions>,
    },
}

/// The HTTP options of `mcp serve --http` and `mcp proxy --http`.
#[derive(clap::Args, Debug, Clone)]
#[command(next_help_heading = "HTTP options")]
pub struct HttpOptions {
    /// Host names accepted in Host/Origin headers besides the loopback names (repeatable);
    /// `*` accepts any (only behind a proxy that checks them).
    #[arg(long = "allow-host", value_name = "HOST")]
    pub allow_hosts: Vec<String>,
    /// Connections served at once; one more is answered 503 and closed.
    #[arg(long, value_name = "N", default_value_t = mcpwire_http::HttpConfig::default().max_connections)]
    pub max_connections: usize,
    /// Serve HTTP/2 over cleartext too (h2c, prior knowledge: the client starts with the
    /// HTTP/2 preface), on the same address as HTTP/1.1: many requests and streams on one
    /// connection. Each connection counts once against --max-connections.
    #[arg(long)]
    pub http2: bool,
    /// With --http2: requests (streams) one HTTP/2 connection may have open at once; more
    /// are refused (REFUSED_STREAM).
    #[arg(long, value_name = "N", default_value_t = mcpwire_http::HttpConfig::default().http2_max_streams, requires = "http2")]
    pub http2_max_streams: u32,
    /// Legacy sessions held at once; one more `initialize` is answered 503.
    #[arg(long, value_name = "N", default_value_t = mcpwire_http::HttpConfig::default().max_sessions)]
    pub max_sessions: usize,
    /// Seconds a legacy session may stay unused before it ends.
    #[arg(long, value_name = "SECS", default_value_t = mcpwire_http::HttpConfig::default().session_idle_timeout.as_secs_f64())]
    pub session_idle_timeout: f64,
    /// Seconds a connection may take to send a request's headers (or stay idle between
    /// requests) before it is closed; 0: no limit.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub header_timeout: f64,
    /// On SIGTERM or SIGINT: seconds that requests in flight have to finish (new ones are
    /// answered 503, SSE streams end with a retry hint) before the process exits.
    #[arg(long, value_name = "SECS", default_value_t = mcpwire_http::HttpConfig::default().shutdown_grace.as_secs_f64())]
    pub shutdown_grace: f64,
    /// On SIGTERM or SIGINT: seconds idle keep-alive connections stay open first, so that a
    /// request sent on one just then is answered 503 (a load balancer retries it elsewhere)
    /// rather than met by a closed connection; taken from the grace period.
    #[arg(long, value_name = "SECS", default_value_t = mcpwire_http::HttpConfig::default().shutdown_drain.as_secs_f64())]
    pub shutdown_drain: f64,
    /// MiB of resumable SSE events kept per legacy session; over it, the oldest finished
    /// streams are let go first (a resumption of one is answered with an error).
    #[arg(long, value_name = "MIB", default_value_t = mebibytes(mcpwire_http::EventBudget::default().per_session))]
    pub event_budget: f64,
    /// MiB of resumable SSE events kept over all sessions.
    #[arg(long, value_name = "MIB", default_value_t = mebibytes(mcpwire_http::EventBudget::default().total))]
    pub event_budget_total: f64,
    /// A store shared by every instance of a deployment behind one address, so that any
    /// instance serves any session and notifications reach every client:
    /// redis://HOST:PORT[/DB]. Unreachable at start: exit 3. See docs/SCALING.md.
    #[arg(long, value_name = "URL", env = "MCP_STORE")]
    pub store: Option<String>,
    /// The deployment's name in the shared store: every key and channel begins with it.
    #[arg(long, value_name = "NAME", default_value = "mcp")]
    pub store_prefix: String,
    /// A file whose contents (at least 32 bytes; keep it secret) make the keys that seal
    /// 2026-07-28 `requestState` and pagination cursors, the same file for every instance
    /// behind one address: a retry or a next page may then reach any of them. Repeatable: the
    /// first file's keys seal, every file's open (to rotate: add the new file first, keep the
    /// old one second until what it sealed has expired, then remove it). With --store and
    /// without this, the keys are kept in the store and rotated (--key-rotation).
    #[arg(long, value_name = "FILE")]
    pub state_key_file: Vec<std::path::PathBuf>,
    /// With --store (and no --state-key-file): seconds between two rotations of the keys kept
    /// in the store, the same for every instance. What a key sealed opens for at least this
    /// long after it was sealed.
    #[arg(long, value_name = "SECS", default_value_t = 86_400.0)]
    pub key_rotation: f64,
    /// With --store: seconds an instance's lease lasts (renewed every third of it). The calls
    /// in flight of an instance that stopped without a word (killed) are answered with an
    /// error, where their clients resume them, about one and a half leases later.
    #[arg(long, value_name = "SECS", default_value_t = mcpwire_http::HttpConfig::default().instance_lease.as_secs_f64())]
    pub instance_lease: f64,
    /// OAuth: the endpoint as a protected resource.
    #[command(flatten)]
    pub auth: AuthOptions,
}

/// The options that make `mcp serve --http` and `mcp proxy --http` an OAuth protected
/// resource.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Authorization (the endpoint as an OAuth protected resource)")]
pub struct AuthOptions {
    /// Require access tokens of this authorization server (its issuer URL) on every request:
    /// JWTs checked against its published keys, or with --auth-client-id, any token by
    /// introspection. It need not be reachable at start: until it answers, requests are
    /// answered 503 (with Retry-After), and the reason is logged.
    #[arg(id = "auth_issuer", long = "auth-issuer", value_name = "URL", requires = "auth_audience")]
    pub issuer: Option<String>,
    /// This endpoint's resource identifier, the audience its tokens must name (RFC 8707), as
    /// clients reach it: `https://mcp.example.com/mcp`, say.
    #[arg(id = "auth_audience", long = "auth-audience", value_name = "URL", requires = "auth_issuer")]
    pub audience: Option<String>,
    /// A scope every request's token must grant (repeatable); the metadata lists them.
    #[arg(id = "auth_scope", long = "scope", value_name = "SCOPE", requires = "auth_issuer")]
    pub scopes: Vec<String>,
    /// Check tokens by introspection (RFC 7662) as this client of the authorization server,
    /// instead of as JWTs.
    #[arg(id = "auth_client_id", long = "auth-client-id", value_name = "ID", requires_all = ["auth_issuer", "auth_client_secret"])]
    pub client_id: Option<String>,
    /// The secret of --auth-client-id.
    #[arg(
        id = "auth_client_secret",
        long = "auth-client-secret",
        value_name = "SECRET",
        env = "MCP_AUTH_CLIENT_SECRET",
        hide_env_values = true
    )]
    pub client_secret: Option<String>,
}

impl AuthOptions {
    /// What can be told wrong before anything starts (a usage error, exit 2): an issuer or an
    /// audience that is not an http(s) URL. (Options given without the ones they need are
    /// refused by the argument parser.) Whether the issuer answers is not checked here.
    pub fn check(&self) -> Result<(), String> {
        if let Some(issuer) = &self.issuer {
            mcpwire_auth::metadata::authorization_server_metadata_urls(issuer)
                .map_err(|e| format!("--auth-issuer {issuer:?}: {e}"))?;
        }
        if let Some(audience) = &self.audience {
            mcpwire_auth::metadata::origin_of(audience).map_err(|e| format!("--auth-audience {audience:?}: {e}"))?;
        }
        Ok(())
    }

    /// The resource server these options describe (`None` without --auth-issuer). Nothing
    /// is fetched: its verifier reads the issuer's metadata when first needed (see
    /// [`prepare_auth`]); `Err` for a usage error ([`Self::check`]).
    pub fn resource_server(&self) -> Result<Option<mcpwire_auth::ResourceServer>, String> {
        self.check()?;
        let (Some(issuer), Some(audience)) = (&self.issuer, &self.audience) else { return Ok(None) };
        let rs = match (&self.client_id, &self.client_secret) {
            (Some(id), Some(secret)) => mcpwire_auth::ResourceServer::new(
                audience,
                mcpwire_auth::IntrospectionVerifier::discovering(issuer, audience, id, secret),
            ),
            _ => mcpwire_auth::ResourceServer::new(audience, mcpwire_auth::JwtVerifier::discovering(issuer, audience)),
        };
        Ok(Some(
            rs.authorization_server(issuer)
                .scopes_supported(self.scopes.iter().cloned())
                .required_scopes(self.scopes.iter().cloned()),
        ))
    }
}

const MIB: f64 = 1024.0 * 1024.0;

fn mebibytes(bytes: usize) -> f64 {
    bytes as f64 / MIB
}

/// A non-negative number of MiB from the command line, in bytes.
fn bytes(mib: f64) -> usize {
    if mib.is_finite() && mib > 0.0 {
        (mib * MIB) as usize
    } else {
        0
    }
}

/// A non-negative number of seconds from the command line (negative or not finite: zero).
fn seconds(secs: f64) -> std::time::Duration {
    std::time::Duration::try_from_secs_f64(secs).unwrap_or_default()
}

/// [`http_config`], and the resource server of the authorization options; `Err` for a usage
/// error (exit 2). The issuer need not be reachable.
pub fn http_config_with_auth(options: &HttpOptions) -> Result<mcpwire_http::HttpConfig, String> {
    let mut config = http_config(options);
    config.auth = options.auth.resource_server()?;
    Ok(config)
}

/// Has the resource server of `config`, if any, reach its authorization server now, in the
/// background: if it cannot, the reason is logged (a warning) at start rather than at the
/// first request, and requests are answered 503 until it answers. Call within a runtime.
pub fn prepare_auth(config: &mcpwire_http::HttpConfig) {
    if let Some(rs) = config.auth.clone() {
        // A failure is logged by the verifier (once per streak of failures), and tried again
        // when requests come.
        tokio::spawn(async move { rs.prepare().await.ok() });
    }
}

/// The HTTP settings of `mcp serve --http` and `mcp proxy --http`: loopback names plus
/// the allowed hosts in Host/Origin (`*`: any), and the limits given.
pub fn http_config(options: &HttpOptions) -> mcpwire_http::HttpConfig {
    let mut config = mcpwire_http::HttpConfig::default();
    if options.allow_hosts.iter().any(|h| h == "*") {
        config.hosts = mcpwire_http::HostPolicy::any();
    } else {
        config.hosts.allowed_hosts.extend(options.allow_hosts.iter().cloned());
    }
    config.max_connections = options.max_connections.max(1);
    config.http2 = options.http2;
    config.http2_max_streams = options.http2_max_streams.max(1);
    config.max_sessions = options.max_sessions;
    config.session_idle_timeout = seconds(options.session_idle_timeout).max(std::time::Duration::from_millis(100));
    config.header_read_timeout = Some(seconds(options.header_timeout)).filter(|t| !t.is_zero());
    config.shutdown_grace = seconds(options.shutdown_grace);
    config.shutdown_drain = seconds(options.shutdown_drain);
    config.event_budget.per_session = bytes(options.event_budget);
    config.event_budget.total = bytes(options.event_budget_total);
    config.instance_lease = seconds(options.instance_lease).max(std::time::Duration::from_millis(100));
    config
}

/// `mcp proxy --config FILE`: every server of the file behind one endpoint, each mounted
/// under its name as prefix ([`mcpwire_bridge::Gateway::from_config`]). Every server must
/// connect at start (exit 3 naming those that did not); one that drops later is connected
/// again.
pub async fn run_gateway(
    config_path: &std::path::Path,
    options: &ConnectOptions,
    limits: &crate::limits::LimitOptions,
    telemetry: &Telemetry,
    ui: Arc<Ui>,
    listen: Listen,
    terminated: impl std::future::Future<Output = ()>,
) -> ExitCode {
    let resolve = match target::resolve_options(options) {
        Ok(resolve) => resolve,
        Err(e) => {
            eprintln!("mcp proxy: {e}");
            return ExitCode::from(2);
        }
    };
    let config = match mcpwire_bridge::GatewayConfig::load(config_path, &resolve) {
        Ok(config) => config,
        Err(e) => {
            let e = match e {
                mcpwire_bridge::ConfigError::Target(e) => target::error(e).to_string(),
                other => other.to_string(),
            };
            eprintln!("mcp proxy: {e}");
            return ExitCode::from(2);
        }
    };
    // The store is reached, and the keys had, before any server is started or built: the
    // gateway's server keeps its tasks there and seals with the shared keys.
    let shared = match prepare_shared(&listen).await {
        Ok(shared) => shared,
        Err(code) => return code,
    };
    let upstream = upstream_options(options, ui);
    let (gateway, mounted) =
        mcpwire_bridge::Gateway::from_config(&config, &upstream, |b| shared.apply(telemetry.apply(limits.apply(b))))
            .await;
    let mut failed = false;
    for mcpwire_bridge::Mounted { name, target, outcome } in mounted {
        let label = target.label();
        match outcome {
            Ok(()) => {
                let session = gateway.session(&name);
                let speaks =
                    session.map(|s| format!("{} ({:?} era)", s.protocol_version(), s.era())).unwrap_or_default();
                eprintln!("mcp proxy: upstream {label} speaks {speaks}, mounted under {name}_");
            }
            Err(e) => {
                eprintln!("mcp proxy: {label}: {}", chain(&e));
                failed = true;
            }
        }
    }
    let code = if failed {
        ExitCode::from(3)
    } else {
        serve(gateway.server().clone(), listen, shared, terminated, std::future::pending()).await
    };
    // The servers' sessions end, then the processes started for them.
    gateway.close().await;
    code
}

/// The proxy's client options towards its upstream servers: `--timeout` for the handshake
/// and each request, `--protocol-version`; each target opened as the client commands open
/// theirs (OAuth on a 401), its traffic traced on stderr with `-v`.
fn upstream_options(options: &ConnectOptions, ui: Arc<Ui>) -> mcpwire_bridge::UpstreamOptions {
    let mut upstream = mcpwire_bridge::UpstreamOptions::new("mcp-proxy", env!("CARGO_PKG_VERSION"));
    upstream.timeout = options.timeout;
    upstream.protocol_version = options.protocol_version;
    let oauth = options.oauth();
    upstream.open = Arc::new(move |spec: &mcpwire_client::target::Target| {
        let oauth = if matches!(spec, mcpwire_client::target::Target::Http { .. }) { oauth.clone() } else { None };
        let Opened { connection, child, .. } = target::open(&Target { spec: spec.clone(), oauth })
            .map_err(|e| mcpwire_client::target::TargetError::Connect(e.to_string()))?;
        let connection = if ui.verbose() > 0 { trace::tee(connection, ui.clone()) } else { connection };
        Ok(mcpwire_client::target::Opened { connection, child })
    });
    upstream
}

/// What an HTTP proxy shares with the other instances of its deployment ([`Shared`]; nothing
/// on stdio), or the exit code once the reason it cannot is told.
async fn prepare_shared(listen: &Listen) -> Result<Shared, ExitCode> {
    match listen {
        Listen::Http { options, .. } => Shared::prepare(options).await.map_err(|(line, code)| {
            eprintln!("mcp proxy: {line}");
            code
        }),
        Listen::Stdio => Ok(Shared { store: None, keys: None }),
    }
}

/// Serves `server` as `listen` says, with what it shares with other instances (`shared`,
/// on HTTP), until the downstream side ends (stdio), SIGTERM/SIGINT (`terminated`), or
/// `upstream_gone`.
async fn serve(
    server: mcpwire_server::Server,
    listen: Listen,
    shared: Shared,
    terminated: impl std::future::Future<Output = ()>,
    upstream_gone: impl std::future::Future<Output = ()>,
) -> ExitCode {
    match listen {
        Listen::Stdio => {
            tokio::select! {
                _ = server.serve(mcpwire_transport::stdio::stdio()) => ExitCode::SUCCESS,
                _ = upstream_gone => fail("the upstream server went away".into()),
                _ = terminated => ExitCode::SUCCESS,
            }
        }
        Listen::Http { addr, options } => {
            let addr = if addr.contains(':') { addr } else { format!("127.0.0.1:{addr}") };
            let listener = match tokio::net::TcpListener::bind(&addr).await {
                Ok(l) => l,
                Err(e) => return fail(format!("cannot listen on {addr}: {e}")),
            };
            let config = match http_config_with_auth(&options) {
                Ok(config) => config,
                Err(e) => {
                    eprintln!("mcp proxy: {e}");
                    return ExitCode::from(2);
                }
            };
            prepare_auth(&config);
            // The keys stay with the serving: they are rotated while it lasts.
            let Shared { store, keys: _keys } = shared;
            let http = match endpoint_with(server, config, &options, store).await {
                Ok(http) => http,
                Err(e) => return fail(e),
            };
            let local = listener.local_addr().map(|a| a.to_string()).unwrap_or(addr);
            eprintln!("mcp proxy: serving on http://{local}/mcp (Streamable HTTP) and http://{local}/sse (HTTP+SSE)");
            // On SIGTERM/SIGINT the HTTP side shuts down gracefully (see `HttpOptions`).
            tokio::select! {
                r = http.serve_until(listener, terminated) => match r {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => fail(format!("HTTP server failed: {e}")),
                },
                _ = upstream_gone => fail("the upstream server went away".into()),
            }
        }
    }
}

/// Connects the shared store `--store` names, if any; an error line when it cannot be
/// reached. For a server whose tasks are kept there too
/// ([`mcpwire_server::ServerBuilder::task_store`]): connected before the server is built.
pub async fn connect_store(options: &HttpOptions) -> Result<Option<mcpwire_store_redis::RedisStore>, String> {
    let Some(url) = &options.store else { return Ok(None) };
    let store = mcpwire_store_redis::RedisStore::connect(url, &options.store_prefix)
        .await
        .map_err(|e| format!("cannot reach the shared store at {}: {}", redact(url), error_chain(&e)))?;
    Ok(Some(store))
}

/// The keys that seal `requestState` and pagination cursors of an instance of a deployment,
/// and what keeps them rotated: keep it as long as the server it was given to.
pub struct SealingKeys {
    /// The keys of `requestState`.
    pub state: mcpwire_protocol::engine::key_ring::KeyRing,
    /// The keys of pagination cursors.
    pub cursor: mcpwire_protocol::engine::key_ring::KeyRing,
    /// The background refreshes of the rings kept in the store (none for key files): the
    /// rings stop rotating when these are dropped.
    _keepers: Vec<mcpwire_store_redis::RingKeeper>,
}

impl SealingKeys {
    /// `builder` sealing with these keys.
    pub fn apply(&self, builder: mcpwire_server::ServerBuilder) -> mcpwire_server::ServerBuilder {
        builder.state_key_ring(self.state.clone()).cursor_key_ring(self.cursor.clone())
    }
}

/// Why the sealing keys could not be had.
#[derive(Debug)]
pub enum KeysError {
    /// A `--state-key-file` that cannot be read or is too short: a usage error (exit 2).
    File(String),
    /// The shared store failed (exit 3, as an unreachable store at start).
    Store(String),
}

impl KeysError {
    /// The exit code: 2 for a bad key file, 3 for the store.
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(match self {
            KeysError::File(_) => 2,
            KeysError::Store(_) => 3,
        })
    }
}

impl std::fmt::Display for KeysError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeysError::File(m) | KeysError::Store(m) => f.write_str(m),
        }
    }
}

/// The sealing keys of an instance of a deployment: from the `--state-key-file`s (the first
/// seals, all open), else rotated in the shared store (made there by the first instance
/// asking, every `--key-rotation`), else none (each process makes its own).
pub async fn sealing_keys(
    options: &HttpOptions,
    store: Option<&mcpwire_store_redis::RedisStore>,
) -> Result<Option<SealingKeys>, KeysError> {
    use mcpwire_protocol::engine::key_ring::KeyRing;
    use sha2::{Digest, Sha256};
    if !options.state_key_file.is_empty() {
        let mut rings: Option<(KeyRing, KeyRing)> = None;
        for path in &options.state_key_file {
            let secret = std::fs::read(path)
                .map_err(|e| KeysError::File(format!("cannot read --state-key-file {}: {e}", path.display())))?;
            if secret.len() < 32 {
                return Err(KeysError::File(format!(
                    "--state-key-file {}: at least 32 bytes of secret are needed",
                    path.display()
                )));
            }
            // One key per use, so that a cursor is never taken for a request state; the id
            // from the secret, so that every instance given the file names its keys alike.
            let derive = |purpose: &[u8]| -> [u8; 32] {
                Sha256::new().chain_update(purpose).chain_update(&secret).finalize().into()
            };
            let (state, cursor) = (derive(b"mcp requestState\0"), derive(b"mcp cursor\0"));
            let id = KeyRing::id_of(&secret);
            match &rings {
                // The first file's keys are current: they seal.
                None => rings = Some((KeyRing::new(id, state), KeyRing::new(id, cursor))),
                Some((s, c)) => {
                    s.insert(id, state);
                    c.insert(id, cursor);
                }
            }
        }
        return Ok(rings.map(|(state, cursor)| SealingKeys { state, cursor, _keepers: Vec::new() }));
    }
    let Some(store) = store else { return Ok(None) };
    let failed = |e: mcpwire_server::shared::StoreError| {
        KeysError::Store(format!("cannot read the shared keys from the store: {}", error_chain(&e)))
    };
    let period = seconds(options.key_rotation).max(std::time::Duration::from_secs(1));
    let (state, state_keeper) = store.key_ring("request-state", period).await.map_err(failed)?;
    let (cursor, cursor_keeper) = store.key_ring("cursor", period).await.map_err(failed)?;
    Ok(Some(SealingKeys { state, cursor, _keepers: vec![state_keeper, cursor_keeper] }))
}

/// What an HTTP instance shares with the others of its deployment, had before its server is
/// built (the server is given the task store and the keys): the store `--store` names, and
/// the sealing keys.
pub struct Shared {
    /// The store, connected.
    pub store: Option<mcpwire_store_redis::RedisStore>,
    /// The sealing keys (kept alive with this).
    pub keys: Option<SealingKeys>,
}

impl Shared {
    /// Connects the store and gets the keys; the line to show and the exit code when either
    /// fails (an unreachable store: 3; a bad key file: 2).
    pub async fn prepare(options: &HttpOptions) -> Result<Shared, (String, ExitCode)> {
        let store = connect_store(options).await.map_err(|e| (e, ExitCode::from(3)))?;
        let keys = sealing_keys(options, store.as_ref()).await.map_err(|e| {
            let code = e.exit_code();
            (e.to_string(), code)
        })?;
        Ok(Shared { store, keys })
    }

    /// `builder` keeping its tasks in the store and sealing with the keys, as they were had.
    pub fn apply(&self, mut builder: mcpwire_server::ServerBuilder) -> mcpwire_server::ServerBuilder {
        if let Some(store) = &self.store {
            builder = builder.task_store(Arc::new(store.clone()));
        }
        if let Some(keys) = &self.keys {
            builder = keys.apply(builder);
        }
        builder
    }
}

/// The HTTP endpoint of `server`: one instance among several sharing the store connected
/// already ([`connect_store`], before the server was built, so that its tasks are kept there
/// too: [`Shared`]), or on its own.
pub async fn endpoint_with(
    server: mcpwire_server::Server,
    config: mcpwire_http::HttpConfig,
    options: &HttpOptions,
    store: Option<mcpwire_store_redis::RedisStore>,
) -> Result<mcpwire_http::McpHttp, String> {
    let Some(store) = store else { return Ok(mcpwire_http::McpHttp::new(server, config)) };
    let shown = options.store.as_deref().map(redact).unwrap_or_default();
    mcpwire_http::McpHttp::shared(server, config, store.shared_state())
        .await
        .map_err(|e| format!("cannot use the shared store at {shown}: {}", error_chain(&e)))
}

/// A store URL without its password, to be shown.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => format!("{}://***@{}", &url[..scheme], &url[at + 1..]),
        _ => url.to_owned(),
    }
}

/// An error and its causes, on one line.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        line.push_str(": ");
        line.push_str(&c.to_string());
        cause = c.source();
    }
    line
}

fn fail(message: String) -> ExitCode {
    eprintln!("mcp proxy: {message}");
    ExitCode::from(3)
}

/// Sets up the proxy's diagnostics on stderr (before anything is logged): the libraries'
/// warnings, and with `-v` the upstream process's stderr lines. The returned [`Ui`] is the
/// one [`run`] traces on. With `telemetry` exporting, the protocol's spans are exported too.
pub fn init_diagnostics(options: &ConnectOptions, telemetry: &Telemetry) -> Arc<Ui> {
    let ui = Arc::new(Ui::new(options.verbose, None));
    trace::init(ui.clone(), telemetry.layer());
    ui
}

/// Connects to `target` and serves it; returns when the downstream side ends (stdio) or on
/// SIGTERM/SIGINT. With `-v` (`ui.verbose()`), every message to and from the upstream server
/// is traced on stderr.
pub async fn run(
    target_text: &str,
    options: &ConnectOptions,
    limits: &crate::limits::LimitOptions,
    telemetry: &Telemetry,
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
    if target.is_stdio() && !options.headers.is_empty() {
        eprintln!("mcp proxy: --header applies to http(s) upstreams only; ignored for a server run over stdio");
    }
    // The store is reached, and the keys had, before the upstream is started: the bridge's
    // server keeps its tasks there and seals with the shared keys.
    let shared = match prepare_shared(&listen).await {
        Ok(shared) => shared,
        Err(code) => return code,
    };
    let Opened { connection, child, .. } = match target::open(&target) {
        Ok(o) => o,
        Err(e) => return fail(e.to_string()),
    };
    let connection = if ui.verbose() > 0 { trace::tee(connection, ui) } else { connection };
    let router = CallRouter::default();
    let client = mcpwire_bridge::UpstreamOptions {
        timeout: options.timeout,
        protocol_version: options.protocol_version,
        ..mcpwire_bridge::UpstreamOptions::new("mcp-proxy", env!("CARGO_PKG_VERSION"))
    }
    .client(&router);
    let session = match tokio::time::timeout(options.timeout, client.connect(connection)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return fail(format!("cannot connect to {}: {}", target.label(), chain(&e))),
        Err(_) => return fail(format!("{} did not complete the handshake in time", target.label())),
    };
    eprintln!("mcp proxy: upstream {} speaks {} ({:?} era)", target.label(), session.protocol_version(), session.era());
    let bridge =
        match Bridge::mirror_with(session.clone(), router, |b| shared.apply(telemetry.apply(limits.apply(b)))).await {
            Ok(b) => b,
            Err(e) => return fail(format!("cannot list what {} offers: {}", target.label(), chain(&e))),
        };
    let code = serve(bridge.server().clone(), listen, shared, terminated, session.closed()).await;
    let _ = session.close().await;
    if let Some(child) = child {
        let _ = child.close(std::time::Duration::from_secs(2)).await;
    }
    code
}
