//! Multi round-trip requests (2026-07-28): answering `input_required` results.
//!
//! A modern server cannot send requests; when a `tools/call`, `prompts/get` or
//! `resources/read` needs input it answers `resultType: "input_required"` with
//! `inputRequests` (key → an elicitation, sampling or roots request) and/or an opaque
//! `requestState`. The engine reads the questions and bounds the rounds; here they are
//! answered with the same handlers that answer legacy server requests, and the engine sends
//! the request again with the answers (`inputResponses`, same keys) and the state as
//! received.

use futures::future::try_join_all;
use mcpwire_protocol::codec::answer::QuestionError;
use mcpwire_protocol::engine::InputRequest;
use mcpwire_protocol::message::{ClientRequest, ServerRequest};
use mcpwire_protocol::types::CreateTaskResult;
use mcpwire_protocol::ErrorObject;

use crate::driver::{answer_input, Outgoing, Retry};
use crate::error::ClientError;
use crate::reply::{CallResult, Step};
use crate::session::ClientSession;

/// One question of an `input_required` result, or the error that says it cannot be
/// answered (a method it does not know is its handlers' to refuse, not a malformed answer).
fn question(
    method: &str,
    key: &str,
    asked: Result<ServerRequest, QuestionError>,
) -> Result<ServerRequest, ClientError> {
    asked.map_err(|e| match e {
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
    pub(crate) async fn call_with_input<T: CallResult>(&self, request: &ClientRequest) -> Result<T, ClientError> {
        match self.call_with_input_answer(request).await? {
            Ended::Result(result) => Ok(result),
            Ended::Task(_) => Err(ClientError::decode(request.method().as_str(), "a task result where none can be")),
        }
    }

    /// [`Self::call_with_input`], ending with the result or with a task: a `tools/call` may
    /// become one when the client declared the tasks extension (2026-07-28), or asked for
    /// one in its params (2025-11-25). The engine decides which answers the request may have.
    pub(crate) async fn call_with_input_answer<T: CallResult>(
        &self,
        request: &ClientRequest,
    ) -> Result<Ended<T>, ClientError> {
        let method = request.method();
        let mut retry = None;
        loop {
            let asked = match self.send(Outgoing::Typed(request), retry).await?.read(method)? {
                Step::Result(result) => return Ok(Ended::Result(result)),
                Step::Task(created) => return Ok(Ended::Task(created)),
                Step::Input(asked) => asked,
            };
            tracing::debug!(%method, retries = asked.resume.retries(), "answering the input the server asked for");
            retry = Some(self.answer_input_required(method.as_str(), *asked).await?);
        }
    }

    /// Answers the questions of an `input_required` result: the retry's answers.
    async fn answer_input_required(&self, method: &str, asked: InputRequest) -> Result<Retry, ClientError> {
        let questions = asked
            .questions
            .into_iter()
            .map(|(key, asked)| Ok((question(method, &key, asked)?, key)))
            .collect::<Result<Vec<_>, ClientError>>()?;
        let config = &self.shared().config;
        let answers = questions.iter().map(|(question, key)| async move {
            let answer = answer_input(config, question)
                .await
                .map_err(|error| ClientError::Handler { method: question.method().as_str().to_owned(), error })?;
            Ok::<_, ClientError>((key.clone(), answer))
        });
        let answers = try_join_all(answers).await?;
        Ok(Retry { resume: asked.resume, answers })
    }
}
