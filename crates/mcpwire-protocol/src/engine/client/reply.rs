//! The server's answer to a request of ours, as the client role reads it: complete, a task, or
//! (2026-07-28) questions to answer before a retry, which the engine bounds and writes.
//!
//! What kind of answer a request may have depends on the request and on what was agreed, which
//! the engine knows: a 2026-07-28 `tools/call`, `prompts/get` or `resources/read` may come back
//! `input_required`; a `tools/call` may become a task when the tasks extension was declared
//! (2026-07-28) or the call asked for one (2025-11-25); anything else is complete. The engine
//! reads the kind once, and the questions or the task into their types; a complete result is
//! kept as its text, for the application to read once into the type it expects (the engine
//! cannot name it: a typed call, a method sent by name and a gateway forwarding it as it came
//! want different things of the same text).

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use crate::codec::answer::{self, QuestionError, ResultType};
use crate::message::{to_raw, ClientRequest, ClientResult, RoundInput, ServerRequest};
use crate::method::Method;
use crate::mismatch;
use crate::revision::Era;
use crate::types::CreateTaskResult;

use super::super::peer::Failure;

/// The answer to a request of ours.
#[derive(Debug)]
pub enum Reply {
    /// The request's own result, as its text: read it once into the method's result type
    /// ([`crate::codec::answer::read_complete`], or `serde_json` in the legacy era, where
    /// `resultType` does not exist).
    Complete(Box<RawValue>),
    /// The request became this task.
    Task(Box<CreateTaskResult>),
    /// The server needs answers first (2026-07-28): answer [`InputRequest::questions`] and
    /// send the request again with [`super::ClientPeer::retry`].
    InputRequired(Box<InputRequest>),
}

/// The questions of an `input_required` answer, and what its retry carries back.
#[derive(Debug)]
pub struct InputRequest {
    /// The questions, in the order asked, by the keys their answers go back under: each a
    /// request the client answers, or why it cannot be answered as asked (a method that is no
    /// question to a client is the client's to refuse, not a malformed answer).
    pub questions: Vec<(String, Result<ServerRequest, QuestionError>)>,
    /// What the retry carries back.
    pub resume: Resume,
}

/// What a retry carries back to the server: its round, and the state sealed by the server.
#[derive(Debug, Clone)]
pub struct Resume {
    /// How many retries the request has already had.
    pub(super) retries: u32,
    /// `requestState`, exactly as received.
    pub(super) request_state: Option<String>,
}

impl Resume {
    /// How many retries the request has already had (0 for the answer to its first send).
    pub fn retries(&self) -> u32 {
        self.retries
    }

    /// The state the server sealed (`requestState`), as received.
    pub fn request_state(&self) -> Option<&str> {
        self.request_state.as_deref()
    }
}

/// What a request of ours may be answered with, decided when it is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Expect {
    /// Any result, complete and unread (a legacy request, a method sent by name).
    Plain,
    /// A 2025-11-25 `tools/call` that asked for a task: a `task` member makes it one.
    LegacyTask,
    /// A 2026-07-28 request: `resultType` says what it is.
    Modern {
        /// It may be answered `input_required` (a `tools/call`, `prompts/get`, `resources/read`).
        rounds: bool,
        /// It may become a task (a `tools/call` with the tasks extension declared).
        task: bool,
        /// Retries it has had so far.
        retries: u32,
    },
}

/// The requests a 2026-07-28 server may answer `input_required`.
pub(super) fn takes_rounds(method: Method) -> bool {
    matches!(method, Method::CallTool | Method::GetPrompt | Method::ReadResource)
}

impl Expect {
    /// What a typed request sent in `era` may be answered with.
    pub(super) fn of(request: &ClientRequest, era: Era, tasks_declared: bool, retries: u32) -> Self {
        let method = request.method();
        match (era, request) {
            (Era::Legacy, ClientRequest::CallTool(call)) if call.task.is_some() => Self::LegacyTask,
            (Era::Legacy, _) => Self::Plain,
            (Era::Modern, _) => Self::Modern {
                rounds: takes_rounds(method),
                task: method == Method::CallTool && tasks_declared,
                retries,
            },
        }
    }

    /// Reads a result of this expectation; past `max_retries`, an `input_required` answer
    /// fails the request.
    pub(super) fn read(self, raw: Box<RawValue>, max_retries: u32) -> Result<Reply, Failure> {
        let kind = match self {
            Self::Plain => return Ok(Reply::Complete(raw)),
            Self::LegacyTask => answer::result_kind(&raw, true),
            Self::Modern { .. } => answer::result_kind(&raw, false),
        };
        let malformed = |detail: &str| Failure::Malformed(detail.to_owned());
        match kind.map_err(|e| Failure::Malformed(e.to_string()))? {
            ResultType::Complete => Ok(Reply::Complete(raw)),
            ResultType::Task => match self {
                Self::Modern { task: false, .. } => Err(malformed(answer::TASK_NOT_ALLOWED)),
                _ => mismatch::from_str(raw.get())
                    .map(|task| Reply::Task(Box::new(task)))
                    .map_err(|e| Failure::Malformed(e.to_string())),
            },
            ResultType::InputRequired => {
                let Self::Modern { rounds: true, retries, .. } = self else {
                    return Err(malformed(answer::INPUT_REQUIRED_NOT_ALLOWED));
                };
                let asked = answer::read_input_required(&raw).map_err(|e| Failure::Malformed(e.to_string()))?;
                if asked.is_empty() {
                    return Err(malformed("input_required with neither inputRequests nor requestState"));
                }
                if retries >= max_retries {
                    return Err(Failure::TooManyRounds(retries));
                }
                let questions =
                    asked.input_requests.iter().map(|(key, q)| (key.clone(), answer::read_question(q))).collect();
                let resume = Resume { retries, request_state: asked.request_state };
                Ok(Reply::InputRequired(Box::new(InputRequest { questions, resume })))
            }
        }
    }
}

/// The members of a retry: the answers under the keys asked, the state as received.
pub(super) fn round_input(resume: &Resume, answers: &[(String, ClientResult)]) -> RoundInput {
    RoundInput {
        input_responses: (!answers.is_empty()).then(|| to_raw(&Answers(answers))),
        request_state: resume.request_state.as_deref().map(to_raw),
    }
}

/// `inputResponses`, written in the order asked.
struct Answers<'a>(&'a [(String, ClientResult)]);

impl Serialize for Answers<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, answer) in self.0 {
            map.serialize_entry(key, answer)?;
        }
        map.end()
    }
}
