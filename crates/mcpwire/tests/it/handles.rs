//! Handles across instances: two servers sharing one handle store serve each other's carts,
//! to their owner only, and tell the model what to do with a handle that expired.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcpwire::protocol::codec::read_from_client;
use mcpwire::protocol::frame::Outbound;
use mcpwire::server::ServerSession;
use mcpwire::types::CallToolResult;
use mcpwire::{tool, Context, Handles, Json, MemoryHandleStore, Principal, Server, State, TestClient, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::sync::mpsc;

const TTL: Duration = Duration::from_secs(30 * 60);

#[derive(Default, Serialize, Deserialize, JsonSchema)]
struct Cart {
    items: BTreeMap<String, u32>,
}

/// Creates an empty cart.
#[tool]
async fn cart_create(ctx: Context, State(carts): State<Handles<Cart>>) -> Result<String, ToolError> {
    Ok(carts.create(&ctx, Cart::default()).await?)
}

/// Adds some of an item to a cart.
#[tool]
async fn cart_add(
    cart: String,
    item: String,
    quantity: u32,
    ctx: Context,
    State(carts): State<Handles<Cart>>,
) -> Result<String, ToolError> {
    let n = carts.update(&ctx, &cart, |c| *c.items.entry(item).or_default() += quantity).await;
    n.map(|()| "added".to_owned()).map_err(Into::into)
}

/// What a cart holds.
#[tool]
async fn cart_show(cart: String, ctx: Context, State(carts): State<Handles<Cart>>) -> Result<Json<Cart>, ToolError> {
    Ok(Json(carts.get(&ctx, &cart).await?))
}

/// One instance of the shop, its carts in `store`.
fn instance(store: Arc<MemoryHandleStore>) -> Server {
    let carts: Handles<Cart> = Handles::with_store("cart", TTL, store);
    Server::builder("shop", "1.0")
        .state(carts.clone())
        .tool(cart_create_tool().creates(&carts))
        .tool(cart_add_tool())
        .tool(cart_show_tool())
        .build()
}

fn text(result: &CallToolResult) -> &str {
    result.content.first().and_then(|c| c.as_text()).unwrap_or_default()
}

/// A legacy session on a server whose requests come from `principal`, as an HTTP transport
/// with authorization would give them.
struct Caller {
    session: ServerSession,
    replies: (mpsc::Sender<Outbound>, mpsc::Receiver<Outbound>),
    next_id: u64,
}

impl Caller {
    async fn new(server: &Server, principal: Option<Principal>) -> Self {
        let session = server.session(|_| true);
        session.set_principal(principal.map(Arc::new));
        let mut caller = Self { session, replies: mpsc::channel(16), next_id: 0 };
        let init =
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
        caller.request("initialize", init).await;
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
        caller.session.receive(read_from_client(&initialized).unwrap(), None).await;
        caller
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        self.session.receive(read_from_client(&message).unwrap(), Some(self.replies.0.clone())).await;
        loop {
            let Some(Outbound::Frame(frame)) = self.replies.1.recv().await else { continue };
            let reply: Value = serde_json::from_str(&frame.text).unwrap();
            if reply["id"] == id {
                return reply;
            }
        }
    }

    /// The tool's result, as JSON.
    async fn call(&mut self, name: &str, arguments: Value) -> Value {
        let reply = self.request("tools/call", json!({"name": name, "arguments": arguments})).await;
        reply["result"].clone()
    }
}

fn principal(subject: &str) -> Principal {
    Principal {
        issuer: Some("https://as.example".into()),
        subject: Some(subject.into()),
        client_id: Some("shop-app".into()),
        ..Principal::default()
    }
}

#[tokio::test]
async fn a_cart_made_on_one_instance_is_served_by_another() {
    let store = Arc::new(MemoryHandleStore::new());
    let (a, b) = (instance(store.clone()), instance(store.clone()));
    let (on_a, on_b) = (a.test_client().await.unwrap(), b.test_client().await.unwrap());

    let created = on_a.call_tool("cart_create", json!({})).await.unwrap();
    let cart = text(&created).to_owned();
    assert!(cart.starts_with("cart_") && cart.len() >= 5 + 32, "{cart}");

    let added = on_b.call_tool("cart_add", json!({"cart": cart, "item": "tea", "quantity": 2})).await.unwrap();
    assert_eq!((added.is_error, text(&added)), (None, "added"));
    on_a.call_tool("cart_add", json!({"cart": cart, "item": "tea", "quantity": 1})).await.unwrap();
    let shown = on_b.call_tool("cart_show", json!({"cart": cart})).await.unwrap();
    assert_eq!(shown.structured_content, Some(json!({"items": {"tea": 3}})));

    // The model is told how long a cart lives, where it gets one.
    let tools = on_b.list_tools(None).await.unwrap();
    let create = tools.tools.iter().find(|t| t.name == "cart_create").unwrap();
    let description = create.description.as_deref().unwrap_or_default();
    assert!(description.starts_with("Creates an empty cart."), "{description}");
    assert!(
        description.ends_with(
            "Returns a cart handle: pass it to the other cart tools. \
             A handle expires after 30 minutes unused; after that, create a new one."
        ),
        "{description}"
    );
}

#[tokio::test]
async fn another_principals_cart_is_unknown_on_every_instance() {
    let store = Arc::new(MemoryHandleStore::new());
    let (a, b) = (instance(store.clone()), instance(store.clone()));
    let mut alice_on_a = Caller::new(&a, Some(principal("alice"))).await;
    let mut alice_on_b = Caller::new(&b, Some(principal("alice"))).await;
    let mut bob_on_b = Caller::new(&b, Some(principal("bob"))).await;

    let cart = alice_on_a.call("cart_create", json!({})).await["content"][0]["text"].as_str().unwrap().to_owned();
    let added = alice_on_b.call("cart_add", json!({"cart": cart, "item": "tea", "quantity": 1})).await;
    assert_eq!(added["isError"], Value::Null, "{added}");

    let unknown = format!("unknown or expired cart handle \"{cart}\": create a new one with cart_create");
    for args in [json!({"cart": cart}), json!({"cart": cart, "item": "x", "quantity": 1})] {
        let tool = if args.get("item").is_some() { "cart_add" } else { "cart_show" };
        let refused = bob_on_b.call(tool, args).await;
        assert_eq!(refused["isError"], true, "{refused}");
        assert_eq!(refused["content"][0]["text"], unknown.as_str());
    }
    // Nor does anyone without a principal see it.
    let anonymous = b.test_client().await.unwrap();
    let refused = anonymous.call_tool("cart_show", json!({"cart": cart})).await.unwrap();
    assert_eq!((refused.is_error, text(&refused)), (Some(true), unknown.as_str()));

    let shown = alice_on_b.call("cart_show", json!({"cart": cart})).await;
    assert_eq!(shown["structuredContent"], json!({"items": {"tea": 1}}), "untouched by Bob");
}

#[tokio::test(start_paused = true)]
async fn an_expired_cart_tells_the_model_to_create_a_new_one() {
    let store = Arc::new(MemoryHandleStore::new());
    let (a, b) = (instance(store.clone()), instance(store));
    let (on_a, on_b) = (a.test_client().await.unwrap(), b.test_client().await.unwrap());
    let cart = text(&on_a.call_tool("cart_create", json!({})).await.unwrap()).to_owned();
    tokio::time::advance(TTL + Duration::from_secs(1)).await;

    let expired = on_b.call_tool("cart_show", json!({"cart": cart})).await.unwrap();
    assert_eq!(expired.is_error, Some(true));
    assert_eq!(text(&expired), format!("unknown or expired cart handle \"{cart}\": create a new one with cart_create"));
    // A handle that was never made reads the same, and is no lookup of a key of the
    // caller's making.
    let made_up = on_b.call_tool("cart_show", json!({"cart": "x".repeat(100_000)})).await.unwrap();
    assert_eq!(made_up.is_error, Some(true));
    assert!(text(&made_up).starts_with("unknown or expired cart handle \"xxx"));
    assert!(text(&made_up).len() < 300);
}
