//! Everything the client commands write to stderr: the protocol trace, the server's own
//! stderr, its log messages, progress (a bar on a terminal, plain lines otherwise) and notes.
//! stdout is kept for results.

use std::collections::VecDeque;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcpwire_protocol::types::{LoggingLevel, LoggingMessageParams, ProgressParams};
use parking_lot::Mutex;
use serde_json::Value;

/// How many of the server's last stderr lines are kept to explain a failure.
const STDERR_TAIL: usize = 20;

/// Longest message shown whole at `-v` (at `-vv` every message is shown whole).
const TRACE_LIMIT: usize = 2000;

/// Which way a traced message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From the client to the server.
    Sent,
    /// From the server to the client.
    Received,
}

/// The stderr side of a client command. Shared between the connection's tasks.
pub struct Ui {
    stderr_tty: bool,
    verbose: u8,
    log_level: Option<LoggingLevel>,
    start: Instant,
    bar: Mutex<Option<ProgressBar>>,
    tail: Mutex<VecDeque<String>>,
    stderr_closed: AtomicBool,
    stderr_closed_notify: tokio::sync::Notify,
    refused: AtomicBool,
}

impl Ui {
    /// A UI for `verbose` (the count of `-v`) showing server logs from `log_level` up.
    pub fn new(verbose: u8, log_level: Option<LoggingLevel>) -> Self {
        Self {
            stderr_tty: std::io::stderr().is_terminal(),
            verbose,
            log_level,
            start: Instant::now(),
            bar: Mutex::new(None),
            tail: Mutex::new(VecDeque::new()),
            stderr_closed: AtomicBool::new(false),
            stderr_closed_notify: tokio::sync::Notify::new(),
            refused: AtomicBool::new(false),
        }
    }

    /// Whether stderr is a terminal.
    pub fn stderr_is_tty(&self) -> bool {
        self.stderr_tty
    }

    /// How many `-v` were given.
    pub fn verbose(&self) -> u8 {
        self.verbose
    }

