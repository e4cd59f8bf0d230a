//! Answering what a server asks of the client during a command.
//!
//! - **Elicitation**: on a terminal, an interactive form built from `requestedSchema`
//!   (defaults pre-filled, enumerations as choices); otherwise `--elicit JSON` (accept with
//!   these values, defaults filling the rest) or `--decline`; with neither, a clear refusal.
//! - **Sampling**: refused with a message naming `--sample-reply`, or answered with its text.
//! - **Roots**: the `--root` directories, as `file://` URIs.
//! - **Notifications**: log messages and progress go to the [`Ui`].

use std::collections::HashSet;
use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use mcpwire_client::{Client, ErrorObject, ServerNotification};
use mcpwire_protocol::types::{
    ContentBlock, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, JsonObject, Role, Root,
    SamplingContent,
};
use serde_json::{Map, Value};

use super::args::{ConnectOptions, InteractOptions};
use super::error::CliError;
use super::settle::ListChanges;
use super::ui::Ui;

/// The error code sent back when the user (or the command line) refuses a request: the
/// code the specification's examples use for a rejected sampling request.
const USER_REJECTED: i64 = -1;

/// How elicitation requests are answered.
#[derive(Debug, Clone)]
pub enum ElicitAnswer {
    /// Accept with these values (`--elicit`).
    Accept(JsonObject),
    /// Decline (`--decline`).
    Decline,
    /// Ask the user with a form on the terminal.
    Interactive,
    /// Refuse: nothing said how to answer and there is no terminal.
    Refuse,
}

impl ElicitAnswer {
    /// Chooses from the command line and whether stdin and stderr are terminals.
    pub fn from_options(options: &InteractOptions) -> Result<Self, CliError> {
        if options.decline {
            return Ok(Self::Decline);
        }
        if let Some(text) = &options.elicit {
            return match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(o)) => Ok(Self::Accept(o)),
                Ok(_) => Err(CliError::usage("--elicit must be a JSON object")),
                Err(e) => Err(CliError::usage(format!("--elicit is not valid JSON: {e}"))),
            };
        }
        if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
            Ok(Self::Interactive)
        } else {
            Ok(Self::Refuse)
        }
    }
}

/// Builds the client for a command: identity, timeouts, log level, handlers.
/// Every `list_changed` the server announces is counted in `changes`.
pub fn build_client(
    connect: &ConnectOptions,
    interact: &InteractOptions,
    ui: Arc<Ui>,
    changes: Arc<ListChanges>,
) -> Result<Client, CliError> {
    let elicit = ElicitAnswer::from_options(interact)?;
    let roots = roots(&connect.roots)?;
    let mut builder = Client::builder("mcp", env!("CARGO_PKG_VERSION"))
        .request_timeout(connect.timeout)
        .probe_timeout(connect.timeout.min(Duration::from_secs(3)))
        .close_grace(Duration::from_secs(2));
    if let Some(v) = connect.protocol_version {
        builder = builder.protocol_version(v);
    }
    if let Some(level) = connect.log_level.level() {
        builder = builder.log_level(level);
    }
    let notify_ui = ui.clone();
    builder = builder.on_notification(move |n| match n {
        ServerNotification::Log(message) => notify_ui.log(message),
        ServerNotification::Progress(p) => notify_ui.progress(p),
        other => changes.record(other),
    });
    let elicit_ui = ui.clone();
    builder = builder.elicitation(move |params| {
        let ui = elicit_ui.clone();
        let answer = elicit.clone();
        async move { answer_elicitation(params, answer, ui).await }
    });
    let reply = interact.sample_reply.clone();
    let sample_ui = ui;
    builder = builder.sampling(move |params| {
        let reply = reply.clone();
        let ui = sample_ui.clone();
        async move { answer_sampling(&params, reply, &ui) }
    });
    if !roots.is_empty() {
        builder = builder.static_roots(roots);
    }
    Ok(builder.build())
}

