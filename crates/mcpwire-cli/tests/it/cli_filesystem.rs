//! The client commands against `@modelcontextprotocol/server-filesystem`, run with `npx` over
//! stdio on a fresh temporary directory: `key=value` arguments read against its tools' schemas,
//! files really written, read and listed, `--json`, and its refusals (a path outside the
//! allowed directory is a tool error: exit 1, one line on stderr). Like `cli_everything`, these
//! need Node.js and the npm registry and run only when `MCP_E2E_NPM` is set; otherwise each one
//! prints why it is skipped and passes. `MCP_E2E_FILESYSTEM` overrides the package spec.
//!
//! To run them: `MCP_E2E_NPM=1 cargo nextest run --release -p mcpwire-cli --test cli_filesystem`.

use crate::npm_e2e;

use std::path::{Path, PathBuf};

use npm_e2e::{assert_fails, npm_spec, run, run_any};
use serde_json::{json, Value};

/// The server-filesystem release these tests were written against.
const PINNED: &str = "@modelcontextprotocol/server-filesystem@2026.8.31";

/// A new empty directory (its canonical path, as the server reports paths), removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("mcp-cli-filesystem-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir.canonicalize().unwrap())
    }

    fn path(&self, relative: &str) -> String {
        self.0.join(relative).to_string_lossy().into_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The server on a new directory: (TARGET, the directory), or `None` when skipped.
fn server(name: &str) -> Option<(String, TempDir)> {
    let spec = npm_spec("MCP_E2E_FILESYSTEM", PINNED)?;
    let dir = TempDir::new(name);
    // TARGET is split as a shell would: quote the directory.
    let target = format!("npx -y {spec} '{}'", dir.0.display());
    Some((target, dir))
}

fn read(path: impl AsRef<Path>) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn filesystem_info_and_tools() {
    let Some((t, dir)) = server("info") else { return };
    let r = run(&["info", &t, "--json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["serverInfo"]["name"], "secure-filesystem-server", "{v}");
    assert_eq!(v["transport"], "stdio");
    assert!(v["capabilities"]["tools"].is_object(), "{v}");
    assert!(v["capabilities"].get("resources").is_none() && v["capabilities"].get("prompts").is_none(), "{v}");
    let r = run(&["info", &t]);
    assert!(r.stdout.starts_with("Server        secure-filesystem-server "), "{}", r.stdout);
    assert!(r.stdout.contains("\nCapabilities  tools"), "{}", r.stdout);

    // The argument signatures, read from the tools' input schemas.
    let r = run(&["list", &t, "tools"]);
    let row = |name: &str| {
        let prefix = format!("{name} ");
        r.stdout.lines().find(|l| l.starts_with(&prefix)).unwrap_or_else(|| panic!("{name} listed:\n{}", r.stdout))
    };
    assert!(row("read_text_file").contains("path: string, tail?: number, head?: number"));
    assert!(row("write_file").contains("path: string, content: string"));
    assert!(row("list_directory").contains("path: string"));
    assert!(row("read_multiple_files").contains("paths: string[]"));
    assert!(row("edit_file").contains("edits: object[], dryRun?: boolean = false"));
    assert!(row("write_file").contains("[destructive, idempotent]"), "annotations shown as hints");

    let r = run(&["list", &t, "tools", "--json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let tools = v["tools"].as_array().unwrap();
    let write = tools.iter().find(|t| t["name"] == "write_file").expect("write_file");
    assert_eq!(write["inputSchema"]["required"], json!(["path", "content"]), "{write}");
    assert_eq!(write["outputSchema"]["properties"]["content"]["type"], "string", "{write}");

    // The server says which directory it may touch: the one it was started on.
    let r = run(&["call", &t, "list_allowed_directories"]);
    assert!(r.stdout.contains(&dir.0.display().to_string()), "{}", r.stdout);
}

#[test]
fn filesystem_write_read_list() {
    let Some((t, dir)) = server("rw") else { return };
    let sub = dir.path("notes");
    run(&["call", &t, "create_directory", &format!("path={sub}")]);
    assert!(dir.0.join("notes").is_dir());

    // Written for real, byte for byte.
    let file = dir.path("notes/hello.txt");
    let r = run(&["call", &t, "write_file", &format!("path={file}"), "content=first line\nsecond line = two"]);
    assert!(r.stdout.starts_with(&format!("Successfully wrote to {file}\n")), "{}", r.stdout);
    assert_eq!(read(&file), "first line\nsecond line = two");

    // A value that looks like a number goes as the string the schema wants.
    let number = dir.path("number.txt");
    run(&["call", &t, "write_file", &format!("path={number}"), "content=42"]);
    assert_eq!(read(&number), "42");

    let r = run(&["call", &t, "read_text_file", &format!("path={file}")]);
    assert!(r.stdout.starts_with("first line\nsecond line = two\n"), "{}", r.stdout);
    // `head` is a number in the schema: `head=1` is sent as 1.
    let r = run(&["call", &t, "read_text_file", &format!("path={file}"), "head=1", "--json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["content"], json!([{"type": "text", "text": "first line"}]), "{v}");
    assert_eq!(v["structuredContent"], json!({"content": "first line"}), "{v}");

    let r = run(&["call", &t, "list_directory", &format!("path={}", dir.0.display())]);
    assert!(r.stdout.contains("[DIR] notes") && r.stdout.contains("[FILE] number.txt"), "{}", r.stdout);
    let r = run(&["call", &t, "list_directory", &format!("path={sub}"), "--json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["content"], json!([{"type": "text", "text": "[FILE] hello.txt"}]), "{v}");
    assert!(v.get("isError").is_none_or(|e| e == false), "{v}");

    // A repeated key builds the array the schema wants.
    let r = run(&["call", &t, "read_multiple_files", &format!("paths={file}"), &format!("paths={number}")]);
    assert!(r.stdout.contains(&format!("{file}:\nfirst line")) && r.stdout.contains(&format!("{number}:\n42")));

    // `key:=JSON` for the array of objects, `dryRun=false` read as a boolean.
    let r = run(&[
        "call",
        &t,
        "edit_file",
        &format!("path={file}"),
        r#"edits:=[{"oldText": "first line", "newText": "line one"}]"#,
        "dryRun=false",
    ]);
    assert!(r.stdout.contains("-first line") && r.stdout.contains("+line one"), "{}", r.stdout);
    assert_eq!(read(&file), "line one\nsecond line = two");
}

#[test]
fn filesystem_refusals() {
    let Some((t, dir)) = server("refusals") else { return };
    std::fs::write(dir.0.join("inside.txt"), "inside").unwrap();

    // Outside the allowed directory (a sibling of it): the server refuses, a tool error (exit 1),
    // said in one line.
    let outside = TempDir::new("outside");
    std::fs::write(outside.0.join("secret.txt"), "top-secret-content").unwrap();
    let r = run_any(&["call", &t, "read_text_file", &format!("path={}", outside.path("secret.txt"))]);
    assert_fails(&r, 1, "tool `read_text_file` reported an error: Access denied - path outside allowed directories");
    assert!(!r.stderr.contains("top-secret-content"), "{}", r.stderr);
    // Writing there by `..`: refused, and nothing written.
    let name = outside.0.file_name().unwrap().to_string_lossy().into_owned();
    let escape = format!("{}/../{name}/escape.txt", dir.0.display());
    let r = run_any(&["call", &t, "write_file", &format!("path={escape}"), "content=x"]);
    assert_fails(&r, 1, "Access denied");
    assert!(!outside.0.join("escape.txt").exists());

    // Arguments that do not fit the schema are refused before the call (exit 2).
    let inside = dir.path("inside.txt");
    let r = run_any(&["call", &t, "read_text_file", &format!("path={inside}"), "head=abc"]);
    assert_fails(&r, 2, "argument `head` expects a number, got `abc`");
    let r = run_any(&["call", &t, "write_file", &format!("path={inside}")]);
    assert_fails(&r, 2, "needs argument `content: string`");
    assert_eq!(read(dir.0.join("inside.txt")), "inside");
    let r = run_any(&["call", &t, "read_text_file", &format!("path={inside}"), "lines=3"]);
    assert_fails(&r, 2, "tool `read_text_file` has no argument `lines`");
    // A missing file is the tool's error.
    let r = run_any(&["call", &t, "read_text_file", &format!("path={}", dir.path("missing.txt"))]);
    assert_fails(&r, 1, "ENOENT");
}
