//! `Haproxy`: round robin per request over real backends, and no call lost when one dies.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use mcpwire_testkit::haproxy::Haproxy;

/// A tiny HTTP server on a thread: every request is answered `200 OK` with its name as the
/// body, then the connection is closed. Stopping it closes its listener, so that connections
/// to its address are refused, as to a killed server.
struct Backend {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Backend {
    /// Listens on `addr` (`127.0.0.1:0` for a free port, or the address of a stopped backend).
    fn start(name: &'static str, addr: SocketAddr) -> Backend {
        let listener = TcpListener::bind(addr).expect("bind a backend");
        let addr = listener.local_addr().unwrap();
        // Non-blocking, polled: the thread sees `stop` within a few ms and drops the listener.
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        std::thread::spawn(move || answer(name, stream));
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(e) => panic!("backend {name}: accept: {e}"),
                }
            }
        });
        Backend { addr, stop, thread: Some(thread) }
    }

    /// Closes its listener and waits until it is closed.
    fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.join().expect("the backend's thread");
        }
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Reads one request's head (a health check sends none and closes) and answers with `name`.
fn answer(name: &str, stream: TcpStream) {
    stream.set_nonblocking(false).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) if line == "\r\n" => break,
            Ok(_) => {}
        }
    }
    let response = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{name}",
        name.len()
    );
    let _ = reader.get_mut().write_all(response.as_bytes());
}

/// Sends `GET /` on `stream` and reads the answer (by its Content-Length, so that the
/// connection can carry the next request); returns the status line and the body.
fn get(stream: &mut BufReader<TcpStream>, close: bool) -> (String, String) {
    let connection = if close { "close" } else { "keep-alive" };
    let request = format!("GET / HTTP/1.1\r\nHost: test\r\nConnection: {connection}\r\n\r\n");
    stream.get_mut().write_all(request.as_bytes()).expect("send a request");
    let mut status = String::new();
    stream.read_line(&mut status).expect("read the status line");
    let mut length = 0;
    loop {
        let mut line = String::new();
        stream.read_line(&mut line).expect("read a header");
        if line == "\r\n" || line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().expect("a Content-Length");
            }
        }
    }
    let mut body = vec![0; length];
    stream.read_exact(&mut body).expect("read the body");
    (status.trim_end().to_owned(), String::from_utf8(body).expect("a UTF-8 body"))
}

fn connect(proxy: &Haproxy) -> BufReader<TcpStream> {
    let stream = TcpStream::connect(proxy.addr()).expect("connect to haproxy");
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    BufReader::new(stream)
}

#[test]
fn balances_each_request_and_loses_none_when_a_backend_dies() {
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let mut a = Backend::start("backend-a", any);
    let b = Backend::start("backend-b", any);
    let proxy = Haproxy::start(&[a.addr, b.addr]);
    assert_eq!(proxy.url("/mcp"), format!("http://127.0.0.1:{}/mcp", proxy.addr().port()));

    // Ten requests on ONE client connection: balanced one by one, so both backends answer.
    let mut connection = connect(&proxy);
    let mut answered = Vec::new();
    for _ in 0..10 {
        let (status, body) = get(&mut connection, false);
        assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
        answered.push(body);
    }
    for name in ["backend-a", "backend-b"] {
        assert!(answered.iter().any(|b| b == name), "{name} never answered: {answered:?}");
    }

    // One backend dies: the next requests, sent at once (before any health check could see
    // it), are all answered by the other, its refused connections being redispatched.
    a.stop();
    for i in 0..5 {
        let (status, body) = get(&mut connect(&proxy), true);
        assert_eq!(status, "HTTP/1.1 200 OK", "request {i} after the stop: {body}");
        assert_eq!(body, "backend-b", "request {i} after the stop");
    }

    // It comes back on the same address: the health checks take it in again.
    let a = Backend::start("backend-a", a.addr);
    mcpwire_testkit::eventually_blocking_within(Duration::from_secs(10), "backend-a answering again", || {
        (get(&mut connect(&proxy), true).1 == "backend-a").then_some(())
    });
    drop((a, b));
}
