//! Relaying one downstream request to the upstream server, with the questions the upstream
//! server asks meanwhile.
//!
//! The upstream call is a boxed future that the downstream round relaying it polls, so that
//! it can outlive that round: a 2026-07-28 downstream client is asked a question by an
//! `input_required` answer and retries the request with the answer, and the retry must
//! reach the same upstream call, which is still waiting. So at a question the call is
//! *parked* under a key that travels in the downstream request's sealed state; the retry
//! takes it back, hands over the answer and goes on relaying. A parked call is not polled:
//! it waits for its answer, which the client's driver keeps for it until then (a task of its
//! own per call would cost a spawn, a channel and a wake-up on every forwarded call, the
//! common case being a call that asks nothing). A legacy downstream client is asked with a real request and the
//! call never parks. Dropping a call (the downstream request cancelled, or a parked call
//! never retried before [`PARK_TTL`]) drops the upstream call, which cancels it upstream.

use std::any::Any;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use mcpwire_client::{ClientError, ErrorObject};
use mcpwire_protocol::error::{INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY};
use mcpwire_protocol::types::ProgressParams;
use mcpwire_server::{Context, HandlerError, HandlerResult, InputRequest};
use serde_json::{json, Value};

use crate::router::{CallRouter, Inbox, Mailed, Question, Registration};

/// How long a parked call waits for the downstream client's retry before it is dropped.
pub const PARK_TTL: Duration = Duration::from_secs(600);

/// The most calls parked at once; beyond it the oldest is dropped.
const MAX_PARKED: usize = 4096;

/// The member of the sealed round state that names a parked call.
const STATE_KEY: &str = "bridgeCall";

type Outcome = Result<Box<dyn Any + Send>, ClientError>;

/// The upstream call itself, its result type erased so that parked calls of every method
/// share one map.
type Work = Pin<Box<dyn Future<Output = Outcome> + Send>>;

/// An upstream call in progress, owned by the downstream round relaying it or parked.
pub(crate) struct UpstreamCall {
    key: u64,
    /// The upstream server's questions and progress for this call.
    inbox: InboxGuard,
    /// Dropping it (with the call) cancels the call upstream.
    work: Work,
    /// The question put to the downstream client and not answered yet, under its input key.
    pending: Option<(String, Question)>,
    /// How many questions were put to the downstream client (input keys `bridge-N`).
    asked: u64,
    parked_at: Instant,
    _asker: Registration,
}

/// The inbox of a call, closed when the call ends (what is still queued is dropped, and a
/// question that comes later is refused).
struct InboxGuard(Arc<Inbox>);