    /// Writes one line to stderr, above the progress bar if one is drawn.
    pub fn line(&self, text: &str) {
        let bar = self.bar.lock().clone();
        let write = || {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "{text}");
        };
        match bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    /// Runs `f` (an interactive prompt, say) with the progress bar hidden.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        let bar = self.bar.lock().clone();
        match bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }

    /// A note for the user: `mcp: text`.
    pub fn note(&self, text: &str) {
        self.line(&format!("mcp: {text}"));
    }

    /// Traces one protocol message (at `-v`).
    pub fn frame(&self, direction: Direction, text: &str) {
        if self.verbose == 0 {
            return;
        }
        let arrow = match direction {
            Direction::Sent => "→",
            Direction::Received => "←",
        };
        let elapsed = self.start.elapsed().as_secs_f64();
        let shown = if self.verbose < 2 && text.len() > TRACE_LIMIT {
            let mut cut = TRACE_LIMIT;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            format!("{}… ({} more bytes; -vv shows all)", &text[..cut], text.len() - cut)
        } else {
            text.to_owned()
        };
        self.line(&format!("[{elapsed:7.3}s] {arrow} {shown}"));
    }

    /// One line the server process wrote to its stderr: kept to explain a failure, and shown
    /// at `-v`.
    pub fn server_stderr(&self, text: &str) {
        {
            let mut tail = self.tail.lock();
            if tail.len() == STDERR_TAIL {
                tail.pop_front();
            }
            tail.push_back(text.to_owned());
        }
        if self.verbose > 0 {
            self.line(&format!("[server stderr] {text}"));
        }
    }

    /// Records that something the server asked for was refused for want of a command-line
    /// option (`--elicit`, `--decline`, `--sample-reply`).
    pub fn mark_refused(&self) {
        self.refused.store(true, Ordering::SeqCst);
    }

    /// Whether [`Self::mark_refused`] was called.
    pub fn refused(&self) -> bool {
        self.refused.load(Ordering::SeqCst)
    }

    /// The server process closed its stderr.
    pub fn server_stderr_closed(&self) {
        self.stderr_closed.store(true, Ordering::SeqCst);
        self.stderr_closed_notify.notify_waiters();
    }

    /// Waits (at most `timeout`) until the server's stderr has been read to its end.
    pub async fn wait_stderr_closed(&self, timeout: Duration) {
        let notified = self.stderr_closed_notify.notified();
        if self.stderr_closed.load(Ordering::SeqCst) {
            return;
        }
        let _ = tokio::time::timeout(timeout, notified).await;
    }

    /// The last non-blank line the server wrote to stderr.
    pub fn last_stderr_line(&self) -> Option<String> {
        self.tail.lock().iter().rev().find(|l| !l.trim().is_empty()).map(|l| super::error::one_line(l))
    }

    /// Shows a log message from the server, if it is at least as severe as asked for.
    pub fn log(&self, message: &LoggingMessageParams) {
        let Some(min) = self.log_level else { return };
        if message.level < min {
            return;
        }
        let level = serde_json::to_value(message.level).ok().and_then(|v| v.as_str().map(str::to_owned));
        let level = level.unwrap_or_default();
        let text = match &message.data {
            Value::String(s) => s.clone(),
            Value::Object(o) if o.len() == 1 && o.get("message").is_some_and(Value::is_string) => {
                o["message"].as_str().unwrap_or_default().to_owned()
            }
            other => other.to_string(),
        };
        let logger = message.logger.as_deref().map(|l| format!("{l}: ")).unwrap_or_default();
        let tag = format!("[{level}]");
        let tag = if self.stderr_tty {
            let style = console::Style::new().for_stderr();
            let style = match message.level {
                LoggingLevel::Debug => style.dim(),
                LoggingLevel::Info | LoggingLevel::Notice => style.cyan(),
                LoggingLevel::Warning => style.yellow(),
                _ => style.red().bold(),
            };
            style.apply_to(tag).to_string()
        } else {
            tag
        };
        self.line(&format!("{tag} {logger}{text}"));
    }

    /// Shows a progress notification: a bar on a terminal, a plain line otherwise.
    pub fn progress(&self, p: &ProgressParams) {
        let fraction = p.total.filter(|t| *t > 0.0).map(|t| (p.progress / t).clamp(0.0, 1.0));
        let amount = match p.total {
            Some(total) => format!("{}/{}", number(p.progress), number(total)),
            None => number(p.progress),
        };
        let message = p.message.as_deref().unwrap_or_default();
        if !self.stderr_tty {
            let percent = fraction.map(|f| format!(" ({:.0}%)", f * 100.0)).unwrap_or_default();
            let sep = if message.is_empty() { "" } else { " " };
            self.line(&format!("progress {amount}{percent}{sep}{message}"));
            return;
        }
        let mut bar = self.bar.lock();
        let bar = bar.get_or_insert_with(|| {
            let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            pb.enable_steady_tick(Duration::from_millis(120));
            pb
        });
        match fraction {
            Some(f) => {
                if bar.length() != Some(1000) {
                    bar.set_style(
                        ProgressStyle::with_template("{spinner} [{bar:30}] {percent:>3}% {msg}")
                            .unwrap_or_else(|_| ProgressStyle::default_bar())
                            .progress_chars("=> "),
                    );
                    bar.set_length(1000);
                }
                bar.set_position((f * 1000.0).round() as u64);
            }
            None => {
                if bar.length().is_some() {
                    bar.set_style(
                        ProgressStyle::with_template("{spinner} {msg}")
                            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                    );
                    bar.unset_length();
                }
            }
        }
        bar.set_message(format!("{amount} {message}"));
    }

    /// Removes the progress bar, if one is drawn.
    pub fn finish_progress(&self) {
        if let Some(bar) = self.bar.lock().take() {
            bar.finish_and_clear();
        }
    }
}

/// A number as people write it: `50`, not `50.0`.
pub fn number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_naturally() {
        assert_eq!(number(50.0), "50");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(-3.0), "-3");
    }

    #[test]
    fn the_stderr_tail_keeps_the_last_lines() {
        let ui = Ui::new(0, None);
        for i in 0..30 {
            ui.server_stderr(&format!("line {i}"));
        }
        ui.server_stderr("   ");
        assert_eq!(ui.last_stderr_line().as_deref(), Some("line 29"));
        assert_eq!(ui.tail.lock().len(), STDERR_TAIL);
    }
}
