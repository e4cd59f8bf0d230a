//! The client commands, once connected: `info`, `list`, `call`, `read`, `prompt`, `complete`.

use std::collections::{BTreeMap, HashSet};

use mcpwire_client::{ClientError, ClientSession, Era, ServerNotification};
use mcpwire_protocol::error::METHOD_NOT_FOUND;
use mcpwire_protocol::types::{
    CallToolResult, CompleteParams, CompletionArgument, CompletionContext, CompletionReference, ContentBlock, Prompt,
    Resource, ResourceTemplate, Role, Tool,
};
use mcpwire_protocol::Method;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

use super::args::{ClientCommand, ListKind};
use super::arguments::{self, signature, suggest};
use super::connection::Connected;
use super::error::{one_line, CliError, Exit};
use super::output::{
    out, out_json, print_block, print_resource_contents, print_tool_result, table, terminal_width, Saver,
};
use super::settle::{ListChanges, Settle};

/// How a command fails: a client error (explained with what became of the server) or an
/// error already worded for the user.
#[derive(Debug)]
pub enum CommandError {
    /// The client runtime failed.
    Client(Box<ClientError>),
    /// Anything else.
    Cli(CliError),
}

impl From<ClientError> for CommandError {
    fn from(e: ClientError) -> Self {
        Self::Client(Box::new(e))
    }
}

impl From<CliError> for CommandError {
    fn from(e: CliError) -> Self {
        Self::Cli(e)
    }
}

type Outcome = Result<Exit, CommandError>;

/// Runs a connected command; `changes` counts the server's list changes since it connected
/// (`mcp list` follows those made just after the handshake).
pub async fn run(conn: &Connected, command: ClientCommand, saver: &Saver, changes: &ListChanges) -> Outcome {
    let json = command.connect_options().json;
    match command {
        ClientCommand::Info { .. } => info(conn, json),
        ClientCommand::List { kind, settle, .. } => {
            let settle = Settle::after_handshake(std::time::Duration::from_millis(settle));
            list(conn, kind, json, changes, settle).await
        }
        ClientCommand::Call { tool, arguments, args_json, no_check, .. } => {
            call(conn, &tool, &arguments, args_json.as_deref(), no_check, json, saver).await
        }
        ClientCommand::Read { uri, .. } => read(conn, &uri, json, saver).await,
        ClientCommand::Prompt { name, arguments, no_check, .. } => {
            prompt(conn, &name, &arguments, no_check, json, saver).await
        }
        ClientCommand::Complete { prompt, resource, argument, prefix, context, .. } => {
            complete(conn, prompt, resource, argument, prefix, &context, json).await
        }
    }
}

// ---- info ----

fn capability_summary(caps: &Value) -> Vec<String> {
    let Some(caps) = caps.as_object() else { return Vec::new() };
    caps.iter()
        .map(|(name, value)| {
            let flags: Vec<String> = match value {
                Value::Object(o) => o
                    .iter()
                    .filter(|(_, v)| !matches!(v, Value::Bool(false) | Value::Null))
                    .map(|(k, _)| k.clone())
                    .collect(),
                _ => Vec::new(),
            };
            if flags.is_empty() {
                name.clone()
            } else {
                format!("{name} ({})", flags.join(", "))
            }
        })
        .collect()
}

fn info(conn: &Connected, json: bool) -> Outcome {
    let s = &conn.session;
    let era = match s.era() {
        Era::Modern => "modern",
        Era::Legacy => "legacy",
    };
    let caps = serde_json::to_value(s.server_capabilities()).unwrap_or(Value::Null);
    let server = s.server_info();
    if json {
        out_json(&json!({
            "serverInfo": server,
            "era": era,
            "protocolVersion": s.protocol_version().as_str(),
            "transport": conn.target.transport(),
            "capabilities": caps,
            "instructions": s.instructions(),
        }));
        return Ok(Exit::Ok);
    }
    let mut lines: Vec<(&str, String)> = Vec::new();
    match &server {
        Some(info) => {
            let mut who = format!("{} {}", info.name, info.version);
            if let Some(title) = info.title.as_ref().filter(|t| **t != info.name) {
                who.push_str(&format!(" ({title})"));
            }
            lines.push(("Server", who));
            if let Some(d) = &info.description {
                lines.push(("Description", one_line(d)));
            }
            if let Some(w) = &info.website_url {
                lines.push(("Website", w.clone()));
            }
        }
        None => lines.push(("Server", "(the server did not say)".into())),
    }
    let era_text = match s.era() {
        Era::Modern => "modern (stateless: server/discover, _meta on every request)",
        Era::Legacy => "legacy (initialize handshake)",
    };
    lines.push(("Era", era_text.into()));
    lines.push(("Protocol", s.protocol_version().as_str().into()));
    lines.push(("Transport", format!("{} {}", conn.target.transport(), conn.target.label())));
    let summary = capability_summary(&caps);
    lines.push(("Capabilities", if summary.is_empty() { "none".into() } else { summary.join(", ") }));
    let mut text = String::new();
    for (key, value) in lines {
        text.push_str(&format!("{key:<13} {value}\n"));
    }
    if let Some(instructions) = s.instructions().filter(|i| !i.trim().is_empty()) {
        text.push_str("Instructions\n");
        for line in instructions.trim_end().lines() {
            text.push_str(&format!("  {line}\n"));
        }
    }
    out(&text);
    Ok(Exit::Ok)
}

