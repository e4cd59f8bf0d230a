//! The codec's per-revision shapes, against the official JSON schema of each revision
//! (`spec/schema/<revision>/schema.json`): the strict copy of each schema (members a revision
//! does not define forbidden) and the classification of messages that the reference server's
//! schema test (mcpwire-reference's tests/it/schema.rs) relies on, checked on hand-written
//! messages.
//!
//! The official schemas carry no `examples` keyword in any revision, so there is nothing to
//! round-trip through `mcpwire_protocol::types`; [`schemas_hold_no_examples`] fails if that ever
//! changes, so that the round trip gets written then.

pub(crate) mod shapes;

use std::collections::HashMap;

use serde_json::{json, Value};

use shapes::{read_schema, validate, Revision, Transcript, MODERN, REVISIONS};

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

/// The client's capabilities, as the codec writes them for each revision, are that
/// revision's `ClientCapabilities` (strictly: nothing it does not define).
#[test]
fn client_capabilities_are_each_revisions_shape() {
    use mcpwire_protocol::codec::ClientAbilities;
    use mcpwire_protocol::ProtocolVersion;
    let everything = ClientAbilities {
        sampling: true,
        sampling_tools: true,
        elicitation: true,
        elicitation_url: true,
        roots: true,
        tasks_extension: true,
        task_requests: true,
        extensions: Default::default(),
    };
    let some = ClientAbilities { elicitation: true, roots: true, ..ClientAbilities::default() };
    for version in ProtocolVersion::ALL {
        let rev = Revision::load(version.as_str());
        for abilities in [&everything, &some, &ClientAbilities::default()] {
            let written = serde_json::to_value(abilities.capabilities(version)).unwrap();
            if let Err(e) = rev.check("ClientCapabilities", &written) {
                panic!("[{version}] {written}: {e}");
            }
        }
    }
}
