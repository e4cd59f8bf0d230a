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
use mcpwire_protocol::codec::answer::{self, Answer, AnswerError, InputRequired, QuestionError};
use mcpwire_protocol::message::{to_raw, ClientRequest, RoundInput, ServerRequest};
use mcpwire_protocol::mismatch;
use mcpwire_protocol::types::CreateTaskResult;
use mcpwire_protocol::{Era, ErrorObject, Method};
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::driver::{answer_input, Outgoing};
use crate::error::ClientError;
use crate::session::{unreadable, ClientSession};

/// One question of an `input_required` result: a request the client answers, or the error
/// that says it cannot (a method it does not know is its handlers' to refuse, not a malformed
/// answer).
fn question(method: &str, key: &str, request: &RawValue) -> Result<ServerRequest, ClientError> {
    answer::read_question(request).map_err(|e| match e {
        QuestionError::NoMethod => ClientError::decode(method, format!("input request {key:?} has no method")),
        QuestionError::NotAQuestion(asked) => {
            ClientError::Handler { error: ErrorObject::method_not_found(&asked), method: asked }
        }
        QuestionError::Mismatch(m) => {
            ClientError::decode_json(method, Some(format!("input request {key:?}")), m.into_json_error())
        }
    })
}

/// How a call that may take rounds ended.
pub(crate) enum Ended<T> {
    /// With its result.
    Result(T),
    /// With a task (a `tools/call`).
    Task(Box<CreateTaskResult>),
}

impl ClientSession {
    /// A call whose result may be `input_required` (modern era): answered transparently.
    pub(crate) async fn call_with_input<T: DeserializeOwned>(&self, request: &ClientRequest) -> Result<T, ClientError> {
        match self.call_with_input_answer(request, false).await? {
            Ended::Result(result) => Ok(result),
            Ended::Task(_) => Err(ClientError::decode(request.method().as_str(), "a task result where none can be")),
        }
    }

    /// [`Self::call_with_input`], ending with the result or with a task: a `tools/call` may
    /// become one when the client declared the tasks extension (2026-07-28), or asked for
    /// one (`legacy_task`, 2025-11-25: a result with a `task` member is then a task).
    pub(crate) async fn call_with_input_answer<T: DeserializeOwned>(
        &self,
        request: &ClientRequest,
        legacy_task: bool,
    ) -> Result<Ended<T>, ClientError> {
        let method = request.method();
        let name = method.as_str();
        let tasks = self.shared().config.tasks || self.options.tasks;
        let max_rounds = self.shared().config.max_input_rounds;
        let mut round = RoundInput::default();
        let mut rounds = 0;
        loop {
            let raw = self.send(Outgoing::Typed(request), round).await?;
            let answer = match self.era() {
                Era::Legacy if legacy_task => answer::read(&raw, true),
                Era::Legacy => mismatch::from_str(raw.get()).map(Answer::Complete).map_err(AnswerError::Mismatch),
                Era::Modern => answer::read(&raw, false),
            };
            let asked = match answer.map_err(|e| unreadable(name, e))? {
                Answer::Complete(result) => return Ok(Ended::Result(result)),
                Answer::Task(_) if self.era() == Era::Modern && !(method == Method::CallTool && tasks) => {
                    return Err(ClientError::decode(name, "a task result, which this request cannot have"));
                }
                Answer::Task(created) => return Ok(Ended::Task(created)),
                Answer::InputRequired(asked) => asked,
            };
            if rounds >= max_rounds {
                return Err(ClientError::InputRequired { method: name.to_owned(), rounds });
            }
            rounds += 1;
            round = self.answer_input_required(name, asked).await?;
            tracing::debug!(%method, rounds, "retrying with the input the server asked for");
        }
    }

    /// Answers the questions of an `input_required` result: the next round's members.
    async fn answer_input_required(&self, method: &str, asked: InputRequired) -> Result<RoundInput, ClientError> {
        if asked.is_empty() {
            return Err(ClientError::decode(method, "input_required with neither inputRequests nor requestState"));
        }
        let questions = asked
            .input_requests
            .iter()
            .map(|(key, request)| Ok((key.clone(), question(method, key, request)?)))
            .collect::<Result<Vec<_>, ClientError>>()?;
        let config = &self.shared().config;
        let answers = questions.iter().map(|(key, question)| async move {
            let answer = answer_input(config, question)
                .await
                .map_err(|error| ClientError::Handler { method: question.method().as_str().to_owned(), error })?;
            let answer = serde_json::to_value(answer).map_err(|e| ClientError::decode_json(method, None, e))?;
            Ok::<_, ClientError>((key.clone(), answer))
        });
        let responses: Map<String, Value> = try_join_all(answers).await?.into_iter().collect();
        Ok(RoundInput {
            input_responses: (!questions.is_empty()).then(|| to_raw(&responses)),
            request_state: asked.request_state.as_deref().map(to_raw),
        })
    }
}
