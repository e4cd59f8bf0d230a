fn main() {
    let _ = mcp::Server::builder("a", "1").tool(42).build();
}