// ---- list ----

/// Every item of a paginated list, as the server sent it.
async fn list_raw(session: &ClientSession, method: Method, key: &str) -> Result<Vec<Value>, CommandError> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    for _ in 0..1000 {
        let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
        let result = session.request(method.as_str(), params).await?;
        match result.get(key) {
            Some(Value::Array(page)) => items.extend(page.iter().cloned()),
            None | Some(Value::Null) => {}
            Some(_) => return Err(CliError::protocol(format!("{method}: `{key}` is not an array")).into()),
        }
        match result.get("nextCursor").and_then(Value::as_str) {
            Some(next) if !next.is_empty() => {
                if !seen.insert(next.to_owned()) {
                    return Err(CliError::protocol(format!("{method}: the server repeated a cursor")).into());
                }
                cursor = Some(next.to_owned());
            }
            _ => return Ok(items),
        }
    }
    Err(CliError::protocol(format!("{method}: more than 1000 pages")).into())
}

fn decode_all<T: DeserializeOwned>(items: &[Value]) -> Vec<Result<T, (String, String)>> {
    items
        .iter()
        .map(|v| {
            serde_json::from_value(v.clone()).map_err(|e| {
                let name = v.get("name").or_else(|| v.get("uri")).and_then(Value::as_str).unwrap_or("?").to_owned();
                (name, e.to_string())
            })
        })
        .collect()
}

struct Kind {
    method: Method,
    key: &'static str,
    title: &'static str,
}

fn kind_info(kind: ListKind) -> Kind {
    match kind {
        ListKind::Tools => Kind { method: Method::ListTools, key: "tools", title: "Tools" },
        ListKind::Resources => Kind { method: Method::ListResources, key: "resources", title: "Resources" },
        ListKind::Templates => {
            Kind { method: Method::ListResourceTemplates, key: "resourceTemplates", title: "Resource templates" }
        }
        ListKind::Prompts => Kind { method: Method::ListPrompts, key: "prompts", title: "Prompts" },
    }
}

fn offered(session: &ClientSession, kind: ListKind) -> bool {
    let caps = session.server_capabilities();
    match kind {
        ListKind::Tools => caps.tools.is_some(),
        ListKind::Resources | ListKind::Templates => caps.resources.is_some(),
        ListKind::Prompts => caps.prompts.is_some(),
    }
}

/// The first paragraph of a description, on one line.
fn short(text: Option<&str>) -> String {
    let text = text.unwrap_or_default().trim();
    one_line(text.split("\n\n").next().unwrap_or_default())
}

fn tool_rows(items: &[Value]) -> Vec<Vec<String>> {
    decode_all::<Tool>(items)
        .into_iter()
        .map(|t| match t {
            Ok(tool) => {
                let mut description = short(tool.description.as_deref());
                if let Some(title) = tool.title.as_ref().or(tool.annotations.as_ref().and_then(|a| a.title.as_ref())) {
                    if !description.is_empty() {
                        description = format!("{title}: {description}");
                    } else {
                        description = title.clone();
                    }
                }
                if let Some(a) = &tool.annotations {
                    let mut hints = Vec::new();
                    if a.read_only_hint == Some(true) {
                        hints.push("read-only");
                    }
                    if a.destructive_hint == Some(true) && a.read_only_hint != Some(true) {
                        hints.push("destructive");
                    }
                    if a.idempotent_hint == Some(true) {
                        hints.push("idempotent");
                    }
                    if a.open_world_hint == Some(true) {
                        hints.push("open-world");
                    }
                    if !hints.is_empty() {
                        description.push_str(&format!(" [{}]", hints.join(", ")));
                    }
                }
                vec![tool.name.clone(), signature(&tool.input_schema), description]
            }
            Err((name, e)) => vec![name, String::new(), format!("(not a valid tool: {e})")],
        })
        .collect()
}

