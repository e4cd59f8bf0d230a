//! Multi round-trip requests (2026-07-28): answering `input_required` results.
//!
//! A modern server cannot send requests; when a `tools/call`, `prompts/get` or
//! `resources/read` needs input it answers `resultType: "input_required"` with
//! `inputRequests` (key → an elicitation, sampling or roots request) and/or an opaque
//! `requestState`. The client answers each input request with the same handlers that
//! answer legacy server requests, then sends the original request again, with a new id,
//! plus `inputResponses` (same keys) and `requestState` exactly as received. This repeats
//! up to the client's round bound.

use futures::future::try_join_all;
use mcpwire_protocol::message::ServerRequest;
use mcpwire_protocol::message::{to_raw, ClientRequest, InputRequiredResult, RoundInput};
use mcpwire_protocol::Era;
use mcpwire_protocol::{ErrorObject, Method};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};

/// One question of an `input_required` result: a request the client answers, or the error
/// that says it cannot (a method it does not know is its handlers' to refuse, not a malformed
/// answer).
fn question(method: &str, key: &str, request: &Value) -> Result<(String, ServerRequest), ClientError> {
    let asked = request
        .get("method")
        .and_then(Value::as_str)
        .ok_or_else(|| ClientError::decode(method, format!("input request {key:?} has no method")))?;
    if !matches!(Method::parse(asked), Some(Method::CreateMessage | Method::Elicit | Method::ListRoots)) {
        return Err(ClientError::Handler { method: asked.to_owned(), error: ErrorObject::method_not_found(asked) });
    }
    let question = ServerRequest::deserialize(request)
        .map_err(|e| ClientError::decode_json(method, Some(format!("input request {key:?}")), e))?;
    Ok((key.to_owned(), question))
}

use crate::driver::{answer_input, Outgoing};
use crate::error::ClientError;
use crate::session::{decode, result_type, ClientSession};

impl ClientSession {
    /// A call whose result may be `input_required` (modern era): answered transparently.
    pub(crate) async fn call_with_input<T: DeserializeOwned>(&self, request: &ClientRequest) -> Result<T, ClientError> {
        let method = request.method().as_str();
        let result = self.call_with_input_value(request).await?;
        if crate::tasks::is_task_result(&result) {
            return Err(ClientError::decode(method, "a task result where none can be"));
        }
        decode(method, result)
    }

    /// [`Self::call_with_input`], undecoded; a `tools/call` may also end with a task
    /// (`resultType: "task"`) when the client declared the tasks extension.
    pub(crate) async fn call_with_input_value(&self, request: &ClientRequest) -> Result<Value, ClientError> {
        let method = request.method();
        let tasks = self.shared().config.tasks || self.options.tasks;
        let max_rounds = self.shared().config.max_input_rounds;
        let mut round = RoundInput::default();
        let mut rounds = 0;
        loop {
            let result = self.send(Outgoing::Typed(request), round).await?;
            if self.era() == Era::Modern && crate::tasks::is_task_result(&result) {
                if method == mcpwire_protocol::Method::CallTool && tasks {
                    return Ok(result);
                }
                return Err(ClientError::decode(method.as_str(), "a task result, which this request cannot have"));
            }
            if self.era() == Era::Legacy || result_type(method, &result)? {
                return Ok(result);
            }
            if rounds >= max_rounds {
                return Err(ClientError::InputRequired { method: method.as_str().to_owned(), rounds });
            }
            rounds += 1;
            round = self.answer_input_required(method.as_str(), &result).await?;
            tracing::debug!(%method, rounds, "retrying with the input the server asked for");
        }
    }

    /// Answers the questions of an `input_required` result: the next round's members.
    async fn answer_input_required(&self, method: &str, result: &Value) -> Result<RoundInput, ClientError> {
        let questions = match result.get("inputRequests") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(requests)) => {
                requests.iter().map(|(key, request)| question(method, key, request)).collect::<Result<_, _>>()?
            }
            Some(_) => return Err(ClientError::decode(method, "inputRequests must be an object")),
        };
        let state = match result.get("requestState") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(ClientError::decode(method, "requestState must be a string")),
        };
        let asked = InputRequiredResult { input_requests: questions, request_state: state, meta: None };
        if asked.input_requests.is_empty() && asked.request_state.is_none() {
            return Err(ClientError::decode(method, "input_required with neither inputRequests nor requestState"));
        }
        let config = &self.shared().config;
        let answers = asked.input_requests.iter().map(|(key, question)| async move {
            let answer = answer_input(config, question)
                .await
                .map_err(|error| ClientError::Handler { method: question.method().as_str().to_owned(), error })?;
            let answer = serde_json::to_value(answer).map_err(|e| ClientError::decode_json(method, None, e))?;
            Ok::<_, ClientError>((key.clone(), answer))
        });
        let responses: Map<String, Value> = try_join_all(answers).await?.into_iter().collect();
        Ok(RoundInput {
            input_responses: (!asked.input_requests.is_empty()).then(|| to_raw(&responses)),
            request_state: asked.request_state.as_deref().map(to_raw),
        })
    }
}
