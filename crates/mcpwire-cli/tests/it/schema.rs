//! Proof that every message the reference server emits validates against the official JSON
//! schema of the protocol revision it speaks (`spec/schema/<revision>/schema.json`), with
//! members the revision does not define forbidden.
//!
//! The file is laid out in five parts:
//!
//! 1. **Schemas**: loading each revision's schema and building its *strict* copy, in which
//!    every object schema with `properties` and no `additionalProperties` gets
//!    `additionalProperties: false` (free-form zones, `_meta` objects and `allOf` members
//!    excepted; see [`strict_copy`]).
//! 2. **Classification**: which definition each kind of server message is validated against
//!    (results by the method of the request they answer, notifications and server requests by
//!    method, envelopes and errors by revision). A message that cannot be mapped is a failure.
//! 3. **The scripted client**: drives `reference::server()` over `memory::pair()`, answers
//!    the server's own requests (sampling, elicitation, roots) and records every message the
//!    server sends. Every wait is bounded.
//! 4. **Scenarios**: the legacy session (2024-11-05 .. 2025-11-25; 2025-11-25 adds the
//!    task scenario) and the stateless 2026-07-28 session, each touching every method, tool,
//!    resource and prompt, with a few semantic checks on the way.
//! 5. **Tests**: one per revision, plus checks of the strict rewrite itself.
//!
//! The official schemas carry no `examples` keyword in any revision, so there is nothing to
//! round-trip through `mcpwire_protocol::types`; [`schemas_hold_no_examples`] fails if that ever
//! changes, so that the round trip gets written then.

use mcpwire_cli::reference;

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{Draft, ValidationError, ValidatorMap};
use mcpwire_protocol::types::{
    meta_keys, CallToolResult, GetPromptResult, Prompt, PromptMessage, ReadResourceResult, Resource, ResourceContents,
    Tool,
};
use mcpwire_server::Server;
use mcpwire_transport::{memory, Connection};
use serde_json::{json, Map, Value};

/// Every revision with a schema in the repository, oldest first.
const REVISIONS: [&str; 5] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];

/// The modern (stateless) revision.
const MODERN: &str = "2026-07-28";

/// The longest wait for any one message from the server.
const WAIT: Duration = Duration::from_secs(10);

/// How long the connection must stay quiet before a drain ends.
const QUIET: Duration = Duration::from_millis(300);

/// Bound on a whole scenario.
const SCENARIO_LIMIT: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------------------------
// 1. Schemas
// ---------------------------------------------------------------------------------------------

/// Property names whose sub-schemas describe free-form content (user schemas, arbitrary JSON,
/// metadata): the strict rewrite never enters them.
const FREE_FORM: [&str; 6] =
    ["_meta", "structuredContent", "inputSchema", "outputSchema", "requestedSchema", "arguments"];

/// Whether the sub-schema of property `name` is a free-form zone. `arguments` is free-form
/// where it is an object of values (tool, prompt and completion arguments), but not where it
/// is `Prompt.arguments`, an array of the spec-defined `PromptArgument`.
fn is_free_form(name: &str, schema: &Value) -> bool {
    FREE_FORM.contains(&name) && !(name == "arguments" && schema.get("type") == Some(&json!("array")))
}

/// Where a sub-schema sits.
#[derive(Debug, Clone, Copy)]
struct Pos {
    /// Inside a free-form zone.
    free: bool,
    /// A direct member of an `allOf`.
    all_of_member: bool,
}

const TOP: Pos = Pos { free: false, all_of_member: false };

/// Visits `schema` and every sub-schema below it (not following `$ref`, not entering
/// `definitions`/`$defs`), telling the visitor where each one sits.
fn walk(schema: &mut Value, pos: Pos, visit: &mut dyn FnMut(&mut Value, Pos)) {
    if !schema.is_object() {
        return;
    }
    visit(schema, pos);
    let inner = Pos { free: pos.free, all_of_member: false };
    let Value::Object(obj) = schema else { return };
    for (key, value) in obj.iter_mut() {
        match key.as_str() {
            "properties" => {
                if let Value::Object(props) = value {
                    for (name, sub) in props.iter_mut() {
                        let free = pos.free || is_free_form(name, sub);
                        walk(sub, Pos { free, all_of_member: false }, visit);
                    }
                }
            }
            "patternProperties" | "dependentSchemas" => {
                if let Value::Object(props) = value {
                    for sub in props.values_mut() {
                        walk(sub, inner, visit);
                    }
                }
            }
            "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "additionalItems" => walk(value, inner, visit),
            "items" | "anyOf" | "oneOf" | "prefixItems" => match value {
                Value::Array(items) => items.iter_mut().for_each(|s| walk(s, inner, visit)),
                other => walk(other, inner, visit),
            },
            "allOf" => {
                if let Value::Array(items) = value {
                    let member = Pos { free: pos.free, all_of_member: true };
                    items.iter_mut().for_each(|s| walk(s, member, visit));
                }
            }
            _ => {}
        }
    }
}

/// A `$ref` found in a definition.
struct Reference {
    from: String,
    to: String,
    pos: Pos,
}

/// What the strict rewrite did.
#[derive(Debug, Default)]
struct Rewrite {
    /// Object schemas that got `additionalProperties: false`.
    closed: usize,
    /// `allOf` members replaced by an open copy of the definition they named.
    inlined: usize,
    /// Definitions left exactly as published (`_meta` objects and free-form content).
    untouched: Vec<String>,
}

/// Builds the strict copy of a schema document.
///
/// Every object schema (anywhere in a definition) that has `properties` and no
/// `additionalProperties` key gets `additionalProperties: false`, except:
/// - sub-schemas under a free-form property ([`FREE_FORM`]);
/// - direct members of an `allOf` (closing one branch would reject the other branches'
///   members); a member that is a `$ref` is replaced by an open copy of the definition it
///   names (`Task` beside `Result` in 2025-11-25, `Error` in the 2026 typed errors), so that
///   the definition stays closed wherever else it is used;
/// - the `*MetaObject` definitions (the insides of `_meta`);
/// - the definitions free-form content is made of: those referred to from within the above,
///   transitively, and the unions of nothing else (the primitive and enum schemas of a
///   `requestedSchema` in 2025-06-18+, `Implementation` where it only appears as `_meta`
///   server/client info), unless spec-defined content outside the free zones uses them too.
///
/// Schemas that already say something about `additionalProperties` (`Result`,
/// `inputSchema`, capability maps) keep what they say.
fn strict_copy(doc: &Value, defs_key: &str) -> (Value, Rewrite) {
    let published = doc[defs_key].as_object().expect("schema document without definitions");
    let target =
        |s: &Value| s.get("$ref").and_then(Value::as_str).map(|r| r.rsplit('/').next().unwrap_or_default().to_owned());
    // Where every reference comes from.
    let mut refs = Vec::new();
    for (name, def) in published {
        let mut copy = def.clone();
        walk(&mut copy, TOP, &mut |s, pos| {
            if let Some(to) = target(s) {
                refs.push(Reference { from: name.clone(), to, pos });
            }
        });
    }
    let meta: BTreeSet<String> = published.keys().filter(|n| n.ends_with("MetaObject")).cloned().collect();
    // Free content: what `_meta` and the free-form zones refer to, what that refers to, and
    // the unions made only of free content (`EnumSchema` beside `PrimitiveSchemaDefinition`).
    let mut free: BTreeSet<String> = meta.clone();
    free.extend(refs.iter().filter(|r| r.pos.free).map(|r| r.to.clone()));
    loop {
        let mut more: BTreeSet<String> = refs
            .iter()
            .filter(|r| free.contains(&r.from))
            .map(|r| r.to.clone())
            .filter(|t| !free.contains(t))
            .collect();
        for (name, def) in published {
            let mut out = refs.iter().filter(|r| &r.from == name).peekable();
            let union = def.get("properties").is_none() && out.peek().is_some();
            if union && !free.contains(name) && out.all(|r| free.contains(&r.to)) {
                more.insert(name.clone());
            }
        }
        if more.is_empty() {
            break;
        }
        free.extend(more);
    }
    // ...unless spec-defined content outside the free zones uses it too (`Icon`, which the
    // 2026 `_meta` server info and `Tool` share), or what such content uses.
    let mut typed: BTreeSet<String> = refs
        .iter()
        .filter(|r| !r.pos.free && !free.contains(&r.from))
        .map(|r| r.to.clone())
        .filter(|t| free.contains(t))
        .collect();
    loop {
        let more: BTreeSet<String> = refs
            .iter()
            .filter(|r| !r.pos.free && typed.contains(&r.from) && free.contains(&r.to) && !typed.contains(&r.to))
            .map(|r| r.to.clone())
            .collect();
        if more.is_empty() {
            break;
        }
        typed.extend(more);
    }
    let untouched: BTreeSet<String> = free.into_iter().filter(|d| meta.contains(d) || !typed.contains(d)).collect();
    let mut strict = doc.clone();
    let defs = strict[defs_key].as_object_mut().expect("schema document without definitions");
    let mut closed = 0;
    let mut inlined = 0;
    for (name, def) in defs.iter_mut() {
        if untouched.contains(name) {
            continue;
        }
        walk(def, TOP, &mut |s, pos| {
            if pos.all_of_member {
                // An `allOf` member naming a definition gets the published (open) copy of it,
                // so that the definition itself can be closed everywhere else.
                if let Some(open) = target(s).and_then(|t| published.get(&t)) {
                    *s = open.clone();
                    inlined += 1;
                }
                return;
            }
            if pos.free {
                return;
            }
            if let Value::Object(o) = s {
                if o.contains_key("properties") && !o.contains_key("additionalProperties") {
                    o.insert("additionalProperties".into(), Value::Bool(false));
                    closed += 1;
                }
            }
        });
    }
    let rewrite = Rewrite { closed, inlined, untouched: untouched.into_iter().collect() };
    (strict, rewrite)
}

