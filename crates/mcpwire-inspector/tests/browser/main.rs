//! The inspector end to end in a real headless Chromium, driven over WebDriver (fantoccini
//! and chromedriver), against the reference server: `mcp serve` over stdio in both eras, and
//! over HTTP; and `@modelcontextprotocol/server-everything` through `npx`, a legacy peer we
//! did not write; and the Apps tab hosting MCP Apps (the example app's interface, and the
//! reference server's). Everything is found by its accessible name (tabs, buttons, labelled inputs,
//! the dialog), as a user would. A screenshot of a failure is kept in
//! target/inspector-screenshots/.
//!
//! Needs `chromium` and `chromedriver` (Debian: `apt-get install chromium chromium-driver`),
//! Node.js (`npx`), and the `mcp` binary (`cargo build --profile test-release -p mcpwire-cli`,
//! or `MCP_BIN`).
//! Run by scripts/test's `browser` step:
//! `cargo nextest run --cargo-profile test-release -p mcpwire-inspector --features browser-tests -E 'binary(browser)'`.
//! The README's picture is taken by the same run when `MCP_INSPECTOR_DOCS_SCREENSHOT` names the
//! file to write (`MCP_INSPECTOR_DOCS_SCREENSHOT=$PWD/docs/inspector.png`, from the workspace's
//! root). The OAuth test needs `tests/auth/node_modules` (`npm ci` there).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use mcpwire_inspector::{Inspector, RunningInspector, Target, TokenStore};
use parking_lot::Mutex;
use serde_json::json;

#[path = "../shared/lying.rs"]
mod lying;
#[path = "../../../../tests/auth/provider.rs"]
mod provider;

type Result<T = ()> = std::result::Result<T, String>;

/// The longest the page may take to show something.
const WAIT: Duration = Duration::from_secs(20);

fn mcp_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("MCP_BIN") {
        // scripts/test names it from the workspace's root (tests run in the crate's directory).
        let bin = PathBuf::from(bin);
        return if bin.is_absolute() { bin } else { PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(bin) };
    }
    // target/<profile>/deps/browser-… → target/<profile>/mcp
    let exe = std::env::current_exe().expect("the test's path");
    let bin = exe.parent().and_then(|d| d.parent()).map(|d| d.join("mcp")).expect("target/<profile>");
    assert!(
        bin.exists(),
        "{} is missing: build it first (cargo build --profile test-release -p mcpwire-cli) or set MCP_BIN",
        bin.display()
    );
    bin
}

fn screenshots() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    let target = exe.ancestors().nth(3).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("target"));
    target.join("inspector-screenshots")
}

/// chromedriver on a free loopback port, killed when dropped.
struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}

async fn driver() -> Driver {
    let program = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
    let port = free_port();
    let child = Command::new(&program)
        .arg(format!("--port={port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {program} ({e}): apt-get install chromium chromium-driver"));
    let driver = Driver { child, url: format!("http://127.0.0.1:{port}") };
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let start = Instant::now();
    while tokio::net::TcpStream::connect(addr).await.is_err() {
        assert!(start.elapsed() < WAIT, "chromedriver did not listen on {addr} in time");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    driver
}

async fn browser(driver: &Driver) -> Client {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({"binary": chromium, "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000"]}),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .unwrap_or_else(|e| panic!("cannot start a Chromium session: {e}"))
}

/// Runs `scenario` in a fresh browser; on failure keeps a screenshot and fails the test.
async fn run<F, Fut>(name: &str, scenario: F)
where
    F: FnOnce(Client) -> Fut,
    Fut: std::future::Future<Output = Result>,
{
    let driver = driver().await;
    let client = browser(&driver).await;
    let outcome = tokio::time::timeout(Duration::from_secs(180), scenario(client.clone()))
        .await
        .unwrap_or_else(|_| Err("the scenario did not finish in 180 s".into()));
    let dir = screenshots();
    let _ = std::fs::create_dir_all(&dir);
    let shot = dir.join(if outcome.is_ok() { format!("{name}-ok.png") } else { format!("{name}-failed.png") });
    if let Ok(png) = client.screenshot().await {
        let _ = std::fs::write(&shot, png);
    }
    let _ = client.close().await;
    if let Err(e) = outcome {
        panic!("{name}: {e} (screenshot: {})", shot.display());
    }
}

/// The page of an inspector.
struct Page {
    c: Client,
}

fn quote(text: &str) -> String {
    if !text.contains('\'') {
        format!("'{text}'")
    } else {
        format!("concat('{}')", text.replace('\'', "', \"'\", '"))
    }
}

impl Page {
    async fn open(c: Client, inspector: &RunningInspector) -> Result<Self> {
        c.goto(inspector.url()).await.map_err(|e| format!("goto: {e}"))?;
        Ok(Self { c })
    }

