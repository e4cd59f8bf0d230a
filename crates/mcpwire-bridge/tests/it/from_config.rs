//! A gateway from an `mcpServers` file (`Gateway::from_config`): the file read and each of
//! its servers resolved, then mounted under its name (opened here in memory, through
//! `UpstreamOptions::open`).

use std::path::PathBuf;
use std::sync::Arc;

use mcpwire_bridge::{ConfigError, Gateway, GatewayConfig, MountError, UpstreamOptions};
use mcpwire_client::target::{Opened, ResolveOptions, Target, TargetError};
use mcpwire_client::Client;
use mcpwire_transport::memory;

/// A config file of this text, in a directory of this test's own.
fn config_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-bridge-from-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test]
async fn every_server_of_the_file_is_mounted_under_its_name() {
    let path = config_file(
        "mounted.json",
        r#"{"mcpServers": {
            "ref": {"command": "reference-server", "args": ["--stdio"]},
            "away": {"url": "http://127.0.0.1:9/mcp", "headers": {"X-Key": "k"}}
        }}"#,
    );
    let resolve = ResolveOptions { headers: vec![("x-key".into(), "given".into())], ..ResolveOptions::default() };
    let config = GatewayConfig::load(&path, &resolve).unwrap();
    let names: Vec<&str> = config.servers.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["ref", "away"]);
    match &config.servers[1].1 {
        // The headers given replace the file's of the same name.
        Target::Http { headers, named: Some((name, _)), .. } => {
            assert_eq!(headers, &[("x-key".to_owned(), "given".to_owned())]);
            assert_eq!(name, "away");
        }
        other => panic!("{other:?}"),
    }

    let mut options = UpstreamOptions::new("gateway", "1");
    options.open = Arc::new(|target: &Target| match target {
        Target::Stdio { command, .. } => {
            assert_eq!(command.display(), "reference-server --stdio");
            let (ours, theirs) = memory::pair();
            let server = mcpwire_reference::server();
            tokio::spawn(async move { server.serve(theirs).await });
            Ok(Opened { connection: ours, child: None })
        }
        Target::Http { url, .. } => Err(TargetError::Connect(format!("{url}: refused"))),
    });
    let (gateway, mounted) = Gateway::from_config(&config, &options, |b| b).await;
    assert_eq!(mounted.len(), 2);
    assert_eq!(mounted[0].name, "ref");
    assert!(mounted[0].outcome.is_ok(), "{:?}", mounted[0].outcome);
    assert_eq!(mounted[1].name, "away");
    assert!(matches!(&mounted[1].outcome, Err(MountError::Connect(e)) if e.to_string().contains("refused")));
    assert_eq!(gateway.prefixes(), ["ref"]);

    let (down, up) = memory::pair();
    let server = gateway.server().clone();
    tokio::spawn(async move { server.serve(up).await });
    let session = Client::builder("c", "1").build().connect(down).await.unwrap();
    let tools = session.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "ref_echo"), "{:?}", tools.iter().map(|t| &t.name).collect::<Vec<_>>());
    let _ = session.close().await;
    gateway.close().await;
}

#[test]
fn a_file_that_cannot_make_a_gateway_is_refused() {
    let load = |name: &str, text: &str| GatewayConfig::load(&config_file(name, text), &ResolveOptions::default());
    let missing = std::env::temp_dir().join("mcp-bridge-from-config-no-such-file.json");
    assert!(matches!(GatewayConfig::load(&missing, &ResolveOptions::default()), Err(ConfigError::File { .. })));
    let empty = load("empty.json", r#"{"mcpServers": {}}"#).unwrap_err();
    assert!(matches!(empty, ConfigError::Empty { .. }) && empty.to_string().ends_with("names no server"), "{empty}");
    let prefix = load("prefix.json", r#"{"mcpServers": {"a b": {"command": "x"}}}"#).unwrap_err();
    assert!(prefix.to_string().starts_with("server `a b`: "), "{prefix}");
    let entry = load("entry.json", r#"{"mcpServers": {"bad": {"args": []}}}"#).unwrap_err();
    assert!(
        matches!(&entry, ConfigError::Target(TargetError::Invalid(m)) if m.contains("neither `command` nor `url`"))
    );
}
