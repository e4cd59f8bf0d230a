//! One question to the client on a connection, and the wait for its answer: what a
//! handler's asks and the polls of a client's task both send. Kept apart from the
//! [`crate::Context`], which decides what to ask and how, so that every asker reaches the
//! client the same way.

use std::time::Duration;

use mcpwire_protocol::engine::{NotAsked, SendOptions};
use mcpwire_protocol::message::ServerRequest;
use mcpwire_protocol::types::Meta;
use mcpwire_protocol::RequestId;
use serde_json::Value;

use crate::error::{AskError, HandlerError, HandlerResult};
use crate::link::{now, Link, Sink};

/// Withdraws a question when its waiting future is dropped before the answer.
struct Withdraw<'a> {
    link: &'a Link,
    id: Option<RequestId>,
    reply: Option<&'a Sink>,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let (_, out) = self.link.run(|peer| peer.cancel(&id, "the server no longer needs the answer"));
            self.link.send_now(out.transmits, self.reply);
        }
    }
}

/// Sends `question` to the client on `link` (while serving `related`) and waits for its
/// answer, at most `timeout`; the engine keeps the deadline, and the waiting side wakes it
/// when the deadline passes.
pub(crate) async fn ask(
    link: &Link,
    question: &ServerRequest,
    meta: Option<&Meta>,
    related: Option<RequestId>,
    reply: Option<&Sink>,
    timeout: Duration,
) -> HandlerResult<Value> {
    let (tx, mut rx) = tokio::sync::oneshot::channel();
    let options = SendOptions { timeout: Some(timeout), cancel_on_timeout: true, progress: false, related };
    let (sent, out) = link.run(|peer| peer.request(question, meta, options, tx, now()));
    link.settle(out.events, reply);
    let id = match sent {
        Ok(id) => id,
        Err(NotAsked::MissingCapability(name)) => return Err(AskError::Unsupported(name).into()),
        Err(NotAsked::NoSession) => return Err(AskError::NoSession.into()),
    };
    let mut guard = Withdraw { link, id: Some(id), reply };
    if !link.send(out.transmits, reply).await {
        return Err(AskError::Closed.into());
    }
    let deadline = tokio::time::Instant::now() + timeout;
    let outcome = match tokio::time::timeout_at(deadline, &mut rx).await {
        Ok(outcome) => outcome,
        Err(_) => {
            // The deadline passed: the engine fails the question and tells the client.
            let (_, out) = link.run(|peer| peer.handle_timeout(now()));
            link.settle(out.events, reply);
            link.send(out.transmits, reply).await;
            rx.await
        }
    };
    guard.id = None;
    use mcpwire_protocol::engine::Failure;
    let method = question.method();
    match outcome {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(Failure::Error(e))) => Err(HandlerError::Protocol(e)),
        Ok(Err(Failure::TimedOut)) => Err(AskError::TimedOut(method).into()),
        Ok(Err(Failure::Malformed(detail))) => Err(AskError::malformed(method, InvalidAnswer(detail)).into()),
        // A question to the client has no rounds of its own.
        Ok(Err(failure @ Failure::TooManyRounds(_))) => {
            Err(AskError::malformed(method, InvalidAnswer(failure.to_string())).into())
        }
        Ok(Err(Failure::Closed)) | Err(_) => Err(AskError::Closed.into()),
    }
}

/// What the engine found wrong with an answer of the client's (its shape checked against
/// the question's result type).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct InvalidAnswer(String);
