//! The client commands end to end: the real `mcp` binary against `mcp serve` itself as a
//! stdio target, checking stdout, stderr and exit codes as a user or a script sees them.
//! Every run is bounded: a command that outlives its deadline is killed and fails the test.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use mcpwire_testkit::output_within;
use serde_json::Value;

/// The longest any one command may take.
const DEADLINE: Duration = Duration::from_secs(40);

fn mcp_bin() -> &'static str {
    env!("CARGO_BIN_EXE_mcp")
}

/// TARGET for the reference server: `<mcp> serve`, quoted as a command line.
fn serve() -> String {
    format!("'{}' serve", mcp_bin())
}

/// The result of one run.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }

    /// The stderr lines that are not notes (`mcp: the server asked …`) or server logs.
    fn error_lines(&self) -> Vec<&str> {
        self.stderr.lines().filter(|l| !l.trim().is_empty()).collect()
    }

    fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "exit code\n--- stdout\n{}\n--- stderr\n{}", self.stdout, self.stderr);
        self
    }
}

/// Runs `mcp` with `args` (stdin empty, not a terminal), in `dir` with extra `env`.
fn run_in(args: &[&str], dir: Option<&Path>, env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(mcp_bin());
    cmd.args(args);
    cmd.env_remove("MCP_CONFIG").env_remove("MCP_BEARER_TOKEN").env_remove("MCP_LOG");
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let output = output_within(&mut cmd, DEADLINE, format!("`mcp {}` finished", args.join(" ")));
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        elapsed: started.elapsed(),
    }
}

fn run(args: &[&str]) -> Run {
    run_in(args, None, &[])
}

/// A fresh empty directory under the system's temporary directory.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-cli-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const PNG_MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";

// ---- info ----

#[test]
fn info_shows_server_era_revision_and_capabilities() {
    let target = serve();
    let r = run(&["info", &target]);
    r.assert_code(0);
    assert!(r.stdout.contains("mcp-reference-server"), "{}", r.stdout);
    assert!(r.stdout.contains("Era           modern"), "{}", r.stdout);
    assert!(r.stdout.contains("Protocol      2026-07-28"), "{}", r.stdout);
    assert!(r.stdout.contains("tools (listChanged)"), "{}", r.stdout);
    assert!(r.stdout.contains("Instructions\n  The reference server"), "{}", r.stdout);

    let r = run(&["info", &target, "--json", "--protocol-version", "2025-06-18"]);
    r.assert_code(0);
    let v = r.json();
    assert_eq!(v["era"], "legacy");
    assert_eq!(v["protocolVersion"], "2025-06-18");
    assert_eq!(v["transport"], "stdio");
    assert_eq!(v["serverInfo"]["name"], "mcp-reference-server");
    assert!(v["capabilities"]["tools"].is_object());
    assert!(v["instructions"].is_string());
}

// ---- list ----

#[test]
fn list_each_kind_as_a_table() {
    let target = serve();
    let r = run(&["list", &target, "tools"]);
    r.assert_code(0);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[0].starts_with("NAME") && lines[0].contains("ARGUMENTS") && lines[0].contains("DESCRIPTION"));
    let add = lines.iter().find(|l| l.starts_with("add ")).expect("add is listed");
    assert!(add.contains("a: number, b: number"), "{add}");
    assert!(add.contains("[read-only, idempotent]"), "{add}");
    // Columns line up: every row's argument column starts where the header's does.
    let col = lines[0].find("ARGUMENTS").unwrap();
    let echo = lines.iter().find(|l| l.starts_with("echo ")).unwrap();
    assert_eq!(echo.find("text: string"), Some(col), "{echo}");
    assert!(r.stdout.contains("contactMethod?: \"phone\"|\"email\""));

    let r = run(&["list", &target, "resources"]);
    r.assert_code(0);
    assert!(r.stdout.starts_with("URI"));
    assert!(r.stdout.contains("test://static-text") && r.stdout.contains("text/plain"));

    let r = run(&["list", &target, "templates"]);
    r.assert_code(0);
    assert!(r.stdout.contains("test://template/{id}/data"));

    let r = run(&["list", &target, "prompts"]);
    r.assert_code(0);
    assert!(r.stdout.lines().any(|l| l.starts_with("test_prompt_with_arguments") && l.contains("arg1, arg2")));

    let r = run(&["list", &target]);
    r.assert_code(0);
    for section in ["Tools (", "Resources (4)", "Resource templates (1)", "Prompts ("] {
        assert!(r.stdout.contains(section), "missing {section}:\n{}", r.stdout);
    }
}

