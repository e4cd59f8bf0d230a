//! Newline-delimited JSON-RPC frames over a byte stream (the MCP stdio transport).
//!
//! Reading is bounded: a line longer than the limit is skipped as it streams by (never held
//! in memory) and reported as [`FrameError::TooLarge`]; the next line is read normally.
//! Writing batches whatever is queued before flushing, and what the tasks ready at the same
//! time queue too (the writer steps aside once for them), so a burst costs one flush.
//!
//! This process's own stdin and stdout, when both are pipes (as when an MCP client starts
//! the server), are made non-blocking and driven by the runtime itself: no thread hand-over
//! at all. Otherwise (a terminal, a file) two dedicated threads do plain blocking I/O:
//! tokio's stdin/stdout hand every read and write to its blocking pool, a thread hand-over
//! per message that costs more CPU than the message itself.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;

use crate::{Connection, Frame, FrameError, Inbound, Outbound, CHANNEL_CAPACITY, DEFAULT_MAX_FRAME};

/// A connection over this process's stdin and stdout. Call it inside a tokio runtime with
/// I/O enabled (as `#[tokio::main]` builds).
pub fn stdio() -> Connection {
    #[cfg(unix)]
    if let Some(conn) = stdio_pipes() {
        return conn;
    }
    stdio_threads()
}

/// stdin and stdout as non-blocking pipes on the runtime, if both are pipes.
#[cfg(unix)]
fn stdio_pipes() -> Option<Connection> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileTypeExt;
    use tokio::net::unix::pipe;
    let input = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let output = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    let is_pipe = |fd: &std::os::fd::OwnedFd| {
        fd.try_clone()
            .ok()
            .and_then(|fd| std::fs::File::from(fd).metadata().ok())
            .is_some_and(|m| m.file_type().is_fifo())
    };
    // Both or neither: a half-converted stdin would be non-blocking under the thread reader.
    if !is_pipe(&input) || !is_pipe(&output) {
        return None;
    }
    let reader = pipe::Receiver::from_owned_fd(input).ok()?;
    let writer = pipe::Sender::from_owned_fd(output).ok()?;
    Some(connect(reader, writer, DEFAULT_MAX_FRAME))
}

/// stdin and stdout served by two dedicated threads.
fn stdio_threads() -> Connection {
    let (in_tx, in_rx) = mpsc::channel(CHANNEL_CAPACITY);
    let (out_tx, mut out_rx) = mpsc::channel::<Outbound>(CHANNEL_CAPACITY);
    // Detached: a read blocked on stdin must not hold the runtime's shutdown.
    let spawned = std::thread::Builder::new().name("mcp-stdin".into()).spawn(move || {
        let stdin = std::io::stdin();
        read_loop_blocking(&mut stdin.lock(), &in_tx, DEFAULT_MAX_FRAME);
    });
    if let Err(e) = spawned {
        tracing::error!("cannot start the stdin thread: {e}");
    }
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let spawned = std::thread::Builder::new().name("mcp-stdout".into()).spawn(move || {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::with_capacity(64 * 1024, stdout.lock());
        'frames: while let Some(frame) = out_rx.blocking_recv() {
            let mut next = Some(frame);
            while let Some(frame) = next {
                if let Outbound::Frame(frame) = frame {
                    if write_line_blocking(&mut out, &frame.text).is_err() {
                        break 'frames;
                    }
                }
                next = out_rx.try_recv().ok();
            }
            if std::io::Write::flush(&mut out).is_err() {
                break;
            }
        }
        drop(done_tx);
    });
    if let Err(e) = spawned {
        tracing::error!("cannot start the stdout thread: {e}");
    }
    let writer = tokio::spawn(async move {
        let _ = done_rx.await;
    });
    Connection { incoming: in_rx, outgoing: out_tx, writer: Some(writer), sends_headers: false }
}

/// A connection over any byte stream (a child's pipes, a socket, an in-memory duplex).
pub fn connect<R, W>(reader: R, writer: W, max_frame: usize) -> Connection
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (in_tx, in_rx) = mpsc::channel(CHANNEL_CAPACITY);
    let (out_tx, out_rx) = mpsc::channel(CHANNEL_CAPACITY);
    tokio::spawn(read_loop(BufReader::with_capacity(64 * 1024, reader), in_tx, max_frame));
    let writer = tokio::spawn(write_loop(BufWriter::with_capacity(64 * 1024, writer), out_rx));
    Connection { incoming: in_rx, outgoing: out_tx, writer: Some(writer), sends_headers: false }
}

/// Assembles one line from buffered chunks, skipping (not holding) a line over the limit.
struct LineAssembler<'a> {
    line: &'a mut Vec<u8>,
    max: usize,
    oversized: bool,
    any: bool,
}

impl<'a> LineAssembler<'a> {
    fn new(line: &'a mut Vec<u8>, max: usize) -> Self {
        line.clear();
        Self { line, max, oversized: false, any: false }
    }

