//! Where the upstream server's questions and log messages go: to the downstream call they
//! belong to.
//!
//! An upstream question (sampling, elicitation, roots) carries nothing that names the call it
//! was asked for, so it goes to the newest upstream call still alive, which relays it to its
//! downstream client (see [`crate::relay`]). Log messages go to the newest downstream call
//! being handled.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Waker};

use mcpwire_client::ErrorObject;
use mcpwire_protocol::types::ProgressParams;
use mcpwire_server::{Context, InputRequest};
use parking_lot::{Mutex, MutexGuard};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::relay::UpstreamCall;

/// A question from the upstream server, waiting for the downstream client's answer.
pub(crate) struct Question {
    pub(crate) request: InputRequest,
    pub(crate) answer: oneshot::Sender<Result<Value, ErrorObject>>,
}

/// What reaches an upstream call in progress from elsewhere (the client's connection task,
/// a question's handler): the upstream server's questions and progress, for the round
/// relaying the call. A queue of each under one lock, and the waker of that round: nothing
/// is allocated until something comes (most calls get neither), where a channel would
/// allocate its first block of slots for every call.
#[derive(Default)]
pub(crate) struct Inbox(Mutex<Mail>);

#[derive(Default)]
struct Mail {
    questions: VecDeque<Question>,
    progress: VecDeque<ProgressParams>,
    /// The round relaying the call, to wake when something comes.
    waker: Option<Waker>,
    /// The call has ended: nothing more is taken.
    closed: bool,
}

/// What came for the call, oldest first: progress before questions.
pub(crate) enum Mailed {
    Progress(ProgressParams),
    /// Boxed: questions are rare, and the enum is returned on every poll.
    Question(Box<Question>),
}

impl Inbox {
    /// Puts a question; given back if the call has ended.
    fn put_question(&self, question: Question) -> Result<(), Question> {
        let mut mail = self.0.lock();
        if mail.closed {
            return Err(question);
        }
        mail.questions.push_back(question);
        let waker = mail.waker.take();
        drop(mail);
        if let Some(waker) = waker {
            waker.wake();
        }
        Ok(())
    }

    /// Puts a progress notification (dropped if the call has ended).
    pub(crate) fn put_progress(&self, progress: ProgressParams) {
        let mut mail = self.0.lock();
        if mail.closed {
            return;
        }
        mail.progress.push_back(progress);
        let waker = mail.waker.take();
        drop(mail);
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// What came, or `Pending` with the task's waker kept for what comes next.
    pub(crate) fn poll_take(&self, cx: &mut TaskContext<'_>) -> Poll<Mailed> {
        let mut mail = self.0.lock();
        if let Some(progress) = mail.progress.pop_front() {
            return Poll::Ready(Mailed::Progress(progress));
        }
        if let Some(question) = mail.questions.pop_front() {
            return Poll::Ready(Mailed::Question(Box::new(question)));
        }
        if !mail.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            mail.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    /// A progress notification that came, if any (taken without waiting).
    pub(crate) fn take_progress(&self) -> Option<ProgressParams> {
        self.0.lock().progress.pop_front()
    }

    /// Forgets the waker kept (the round that relayed the call has ended: the call is parked,
    /// and the waker would keep that round's task alive until the retry).
    pub(crate) fn forget_waker(&self) {
        let waker = self.0.lock().waker.take();
        drop(waker);
    }

    /// Takes nothing more: what is queued is dropped (a question's asker gets an error).
    pub(crate) fn close(&self) {
        let mut mail = self.0.lock();
        mail.closed = true;
        let dropped = (std::mem::take(&mut mail.questions), std::mem::take(&mut mail.progress), mail.waker.take());
        drop(mail);
        drop(dropped);
    }
}

/// The downstream calls in flight and the upstream calls they drive.
#[derive(Clone, Default)]
pub struct CallRouter {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    next_key: AtomicU64,
    /// Downstream handlers running now, newest last.
    handlers: Mutex<Vec<(u64, Context)>>,
    /// Upstream calls alive (running or parked), newest last: where questions go.
    askers: Mutex<Vec<(u64, Arc<Inbox>)>>,
    /// Upstream calls waiting for a 2026-07-28 downstream client to retry with its answer.
    pub(crate) parked: Mutex<HashMap<u64, UpstreamCall>>,
}

/// Removes a registration from the router when dropped.
pub(crate) struct Registration {
    router: CallRouter,
    key: u64,
    asker: bool,
}

impl Drop for Registration {
    fn drop(&mut self) {
        if self.asker {
            self.router.inner.askers.lock().retain(|(k, _)| *k != self.key);
        } else {
            self.router.inner.handlers.lock().retain(|(k, _)| *k != self.key);
        }
    }
}

impl CallRouter {
    /// A fresh key, unique within this router.
    pub(crate) fn next_key(&self) -> u64 {
        self.inner.next_key.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Registers a downstream handler as the newest, until the registration drops.
    pub(crate) fn enter(&self, ctx: &Context) -> Registration {
        let key = self.next_key();
        self.inner.handlers.lock().push((key, ctx.clone()));
        Registration { router: self.clone(), key, asker: false }
    }

    /// Registers an upstream call's inbox as the newest, until the registration drops.
    pub(crate) fn add_asker(&self, key: u64, inbox: Arc<Inbox>) -> Registration {
        self.inner.askers.lock().push((key, inbox));
        Registration { router: self.clone(), key, asker: true }
    }

    /// The downstream handler a log message belongs to: the newest one running.
    pub(crate) fn current_handler(&self) -> Option<Context> {
        self.inner.handlers.lock().last().map(|(_, c)| c.clone())
    }

    /// Puts an upstream question to the downstream client of the newest upstream call.
    pub(crate) async fn ask(&self, request: InputRequest) -> Result<Value, ErrorObject> {
        let asker = self.inner.askers.lock().last().map(|(_, a)| a.clone());
        let asker = asker.ok_or_else(|| {
            ErrorObject::internal("the upstream server asked a question outside any call in progress")
        })?;
        let (answer, reply) = oneshot::channel();
        asker
            .put_question(Question { request, answer })
            .map_err(|_| ErrorObject::internal("the downstream call this question belongs to has ended"))?;
        reply.await.map_err(|_| ErrorObject::internal("the downstream call ended before answering"))?
    }

    /// The calls parked for a downstream retry (see [`crate::relay`]), locked.
    pub(crate) fn parked(&self) -> MutexGuard<'_, HashMap<u64, UpstreamCall>> {
        self.inner.parked.lock()
    }
}
