//! An MCP server run as a child process, spoken to over its stdin and stdout.
//!
//! [`ChildCommand`] describes the server to start (a program and its arguments, parsed from
//! a command line with shell-like quoting if wanted, plus environment and working
//! directory); [`ChildCommand::spawn`] starts it and returns a [`Connection`] over its
//! stdin/stdout (the [`crate::stdio`] framing) and a [`ChildProcess`] to end it with.
//!
//! The child's stderr never mixes with the protocol: by default each line is logged with
//! `tracing` under the target `mcpwire::child` (lines at `info`, the process's lifecycle at
//! `debug`), with a bound on the length of a line.
//!
//! Ending follows the specification's stdio shutdown: [`ChildProcess::close`] closes the
//! child's stdin, waits, sends SIGTERM, waits again, then SIGKILL. A `ChildProcess` that is
//! dropped kills the child.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin};

use crate::{Connection, DEFAULT_MAX_FRAME};

/// Longest stderr line logged as is; the rest of a longer line is dropped (and said so).
const MAX_STDERR_LINE: usize = 16 * 1024;

/// How long to wait for the child to be reaped after SIGKILL.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// What happens to the child's stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StderrMode {
    /// Each line is logged with `tracing` (target `mcpwire::child`, level `info`).
    #[default]
    Log,
    /// The child writes to this process's stderr.
    Inherit,
    /// Discarded.
    Discard,
}

/// Why a child could not be started.
///
/// The `Display` text is this layer's only; why the layer below failed is the
/// [`source`](std::error::Error::source) (print the chain for the whole story).
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    /// The command line names no program.
    #[error("the command line is empty")]
    EmptyCommand,
    /// The command line's quoting is broken (an unterminated quote, say).
    #[error("cannot parse the command line")]
    Parse(
        /// The command-line parser's error (a `shell_words::ParseError`).
        #[source]
        Box<dyn std::error::Error + Send + Sync>,
    ),
    /// The operating system refused to start the program.
    #[error("cannot start {program}")]
    Spawn {
        /// The program that was to run (the whole command line, for messages).
        program: String,
        /// Why it could not (`NotFound` for a program that does not exist, say).
        #[source]
        source: io::Error,
    },
}

/// The description of a server process to start.
#[derive(Debug, Clone)]
pub struct ChildCommand {
    program: OsString,
    args: Vec<OsString>,
    envs: Vec<(OsString, Option<OsString>)>,
    env_clear: bool,
    cwd: Option<PathBuf>,
    max_frame: usize,
    stderr: StderrMode,
}

