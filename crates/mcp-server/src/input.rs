//! Asking the client for input (sampling, elicitation, roots) with one API for both eras.
//!
//! Legacy era: each question is a real request to the client, awaited on the connection.
//!
//! 2026-07-28: the server may not send requests, so a question ends the handler early
//! instead: the ask returns [`HandlerError::InputRequired`], which the handler propagates
//! with `?`, and the runtime answers `input_required` with every question gathered and a
//! sealed `requestState`. The client answers and retries the whole request; the handler
//! runs again from the start, and this time each ask finds its answer (by key: the name the
//! author gave, or `input-N` for the N-th unnamed question) and returns at once.
//!
//! So a handler must be safe to re-run up to its last question: keep side effects after it.
//! Answers of earlier rounds travel in the sealed `requestState`, and so does anything set
//! with [`Context::set_round_state`].

use std::collections::HashMap;

use mcp_protocol::engine::request_state::{StateContents, StateSealer};
use mcp_protocol::error::MISSING_REQUIRED_CLIENT_CAPABILITY;
use mcp_protocol::types::{CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, ListRootsResult};
use mcp_protocol::{ErrorObject, ProtocolVersion};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::context::Context;
use crate::error::HandlerError;

/// A question for the client.
#[derive(Debug, Clone, PartialEq)]
pub enum InputRequest {
    /// Ask the user (`elicitation/create`).
    Elicit(ElicitParams),
    /// Ask the client's model (`sampling/createMessage`).
    Sample(CreateMessageParams),
    /// Ask for the client's roots (`roots/list`).
    ListRoots,
}

impl InputRequest {
    /// The method of the request this question is.
    pub fn method(&self) -> &'static str {
        match self {
            Self::Elicit(_) => "elicitation/create",
            Self::Sample(_) => "sampling/createMessage",
            Self::ListRoots => "roots/list",
        }
    }

    pub(crate) fn params(&self) -> Value {
        match self {
            Self::Elicit(p) => serde_json::to_value(p).unwrap_or_default(),
            Self::Sample(p) => serde_json::to_value(p).unwrap_or_default(),
            Self::ListRoots => json!({}),
        }
    }

    fn capability(&self) -> &'static str {
        match self {
            Self::Elicit(_) => "elicitation",
            Self::Sample(_) => "sampling",
            Self::ListRoots => "roots",
        }
    }

    /// Whether an answer has the shape this question expects.
    fn accepts(&self, answer: &Value) -> bool {
        answer_fits(self.method(), answer)
    }
}

/// Whether `answer` has the shape of a result of `method` (an input request's method).
pub(crate) fn answer_fits(method: &str, answer: &Value) -> bool {
    match method {
        "elicitation/create" => ElicitResult::deserialize(answer).is_ok(),
        "sampling/createMessage" => CreateMessageResult::deserialize(answer).is_ok(),
        "roots/list" => ListRootsResult::deserialize(answer).is_ok(),
        _ => false,
    }
}

/// One round of a 2026-07-28 multi-round request.
#[derive(Debug, Default)]
pub(crate) struct InputRound {
    /// Answers available in this round: earlier rounds' (from the state) and this retry's.
    pub(crate) answers: Map<String, Value>,
    /// Answers the handler used, carried into the next round's state.
    pub(crate) used: Map<String, Value>,
    /// Questions without an answer yet, in the order asked.
    pub(crate) asked: Vec<(String, InputRequest)>,
    /// How many unnamed questions were asked (for `input-N` keys).
    pub(crate) unnamed: usize,
    /// State from the previous round.
    pub(crate) carried: Option<Value>,
    /// State for the next round.
    pub(crate) next: Option<Value>,
}

impl Context {
    fn require_capability(&self, request: &InputRequest) -> Result<(), HandlerError> {
        let caps = self.client_capabilities();
        let present = match request {
            InputRequest::Elicit(_) => caps.elicitation.is_some() && self.revision() >= ProtocolVersion::V2025_06_18,
            InputRequest::Sample(_) => caps.sampling.is_some(),
            InputRequest::ListRoots => caps.roots.is_some(),
        };
        if present {
            return Ok(());
        }
        let name = request.capability();
        if self.revision().is_modern() {
            let required = Map::from_iter([(name.to_owned(), json!({}))]);
            return Err(HandlerError::Protocol(
                ErrorObject::new(
                    MISSING_REQUIRED_CLIENT_CAPABILITY,
                    format!("this request needs the client capability `{name}`"),
                )
                .with_data(json!({"requiredCapabilities": required})),
            ));
        }
        Err(HandlerError::tool(format!("the client does not support {name}")))
    }