/// One revision's schema: the published document, its strict copy and their validators.
struct Revision {
    name: &'static str,
    defs_key: &'static str,
    doc: Value,
    official: ValidatorMap,
    strict: ValidatorMap,
    rewrite: Rewrite,
}

fn schema_file(rev: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../spec/schema").join(rev).join("schema.json")
}

fn read_schema(rev: &str) -> Value {
    let path = schema_file(rev);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

impl Revision {
    fn load(name: &'static str) -> Self {
        let doc = read_schema(name);
        let (defs_key, draft) =
            if doc.get("$defs").is_some() { ("$defs", Draft::Draft202012) } else { ("definitions", Draft::Draft7) };
        let (strict_doc, rewrite) = strict_copy(&doc, defs_key);
        let build = |d: &Value, which: &str| {
            jsonschema::options()
                .with_draft(draft)
                .build_map(d)
                .unwrap_or_else(|e| panic!("[{name}] the {which} schema does not compile: {e}"))
        };
        let official = build(&doc, "official");
        let strict = build(&strict_doc, "strict");
        Self { name, defs_key, doc, official, strict, rewrite }
    }

    fn is_modern(&self) -> bool {
        self.name == MODERN
    }

    fn defs(&self) -> &Map<String, Value> {
        self.doc[self.defs_key].as_object().expect("definitions")
    }

    fn has(&self, def: &str) -> bool {
        self.defs().contains_key(def)
    }

    /// Whether definition `def` declares the member `member`.
    fn declares(&self, def: &str, member: &str) -> bool {
        self.defs().get(def).and_then(|d| d.get("properties")).is_some_and(|p| p.get(member).is_some())
    }

    fn pointer(&self, def: &str) -> String {
        format!("#/{}/{}", self.defs_key, def)
    }

    /// Whether `instance` is valid against `def` in the published schema.
    fn officially_valid(&self, def: &str, instance: &Value) -> bool {
        self.official.get(&self.pointer(def)).is_some_and(|v| v.is_valid(instance))
    }

    /// Whether `instance` is valid against `def` in the strict schema.
    fn strictly_valid(&self, def: &str, instance: &Value) -> bool {
        self.strict.get(&self.pointer(def)).is_some_and(|v| v.is_valid(instance))
    }

    /// Validates `instance` against `def` in the strict schema; the error says whether the
    /// published schema accepts it (an extra member) or not (a real violation), and why.
    fn check(&self, def: &str, instance: &Value) -> Result<(), String> {
        let Some(strict) = self.strict.get(&self.pointer(def)) else {
            return Err(format!("the definition `{def}` does not exist in the {} schema", self.name));
        };
        let mut errors = String::new();
        for e in strict.iter_errors(instance) {
            describe(&e, 2, &mut errors);
        }
        if errors.is_empty() {
            return Ok(());
        }
        let verdict = if self.officially_valid(def, instance) {
            "valid against the published schema, but carries members this revision does not \
             define (rejected by the strict schema)"
        } else {
            "INVALID against the published schema itself"
        };
        Err(format!("{verdict}:\n{errors}"))
    }
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let cut: String = s.chars().take(max).collect();
    format!("{cut}…")
}

/// Writes a validation error, with the reasons of every branch of a failed `anyOf`/`oneOf`.
fn describe(e: &ValidationError<'_>, depth: usize, out: &mut String) {
    let indent = "  ".repeat(depth);
    let _ = writeln!(
        out,
        "{indent}- at `{}` (schema `{}`): {}",
        e.instance_path(),
        e.schema_path(),
        clip(&e.to_string(), 300)
    );
    let branches = match e.kind() {
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => context,
        _ => return,
    };
    if depth > 8 {
        return;
    }
    for (i, branch) in branches.iter().enumerate() {
        let _ = writeln!(out, "{indent}  branch {i}:");
        for sub in branch {
            describe(sub, depth + 2, out);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Classification: what each server message is validated against
// ---------------------------------------------------------------------------------------------

/// The result definition of a client request's method.
fn result_def(method: &str) -> Option<&'static str> {
    Some(match method {
        "initialize" => "InitializeResult",
        "ping" | "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe" => "EmptyResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "completion/complete" => "CompleteResult",
        "server/discover" => "DiscoverResult",
        "subscriptions/listen" => "SubscriptionsListenResult",
        "tasks/get" => "GetTaskResult",
        "tasks/result" => "GetTaskPayloadResult",
        "tasks/list" => "ListTasksResult",
        "tasks/cancel" => "CancelTaskResult",
        _ => return None,
    })
}

/// The methods whose 2026-07-28 result may be `input_required` (multi-round requests).
const MULTI_ROUND: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// The definition of a notification the server sends.
fn notification_def(method: &str) -> Option<&'static str> {
    Some(match method {
        "notifications/cancelled" => "CancelledNotification",
        "notifications/progress" => "ProgressNotification",
        "notifications/message" => "LoggingMessageNotification",
        "notifications/resources/updated" => "ResourceUpdatedNotification",
        "notifications/resources/list_changed" => "ResourceListChangedNotification",
        "notifications/tools/list_changed" => "ToolListChangedNotification",
        "notifications/prompts/list_changed" => "PromptListChangedNotification",
        "notifications/subscriptions/acknowledged" => "SubscriptionsAcknowledgedNotification",
        "notifications/elicitation/complete" => "ElicitationCompleteNotification",
        "notifications/tasks/status" => "TaskStatusNotification",
        _ => return None,
    })
}

/// The definition of a request the server sends to the client.
fn server_request_def(method: &str) -> Option<&'static str> {
    Some(match method {
        "sampling/createMessage" => "CreateMessageRequest",
        "elicitation/create" => "ElicitRequest",
        "roots/list" => "ListRootsRequest",
        "ping" => "PingRequest",
        _ => return None,
    })
}

/// The typed error definitions of 2026-07-28, by code: error objects for the JSON-RPC codes,
/// whole error responses for the MCP ones.
fn typed_error_def(code: i64) -> Option<&'static str> {
    Some(match code {
        -32700 => "ParseError",
        -32600 => "InvalidRequestError",
        -32601 => "MethodNotFoundError",
        -32602 => "InvalidParamsError",
        -32603 => "InternalError",
        -32020 => "HeaderMismatchError",
        -32021 => "MissingRequiredClientCapabilityError",
        -32022 => "UnsupportedProtocolVersionError",
        _ => return None,
    })
}

