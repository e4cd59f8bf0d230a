fn main() {
    let _ = mcpwire::Server::builder("a", "1").tool(42).build();
}
