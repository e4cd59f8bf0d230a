//! A protected MCP server: an OAuth 2.1 resource server in front of typed tools, some of
//! them needing a scope, and a handler that knows who calls it (docs/AUTHORIZATION.md walks
//! through it).
//!
//! ```sh
//! cargo run -p mcpwire --example protected -- https://auth.example.com 3000
//! mcp auth login http://127.0.0.1:3000/mcp     # the browser flow; the token is kept
//! mcp call http://127.0.0.1:3000/mcp whoami
//! mcp call http://127.0.0.1:3000/mcp add_note text=hello   # 403 until notes:write is granted
//! ```
//!
//! The first argument is the authorization server's issuer; its metadata must name a
//! `jwks_uri` (the access tokens are JWTs checked against it). The second is the port.

use std::sync::{Arc, Mutex};

use mcpwire::auth::resource::{JwtVerifier, ResourceServer};
use mcpwire::http::{HttpConfig, McpHttp};
use mcpwire::{prompt, resource, tool, tools, Principal, Server};

/// The notes, shared by the tools.
#[derive(Default)]
struct Notes {
    notes: Arc<Mutex<Vec<(String, String)>>>,
}

#[tools]
impl Notes {
    /// The notes, each with who wrote it.
    #[tool(scopes = ["notes:read"], read_only)]
    fn list_notes(&self) -> String {
        let notes = self.notes.lock().expect("not poisoned");
        notes.iter().map(|(by, text)| format!("{by}: {text}\n")).collect()
    }

    /// Adds a note, signed with the caller's identity.
    #[tool(scopes = ["notes:write"])]
    fn add_note(
        &self,
        /// The note.
        text: String,
        caller: Principal,
    ) -> String {
        let by = caller.subject.or(caller.client_id).unwrap_or_else(|| "someone".into());
        self.notes.lock().expect("not poisoned").push((by.clone(), text));
        format!("noted, {by}")
    }
}

/// What the notes are for; only for principals that may read them.
#[resource("notes://about", scopes = ["notes:read"])]
fn about() -> &'static str {
    "Notes signed by who wrote them."
}

/// A prompt to summarise the notes, for principals that may read them.
#[prompt(scopes = ["notes:read"])]
fn summarise() -> String {
    "Summarise the notes, grouped by author.".into()
}

/// Who the token says you are.
#[tool]
fn whoami(caller: Option<Principal>) -> String {
    match caller {
        Some(p) => format!(
            "subject {}, client {}, scopes {}",
            p.subject.as_deref().unwrap_or("-"),
            p.client_id.as_deref().unwrap_or("-"),
            p.scopes.join(" ")
        ),
        None => "an unauthenticated caller (this endpoint is not protected)".into(),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let issuer = args.next().ok_or("usage: protected ISSUER [PORT]")?;
    let port: u16 = args.next().and_then(|p| p.parse().ok()).unwrap_or(3000);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    // The resource identifier: this endpoint's URL, as clients reach it (behind a reverse
    // proxy, its public https URL). Tokens must name it as their audience.
    let resource = format!("http://{}/mcp", listener.local_addr()?);
    let verifier = JwtVerifier::discover(issuer.clone(), resource.clone()).await?;
    let auth = ResourceServer::new(resource.clone(), verifier)
        .authorization_server(issuer)
        .scopes_supported(["mcp", "notes:read", "notes:write"])
        .required_scopes(["mcp"])
        .resource_name("Notes");
    let server = Server::builder("notes", "1.0")
        .tool(whoami_tool())
        .tools(Notes::default())
        .resource(about_resource())
        .prompt(summarise_prompt())
        .build();
    let config = HttpConfig { auth: Some(auth), ..HttpConfig::default() };
    eprintln!("serving on {resource}");
    McpHttp::new(server, config).serve(listener).await?;
    Ok(())
}