fn prompt_rows(items: &[Value]) -> Vec<Vec<String>> {
    decode_all::<Prompt>(items)
        .into_iter()
        .map(|p| match p {
            Ok(p) => {
                let args = p
                    .arguments
                    .iter()
                    .flatten()
                    .map(|a| format!("{}{}", a.name, if a.required == Some(true) { "" } else { "?" }))
                    .collect::<Vec<_>>()
                    .join(", ");
                let mut description = short(p.description.as_deref());
                if let Some(title) = &p.title {
                    description =
                        if description.is_empty() { title.clone() } else { format!("{title}: {description}") };
                }
                vec![p.name, args, description]
            }
            Err((name, e)) => vec![name, String::new(), format!("(not a valid prompt: {e})")],
        })
        .collect()
}

fn resource_rows(items: &[Value]) -> Vec<Vec<String>> {
    decode_all::<Resource>(items)
        .into_iter()
        .map(|r| match r {
            Ok(r) => {
                vec![r.uri, r.title.unwrap_or(r.name), r.mime_type.unwrap_or_default(), short(r.description.as_deref())]
            }
            Err((uri, e)) => vec![uri, String::new(), String::new(), format!("(not a valid resource: {e})")],
        })
        .collect()
}

fn template_rows(items: &[Value]) -> Vec<Vec<String>> {
    decode_all::<ResourceTemplate>(items)
        .into_iter()
        .map(|t| match t {
            Ok(t) => vec![
                t.uri_template,
                t.title.unwrap_or(t.name),
                t.mime_type.unwrap_or_default(),
                short(t.description.as_deref()),
            ],
            Err((name, e)) => vec![name, String::new(), String::new(), format!("(not a valid template: {e})")],
        })
        .collect()
}

fn render(kind: ListKind, items: &[Value]) -> String {
    let width = terminal_width();
    match kind {
        ListKind::Tools => table(&["NAME", "ARGUMENTS", "DESCRIPTION"], &tool_rows(items), width),
        ListKind::Prompts => table(&["NAME", "ARGUMENTS", "DESCRIPTION"], &prompt_rows(items), width),
        ListKind::Resources => table(&["URI", "NAME", "TYPE", "DESCRIPTION"], &resource_rows(items), width),
        ListKind::Templates => table(&["URI TEMPLATE", "NAME", "TYPE", "DESCRIPTION"], &template_rows(items), width),
    }
}

/// Whether `kind`'s list may change after the handshake and be announced: the legacy era (a
/// 2026-07-28 server has no handshake to follow), a server that says it sends the
/// announcement.
fn may_change(session: &ClientSession, kind: ListKind) -> bool {
    let caps = session.server_capabilities();
    session.era() == Era::Legacy
        && match kind {
            ListKind::Tools => caps.tools.and_then(|c| c.list_changed),
            ListKind::Resources | ListKind::Templates => caps.resources.and_then(|c| c.list_changed),
            ListKind::Prompts => caps.prompts.and_then(|c| c.list_changed),
        } == Some(true)
}

/// One list as `mcp list` shows it: `None` when the server does not offer it, and the
/// number of announced changes it is as new as.
async fn take_list(
    conn: &Connected,
    k: ListKind,
    single: bool,
    changes: &ListChanges,
) -> Result<(Option<Vec<Value>>, u64), CommandError> {
    let session = &conn.session;
    let info = kind_info(k);
    let seen = changes.count(k);
    if !offered(session, k) {
        if single {
            conn.ui.note(&format!("the server does not offer {}", info.title.to_lowercase()));
        }
        return Ok((None, seen));
    }
    match list_raw(session, info.method, info.key).await {
        Ok(items) => Ok((Some(items), seen)),
        // A server may offer resources without templates.
        Err(CommandError::Client(e)) if !single && e.code() == Some(METHOD_NOT_FOUND) => Ok((None, seen)),
        Err(e) => Err(e),
    }
}

/// How many times, at most, the lists are taken again after changes (a server announcing
/// changes without end still gets an answer).
const MAX_RELISTS: usize = 20;