impl ChildCommand {
    /// A command running `program` (looked up in `PATH` if it has no slash) without arguments.
    pub fn new(program: impl Into<OsString>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            envs: Vec::new(),
            env_clear: false,
            cwd: None,
            max_frame: DEFAULT_MAX_FRAME,
            stderr: StderrMode::Log,
        }
    }

    /// Parses a command line such as `npx -y @modelcontextprotocol/server-everything` or
    /// `python "my server.py" --flag='a b'`, with POSIX shell quoting rules (quotes and
    /// backslashes; no variables, globs or pipes: nothing is run through a shell).
    pub fn parse(command_line: &str) -> Result<Self, ChildError> {
        let words = shell_words::split(command_line).map_err(|e| ChildError::Parse(Box::new(e)))?;
        let mut words = words.into_iter();
        let program = words.next().ok_or(ChildError::EmptyCommand)?;
        Ok(Self::new(program).args(words))
    }

    /// Adds an argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable of the child.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.envs.push((key.into(), Some(value.into())));
        self
    }

    /// Sets environment variables of the child.
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        self.envs.extend(vars.into_iter().map(|(k, v)| (k.into(), Some(v.into()))));
        self
    }

    /// Removes an environment variable from the child's environment.
    pub fn env_remove(mut self, key: impl Into<OsString>) -> Self {
        self.envs.push((key.into(), None));
        self
    }

    /// Starts the child with an empty environment (plus what [`Self::env`] adds).
    pub fn env_clear(mut self) -> Self {
        self.env_clear = true;
        self.envs.clear();
        self
    }

    /// Runs the child in this directory.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Bound on one inbound message, in bytes ([`DEFAULT_MAX_FRAME`] unless set).
    pub fn max_frame(mut self, bytes: usize) -> Self {
        self.max_frame = bytes;
        self
    }

    /// What to do with the child's stderr ([`StderrMode::Log`] unless set).
    pub fn stderr(mut self, mode: StderrMode) -> Self {
        self.stderr = mode;
        self
    }

    /// The program.
    pub fn get_program(&self) -> &OsStr {
        &self.program
    }

    /// The arguments.
    pub fn get_args(&self) -> impl Iterator<Item = &OsStr> {
        self.args.iter().map(OsString::as_os_str)
    }

    /// The command as one line, for messages.
    pub fn display(&self) -> String {
        let mut words = vec![self.program.to_string_lossy().into_owned()];
        words.extend(self.args.iter().map(|a| a.to_string_lossy().into_owned()));
        shell_words::join(words)
    }

    /// Starts the child. Must be called within a Tokio runtime.
    pub fn spawn(&self) -> Result<(Connection, ChildProcess), ChildError> {
        let label = self.display();
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(&self.args);
        if self.env_clear {
            cmd.env_clear();
        }
        for (key, value) in &self.envs {
            match value {
                Some(v) => cmd.env(key, v),
                None => cmd.env_remove(key),
            };
        }
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).kill_on_drop(true);
        cmd.stderr(match self.stderr {
            StderrMode::Log => Stdio::piped(),
            StderrMode::Inherit => Stdio::inherit(),
            StderrMode::Discard => Stdio::null(),
        });
        let mut child = cmd.spawn().map_err(|source| ChildError::Spawn { program: label.clone(), source })?;
        let pid = child.id();
        tracing::debug!(target: "mcpwire::child", pid, command = %label, "started");
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            // Both were asked for as pipes; without them there is no connection.
            let _ = child.start_kill();
            return Err(ChildError::Spawn { program: label, source: io::Error::other("no stdio pipes") });
        };
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(log_stderr(stderr, label.clone(), pid));
        }
        let slot = Arc::new(StdinSlot::new(stdin));
        let connection = crate::stdio::connect(stdout, SharedStdin(slot.clone()), self.max_frame);
        Ok((connection, ChildProcess { child, stdin: slot, label }))
    }
}

/// A running server process. Dropping it kills the process; [`Self::close`] ends it politely.
#[derive(Debug)]
pub struct ChildProcess {
    child: Child,
    stdin: Arc<StdinSlot>,
    label: String,
}

impl ChildProcess {
    /// The process id, while the process has not been reaped.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// The exit status, if the process has exited.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// Waits until the process exits (unbounded: prefer [`Self::close`]).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        self.child.wait().await
    }

    /// Closes the child's stdin: a well-behaved server exits when it sees end of input.
    /// Anything still queued on the connection is not written after this.
    pub fn close_stdin(&self) {
        self.stdin.close();
    }

    /// Kills the process (SIGKILL) without waiting.
    pub fn start_kill(&mut self) -> io::Result<()> {
        self.child.start_kill()
    }

    /// Ends the process as the specification says: closes its stdin and waits up to
    /// `grace` for it to exit; then sends SIGTERM and waits up to `grace` again; then
    /// SIGKILL. Returns the exit status.
    pub async fn close(mut self, grace: Duration) -> io::Result<ExitStatus> {
        self.close_stdin();
        if let Ok(status) = tokio::time::timeout(grace, self.child.wait()).await {
            tracing::debug!(target: "mcpwire::child", command = %self.label, "exited after stdin closed");
            return status;
        }
        if self.terminate() {
            if let Ok(status) = tokio::time::timeout(grace, self.child.wait()).await {
                tracing::debug!(target: "mcpwire::child", command = %self.label, "exited after SIGTERM");
                return status;
            }
        }
        tracing::debug!(target: "mcpwire::child", command = %self.label, "killing (SIGKILL)");
        self.child.start_kill()?;
        match tokio::time::timeout(KILL_WAIT, self.child.wait()).await {
            Ok(status) => status,
            Err(_) => Err(io::Error::new(io::ErrorKind::TimedOut, "the child did not exit after SIGKILL")),
        }
    }

    /// Sends SIGTERM; `false` when there was no way to (not Unix, or already reaped).
    #[cfg(unix)]
    fn terminate(&self) -> bool {
        // `id()` is `None` once the child has been reaped, so the pid cannot have been
        // reused by another process.
        let Some(pid) = self.child.id().and_then(|p| libc::pid_t::try_from(p).ok()) else { return false };
        // SAFETY: kill(2) takes plain integers and has no memory-safety preconditions.
        let rc = unsafe { libc::kill(pid, libc::SIGTERM) };
        tracing::debug!(target: "mcpwire::child", pid, rc, "sent SIGTERM");
        rc == 0
    }

    #[cfg(not(unix))]
    fn terminate(&self) -> bool {
        false
    }
}

