//! Multi-round requests (2026-07-28): the answers a retry brings, the questions a handler
//! asks, and the sealed state that carries what must survive between rounds.
//!
//! A modern server cannot wait for its client's answers. A `tools/call`, `prompts/get` or
//! `resources/read` whose handler asks a question ends the round with an `input_required`
//! result: every question asked so far, keyed, and a sealed `requestState`. The client
//! answers and retries the whole request; the handler runs again from the start, and each
//! question now finds its answer under its key. What the handler chose to carry, and the
//! answers it used, travel in the state, sealed together with a fingerprint of the request
//! and an expiry, so that a client can neither alter them nor replay them on another request.

use serde_json::{Map, Value};

use super::request_state::{request_fingerprint, StateContents, StateError, StateSealer};
use crate::error::ErrorObject;
use crate::message::{ClientRequest, InputRequiredResult, RoundInput, ServerRequest};

/// One round of a multi-round request: what the client answered, what the handler asks.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct InputRound {
    /// Answers available in this round: earlier rounds' (from the state) and this retry's.
    answers: Map<String, Value>,
    /// Answers the handler used, carried into the next round's state.
    used: Map<String, Value>,
    /// Questions without an answer yet, in the order asked.
    asked: Vec<(String, ServerRequest)>,
    /// How many unnamed questions were asked (for `input-N` keys).
    unnamed: usize,
    /// State from the previous round.
    carried: Option<Value>,
    /// State for the next round.
    next: Option<Value>,
}

/// The fingerprint a request's state is bound to: its method and params, without what
/// changes between rounds.
pub fn fingerprint(request: &ClientRequest) -> String {
    let params = serde_json::to_value(request.params()).unwrap_or(Value::Null);
    request_fingerprint(request.method().as_str(), Some(&params))
}

impl InputRound {
    /// Opens a round from a retry's members: the sealed state is checked (it must have been
    /// sealed by `sealer` for this very request and this `client`, the principal's key when the
    /// transport authorized the request, and not have expired at `now_ms`), and the answers of
    /// earlier rounds are taken from it.
    pub fn open(
        request: &ClientRequest,
        input: &RoundInput,
        sealer: &StateSealer,
        client: Option<&str>,
        now_ms: u64,
    ) -> Result<Self, ErrorObject> {
        let mut round = Self::default();
        let state = input.request_state.as_deref().map(|raw| serde_json::from_str::<Value>(raw.get()));
        match state {
            None | Some(Ok(Value::Null)) => {}
            Some(Ok(Value::String(sealed))) => {
                let contents = sealer
                    .open(&sealed, &fingerprint(request), client, now_ms)
                    .map_err(|e: StateError| ErrorObject::invalid_params(e))?;
                round.answers = contents.answers;
                round.carried = contents.state;
            }
            Some(_) => return Err(ErrorObject::invalid_params("requestState must be a string")),
        }
        // Anything but an object (null included) counts as no answers: the questions are asked again.
        let responses = input.input_responses.as_deref().map(|raw| serde_json::from_str::<Value>(raw.get()));
        if let Some(Ok(Value::Object(responses))) = responses {
            round.answers.extend(responses);
        }
        Ok(round)
    }

    /// The key of the next question asked without a name: `input-1`, `input-2`, ...
    pub fn next_unnamed_key(&mut self) -> String {
        self.unnamed += 1;
        format!("input-{}", self.unnamed)
    }

    /// The answer to `question` under `key`, if this round has one of the right shape;
    /// otherwise the question is recorded to be asked (once per key) and `None` returned.
    pub fn answer(&mut self, key: &str, question: &ServerRequest) -> Option<Value> {
        match self.answers.get(key).filter(|a| question.accepts(a)) {
            Some(answer) => {
                let answer = answer.clone();
                self.used.insert(key.to_owned(), answer.clone());
                Some(answer)
            }
            None => {
                if !self.asked.iter().any(|(k, _)| k == key) {
                    self.asked.push((key.to_owned(), question.clone()));
                }
                None
            }
        }
    }

    /// Whether the handler asked a question this round could not answer.
    pub fn has_questions(&self) -> bool {
        !self.asked.is_empty()
    }

    /// The state the handler set in the previous round.
    pub fn carried(&self) -> Option<&Value> {
        self.carried.as_ref()
    }

    /// Sets the state to carry into the next round.
    pub fn set_next(&mut self, state: Value) {
        self.next = Some(state);
    }

