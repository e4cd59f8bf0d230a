//! The official JSON schema of each protocol revision (`spec/schema/<revision>/schema.json`)
//! and the checks of messages against it: the machinery shared by the codec's shape tests
//! (mcpwire-protocol's tests/it/schema) and the reference server's (mcpwire-reference's
//! tests/it/schema.rs, which includes this file).
//!
//! 1. **Schemas**: loading each revision's schema and building its *strict* copy, in which
//!    every object schema with `properties` and no `additionalProperties` gets
//!    `additionalProperties: false` (free-form zones, `_meta` objects and `allOf` members
//!    excepted; see [`strict_copy`]).
//! 2. **Classification**: which definition each kind of server message is validated against
//!    (results by the method of the request they answer, notifications and server requests by
//!    method, envelopes and errors by revision). A message that cannot be mapped is a failure.
// Two test binaries include this file, each using a part of it.
#![allow(dead_code)]

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::PathBuf;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{Draft, ValidationError, ValidatorMap};
use serde_json::{json, Map, Value};

/// Every revision with a schema in the repository, oldest first.
pub(crate) const REVISIONS: [&str; 5] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];

/// The modern (stateless) revision.
pub(crate) const MODERN: &str = "2026-07-28";

// ---------------------------------------------------------------------------------------------
// 1. Schemas
// ---------------------------------------------------------------------------------------------

/// Property names whose sub-schemas describe free-form content (user schemas, arbitrary JSON,
/// metadata): the strict rewrite never enters them.
pub(crate) const FREE_FORM: [&str; 6] =
    ["_meta", "structuredContent", "inputSchema", "outputSchema", "requestedSchema", "arguments"];

/// Whether the sub-schema of property `name` is a free-form zone. `arguments` is free-form
/// where it is an object of values (tool, prompt and completion arguments), but not where it
/// is `Prompt.arguments`, an array of the spec-defined `PromptArgument`.
pub(crate) fn is_free_form(name: &str, schema: &Value) -> bool {
    FREE_FORM.contains(&name) && !(name == "arguments" && schema.get("type") == Some(&json!("array")))
}

/// Where a sub-schema sits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pos {
    /// Inside a free-form zone.
    pub(crate) free: bool,
    /// A direct member of an `allOf`.
    pub(crate) all_of_member: bool,
}

pub(crate) const TOP: Pos = Pos { free: false, all_of_member: false };

/// Visits `schema` and every sub-schema below it (not following `$ref`, not entering
/// `definitions`/`$defs`), telling the visitor where each one sits.
pub(crate) fn walk(schema: &mut Value, pos: Pos, visit: &mut dyn FnMut(&mut Value, Pos)) {
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
pub(crate) struct Reference {
    pub(crate) from: String,
    pub(crate) to: String,
    pub(crate) pos: Pos,
}

/// What the strict rewrite did.
#[derive(Debug, Default)]
pub(crate) struct Rewrite {
    /// Object schemas that got `additionalProperties: false`.
    pub(crate) closed: usize,
    /// `allOf` members replaced by an open copy of the definition they named.
    pub(crate) inlined: usize,
    /// Definitions left exactly as published (`_meta` objects and free-form content).
    pub(crate) untouched: Vec<String>,
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
pub(crate) fn strict_copy(doc: &Value, defs_key: &str) -> (Value, Rewrite) {
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
pub(crate) struct Revision {
    pub(crate) name: &'static str,
    pub(crate) defs_key: &'static str,
    pub(crate) doc: Value,
    pub(crate) official: ValidatorMap,
    pub(crate) strict: ValidatorMap,
    pub(crate) rewrite: Rewrite,
}

pub(crate) fn schema_file(rev: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../spec/schema").join(rev).join("schema.json")
}

pub(crate) fn read_schema(rev: &str) -> Value {
    let path = schema_file(rev);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

impl Revision {
    pub(crate) fn load(name: &'static str) -> Self {
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

    pub(crate) fn is_modern(&self) -> bool {
        self.name == MODERN
    }

    pub(crate) fn defs(&self) -> &Map<String, Value> {
        self.doc[self.defs_key].as_object().expect("definitions")
    }

    pub(crate) fn has(&self, def: &str) -> bool {
        self.defs().contains_key(def)
    }

    /// Whether definition `def` declares the member `member`.
    pub(crate) fn declares(&self, def: &str, member: &str) -> bool {
        self.defs().get(def).and_then(|d| d.get("properties")).is_some_and(|p| p.get(member).is_some())
    }

    pub(crate) fn pointer(&self, def: &str) -> String {
        format!("#/{}/{}", self.defs_key, def)
    }

    /// Whether `instance` is valid against `def` in the published schema.
    pub(crate) fn officially_valid(&self, def: &str, instance: &Value) -> bool {
        self.official.get(&self.pointer(def)).is_some_and(|v| v.is_valid(instance))
    }

    /// Whether `instance` is valid against `def` in the strict schema.
    pub(crate) fn strictly_valid(&self, def: &str, instance: &Value) -> bool {
        self.strict.get(&self.pointer(def)).is_some_and(|v| v.is_valid(instance))
    }

    /// Validates `instance` against `def` in the strict schema; the error says whether the
    /// published schema accepts it (an extra member) or not (a real violation), and why.
    pub(crate) fn check(&self, def: &str, instance: &Value) -> Result<(), String> {
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

pub(crate) fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let cut: String = s.chars().take(max).collect();
    format!("{cut}…")
}

/// Writes a validation error, with the reasons of every branch of a failed `anyOf`/`oneOf`.
pub(crate) fn describe(e: &ValidationError<'_>, depth: usize, out: &mut String) {
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
pub(crate) fn result_def(method: &str) -> Option<&'static str> {
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
pub(crate) const MULTI_ROUND: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// The definition of a notification the server sends.
pub(crate) fn notification_def(method: &str) -> Option<&'static str> {
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
pub(crate) fn server_request_def(method: &str) -> Option<&'static str> {
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
pub(crate) fn typed_error_def(code: i64) -> Option<&'static str> {
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
pub(crate) fn body_for(rev: &Revision, def: &str, msg: &Value) -> Value {
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
pub(crate) struct Check {
    pub(crate) def: String,
    pub(crate) instance: Value,
    pub(crate) part: &'static str,
}

impl Check {
    pub(crate) fn new(def: &str, instance: Value, part: &'static str) -> Self {
        Self { def: def.to_owned(), instance, part }
    }
}

/// What a message is, and the validations it gets; `Err` when it cannot be mapped.
pub(crate) fn classify(
    rev: &Revision,
    msg: &Value,
    sent: &HashMap<String, String>,
) -> Result<(String, Vec<Check>), String> {
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
pub(crate) struct Report {
    pub(crate) messages: usize,
    pub(crate) checks: usize,
    pub(crate) failures: Vec<String>,
}

/// Validates every message of a transcript; also checks the era's `resultType` rule.
pub(crate) fn validate(rev: &Revision, t: &Transcript) -> Report {
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
// What a scenario saw (the scripted client of mcpwire-reference's tests/it/schema.rs fills it)
// ---------------------------------------------------------------------------------------------

/// Everything a scenario saw.
pub(crate) struct Transcript {
    /// Every message the server sent, in order.
    pub(crate) received: Vec<Value>,
    /// The method of every request the client sent, by id (as JSON text).
    pub(crate) sent: HashMap<String, String>,
    /// Semantic expectations that did not hold.
    pub(crate) problems: Vec<String>,
}