/// The child's stdin, closable from the [`ChildProcess`] while the connection's writer task
/// owns the writing side.
#[derive(Debug)]
struct StdinSlot {
    state: Mutex<SlotState>,
}

#[derive(Debug)]
struct SlotState {
    stdin: Option<ChildStdin>,
    /// The writer's waker when its last write was pending, to wake it after a close.
    waker: Option<Waker>,
}

impl StdinSlot {
    fn new(stdin: ChildStdin) -> Self {
        Self { state: Mutex::new(SlotState { stdin: Some(stdin), waker: None }) }
    }

    fn close(&self) {
        let (stdin, waker) = {
            let mut s = self.state.lock();
            (s.stdin.take(), s.waker.take())
        };
        drop(stdin);
        if let Some(w) = waker {
            w.wake();
        }
    }

    fn poll_with<T>(
        &self,
        cx: &mut Context<'_>,
        f: impl FnOnce(Pin<&mut ChildStdin>, &mut Context<'_>) -> Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        let mut s = self.state.lock();
        let Some(stdin) = s.stdin.as_mut() else {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::BrokenPipe, "the child's stdin is closed")));
        };
        let r = f(Pin::new(stdin), cx);
        if r.is_pending() {
            s.waker = Some(cx.waker().clone());
        }
        r
    }
}

struct SharedStdin(Arc<StdinSlot>);

impl AsyncWrite for SharedStdin {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.0.poll_with(cx, |w, cx| w.poll_write(cx, buf))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.poll_with(cx, |w, cx| w.poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // The writer is done: closing the pipe is what tells the child.
        self.0.close();
        Poll::Ready(Ok(()))
    }
}

/// Logs the child's stderr line by line until it closes.
async fn log_stderr(stderr: ChildStderr, label: String, pid: Option<u32>) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        match read_bounded_line(&mut reader, &mut line, MAX_STDERR_LINE).await {
            Ok(None) => break,
            Ok(Some(truncated)) => {
                let text = String::from_utf8_lossy(&line);
                let text = text.trim_end_matches(['\r', '\n']);
                if truncated {
                    tracing::info!(target: "mcpwire::child", pid, command = %label, "{text} [line truncated]");
                } else {
                    tracing::info!(target: "mcpwire::child", pid, command = %label, "{text}");
                }
            }
            Err(e) => {
                tracing::debug!(target: "mcpwire::child", pid, command = %label, "stderr read failed: {e}");
                break;
            }
        }
    }
    tracing::debug!(target: "mcpwire::child", pid, command = %label, "stderr closed");
}

