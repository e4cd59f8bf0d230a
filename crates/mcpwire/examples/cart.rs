//! A shopping cart kept between tool calls by a handle: `cart_create` returns one
//! (`cart_3fa9…`), and the model passes it to `cart_add` and `cart_show`. No session: the
//! cart lives in a handle store, so any instance sharing the store serves it. Over stdio, or
//! over Streamable HTTP with `--http ADDR`.
//!
//! ```sh
//! cargo build -p mcpwire --example cart
//! mcp call target/debug/examples/cart cart_create
//! cargo run -p mcpwire --example cart -- --http 127.0.0.1:3000
//! # two instances of one deployment, sharing carts (and sessions) on a Redis:
//! cargo run -p mcpwire --features redis --example cart -- --http 127.0.0.1:3001 --store redis://127.0.0.1:6379
//! cargo run -p mcpwire --features redis --example cart -- --http 127.0.0.1:3002 --store redis://127.0.0.1:6379
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use mcpwire::http::{HttpConfig, McpHttp, SharedState};
use mcpwire::{tool, Context, Handles, Json, Server, State, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A cart: how many of each item.
#[derive(Default, Serialize, Deserialize, JsonSchema)]
struct Cart {
    /// Each item, and its quantity.
    items: BTreeMap<String, u32>,
}

/// Creates an empty shopping cart.
#[tool]
async fn cart_create(ctx: Context, State(carts): State<Handles<Cart>>) -> Result<String, ToolError> {
    Ok(carts.create(&ctx, Cart::default()).await?)
}

/// Adds some of an item to a cart; answers the item's quantity in it now.
#[tool]
async fn cart_add(
    /// The cart's handle, from cart_create.
    cart: String,
    /// The item.
    item: String,
    /// How many to add.
    quantity: u32,
    ctx: Context,
    State(carts): State<Handles<Cart>>,
) -> Result<String, ToolError> {
    if quantity == 0 {
        return Err(ToolError::new("quantity must be at least 1"));
    }
    let total = carts
        .update(&ctx, &cart, |c| {
            let n = c.items.entry(item).or_default();
            *n = n.saturating_add(quantity);
            *n
        })
        .await?;
    Ok(total.to_string())
}

/// What a cart holds.
#[tool(read_only)]
async fn cart_show(
    /// The cart's handle, from cart_create.
    cart: String,
    ctx: Context,
    State(carts): State<Handles<Cart>>,
) -> Result<Json<Cart>, ToolError> {
    Ok(Json(carts.get(&ctx, &cart).await?))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (http, store) = match args.as_slice() {
        [] => (None, None),
        [flag, addr] if flag == "--http" => (Some(addr), None),
        [flag, addr, store_flag, url] if flag == "--http" && store_flag == "--store" => (Some(addr), Some(url)),
        _ => {
            eprintln!("usage: cart [--http ADDR [--store redis://HOST:PORT]]");
            std::process::exit(2);
        }
    };
    let lifetime = Duration::from_secs(30 * 60);
    // Alone, an instance keeps carts in its memory; several behind a load balancer share a store.
    let (carts, shared) = match store {
        None => (Handles::new("cart", lifetime), None),
        Some(url) => shared(url, lifetime).await?,
    };
    let server = Server::builder("cart", "1.0")
        .state(carts.clone())
        // Its description tells the model how long a cart lives, and errors name it.
        .tool(cart_create_tool().creates(&carts))
        .tool(cart_add_tool())
        .tool(cart_show_tool())
        .build();
    let Some(addr) = http else {
        server.serve_stdio().await;
        return Ok(());
    };
    let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
    let http = match shared {
        Some(state) => McpHttp::shared(server, HttpConfig::default(), state).await?,
        None => McpHttp::new(server, HttpConfig::default()),
    };
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    http.serve(listener).await?;
    Ok(())
}

/// Carts kept in the Redis at `url`, and the state an instance of several shares there.
#[cfg(feature = "redis")]
async fn shared(
    url: &str,
    lifetime: Duration,
) -> Result<(Handles<Cart>, Option<SharedState>), Box<dyn std::error::Error>> {
    let store = mcpwire::redis::RedisStore::connect(url, "cart").await?;
    let carts = Handles::with_store("cart", lifetime, std::sync::Arc::new(store.clone()));
    Ok((carts, Some(store.shared_state())))
}

#[cfg(not(feature = "redis"))]
async fn shared(_: &str, _: Duration) -> Result<(Handles<Cart>, Option<SharedState>), Box<dyn std::error::Error>> {
    Err("this example was built without the `redis` feature (cargo run -p mcpwire --features redis --example cart)"
        .into())
}
