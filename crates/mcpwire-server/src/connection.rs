//! Driving a connection's engine: frames in, requests served, frames out.
//!
//! The engine decides everything about a message (the lifecycle of both eras, which methods
//! exist and are offered, cancellation, progress rules); what is left here is running the
//! requests it hands over. Each request runs on the connection until it first waits (most are
//! answered at once), then as a task of its own, so a handler that awaits never blocks the
//! connection and each one can be cancelled. (A handler that computes for long without
//! awaiting should hand that work to `spawn_blocking`.)

use std::sync::Arc;

use futures::FutureExt;
use mcpwire_protocol::codec;
use mcpwire_protocol::engine::{Change, ServedRequest};
use mcpwire_protocol::message::{Decoded, FromClient};
use mcpwire_protocol::ErrorObject;
use mcpwire_transport::{Connection, Frame, FrameError, Inbound};
use tokio::sync::broadcast;
use tokio::task::JoinSet;

use crate::answer::Answer;
use crate::context::{Context, ContextParts};
use crate::link::{now, Handling, Link, Peer, Sink};
use crate::server::Server;

/// Where a connection's request tasks run.
pub(crate) enum Tasks<'a> {
    /// In the connection's set, which its end waits for.
    Set(&'a mut JoinSet<()>),
    /// On their own: a session with no connection loop.
    Detached,
}

impl Tasks<'_> {
    /// Runs `task` here until it first waits, and makes a task of it only then: most requests
    /// are answered at once, and a task per request (its allocation, scheduling, and the
    /// runtime's I/O polls between tasks) was the larger part of a pipelined call's cost.
    pub(crate) fn spawn(&mut self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        let mut task = Box::pin(task);
        if task.as_mut().now_or_never().is_some() {
            return;
        }
        match self {
            Self::Set(set) => drop(set.spawn(task)),
            Self::Detached => drop(tokio::spawn(task)),
        }
    }
}

/// A connection's link: `peer` as its engine, `sink` its own stream.
pub(crate) fn link(peer: Peer, sink: Sink) -> Arc<Link> {
    Arc::new(Link::new(peer, sink, None))
}

/// Hands a decoded frame to the engine, sends what it answered at once, and starts serving
/// the requests it handed over; their frames go to `reply` (one HTTP request's stream) or
/// the connection.
pub(crate) async fn receive(
    server: &Server,
    link: &Arc<Link>,
    frame: Decoded<FromClient>,
    reply: Option<Sink>,
    tasks: &mut Tasks<'_>,
) {
    let (_, out) = link.run(|peer| peer.handle(frame, now(), server));
    let requests = link.settle(out.events, reply.as_ref());
    link.send(out.transmits, reply.as_ref()).await;
    for (request, handling) in requests {
        tasks.spawn(serve_request(server.clone(), link.clone(), request, handling, reply.clone()));
    }
}

/// Serves one request to its answer, unless it is cancelled first (then nothing is sent).
pub(crate) async fn serve_request(
    server: Server,
    link: Arc<Link>,
    served: Box<ServedRequest>,
    handling: Handling,
    reply: Option<Sink>,
) {
    // Served in place: the request stays in its box (it is large), what the context needs is
    // taken out of it.
    let mut served = served;
    let cancel = crate::tasks::handler_token(&server, &served.request, &served.scope, &handling);
    let ctx = Context::new(ContextParts {
        link: link.clone(),
        id: served.id.clone(),
        reply: reply.clone(),
        scope: served.scope.clone(),
        progress_token: served.meta.progress_token.take(),
        cancel,
        request_timeout: server.config().request_timeout,
        round: served.round.take(),
        task: None,
        state: server.inner.state.clone(),
    });
    let answer = match crate::admission::admit(&server, &link) {
        Err(busy) => Answer::Refused(busy),
        // A panic fails this request only (see `panic`).
        Ok(_in_flight) => tokio::select! {
            biased;
            _ = handling.cancelled() => return,
            answer = crate::middleware::serve(&server, &mut served, &ctx) => answer,
        },
    };
    let id = &served.id;
    let (_, out) = link.run(|peer| match answer {
        Answer::Result(result) => peer.respond(id, Ok(result)),
        Answer::Refused(refusal) => peer.respond(id, Err(refusal.into_error(ctx.revision()))),
        Answer::Error(error) => peer.respond(id, Err(error)),
        Answer::InputRequired => match ctx.round() {
            Some(round) => peer.respond_input_required(id, &served.request, &round, now()),
            None => peer.respond(id, Err(ErrorObject::internal("input required outside a multi-round request"))),
        },
    });
    link.settle(out.events, reply.as_ref());
    link.send(out.transmits, reply.as_ref()).await;
}