    /// Waits for the first element at `xpath` that is displayed.
    async fn find(&self, xpath: &str) -> Result<fantoccini::elements::Element> {
        let start = Instant::now();
        loop {
            if let Ok(found) = self.c.find_all(Locator::XPath(xpath)).await {
                for e in found {
                    if e.is_displayed().await.unwrap_or(false) {
                        return Ok(e);
                    }
                }
            }
            if start.elapsed() > WAIT {
                return Err(format!("nothing visible at {xpath} after {WAIT:?}"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until there is an element at `xpath`, shown or not (an option of a datalist).
    async fn present(&self, xpath: &str) -> Result {
        let start = Instant::now();
        loop {
            if self.c.find_all(Locator::XPath(xpath)).await.is_ok_and(|found| !found.is_empty()) {
                return Ok(());
            }
            if start.elapsed() > WAIT {
                return Err(format!("nothing at {xpath} after {WAIT:?}"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The datalist of the input labelled `label` (within `scope`), as an XPath.
    async fn suggestions_of(&self, scope: &str, label: &str) -> Result<String> {
        let l = self.find(&format!("{scope}//label[normalize-space()={}]", quote(label))).await?;
        let id = l.attr("for").await.map_err(|e| e.to_string())?.ok_or(format!("label {label} has no for"))?;
        let input = self.c.find(Locator::Id(&id)).await.map_err(|e| format!("the input of {label}: {e}"))?;
        let list =
            input.attr("list").await.map_err(|e| e.to_string())?.ok_or(format!("{label} offers no suggestions"))?;
        Ok(format!("//datalist[@id={}]", quote(&list)))
    }

    /// Waits until the element with this id shows `text`.
    async fn wait_text(&self, id: &str, text: &str) -> Result<String> {
        self.wait_text_within(id, text, WAIT).await
    }

    /// Waits until the element with this id shows `text`, at most `wait`.
    async fn wait_text_within(&self, id: &str, text: &str, wait: Duration) -> Result<String> {
        let start = Instant::now();
        let mut last = String::new();
        loop {
            if let Ok(e) = self.c.find(Locator::Id(id)).await {
                // textContent: the text of a closed <details> counts too.
                last = e.prop("textContent").await.ok().flatten().unwrap_or_default();
                if last.contains(text) {
                    return Ok(last);
                }
            }
            if start.elapsed() > wait {
                return Err(format!("#{id} never showed {text:?}; it shows {last:?}"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Clicks the button named `name` (within `scope`, an XPath prefix, or anywhere).
    async fn click(&self, scope: &str, name: &str) -> Result {
        let e = self.find(&format!("{scope}//button[normalize-space()={}]", quote(name))).await?;
        e.click().await.map_err(|e| format!("click {name}: {e}"))
    }

    async fn tab(&self, name: &str) -> Result {
        let e = self.find(&format!("//*[@role='tab' and normalize-space()={}]", quote(name))).await?;
        e.click().await.map_err(|e| format!("tab {name}: {e}"))
    }

    /// Types `value` into the input labelled `label` (within `scope`), replacing what it had.
    async fn fill(&self, scope: &str, label: &str, value: &str) -> Result {
        let l = self.find(&format!("{scope}//label[normalize-space()={}]", quote(label))).await?;
        let id = l.attr("for").await.map_err(|e| e.to_string())?.ok_or(format!("label {label} has no for"))?;
        let input = self.c.find(Locator::Id(&id)).await.map_err(|e| format!("the input of {label}: {e}"))?;
        input.clear().await.map_err(|e| e.to_string())?;
        input.send_keys(value).await.map_err(|e| format!("typing into {label}: {e}"))
    }

    async fn select(&self, id: &str, value: &str) -> Result {
        let select = self.c.find(Locator::Id(id)).await.map_err(|e| e.to_string())?;
        select.select_by_value(value).await.map_err(|e| format!("select {id}={value}: {e}"))
    }

    /// Calls a tool through its form.
    async fn call_tool(&self, tool: &str, args: &[(&str, &str)]) -> Result {
        self.tab("Tools").await?;
        self.click("//*[@id='tools']", tool).await?;
        self.find(&format!("//*[@id='tool-detail']/h3[contains(., {})]", quote(tool))).await?;
        for (label, value) in args {
            self.fill("//*[@id='tool-detail']", label, value).await?;
        }
        self.click("//*[@id='tool-detail']", "Call").await
    }
}

fn serve_target() -> Target {
    let bin = mcp_bin();
    Target::parse(&format!("'{}' serve", bin.display())).expect("a command line")
}

async fn the_common_scenario(p: &Page) -> Result {
    // Tools: a form from the schema, the result rendered.
    p.call_tool("echo", &[("text", "hello from the browser")]).await?;
    p.wait_text("tool-result", "hello from the browser").await?;
    p.call_tool("add", &[("a", "2"), ("b", "3.5")]).await?;
    p.wait_text("tool-result", "\"sum\": 5.5").await?;
    // A server request in a dialog, its fields labelled by property name.
    p.call_tool("test_elicitation", &[("message", "Who are you?")]).await?;
    let dialog = "//*[@role='dialog']";
    p.find(&format!("{dialog}//*[contains(., 'Who are you?')]")).await?;
    p.fill(dialog, "username", "ada").await?;
    p.fill(dialog, "email", "ada@example.com").await?;
    p.click(dialog, "Accept").await?;
    p.wait_text("tool-result", "action=accept").await?;
    p.wait_text("tool-result", "ada@example.com").await?;
    // A log message.
    p.call_tool("test_tool_with_logging", &[]).await?;
    p.wait_text("tool-result", "Tool with logging executed successfully").await?;
    p.tab("Logs").await?;
    p.wait_text("logs", "Tool execution started").await?;
    // Resources: read one, and a template with a field per variable.
    p.tab("Resources").await?;
    p.click("", "List resources").await?;
    p.click("//*[@id='resources']", "static-text").await?;
    p.click("//*[@id='resource-detail']", "Read").await?;
    p.wait_text("resource-result", "This is the content of the static text resource.").await?;
    p.click("//*[@id='templates']", "test://template/{id}/data").await?;
    // The server's completions of the variable, offered as the user types.
    p.fill("//*[@id='resource-detail']", "id", "12").await?;
    let list = p.suggestions_of("//*[@id='resource-detail']", "id").await?;
    p.present(&format!("{list}/option[@value='123']")).await?;
    p.fill("//*[@id='resource-detail']", "id", "42").await?;
    p.click("//*[@id='resource-detail']", "Read").await?;
    p.wait_text("resource-result", "Data for ID: 42").await?;
    // Prompts: arguments, messages rendered.
    p.tab("Prompts").await?;
    p.click("", "List prompts").await?;
    p.click("//*[@id='prompts']", "test_prompt_with_arguments").await?;
    p.fill("//*[@id='prompt-detail']", "arg1", "te").await?;
    let list = p.suggestions_of("//*[@id='prompt-detail']", "arg1").await?;
    p.present(&format!("{list}/option[@value='test2']")).await?;
    p.fill("//*[@id='prompt-detail']", "arg1", "first").await?;
    p.fill("//*[@id='prompt-detail']", "arg2", "second").await?;
    p.click("//*[@id='prompt-detail']", "Get").await?;
    p.wait_text("prompt-result", "arg1='first'").await?;
    // History: every request, with its raw JSON-RPC.
    p.tab("History").await?;
    p.wait_text("history", "tools/call").await?;
    p.wait_text("history", "prompts/get").await?;
    p.wait_text("history", "resources/read").await?;
    // Replay: the request is sent again, and listed again.
    let before = p.c.find_all(Locator::XPath("//*[@id='history']/li")).await.map_err(|e| e.to_string())?.len();
    p.click("//*[@id='history']/li[1]", "Replay").await?;
    let start = Instant::now();
    while p.c.find_all(Locator::XPath("//*[@id='history']/li")).await.map_err(|e| e.to_string())?.len() <= before {
        if start.elapsed() > WAIT {
            return Err("the replayed request is not in the history".into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn browser_stdio_modern() {
    let inspector = Inspector::builder().target(Some(serve_target())).build().await.expect("inspector");
    run("stdio-modern", |c| async move {
        let p = Page::open(c, &inspector).await?;
        // The page connects to the target it was started with.
        p.wait_text("revision", "2026-07-28").await?;
        p.wait_text("server-transport", "stdio").await?;
        p.find("//*[@id='tools']//button[normalize-space()='echo']").await?;
        the_common_scenario(&p).await?;
        // A task-augmented call, followed in the Tasks tab.
        p.tab("Tools").await?;
        p.click("//*[@id='tools']", "test_task_required").await?;
        p.find("//*[@id='tool-detail']/h3[contains(., 'test_task_required')]").await?;
        let task_box = p.find("//label[normalize-space()='Run as a task']").await?;
        task_box.click().await.map_err(|e| e.to_string())?;
        p.click("//*[@id='tool-detail']", "Call").await?;
        p.wait_text("tool-result", "Running as task").await?;
        p.tab("Tasks").await?;
        p.click("", "List tasks").await?;
        p.click("//*[@id='tasks']", "Result").await?;
        p.wait_text("task-detail", "Ran as task").await?;
        Ok(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn browser_stdio_legacy_with_sampling() {
    let inspector = Inspector::builder().build().await.expect("inspector");
    let target = serve_target().label();
    run("stdio-legacy", |c| async move {
        let p = Page::open(c, &inspector).await?;
        p.fill("", "Target", &target).await?;
        p.select("era", "legacy").await?;
        p.click("", "Connect").await?;
        p.wait_text("revision", "2025-11-25").await?;
        p.wait_text("server-era", "legacy").await?;
        the_common_scenario(&p).await?;
        // Sampling: a dialog with a Response box and Send.
        p.call_tool("test_sampling", &[("prompt", "What is 2+2?")]).await?;
        let dialog = "//*[@role='dialog']";
        p.find(&format!("{dialog}//*[contains(., 'What is 2+2?')]")).await?;
        p.fill(dialog, "Response", "four").await?;
        p.click(dialog, "Send").await?;
        p.wait_text("tool-result", "LLM response: four").await?;
        Ok(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn browser_http_target() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let http = mcpwire_http::McpHttp::new(mcpwire_reference::server(), mcpwire_http::HttpConfig::default());
    let server = tokio::spawn(http.serve(listener));
    let inspector = Inspector::builder().build().await.expect("inspector");
    run("http", |c| async move {
        let p = Page::open(c, &inspector).await?;
        p.fill("", "Target", &format!("http://{addr}/mcp")).await?;
        p.click("", "Connect").await?;
        p.wait_text("revision", "2026-07-28").await?;
        p.call_tool("echo", &[("text", "over http")]).await?;
        p.wait_text("tool-result", "over http").await?;
        // A long call: its progress shown, then cancelled from the page.
        p.call_tool("test_long_running_task", &[("steps", "100"), ("delayMs", "200")]).await?;
        p.wait_text("tool-progress", "/ 100").await?;
        p.click("//*[@id='tool-detail']", "Cancel").await?;
        p.wait_text("tool-result", "cancelled").await?;
        // The legacy HTTP+SSE transport.
        p.fill("", "Target", &format!("http://{addr}/sse")).await?;
        p.select("transport", "sse").await?;
        p.select("era", "legacy").await?;
        p.click("", "Connect").await?;
        p.wait_text("server-transport", "sse").await?;
        p.wait_text("revision", "2025-11-25").await?;
        p.call_tool("echo", &[("text", "over sse")]).await?;
        p.wait_text("tool-result", "over sse").await?;
        // The export of the target: its mcpServers entry.
        p.wait_text("export", &format!("http://{addr}/sse")).await?;
        Ok(())
    })
    .await;
    server.abort();
}

/// A PNG of one pixel.
const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// A server whose every word is hostile: markup in its texts, a `javascript:` link, a URL
/// elicitation to a `javascript:` URL.
fn hostile_server() -> mcpwire_server::Server {
    use mcpwire_protocol::types::{CallToolResult, ElicitParams, Tool};
    let server = mcpwire_server::Server::builder("<b>hostile</b>", "1").build();
    let mut tool = Tool::new(
        "hostile",
        "<img src=x onerror=alert(1)> describes itself",
        json!({"type": "object", "properties": {}}),
    );
    // Icons: only the data: image may be shown.
    tool.icons = serde_json::from_value(json!([
        {"src": "javascript:alert(4)"},
        {"src": "data:text/html;base64,PHNjcmlwdD5hbGVydCg1KTwvc2NyaXB0Pg=="},
        {"src": " javascript:alert(6)"},
        {"src": format!("data:image/png;base64,{PIXEL}"), "mimeType": "image/png"}
    ]))
    .expect("icons");
    server.add_tool(tool, |_, ctx: mcpwire_server::Context| async move {
        let asked = ctx
            .elicit(ElicitParams {
                mode: Some("url".into()),
                message: "<script>alert(1)</script> please open".into(),
                requested_schema: None,
                url: Some("javascript:alert(1)".into()),
                elicitation_id: Some("e1".into()),
                task: None,
            })
            .await?;
        let result = json!({"content": [
            {"type": "text", "text": format!("<img id=injected src=x onerror=alert(1)> answered {}", asked.action)},
            {"type": "resource_link", "uri": "javascript:alert(2)", "name": "<a href=javascript:alert(3)>click</a>"},
            {"type": "image", "data": "x", "mimeType": "text/html"}
        ]});
        Ok(serde_json::from_value::<CallToolResult>(result).expect("a result"))
    });
    server
}

#[tokio::test(flavor = "multi_thread")]
async fn browser_server_data_is_shown_as_text_only() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let http = mcpwire_http::McpHttp::new(hostile_server(), mcpwire_http::HttpConfig::default());
    let server = tokio::spawn(http.serve(listener));
    let inspector = Inspector::builder().build().await.expect("inspector");
    run("hostile", |c| async move {
        let p = Page::open(c.clone(), &inspector).await?;
        p.fill("", "Target", &format!("http://{addr}/mcp")).await?;
        p.click("", "Connect").await?;
        p.wait_text("server-name", "<b>hostile</b>").await?;
        // The tool's icons: the data: image shown (decorative, alt=""), the others ignored.
        p.find("//*[@id='tools']//img[@alt='' and starts-with(@src, 'data:image/png')]").await?;
        let shown = c.find_all(Locator::Css("img.icon")).await.map_err(|e| e.to_string())?;
        for icon in &shown {
            let src = icon.attr("src").await.map_err(|e| e.to_string())?.unwrap_or_default();
            if !src.starts_with("data:image/png") {
                return Err(format!("an icon from {src:?} is shown"));
            }
        }
        if shown.len() != 1 {
            return Err(format!("{} icons shown, one expected", shown.len()));
        }
        p.call_tool("hostile", &[]).await?;
        // The URL elicitation: the URL shown as text, not opened, consent asked.
        let dialog = "//*[@role='dialog']";
        p.find(&format!("{dialog}//*[contains(., 'javascript:alert(1)')]")).await?;
        p.find(&format!("{dialog}//*[contains(., 'not an http(s) URL')]")).await?;
        p.find(&format!("{dialog}//*[contains(., '<script>alert(1)</script> please open')]")).await?;
        p.click(dialog, "Decline").await?;
        p.wait_text("tool-result", "<img id=injected src=x onerror=alert(1)> answered decline").await?;
        p.wait_text("tool-result", "<a href=javascript:alert(3)>click</a>").await?;
        // Nothing of it became markup: no injected element, no javascript: link, no script ran.
        let injected =
            c.find_all(Locator::Css("#injected, script:not([src]), a[href^='javascript'], dialog script")).await;
        let count = injected.map(|v| v.len()).map_err(|e| e.to_string())?;
        if count != 0 {
            return Err(format!("{count} element(s) made of server data"));
        }
        let images = c.find_all(Locator::Css("#tool-result img")).await.map_err(|e| e.to_string())?;
        if !images.is_empty() {
            return Err("an image of type text/html was shown".into());
        }
        let alerted = c.execute("return document.title", vec![]).await.map_err(|e| format!("no alert is open: {e}"))?;
        if alerted != json!("MCP Inspector") {
            return Err(format!("the title is {alerted}"));
        }
        Ok(())
    })
    .await;
    server.abort();
}

/// A server whose one tool asks the user, in URL mode, to open `url`, and says what was
/// answered; served over HTTP behind a layer that notes the `X-Inspector-Check` header.
async fn consent_server() -> (SocketAddr, tokio::task::JoinHandle<std::io::Result<()>>, Arc<Mutex<Vec<String>>>) {
    use mcpwire_protocol::types::{CallToolResult, ElicitParams, Tool};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = mcpwire_server::Server::builder("consent", "1").build();
    let url = format!("http://{addr}/consent?step=1");
    server.add_tool(
        Tool::new("consent", "Asks to open a page", json!({"type": "object", "properties": {}})),
        move |_, ctx: mcpwire_server::Context| {
            let url = url.clone();
            async move {
                let asked = ctx
                    .elicit(ElicitParams {
                        mode: Some("url".into()),
                        message: "Please sign in".into(),
                        requested_schema: None,
                        url: Some(url),
                        elicitation_id: Some("e1".into()),
                        task: None,
                    })
                    .await?;
                Ok(CallToolResult::text(format!("answered {}", asked.action)))
            }
        },
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let http = mcpwire_http::McpHttp::new(server, mcpwire_http::HttpConfig::default());
    let app = http.router().layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            let record = record.clone();
            async move {
                if let Some(value) = request.headers().get("x-inspector-check").and_then(|v| v.to_str().ok()) {
                    record.lock().push(value.to_owned());
                }
                next.run(request).await
            }
        },
    ));
    let task = tokio::spawn(async move {
        let _http = http;
        axum::serve(listener, app).await
    });
    (addr, task, seen)
}

#[tokio::test(flavor = "multi_thread")]
async fn browser_url_consent_and_headers_from_the_connection_panel() {
    let (addr, server, seen) = consent_server().await;
    let inspector = Inspector::builder().build().await.expect("inspector");
    run("consent", |c| async move {
        let p = Page::open(c, &inspector).await?;
        p.fill("", "Target", &format!("http://{addr}/mcp")).await?;
        p.fill("", "Headers", "X-Inspector-Check: hello-42").await?;
        p.click("", "Connect").await?;
        p.wait_text("server-name", "consent").await?;
        p.call_tool("consent", &[]).await?;
        // The URL shown as text, with no warning (it is http), and consent asked.
        let dialog = "//*[@role='dialog']";
        p.find(&format!("{dialog}//code[normalize-space()={}]", quote(&format!("http://{addr}/consent?step=1"))))
            .await?;
        p.find(&format!("{dialog}//*[contains(., 'Please sign in')]")).await?;
        if p.c
            .find_all(Locator::XPath(&format!("{dialog}//*[contains(., 'not an http(s) URL')]")))
            .await
            .map_err(|e| e.to_string())?
            .iter()
            .len()
            != 0
        {
            return Err("an http URL is said not to be one".into());
        }
        p.click(dialog, "Accept").await?;
        p.wait_text("tool-result", "answered accept").await?;
        Ok(())
    })
    .await;
    let seen = seen.lock().clone();
    server.abort();
    assert!(!seen.is_empty() && seen.iter().all(|v| v == "hello-42"), "the header from the panel: {seen:?}");
}

/// The server-everything release the test below was written against (`MCP_E2E_EVERYTHING`
/// overrides it, as for the CLI's tests).
const EVERYTHING: &str = "@modelcontextprotocol/server-everything@2026.8.31";

/// A legacy peer we did not write, over stdio through `npx` (Node.js and the npm registry, or
/// npm's cache): connected to, a tool called through its form, its elicitation answered in
/// the dialog.
#[tokio::test(flavor = "multi_thread")]
async fn browser_server_everything_over_stdio() {
    let spec = std::env::var("MCP_E2E_EVERYTHING").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| EVERYTHING.into());
    let target = Target::parse(&format!("npx -y {spec}")).expect("a command line");
    let inspector = Inspector::builder().target(Some(target)).build().await.expect("inspector");
    run("everything", |c| async move {
        let p = Page::open(c, &inspector).await?;
        // npx may have to fetch the package first.
        p.wait_text_within("revision", "2025-11-25", Duration::from_secs(90)).await?;
        p.wait_text("server-era", "legacy").await?;
        p.wait_text("server-name", "mcp-servers/everything").await?;
        p.call_tool("echo", &[("message", "from the browser")]).await?;
        p.wait_text("tool-result", "Echo: from the browser").await?;
        // The elicitation tool is registered a moment after the handshake: the list is
        // refreshed until it is there.
        let tool = "//*[@id='tools']//button[normalize-space()='trigger-elicitation-request']";
        let start = Instant::now();
        while p.c.find_all(Locator::XPath(tool)).await.map_err(|e| e.to_string())?.is_empty() {
            if start.elapsed() > WAIT {
                return Err("trigger-elicitation-request was never listed".into());
            }
            p.click("", "List tools").await?;
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        // Each tool once, however many times the list was asked for at once.
        let echoes = p.c.find_all(Locator::XPath("//*[@id='tools']//button[normalize-space()='echo']")).await;
        let echoes = echoes.map_err(|e| e.to_string())?.len();
        if echoes != 1 {
            return Err(format!("echo is listed {echoes} times"));
        }
        p.call_tool("trigger-elicitation-request", &[]).await?;
        let dialog = "//*[@role='dialog']";
        p.fill(dialog, "name", "Ada Lovelace").await?;
        p.click(dialog, "Accept").await?;
        p.wait_text("tool-result", "Ada Lovelace").await?;
        p.wait_text("tool-result", "accept").await?;
        Ok(())
    })
    .await;
}

/// `mcp serve` in the 2026-07-28 era (over stdio): a resource subscribed to through a
/// `subscriptions/listen` stream, its update shown; the structured content of `add` checked
/// against its output schema.
#[tokio::test(flavor = "multi_thread")]
async fn browser_modern_resource_subscription_and_output_check() {
    let inspector = Inspector::builder().target(Some(serve_target())).build().await.expect("inspector");
    run("modern-subscription", |c| async move {
        let p = Page::open(c, &inspector).await?;
        p.wait_text("revision", "2026-07-28").await?;
        p.tab("Resources").await?;
        p.click("", "List resources").await?;
        p.click("//*[@id='resources']", "watched-resource").await?;
        p.click("//*[@id='resource-detail']", "Subscribe").await?;
        p.wait_text("resource-note", "Subscribed to test://watched-resource (subscriptions/listen)").await?;
        p.call_tool("test_touch_resource", &[("uri", "test://watched-resource")]).await?;
        p.wait_text("tool-result", "announced an update of test://watched-resource").await?;
        p.tab("Resources").await?;
        p.wait_text("resource-note", "Updated: test://watched-resource").await?;
        p.tab("Logs").await?;
        p.wait_text("logs", "notifications/resources/updated").await?;
        p.tab("Resources").await?;
        p.click("//*[@id='resource-detail']", "Unsubscribe").await?;
        p.wait_text("resource-note", "Unsubscribed").await?;
        // Structured content, checked.
        p.call_tool("add", &[("a", "2"), ("b", "3.5")]).await?;
        p.wait_text("tool-result", "Valid against the tool's output schema").await?;
        p.wait_text("tool-result", "\"sum\": 5.5").await?;
        Ok(())
    })
    .await;
}

/// An HTTP server with a tool whose structured content does not fit its output schema: the
/// page says so; and History shows each request's HTTP headers, sent and received.
#[tokio::test(flavor = "multi_thread")]
async fn browser_invalid_structured_content_and_http_headers_in_history() {
    let server = lying::server_with_a_lying_tool();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let http = mcpwire_http::McpHttp::new(server, mcpwire_http::HttpConfig::default());
    let server = tokio::spawn(http.serve(listener));
    let inspector = Inspector::builder().build().await.expect("inspector");
    run("output-check", |c| async move {
        let p = Page::open(c, &inspector).await?;
        p.fill("", "Target", &format!("http://{addr}/mcp")).await?;
        p.fill("", "Headers", "X-Seen-In-History: yes").await?;
        p.click("", "Connect").await?;
        p.wait_text("revision", "2026-07-28").await?;
        p.call_tool("bad_sum", &[]).await?;
        p.wait_text("tool-result", "Does not match the tool's output schema").await?;
        p.wait_text("tool-result", "\"sum\": \"three\"").await?;
        p.tab("History").await?;
        p.wait_text("history", &format!("POST http://{addr}/mcp")).await?;
        p.wait_text("history", "x-seen-in-history: yes").await?;
        p.wait_text("history", "mcp-method: tools/call").await?;
        p.wait_text("history", "HTTP 200").await?;
        p.wait_text("history", "content-type: application/json").await?;
        Ok(())
    })
    .await;
    server.abort();
}

/// A server that answers 401: the page shows the Authorize step, the user authorizes in the
/// window it opens (oidc-provider's login and consent pages), the browser comes back to the
/// loopback redirect URI, and the connection completes.
#[tokio::test(flavor = "multi_thread")]
async fn browser_oauth_authorize_step() {
    use mcpwire_auth::resource::{JwtVerifier, ResourceServer};
    let Some(auth) = provider::AuthServer::start().await else { return };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let verifier = JwtVerifier::discover(auth.issuer.clone(), url.clone()).await.expect("the issuer's metadata");
    let rs = ResourceServer::new(url.clone(), verifier)
        .authorization_server(auth.issuer.clone())
        .scopes_supported(["mcp"])
        .required_scopes(["mcp"]);
    let config = mcpwire_http::HttpConfig { auth: Some(rs), ..mcpwire_http::HttpConfig::default() };
    let server = tokio::spawn(mcpwire_http::McpHttp::new(mcpwire_reference::server(), config).serve(listener));
    let exe = std::env::current_exe().expect("the test's path");
    let dir = exe.parent().expect("deps").join(format!("inspector-oauth-browser-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let inspector = Inspector::builder().token_store(Some(TokenStore::new(&dir))).build().await.expect("inspector");
    let issuer = auth.issuer.clone();
    run("oauth", |c| async move {
        let p = Page::open(c.clone(), &inspector).await?;
        let main = c.window().await.map_err(|e| e.to_string())?;
        p.fill("", "Target", &url).await?;
        p.click("", "Connect").await?;
        p.find("//*[@id='authorize']//h3[normalize-space()='Authorization needed']").await?;
        p.wait_text("authorize-url", &format!("{issuer}/auth?")).await?;
        let link = p.find("//a[normalize-space()='Authorize']").await?;
        link.click().await.map_err(|e| format!("click Authorize: {e}"))?;
        // The authorization server's pages, in the window the link opened.
        let start = Instant::now();
        let window = loop {
            let windows = c.windows().await.map_err(|e| e.to_string())?;
            if let Some(w) = windows.into_iter().find(|w| *w != main) {
                break w;
            }
            if start.elapsed() > WAIT {
                return Err("the Authorize link opened no window".into());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        c.switch_to_window(window).await.map_err(|e| e.to_string())?;
        let login = p.find("//input[@name='login']").await?;
        login.send_keys("alice").await.map_err(|e| e.to_string())?;
        let password = p.find("//input[@name='password']").await?;
        password.send_keys("anything").await.map_err(|e| e.to_string())?;
        p.find("//button[@type='submit']").await?.click().await.map_err(|e| format!("sign in: {e}"))?;
        // The consent page (a form whose one button continues).
        let start = Instant::now();
        loop {
            let at = c.current_url().await.map_err(|e| e.to_string())?;
            if at.path() == "/callback" {
                break;
            }
            if let Ok(button) = c.find(Locator::XPath("//button[@type='submit']")).await {
                let _ = button.click().await;
            }
            if start.elapsed() > WAIT {
                return Err(format!("the browser did not come back to the redirect URI; it is at {at}"));
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        let body = c.find(Locator::Css("body")).await.map_err(|e| e.to_string())?.text().await.unwrap_or_default();
        if !body.contains("Authorized") {
            return Err(format!("the callback page says {body:?}"));
        }
        c.switch_to_window(main).await.map_err(|e| e.to_string())?;
        p.wait_text("status", "Connected to mcp-reference-server").await?;
        // The era is the server's, however long the user took.
        p.wait_text("revision", "2026-07-28").await?;
        let hidden = c.find(Locator::Id("authorize")).await.map_err(|e| e.to_string())?;
        if hidden.is_displayed().await.unwrap_or(true) {
            return Err("the Authorize step is still shown once connected".into());
        }
        p.call_tool("echo", &[("text", "authorized")]).await?;
        p.wait_text("tool-result", "authorized").await?;
        Ok(())
    })
    .await;
    server.abort();
    assert!(TokenStore::new(&dir).list().len() == 1, "the token is kept");
}

/// The example app (crates/mcpwire/examples/app.rs): `roll_dice` and its interface, the
/// example's own `app.html`, whose resource here declares a CSP (the example declares none),
/// served over HTTP in this process. Each call's dice all show the call's number (1, 2, …), so
/// that a roll the app asked for is told from the first.
fn dice_server() -> mcpwire_server::Server {
    use mcpwire_protocol::types::{CallToolResult, Tool};
    use mcpwire_server::apps::{AppResource, AppTool, Csp};
    use std::sync::atomic::{AtomicU32, Ordering};
    const VIEW: &str = include_str!("../../../mcpwire/examples/app.html");
    let calls = Arc::new(AtomicU32::new(0));
    let schema = json!({"type": "object", "properties": {
        "sides": {"type": "integer", "description": "Faces of each die"},
        "count": {"type": "integer", "description": "How many dice"},
    }});
    let tool = Tool::new("roll_dice", "Rolls dice and shows them.", schema);
    let roll = mcpwire_server::ToolDef::new(tool, move |args, ctx: mcpwire_server::Context| {
        let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            let count = args.get("count").and_then(serde_json::Value::as_u64).unwrap_or(1).clamp(1, 20) as usize;
            let rolls = vec![n; count];
            // As the example does: a host that declares MCP Apps shows the dice itself.
            let host = if ctx.client_supports_apps() { "shown by the host" } else { "no apps host" };
            let mut result = CallToolResult::text(format!("call {n}: rolled {rolls:?} ({host})"));
            result.structured_content = Some(json!({"rolls": rolls, "total": n as usize * count}));
            Ok(result)
        }
    })
    .app(AppTool::new("ui://dice/view.html"));
    let view = AppResource::html("ui://dice/view.html", "dice-view", VIEW)
        .title("Dice")
        .csp(Csp::new().connect("https://api.example.com").resource("https://*.cdn.example.com"))
        .prefers_border(true);
    mcpwire_server::Server::builder("dice", "1.0").tool(roll).resource(view).build()
}

/// The Apps tab hosts the example app: its interface in a frame sandboxed to scripts alone
/// (an opaque origin: the page's token out of reach) under the CSP of its metadata; the
/// `ui/initialize` handshake, the call's input and result handed to the app, and the app's
/// own `tools/call` forwarded to the server, answered, and listed in History.
#[tokio::test(flavor = "multi_thread")]
async fn browser_apps_tab_hosts_the_example_app() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let http = mcpwire_http::McpHttp::new(dice_server(), mcpwire_http::HttpConfig::default());
    let server = tokio::spawn(http.serve(listener));
    let inspector = Inspector::builder().build().await.expect("inspector");
    run("apps", |c| async move {
        let p = Page::open(c.clone(), &inspector).await?;
        p.fill("", "Target", &format!("http://{addr}/mcp")).await?;
        p.click("", "Connect").await?;
        p.wait_text("server-name", "dice").await?;
        p.tab("Apps").await?;
        p.click("//*[@id='apps']", "roll_dice").await?;
        p.wait_text("app-detail", "ui://dice/view.html").await?;
        p.fill("//*[@id='app-detail']", "count", "3").await?;
        p.click("//*[@id='app-detail']", "Call").await?;
        // The inspector declares the extension, so the server knows its results are rendered.
        p.wait_text("app-result", "call 1: rolled [1, 1, 1] (shown by the host)").await?;
        // The policy the inspector built, as the page shows it.
        p.wait_text("app-csp", "connect-src https://api.example.com;").await?;
        let frame = p.find("//*[@id='app-frame-holder']/iframe").await?;
        let sandbox = frame.attr("sandbox").await.map_err(|e| e.to_string())?;
        if sandbox.as_deref() != Some("allow-scripts") {
            return Err(format!("the frame's sandbox is {sandbox:?}, not allow-scripts alone"));
        }
        // Into the app.
        frame.enter_frame().await.map_err(|e| format!("into the frame: {e}"))?;
        p.wait_text("status", "connected to mcpwire-inspector").await?;
        p.wait_text("input", "\"count\": 3").await?;
        p.wait_text("result", "call 1: rolled [1, 1, 1]").await?;
        let dice = c.find_all(Locator::Css("#dice .die")).await.map_err(|e| e.to_string())?;
        if dice.len() != 3 {
            return Err(format!("the app shows {} dice, not 3", dice.len()));
        }
        let meta = c
            .find(Locator::XPath("/html/head/meta[@http-equiv='Content-Security-Policy']"))
            .await
            .map_err(|e| format!("no CSP meta at the start of the app's head: {e}"))?;
        let policy = meta.attr("content").await.map_err(|e| e.to_string())?.unwrap_or_default();
        for part in
            ["default-src 'none'", "connect-src https://api.example.com;", "img-src data: https://*.cdn.example.com;"]
        {
            if !policy.contains(part) {
                return Err(format!("the app's CSP meta has no {part:?}: {policy}"));
            }
        }
        let first = c
            .find(Locator::XPath("/html/head/*[1]"))
            .await
            .map_err(|e| e.to_string())?
            .attr("http-equiv")
            .await
            .map_err(|e| e.to_string())?;
        if first.as_deref() != Some("Content-Security-Policy") {
            return Err(format!("the CSP meta is not the first element of the head ({first:?})"));
        }
        // An opaque origin: the page's storage (its token) is out of reach.
        let probe = "let s; try { s = String(sessionStorage.getItem('mcp-inspector-token')); } \
                     catch (e) { s = 'blocked'; } return [String(window.origin), s];";
        let seen = c.execute(probe, vec![]).await.map_err(|e| e.to_string())?;
        if seen != json!(["null", "blocked"]) {
            return Err(format!("the app's origin and storage: {seen}"));
        }
        // The app calls the tool through the host.
        p.click("", "Roll again").await?;
        p.wait_text("status", "rolled again through the host").await?;
        p.wait_text("result", "call 2: rolled [2, 2, 2]").await?;
        c.enter_parent_frame().await.map_err(|e| e.to_string())?;
        // What went between the page and the app.
        p.wait_text("app-log", "ui/initialize").await?;
        p.wait_text("app-log", "ui/notifications/tool-input").await?;
        p.wait_text("app-log", "ui/notifications/tool-result").await?;
        // History: the app's call, marked as the app's.
        p.tab("History").await?;
        let from_app =
            "//*[@id='history']/li[code[normalize-space()='tools/call'] and span[normalize-space()='from the app']]";
        let entry = p.find(from_app).await?;
        let start = Instant::now();
        loop {
            let text = entry.prop("textContent").await.map_err(|e| e.to_string())?.unwrap_or_default();
            if text.contains("call 2: rolled [2, 2, 2]") {
                break;
            }
            if start.elapsed() > WAIT {
                return Err(format!("the app's call in History does not show its result: {text}"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(())
    })
    .await;
    server.abort();
}

/// The reference server's `test_app` through `mcp serve` (stdio): its interface, whose CSP
/// declares two origins, gets the call's input and result.
#[tokio::test(flavor = "multi_thread")]
async fn browser_apps_reference_test_app() {
    let inspector = Inspector::builder().target(Some(serve_target())).build().await.expect("inspector");
    run("apps-reference", |c| async move {
        let p = Page::open(c.clone(), &inspector).await?;
        p.wait_text("revision", "2026-07-28").await?;
        p.tab("Apps").await?;
        p.click("//*[@id='apps']", "test_app").await?;
        p.fill("//*[@id='app-detail']", "text", "shown by the app").await?;
        p.click("//*[@id='app-detail']", "Call").await?;
        p.wait_text("app-csp", "connect-src https://api.example.com;").await?;
        let frame = p.find("//*[@id='app-frame-holder']/iframe").await?;
        frame.enter_frame().await.map_err(|e| format!("into the frame: {e}"))?;
        p.wait_text("input", "\"text\": \"shown by the app\"").await?;
        p.wait_text("result", "\"text\": \"shown by the app\"").await?;
        let meta = c
            .find(Locator::XPath("/html/head/meta[@http-equiv='Content-Security-Policy']"))
            .await
            .map_err(|e| format!("no CSP meta in the app's head: {e}"))?;
        let policy = meta.attr("content").await.map_err(|e| e.to_string())?.unwrap_or_default();
        if !policy.contains("https://api.example.com") || !policy.contains("https://*.cdn.example.com") {
            return Err(format!("the app's CSP meta lacks the declared origins: {policy}"));
        }
        Ok(())
    })
    .await;
}

/// The example app itself (`cargo run -p mcpwire --example app`, built by scripts/test's build
/// step beside `mcp`: target/<profile>/examples/app) over stdio in the Apps tab: its real
/// `roll_dice`, which says in its text whether the client renders apps, and its own interface
/// rolling again through the host.
#[tokio::test(flavor = "multi_thread")]
async fn browser_apps_tab_runs_the_example_binary() {
    let example = mcp_bin().parent().expect("a directory").join("examples").join("app");
    assert!(
        example.exists(),
        "{} is missing: build the examples first (cargo build --profile test-release -p mcpwire --examples)",
        example.display()
    );
    let target = Target::parse(&format!("'{}'", example.display())).expect("a command line");
    let inspector = Inspector::builder().target(Some(target)).build().await.expect("inspector");
    run("apps-example", |c| async move {
        let p = Page::open(c.clone(), &inspector).await?;
        p.wait_text("server-name", "dice").await?;
        p.tab("Apps").await?;
        p.click("//*[@id='apps']", "roll_dice").await?;
        p.fill("//*[@id='app-detail']", "count", "4").await?;
        p.fill("//*[@id='app-detail']", "sides", "2").await?;
        p.click("//*[@id='app-detail']", "Call").await?;
        // The inspector declares MCP Apps, so the example does not add its line for hosts that
        // do not render them.
        p.wait_text("app-result", "Rolled 4d2: [").await?;
        let text = p.find("//*[@id='app-result']").await?.text().await.map_err(|e| e.to_string())?;
        if text.contains("would show the dice") {
            return Err(format!("the example saw a client without MCP Apps: {text}"));
        }
        let frame = p.find("//*[@id='app-frame-holder']/iframe").await?;
        frame.enter_frame().await.map_err(|e| format!("into the frame: {e}"))?;
        p.wait_text("status", "connected to mcpwire-inspector").await?;
        p.wait_text("input", "\"count\": 4").await?;
        let dice = c.find_all(Locator::Css("#dice .die")).await.map_err(|e| e.to_string())?;
        if dice.len() != 4 {
            return Err(format!("the app shows {} dice, not 4", dice.len()));
        }
        p.click("", "Roll again").await?;
        p.wait_text("status", "rolled again through the host").await?;
        c.enter_parent_frame().await.map_err(|e| e.to_string())?;
        p.tab("History").await?;
        p.wait_text("history", "from the app").await?;
        Ok(())
    })
    .await;
}

/// The README's picture (docs/inspector.png), taken when `MCP_INSPECTOR_DOCS_SCREENSHOT`
/// names the file to write: `mcp serve` (found on PATH, so that no path of this machine
/// shows), a call of `add` with its structured content checked.
#[tokio::test(flavor = "multi_thread")]
async fn browser_docs_screenshot() {
    let Some(out) = std::env::var_os("MCP_INSPECTOR_DOCS_SCREENSHOT") else { return };
    let bin_dir = mcp_bin().parent().expect("a directory").to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(bin_dir).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .expect("PATH");
    let mut target = Target::parse("mcp serve").expect("a command line");
    if let mcpwire_client::target::Target::Stdio { command, .. } = &mut target.spec {
        *command = command.clone().env("PATH", path);
    }
    let inspector = Inspector::builder().target(Some(target)).build().await.expect("inspector");
    let driver = driver().await;
    let c = browser(&driver).await;
    let outcome = async {
        let p = Page::open(c.clone(), &inspector).await?;
        p.wait_text("revision", "2026-07-28").await?;
        p.call_tool("add", &[("a", "2"), ("b", "3.5")]).await?;
        p.wait_text("tool-result", "Valid against the tool's output schema").await?;
        c.screenshot().await.map_err(|e| e.to_string())
    };
    let png = tokio::time::timeout(Duration::from_secs(120), outcome).await.expect("in time").expect("the page");
    let _ = c.close().await;
    std::fs::write(PathBuf::from(out), png).expect("the screenshot written");
}
