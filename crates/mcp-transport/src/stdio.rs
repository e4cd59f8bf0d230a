//! Newline-delimited JSON-RPC frames over a byte stream (the MCP stdio transport).
//!
//! Reading is bounded: a line longer than the limit is skipped as it streams by (never held
//! in memory) and reported as [`FrameError::TooLarge`]; the next line is read normally.
//! Writing batches whatever is queued before flushing, so a burst costs one flush.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;

use crate::{Connection, Frame, FrameError, Inbound, CHANNEL_CAPACITY, DEFAULT_MAX_FRAME};

/// A connection over this process's stdin and stdout.
pub fn stdio() -> Connection {
    connect(tokio::io::stdin(), tokio::io::stdout(), DEFAULT_MAX_FRAME)
}

/// A connection over any reader and writer, with a bound on the size of an inbound frame.
pub fn connect<R, W>(reader: R, writer: W, max_frame: usize) -> Connection
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (in_tx, in_rx) = mpsc::channel(CHANNEL_CAPACITY);
    let (out_tx, out_rx) = mpsc::channel(CHANNEL_CAPACITY);
    tokio::spawn(read_loop(BufReader::with_capacity(64 * 1024, reader), in_tx, max_frame));
    let writer = tokio::spawn(write_loop(BufWriter::with_capacity(64 * 1024, writer), out_rx));
    Connection { incoming: in_rx, outgoing: out_tx, writer: Some(writer) }
}

/// Reads one line into `line` (without the newline). Returns `Ok(false)` at EOF with nothing
/// read, and `Err(TooLarge)` after skipping a line longer than `max`.
async fn read_frame<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Result<bool, FrameError>> {
    line.clear();
    let mut oversized = false;
    let mut any = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if oversized { Err(FrameError::TooLarge { limit: max }) } else { Ok(any) });
        }
        any = true;
        let (chunk, done, found) = match memchr(buf) {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        if !oversized {
            if line.len() + chunk.len() > max {
                oversized = true;
                line.clear();
                line.shrink_to(64 * 1024);
            } else {
                line.extend_from_slice(chunk);
            }
        }
        reader.consume(done);
        if found {
            return Ok(if oversized { Err(FrameError::TooLarge { limit: max }) } else { Ok(true) });
        }
    }
}

fn memchr(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

async fn read_loop<R: AsyncBufRead + Unpin>(mut reader: R, tx: mpsc::Sender<Inbound>, max: usize) {
    let mut line = Vec::new();
    loop {
        let frame = match read_frame(&mut reader, &mut line, max).await {
            Ok(Ok(false)) => break,
            Ok(Ok(true)) => {
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match std::str::from_utf8(&line) {
                    Ok(s) => Ok(Frame::new(s)),
                    Err(_) => Err(FrameError::InvalidUtf8),
                }
            }
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

async fn write_loop<W: AsyncWrite + Unpin>(mut writer: W, mut rx: mpsc::Receiver<String>) {
    while let Some(frame) = rx.recv().await {
        let mut next = Some(frame);
        while let Some(frame) = next {
            if write_line(&mut writer, &frame).await.is_err() {
                return;
            }
            next = rx.try_recv().ok();
        }
        if writer.flush().await.is_err() {
            return;
        }
    }
    let _ = writer.shutdown().await;
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
        assert_eq!(conn.incoming.recv().await, Some(Err(FrameError::InvalidUtf8)));
        assert_eq!(conn.incoming.recv().await, Some(Ok(Frame::new("three"))));
        assert_eq!(conn.incoming.recv().await, None);

        conn.outgoing.send("{}".into()).await.unwrap();
        drop(conn);
        let mut out = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut client_r, &mut out).await.unwrap();
        assert_eq!(out, "{}\n");
    }
}