#[test]
fn list_json_shapes() {
    let target = serve();
    let r = run(&["list", &target, "tools", "--json"]);
    r.assert_code(0);
    let v = r.json();
    let obj = v.as_object().unwrap();
    assert_eq!(obj.keys().collect::<Vec<_>>(), ["tools"]);
    let tools = v["tools"].as_array().unwrap();
    let add = tools.iter().find(|t| t["name"] == "add").unwrap();
    assert_eq!(add["inputSchema"]["required"], serde_json::json!(["a", "b"]));
    assert_eq!(add["outputSchema"]["properties"]["sum"]["type"], "number");

    let r = run(&["list", &target, "--json"]);
    r.assert_code(0);
    let v = r.json();
    for key in ["tools", "resources", "resourceTemplates", "prompts"] {
        assert!(v[key].is_array(), "{key} in {v}");
    }
    assert_eq!(v["resourceTemplates"][0]["uriTemplate"], "test://template/{id}/data");
    assert_eq!(v["prompts"].as_array().unwrap().iter().filter(|p| p["name"] == "test_simple_prompt").count(), 1);
}

// ---- call ----

#[test]
fn call_prints_text_and_structured_content() {
    let target = serve();
    let r = run(&["call", &target, "echo", "text=hello world"]);
    r.assert_code(0);
    assert_eq!(r.stdout, "hello world\n");

    // Numbers parsed as the schema says. The result has a text block (the structured
    // content's text copy) and structured content: the text is printed, and only the text.
    let r = run(&["call", &target, "add", "a=1", "b=2.5"]);
    r.assert_code(0);
    assert_eq!(r.stdout, "{\"sum\":3.5}\n");

    let r = run(&["call", &target, "add", "a=1", "b=2", "--json"]);
    r.assert_code(0);
    let v = r.json();
    assert_eq!(v["structuredContent"], serde_json::json!({"sum": 3.0}));
    assert_eq!(v["content"][0]["type"], "text");

    // --args, with a pair overriding one member.
    let r = run(&["call", &target, "add", "--args", r#"{"a": 10, "b": 1}"#, "b=5"]);
    r.assert_code(0);
    assert_eq!(r.stdout, "{\"sum\":15.0}\n");

    // A string that looks like a number stays a string where the schema wants a string.
    let r = run(&["call", &target, "echo", "text=123"]);
    r.assert_code(0);
    assert_eq!(r.stdout, "123\n");
}

#[test]
fn call_saves_images_and_audio_to_files() {
    let target = serve();
    let out = temp_dir("images");
    let out_arg = out.to_string_lossy().into_owned();
    let r = run(&["call", &target, "test_image_content", "--out", &out_arg]);
    r.assert_code(0);
    let png = out.join("test_image_content.png");
    assert!(r.stdout.contains(&format!("saved to {}", png.display())), "{}", r.stdout);
    assert!(std::fs::read(&png).unwrap().starts_with(PNG_MAGIC));

    let r = run(&["call", &target, "test_audio_content", "--out", &out_arg]);
    r.assert_code(0);
    let wav = std::fs::read(out.join("test_audio_content.wav")).unwrap();
    assert!(wav.starts_with(b"RIFF"));

    // Without --out: a temporary directory, whose path is printed.
    let r = run(&["call", &target, "test_multiple_content_types"]);
    r.assert_code(0);
    assert!(r.stdout.starts_with("Multiple content types test:\n"), "{}", r.stdout);
    let path = r.stdout.lines().find_map(|l| l.split("saved to ").nth(1)).expect("a saved path");
    assert!(std::fs::read(path).unwrap().starts_with(PNG_MAGIC));
    assert!(r.stdout.contains("[resource test://mixed-content-resource (application/json)]"));
    let _ = std::fs::remove_dir_all(Path::new(path).parent().unwrap());
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn a_tool_error_exits_1() {
    let r = run(&["call", &serve(), "test_error_handling"]);
    r.assert_code(1);
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.error_lines(),
        ["mcp: tool `test_error_handling` reported an error: This tool intentionally returns an error for testing"]
    );
    let r = run(&["call", &serve(), "test_error_handling", "--json"]);
    r.assert_code(1);
    assert_eq!(r.json()["isError"], true);
}

#[test]
fn bad_arguments_fail_before_the_call_is_sent() {
    let target = serve();
    let cases: &[(&[&str], &str)] = &[
        (&["a=x", "b=1"], "mcp: argument `a` expects a number, got `x`"),
        (&["a=1"], "mcp: tool `add` needs argument `b: number` (give it as key=value)"),
        (&["a=1", "b=2", "c=3"], "mcp: tool `add` has no argument `c`; it takes: a: number, b: number"),
        (&["a"], "mcp: `a` is not key=value"),
    ];
    for (pairs, message) in cases {
        let mut args = vec!["call", target.as_str(), "add", "-v"];
        args.extend_from_slice(pairs);
        let r = run(&args);
        r.assert_code(2);
        let errors: Vec<&str> = r.stderr.lines().filter(|l| l.starts_with("mcp:")).collect();
        assert_eq!(errors, [*message], "{pairs:?}");
        // The trace shows the tool list being fetched, and no call.
        assert!(r.stderr.contains("\"method\":\"tools/list\""), "{}", r.stderr);
        assert!(!r.stderr.contains("\"method\":\"tools/call\""), "a call was sent: {}", r.stderr);
    }
    let r = run(&["call", &target, "add", "--args", "[1, 2]"]);
    r.assert_code(2);
    assert_eq!(r.error_lines(), ["mcp: --args must be a JSON object"]);
}

#[test]
fn an_unknown_tool_is_named_with_a_suggestion() {
    let r = run(&["call", &serve(), "ech", "text=x"]);
    r.assert_code(2);
    let lines = r.error_lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].starts_with("mcp: the server has no tool `ech`; did you mean `echo`?"), "{}", lines[0]);
    // Unchecked, the server says so itself: a protocol error.
    let r = run(&["call", &serve(), "ech", "--no-check"]);
    r.assert_code(4);
    assert_eq!(r.error_lines().len(), 1, "{}", r.stderr);
    assert!(r.stderr.starts_with("mcp: tools/call: the server answered with an error:"), "{}", r.stderr);
}

