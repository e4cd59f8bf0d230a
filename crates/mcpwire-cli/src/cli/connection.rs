//! A connected session with the target, with what it takes to explain a failure (the child's
//! exit status and last stderr line) and to end it within bounds.

use std::sync::Arc;
use std::time::Duration;

use mcpwire_client::{Client, ClientError, ClientSession};
use mcpwire_transport::child::ChildProcess;

use super::error::{human_duration, CliError, Exit};
use super::target::{self, Opened, Target};
use super::trace;
use super::ui::Ui;

/// How long the child is given at each step of closing (stdin closed, then SIGTERM).
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// A session with the target.
pub struct Connected {
    /// The session.
    pub session: ClientSession,
    /// The target.
    pub target: Target,
    /// Where diagnostics go.
    pub ui: Arc<Ui>,
    child: tokio::sync::Mutex<Option<ChildProcess>>,
    oauth: Option<(String, Arc<mcpwire_auth::OAuthClient>)>,
}

/// Opens the target and connects: era detection, handshake. Bounded by the probe and the
/// request timeout the client was built with, and by `timeout` plus a margin in any case.
pub async fn connect(target: Target, client: &Client, ui: Arc<Ui>, timeout: Duration) -> Result<Connected, CliError> {
    let Opened { connection, child, oauth } = target::open(&target)?;
    let connection = if ui.verbose() > 0 { trace::tee(connection, ui.clone()) } else { connection };
    let guard = timeout + Duration::from_secs(5);
    let connected = tokio::time::timeout(guard, client.connect(connection)).await;
    let mut child = child;
    let error = match connected {
        Ok(Ok(session)) => {
            if let Some((url, client)) = &oauth {
                super::oauth::persist(url, client).await;
            }
            return Ok(Connected { session, target, ui, child: tokio::sync::Mutex::new(child), oauth });
        }
        Ok(Err(e)) => e,
        Err(_) => ClientError::Timeout { method: "the handshake".into(), timeout: guard },
    };
    let label = target.label();
    let message = match &error {
        ClientError::Closed => {
            let why = exit_story(&mut child, &ui).await;
            CliError::connection(format!("{label} {why} before completing the MCP handshake"))
                .with_detail(ui.last_stderr_line())
        }
        ClientError::Timeout { method, timeout } => CliError::new(
            Exit::Timeout,
            format!(
                "{label} did not answer {method} within {}: is it an MCP server speaking on its stdout?",
                human_duration(*timeout)
            ),
        ),
        _ => CliError::from(error).context(format!("cannot connect to {label}")),
    };
    if let Some(child) = child {
        let _ = tokio::time::timeout(Duration::from_secs(3), child.close(Duration::from_millis(300))).await;
    }
    Err(message)
}

/// What became of a child that closed the connection: `exited (exit status 1)`, or
/// `closed its output`.
async fn exit_story(child: &mut Option<ChildProcess>, ui: &Ui) -> String {
    let Some(child) = child.as_mut() else { return "closed the connection".into() };
    let status = tokio::time::timeout(Duration::from_secs(1), child.wait()).await;
    ui.wait_stderr_closed(Duration::from_millis(500)).await;
    match status {
        Ok(Ok(status)) => match status.code() {
            Some(code) => format!("exited with status {code}"),
            None => format!("was ended ({status})"),
        },
        _ => "closed its output".into(),
    }
}

impl CliError {
    /// Appends `: detail` when there is one (the server's last stderr line, say).
    pub fn with_detail(mut self, detail: Option<String>) -> Self {
        if let Some(d) = detail {
            self.message = format!("{}; its stderr ended with: {d}", self.message);
        }
        self
    }
}

impl Connected {
    /// Turns an error of a call into the user's message, saying what became of the server
    /// process when the connection closed.
    pub async fn explain(&self, error: ClientError) -> CliError {
        if !error.is_closed() {
            return CliError::from(error);
        }
        let mut child = self.child.lock().await;
        let why = exit_story(&mut child, &self.ui).await;
        CliError::connection(format!("the server {} {why}", self.target.label()))
            .with_detail(self.ui.last_stderr_line())
    }

    /// Ends the session and the server process, within bounds.
    pub async fn close(self) {
        // A token obtained or refreshed since the handshake is kept.
        if let Some((url, client)) = &self.oauth {
            super::oauth::persist(url, client).await;
        }
        let _ = tokio::time::timeout(CLOSE_GRACE * 2, self.session.close()).await;
        if let Some(child) = self.child.lock().await.take() {
            match tokio::time::timeout(CLOSE_GRACE * 3, child.close(CLOSE_GRACE)).await {
                Ok(Ok(status)) => tracing::debug!("the server exited: {status}"),
                Ok(Err(e)) => tracing::debug!("ending the server: {e}"),
                Err(_) => tracing::debug!("the server did not exit in time"),
            }
        }
    }
}
