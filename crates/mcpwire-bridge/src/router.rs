//! Where the upstream server's questions and log messages go: to the downstream call they
//! belong to.
//!
//! An upstream question (sampling, elicitation, roots) carries nothing that names the call it
//! was asked for, so it goes to the newest upstream call still alive, which relays it to its
//! downstream client (see [`crate::relay`]). Log messages go to the newest downstream call
//! being handled.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use mcpwire_client::ErrorObject;
use mcpwire_server::{Context, InputRequest};
use parking_lot::{Mutex, MutexGuard};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::relay::UpstreamCall;

/// A question from the upstream server, waiting for the downstream client's answer.
pub(crate) struct Question {
    pub(crate) request: InputRequest,
    pub(crate) answer: oneshot::Sender<Result<Value, ErrorObject>>,
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
    askers: Mutex<Vec<(u64, mpsc::UnboundedSender<Question>)>>,
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

    /// Registers an upstream call's question channel as the newest, until it drops.
    pub(crate) fn add_asker(&self, key: u64, questions: mpsc::UnboundedSender<Question>) -> Registration {
        self.inner.askers.lock().push((key, questions));
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
            .send(Question { request, answer })
            .map_err(|_| ErrorObject::internal("the downstream call this question belongs to has ended"))?;
        reply.await.map_err(|_| ErrorObject::internal("the downstream call ended before answering"))?
    }

    /// The calls parked for a downstream retry (see [`crate::relay`]), locked.
    pub(crate) fn parked(&self) -> MutexGuard<'_, HashMap<u64, UpstreamCall>> {
        self.inner.parked.lock()
    }
}