#[test]
fn progress_and_logs_go_to_stderr_as_lines() {
    let target = serve();
    let r = run(&["call", &target, "test_tool_with_progress"]);
    r.assert_code(0);
    assert_eq!(r.stdout, "Progress test completed\n");
    assert_eq!(
        r.error_lines(),
        ["progress 0/100 (0%) step 1", "progress 50/100 (50%) step 2", "progress 100/100 (100%) step 3"]
    );

    let r = run(&["call", &target, "test_tool_with_logging"]);
    r.assert_code(0);
    assert_eq!(
        r.error_lines(),
        ["[info] Tool execution started", "[info] Tool processing data", "[info] Tool execution completed"]
    );
    // Legacy servers get logging/setLevel; the same lines come back.
    let r = run(&["call", &target, "test_tool_with_logging", "--protocol-version", "2025-03-26"]);
    r.assert_code(0);
    assert_eq!(r.error_lines().len(), 3, "{}", r.stderr);
    // Asking for warnings and up silences info messages.
    let r = run(&["call", &target, "test_tool_with_logging", "--log-level", "warning"]);
    r.assert_code(0);
    assert_eq!(r.stderr, "");
}

// ---- what the server asks for ----

#[test]
fn elicit_answers_elicitation_in_both_eras() {
    let target = serve();
    for era in [None, Some("2025-11-25")] {
        let mut args = vec![
            "call",
            target.as_str(),
            "test_elicitation",
            "message=Who are you?",
            "--elicit",
            r#"{"username": "ada", "email": "ada@example.com"}"#,
        ];
        if let Some(v) = era {
            args.extend(["--protocol-version", v]);
        }
        let r = run(&args);
        r.assert_code(0);
        assert_eq!(
            r.stdout, "User response: action=accept, content={\"username\":\"ada\",\"email\":\"ada@example.com\"}\n",
            "era {era:?}"
        );
        assert!(r.stderr.contains("the server asked for input: \"Who are you?\"; answered with --elicit"));
    }
    // Defaults fill what --elicit leaves out.
    let r = run(&["call", &target, "test_elicitation_sep1034_defaults", "--elicit", r#"{"age": 7}"#]);
    r.assert_code(0);
    assert!(
        r.stdout.contains(r#"content={"age":7,"name":"John Doe","score":95.5,"status":"active","verified":true}"#),
        "{}",
        r.stdout
    );
}

#[test]
fn decline_and_refusal() {
    let target = serve();
    let r = run(&["call", &target, "test_elicitation", "message=hi", "--decline"]);
    r.assert_code(0);
    assert_eq!(r.stdout, "User response: action=decline, content=null\n");

    // No terminal, no --elicit, no --decline: refused, exit 2, in both eras.
    for era in ["2026-07-28", "2025-11-25"] {
        let r = run(&["call", &target, "test_elicitation", "message=hi", "--protocol-version", era]);
        r.assert_code(2);
        assert!(
            r.stderr.contains("there is no terminal to ask on: pass --elicit JSON to answer or --decline"),
            "{}",
            r.stderr
        );
        assert_eq!(r.stdout, "");
    }
    // --elicit that lacks a required field is refused too.
    let r = run(&["call", &target, "test_elicitation", "message=hi", "--elicit", r#"{"username": "ada"}"#]);
    r.assert_code(2);
    assert!(r.stderr.contains("missing required field(s) email"), "{}", r.stderr);
}

#[test]
fn sample_reply_answers_sampling_and_refusal_is_clear() {
    let target = serve();
    for era in ["2026-07-28", "2025-06-18"] {
        let r = run(&[
            "call",
            &target,
            "test_sampling",
            "prompt=Capital of France?",
            "--sample-reply",
            "Paris",
            "--protocol-version",
            era,
        ]);
        r.assert_code(0);
        assert_eq!(r.stdout, "LLM response: Paris\n", "{era}");
        let r = run(&["call", &target, "test_sampling", "prompt=Capital of France?", "--protocol-version", era]);
        r.assert_code(2);
        assert!(r.stderr.contains("refused; pass --sample-reply TEXT to answer"), "{}", r.stderr);
    }
    let r = run(&["call", &target, "test_input_required_result_sampling", "--sample-reply", "Paris"]);
    r.assert_code(0);
    assert_eq!(r.stdout, "The model answered: Paris\n");
}

#[test]
fn roots_answer_roots_list() {
    let dir = temp_dir("roots");
    let dir_arg = dir.to_string_lossy().into_owned();
    let r = run(&["call", &serve(), "test_input_required_result_list_roots", "--root", &dir_arg]);
    r.assert_code(0);
    let canonical = std::fs::canonicalize(&dir).unwrap();
    assert!(r.stdout.contains(&format!("file://{}", canonical.display())), "{}", r.stdout);
    // Without --root the server's demand is explained.
    let r = run(&["call", &serve(), "test_input_required_result_list_roots"]);
    r.assert_code(2);
    assert!(r.stderr.contains("pass --root PATH to offer roots"), "{}", r.stderr);
    let _ = std::fs::remove_dir_all(dir);
}

// ---- read, prompt, complete ----

#[test]
fn read_text_and_binary_resources() {
    let target = serve();
    let r = run(&["read", &target, "test://static-text"]);
    r.assert_code(0);
    assert_eq!(r.stdout, "This is the content of the static text resource.\n");

    let out = temp_dir("read");
    let r = run(&["read", &target, "test://static-binary", "--out", &out.to_string_lossy()]);
    r.assert_code(0);
    assert!(std::fs::read(out.join("static-binary.png")).unwrap().starts_with(PNG_MAGIC), "{}", r.stdout);

    let r = run(&["read", &target, "test://template/42/data", "--json"]);
    r.assert_code(0);
    let v = r.json();
    assert_eq!(v["contents"][0]["uri"], "test://template/42/data");
    let data: Value = serde_json::from_str(v["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(data["id"], "42");

    let r = run(&["read", &target, "test://nope"]);
    r.assert_code(4);
    assert_eq!(r.error_lines().len(), 1, "{}", r.stderr);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn prompts_print_their_messages() {
    let target = serve();
    let r = run(&["prompt", &target, "test_prompt_with_arguments", "arg1=hello", "arg2=world"]);
    r.assert_code(0);
    // The prompt's description comes first (the reference prompts are #[prompt] functions,
    // whose results carry it).
    assert_eq!(
        r.stdout,
        "# A prompt with two required arguments.\n\n[user]\nPrompt with arguments: arg1='hello', arg2='world'\n"
    );

    let r = run(&["prompt", &target, "test_prompt_with_arguments", "arg1=hello", "--json"]);
    r.assert_code(2);
    assert_eq!(
        r.error_lines(),
        ["mcp: prompt `test_prompt_with_arguments` needs argument `arg2` (give it as key=value)"]
    );

    let r = run(&["prompt", &target, "test_simple_prompt", "x=1"]);
    r.assert_code(2);
    assert_eq!(r.error_lines(), ["mcp: prompt `test_simple_prompt` has no argument `x`; it takes no arguments"]);

    let r = run(&["prompt", &target, "test_simple_prompt", "--json"]);
    r.assert_code(0);
    assert_eq!(r.json()["messages"][0]["role"], "user");
}

#[test]
fn completions_for_prompts_and_templates() {
    let target = serve();
    let r = run(&["complete", &target, "--prompt", "test_prompt_with_arguments", "arg1", "te"]);
    r.assert_code(0);
    assert_eq!(r.stdout, "test1\ntest2\n");

    let r = run(&["complete", &target, "--resource", "test://template/{id}/data", "id", "1", "--json"]);
    r.assert_code(0);
    assert_eq!(r.json()["completion"]["values"], serde_json::json!(["1", "123"]));

    let r = run(&["complete", &target, "arg1"]);
    r.assert_code(2);
}

// ---- targets and failures ----

/// `mcp serve --http` on a free port of 127.0.0.1, killed on drop.
struct HttpServer {
    child: std::process::Child,
    /// `127.0.0.1:PORT`.
    authority: String,
}

impl HttpServer {
    fn start(extra: &[&str]) -> Self {
        use std::io::BufRead;
        let mut child = Command::new(mcp_bin())
            .args(["serve", "--http", "127.0.0.1:0"])
            .args(extra)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (said, serving) = std::sync::mpsc::channel();
        // Reads every line (so the server never blocks on a full pipe); sends the first
        // that says where it serves.
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("serving on http://") {
                    let rest = &line[at + "serving on http://".len()..];
                    let _ = said.send(rest.split('/').next().unwrap_or_default().to_owned());
                }
            }
        });
        let authority = serving.recv_timeout(DEADLINE).expect("mcp serve --http said where it serves");
        Self { child, authority }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A proxy named by `HTTP_PROXY` carries the requests (the client hands a URL that a proxy
/// variable routes to reqwest, which speaks to proxies). The proxy here is `mcp serve
/// --http` itself, which answers the absolute-form requests a proxy gets: the call names a
/// host that does not resolve (`.invalid`), so it reaches the server only through the proxy,
/// and fails without the variable.
#[test]
fn a_proxy_named_by_http_proxy_carries_the_requests() {
    let server = HttpServer::start(&["--allow-host", "mcp.invalid"]);
    let proxy = format!("http://{}", server.authority);
    let unset = ["http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"];
    for pin in [None, Some("2025-06-18")] {
        let mut args = vec!["call", "http://mcp.invalid/mcp", "echo", "text=proxied"];
        if let Some(v) = pin {
            args.extend(["--protocol-version", v]);
        }
        let mut cmd = Command::new(mcp_bin());
        cmd.args(&args).env("HTTP_PROXY", &proxy);
        for name in unset.iter().chain(&["MCP_CONFIG", "MCP_BEARER_TOKEN"]) {
            cmd.env_remove(name);
        }
        let out = output_within(&mut cmd, DEADLINE, "mcp call through the proxy");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "proxied\n", "{pin:?}: {stderr}");
        assert!(out.status.success(), "{pin:?}: {stderr}");
    }
    let mut cmd = Command::new(mcp_bin());
    cmd.args(["call", "http://mcp.invalid/mcp", "echo", "text=direct"]).env_remove("HTTP_PROXY");
    for name in unset {
        cmd.env_remove(name);
    }
    let out = output_within(&mut cmd, DEADLINE, "mcp call without the proxy");
    assert!(!out.status.success(), "a host that does not resolve was reached: {out:?}");
}

#[test]
fn config_file_targets() {
    let dir = temp_dir("config");
    let config = dir.join("servers.json");
    let body = serde_json::json!({"mcpServers": {
        "reference": {"command": mcp_bin(), "args": ["serve"]},
        "broken": {"args": []}
    }});
    std::fs::write(&config, body.to_string()).unwrap();
    let config_arg = config.to_string_lossy().into_owned();

    let r = run(&["call", "reference", "echo", "text=from config", "--config", &config_arg]);
    r.assert_code(0);
    assert_eq!(r.stdout, "from config\n");

    let r = run(&["info", "referense", "--config", &config_arg]);
    r.assert_code(2);
    assert_eq!(r.error_lines().len(), 1);
    assert!(
        r.stderr.contains("names no server `referense` (did you mean `reference`?); its servers: reference, broken"),
        "{}",
        r.stderr
    );

    let r = run(&["info", "broken", "--config", &config_arg]);
    r.assert_code(2);
    assert!(r.stderr.contains("has neither `command` nor `url`"), "{}", r.stderr);

    // The default search: ./.mcp.json first, VS Code's `servers` in ./.vscode/mcp.json (with
    // comments), then files under HOME.
    let project = dir.join("project");
    let home = dir.join("home");
    std::fs::create_dir_all(project.join(".vscode")).unwrap();
    std::fs::create_dir_all(home.join(".cursor")).unwrap();
    let home_s = home.to_string_lossy().into_owned();
    let env = [("HOME", home_s.as_str()), ("XDG_CONFIG_HOME", home_s.as_str())];
    let vscode = format!(
        "{{\n  // VS Code\n  \"servers\": {{ \"vs\": {{ \"type\": \"stdio\", \"command\": {:?}, \"args\": [\"serve\"], }} }},\n}}",
        mcp_bin()
    );
    std::fs::write(project.join(".vscode/mcp.json"), vscode).unwrap();
    let cursor = serde_json::json!({"mcpServers": {"cur": {"command": mcp_bin(), "args": ["serve"]}}});
    std::fs::write(home.join(".cursor/mcp.json"), cursor.to_string()).unwrap();
    for name in ["vs", "cur"] {
        let r = run_in(&["call", name, "echo", &format!("text={name}")], Some(&project), &env);
        r.assert_code(0);
        assert_eq!(r.stdout, format!("{name}\n"));
    }
    // A word no config names, and no program either.
    let r = run_in(&["info", "no-such-server-anywhere"], Some(&project), &env);
    r.assert_code(3);
    assert_eq!(r.error_lines().len(), 1);
    assert!(
        r.stderr.contains("cannot start `no-such-server-anywhere`: no such program (nor is it a server name in"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains(".vscode/mcp.json"), "{}", r.stderr);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_command_that_exits_immediately() {
    let r = run(&["info", "sh -c 'echo something went wrong >&2; exit 7'"]);
    r.assert_code(3);
    assert_eq!(
        r.error_lines(),
        ["mcp: `sh -c 'echo something went wrong >&2; exit 7'` exited with status 7 before completing the MCP handshake; its stderr ended with: something went wrong"]
    );
    let r = run(&["list", "/nonexistent/server"]);
    r.assert_code(3);
    assert_eq!(r.error_lines(), ["mcp: cannot start `/nonexistent/server`: no such program"]);
}

#[test]
fn a_server_that_never_answers_times_out() {
    let r = run(&["info", "sleep 30", "--timeout", "1"]);
    r.assert_code(5);
    assert_eq!(r.error_lines().len(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("did not answer"), "{}", r.stderr);
    assert!(r.elapsed < Duration::from_secs(15), "took {:?}", r.elapsed);
}

#[test]
fn an_unreachable_http_target_is_a_connection_failure() {
    let r = run(&["list", "http://127.0.0.1:9/mcp"]);
    r.assert_code(3);
    assert_eq!(r.error_lines().len(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("127.0.0.1:9"), "{}", r.stderr);
}

#[test]
fn usage_errors_exit_2() {
    let r = run(&["call"]);
    r.assert_code(2);
    let r = run(&["info", &serve(), "--protocol-version", "1999-01-01"]);
    r.assert_code(2);
    assert!(r.stderr.contains("unknown protocol revision"));
    let r = run(&["info", &serve(), "--timeout", "-1"]);
    r.assert_code(2);
    let r = run(&["call", &serve(), "echo", "--elicit", "{", "text=x"]);
    r.assert_code(2);
    assert_eq!(r.error_lines().len(), 1);
}

#[test]
fn the_trace_shows_both_directions() {
    let r = run(&["info", &serve(), "-v"]);
    r.assert_code(0);
    assert!(r.stderr.lines().any(|l| l.contains("→ {") && l.contains("server/discover")), "{}", r.stderr);
    assert!(r.stderr.lines().any(|l| l.contains("← {") && l.contains("supportedVersions")), "{}", r.stderr);
}

#[test]
fn help_shows_examples() {
    for sub in
        [None, Some("info"), Some("list"), Some("call"), Some("read"), Some("prompt"), Some("complete"), Some("serve")]
    {
        let mut args = Vec::new();
        args.extend(sub);
        args.push("--help");
        let r = run(&args);
        r.assert_code(0);
        assert!(r.stdout.contains("Example"), "{sub:?}:\n{}", r.stdout);
    }
    let r = run(&["--help"]);
    assert!(r.stdout.contains("Exit codes:"));
}
