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
use mcp_protocol::types::ProgressToken;
use mcp_protocol::{Era, ErrorObject};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::ClientError;
use crate::session::{decode, result_type, ClientSession};
use crate::shared::answer_input;

/// The input a server asked for, answered: `inputResponses` and `requestState`.
struct Answers {
    responses: Option<Map<String, Value>>,
    state: Option<Value>,
}

impl ClientSession {
    /// A call whose result may be `input_required` (modern era): answered transparently.
    pub(crate) async fn call_with_input<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
    ) -> Result<T, ClientError> {
        let result = self.call_with_input_value(method, params).await?;
        if crate::tasks::is_task_result(&result) {
            return Err(ClientError::decode(method, "a task result where none can be"));
        }
        decode(method, result)
    }

    /// [`Self::call_with_input`], undecoded; a `tools/call` may also end with a task
    /// (`resultType: "task"`) when the client declared the tasks extension.
    pub(crate) async fn call_with_input_value(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        let shared = self.shared();
        let progress = self.options.progress.clone().map(|cb| shared.register_progress(cb));
        let token: Option<&ProgressToken> = progress.as_ref().map(|g| g.token());
        let max_rounds = shared.config.max_input_rounds;
        let mut next = params.clone();
        let mut rounds = 0;
        loop {
            let result = self.send_request(method, Some(next), token).await?;
            if self.era() == Era::Modern && crate::tasks::is_task_result(&result) {
                if method == "tools/call" && shared.config.tasks {
                    return Ok(result);
                }
                return Err(ClientError::decode(method, "a task result, which this request cannot have"));
            }
            if self.era() == Era::Legacy || result_type(method, &result)? {
                return Ok(result);
            }
            if rounds >= max_rounds {
                return Err(ClientError::InputRequired { method: method.to_owned(), rounds });
            }
            rounds += 1;
            let answers = self.answer_input_required(method, &result).await?;
            tracing::debug!(method, rounds, "retrying with the input the server asked for");
            next = params.clone();
            if let Value::Object(obj) = &mut next {
                if let Some(responses) = answers.responses {
                    obj.insert("inputResponses".into(), Value::Object(responses));
                }
                if let Some(state) = answers.state {
                    obj.insert("requestState".into(), state);
                }
            }
        }
    }

    async fn answer_input_required(&self, method: &str, result: &Value) -> Result<Answers, ClientError> {
        let requests = match result.get("inputRequests") {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m),
            Some(_) => return Err(ClientError::decode(method, "inputRequests must be an object")),
        };
        let state = match result.get("requestState") {
            None | Some(Value::Null) => None,
            Some(s @ Value::String(_)) => Some(s.clone()),
            Some(_) => return Err(ClientError::decode(method, "requestState must be a string")),
        };
        if requests.is_none() && state.is_none() {
            return Err(ClientError::decode(method, "input_required with neither inputRequests nor requestState"));
        }
        let config = &self.shared().config;
        let responses = match requests {
            None => None,
            Some(requests) => {
                let answers = requests.iter().map(|(key, request)| async move {
                    let input_method = request
                        .get("method")
                        .and_then(Value::as_str)
                        .ok_or_else(|| ClientError::decode(method, format!("input request {key:?} has no method")))?;
                    if !matches!(input_method, "sampling/createMessage" | "elicitation/create" | "roots/list") {
                        return Err(ClientError::Handler {
                            method: input_method.to_owned(),
                            error: ErrorObject::method_not_found(input_method),
                        });
                    }
                    let value = answer_input(config, input_method, request.get("params").cloned())
                        .await
                        .map_err(|error| ClientError::Handler { method: input_method.to_owned(), error })?;
                    Ok::<_, ClientError>((key.clone(), value))
                });
                Some(try_join_all(answers).await?.into_iter().collect())
            }
        };
        Ok(Answers { responses, state })
    }
}