fn answer_sampling(
    params: &CreateMessageParams,
    reply: Option<String>,
    ui: &Ui,
) -> Result<CreateMessageResult, ErrorObject> {
    let asked = params
        .messages
        .last()
        .map(|m| match &m.content {
            SamplingContent::Single(b) => b.as_text().unwrap_or("(non-text content)").to_owned(),
            SamplingContent::Multiple(bs) => bs.iter().filter_map(ContentBlock::as_text).collect::<Vec<_>>().join(" "),
        })
        .unwrap_or_default();
    let asked = super::error::one_line(&asked);
    match reply {
        Some(text) => {
            ui.note(&format!("the server asked for a model reply to {asked:?}; answered with --sample-reply"));
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: SamplingContent::Single(ContentBlock::text(text)),
                model: "mcpwire-cli".into(),
                stop_reason: Some("endTurn".into()),
                meta: None,
            })
        }
        None => {
            ui.note(&format!(
                "the server asked for a model reply (sampling) to {asked:?}: refused; pass --sample-reply TEXT to answer"
            ));
            ui.mark_refused();
            Err(ErrorObject::new(USER_REJECTED, "sampling refused: the mcp command line was given no --sample-reply"))
        }
    }
}

async fn answer_elicitation(
    params: ElicitParams,
    answer: ElicitAnswer,
    ui: Arc<Ui>,
) -> Result<ElicitResult, ErrorObject> {
    let url_mode = params.mode.as_deref() == Some("url");
    let what = match (&params.url, url_mode) {
        (Some(url), true) => format!("to open {url} ({})", super::error::one_line(&params.message)),
        _ => format!("for input: {:?}", super::error::one_line(&params.message)),
    };
    match answer {
        ElicitAnswer::Decline => {
            ui.note(&format!("the server asked {what}; declined (--decline)"));
            Ok(action("decline", None))
        }
        ElicitAnswer::Accept(_) if url_mode => {
            ui.note(&format!("the server asked {what}; accepted (--elicit)"));
            Ok(action("accept", None))
        }
        ElicitAnswer::Accept(given) => {
            let schema = params.requested_schema.clone().unwrap_or_default();
            match fill(&schema, given) {
                Ok(content) => {
                    ui.note(&format!("the server asked {what}; answered with --elicit"));
                    Ok(action("accept", Some(content)))
                }
                Err(e) => {
                    ui.note(&format!("the server asked {what}, but --elicit does not fit its form: {e}"));
                    ui.mark_refused();
                    Err(ErrorObject::new(USER_REJECTED, format!("--elicit does not fit the form: {e}")))
                }
            }
        }
        ElicitAnswer::Refuse => {
            ui.note(&format!(
                "the server asked {what}, but there is no terminal to ask on: pass --elicit JSON to answer or --decline"
            ));
            ui.mark_refused();
            Err(ErrorObject::new(USER_REJECTED, "elicitation refused: no terminal, and no --elicit or --decline given"))
        }
        ElicitAnswer::Interactive => {
            let form_ui = ui.clone();
            let outcome = tokio::task::spawn_blocking(move || form_ui.suspend(|| form(&params))).await;
            match outcome {
                Ok(Ok(result)) => Ok(result),
                // Ctrl-C while the form is up: cancelled (the interrupt itself ends the command).
                Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => Ok(action("cancel", None)),
                Ok(Err(e)) => {
                    ui.note(&format!("the form could not be shown ({e}); cancelled"));
                    Ok(action("cancel", None))
                }
                Err(_) => Ok(action("cancel", None)),
            }
        }
    }
}

fn action(action: &str, content: Option<JsonObject>) -> ElicitResult {
    ElicitResult { action: action.into(), content, meta: None }
}

/// `--elicit` values completed with the form's defaults; an error names a required field
/// that has neither, or a field the form does not have.
pub fn fill(schema: &JsonObject, mut given: JsonObject) -> Result<JsonObject, String> {
    let props = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    if !props.is_empty() {
        if let Some(unknown) = given.keys().find(|k| !props.contains_key(*k)) {
            let names: Vec<&str> = props.keys().map(String::as_str).collect();
            return Err(format!("the form has no field `{unknown}` (its fields: {})", names.join(", ")));
        }
    }
    for (name, prop) in &props {
        if !given.contains_key(name) {
            if let Some(default) = prop.get("default") {
                given.insert(name.clone(), default.clone());
            }
        }
    }
    let required = schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str);
    let missing: Vec<&str> = required.filter(|r| !given.contains_key(*r)).collect();
    if !missing.is_empty() {
        return Err(format!("missing required field(s) {}", missing.join(", ")));
    }
    Ok(given)
}