/// The message without the envelope members (`jsonrpc`, `id`) that `def` does not declare:
/// the older schemas define requests and notifications without them (the envelope is checked
/// separately, against `JSONRPCRequest`/`JSONRPCNotification`).
fn body_for(rev: &Revision, def: &str, msg: &Value) -> Value {
    let mut body = msg.clone();
    if let Value::Object(o) = &mut body {
        for member in ["jsonrpc", "id"] {
            if !rev.declares(def, member) {
                o.remove(member);
            }
        }
    }
    body
}

/// One validation to run: a definition, the value to validate, and what that value is.
struct Check {
    def: String,
    instance: Value,
    part: &'static str,
}

impl Check {
    fn new(def: &str, instance: Value, part: &'static str) -> Self {
        Self { def: def.to_owned(), instance, part }
    }
}

/// What a message is, and the validations it gets; `Err` when it cannot be mapped.
fn classify(rev: &Revision, msg: &Value, sent: &HashMap<String, String>) -> Result<(String, Vec<Check>), String> {
    let Some(obj) = msg.as_object() else {
        return Err("not a JSON object (a batch or a scalar)".into());
    };
    let method = obj.get("method").and_then(Value::as_str);
    let id = obj.get("id");
    match (method, id) {
        (Some(method), Some(_)) => {
            if !rev.has("ServerRequest") {
                return Err(format!(
                    "a server-to-client request ({method}): revision {} has none (no \
                     `ServerRequest` in its schema; servers MUST NOT send JSON-RPC requests)",
                    rev.name
                ));
            }
            let def = server_request_def(method)
                .ok_or_else(|| format!("a server request with the unknown method {method}"))?;
            let body = body_for(rev, def, msg);
            Ok((
                format!("server request {method}"),
                vec![
                    Check::new(def, body.clone(), "the request"),
                    Check::new("JSONRPCRequest", msg.clone(), "the JSON-RPC envelope"),
                    Check::new("ServerRequest", body, "the ServerRequest union"),
                ],
            ))
        }
        (Some(method), None) => {
            let def =
                notification_def(method).ok_or_else(|| format!("a notification with the unknown method {method}"))?;
            let body = body_for(rev, def, msg);
            Ok((
                format!("notification {method}"),
                vec![
                    Check::new(def, body.clone(), "the notification"),
                    Check::new("JSONRPCNotification", msg.clone(), "the JSON-RPC envelope"),
                    Check::new("ServerNotification", body, "the ServerNotification union"),
                ],
            ))
        }
        (None, _) => {
            let legacy_envelope = !rev.has("JSONRPCResultResponse");
            if let Some(error) = obj.get("error") {
                let what = match id.map(|i| i.to_string()) {
                    Some(i) => format!(
                        "error response to {} (id {i})",
                        sent.get(&i).map_or("an unknown request", String::as_str)
                    ),
                    None => "error response without id".into(),
                };
                let envelope = if legacy_envelope { "JSONRPCError" } else { "JSONRPCErrorResponse" };
                let mut checks = vec![Check::new(envelope, msg.clone(), "the error envelope")];
                if let Some(def) = error.get("code").and_then(Value::as_i64).and_then(typed_error_def) {
                    if rev.has(def) && rev.declares(def, "jsonrpc") {
                        checks.push(Check::new(def, msg.clone(), "the typed error response"));
                    } else if rev.has(def) {
                        checks.push(Check::new(def, error.clone(), "the typed error object"));
                    }
                }
                return Ok((what, checks));
            }
            let Some(result) = obj.get("result") else {
                return Err("neither a request, a notification, a result nor an error".into());
            };
            let key = id.map(|i| i.to_string()).unwrap_or_default();
            let method =
                sent.get(&key).ok_or_else(|| format!("a response to id {key}, which the client never sent"))?;
            let mut def =
                result_def(method).ok_or_else(|| format!("a result for {method}, which has no result mapping"))?;
            // 2025-11-25: a task-augmented `tools/call` answers with the task it created.
            if method == "tools/call" && result.get("task").is_some() {
                def = "CreateTaskResult";
            }
            // 2026-07-28 multi-round requests: an `input_required` result instead of the final one.
            let input_required = rev.is_modern() && result.get("resultType") == Some(&json!("input_required"));
            if input_required && !MULTI_ROUND.contains(&method.as_str()) {
                return Err(format!("an input_required result for {method}, which cannot have one"));
            }
            let result_def = if input_required { "InputRequiredResult" } else { def };
            let envelope = if legacy_envelope { "JSONRPCResponse" } else { "JSONRPCResultResponse" };
            let mut checks = vec![
                Check::new(result_def, result.clone(), "the result"),
                Check::new(envelope, msg.clone(), "the JSON-RPC envelope"),
            ];
            // `tasks/result` returns what the task's request returned: a `CallToolResult` here.
            if method == "tasks/result" {
                checks.push(Check::new("CallToolResult", result.clone(), "the task's tool result"));
            }
            let typed_envelope = format!("{def}Response");
            if rev.has(&typed_envelope) {
                checks.push(Check { def: typed_envelope, instance: msg.clone(), part: "the typed response envelope" });
            }
            Ok((format!("response to {method} (id {key})"), checks))
        }
    }
}

/// What validating one revision's transcript found.
#[derive(Default)]
struct Report {
    messages: usize,
    checks: usize,
    failures: Vec<String>,
}

/// Validates every message of a transcript; also checks the era's `resultType` rule.
fn validate(rev: &Revision, t: &Transcript) -> Report {
    let mut report = Report::default();
    for (n, msg) in t.received.iter().enumerate() {
        report.messages += 1;
        let shown = clip(&msg.to_string(), 4000);
        let (what, checks) = match classify(rev, msg, &t.sent) {
            Ok(c) => c,
            Err(why) => {
                report.failures.push(format!(
                    "[{}] message #{n} cannot be mapped to a schema definition: {why}\n  message: {shown}",
                    rev.name
                ));
                continue;
            }
        };
        let mut failed = false;
        for check in checks {
            // A union adds nothing to the report of a message that already failed its type.
            if failed && check.part.ends_with("union") {
                continue;
            }
            report.checks += 1;
            if let Err(errors) = rev.check(&check.def, &check.instance) {
                failed = true;
                report.failures.push(format!(
                    "[{}] message #{n} ({what}): {} fails `{}`, {errors}  message: {shown}",
                    rev.name, check.part, check.def
                ));
            }
        }
        if let Some(result) = msg.get("result") {
            let has = result.get("resultType").is_some();
            if rev.is_modern() != has {
                report.failures.push(format!(
                    "[{}] message #{n} ({what}): `resultType` must be {} in this revision\n  message: {shown}",
                    rev.name,
                    if rev.is_modern() { "present" } else { "absent" }
                ));
            }
        }
    }
    report
}

// ---------------------------------------------------------------------------------------------
// 3. The scripted client
// ---------------------------------------------------------------------------------------------

