//! `RedisServer`: a real redis-server that answers, is lost, and comes back empty.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use mcpwire_testkit::redis::RedisServer;

/// Sends one inline command to the server on `port` on a new connection and returns the first
/// line of its answer (with its `\r\n`).
fn command(port: u16, line: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.write_all(format!("{line}\r\n").as_bytes())?;
    let mut answer = Vec::new();
    let mut byte = [0u8; 1];
    // Byte by byte up to the end of the first line: answers here are a few bytes long.
    while !answer.ends_with(b"\r\n") {
        stream.read_exact(&mut byte)?;
        answer.push(byte[0]);
    }
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

#[test]
fn answers_is_lost_and_comes_back_empty_on_the_same_port() {
    let mut redis = RedisServer::start();
    let port = redis.port();
    assert_eq!(redis.url(), format!("redis://127.0.0.1:{port}"));
    assert_eq!(command(port, "PING").unwrap(), "+PONG\r\n");
    assert_eq!(command(port, "SET key value").unwrap(), "+OK\r\n");

    redis.stop();
    let refused = TcpStream::connect(("127.0.0.1", port)).expect_err("a stopped server refuses connections");
    assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused, "{refused}");

    redis.restart();
    assert_eq!(redis.port(), port, "a restart keeps the port");
    assert_eq!(command(port, "PING").unwrap(), "+PONG\r\n");
    // Nothing is persisted: what was written before the loss is gone.
    assert_eq!(command(port, "GET key").unwrap(), "$-1\r\n");
}

#[test]
fn two_servers_have_ports_of_their_own_and_a_drop_stops_one() {
    let a = RedisServer::start();
    let b = RedisServer::start();
    assert_ne!(a.port(), b.port());
    let port = a.port();
    drop(a);
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err(), "a dropped server is stopped");
    assert_eq!(command(b.port(), "PING").unwrap(), "+PONG\r\n");
}
