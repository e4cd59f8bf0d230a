//! mcp-server