/// Tells the connection's client about a change (a missed one: every list may have changed).
pub(crate) async fn announce(server: &Server, link: &Link, change: Result<Change, broadcast::error::RecvError>) {
    let changes = match change {
        Ok(change) => vec![change],
        Err(broadcast::error::RecvError::Lagged(_)) => vec![Change::Tools, Change::Prompts, Change::Resources],
        Err(broadcast::error::RecvError::Closed) => return,
    };
    for change in changes {
        let (_, out) = link.run(|peer| peer.announce(&change, server));
        link.send(out.transmits, None).await;
    }
}

/// The client is gone: questions to it fail, listen streams end, task handlers of the
/// session stop.
pub(crate) fn close(link: &Link) {
    let (_, out) = link.run(|peer| peer.close());
    link.settle(out.events, None);
    link.send_now(out.transmits, None);
    link.end_tasks();
}

/// Cancels the work of every request still served.
pub(crate) fn cancel_all(link: &Link) {
    let (_, out) = link.run(|peer| peer.cancel_all_served());
    link.settle(out.events, None);
}

async fn receive_inbound(server: &Server, link: &Arc<Link>, inbound: Inbound, tasks: &mut JoinSet<()>) {
    let Frame { text } = match inbound {
        Ok(frame) => frame,
        Err(e) => {
            let error = match e {
                FrameError::TooLarge { limit } => {
                    ErrorObject::invalid_request(format!("message larger than {limit} bytes"))
                }
                FrameError::InvalidUtf8 { .. } => ErrorObject::parse_error("message is not valid UTF-8"),
            };
            let (_, out) = link.run(|peer| peer.handle_unreadable(None, &error));
            link.send(out.transmits, None).await;
            return;
        }
    };
    match codec::read_from_client(&text) {
        Ok(frame) => receive(server, link, frame, None, &mut Tasks::Set(tasks)).await,
        Err(e) => {
            let (_, out) = link.run(|peer| peer.handle_unreadable(e.id(), e.error()));
            link.send(out.transmits, None).await;
        }
    }
}

/// Serves `server` on one connection until the client closes it; requests still running
/// then get the shutdown grace period to finish, and everything sent is flushed.
pub(crate) async fn serve(server: Server, connection: Connection) {
    let Connection { mut incoming, outgoing, writer, .. } = connection;
    let link = link(Peer::new(server.settings().clone()), Sink::Frames(outgoing));
    let mut changes = server.changes();
    let mut tasks = JoinSet::new();
    loop {
        tokio::select! {
            inbound = incoming.recv() => match inbound {
                Some(inbound) => receive_inbound(&server, &link, inbound, &mut tasks).await,
                None => break,
            },
            change = changes.recv() => announce(&server, &link, change).await,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
    // The client closed its side: nothing more can be answered by it. Requests already
    // running may still finish and be written, within the grace period.
    close(&link);
    let grace = server.config().shutdown_grace;
    if tokio::time::timeout(grace, async { while tasks.join_next().await.is_some() {} }).await.is_err() {
        cancel_all(&link);
        tasks.shutdown().await;
    }
    drop(link);
    if let Some(writer) = writer {
        let _ = writer.await;
    }
}