    /// Asks several questions at once, keyed by name; returns every answer by key.
    ///
    /// Legacy era: the requests go to the client together and are awaited. 2026-07-28: the
    /// answers come from the client's retry; until every one is there this returns
    /// [`HandlerError::InputRequired`] (propagate it with `?`).
    pub async fn ask_all(
        &self,
        questions: Vec<(String, InputRequest)>,
    ) -> Result<HashMap<String, Value>, HandlerError> {
        for (_, q) in &questions {
            self.require_capability(q)?;
        }
        if let Some(task) = self.parts.task.get() {
            return crate::tasks::ask(self, task, questions).await;
        }
        let Some(round) = &self.parts.round else {
            let asks = questions.iter().map(|(key, q)| async move {
                let answer = self
                    .parts
                    .outbound
                    .request(q.method(), q.params(), self.revision(), self.parts.request_timeout)
                    .await
                    .map_err(HandlerError::Protocol)?;
                Ok::<_, HandlerError>((key.clone(), answer))
            });
            return futures::future::try_join_all(asks).await.map(HashMap::from_iter);
        };
        let mut round = round.lock().unwrap_or_else(|e| e.into_inner());
        let mut answers = HashMap::new();
        let mut missing = false;
        for (key, q) in questions {
            match round.answers.get(&key).filter(|a| q.accepts(a)).cloned() {
                Some(answer) => {
                    round.used.insert(key.clone(), answer.clone());
                    answers.insert(key, answer);
                }
                None => {
                    // A missing or malformed answer: ask (again).
                    missing = true;
                    if !round.asked.iter().any(|(k, _)| *k == key) {
                        round.asked.push((key, q));
                    }
                }
            }
        }
        if missing {
            return Err(HandlerError::InputRequired);
        }
        Ok(answers)
    }

    async fn ask_one<T: DeserializeOwned>(&self, key: Option<&str>, question: InputRequest) -> Result<T, HandlerError> {
        let key = match key {
            Some(k) => k.to_owned(),
            None => match &self.parts.round {
                Some(round) => {
                    let mut round = round.lock().unwrap_or_else(|e| e.into_inner());
                    round.unnamed += 1;
                    format!("input-{}", round.unnamed)
                }
                None => "input".to_owned(),
            },
        };
        let method = question.method();
        let mut answers = self.ask_all(vec![(key.clone(), question)]).await?;
        let answer = answers.remove(&key).unwrap_or_default();
        serde_json::from_value(answer).map_err(|e| {
            HandlerError::Protocol(ErrorObject::internal(format!("malformed {method} result from the client: {e}")))
        })
    }

    /// Asks the client's model for a completion (`sampling/createMessage`).
    pub async fn sample(&self, params: CreateMessageParams) -> Result<CreateMessageResult, HandlerError> {
        self.ask_one(None, InputRequest::Sample(params)).await
    }

    /// Like [`Self::sample`], with a key of the author's choosing (stable across code changes).
    pub async fn sample_as(&self, key: &str, params: CreateMessageParams) -> Result<CreateMessageResult, HandlerError> {
        self.ask_one(Some(key), InputRequest::Sample(params)).await
    }

    /// Asks the user for information (`elicitation/create`).
    pub async fn elicit(&self, params: ElicitParams) -> Result<ElicitResult, HandlerError> {
        self.ask_one(None, InputRequest::Elicit(params)).await
    }

    /// Like [`Self::elicit`], with a key of the author's choosing.
    pub async fn elicit_as(&self, key: &str, params: ElicitParams) -> Result<ElicitResult, HandlerError> {
        self.ask_one(Some(key), InputRequest::Elicit(params)).await
    }

    /// Asks the client for its roots (`roots/list`).
    pub async fn list_roots(&self) -> Result<ListRootsResult, HandlerError> {
        self.ask_one(None, InputRequest::ListRoots).await
    }

    /// Like [`Self::list_roots`], with a key of the author's choosing.
    pub async fn list_roots_as(&self, key: &str) -> Result<ListRootsResult, HandlerError> {
        self.ask_one(Some(key), InputRequest::ListRoots).await
    }

    /// The state set with [`Self::set_round_state`] in the previous round of this request
    /// (2026-07-28), if any. It came back sealed: the client could not alter it.
    pub fn round_state(&self) -> Option<Value> {
        self.parts.round.as_ref()?.lock().unwrap_or_else(|e| e.into_inner()).carried.clone()
    }

    /// Sets state to carry to the next round of this request (2026-07-28; ignored in the
    /// legacy era, where the handler simply keeps running).
    pub fn set_round_state(&self, state: Value) {
        if let Some(round) = &self.parts.round {
            round.lock().unwrap_or_else(|e| e.into_inner()).next = Some(state);
        }
    }

    /// The `input_required` result for the questions gathered, with the sealed state.
    /// `request` is the request's fingerprint, which the state is bound to.
    pub(crate) fn input_required(&self, sealer: &StateSealer, expires_at_ms: u64, request: String) -> Option<Value> {
        let round = self.parts.round.as_ref()?.lock().unwrap_or_else(|e| e.into_inner());
        let requests: Map<String, Value> = round
            .asked
            .iter()
            .map(|(key, q)| (key.clone(), json!({"method": q.method(), "params": q.params()})))
            .collect();
        let state = StateContents {
            request,
            client: None,
            expires_at_ms,
            answers: round.used.clone(),
            state: round.next.clone().or_else(|| round.carried.clone()),
        };
        Some(json!({
            "resultType": "input_required",
            "inputRequests": requests,
            "requestState": sealer.seal(&state),
        }))
    }
}