async fn list(conn: &Connected, kind: Option<ListKind>, json: bool, changes: &ListChanges, settle: Settle) -> Outcome {
    let session = &conn.session;
    let all = [ListKind::Tools, ListKind::Resources, ListKind::Templates, ListKind::Prompts];
    let kinds: Vec<ListKind> = match kind {
        Some(k) => vec![k],
        None => all.to_vec(),
    };
    let single = kind.is_some();
    let mut watch = changes.watch();
    let mut results: Vec<(ListKind, Option<Vec<Value>>, u64)> = Vec::new();
    for &k in &kinds {
        let (items, seen) = take_list(conn, k, single, changes).await?;
        results.push((k, items, seen));
    }
    // Follow the changes announced within the settle window (see `settle`). Changes
    // announced before the lists were taken are in them already: they count as followed.
    let mut followed = results.iter().any(|(_, _, seen)| *seen > 0).then(tokio::time::Instant::now);
    for _ in 0..MAX_RELISTS {
        let mut stale = false;
        for (k, items, seen) in results.iter_mut() {
            if may_change(session, *k) && changes.count(*k) != *seen {
                (*items, *seen) = take_list(conn, *k, single, changes).await?;
                stale = true;
            }
        }
        if stale {
            followed = Some(tokio::time::Instant::now());
            continue;
        }
        if !kinds.iter().any(|k| may_change(session, *k)) || !settle.next_change(&mut watch, followed).await {
            break;
        }
    }
    let results: Vec<(ListKind, Option<Vec<Value>>)> = results.into_iter().map(|(k, items, _)| (k, items)).collect();
    if json {
        let mut object = Map::new();
        for (k, items) in &results {
            object.insert(kind_info(*k).key.to_owned(), Value::Array(items.clone().unwrap_or_default()));
        }
        out_json(&Value::Object(object));
        return Ok(Exit::Ok);
    }
    let mut text = String::new();
    for (k, items) in &results {
        let info = kind_info(*k);
        match items {
            None if single => {}
            None => text.push_str(&format!("{}: not offered\n\n", info.title)),
            Some(items) if items.is_empty() && single => {
                conn.ui.note(&format!("the server has no {}", info.title.to_lowercase()))
            }
            Some(items) if items.is_empty() => text.push_str(&format!("{}: none\n\n", info.title)),
            Some(items) => {
                if !single {
                    text.push_str(&format!("{} ({})\n", info.title, items.len()));
                }
                text.push_str(&render(*k, items));
                if !single {
                    text.push('\n');
                }
            }
        }
    }
    if !text.is_empty() {
        out(text.trim_end_matches('\n'));
    }
    Ok(Exit::Ok)
}

// ---- call ----

/// How long a missing tool is waited for when the server may still add it (see `find_tool`).
/// Only a call of a tool the list lacks waits; a loaded machine has been seen to take more
/// than half a second (server-everything over HTTP, in CI).
const LATE_TOOLS: std::time::Duration = std::time::Duration::from_secs(3);

async fn list_tools(session: &ClientSession) -> Result<Vec<Tool>, CommandError> {
    let items = list_raw(session, Method::ListTools, "tools").await?;
    Ok(decode_all::<Tool>(&items).into_iter().filter_map(Result::ok).collect())
}

/// Waits until the server says its tool list changed (or did already, since `changes` was
/// subscribed), or until `wait` has passed.
async fn tool_change_or(changes: &mut tokio::sync::broadcast::Receiver<ServerNotification>, wait: std::time::Duration) {
    let seen = async {
        loop {
            match changes.recv().await {
                Ok(ServerNotification::ToolsListChanged) | Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                    return
                }
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
            }
        }
    };
    let _ = tokio::time::timeout(wait, seen).await;
}

async fn find_tool(session: &ClientSession, name: &str) -> Result<Tool, CommandError> {
    let mut changes = session.notifications();
    let mut tools = list_tools(session).await?;
    if let Some(tool) = tools.iter().find(|t| t.name == name) {
        return Ok(tool.clone());
    }
    // A server may add tools just after the handshake, once it knows the client's
    // capabilities (server-everything adds its sampling and elicitation tools so), and say
    // so with `tools/list_changed`: such a tool is waited for briefly before it is missing.
    // Over Streamable HTTP that notification can be sent before the client's GET stream is
    // open, and then never arrives: the list is taken again at the end of the wait all the
    // same (which a change seen ends early).
    let announces = session.server_capabilities().tools.and_then(|t| t.list_changed) == Some(true);
    if announces {
        tool_change_or(&mut changes, LATE_TOOLS).await;
        tools = list_tools(session).await?;
        if let Some(tool) = tools.iter().find(|t| t.name == name) {
            return Ok(tool.clone());
        }
    }
    let hint = suggest(name, tools.iter().map(|t| t.name.as_str()))
        .map(|s| format!("did you mean `{s}`? "))
        .unwrap_or_default();
    Err(CliError::usage(format!(
        "the server has no tool `{name}`; {hint}(`mcp list TARGET tools` lists its {} tools)",
        tools.len()
    ))
    .into())
}