/// Everything a scenario saw.
struct Transcript {
    /// Every message the server sent, in order.
    received: Vec<Value>,
    /// The method of every request the client sent, by id (as JSON text).
    sent: HashMap<String, String>,
    /// Semantic expectations that did not hold.
    problems: Vec<String>,
}

/// The client end of an in-memory connection to the reference server.
struct Client {
    rev: &'static str,
    conn: Connection,
    server: Server,
    task: tokio::task::JoinHandle<()>,
    next_id: i64,
    sent: HashMap<String, String>,
    received: Vec<Value>,
    problems: Vec<String>,
}

impl Client {
    fn start(rev: &'static str) -> Self {
        let server = reference::server();
        let (client_end, server_end) = memory::pair();
        let served = server.clone();
        let task = tokio::spawn(async move { served.serve(server_end).await });
        Self {
            rev,
            conn: client_end,
            server,
            task,
            next_id: 1,
            sent: HashMap::new(),
            received: Vec::new(),
            problems: Vec::new(),
        }
    }

    fn modern(&self) -> bool {
        self.rev == MODERN
    }

    /// Records a semantic expectation.
    fn expect(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            let what = what();
            self.problems.push(format!("[{}] {what}", self.rev));
        }
    }

    /// Request params for this revision: in 2026-07-28 every request carries its version and
    /// capabilities in `_meta`; `extra` goes into `_meta` in both eras.
    fn params(&self, params: Value, extra: &[(&str, Value)]) -> Value {
        let mut params = match params {
            Value::Object(o) => o,
            _ => Map::new(),
        };
        let mut meta = Map::new();
        if self.modern() {
            meta.insert(meta_keys::PROTOCOL_VERSION.into(), json!(MODERN));
            meta.insert(meta_keys::CLIENT_CAPABILITIES.into(), json!({}));
            meta.insert(meta_keys::CLIENT_INFO.into(), json!({"name": "schema-test", "version": "1.0.0"}));
        }
        for (k, v) in extra {
            meta.insert((*k).to_owned(), v.clone());
        }
        if !meta.is_empty() {
            params.insert("_meta".into(), Value::Object(meta));
        }
        Value::Object(params)
    }

    async fn send(&mut self, msg: Value) {
        self.conn
            .outgoing
            .send(mcpwire_transport::Outbound::text(msg.to_string()))
            .await
            .unwrap_or_else(|_| panic!("[{}] the server closed the connection", self.rev));
    }

    /// Sends a request without waiting; returns its id.
    async fn send_request(&mut self, method: &str, params: Value) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        self.sent.insert(id.to_string(), method.to_owned());
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        self.send(msg).await;
        id
    }

    async fn notify(&mut self, method: &str, params: Value) {
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        self.send(msg).await;
    }

    /// Records one message from the server (answering it if it is a request); `None` when
    /// nothing came within `wait` or the connection closed.
    async fn next(&mut self, wait: Duration) -> Option<Value> {
        let frame = match tokio::time::timeout(wait, self.conn.incoming.recv()).await {
            Ok(Some(frame)) => frame,
            Ok(None) | Err(_) => return None,
        };
        let text = frame.unwrap_or_else(|e| panic!("[{}] bad frame from the server: {e}", self.rev)).text;
        let msg: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("[{}] the server sent invalid JSON ({e}): {text}", self.rev));
        self.received.push(msg.clone());
        if msg.get("method").is_some() && msg.get("id").is_some() {
            self.answer(&msg).await;
        }
        Some(msg)
    }

    /// Like [`Self::next`], but a silence longer than [`WAIT`] is fatal.
    async fn must_next(&mut self, waiting_for: &str) -> Value {
        match self.next(WAIT).await {
            Some(msg) => msg,
            None => panic!(
                "[{}] no message from the server within {WAIT:?} while waiting for {waiting_for}; \
                 last messages: {:?}",
                self.rev,
                self.received.iter().rev().take(3).collect::<Vec<_>>()
            ),
        }
    }

    /// Answers a request of the server (legacy era), as a client of this revision would.
    async fn answer(&mut self, req: &Value) {
        let mut msg = match client_result(req) {
            Ok(result) => json!({"result": result}),
            Err(error) => json!({"error": error}),
        };
        msg["jsonrpc"] = json!("2.0");
        msg["id"] = req["id"].clone();
        self.send(msg).await;
    }

    /// Sends a request and waits for its response (answering the server on the way).
    async fn request_once(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params).await;
        loop {
            let msg = self.must_next(&format!("the response to {method} (id {id})")).await;
            if msg.get("method").is_none() && msg.get("id") == Some(&id) {
                return msg;
            }
        }
    }

    /// Sends a request and waits for its final response. In 2026-07-28 an `input_required`
    /// result is answered: the request is sent again, with a new id, its original params, the
    /// `inputResponses` and the `requestState`, until the result is final.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let mut round_params = params.clone();
        for _ in 0..MAX_ROUNDS {
            let response = self.request_once(method, round_params).await;
            let result = match response.get("result") {
                Some(r) if self.modern() && r.get("resultType") == Some(&json!("input_required")) => r.clone(),
                _ => return response,
            };
            let mut answers = Map::new();
            for (key, request) in result["inputRequests"].as_object().into_iter().flatten() {
                let answer = client_result(request).unwrap_or_else(|e| e);
                answers.insert(key.clone(), answer);
            }
            round_params = params.clone();
            if !answers.is_empty() {
                round_params["inputResponses"] = Value::Object(answers);
            }
            if let Some(state) = result.get("requestState") {
                round_params["requestState"] = state.clone();
            }
        }
        panic!("[{}] {method} still wanted input after {MAX_ROUNDS} rounds", self.rev)
    }

    /// A request that must succeed; returns its result.
    async fn ok(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        self.expect(response.get("result").is_some(), || format!("{method} failed: {response}"));
        response.get("result").cloned().unwrap_or(Value::Null)
    }

    /// A request that must fail with `code`.
    async fn fails(&mut self, method: &str, params: Value, code: i64, what: &str) {
        let response = self.request(method, params).await;
        let got = response.pointer("/error/code").and_then(Value::as_i64);
        self.expect(got == Some(code), || format!("{what}: expected error {code}, got {response}"));
    }

    /// Waits until every method in `methods` arrived after message index `since`.
    async fn wait_for_all(&mut self, since: usize, methods: &[&str]) -> Vec<Value> {
        loop {
            let got: Vec<Value> = self.received[since..]
                .iter()
                .filter(|m| m.get("method").and_then(Value::as_str).is_some_and(|x| methods.contains(&x)))
                .cloned()
                .collect();
            let seen = |m: &&str| got.iter().any(|g| g["method"] == **m);
            if methods.iter().all(seen) {
                return got;
            }
            self.must_next(&format!("the notifications {methods:?}")).await;
        }
    }

    /// Reads until the server stays quiet for [`QUIET`].
    async fn drain(&mut self) {
        while self.next(QUIET).await.is_some() {}
    }

    /// Closes the client side, collects whatever the server still sends, and waits for the
    /// server to finish.
    async fn finish(mut self) -> Transcript {
        self.drain().await;
        let (closed_tx, _) = tokio::sync::mpsc::channel(1);
        // Dropping our sender closes the server's inbound stream.
        drop(std::mem::replace(&mut self.conn.outgoing, closed_tx));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match tokio::time::timeout(left, self.conn.incoming.recv()).await {
                Ok(Some(Ok(frame))) => match serde_json::from_str::<Value>(&frame.text) {
                    Ok(msg) => self.received.push(msg),
                    Err(e) => panic!("[{}] the server sent invalid JSON ({e}): {}", self.rev, frame.text),
                },
                Ok(Some(Err(e))) => panic!("[{}] bad frame from the server: {e}", self.rev),
                Ok(None) => break,
                Err(_) => {
                    let rev = self.rev;
                    self.problems.push(format!("[{rev}] the server did not close its side within 15 s"));
                    break;
                }
            }
        }
        if tokio::time::timeout(Duration::from_secs(15), &mut self.task).await.is_err() {
            self.task.abort();
            let rev = self.rev;
            self.problems.push(format!("[{rev}] Server::serve did not return after the client closed"));
        }
        Transcript { received: self.received, sent: self.sent, problems: self.problems }
    }
}

