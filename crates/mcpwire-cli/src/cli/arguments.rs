//! Tool arguments from the command line, read against the tool's `inputSchema`.
//!
//! `key=value` takes its type from the schema: a string stays as typed, a number or boolean
//! is parsed, an object or array is read as JSON (an array also grows by repeating the key:
//! `tag=a tag=b`). `key:=JSON` passes JSON as is. `--args JSON` gives an object whose members
//! the pairs override. A key the schema does not have, a value of the wrong type, a missing
//! required argument or anything else the schema rejects is a one-line usage error naming
//! what the schema expects, before anything is sent.

use std::collections::{BTreeSet, HashSet};

use mcpwire_protocol::types::{JsonObject, Tool};
use serde_json::{Map, Value};

use super::error::CliError;

/// Follows a local `$ref` (`#/…`) from `schema` within `root`, a few hops at most.
fn resolve<'a>(mut schema: &'a Value, root: &'a Value) -> &'a Value {
    for _ in 0..16 {
        let Some(reference) = schema.get("$ref").and_then(Value::as_str) else { return schema };
        let Some(pointer) = reference.strip_prefix('#') else { return schema };
        let target = if pointer.is_empty() {
            Some(root)
        } else if pointer.starts_with('/') {
            root.pointer(pointer)
        } else {
            find_anchor(root, pointer)
        };
        match target {
            Some(t) => schema = t,
            None => return schema,
        }
    }
    schema
}

/// Finds the subschema with `"$anchor": anchor` under `$defs` or `definitions`.
fn find_anchor<'a>(root: &'a Value, anchor: &str) -> Option<&'a Value> {
    ["$defs", "definitions"]
        .iter()
        .filter_map(|k| root.get(*k)?.as_object())
        .flat_map(|defs| defs.values())
        .find(|d| d.get("$anchor").and_then(Value::as_str) == Some(anchor))
}

/// The JSON type of a value, with integral numbers as `integer`.
fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The types a schema allows; `None` when it does not say.
fn types(schema: &Value, root: &Value) -> Option<BTreeSet<String>> {
    let schema = resolve(schema, root);
    match schema.get("type") {
        Some(Value::String(t)) => return Some(BTreeSet::from([t.clone()])),
        Some(Value::Array(ts)) => return Some(ts.iter().filter_map(Value::as_str).map(str::to_owned).collect()),
        _ => {}
    }
    if let Some(values) = enum_values(schema, root) {
        return Some(values.iter().map(|v| type_of(v).to_owned()).collect());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let mut all = BTreeSet::new();
            for b in branches {
                all.extend(types(b, root)?);
            }
            return Some(all);
        }
    }
    if let Some(branches) = schema.get("allOf").and_then(Value::as_array) {
        return branches.iter().find_map(|b| types(b, root));
    }
    None
}

/// The values an enumeration allows: `enum`, `const`, or `oneOf`/`anyOf` of `const`s.
fn enum_values(schema: &Value, root: &Value) -> Option<Vec<Value>> {
    let schema = resolve(schema, root);
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Some(values.clone());
    }
    if let Some(c) = schema.get("const") {
        return Some(vec![c.clone()]);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let consts: Option<Vec<Value>> = branches.iter().map(|b| resolve(b, root).get("const").cloned()).collect();
            if let Some(consts) = consts.filter(|c| !c.is_empty()) {
                return Some(consts);
            }
        }
    }
    None
}

/// Whether a value of JSON type `actual` fits a schema allowing `allowed`.
fn allows(allowed: &BTreeSet<String>, actual: &str) -> bool {
    allowed.contains(actual) || (actual == "integer" && allowed.contains("number"))
}