async fn call(
    conn: &Connected,
    name: &str,
    pairs: &[String],
    args_json: Option<&str>,
    no_check: bool,
    json: bool,
    saver: &Saver,
) -> Outcome {
    let arguments = if no_check {
        arguments::unchecked_arguments(args_json, pairs)?
    } else {
        let tool = find_tool(&conn.session, name).await?;
        arguments::tool_arguments(&tool, args_json, pairs)?
    };
    let ui = conn.ui.clone();
    let session = conn.session.with_progress(move |p| ui.progress(&p));
    let result = session.call_tool(name, Value::Object(arguments)).await;
    conn.ui.finish_progress();
    let result = result?;
    let failed = result.is_error == Some(true);
    if json {
        out_json(&serde_json::to_value(&result).unwrap_or(Value::Null));
    } else {
        print_call_result(conn, name, &result, saver)?;
    }
    Ok(if failed { Exit::ToolError } else { Exit::Ok })
}

fn print_call_result(conn: &Connected, name: &str, result: &CallToolResult, saver: &Saver) -> Result<(), CliError> {
    if result.is_error == Some(true) {
        let text: Vec<&str> = result.content.iter().filter_map(ContentBlock::as_text).collect();
        let text = if text.is_empty() { "(no message)".to_owned() } else { one_line(&text.join(" ")) };
        conn.ui.note(&format!("tool `{name}` reported an error: {text}"));
        for block in result.content.iter().filter(|b| b.as_text().is_none()) {
            print_block(block, saver, name)?;
        }
        return Ok(());
    }
    if !print_tool_result(result, saver, name)? {
        conn.ui.note(&format!("tool `{name}` returned no content"));
    }
    Ok(())
}

// ---- read ----

async fn read(conn: &Connected, uri: &str, json: bool, saver: &Saver) -> Outcome {
    let ui = conn.ui.clone();
    let session = conn.session.with_progress(move |p| ui.progress(&p));
    let result = session.read_resource(uri).await;
    conn.ui.finish_progress();
    let result = result?;
    if json {
        out_json(&serde_json::to_value(&result).unwrap_or(Value::Null));
        return Ok(Exit::Ok);
    }
    if result.contents.is_empty() {
        conn.ui.note(&format!("{uri} has no contents"));
    }
    let several = result.contents.len() > 1;
    for contents in &result.contents {
        print_resource_contents(contents, saver, several)?;
    }
    Ok(Exit::Ok)
}

// ---- prompt ----

async fn prompt(conn: &Connected, name: &str, pairs: &[String], no_check: bool, json: bool, saver: &Saver) -> Outcome {
    let mut arguments = BTreeMap::new();
    for pair in pairs {
        let (key, value, _) = arguments::split_pair(pair)?;
        if arguments.insert(key.to_owned(), value.to_owned()).is_some() {
            return Err(CliError::usage(format!("argument `{key}` is given twice")).into());
        }
    }
    if !no_check {
        check_prompt(&conn.session, name, &arguments).await?;
    }
    let ui = conn.ui.clone();
    let session = conn.session.with_progress(move |p| ui.progress(&p));
    let result = session.get_prompt(name, arguments).await;
    conn.ui.finish_progress();
    let result = result?;
    if json {
        out_json(&serde_json::to_value(&result).unwrap_or(Value::Null));
        return Ok(Exit::Ok);
    }
    if let Some(d) = result.description.as_deref().filter(|d| !d.trim().is_empty()) {
        out(&format!("# {}", one_line(d)));
        out("");
    }
    for (i, message) in result.messages.iter().enumerate() {
        if i > 0 {
            out("");
        }
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        out(&format!("[{role}]"));
        print_block(&message.content, saver, name)?;
    }
    Ok(Exit::Ok)
}

