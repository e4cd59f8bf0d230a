//! Questions the client answers as tasks (2025-11-25), against the official schemas: the
//! server's task-augmented question and its requests about the client's task, and the
//! client's answers, each written as the revision defines it (strict schema: no member the
//! revision lacks).

use mcpwire_protocol::codec::{write_client_result, write_server_request};
use mcpwire_protocol::message::{ClientResult, ServerRequest};
use mcpwire_protocol::types::{
    CreateTaskResult, ElicitParams, ListTasksResult, PaginatedParams, Task, TaskIdParams, TaskMetadata, TaskStatus,
};
use mcpwire_protocol::{ProtocolVersion, RequestId};
use serde_json::{json, Value};

use crate::schema::shapes::Revision;

fn question(task: Option<u64>) -> ServerRequest {
    ServerRequest::Elicit(ElicitParams {
        mode: None,
        message: "name?".into(),
        requested_schema: json!({"type": "object", "properties": {"name": {"type": "string"}}}).as_object().cloned(),
        url: None,
        elicitation_id: None,
        task: task.map(|ttl| TaskMetadata { ttl: Some(ttl) }),
    })
}

fn task() -> Task {
    Task {
        task_id: "t1".into(),
        status: TaskStatus::Working,
        status_message: None,
        created_at: "2026-11-26T00:00:00.000Z".into(),
        last_updated_at: "2026-11-26T00:00:00.000Z".into(),
        ttl_ms: Some(60_000),
        poll_interval_ms: Some(100),
        input_requests: None,
        result: None,
        error: None,
    }
}

fn request(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn result(text: &str) -> Value {
    serde_json::from_str::<Value>(text).unwrap()["result"].take()
}

#[test]
fn a_task_augmented_question_and_the_requests_about_its_task_fit_2025_11_25() {
    let rev = Revision::load("2025-11-25");
    let id = RequestId::Number(1);
    let v = ProtocolVersion::V2025_11_25;
    let asked = request(&write_server_request(&id, &question(Some(60_000)), None, v));
    assert_eq!(asked["params"]["task"], json!({"ttl": 60_000}));
    rev.check("ElicitRequest", &asked).unwrap();
    let about = TaskIdParams { task_id: "t1".into() };
    for (def, q) in [
        ("GetTaskRequest", ServerRequest::GetTask(about.clone())),
        ("GetTaskPayloadRequest", ServerRequest::TaskResult(about.clone())),
        ("CancelTaskRequest", ServerRequest::CancelTask(about.clone())),
        ("ListTasksRequest", ServerRequest::ListTasks(PaginatedParams::default())),
    ] {
        let written = request(&write_server_request(&id, &q, None, v));
        rev.check(def, &written).unwrap_or_else(|e| panic!("{def}: {e}\n{written}"));
    }
}

#[test]
fn the_task_member_is_dropped_where_a_revision_lacks_it() {
    for v in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
        let asked = request(&write_server_request(&RequestId::Number(1), &question(Some(5)), None, v));
        assert!(asked["params"].get("task").is_none(), "{v}: {asked}");
    }
}

#[test]
fn the_clients_answers_about_its_tasks_are_spelled_as_2025_11_25_spells_them() {
    let rev = Revision::load("2025-11-25");
    let id = RequestId::Number(1);
    let v = ProtocolVersion::V2025_11_25;
    let created = result(&write_client_result(
        &id,
        &ClientResult::CreateTask(Box::new(CreateTaskResult { task: task(), meta: None })),
        v,
    ));
    assert_eq!(created["task"]["ttl"], 60_000, "{created}");
    assert_eq!(created["task"]["pollInterval"], 100, "{created}");
    rev.check("CreateTaskResult", &created).unwrap();
    let got = result(&write_client_result(&id, &ClientResult::Task(Box::new(task())), v));
    rev.check("GetTaskResult", &got).unwrap();
    let listed = ClientResult::ListTasks(ListTasksResult { tasks: vec![task()], next_cursor: None });
    rev.check("ListTasksResult", &result(&write_client_result(&id, &listed, v))).unwrap();
    let cancelled = Task { status: TaskStatus::Cancelled, ..task() };
    rev.check("CancelTaskResult", &result(&write_client_result(&id, &ClientResult::Task(Box::new(cancelled)), v)))
        .unwrap();
}