/// A short description of what a schema wants: `number`, `string[]`, `"a"|"b"`, `object`.
pub fn describe(schema: &Value, root: &Value) -> String {
    let schema = resolve(schema, root);
    if let Some(values) = enum_values(schema, root) {
        let shown: Vec<String> = values.iter().take(8).map(Value::to_string).collect();
        let more = if values.len() > 8 { "|…" } else { "" };
        return format!("{}{more}", shown.join("|"));
    }
    match types(schema, root) {
        None => "any".to_owned(),
        Some(ts) => ts
            .iter()
            .map(|t| {
                if t == "array" {
                    match schema.get("items") {
                        Some(items) if types(items, root).is_some() || enum_values(items, root).is_some() => {
                            let inner = describe(items, root);
                            if inner.contains('|') {
                                format!("({inner})[]")
                            } else {
                                format!("{inner}[]")
                            }
                        }
                        _ => "array".to_owned(),
                    }
                } else {
                    t.clone()
                }
            })
            .collect::<Vec<_>>()
            .join("|"),
    }
}

/// The properties of an object schema, in order, with whether each is required.
fn properties(schema: &JsonObject) -> Vec<(String, Value, bool)> {
    let required: HashSet<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| props.iter().map(|(k, v)| (k.clone(), v.clone(), required.contains(k.as_str()))).collect())
        .unwrap_or_default()
}

/// A tool's argument signature: `text: string, count?: integer = 3`.
pub fn signature(schema: &JsonObject) -> String {
    let root = Value::Object(schema.clone());
    properties(schema)
        .iter()
        .map(|(name, prop, required)| {
            let opt = if *required { "" } else { "?" };
            let default = resolve(prop, &root).get("default").map(|d| format!(" = {d}")).unwrap_or_default();
            format!("{name}{opt}: {}{default}", describe(prop, &root))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The closest of `candidates` to `word`, if it is close enough to be a likely typo.
pub fn suggest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = word.to_lowercase();
    candidates
        .into_iter()
        .filter_map(|c| {
            let cl = c.to_lowercase();
            let prefix = lower.chars().count() >= 2 && (cl.starts_with(&lower) || lower.starts_with(&cl));
            let d = if cl == lower || prefix { 0 } else { distance(&lower, &cl) };
            let allowed = (lower.chars().count().max(cl.chars().count()) / 3).min(3);
            (d <= allowed).then_some((d, c))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Edit distance with adjacent transpositions (optimal string alignment): `cuont` is one
/// edit from `count`.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// Splits `key=value` (or `key:=JSON`, the second member then `true`).
pub fn split_pair(pair: &str) -> Result<(&str, &str, bool), CliError> {
    let Some((key, value)) = pair.split_once('=') else {
        return Err(CliError::usage(format!("`{pair}` is not key=value")));
    };
    let (key, json) = match key.strip_suffix(':') {
        Some(k) => (k, true),
        None => (key, false),
    };
    if key.is_empty() {
        return Err(CliError::usage(format!("`{pair}` has no key before `=`")));
    }
    Ok((key, value, json))
}

fn parse_json(key: &str, raw: &str) -> Result<Value, CliError> {
    serde_json::from_str(raw).map_err(|e| CliError::usage(format!("argument `{key}`: `{raw}` is not valid JSON ({e})")))
}

/// Reads one value as the schema `prop` wants it.
fn convert(key: &str, raw: &str, prop: &Value, root: &Value) -> Result<Value, CliError> {
    let want = || describe(prop, root);
    if let Some(values) = enum_values(prop, root) {
        let parsed = serde_json::from_str::<Value>(raw).ok();
        return values
            .iter()
            .find(|v| v.as_str() == Some(raw) || parsed.as_ref() == Some(*v))
            .cloned()
            .ok_or_else(|| CliError::usage(format!("argument `{key}` must be one of {}, not `{raw}`", want())));
    }
    let Some(allowed) = types(prop, root) else {
        // The schema does not say: JSON if it reads as JSON, else the text.
        return Ok(serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned())));
    };
    if allowed.len() == 1 && allowed.contains("string") {
        return Ok(Value::String(raw.to_owned()));
    }
    let lowered = raw.trim().to_ascii_lowercase();
    let parsed = match lowered.as_str() {
        "true" | "false" if allowed.contains("boolean") => Some(Value::Bool(lowered == "true")),
        _ => serde_json::from_str::<Value>(raw.trim()).ok(),
    };
    if let Some(v) = parsed {
        let t = type_of(&v);
        if allowed.contains("string") && t == "string" {
            return Ok(v);
        }
        if t != "string" && allows(&allowed, t) {
            // An integral float (`3.0`) where an integer is wanted is sent as an integer.
            if t == "integer" && !allowed.contains("number") {
                if let Some(f) = v.as_f64().filter(|_| !v.is_i64() && !v.is_u64()) {
                    return Ok(Value::from(f as i64));
                }
            }
            return Ok(v);
        }
    }
    if allowed.contains("string") {
        return Ok(Value::String(raw.to_owned()));
    }
    Err(CliError::usage(format!("argument `{key}` expects {}, got `{raw}`", article(&want()))))
}

/// `a number`, `an integer`, `"a"|"b"` as is.
fn article(what: &str) -> String {
    match what.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => format!("an {what}"),
        Some(c) if c.is_ascii_alphabetic() => format!("a {what}"),
        _ => what.to_owned(),
    }
}

/// Whether a schema allows only arrays.
fn array_only(prop: &Value, root: &Value) -> bool {
    types(prop, root).is_some_and(|t| t.len() == 1 && t.contains("array"))
}

/// The `--args` object, if given.
fn base_object(json: Option<&str>) -> Result<Map<String, Value>, CliError> {
    match json {
        None => Ok(Map::new()),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err(CliError::usage("--args must be a JSON object")),
            Err(e) => Err(CliError::usage(format!("--args is not valid JSON: {e}"))),
        },
    }
}

/// Arguments without a schema (`--no-check`): JSON where the value reads as JSON, text
/// otherwise.
pub fn unchecked_arguments(json: Option<&str>, pairs: &[String]) -> Result<Map<String, Value>, CliError> {
    let mut args = base_object(json)?;
    for pair in pairs {
        let (key, raw, is_json) = split_pair(pair)?;
        let value = if is_json {
            parse_json(key, raw)?
        } else {
            serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()))
        };
        args.insert(key.to_owned(), value);
    }
    Ok(args)
}