/// One choice of an enumerated field: its value and what to show.
fn choices(prop: &Value) -> Option<Vec<(Value, String)>> {
    if let Some(values) = prop.get("enum").and_then(Value::as_array) {
        let names = prop.get("enumNames").and_then(Value::as_array);
        return Some(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let label = names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .unwrap_or_else(|| v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string()));
                    (v.clone(), label)
                })
                .collect(),
        );
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(branches) = prop.get(key).and_then(Value::as_array) {
            let options: Option<Vec<(Value, String)>> = branches
                .iter()
                .map(|b| {
                    let c = b.get("const")?.clone();
                    let label = b
                        .get("title")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .unwrap_or_else(|| c.as_str().map(str::to_owned).unwrap_or_else(|| c.to_string()));
                    Some((c, label))
                })
                .collect();
            if let Some(o) = options.filter(|o| !o.is_empty()) {
                return Some(o);
            }
        }
    }
    None
}

/// The interactive form (blocking; on the terminal).
fn form(params: &ElicitParams) -> std::io::Result<ElicitResult> {
    use dialoguer::theme::ColorfulTheme;
    use dialoguer::{Confirm, Input, MultiSelect, Select};

    let theme = ColorfulTheme::default();
    let bold = console::Style::new().for_stderr().bold();
    if params.mode.as_deref() == Some("url") {
        let url = params.url.as_deref().unwrap_or_default();
        eprintln!("{}", bold.apply_to(format!("The server asks you to open this page: {}", params.message)));
        eprintln!("  {url}");
        return Ok(match Confirm::with_theme(&theme).with_prompt("Done?").interact_opt()? {
            Some(true) => action("accept", None),
            Some(false) => action("decline", None),
            None => action("cancel", None),
        });
    }
    eprintln!("{}", bold.apply_to(format!("The server asks: {}", params.message)));
    let schema = params.requested_schema.clone().unwrap_or_default();
    let required: HashSet<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let props = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut content = Map::new();
    for (name, prop) in &props {
        let optional = !required.contains(name.as_str());
        let title = prop.get("title").and_then(Value::as_str).unwrap_or(name);
        let mut label = match prop.get("description").and_then(Value::as_str) {
            Some(d) if d != title => format!("{title} ({d})"),
            _ => title.to_owned(),
        };
        if optional {
            label.push_str(" [optional]");
        }
        let default = prop.get("default");
        let kind = prop.get("type").and_then(Value::as_str).unwrap_or("string");
        if kind == "array" {
            let items = prop.get("items").cloned().unwrap_or(Value::Null);
            let options = choices(&items).unwrap_or_default();
            let chosen: Vec<bool> =
                options.iter().map(|(v, _)| default.and_then(Value::as_array).is_some_and(|d| d.contains(v))).collect();
            let labels: Vec<&str> = options.iter().map(|(_, l)| l.as_str()).collect();
            let Some(picked) = MultiSelect::with_theme(&theme)
                .with_prompt(format!("{label} (space to toggle, enter to confirm)"))
                .items(&labels)
                .defaults(&chosen)
                .interact_opt()?
            else {
                return Ok(action("cancel", None));
            };
            if !(optional && picked.is_empty()) {
                content.insert(name.clone(), Value::Array(picked.into_iter().map(|i| options[i].0.clone()).collect()));
            }
        } else if let Some(options) = choices(prop) {
            let mut labels: Vec<String> = options.iter().map(|(_, l)| l.clone()).collect();
            let skip = optional && default.is_none();
            if skip {
                labels.insert(0, "(no answer)".into());
            }
            let offset = usize::from(skip);
            let start = default.and_then(|d| options.iter().position(|(v, _)| v == d)).map_or(0, |i| i + offset);
            let Some(i) =
                Select::with_theme(&theme).with_prompt(&label).items(&labels).default(start).interact_opt()?
            else {
                return Ok(action("cancel", None));
            };
            if !(skip && i == 0) {
                content.insert(name.clone(), options[i - offset].0.clone());
            }
        } else if kind == "boolean" {
            let Some(b) = Confirm::with_theme(&theme)
                .with_prompt(&label)
                .default(default.and_then(Value::as_bool).unwrap_or(false))
                .interact_opt()?
            else {
                return Ok(action("cancel", None));
            };
            content.insert(name.clone(), Value::Bool(b));
        } else {
            let numeric = matches!(kind, "number" | "integer");
            let integer = kind == "integer";
            let min_len = prop.get("minLength").and_then(Value::as_u64);
            let max_len = prop.get("maxLength").and_then(Value::as_u64);
            let format = prop.get("format").and_then(Value::as_str).map(str::to_owned);
            let minimum = prop.get("minimum").and_then(Value::as_f64);
            let maximum = prop.get("maximum").and_then(Value::as_f64);
            let mut input = Input::<String>::with_theme(&theme).with_prompt(&label).allow_empty(optional);
            if let Some(d) = default {
                input = input.with_initial_text(d.as_str().map(str::to_owned).unwrap_or_else(|| d.to_string()));
            }
            let text = input
                .validate_with(move |s: &String| -> Result<(), String> {
                    if s.is_empty() {
                        return Ok(());
                    }
                    if numeric {
                        let n: f64 = s.trim().parse().map_err(|_| "enter a number".to_owned())?;
                        if integer && n.fract() != 0.0 {
                            return Err("enter a whole number".into());
                        }
                        if minimum.is_some_and(|m| n < m) || maximum.is_some_and(|m| n > m) {
                            let low = minimum.map_or("-∞".into(), super::ui::number);
                            let high = maximum.map_or("∞".into(), super::ui::number);
                            return Err(format!("enter a number from {low} to {high}"));
                        }
                    }
                    let len = s.chars().count() as u64;
                    if min_len.is_some_and(|m| len < m) || max_len.is_some_and(|m| len > m) {
                        return Err(format!(
                            "enter between {} and {} characters",
                            min_len.unwrap_or(0),
                            max_len.map_or("any number of".into(), |m| m.to_string())
                        ));
                    }
                    if format.as_deref() == Some("email") && !s.contains('@') {
                        return Err("enter an email address".into());
                    }
                    Ok(())
                })
                .interact_text()?;
            if text.is_empty() {
                continue;
            }
            let value = if numeric {
                let n: f64 = text.trim().parse().unwrap_or_default();
                if integer {
                    Value::from(n as i64)
                } else {
                    serde_json::Number::from_f64(n).map(Value::Number).unwrap_or(Value::Null)
                }
            } else {
                Value::String(text)
            };
            content.insert(name.clone(), value);
        }
    }
    let choice = Select::with_theme(&theme)
        .with_prompt("Send this answer?")
        .items(["Accept: send it", "Decline", "Cancel"])
        .default(0)
        .interact_opt()?;
    Ok(match choice {
        Some(0) => action("accept", Some(content)),
        Some(1) => action("decline", None),
        _ => action("cancel", None),
    })
}

