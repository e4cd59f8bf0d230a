//! The README and `docs/` speak of the one crate a program depends on, `mcpwire`: the paths they
//! name are `mcpwire::` paths (the internal crates' own paths are not reachable from a program
//! that depends on `mcp` only), those paths exist, and their `Cargo.toml` snippets ask for
//! features and versions that exist.

use std::path::{Path, PathBuf};

/// The internal crates re-exported by `mcpwire`.
const INTERNAL: [&str; 8] = [
    "mcpwire_protocol",
    "mcpwire_transport",
    "mcpwire_server",
    "mcpwire_client",
    "mcpwire_http",
    "mcpwire_auth",
    "mcpwire_bridge",
    "mcpwire_macros",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// README.md and every docs/*.md.
fn documents() -> Vec<(PathBuf, String)> {
    let mut paths = vec![root().join("README.md")];
    let docs = std::fs::read_dir(root().join("docs")).expect("docs/");
    paths.extend(docs.map(|e| e.expect("docs/ entry").path()).filter(|p| p.extension().is_some_and(|e| e == "md")));
    paths.sort();
    paths.into_iter().map(|p| (p.clone(), read(&p))).collect()
}

#[test]
fn the_docs_name_mcp_paths_not_the_internal_crates() {
    let mut found = Vec::new();
    for (path, text) in documents() {
        for (n, line) in text.lines().enumerate() {
            for name in INTERNAL {
                if line.contains(&format!("{name}::")) || line.contains(&format!("use {name}")) {
                    found.push(format!("{}:{}: `{name}::` (write `mcpwire::...`)", path.display(), n + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "internal crate paths in the docs:\n{}", found.join("\n"));
}

/// Paths the README and docs/ name, compiled: each must stay reachable through `mcpwire`.
#[allow(unused_imports)]
mod named_in_the_docs {
    use mcpwire::auth::resource::{IntrospectionVerifier, JwtVerifier, ResourceServer, TokenVerifier, RETRY_AFTER};
    use mcpwire::auth::{LoopbackAuthorizer, OAuthClient};
    use mcpwire::bridge::{client_builder, Bridge, CallRouter, Gateway};
    use mcpwire::client::middleware::ClientCall;
    use mcpwire::http::{EventBudget, EventStore, HttpConfig, McpHttp, MemoryEventStore};
    use mcpwire::protocol::engine::key_ring::KeyRing;
    use mcpwire::protocol::{json, namespace};
    use mcpwire::server::middleware::{RateLimitLayer, ResultSizeLayer, TimeoutLayer, TracingLayer, VisibilityLayer};
    use mcpwire::server::{ServerSession, TaskConfig};
    use mcpwire::transport::http::{connect, HttpOptions};
    use mcpwire::transport::{Connection, DEFAULT_MAX_FRAME};
    use mcpwire::types::LoggingLevel;
    use mcpwire::{
        ChildCommand, Client, ClientBuilder, ClientError, ClientSession, Context, ErrorObject, HandlerError,
        HandlerResult, McpRequest, McpResponse, Principal, ProgressError, PromptDef, ProtocolVersion, ResourceDef,
        Server, ServerBuilder, ServerConfig, State, TestClient, ToolDef, ToolError,
    };

    #[test]
    fn the_error_constructors_of_the_docs_exist() {
        let _ = HandlerError::invalid_params("bad");
        let _ = HandlerError::resource_not_found("notes://9");
        let _ = HandlerError::tool("failed");
        let _ = HandlerError::Protocol(ErrorObject::new(-32000, "custom"));
        let _ = ToolError::new("failed");
    }
}

/// The ```toml blocks of the README, parsed.
fn readme_snippets() -> Vec<toml::Table> {
    let readme = read(&root().join("README.md"));
    let blocks: Vec<toml::Table> = readme
        .split("```toml\n")
        .skip(1)
        .map(|rest| rest.split("\n```").next().expect("a closed block"))
        .map(|block| toml::from_str(block).unwrap_or_else(|e| panic!("a toml block of the README: {e}\n{block}")))
        .collect();
    assert!(blocks.len() >= 2, "the README shows a Cargo.toml for a stdio and an HTTP server");
    blocks
}

/// `0.8.1` -> `0.8`, `1.2` -> `1`: the part of a version that a caret requirement keeps.
fn compatible(version: &str) -> String {
    let parts: Vec<&str> = version.trim_start_matches(['^', '=']).split('.').collect();
    match parts[0] {
        "0" => parts[..2.min(parts.len())].join("."),
        major => major.to_owned(),
    }
}

fn version_of(dependency: &toml::Value) -> String {
    match dependency {
        toml::Value::String(v) => v.clone(),
        toml::Value::Table(t) => t["version"].as_str().expect("a version").to_owned(),
        other => panic!("a dependency is a version or a table: {other:?}"),
    }
}

fn strings(value: Option<&toml::Value>) -> Vec<String> {
    let list = value.and_then(toml::Value::as_array).map(Vec::as_slice).unwrap_or_default();
    list.iter().map(|v| v.as_str().expect("a string").to_owned()).collect()
}

#[test]
fn the_readme_cargo_toml_snippets_match_the_manifests() {
    let facade: toml::Table = toml::from_str(&read(&root().join("crates/mcpwire/Cargo.toml"))).unwrap();
    let features = facade["features"].as_table().unwrap();
    let workspace: toml::Table = toml::from_str(&read(&root().join("Cargo.toml"))).unwrap();
    let ours = &workspace["workspace"]["dependencies"];
    let http: toml::Table = toml::from_str(&read(&root().join("crates/mcpwire-http/Cargo.toml"))).unwrap();
    let our_version = workspace["workspace"]["package"]["version"].as_str().unwrap();

    for snippet in readme_snippets() {
        for section in ["dependencies", "dev-dependencies"] {
            let Some(dependencies) = snippet.get(section).and_then(toml::Value::as_table) else { continue };
            for (name, dependency) in dependencies {
                let version = version_of(dependency);
                let expected = match name.as_str() {
                    "mcpwire" => {
                        let table = dependency.as_table().expect("mcpwire with its features");
                        assert_eq!(
                            table.get("default-features").and_then(toml::Value::as_bool),
                            Some(false),
                            "[{section}] mcpwire: say `default-features = false` (or every default feature is on)"
                        );
                        for feature in strings(table.get("features")) {
                            assert!(features.contains_key(&feature), "[{section}] mcpwire: no feature `{feature}`");
                        }
                        our_version.to_owned()
                    }
                    // The Router mcpwire::http gives is one of mcpwire-http's axum.
                    "axum" => version_of(&http["dependencies"]["axum"]),
                    "tokio" => {
                        let wanted = strings(dependency.get("features"));
                        for needed in ["macros", "rt-multi-thread"] {
                            assert!(wanted.iter().any(|f| f == needed), "tokio needs `{needed}` for #[tokio::main]");
                        }
                        version_of(&ours["tokio"])
                    }
                    other => version_of(&ours[other]),
                };
                assert_eq!(
                    compatible(&version),
                    compatible(&expected),
                    "[{section}] {name} = {version}: ours is {expected}"
                );
            }
        }
    }
}
