//! The client the official MCP conformance suite drives (`conformance.sh client CMD`).
//!
//! The suite starts a mock server per scenario and runs this binary with the server's URL
//! as the last argument, the scenario in `MCP_CONFORMANCE_SCENARIO`, the revision in
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` (suite 0.2) and scenario data in
//! `MCP_CONFORMANCE_CONTEXT`. Each scenario does what a real client would do in that
//! situation, through the library's client runtime and HTTP transport. Authorization
//! scenarios (`auth/*`) run the OAuth client of `mcpwire-auth` (headless: the mock
//! authorization server approves at once) and then list tools and call `test-tool`.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context as _, Result};
use mcpwire_auth::{
    ClientAuthMethod, ClientCredentials, Grant, IdJagExchange, OAuthClient, OAuthConfig, StaticAssertion,
};
use mcpwire_client::{Client, ClientSession};
use mcpwire_protocol::types::{
    ContentBlock, CreateMessageResult, ElicitParams, ElicitResult, JsonObject, Role, SamplingContent,
};
use mcpwire_protocol::{Method, ProtocolVersion};
use mcpwire_transport::http::{self, HttpOptions};
use serde_json::{json, Value};

/// Fills a form with the defaults its schema gives (SEP-1034), as a user accepting them would.
fn defaults_of(params: &ElicitParams) -> JsonObject {
    let mut content = JsonObject::new();
    if let Some(Value::Object(props)) = params.requested_schema.as_ref().and_then(|s| s.get("properties")) {
        for (name, schema) in props {
            if let Some(default) = schema.get("default") {
                content.insert(name.clone(), default.clone());
            }
        }
    }
    content
}

fn client(version: Option<ProtocolVersion>, scenario: &str) -> Client {
    let confirm = scenario.starts_with("sep-2322");
    let mut builder = Client::builder("mcp-rs-conformance-client", env!("CARGO_PKG_VERSION"))
        .request_timeout(Duration::from_secs(20))
        .sampling(|_| async {
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: SamplingContent::Single(ContentBlock::text("This is a test response from the client")),
                model: "test-model".into(),
                stop_reason: Some("endTurn".into()),
                meta: None,
            })
        })
        .elicitation(move |params| async move {
            let content = if confirm {
                json!({"confirmed": true}).as_object().cloned().unwrap_or_default()
            } else {
                defaults_of(&params)
            };
            Ok(ElicitResult { action: "accept".into(), content: Some(content), meta: None })
        })
        .elicitation_url(false)
        .accept_negotiated(true);
    if let Some(v) = version {
        builder = builder.protocol_version(v);
    }
    builder.build()
}

async fn connect(url: &str, version: Option<ProtocolVersion>, scenario: &str) -> Result<ClientSession> {
    let conn = http::connect(url, HttpOptions::default())?;
    client(version, scenario).connect(conn).await.context("connecting")
}

fn text_of(result: &Value) -> String {
    result["content"].as_array().into_iter().flatten().filter_map(|c| c["text"].as_str()).collect()
}

async fn run(scenario: &str, url: &str) -> Result<()> {
    // Suite 0.1.x names no revision: it speaks 2025-11-25. 0.2.x says which one to use.
    let version = match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION") {
        Ok(v) => Some(ProtocolVersion::parse(&v).ok_or_else(|| anyhow!("unknown protocol version {v:?}"))?),
        Err(_) => Some(ProtocolVersion::V2025_11_25),
    };
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    if scenario.starts_with("auth/") {
        return authorized(scenario, url, version, &context).await;
    }
    let session = connect(url, version, scenario).await?;
    match scenario {
        "initialize" => {
            session.list_all_tools().await?;
        }
        "tools_call" => {
            let r = session.call_tool("add_numbers", json!({"a": 5, "b": 3})).await?;
            tracing::info!(?r, "add_numbers");
        }
        "elicitation-sep1034-client-defaults" => {
            session.list_all_tools().await?;
            session.call_tool("test_client_elicitation_defaults", json!({})).await?;
        }
        "sse-retry" => {
            session.list_all_tools().await?;
            session.call_tool("test_reconnection", json!({})).await?;
        }
        "request-metadata" => {
            session.list_all_tools().await?;
        }
        "sep-2322-client-request-state" => mrtr_request_state(&session).await?,
        "http-standard-headers" => {
            for tool in session.list_all_tools().await? {
                session.call_tool(tool.name.clone(), json!({})).await?;
            }
            for resource in session.list_all_resources().await? {
                session.read_resource(resource.uri.clone()).await?;
            }
            for prompt in session.list_all_prompts().await? {
                session.get_prompt(prompt.name.clone(), BTreeMap::new()).await?;
            }
        }
        "http-custom-headers" => {
            // The tools must be listed first: their x-mcp-header annotations say which headers to send.
            session.list_all_tools().await?;
            for call in context["toolCalls"].as_array().into_iter().flatten() {
                let name = call["name"].as_str().unwrap_or_default();
                session.call_tool(name, call["arguments"].clone()).await?;
            }
        }
        "http-invalid-tool-headers" => {
            // Tools with invalid annotations are dropped by the transport while listing.
            for tool in session.list_all_tools().await? {
                let mut args = JsonObject::new();
                if let Some(Value::Object(props)) = tool.input_schema.get("properties") {
                    for (name, schema) in props {
                        let sample = match schema["type"].as_str() {
                            Some("integer" | "number") => json!(1),
                            Some("boolean") => json!(true),
                            _ => json!("us-west1"),
                        };
                        args.insert(name.clone(), sample);
                    }
                }
                session.call_tool(tool.name.clone(), Value::Object(args)).await?;
            }
        }
        "json-schema-ref-no-deref" => {
            session.list_all_tools().await?;
        }
        "json-schema-2020-12-preservation" => {
            let tools = session.list_all_tools().await?;
            let schema = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .map(|t| Value::Object(t.input_schema.clone()))
                .ok_or_else(|| anyhow!("json_schema_2020_12_tool is not listed"))?;
            session.call_tool("json_schema_echo", json!({"schema": schema})).await?;
        }
        other => {
            // Unknown scenario: do what a client usually does, and say so.
            tracing::warn!("unknown scenario {other:?}: listing and calling tools");
            session.list_all_tools().await?;
        }
    }
    session.close().await?;
    Ok(())
}

/// The client identity the suite expects when it can use a client ID metadata document.
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The OAuth client for an `auth/*` scenario, from its context (`MCP_CONFORMANCE_CONTEXT`).
fn oauth_client(scenario: &str, url: &str, version: Option<ProtocolVersion>, context: &Value) -> Result<OAuthClient> {
    let mut config = OAuthConfig::new("mcp-rs-conformance-client", "http://localhost:3000/callback");
    config.client_metadata_url = Some(CIMD_URL.into());
    config.protocol_version = version.map(|v| v.to_string());
    let text = |key: &str| context.get(key).and_then(Value::as_str).map(str::to_owned);
    if let Some(client_id) = text("client_id") {
        let mut credentials = ClientCredentials::new(client_id);
        credentials.client_secret = text("client_secret");
        credentials.issuer = text("issuer");
        if let Some(pem) = text("private_key_pem") {
            let alg = text("signing_algorithm").unwrap_or_else(|| "ES256".into());
            credentials = credentials.private_key(pem, alg);
        }
        if scenario.starts_with("auth/client-credentials") {
            config.grant = Grant::ClientCredentials;
            if credentials.client_secret.is_some() {
                credentials = credentials.auth_method(ClientAuthMethod::ClientSecretBasic);
            }
        }
        if let (Some(endpoint), Some(id_token)) = (text("idp_token_endpoint"), text("idp_id_token")) {
            // Enterprise-managed authorization: an ID-JAG from the identity provider.
            let exchange = IdJagExchange::new(endpoint, id_token);
            let exchange = match text("idp_client_id") {
                Some(id) => exchange.client(id, None),
                None => exchange,
            };
            config.grant = Grant::JwtBearer;
            config.assertion_source = Some(Arc::new(exchange));
        } else if let Some(jwt) = text("valid_jwt") {
            // Workload identity federation: the platform's token is the assertion.
            config.grant = Grant::JwtBearer;
            config.assertion_source = Some(Arc::new(StaticAssertion(jwt)));
        }
        config.credentials.push(credentials);
    }
    Ok(OAuthClient::new(url, config)?)
}

/// An `auth/*` scenario: connect with the OAuth client, list the tools and call `test-tool`
/// (the scope step-up scenarios need a call that requires more scopes than listing).
async fn authorized(scenario: &str, url: &str, version: Option<ProtocolVersion>, context: &Value) -> Result<()> {
    let oauth = oauth_client(scenario, url, version, context)?;
    let options = HttpOptions { auth: Some(Arc::new(oauth)), ..HttpOptions::default() };
    let session = client(version, scenario).connect(http::connect(url, options)?).await.context("connecting")?;
    let tools = session.list_all_tools().await.context("listing tools")?;
    if let Some(tool) = tools.iter().find(|t| t.name == "test-tool").or(tools.first()) {
        session.call_tool(tool.name.clone(), json!({})).await.context("calling a tool")?;
    }
    session.close().await?;
    Ok(())
}

/// SEP-2322: the client keeps `requestState` byte for byte, uses a new id for each retry,
/// may make unrelated calls between rounds, and treats a missing `resultType` as complete.
async fn mrtr_request_state(session: &ClientSession) -> Result<()> {
    session.list_all_tools().await?;
    let first = session
        .request(Method::CallTool.as_str(), Some(json!({"name": "test_mrtr_echo_state", "arguments": {}})))
        .await?;
    session.request(Method::CallTool.as_str(), Some(json!({"name": "test_mrtr_unrelated", "arguments": {}}))).await?;
    let mut responses = JsonObject::new();
    for (key, _) in first["inputRequests"].as_object().into_iter().flatten() {
        responses.insert(key.clone(), json!({"action": "accept", "content": {"confirmed": true}}));
    }
    let mut retry = json!({"name": "test_mrtr_echo_state", "arguments": {}, "inputResponses": responses});
    if let Some(state) = first.get("requestState") {
        retry["requestState"] = state.clone();
    }
    let done = session.request(Method::CallTool.as_str(), Some(retry)).await?;
    tracing::info!(text = %text_of(&done), "echo_state");
    // The same through the runtime's own loop, for the tools that need it.
    session.call_tool("test_mrtr_no_state", json!({})).await?;
    session.call_tool("test_mrtr_no_result_type", json!({})).await?;
    Ok(())
}

fn main() -> ExitCode {
    let filter = tracing_subscriber::EnvFilter::try_from_env("MCP_LOG").unwrap_or_else(|_| "warn".into());
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
    let Some(url) = std::env::args().next_back().filter(|a| a.starts_with("http")) else {
        eprintln!("usage: conformance-client URL (with MCP_CONFORMANCE_SCENARIO set)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("conformance-client: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(&scenario, &url)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance-client: {scenario}: {e:#}");
            ExitCode::FAILURE
        }
    }
}