/// The `--root` directories as roots: `file://` URIs named after their last component.
pub fn roots(paths: &[std::path::PathBuf]) -> Result<Vec<Root>, CliError> {
    paths
        .iter()
        .map(|p| {
            let abs = std::fs::canonicalize(p).map_err(|e| CliError::usage(format!("--root {}: {e}", p.display())))?;
            let name = abs.file_name().map(|n| n.to_string_lossy().into_owned());
            Ok(Root { uri: file_uri(&abs), name, meta: None })
        })
        .collect()
}

/// A `file://` URI for an absolute path, percent-encoding what a URI path cannot hold.
pub fn file_uri(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let mut uri = String::from("file://");
    if !text.starts_with('/') {
        uri.push('/');
    }
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn elicit_values_take_defaults_and_need_required_fields() {
        let schema = obj(json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "Ada"}, "age": {"type": "integer"}, "email": {"type": "string"}
        }, "required": ["email"]}));
        assert_eq!(fill(&schema, obj(json!({"email": "a@b"}))), Ok(obj(json!({"email": "a@b", "name": "Ada"}))));
        assert_eq!(fill(&schema, obj(json!({"age": 3}))), Err("missing required field(s) email".into()));
        assert!(fill(&schema, obj(json!({"emial": "x", "email": "y"}))).unwrap_err().contains("no field `emial`"));
    }

    #[test]
    fn enum_choices_in_every_form() {
        let plain = json!({"type": "string", "enum": ["a", "b"], "enumNames": ["A!", "B!"]});
        assert_eq!(choices(&plain), Some(vec![(json!("a"), "A!".into()), (json!("b"), "B!".into())]));
        let titled = json!({"type": "string", "oneOf": [{"const": "v1", "title": "One"}, {"const": "v2"}]});
        assert_eq!(choices(&titled), Some(vec![(json!("v1"), "One".into()), (json!("v2"), "v2".into())]));
        assert_eq!(choices(&json!({"type": "string"})), None);
    }

    #[test]
    fn file_uris_are_encoded() {
        assert_eq!(file_uri(Path::new("/tmp/a b/ü")), "file:///tmp/a%20b/%C3%BC");
    }
}