impl Drop for InboxGuard {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Sends upstream progress to the round relaying the call.
#[derive(Clone)]
pub(crate) struct ProgressSink(Arc<Inbox>);

impl ProgressSink {
    /// Passes a progress notification on (dropped if the call has ended).
    pub(crate) fn send(&self, p: ProgressParams) {
        self.0.put_progress(p);
    }
}

/// What the round relaying a call has to act on next.
enum Next {
    Progress(ProgressParams),
    /// Boxed: questions are rare, and the enum is returned on every poll.
    Question(Box<Question>),
    Done(Outcome),
}

fn expired() -> HandlerError {
    HandlerError::Protocol(ErrorObject::new(
        INVALID_PARAMS,
        "the bridged call this retry continues has ended or expired; send the request again without requestState",
    ))
}

/// An error from the downstream handler context as the upstream server should see it.
fn to_error_object(e: HandlerError) -> ErrorObject {
    match e {
        HandlerError::Protocol(e) => e,
        other => ErrorObject::internal(mcpwire_protocol::error::chain(&other)),
    }
}

/// Relays one downstream request: starts the upstream call with `start` (or, on a
/// 2026-07-28 retry, takes back the parked one), passes progress on and puts every upstream
/// question to the downstream client until the upstream result arrives.
pub(crate) async fn relay<T, F, Fut>(router: &CallRouter, ctx: &Context, start: F) -> HandlerResult<T>
where
    T: Send + 'static,
    F: FnOnce(ProgressSink) -> Fut + Send + 'static,
    Fut: Future<Output = Result<T, ClientError>> + Send + 'static,
{
    let _handler = router.enter(ctx);
    let resumed = ctx.round_state().and_then(|s| s.get(STATE_KEY).and_then(Value::as_u64));
    let mut call = match resumed {
        Some(key) => router.parked().remove(&key).ok_or_else(expired)?,
        None => begin(router, start),
    };
    if let Some((input_key, question)) = call.pending.take() {
        if let Err(e) = put_question(ctx, &mut call, input_key, question).await {
            return Err(stop(router, ctx, call, e));
        }
    }
    loop {
        // Progress first, then questions, then the call itself (its result ends the round).
        let next = poll_fn(|cx| {
            if let Poll::Ready(mailed) = call.inbox.0.poll_take(cx) {
                return Poll::Ready(match mailed {
                    Mailed::Progress(p) => Next::Progress(p),
                    Mailed::Question(q) => Next::Question(q),
                });
            }
            call.work.as_mut().poll(cx).map(Next::Done)
        })
        .await;
        match next {
            Next::Progress(p) => {
                if ctx.wants_progress() {
                    let _ = ctx.progress(p.progress, p.total, p.message.as_deref()).await;
                }
            }
            Next::Question(question) => {
                call.asked += 1;
                let input_key = format!("bridge-{}", call.asked);
                if let Err(e) = put_question(ctx, &mut call, input_key, *question).await {
                    return Err(stop(router, ctx, call, e));
                }
            }
            Next::Done(outcome) => {
                // Progress sent before the result goes first.
                while let Some(p) = call.inbox.0.take_progress() {
                    if ctx.wants_progress() {
                        let _ = ctx.progress(p.progress, p.total, p.message.as_deref()).await;
                    }
                }
                return match outcome {
                    Ok(value) => value.downcast::<T>().map(|v| *v).map_err(|_| {
                        HandlerError::Protocol(ErrorObject::internal("bridged call resumed by another method"))
                    }),
                    Err(e) => Err(crate::to_handler(e)),
                };
            }
        }
    }
}

/// Puts one upstream question to the downstream client and hands the answer over.
///
/// `Err(InputRequired)` means the question went out as `input_required` and is now pending
/// in `call`; any other error fails the downstream request.
async fn put_question(
    ctx: &Context,
    call: &mut UpstreamCall,
    input_key: String,
    question: Question,
) -> Result<(), HandlerError> {
    match ctx.ask_all(vec![(input_key.clone(), question.request.clone())]).await {
        Ok(mut answers) => {
            let _ = question.answer.send(Ok(answers.remove(&input_key).unwrap_or_default()));
            Ok(())
        }
        Err(HandlerError::InputRequired) => {
            call.pending = Some((input_key, question));
            Err(HandlerError::InputRequired)
        }
        // The downstream client lacks what the question needs: its request fails.
        Err(HandlerError::Protocol(e)) if e.code == MISSING_REQUIRED_CLIENT_CAPABILITY => {
            Err(HandlerError::Protocol(e))
        }
        // Otherwise the upstream server gets the error as the answer and decides.
        Err(e) => {
            let _ = question.answer.send(Err(to_error_object(e)));
            Ok(())
        }
    }
}

/// Ends this round of `call`: parks it for a question in flight, else drops it.
fn stop(router: &CallRouter, ctx: &Context, call: UpstreamCall, e: HandlerError) -> HandlerError {
    match e {
        HandlerError::InputRequired => park(router, ctx, call),
        other => other,
    }
}

/// Starts the upstream call (polled by the downstream round that relays it, so in its span:
/// the upstream call continues the downstream request's trace).
fn begin<T, F, Fut>(router: &CallRouter, start: F) -> UpstreamCall
where
    T: Send + 'static,
    F: FnOnce(ProgressSink) -> Fut + Send + 'static,
    Fut: Future<Output = Result<T, ClientError>> + Send + 'static,
{
    let key = router.next_key();
    let inbox = Arc::new(Inbox::default());
    let sink = ProgressSink(inbox.clone());
    UpstreamCall {
        key,
        inbox: InboxGuard(inbox.clone()),
        // `start` is called in the box, at the first poll, so that the upstream call's future
        // (some kilobytes: the client's whole request path) is made where it stays. Made
        // here, it was moved twice more on its way into the box (about 11 KB per call).
        work: Box::pin(async move { start(sink).await.map(|v| Box::new(v) as Box<dyn Any + Send>) }),
        pending: None,
        asked: 0,
        parked_at: Instant::now(),
        _asker: router.add_asker(key, inbox),
    }
}

/// Parks `call` until the downstream client retries; returns the error that makes the
/// runtime answer `input_required` with the call's key in the sealed state.
fn park(router: &CallRouter, ctx: &Context, mut call: UpstreamCall) -> HandlerError {
    ctx.set_round_state(json!({ STATE_KEY: call.key }));
    call.parked_at = Instant::now();
    call.inbox.0.forget_waker();
    let mut parked = router.parked();
    parked.retain(|_, c| c.parked_at.elapsed() < PARK_TTL);
    if parked.len() >= MAX_PARKED {
        if let Some(oldest) = parked.iter().min_by_key(|(_, c)| c.parked_at).map(|(k, _)| *k) {
            parked.remove(&oldest);
        }
    }
    parked.insert(call.key, call);
    HandlerError::InputRequired
}

/// Asks the downstream client `request` on behalf of the upstream server.
pub(crate) async fn ask_downstream<T: serde::de::DeserializeOwned>(
    router: &CallRouter,
    request: InputRequest,
) -> Result<T, ErrorObject> {
    let method = request.method();
    let answer = router.ask(request).await?;
    serde_json::from_value(answer)
        .map_err(|e| ErrorObject::internal(format!("malformed {method} answer from the downstream client: {e}")))
}