/// Builds a tool's arguments from `--args` and `key=value` pairs, checked against its
/// input schema.
pub fn tool_arguments(tool: &Tool, json: Option<&str>, pairs: &[String]) -> Result<Map<String, Value>, CliError> {
    let schema = &tool.input_schema;
    let root = Value::Object(schema.clone());
    let props = schema.get("properties").and_then(Value::as_object);
    // Keys beyond `properties`: typed by `additionalProperties` when it is a schema; allowed
    // untyped when it is `true` or when the schema lists no properties at all; otherwise a
    // key the schema does not name is taken for a typo.
    let extra = match schema.get("additionalProperties") {
        Some(Value::Object(o)) => Some(Value::Object(o.clone())),
        Some(Value::Bool(true)) => Some(Value::Object(Map::new())),
        None if props.is_none() => Some(Value::Object(Map::new())),
        _ => None,
    };
    let mut args = base_object(json)?;
    if extra.is_none() {
        if let Some(key) = args.keys().find(|k| !props.is_some_and(|p| p.contains_key(*k))) {
            return Err(unknown_argument(tool, key));
        }
    }
    let mut seen = HashSet::new();
    for pair in pairs {
        let (key, raw, is_json) = split_pair(pair)?;
        let prop = match props.and_then(|p| p.get(key)).cloned().or_else(|| extra.clone()) {
            Some(p) => p,
            None => return Err(unknown_argument(tool, key)),
        };
        let first = seen.insert(key.to_owned());
        if array_only(&prop, &root) && !(is_json || raw.trim_start().starts_with('[')) {
            // One more item of an array argument.
            let item_schema = resolve(&prop, &root).get("items").cloned().unwrap_or(Value::Object(Map::new()));
            let item = convert(key, raw, &item_schema, &root)?;
            match args.get_mut(key) {
                Some(Value::Array(items)) if !first => items.push(item),
                _ => {
                    args.insert(key.to_owned(), Value::Array(vec![item]));
                }
            }
            continue;
        }
        if !first {
            return Err(CliError::usage(format!("argument `{key}` is given twice")));
        }
        let value = if is_json { parse_json(key, raw)? } else { convert(key, raw, &prop, &root)? };
        args.insert(key.to_owned(), value);
    }
    check(tool, &args)?;
    Ok(args)
}