/// Most rounds of one multi-round request.
const MAX_ROUNDS: usize = 6;

/// What this client answers to a request of the server (a legacy request, or an entry of a
/// 2026-07-28 `inputRequests`): a result, or an error object.
fn client_result(req: &Value) -> Result<Value, Value> {
    match req["method"].as_str().unwrap_or_default() {
        "sampling/createMessage" => Ok(json!({
            "role": "assistant",
            "content": {"type": "text", "text": "hi"},
            "model": "m",
            "stopReason": "endTurn"
        })),
        "elicitation/create" => Ok(json!({
            "action": "accept",
            "content": fill_form(&req["params"]["requestedSchema"])
        })),
        "roots/list" => Ok(json!({"roots": [{"uri": "file:///tmp/project", "name": "project"}]})),
        "ping" => Ok(json!({})),
        other => Err(json!({"code": -32601, "message": format!("Method not found: {other}")})),
    }
}

/// A value for every property of a form schema (an elicitation's `requestedSchema`): its
/// default, else its first allowed value, else a value of its type.
fn fill_form(schema: &Value) -> Value {
    let mut out = Map::new();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Value::Object(out);
    };
    for (name, prop) in props {
        let first_const = |alts: Option<&Value>| {
            alts.and_then(Value::as_array).and_then(|a| a.first()).and_then(|c| c.get("const")).cloned()
        };
        let value = if let Some(d) = prop.get("default") {
            d.clone()
        } else if let Some(e) = prop.get("enum").and_then(|e| e.get(0)) {
            e.clone()
        } else if let Some(c) = first_const(prop.get("oneOf")).or(first_const(prop.get("anyOf"))) {
            c
        } else {
            match prop.get("type").and_then(Value::as_str) {
                Some("integer") => json!(7),
                Some("number") => json!(1.5),
                Some("boolean") => json!(true),
                Some("array") => {
                    let items = &prop["items"];
                    let item = items
                        .get("enum")
                        .and_then(|e| e.get(0))
                        .cloned()
                        .or(first_const(items.get("anyOf")))
                        .or(first_const(items.get("oneOf")))
                        .unwrap_or(json!("x"));
                    json!([item])
                }
                _ if name.contains("email") => json!("user@example.com"),
                _ => json!("user"),
            }
        };
        out.insert(name.clone(), value);
    }
    Value::Object(out)
}

/// Arguments for a reference tool.
fn tool_args(name: &str, input_schema: &Value) -> Value {
    match name {
        "echo" => json!({"text": "hello"}),
        "add" => json!({"a": 2, "b": 3}),
        "test_sampling" => json!({"prompt": "Say hi"}),
        "test_elicitation" => json!({"message": "Who are you?"}),
        "slow_compute" => json!({"seconds": 0.05, "label": "schema"}),
        "json_schema_2020_12_tool" => {
            json!({"name": "n", "email": "n@example.com", "address": {"street": "1 Main St", "city": "Springfield"}})
        }
        _ => fill_form(input_schema),
    }
}

/// The reference prompts that ask nothing of the client.
const PLAIN_PROMPTS: [&str; 4] = [
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
];

/// The reference tools that only run as tasks.
const TASK_REQUIRED: [&str; 3] = ["test_task_required", "failing_job", "test_tool_with_task"];

/// The reference tools that fail with a JSON-RPC error by design (a task-failure fixture).
const PROTOCOL_ERROR_TOOLS: [&str; 1] = ["protocol_error_job"];

/// Tools that cannot run without the client's sampling capability.
const NEEDS_SAMPLING: [&str; 2] = ["test_sampling", "test_missing_capability"];

/// The capabilities a 2026-07-28 request declares when it is to answer input requests.
fn modern_capabilities() -> Value {
    json!({"sampling": {}, "elicitation": {}, "roots": {}})
}

/// The text of the first content item of a result (`content` or `contents`).
fn first_text(result: &Value) -> Option<&str> {
    result.pointer("/content/0/text").or_else(|| result.pointer("/contents/0/text")).and_then(Value::as_str)
}

// ---------------------------------------------------------------------------------------------
// 4. Scenarios
// ---------------------------------------------------------------------------------------------

const SIMPLE_TEXT: &str = "This is a simple text response for testing.";
const STATIC_TEXT: &str = "This is the content of the static text resource.";
const WATCHED: &str = "test://watched-resource";
const TEMPLATE: &str = "test://template/{id}/data";

