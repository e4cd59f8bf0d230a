//! What the tests of this workspace share.
//!
//! A test that must wait for something another task, thread or process does (a child that
//! starts listening, a notification that arrives, a task that completes) polls with
//! [`eventually`] (async) or [`eventually_blocking`] (a plain `#[test]`), never with a sleep
//! of a guessed length or a loop of its own: one deadline, generous enough for a loaded CI
//! machine ([`DEADLINE`]), and a failure that names what did not happen.
//!
//! The async form sleeps on tokio's clock, so a test on the paused clock (`start_paused`)
//! polls in virtual time: each sleep lets every other task run first, and the deadline is
//! virtual too.
//!
//! `what` is anything [`Display`](fmt::Display): a `&str`, or a [`describe`] that tells the
//! state of things only when the wait fails (what was received, what the child printed).
//!
//! Tests of state shared between servers run real servers we did not write, each started by
//! the test on a loopback port of its own and stopped when dropped: [`redis::RedisServer`]
//! and [`haproxy::Haproxy`] (round robin, no affinity). Both programs must be installed;
//! `scripts/test` installs them (apt-get) when it can.

use std::fmt;
use std::future::Future;
use std::process::Output;
use std::time::Duration;

mod child;
pub mod haproxy;
pub mod redis;

/// How long a condition is waited for before the test fails: far longer than anything takes
/// on an idle machine, so that only a real failure reaches it.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// The first pause between two checks; it doubles up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(5);
/// The longest pause between two checks.
const MAX_PAUSE: Duration = Duration::from_millis(200);

/// Checks `check` until it gives `Some`, and returns that; panics naming `what` once
/// [`DEADLINE`] has passed (on tokio's clock).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let mut n = 0;
/// let got = mcpwire_testkit::eventually("the third try", || {
///     n += 1;
///     std::future::ready((n == 3).then_some(n))
/// })
/// .await;
/// assert_eq!(got, 3);
/// # }
/// ```
pub async fn eventually<T, F, Fut>(what: impl fmt::Display, check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    eventually_within(DEADLINE, what, check).await
}

/// [`eventually`] with another deadline (for a test that waits on purpose for something
/// known to take long, say a lease of 30 s on the paused clock).
pub async fn eventually_within<T, F, Fut>(deadline: Duration, what: impl fmt::Display, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let end = tokio::time::Instant::now() + deadline;
    let mut pause = FIRST_PAUSE;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        let now = tokio::time::Instant::now();
        if now >= end {
            panic!("{what}: did not happen within {deadline:?}");
        }
        tokio::time::sleep(pause.min(end - now)).await;
        pause = (pause * 2).min(MAX_PAUSE);
    }
}

/// [`eventually`] for a test without a runtime: checks `check` until it gives `Some`,
/// sleeping the thread in between; panics naming `what` after [`DEADLINE`].
pub fn eventually_blocking<T>(what: impl fmt::Display, check: impl FnMut() -> Option<T>) -> T {
    eventually_blocking_within(DEADLINE, what, check)
}

/// [`eventually_blocking`] with another deadline (for a child process that may first
/// download what it runs, say).
pub fn eventually_blocking_within<T>(
    deadline: Duration,
    what: impl fmt::Display,
    mut check: impl FnMut() -> Option<T>,
) -> T {
    let end = std::time::Instant::now() + deadline;
    let mut pause = FIRST_PAUSE;
    loop {
        if let Some(value) = check() {
            return value;
        }
        let now = std::time::Instant::now();
        if now >= end {
            panic!("{what}: did not happen within {deadline:?}");
        }
        std::thread::sleep(pause.min(end - now));
        pause = (pause * 2).min(MAX_PAUSE);
    }
}

/// A `what` written only when it is shown, that is when the wait failed: it can tell the
/// state of things at that moment.
///
/// ```
/// let seen = std::cell::RefCell::new(vec!["a"]);
/// let what = mcpwire_testkit::describe(|f| write!(f, "a `b` among {:?}", seen.borrow()));
/// assert_eq!(what.to_string(), r#"a `b` among ["a"]"#);
/// ```
pub fn describe<F: Fn(&mut fmt::Formatter<'_>) -> fmt::Result>(write: F) -> impl fmt::Display {
    struct Describe<F>(F);
    impl<F: Fn(&mut fmt::Formatter<'_>) -> fmt::Result> fmt::Display for Describe<F> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            (self.0)(f)
        }
    }
    Describe(write)
}

/// Runs `command` to its end with stdout and stderr captured (read on threads, so that a
/// chatty child cannot block on a full pipe) and stdin empty; panics naming `what` if it
/// outlives `deadline`, after killing and reaping it (so does a test that fails meanwhile).
pub fn output_within(command: &mut std::process::Command, deadline: Duration, what: impl fmt::Display) -> Output {
    use std::io::Read;
    use std::process::Stdio;

    /// The child, killed and reaped when dropped.
    struct Reaped(std::process::Child);
    impl Drop for Reaped {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let mut child = Reaped(child);
    let read = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = read(child.0.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = read(child.0.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let status = eventually_blocking_within(deadline, &what, || child.0.try_wait().expect("wait for the child"));
    Output { status, stdout: stdout.join().unwrap_or_default(), stderr: stderr.join().unwrap_or_default() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn waits_in_virtual_time_and_returns_the_value() {
        let start = tokio::time::Instant::now();
        let mut tries = 0;
        let got = eventually("ten tries", || {
            tries += 1;
            std::future::ready((tries == 10).then_some(tries))
        })
        .await;
        assert_eq!(got, 10);
        // 5 + 10 + ... + 200 ms of pauses, all virtual.
        assert!(tokio::time::Instant::now() - start < Duration::from_secs(2));
    }

    #[tokio::test(start_paused = true)]
    #[should_panic(expected = "never: did not happen within 60s")]
    async fn fails_naming_what_did_not_happen() {
        eventually("never", || std::future::ready(None::<()>)).await;
    }

    #[test]
    fn blocking_form_returns_at_once_when_true() {
        assert_eq!(eventually_blocking("at once", || Some(7)), 7);
    }

    #[test]
    #[should_panic(expected = "nothing in [1, 2]: did not happen within 20ms")]
    fn a_description_tells_the_state_when_the_wait_fails() {
        let seen = std::cell::RefCell::new(vec![1]);
        let what = describe(|f| write!(f, "nothing in {:?}", seen.borrow()));
        eventually_blocking_within(Duration::from_millis(20), what, || {
            if seen.borrow().len() < 2 {
                seen.borrow_mut().push(2);
            }
            None::<()>
        });
    }
}