fn unknown_argument(tool: &Tool, key: &str) -> CliError {
    let names: Vec<String> = properties(&tool.input_schema).into_iter().map(|(n, _, _)| n).collect();
    let hint =
        suggest(key, names.iter().map(String::as_str)).map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default();
    let takes = if names.is_empty() {
        "it takes no arguments".to_owned()
    } else {
        format!("it takes: {}", signature(&tool.input_schema))
    };
    CliError::usage(format!("tool `{}` has no argument `{key}`{hint}; {takes}", tool.name))
}

/// Checks arguments against the tool's schema: required members first (for a plain
/// message), then the whole schema.
fn check(tool: &Tool, args: &Map<String, Value>) -> Result<(), CliError> {
    let schema = &tool.input_schema;
    let root = Value::Object(schema.clone());
    let missing: Vec<String> = properties(schema)
        .into_iter()
        .filter(|(name, _, required)| *required && !args.contains_key(name))
        .map(|(name, prop, _)| format!("{name}: {}", describe(&prop, &root)))
        .collect();
    let listed: HashSet<String> = properties(schema).into_iter().map(|(n, _, _)| n).collect();
    let missing_unlisted: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|r| !listed.contains(*r) && !args.contains_key(*r))
        .collect();
    if !missing.is_empty() || !missing_unlisted.is_empty() {
        let mut all = missing;
        all.extend(missing_unlisted.iter().map(|s| (*s).to_owned()));
        let (s, them) = if all.len() == 1 { ("", "it") } else { ("s", "them") };
        return Err(CliError::usage(format!(
            "tool `{}` needs argument{s} {} (give {them} as key=value)",
            tool.name,
            all.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", ")
        )));
    }
    let validator = match jsonschema::validator_for(&root) {
        Ok(v) => v,
        Err(e) => {
            tracing::debug!(tool = %tool.name, "the tool's input schema cannot be compiled, not checked: {e}");
            return Ok(());
        }
    };
    let instance = Value::Object(args.clone());
    let Some(error) = validator.iter_errors(&instance).next() else { return Ok(()) };
    let path = error.instance_path().to_string();
    let what = super::error::one_line(&error.to_string());
    let message = match path.trim_start_matches('/') {
        "" => format!("the arguments do not fit the schema of tool `{}`: {what}", tool.name),
        p => format!("argument `{}` does not fit the schema of tool `{}`: {what}", p.replace('/', "."), tool.name),
    };
    Err(CliError::usage(message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(schema: Value) -> Tool {
        Tool::new("t", "test", schema)
    }

    fn args(t: &Tool, pairs: &[&str]) -> Result<Value, String> {
        let pairs: Vec<String> = pairs.iter().map(|s| (*s).to_owned()).collect();
        tool_arguments(t, None, &pairs).map(Value::Object).map_err(|e| e.message)
    }

    #[test]
    fn values_take_the_schema_type() {
        let t = tool(json!({"type": "object", "properties": {
            "s": {"type": "string"}, "n": {"type": "number"}, "i": {"type": "integer"},
            "b": {"type": "boolean"}, "o": {"type": "object"}, "a": {"type": "array", "items": {"type": "integer"}},
            "e": {"enum": ["x", "y", 3]}, "u": {"type": ["string", "null"]}, "any": {}
        }}));
        assert_eq!(
            args(&t, &["s=123", "n=1.5", "i=3.0", "b=TRUE", "o={\"k\":1}", "a=1", "a=2", "e=3", "u=null", "any=[1]"]),
            Ok(
                json!({"s": "123", "n": 1.5, "i": 3, "b": true, "o": {"k": 1}, "a": [1, 2], "e": 3, "u": null, "any": [1]})
            )
        );
        assert_eq!(
            args(&t, &["a=[4,5]", "u=hello", "any=word"]),
            Ok(json!({"a": [4, 5], "u": "hello", "any": "word"}))
        );
        assert_eq!(args(&t, &["s:=\"quoted\"", "o:={}"]), Ok(json!({"s": "quoted", "o": {}})));
    }

    #[test]
    fn wrong_values_name_the_expectation() {
        let t = tool(json!({"type": "object", "properties": {
            "n": {"type": "number"}, "i": {"type": "integer"}, "b": {"type": "boolean"}, "o": {"type": "object"},
            "e": {"type": "string", "enum": ["phone", "email"]}, "text": {"type": "string"}
        }, "required": ["text"]}));
        assert_eq!(args(&t, &["text=x", "n=abc"]).unwrap_err(), "argument `n` expects a number, got `abc`");
        assert_eq!(args(&t, &["text=x", "i=1.5"]).unwrap_err(), "argument `i` expects an integer, got `1.5`");
        assert_eq!(args(&t, &["text=x", "b=yes"]).unwrap_err(), "argument `b` expects a boolean, got `yes`");
        assert_eq!(args(&t, &["text=x", "o=[1]"]).unwrap_err(), "argument `o` expects an object, got `[1]`");
        assert_eq!(
            args(&t, &["text=x", "e=fax"]).unwrap_err(),
            "argument `e` must be one of \"phone\"|\"email\", not `fax`"
        );
        assert!(args(&t, &["txt=x"]).unwrap_err().starts_with("tool `t` has no argument `txt` (did you mean `text`?)"));
        assert_eq!(args(&t, &[]).unwrap_err(), "tool `t` needs argument `text: string` (give it as key=value)");
        assert_eq!(args(&t, &["text=a", "text=b"]).unwrap_err(), "argument `text` is given twice");
        assert_eq!(args(&t, &["novalue"]).unwrap_err(), "`novalue` is not key=value");
    }

    #[test]
    fn the_whole_schema_is_checked() {
        let t = tool(json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 10}}}));
        let e = args(&t, &["n=3"]).unwrap_err();
        assert!(e.starts_with("argument `n` does not fit the schema of tool `t`: 3 is less than"), "{e}");
        let t = tool(json!({"type": "object", "properties": {"p": {"type": "string"}, "q": {"type": "string"}},
            "anyOf": [{"required": ["p"]}, {"required": ["q"]}]}));
        assert!(args(&t, &[]).unwrap_err().starts_with("the arguments do not fit the schema of tool `t`"));
        assert_eq!(args(&t, &["q=1"]), Ok(json!({"q": "1"})));
    }

    #[test]
    fn refs_and_signatures() {
        let schema = json!({"type": "object", "$defs": {"addr": {"$anchor": "A", "type": "object"}},
            "properties": {"address": {"$ref": "#/$defs/addr"}, "alt": {"$ref": "#A"}, "count": {"type": "integer", "default": 3},
                "mode": {"oneOf": [{"const": "a", "title": "A"}, {"const": "b"}]}, "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["address"]});
        let t = tool(schema.clone());
        assert_eq!(args(&t, &["address={\"c\":1}", "alt={}"]), Ok(json!({"address": {"c": 1}, "alt": {}})));
        assert_eq!(
            signature(schema.as_object().unwrap()),
            "address: object, alt?: object, count?: integer = 3, mode?: \"a\"|\"b\", tags?: string[]"
        );
        let with_json = tool_arguments(&t, Some(r#"{"address": {}, "count": 1}"#), &["count=2".into()]).unwrap();
        assert_eq!(Value::Object(with_json), json!({"address": {}, "count": 2}));
        assert!(tool_arguments(&t, Some("[1]"), &[]).unwrap_err().message.contains("--args must be a JSON object"));
        let e = tool_arguments(&t, Some(r#"{"address": {}, "cuont": 1}"#), &[]).unwrap_err().message;
        assert!(e.starts_with("tool `t` has no argument `cuont` (did you mean `count`?)"), "{e}");
        // A schema that names no properties takes any.
        let open = tool(json!({"type": "object"}));
        assert_eq!(args(&open, &["x=1", "y=two"]), Ok(json!({"x": 1, "y": "two"})));
    }

    #[test]
    fn suggestions_catch_typos_only() {
        assert_eq!(suggest("txt", ["text", "note"]), Some("text"));
        assert_eq!(suggest("ech", ["echo", "add"]), Some("echo"));
        assert_eq!(suggest("zzzzzz", ["echo", "add"]), None);
        assert_eq!(suggest("c", ["a", "b"]), None);
        assert_eq!(suggest("referense", ["reference", "broken"]), Some("reference"));
    }
}