/// Reads one line (without its newline) into `line`, keeping at most `max` bytes of it.
/// `Ok(None)` at end of input; `Ok(Some(truncated))` otherwise.
async fn read_bounded_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> io::Result<Option<bool>> {
    line.clear();
    let mut truncated = false;
    let mut any = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(any.then_some(truncated));
        }
        any = true;
        let (chunk, used, end) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        let room = max.saturating_sub(line.len());
        if chunk.len() > room {
            truncated = true;
        }
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        reader.consume(used);
        if end {
            return Ok(Some(truncated));
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::Frame;
    use std::time::Instant;

    #[test]
    fn parses_command_lines_with_quoting() {
        let c = ChildCommand::parse(r#"npx -y "@scope/pkg name" --opt='a b' plain\ word"#).unwrap();
        assert_eq!(c.get_program(), "npx");
        let args: Vec<_> = c.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(args, ["-y", "@scope/pkg name", "--opt=a b", "plain word"]);
        assert!(matches!(ChildCommand::parse("   "), Err(ChildError::EmptyCommand)));
        let e = ChildCommand::parse("echo 'unterminated").unwrap_err();
        assert!(matches!(e, ChildError::Parse(_)), "{e}");
        assert_eq!(e.to_string(), "cannot parse the command line");
        let source = std::error::Error::source(&e).expect("the parser's error");
        assert!(source.downcast_ref::<shell_words::ParseError>().is_some(), "{source:?}");
        assert_eq!(c.display(), r#"npx -y '@scope/pkg name' '--opt=a b' 'plain word'"#);
    }

    #[tokio::test]
    async fn talks_over_stdio_with_env_and_cwd_and_closes_on_eof() {
        let dir = std::env::temp_dir();
        let cmd = ChildCommand::parse(r#"sh -c 'echo "$GREETING $(pwd)"; echo to-stderr >&2; cat'"#)
            .unwrap()
            .env("GREETING", "hello")
            .current_dir(&dir);
        let (mut conn, child) = cmd.spawn().unwrap();
        let first = conn.incoming.recv().await.unwrap().unwrap();
        let pwd = std::fs::canonicalize(&dir).unwrap();
        assert_eq!(first.text, format!("hello {}", pwd.display()));
        conn.outgoing.send(crate::Outbound::text("ping")).await.unwrap();
        assert_eq!(conn.incoming.recv().await, Some(Ok(Frame::new("ping"))));
        let started = Instant::now();
        let status = child.close(Duration::from_secs(5)).await.unwrap();
        assert!(status.success(), "cat exits on EOF: {status:?}");
        assert!(started.elapsed() < Duration::from_secs(4));
        assert_eq!(conn.incoming.recv().await, None);
    }

    #[tokio::test]
    async fn escalates_to_sigterm_then_sigkill() {
        use std::os::unix::process::ExitStatusExt;
        // Ignores end of input but not SIGTERM.
        let (_conn, child) = ChildCommand::parse("sleep 30").unwrap().spawn().unwrap();
        let status = child.close(Duration::from_millis(200)).await.unwrap();
        assert_eq!(status.signal(), Some(libc::SIGTERM));
        // Ignores both.
        let cmd = ChildCommand::parse(r#"sh -c 'trap "" TERM; echo ready; while :; do sleep 1; done'"#).unwrap();
        let (mut conn, child) = cmd.spawn().unwrap();
        assert_eq!(conn.incoming.recv().await.unwrap().unwrap().text, "ready");
        let started = Instant::now();
        let status = child.close(Duration::from_millis(200)).await.unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        assert!(started.elapsed() < Duration::from_secs(3));
    }

    #[tokio::test]
    async fn spawn_failures_and_drop_kill() {
        let err = ChildCommand::new("/nonexistent/mcpwire-server").spawn().unwrap_err();
        assert!(matches!(err, ChildError::Spawn { .. }), "{err}");
        assert_eq!(err.to_string(), "cannot start /nonexistent/mcpwire-server", "the source's text is not repeated");
        let io = std::error::Error::source(&err).and_then(|s| s.downcast_ref::<io::Error>());
        assert_eq!(io.map(io::Error::kind), Some(io::ErrorKind::NotFound), "{err:?}");
        let (_conn, child) = ChildCommand::parse("sleep 30").unwrap().spawn().unwrap();
        let pid = child.id().unwrap() as libc::pid_t;
        drop(child);
        // The child is killed on drop; give the kill a moment to land.
        let mut gone = false;
        for _ in 0..50 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            // SAFETY: signal 0 only checks whether the process exists.
            let alive = unsafe { libc::kill(pid, 0) } == 0;
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| s.split_whitespace().nth(2) == Some("Z"))
                .unwrap_or(true);
            if !alive || zombie {
                gone = true;
                break;
            }
        }
        assert!(gone, "the child was killed on drop");
    }

    #[tokio::test]
    async fn stderr_lines_are_bounded() {
        let input = format!("short\n{}\nlast", "x".repeat(100));
        let mut reader = BufReader::with_capacity(8, input.as_bytes());
        let mut line = Vec::new();
        assert_eq!(read_bounded_line(&mut reader, &mut line, 10).await.unwrap(), Some(false));
        assert_eq!(line, b"short");
        assert_eq!(read_bounded_line(&mut reader, &mut line, 10).await.unwrap(), Some(true));
        assert_eq!(line.len(), 10);
        assert_eq!(read_bounded_line(&mut reader, &mut line, 10).await.unwrap(), Some(false));
        assert_eq!(line, b"last");
        assert_eq!(read_bounded_line(&mut reader, &mut line, 10).await.unwrap(), None);
    }
}