    /// The `input_required` result that ends this round: the questions, and the state sealed
    /// for `request` and `client` until `expires_at_ms`.
    pub fn input_required(
        &self,
        request: &ClientRequest,
        sealer: &StateSealer,
        client: Option<&str>,
        expires_at_ms: u64,
    ) -> InputRequiredResult {
        let state = StateContents {
            request: fingerprint(request),
            client: client.map(str::to_owned),
            expires_at_ms,
            answers: self.used.clone(),
            state: self.next.clone().or_else(|| self.carried.clone()),
        };
        InputRequiredResult { input_requests: self.asked.clone(), request_state: Some(sealer.seal(&state)), meta: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::to_raw;
    use crate::types::{CallToolParams, ElicitParams};
    use serde_json::json;

    fn call(name: &str) -> ClientRequest {
        ClientRequest::CallTool(CallToolParams { name: name.into(), arguments: None, task: None })
    }

    fn elicit() -> ServerRequest {
        ServerRequest::Elicit(ElicitParams {
            mode: None,
            message: "name?".into(),
            requested_schema: None,
            url: None,
            elicitation_id: None,
            task: None,
        })
    }

    #[test]
    fn a_question_is_asked_then_answered_from_the_retry_and_carried_sealed() {
        let sealer = StateSealer::random();
        let request = call("t");
        let mut first = InputRound::open(&request, &RoundInput::default(), &sealer, None, 0).unwrap();
        assert_eq!(first.answer("name", &elicit()), None);
        assert!(first.has_questions());
        first.set_next(json!({"step": 1}));
        let ended = first.input_required(&request, &sealer, None, 1_000);
        assert_eq!(ended.input_requests.len(), 1);

        let retry = RoundInput {
            input_responses: Some(to_raw(&json!({"name": {"action": "accept", "content": {"n": "x"}}}))),
            request_state: ended.request_state.as_deref().map(to_raw),
        };
        let mut second = InputRound::open(&request, &retry, &sealer, None, 500).unwrap();
        assert_eq!(second.carried(), Some(&json!({"step": 1})));
        assert!(second.answer("name", &elicit()).is_some());
        assert!(!second.has_questions());

        // The state binds the request, the sealer, and the time.
        let other = InputRound::open(&call("other"), &retry, &sealer, None, 500).unwrap_err();
        assert_eq!(other.code, crate::error::INVALID_PARAMS);
        assert!(InputRound::open(&request, &retry, &StateSealer::random(), None, 500).is_err());
        assert!(InputRound::open(&request, &retry, &sealer, None, 1_001).is_err());
        let tampered = RoundInput { request_state: Some(to_raw("x.y")), ..retry.clone() };
        assert!(InputRound::open(&request, &tampered, &sealer, None, 500).is_err());
        let not_a_string = RoundInput { request_state: Some(to_raw(&5)), ..retry };
        assert!(InputRound::open(&request, &not_a_string, &sealer, None, 500).is_err());
    }

    #[test]
    fn a_state_sealed_for_one_principal_is_refused_to_another() {
        let sealer = StateSealer::random();
        let request = call("t");
        let mut first = InputRound::open(&request, &RoundInput::default(), &sealer, Some("alice"), 0).unwrap();
        assert_eq!(first.answer("name", &elicit()), None);
        let ended = first.input_required(&request, &sealer, Some("alice"), 1_000);
        let retry = RoundInput { input_responses: None, request_state: ended.request_state.as_deref().map(to_raw) };
        assert!(InputRound::open(&request, &retry, &sealer, Some("alice"), 500).is_ok());
        for other in [Some("bob"), None] {
            let refused = InputRound::open(&request, &retry, &sealer, other, 500).unwrap_err();
            assert_eq!(refused.code, crate::error::INVALID_PARAMS, "{other:?}");
        }
    }

    #[test]
    fn a_malformed_answer_asks_again() {
        let sealer = StateSealer::random();
        let request = call("t");
        let retry = RoundInput {
            input_responses: Some(to_raw(&json!({"k": {"not": "an elicit result"}}))),
            request_state: None,
        };
        let mut round = InputRound::open(&request, &retry, &sealer, None, 0).unwrap();
        assert_eq!(round.answer("k", &elicit()), None);
        assert_eq!(round.next_unnamed_key(), "input-1");
        assert_eq!(round.next_unnamed_key(), "input-2");
    }
}