impl Client {
    /// What both eras share: every tool, resource, prompt, completion and a few errors.
    async fn exercise(&mut self) {
        // Tools: every one of them.
        let list = self.ok("tools/list", self.params(json!({}), &[])).await;
        let tools: Vec<(String, Value)> = list["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| (t["name"].as_str().unwrap_or_default().to_owned(), t["inputSchema"].clone()))
            .collect();
        self.expect(tools.len() >= 15, || format!("tools/list lists only {} tools", tools.len()));
        for (name, schema) in &tools {
            let logging = name.contains("logging");
            let call = json!({"name": name, "arguments": tool_args(name, schema)});
            let mut extra: Vec<(&str, Value)> = Vec::new();
            if self.modern() {
                if logging {
                    extra.push((meta_keys::LOG_LEVEL, json!("debug")));
                }
                // First with no capabilities (as the brief of 2026-07-28 requests go): a tool
                // that needs one must say which (-32021); any answer is validated.
                let response = self.request("tools/call", self.params(call.clone(), &extra)).await;
                if NEEDS_SAMPLING.contains(&name.as_str()) {
                    let code = response.pointer("/error/code").and_then(Value::as_i64);
                    self.expect(code == Some(-32021), || {
                        format!("{name} without the sampling capability answered {response}, not error -32021")
                    });
                }
                // Then declaring what this client can answer, through every input round.
                extra.push((meta_keys::CLIENT_CAPABILITIES, modern_capabilities()));
            }
            if TASK_REQUIRED.contains(&name.as_str()) && self.rev >= "2025-11-25" {
                // Only as a task: 2025-11-25 refuses a plain call (-32601); 2026-07-28 names the
                // extension this client did not declare (-32021). Earlier revisions have no
                // tasks, and the tool simply runs.
                let code = if self.modern() { -32021 } else { -32601 };
                self.fails("tools/call", self.params(call, &extra), code, "calling a task-only tool plainly").await;
                continue;
            }
            if PROTOCOL_ERROR_TOOLS.contains(&name.as_str()) {
                self.fails("tools/call", self.params(call, &extra), -32603, "a tool failing with a protocol error")
                    .await;
                continue;
            }
            let since = self.received.len();
            let result = self.ok("tools/call", self.params(call, &extra)).await;
            if self.modern() {
                self.expect(result["resultType"] == "complete", || format!("{name} ended with {result}"));
            }
            if name == "test_simple_text" {
                let text = first_text(&result).map(str::to_owned);
                self.expect(text.as_deref() == Some(SIMPLE_TEXT), || format!("test_simple_text returned {text:?}"));
            }
            if logging {
                let logs = self.received[since..].iter().filter(|m| m["method"] == "notifications/message").count();
                self.expect(logs == 3, || format!("{name} sent {logs} log messages, not 3"));
            }
        }
        // Progress, with a string token and with an integer token.
        for token in [json!("progress-token"), json!(42)] {
            let since = self.received.len();
            let params = self.params(
                json!({"name": "test_tool_with_progress", "arguments": {}}),
                &[(meta_keys::PROGRESS_TOKEN, token.clone())],
            );
            self.ok("tools/call", params).await;
            let progress = self.received[since..]
                .iter()
                .filter(|m| m["method"] == "notifications/progress")
                .filter(|m| m["params"]["progressToken"] == token)
                .count();
            self.expect(progress == 3, || {
                format!("test_tool_with_progress sent {progress} notifications for token {token}, not 3")
            });
        }

        // Resources: list, read every one, the template, an unknown URI.
        let list = self.ok("resources/list", self.params(json!({}), &[])).await;
        let uris: Vec<String> = list["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["uri"].as_str().map(str::to_owned))
            .collect();
        self.expect(uris.len() >= 3, || format!("resources/list lists {uris:?}"));
        for uri in &uris {
            let result = self.ok("resources/read", self.params(json!({"uri": uri}), &[])).await;
            if uri == "test://static-text" {
                let text = first_text(&result).map(str::to_owned);
                self.expect(text.as_deref() == Some(STATIC_TEXT), || format!("test://static-text read as {text:?}"));
            }
        }
        self.ok("resources/templates/list", self.params(json!({}), &[])).await;
        let data = self.ok("resources/read", self.params(json!({"uri": "test://template/7/data"}), &[])).await;
        self.expect(first_text(&data).is_some_and(|t| t.contains("Data for ID: 7")), || {
            format!("test://template/7/data read as {data}")
        });
        let not_found = if self.modern() { -32602 } else { -32002 };
        self.fails(
            "resources/read",
            self.params(json!({"uri": "test://no-such-resource"}), &[]),
            not_found,
            "reading an unknown resource",
        )
        .await;

        // Prompts: list and get every one, with its required arguments.
        let list = self.ok("prompts/list", self.params(json!({}), &[])).await;
        let prompts: Vec<Value> = list["prompts"].as_array().cloned().unwrap_or_default();
        self.expect(prompts.len() >= 4, || format!("prompts/list lists {prompts:?}"));
        for prompt in &prompts {
            let mut args = Map::new();
            for arg in prompt["arguments"].as_array().into_iter().flatten() {
                let name = arg["name"].as_str().unwrap_or_default();
                let value = match name {
                    "resourceUri" => "test://static-text",
                    _ => "value",
                };
                args.insert(name.to_owned(), json!(value));
            }
            // A prompt may ask the user first (2026-07-28: input rounds), so declare what we answer.
            let caps: Vec<(&str, Value)> =
                if self.modern() { vec![(meta_keys::CLIENT_CAPABILITIES, modern_capabilities())] } else { vec![] };
            let params = self.params(json!({"name": prompt["name"], "arguments": args}), &caps);
            let response = self.request("prompts/get", params).await;
            // A prompt that asks the user can fail where the revision has no elicitation; the
            // plain ones must work everywhere. Either way the answer is validated.
            let name = prompt["name"].as_str().unwrap_or_default();
            let must_work = PLAIN_PROMPTS.contains(&name) || self.rev >= "2025-06-18";
            self.expect(!must_work || response.get("result").is_some(), || format!("prompts/get {name}: {response}"));
        }

        // Completion of a prompt argument and of a template variable.
        let prompt_ref = json!({
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "te"}
        });
        let r = self.ok("completion/complete", self.params(prompt_ref, &[])).await;
        self.expect(r["completion"]["values"] == json!(["test1", "test2"]), || format!("completion of arg1 gave {r}"));
        let template_ref = json!({
            "ref": {"type": "ref/resource", "uri": TEMPLATE},
            "argument": {"name": "id", "value": "1"}
        });
        let r = self.ok("completion/complete", self.params(template_ref, &[])).await;
        self.expect(r["completion"]["values"] == json!(["1", "123"]), || format!("completion of id gave {r}"));

        // Errors.
        self.fails(
            "tools/call",
            self.params(json!({"name": "no_such_tool", "arguments": {}}), &[]),
            -32602,
            "calling an unknown tool",
        )
        .await;
        self.fails(
            "tools/list",
            self.params(json!({"cursor": "not-a-valid-cursor"}), &[]),
            -32602,
            "listing tools from a bad cursor",
        )
        .await;
    }

    /// The 2025-11-25 task scenario: a task-augmented call with progress, polling, the
    /// outcome, status notifications, a task that asks the user, listing, cancellation and
    /// the errors of each.
    async fn tasks(&mut self) {
        let since = self.received.len();
        let call = json!({
            "name": "test_long_running_task",
            "arguments": {"steps": 3, "delayMs": 30},
            "task": {"ttl": 60000},
            "_meta": {(meta_keys::PROGRESS_TOKEN): "task-progress"}
        });
        let created = self.ok("tools/call", call).await;
        let task = created["task"].clone();
        self.expect(task["status"] == "working" && task["ttl"] == 60000, || format!("created {created}"));
        let id = task["taskId"].clone();
        self.ok("tasks/get", json!({"taskId": id})).await;
        let result = self.ok("tasks/result", json!({"taskId": id})).await;
        self.expect(first_text(&result) == Some("Counted to 3."), || format!("tasks/result gave {result}"));
        self.expect(result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"] == id, || {
            format!("tasks/result without its related-task: {result}")
        });
        let seen = self.wait_for_all(since, &["notifications/tasks/status", "notifications/progress"]).await;
        self.expect(seen.iter().any(|n| n["params"]["status"] == "completed"), || format!("status notes: {seen:?}"));
        let done = self.ok("tasks/get", json!({"taskId": id})).await;
        self.expect(done["status"] == "completed", || format!("after the result: {done}"));

        // The task-only tool, as a task; a tool that asks the user while it runs as one.
        for name in ["test_task_required", "test_task_elicitation"] {
            let created = self.ok("tools/call", json!({"name": name, "task": {}})).await;
            let id = created["task"]["taskId"].clone();
            let result = self.ok("tasks/result", json!({"taskId": id})).await;
            self.expect(result.get("content").is_some(), || format!("{name} as a task gave {result}"));
        }
        let list = self.ok("tasks/list", json!({})).await;
        let listed = list["tasks"].as_array().map_or(0, Vec::len);
        self.expect(listed == 3, || format!("tasks/list lists {listed} tasks, not 3: {list}"));

        // Cancellation, and what cannot be done with a cancelled task.
        let call = json!({"name": "test_long_running_task", "arguments": {"steps": 100, "delayMs": 50}, "task": {}});
        let created = self.ok("tools/call", call).await;
        let id = created["task"]["taskId"].clone();
        let cancelled = self.ok("tasks/cancel", json!({"taskId": id})).await;
        self.expect(cancelled["status"] == "cancelled", || format!("tasks/cancel gave {cancelled}"));
        self.fails("tasks/cancel", json!({"taskId": id}), -32602, "cancelling a cancelled task").await;
        self.fails("tasks/result", json!({"taskId": id}), -32602, "the result of a cancelled task").await;
        self.fails("tasks/get", json!({"taskId": "no-such-task"}), -32602, "an unknown task").await;
        self.fails("tasks/list", json!({"cursor": "not-a-cursor"}), -32602, "listing tasks from a bad cursor").await;
        let echo = json!({"name": "echo", "arguments": {"text": "x"}, "task": {}});
        self.fails("tools/call", echo, -32601, "a task-augmented call of a tool without task support").await;
    }