    /// Takes what it can of `buf`: how many bytes to consume, and the outcome once the line
    /// is complete (`Ok(true)`: a line; at end of input, `Ok(false)` if nothing was read).
    fn feed(&mut self, buf: &[u8]) -> (usize, Option<Result<bool, FrameError>>) {
        if buf.is_empty() {
            let end = if self.oversized { Err(FrameError::TooLarge { limit: self.max }) } else { Ok(self.any) };
            return (0, Some(end));
        }
        self.any = true;
        let (chunk, done, found) = match memchr(buf) {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        if !self.oversized {
            if self.line.len() + chunk.len() > self.max {
                self.oversized = true;
                self.line.clear();
                self.line.shrink_to(64 * 1024);
            } else {
                self.line.extend_from_slice(chunk);
            }
        }
        let complete = if self.oversized { Err(FrameError::TooLarge { limit: self.max }) } else { Ok(true) };
        let outcome = found.then_some(complete);
        (done, outcome)
    }
}

/// Reads one line into `line` (without the newline). Returns `Ok(false)` at EOF with nothing
/// read, and `Err(TooLarge)` after skipping a line longer than `max`.
async fn read_frame<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Result<bool, FrameError>> {
    let mut assembler = LineAssembler::new(line, max);
    loop {
        let (done, outcome) = assembler.feed(reader.fill_buf().await?);
        reader.consume(done);
        if let Some(outcome) = outcome {
            return Ok(outcome);
        }
    }
}

/// [`read_frame`] for a blocking reader.
fn read_frame_blocking<R: std::io::BufRead>(
    reader: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Result<bool, FrameError>> {
    let mut assembler = LineAssembler::new(line, max);
    loop {
        let (done, outcome) = assembler.feed(reader.fill_buf()?);
        reader.consume(done);
        if let Some(outcome) = outcome {
            return Ok(outcome);
        }
    }
}

fn memchr(buf: &[u8]) -> Option<usize> {
    // The crate's search reads many bytes an instruction; a loop over the bytes cost about
    // four instructions a byte, over 1,000 a request of a 2026-07-28 client.
    memchr::memchr(b'\n', buf)
}

/// What a read line becomes: `None` to skip it (blank).
fn to_frame(line: &mut Vec<u8>) -> Option<Inbound> {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    Some(match std::str::from_utf8(line) {
        Ok(s) => Ok(Frame::new(s)),
        Err(source) => Err(FrameError::InvalidUtf8 { source }),
    })
}

async fn read_loop<R: AsyncBufRead + Unpin>(mut reader: R, tx: mpsc::Sender<Inbound>, max: usize) {
    let mut line = Vec::new();
    loop {
        let frame = match read_frame(&mut reader, &mut line, max).await {
            Ok(Ok(false)) => break,
            Ok(Ok(true)) => match to_frame(&mut line) {
                Some(frame) => frame,
                None => continue,
            },
            Ok(Err(e)) => Err(e),
            Err(e) => {
                tracing::debug!("stdio read ended: {e}");
                break;
            }
        };
        if tx.send(frame).await.is_err() {
            break;
        }
    }
}

fn read_loop_blocking<R: std::io::BufRead>(reader: &mut R, tx: &mpsc::Sender<Inbound>, max: usize) {
    let mut line = Vec::new();
    loop {
        let frame = match read_frame_blocking(reader, &mut line, max) {
            Ok(Ok(false)) => break,
            Ok(Ok(true)) => match to_frame(&mut line) {
                Some(frame) => frame,
                None => continue,
            },
            Ok(Err(e)) => Err(e),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                tracing::debug!("stdin read ended: {e}");
                break;
            }
        };
        if tx.blocking_send(frame).is_err() {
            break;
        }
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(mut writer: W, mut rx: mpsc::Receiver<Outbound>) {
    while let Some(frame) = rx.recv().await {
        if write_queued(&mut writer, &mut rx, Some(frame)).await.is_err() {
            return;
        }
        // Once more after the tasks ready to run have had their turn: the task that sends a
        // frame wakes this one to run next (tokio's multi-thread runtime runs the task woken
        // last first), so a burst of frames from several tasks went out a write each, and on
        // a pipe each write woke the peer for one message: a context switch both ways per
        // call through the gateway (docs/PERFORMANCE.md, "Item 1, third").
        step_aside().await;
        let more = rx.try_recv().ok();
        if write_queued(&mut writer, &mut rx, more).await.is_err() {
            return;
        }
        if writer.flush().await.is_err() {
            return;
        }
    }
    let _ = writer.shutdown().await;
}

/// Lets the tasks ready to run go first, once. The task wakes itself before it returns
/// `Pending`, which tokio takes as a yield: it goes behind the tasks already queued and runs
/// after them. (`tokio::task::yield_now` waits for the IO driver's next turn instead: a
/// system call more per write when nothing else is ready, two per call at one in flight.)
async fn step_aside() {
    let mut stepped = false;
    std::future::poll_fn(|cx| {
        if stepped {
            return std::task::Poll::Ready(());
        }
        stepped = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
    .await
}

/// Writes `first` and every frame queued behind it, into the buffer.
async fn write_queued<W: AsyncWrite + Unpin>(
    writer: &mut W,
    rx: &mut mpsc::Receiver<Outbound>,
    first: Option<Outbound>,
) -> std::io::Result<()> {
    let mut next = first;
    while let Some(frame) = next {
        // A hint to close a request's stream means nothing on a byte stream.
        if let Outbound::Frame(frame) = frame {
            write_line(writer, &frame.text).await?;
        }
        next = rx.try_recv().ok();
    }
    Ok(())
}

fn write_line_blocking<W: std::io::Write>(writer: &mut W, frame: &str) -> std::io::Result<()> {
    debug_assert!(!frame.contains('\n'), "a frame must not contain a newline");
    writer.write_all(frame.as_bytes())?;
    writer.write_all(b"\n")
}

async fn write_line<W: AsyncWrite + Unpin>(writer: &mut W, frame: &str) -> std::io::Result<()> {
    debug_assert!(!frame.contains('\n'), "a frame must not contain a newline");
    writer.write_all(frame.as_bytes()).await?;
    writer.write_all(b"\n").await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reads_lines_skips_oversized_and_bad_utf8() {
        let (client, server) = tokio::io::duplex(1 << 20);
        let (server_r, server_w) = tokio::io::split(server);
        let mut conn = connect(server_r, server_w, 16);
        let (mut client_r, mut client_w) = tokio::io::split(client);
        let big = "x".repeat(100);
        let mut input = format!("one\r\n\n{big}\ntwo\n").into_bytes();
        input.extend_from_slice(b"\xff\xfe\nthree");
        client_w.write_all(&input).await.unwrap();
        client_w.shutdown().await.unwrap();
        assert_eq!(conn.incoming.recv().await, Some(Ok(Frame::new("one"))));
        assert_eq!(conn.incoming.recv().await, Some(Err(FrameError::TooLarge { limit: 16 })));
        assert_eq!(conn.incoming.recv().await, Some(Ok(Frame::new("two"))));
        let bad = conn.incoming.recv().await.unwrap().unwrap_err();
        assert!(matches!(bad, FrameError::InvalidUtf8 { .. }), "{bad:?}");
        assert_eq!(bad.to_string(), "message is not valid UTF-8");
        let utf8 = std::error::Error::source(&bad).and_then(|s| s.downcast_ref::<std::str::Utf8Error>());
        assert_eq!(utf8.map(std::str::Utf8Error::valid_up_to), Some(0), "the source is the decoder's error");
        assert_eq!(conn.incoming.recv().await, Some(Ok(Frame::new("three"))));
        assert_eq!(conn.incoming.recv().await, None);

        conn.outgoing.send(Outbound::text("{}")).await.unwrap();
        drop(conn);
        let mut out = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut client_r, &mut out).await.unwrap();
        assert_eq!(out, "{}\n");
    }

    /// Records each write that reaches the byte stream, and counts the lines written.
    struct Recorder {
        writes: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
        lines: tokio::sync::watch::Sender<usize>,
    }

    impl AsyncWrite for Recorder {
        fn poll_write(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            self.writes.lock().unwrap().push(String::from_utf8_lossy(buf).into_owned());
            self.lines.send_modify(|n| *n += buf.iter().filter(|b| **b == b'\n').count());
            std::task::Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }

        fn poll_shutdown(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
    }

    /// Frames sent by tasks that are ready together (as the tasks of several connections
    /// made ready by one turn of the IO driver are) go out in one write, not a write each:
    /// on a pipe every write wakes the peer.
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn frames_from_tasks_ready_together_go_out_in_one_write() {
        let writes = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (lines, mut written) = tokio::sync::watch::channel(0);
        let (_open, reader) = tokio::io::duplex(64);
        let conn = connect(reader, Recorder { writes: writes.clone(), lines }, 1024);
        let out = conn.outgoing.clone();
        // Spawned from a task on the worker, so that the senders are queued there together.
        tokio::spawn(async move {
            for i in 0..8 {
                let out = out.clone();
                tokio::spawn(async move { out.send(Outbound::text(format!("{{\"n\":{i}}}"))).await.unwrap() });
            }
        })
        .await
        .unwrap();
        written.wait_for(|n| *n == 8).await.unwrap();
        let writes = writes.lock().unwrap().clone();
        assert_eq!(writes.len(), 1, "one write for the eight frames: {writes:?}");
        let mut sent: Vec<&str> = writes[0].lines().collect();
        sent.sort_unstable();
        let wanted: Vec<String> = (0..8).map(|i| format!("{{\"n\":{i}}}")).collect();
        assert_eq!(sent, wanted, "every frame whole, a line each");
    }
}