async fn check_prompt(
    session: &ClientSession,
    name: &str,
    arguments: &BTreeMap<String, String>,
) -> Result<(), CommandError> {
    let items = list_raw(session, Method::ListPrompts, "prompts").await?;
    let prompts: Vec<Prompt> = decode_all::<Prompt>(&items).into_iter().filter_map(Result::ok).collect();
    let Some(prompt) = prompts.iter().find(|p| p.name == name) else {
        let hint = suggest(name, prompts.iter().map(|p| p.name.as_str()))
            .map(|s| format!("did you mean `{s}`? "))
            .unwrap_or_default();
        return Err(CliError::usage(format!(
            "the server has no prompt `{name}`; {hint}(`mcp list TARGET prompts` lists its {} prompts)",
            prompts.len()
        ))
        .into());
    };
    let declared: Vec<&str> = prompt.arguments.iter().flatten().map(|a| a.name.as_str()).collect();
    let takes = if declared.is_empty() {
        "it takes no arguments".to_owned()
    } else {
        format!("it takes: {}", declared.join(", "))
    };
    for key in arguments.keys() {
        if !declared.contains(&key.as_str()) {
            let hint =
                suggest(key, declared.iter().copied()).map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default();
            return Err(CliError::usage(format!("prompt `{name}` has no argument `{key}`{hint}; {takes}")).into());
        }
    }
    let missing: Vec<String> = prompt
        .arguments
        .iter()
        .flatten()
        .filter(|a| a.required == Some(true) && !arguments.contains_key(&a.name))
        .map(|a| format!("`{}`", a.name))
        .collect();
    if !missing.is_empty() {
        let (s, them) = if missing.len() == 1 { ("", "it") } else { ("s", "them") };
        return Err(CliError::usage(format!(
            "prompt `{name}` needs argument{s} {} (give {them} as key=value)",
            missing.join(", ")
        ))
        .into());
    }
    Ok(())
}

// ---- complete ----

async fn complete(
    conn: &Connected,
    prompt: Option<String>,
    resource: Option<String>,
    argument: String,
    prefix: String,
    context: &[String],
    json: bool,
) -> Outcome {
    let reference = match (prompt, resource) {
        (Some(name), _) => CompletionReference::Prompt { name },
        (None, Some(uri)) => CompletionReference::Resource { uri },
        (None, None) => return Err(CliError::usage("give --prompt NAME or --resource TEMPLATE").into()),
    };
    let mut chosen = BTreeMap::new();
    for pair in context {
        let (key, value, _) = arguments::split_pair(pair)?;
        chosen.insert(key.to_owned(), value.to_owned());
    }
    let params = CompleteParams {
        reference,
        argument: CompletionArgument { name: argument, value: prefix },
        context: (!chosen.is_empty()).then_some(CompletionContext { arguments: Some(chosen) }),
    };
    let result = conn.session.complete(params).await?;
    if json {
        out_json(&serde_json::to_value(&result).unwrap_or(Value::Null));
        return Ok(Exit::Ok);
    }
    let completion = &result.completion;
    if completion.values.is_empty() {
        conn.ui.note("no completions");
    } else {
        out(&completion.values.join("\n"));
    }
    let shown = completion.values.len() as u64;
    match (completion.total, completion.has_more) {
        (Some(total), _) if total > shown => conn.ui.note(&format!("{} more not shown", total - shown)),
        (_, Some(true)) => conn.ui.note("more not shown"),
        _ => {}
    }
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_read_as_a_list() {
        let caps = json!({"tools": {"listChanged": true}, "resources": {"subscribe": true, "listChanged": false},
            "logging": {}, "extensions": {"io.x/y": {}}});
        assert_eq!(
            capability_summary(&caps),
            ["tools (listChanged)", "resources (subscribe)", "logging", "extensions (io.x/y)"]
        );
    }

    #[test]
    fn tool_rows_show_signatures_titles_and_hints() {
        let items = vec![
            json!({"name": "add", "title": "Add", "description": "Adds.\n\nMore text.", "inputSchema": {"type": "object",
                "properties": {"a": {"type": "number"}}, "required": ["a"]}, "annotations": {"readOnlyHint": true}}),
            json!({"name": "broken"}),
        ];
        let rows = tool_rows(&items);
        assert_eq!(rows[0], ["add", "a: number", "Add: Adds. [read-only]"]);
        assert_eq!(rows[1][0], "broken");
        assert!(rows[1][2].starts_with("(not a valid tool"));
    }
}