    /// Changes the server's lists, so that list_changed notifications go out.
    fn change_lists(&self) {
        self.server
            .add_tool(Tool::new("late_tool", "Added during the session.", json!({"type": "object"})), |_, _| async {
                Ok(CallToolResult::text("late"))
            });
        self.server.add_prompt(Prompt::new("late_prompt", "Added during the session.", vec![]), |_, _| async {
            Ok(GetPromptResult { description: None, messages: vec![PromptMessage::user_text("late")], meta: None })
        });
        self.server.add_resource(Resource::new("test://late", "late"), |uri, _| async move {
            Ok(ReadResourceResult {
                contents: vec![ResourceContents::text(uri, Some("text/plain"), "late")],
                meta: None,
            })
        });
    }
}

const LIST_CHANGED: [&str; 3] =
    ["notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed"];

/// A legacy session: `initialize`, then everything the revision has.
async fn legacy_session(rev: &'static str) -> Transcript {
    let mut c = Client::start(rev);
    let mut capabilities = json!({"sampling": {}, "roots": {}});
    if rev >= "2025-06-18" {
        capabilities["elicitation"] = json!({});
    }
    let init = c
        .ok(
            "initialize",
            json!({
                "protocolVersion": rev,
                "capabilities": capabilities,
                "clientInfo": {"name": "schema-test", "version": "1.0.0"}
            }),
        )
        .await;
    c.expect(init["protocolVersion"] == rev, || format!("initialize negotiated {}", init["protocolVersion"]));
    c.notify("notifications/initialized", Value::Null).await;
    c.ok("ping", Value::Null).await;
    c.ok("logging/setLevel", json!({"level": "debug"})).await;

    c.exercise().await;

    // Subscriptions, and an update while subscribed.
    c.ok("resources/subscribe", json!({"uri": WATCHED})).await;
    let since = c.received.len();
    c.server.notify_resource_updated(WATCHED);
    let updated = c.wait_for_all(since, &["notifications/resources/updated"]).await;
    c.expect(updated[0]["params"]["uri"] == WATCHED, || format!("resources/updated for the wrong URI: {}", updated[0]));
    c.ok("resources/unsubscribe", json!({"uri": WATCHED})).await;

    if rev == "2025-11-25" {
        c.tasks().await;
    } else {
        c.fails("tasks/list", json!({}), -32601, "tasks/list before 2025-11-25").await;
        c.fails("tasks/get", json!({"taskId": "t"}), -32601, "tasks/get before 2025-11-25").await;
    }

    let since = c.received.len();
    c.change_lists();
    c.wait_for_all(since, &LIST_CHANGED).await;
    c.finish().await
}

/// A 2026-07-28 session: no handshake, `_meta` on every request, discovery and a listen
/// stream; none of the methods the revision removed.
async fn modern_session() -> Transcript {
    let mut c = Client::start(MODERN);
    let discover = c.ok("server/discover", c.params(json!({}), &[])).await;
    let supported = discover["supportedVersions"].clone();
    c.expect(supported.as_array().is_some_and(|v| v.contains(&json!(MODERN))), || {
        format!("server/discover lists {supported}")
    });

    c.exercise().await;

    // Tasks are an extension in 2026-07-28: this client does not declare it (so nothing of
    // it is emitted), and the methods 2025-11-25 had and the extension dropped do not exist.
    c.fails("tasks/get", c.params(json!({"taskId": "t"}), &[]), -32021, "tasks/get without the extension").await;
    c.fails("tasks/result", c.params(json!({"taskId": "t"}), &[]), -32601, "tasks/result in 2026-07-28").await;
    c.fails("tasks/list", c.params(json!({}), &[]), -32601, "tasks/list in 2026-07-28").await;

    // A listen stream with every filter, changes while it is open, then its cancellation.
    let filter = json!({
        "toolsListChanged": true,
        "promptsListChanged": true,
        "resourcesListChanged": true,
        "resourceSubscriptions": [WATCHED]
    });
    let since = c.received.len();
    let listen = c.send_request("subscriptions/listen", c.params(json!({"notifications": filter}), &[])).await;
    let ack = c.wait_for_all(since, &["notifications/subscriptions/acknowledged"]).await;
    c.expect(ack[0]["params"]["_meta"][meta_keys::SUBSCRIPTION_ID] == listen, || {
        format!("the acknowledgement names another subscription: {}", ack[0])
    });
    let since = c.received.len();
    c.server.notify_resource_updated(WATCHED);
    c.change_lists();
    let mut expected = LIST_CHANGED.to_vec();
    expected.push("notifications/resources/updated");
    let delivered = c.wait_for_all(since, &expected).await;
    for n in &delivered {
        c.expect(n["params"]["_meta"][meta_keys::SUBSCRIPTION_ID] == listen, || {
            format!("a listen notification without its subscription id: {n}")
        });
    }
    c.notify("notifications/cancelled", json!({"requestId": listen, "reason": "test over"})).await;
    c.drain().await;
    // A cancelled request gets no response.
    let answered = c.received.iter().any(|m| m.get("method").is_none() && m.get("id") == Some(&listen));
    c.expect(!answered, || "the cancelled subscriptions/listen request was answered".into());
    c.finish().await
}

// ---------------------------------------------------------------------------------------------
// 5. Tests
// ---------------------------------------------------------------------------------------------

/// Runs the scenario of `rev` and validates everything the server sent.
async fn run_revision(name: &'static str) {
    let rev = Revision::load(name);
    let scenario = async {
        if name == MODERN {
            modern_session().await
        } else {
            legacy_session(name).await
        }
    };
    let transcript = tokio::time::timeout(SCENARIO_LIMIT, scenario)
        .await
        .unwrap_or_else(|_| panic!("[{name}] the scenario did not finish within {SCENARIO_LIMIT:?}"));
    let report = validate(&rev, &transcript);
    let mut kinds: Vec<String> = Vec::new();
    for msg in &transcript.received {
        let answered = msg.get("id").and_then(|i| transcript.sent.get(&i.to_string())).map_or("?", String::as_str);
        let kind = match (msg.get("method"), msg.get("error")) {
            (Some(m), _) if msg.get("id").is_some() => format!("request {}", m.as_str().unwrap_or("?")),
            (Some(m), _) => format!("notification {}", m.as_str().unwrap_or("?")),
            (None, Some(e)) => format!("error {} to {answered}", e["code"]),
            (None, None) => match msg["result"].get("resultType").and_then(Value::as_str) {
                Some(t) if t != "complete" => format!("result ({t}) of {answered}"),
                _ => format!("result of {answered}"),
            },
        };
        kinds.push(kind);
    }
    let mut counts: Vec<(String, usize)> = Vec::new();
    for k in kinds {
        match counts.iter_mut().find(|(n, _)| *n == k) {
            Some((_, c)) => *c += 1,
            None => counts.push((k, 1)),
        }
    }
    eprintln!(
        "[{name}] validated {} messages with {} checks; strict rewrite closed {} object schemas, \
         opened {} allOf members and left {} definitions as published: {:?}",
        report.messages,
        report.checks,
        rev.rewrite.closed,
        rev.rewrite.inlined,
        rev.rewrite.untouched.len(),
        rev.rewrite.untouched
    );
    for (kind, n) in &counts {
        eprintln!("[{name}]   {n:>3} × {kind}");
    }
    let mut failures = report.failures;
    failures.extend(transcript.problems);
    assert!(report.messages > 0, "[{name}] the server sent nothing at all");
    assert!(
        failures.is_empty(),
        "[{name}] {} failure(s) out of {} messages:\n\n{}",
        failures.len(),
        report.messages,
        failures.join("\n\n")
    );
}

#[tokio::test]
async fn reference_server_messages_validate_2024_11_05() {
    run_revision("2024-11-05").await;
}

#[tokio::test]
async fn reference_server_messages_validate_2025_03_26() {
    run_revision("2025-03-26").await;
}

#[tokio::test]
async fn reference_server_messages_validate_2025_06_18() {
    run_revision("2025-06-18").await;
}

#[tokio::test]
async fn reference_server_messages_validate_2025_11_25() {
    run_revision("2025-11-25").await;
}

