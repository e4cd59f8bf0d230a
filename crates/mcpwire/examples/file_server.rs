//! A file server over stdio whose tools touch only what lies inside the client's roots: every
//! path is resolved (symbolic links and `..` included) and checked with [`mcpwire::Roots`].
//!
//! ```sh
//! cargo build -p mcpwire --example file_server
//! ```

use mcpwire::{tool, Context, HandlerError, Roots, Server};

/// Reads a text file inside the client's roots.
#[tool(read_only)]
async fn read_file(
    /// The file: absolute, or relative to the first root.
    path: String,
    ctx: Context,
) -> Result<String, HandlerError> {
    let path = Roots::of(&ctx).await?.check(&path)?;
    std::fs::read_to_string(&path).map_err(|e| HandlerError::tool(format!("cannot read {}: {e}", path.display())))
}

/// Lists a directory inside the client's roots, one name per line (directories end with `/`).
#[tool(read_only)]
async fn list_dir(
    /// The directory: absolute, or relative to the first root.
    path: String,
    ctx: Context,
) -> Result<String, HandlerError> {
    let path = Roots::of(&ctx).await?.check(&path)?;
    let entries =
        std::fs::read_dir(&path).map_err(|e| HandlerError::tool(format!("cannot list {}: {e}", path.display())))?;
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| {
            let dir = e.file_type().is_ok_and(|t| t.is_dir());
            format!("{}{}", e.file_name().to_string_lossy(), if dir { "/" } else { "" })
        })
        .collect();
    names.sort();
    Ok(names.join("\n"))
}

#[tokio::main]
async fn main() {
    Server::builder("files", "1.0").tool(read_file_tool()).tool(list_dir_tool()).build().serve_stdio().await;
}
