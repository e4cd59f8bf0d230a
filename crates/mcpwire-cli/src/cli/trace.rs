//! The protocol trace (`-v`): a [`Connection`] wrapped so that every frame going either way
//! is shown on stderr, whatever the transport; and the diagnostics set-up of the client
//! commands (the server's stderr kept and shown, the client library's own log).

use std::sync::Arc;

use mcpwire_transport::{Connection, Outbound, CHANNEL_CAPACITY};
use tokio::sync::mpsc;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{filter, Layer, Registry};

use super::ui::{Direction, Ui};

/// The `tracing` target under which `mcpwire_transport::child` logs a child's stderr.
const CHILD_TARGET: &str = "mcpwire::child";

/// Wraps a connection so that every frame sent and received is traced on `ui`. Frames pass
/// through unchanged, in order; closing either side of the wrapper
/// closes the same side of the inner connection, and its writer is kept so that callers can
/// still wait for the last frames to be flushed.
pub fn tee(connection: Connection, ui: Arc<Ui>) -> Connection {
    let Connection { mut incoming, outgoing, writer, sends_headers } = connection;
    let (in_tx, in_rx) = mpsc::channel(CHANNEL_CAPACITY);
    let (out_tx, mut out_rx) = mpsc::channel::<Outbound>(CHANNEL_CAPACITY);
    let in_ui = ui.clone();
    tokio::spawn(async move {
        while let Some(inbound) = incoming.recv().await {
            match &inbound {
                Ok(frame) => in_ui.frame(Direction::Received, &frame.text),
                Err(e) => in_ui.frame(Direction::Received, &format!("(unreadable message: {e})")),
            }
            if in_tx.send(inbound).await.is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        while let Some(out) = out_rx.recv().await {
            if let Outbound::Frame(frame) = &out {
                ui.frame(Direction::Sent, &frame.text);
            }
            if outgoing.send(out).await.is_err() {
                break;
            }
        }
        // `outgoing` drops here: the inner transport sees the end of our side.
    });
    Connection { incoming: in_rx, outgoing: out_tx, writer, sends_headers }
}

/// Sets up diagnostics for a client command: the child server's stderr lines go to `ui`
/// (kept for error messages, shown at `-v`); the client library's warnings (and at `-vv`
/// its debug log) go to stderr. `MCP_LOG` overrides the library filter. `export`, if any,
/// is one more layer (the OpenTelemetry export of `mcp proxy`).
pub fn init(ui: Arc<Ui>, export: Option<Box<dyn Layer<Registry> + Send + Sync>>) {
    let _ = subscriber(ui, export).try_init();
}

/// The subscriber [`init`] installs.
fn subscriber(ui: Arc<Ui>, export: Option<Box<dyn Layer<Registry> + Send + Sync>>) -> impl Subscriber + Send + Sync {
    let library = match ui.verbose() {
        0 | 1 => "warn",
        _ => "warn,mcpwire_client=debug,mcpwire_transport=debug",
    };
    // The child's lines are the UI's, never the log's (a directive of the log's filter, not a
    // second filter around it).
    let child_off: filter::Directive = format!("{CHILD_TARGET}=off").parse().expect("a valid directive");
    let env = tracing_subscriber::EnvFilter::try_from_env("MCP_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(library))
        .add_directive(child_off);
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .without_time()
        .with_target(false)
        .with_filter(env);
    let child = ChildStderr { ui }.with_filter(filter::filter_fn(|m| m.target() == CHILD_TARGET));
    // One list of layers, each with one filter: layered one on another with an absent export
    // (`Option::None`) or a filter around a filter, the registry took every span as wanted
    // and recorded each request's spans, which nothing read (a measurable part of what
    // `mcp proxy` spent per forwarded call).
    let mut layers: Vec<Box<dyn Layer<Registry> + Send + Sync>> = vec![fmt.boxed(), child.boxed()];
    layers.extend(export);
    tracing_subscriber::registry().with(layers)
}

/// Hands the child's stderr lines (logged by `mcpwire_transport::child`) to the UI.
struct ChildStderr {
    ui: Arc<Ui>,
}

#[derive(Default)]
struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0 = value.to_owned();
        }
    }
}

impl<S: Subscriber> Layer<S> for ChildStderr {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut message = Message::default();
        event.record(&mut message);
        match *event.metadata().level() {
            Level::INFO => self.ui.server_stderr(&message.0),
            Level::DEBUG if message.0 == "stderr closed" => self.ui.server_stderr_closed(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpwire_transport::{memory, Frame};

    #[tokio::test]
    async fn the_tee_passes_frames_both_ways_and_closes() {
        let (a, mut b) = memory::pair();
        let ui = Arc::new(Ui::new(0, None));
        let mut a = tee(a, ui);
        a.outgoing.send(Outbound::text("to b")).await.unwrap();
        assert_eq!(b.incoming.recv().await.unwrap().unwrap().text, "to b");
        b.outgoing.send(Outbound::text("to a")).await.unwrap();
        assert_eq!(a.incoming.recv().await, Some(Ok(Frame::new("to a"))));
        drop(a.outgoing);
        assert_eq!(b.incoming.recv().await, None, "closing the wrapper closes the inner side");
    }

    #[test]
    fn the_log_records_no_span_and_the_child_lines_reach_the_ui() {
        let ui = Arc::new(Ui::new(0, None));
        tracing::subscriber::with_default(subscriber(ui.clone(), None), || {
            let span = tracing::info_span!(target: "mcpwire::client", "mcp.client.request");
            assert!(span.is_disabled(), "no layer wants an info span: the registry must not record it");
            tracing::info!(target: CHILD_TARGET, "a line of the server's stderr");
        });
        assert_eq!(ui.last_stderr_line().as_deref(), Some("a line of the server's stderr"));
    }
}