#[tokio::test]
async fn reference_server_messages_validate_2026_07_28() {
    run_revision("2026-07-28").await;
}

/// The strict schemas reject members a revision lacks, yet keep free-form zones free.
#[test]
fn strict_schemas_reject_members_a_revision_lacks() {
    let r24 = Revision::load("2024-11-05");
    let r03 = Revision::load("2025-03-26");
    let r06 = Revision::load("2025-06-18");
    let r26 = Revision::load("2026-07-28");

    // Rejected: accepted by the published schema, refused by the strict one.
    let rejected: [(&Revision, &str, Value); 7] = [
        (&r24, "ListToolsResult", json!({"tools": [{"name": "t", "title": "T", "inputSchema": {"type": "object"}}]})),
        (&r24, "ListPromptsResult", json!({"prompts": [{"name": "p", "arguments": [{"name": "a", "title": "A"}]}]})),
        (&r03, "CallToolResult", json!({"content": [], "structuredContent": {"sum": 5}})),
        (
            &r06,
            "InitializeResult",
            json!({"protocolVersion": "2025-06-18", "capabilities": {"tasks": {}},
                   "serverInfo": {"name": "s", "version": "1"}}),
        ),
        (&r06, "JSONRPCResponse", json!({"jsonrpc": "2.0", "id": 1, "result": {}, "extra": true})),
        (
            &r26,
            "ListToolsResult",
            json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
                   "tools": [{"name": "t", "inputSchema": {"type": "object"}, "execution": {}}]}),
        ),
        (
            &r26,
            "JSONRPCErrorResponse",
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "m", "x": 1}}),
        ),
    ];
    for (rev, def, instance) in &rejected {
        assert!(rev.officially_valid(def, instance), "[{}] the published `{def}` should accept {instance}", rev.name);
        assert!(!rev.strictly_valid(def, instance), "[{}] the strict `{def}` should reject {instance}", rev.name);
    }

    // Accepted: free-form zones, `_meta` and `Result`'s open members stay open.
    let accepted: [(&Revision, &str, Value); 7] = [
        (
            &r24,
            "ListToolsResult",
            json!({"_meta": {"anything": 1}, "tools": [{"name": "t", "inputSchema": {
                "type": "object", "$schema": "https://json-schema.org/draft/2020-12/schema",
                "properties": {"x": {"type": "string"}}, "additionalProperties": false}}]}),
        ),
        (&r24, "EmptyResult", json!({"anything": true})),
        (&r06, "CallToolResult", json!({"content": [], "structuredContent": {"deep": {"x": [1, 2]}}})),
        (
            &r06,
            "CallToolRequest",
            json!({"method": "tools/call", "params": {"name": "t", "arguments": {"free": {"a": 1}}}}),
        ),
        (
            &r24,
            "JSONRPCRequest",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "t", "_meta": {"progressToken": 1, "other": true}}}),
        ),
        (
            &r26,
            "MissingRequiredClientCapabilityError",
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32021, "message": "m",
                   "data": {"requiredCapabilities": {"sampling": {}}}}}),
        ),
        (
            &r26,
            "ListToolsResult",
            json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
                   "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"},
                             "com.example/x": 1},
                   "tools": [{"name": "t", "inputSchema": {"type": "object"},
                              "outputSchema": {"type": "object", "x-anything": 1}}]}),
        ),
    ];
    for (rev, def, instance) in &accepted {
        if let Err(e) = rev.check(def, instance) {
            panic!("[{}] the strict `{def}` should accept {instance}: {e}", rev.name);
        }
    }

    // The spec-defined types are closed in every revision.
    for rev in [&r24, &r03, &r06, &r26] {
        for def in ["Tool", "Resource", "Prompt", "PromptArgument", "CallToolResult", "TextContent"] {
            assert!(
                !rev.rewrite.untouched.iter().any(|u| u == def),
                "[{}] `{def}` was left open by the strict rewrite",
                rev.name
            );
        }
    }
}

/// Task messages are held to the 2025-11-25 shape: the 2026 extension's names (`ttlMs`,
/// inline `result`) are refused where 2025-11-25 defines a closed `Task`, and no other
/// revision has task definitions at all.
#[test]
fn task_shapes_are_checked() {
    let r11 = Revision::load("2025-11-25");
    let task = json!({"taskId": "t", "status": "working", "createdAt": "2025-11-25T10:30:00.000Z",
        "lastUpdatedAt": "2025-11-25T10:30:00.000Z", "ttl": 60000, "pollInterval": 500});
    r11.check("CreateTaskResult", &json!({"task": task})).unwrap();
    let mut modern_names = task.clone();
    modern_names["ttlMs"] = modern_names["ttl"].take();
    modern_names.as_object_mut().unwrap().remove("ttl");
    assert!(!r11.strictly_valid("CreateTaskResult", &json!({"task": modern_names})));
    let mut inline = task.clone();
    inline["result"] = json!({"content": []});
    assert!(!r11.strictly_valid("CreateTaskResult", &json!({"task": inline})));
    let note = json!({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": task});
    r11.check("TaskStatusNotification", &note).unwrap();
    for rev in ["2024-11-05", "2025-03-26", "2025-06-18", MODERN] {
        let r = Revision::load(rev);
        for def in ["Task", "CreateTaskResult", "TaskStatusNotification", "GetTaskResult"] {
            assert!(!r.has(def), "[{rev}] has `{def}`");
        }
    }
}

/// The pipeline itself: a member the revision lacks, an unknown notification, a response to
/// nothing, a server request where the revision has none, and a `resultType` in the wrong era
/// are all reported.
#[test]
fn validation_reports_every_kind_of_bad_message() {
    let sent = HashMap::from([("1".to_owned(), "tools/list".to_owned()), ("2".to_owned(), "ping".to_owned())]);
    let legacy = Transcript {
        received: vec![
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "t", "title": "T", "inputSchema": {"type": "object"}}]}}),
            json!({"jsonrpc": "2.0", "method": "notifications/unknown", "params": {}}),
            json!({"jsonrpc": "2.0", "id": 99, "result": {}}),
            json!({"jsonrpc": "2.0", "id": 2, "result": {"resultType": "complete"}}),
        ],
        sent: sent.clone(),
        problems: Vec::new(),
    };
    let report = validate(&Revision::load("2024-11-05"), &legacy);
    assert_eq!(report.failures.len(), 4, "{}", report.failures.join("\n\n"));
    assert!(report.failures[0].contains("ListToolsResult") && report.failures[0].contains("'title' was unexpected"));

    let modern = Transcript {
        received: vec![
            json!({"jsonrpc": "2.0", "id": "s1", "method": "roots/list"}),
            json!({"jsonrpc": "2.0", "id": 2, "result": {}}),
        ],
        sent,
        problems: Vec::new(),
    };
    let report = validate(&Revision::load(MODERN), &modern);
    // The request has no place in 2026-07-28; the result lacks `resultType` (its type, its
    // envelope and the era rule each say so).
    assert_eq!(report.failures.len(), 4, "{}", report.failures.join("\n\n"));
}

/// The published schemas carry no `examples`: nothing to round-trip through the neutral
/// types. If examples appear, this fails so that a round-trip test gets written.
#[test]
fn schemas_hold_no_examples() {
    fn count(v: &Value) -> usize {
        match v {
            Value::Object(o) => o.iter().map(|(k, v)| usize::from(k == "examples" || k == "example") + count(v)).sum(),
            Value::Array(a) => a.iter().map(count).sum(),
            _ => 0,
        }
    }
    for rev in REVISIONS {
        let n = count(&read_schema(rev));
        assert_eq!(
            n, 0,
            "[{rev}] the schema now holds {n} `examples`: add a round trip of each through \
             mcpwire_protocol::types"
        );
    }
}
