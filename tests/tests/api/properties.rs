//! Property tests over a real byte stream (an in-process server on a
//! `tokio::io::duplex` pipe), in both framings:
//!
//! - any JSON value round-trips through `echo` byte for byte;
//! - any valid id (strings with escapes and any Unicode, integers of any
//!   size, fractions and exponents, `null`) is echoed byte for byte;
//! - a stream of framed messages split at arbitrary points reads as the
//!   same messages, both by `FrameReader` and by a server.
//!
//! The generators write JSON text themselves (rather than serializing
//! values) so that escapes, number spellings and inner whitespace vary as
//! a hand-written client's would. Whitespace is spaces and tabs only: a
//! raw line break would be blanked by newline-delimited framing.

use crate::common;

use std::sync::OnceLock;

use common::{result, serve_in_process, Wire};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use rpc_runtime::serde_json::value::RawValue;
use rpc_runtime::{
    rpc,
    wire::{Frame, FrameReader},
    Server,
};
use tokio::io::{AsyncWriteExt, BufReader};

#[rpc]
trait Echo {
    /// Returns its argument, byte for byte.
    fn echo(&self, value: Box<RawValue>) -> Box<RawValue>;
    /// The same, answered from a task.
    async fn echo_later(&self, value: Box<RawValue>) -> Box<RawValue>;
}

struct Service;

impl Echo for Service {
    fn echo(&self, value: Box<RawValue>) -> Box<RawValue> {
        value
    }
    async fn echo_later(&self, value: Box<RawValue>) -> Box<RawValue> {
        tokio::task::yield_now().await;
        value
    }
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap())
}

/// 96 cases per property (about a second in all); `PROPTEST_CASES=N` for
/// a longer run.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(96);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

fn request(method: &str, params: &str, id: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":[{params}],"id":{id}}}"#)
}

// ---------------------------------------------------------------------------
// Generators of JSON text.

/// Optional insignificant whitespace.
fn blank() -> impl Strategy<Value = &'static str> {
    prop_oneof![4 => Just(""), 1 => Just(" "), 1 => Just("\t "), 1 => Just("  ")]
}

/// One piece of a string's contents: a character as it is, or escaped in
/// one of the ways JSON allows.
fn string_piece() -> impl Strategy<Value = String> {
    let plain = any::<char>().prop_filter("needs an escape", |c| !matches!(c, '"' | '\\') && *c >= ' ');
    let short = prop::sample::select(vec!["\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"]);
    let unicode = (any::<char>(), any::<bool>()).prop_map(|(c, upper)| {
        let mut units = [0u16; 2];
        c.encode_utf16(&mut units)
            .iter()
            .map(|unit| if upper { format!("\\u{unit:04X}") } else { format!("\\u{unit:04x}") })
            .collect()
    });
    prop_oneof![4 => plain.prop_map(String::from), 1 => short.prop_map(String::from), 1 => unicode]
}

fn json_string() -> impl Strategy<Value = String> {
    prop::collection::vec(string_piece(), 0..12).prop_map(|pieces| format!("\"{}\"", pieces.concat()))
}

fn digits(range: std::ops::Range<usize>) -> impl Strategy<Value = String> {
    prop::collection::vec(0u8..10, range).prop_map(|digits| digits.iter().map(|d| char::from(b'0' + d)).collect())
}

/// An integer as JSON writes it: no leading zeros, any size.
fn json_integer() -> impl Strategy<Value = String> {
    let big = (any::<bool>(), 1u8..10, digits(0..40))
        .prop_map(|(negative, first, rest)| format!("{}{first}{rest}", if negative { "-" } else { "" }));
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        Just("-0".to_owned()),
        big
    ]
}

/// A number with a fraction, an exponent or both.
fn json_fraction() -> impl Strategy<Value = String> {
    let exponent = prop::option::of((prop::sample::select(vec!["e", "E", "e+", "e-", "E-"]), digits(1..4)));
    (json_integer(), prop::option::of(digits(1..20)), exponent)
        .prop_filter("a fraction or an exponent", |(_, fraction, exponent)| fraction.is_some() || exponent.is_some())
        .prop_map(|(int, fraction, exponent)| {
            let fraction = fraction.map(|f| format!(".{f}")).unwrap_or_default();
            let exponent = exponent.map(|(e, d)| format!("{e}{d}")).unwrap_or_default();
            format!("{int}{fraction}{exponent}")
        })
}

/// Any JSON value, as text without surrounding whitespace.
fn json_value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("false".to_owned()),
        json_integer(),
        json_fraction(),
        json_string(),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        let element = (blank(), inner.clone(), blank()).prop_map(|(a, v, b)| format!("{a}{v}{b}"));
        let member =
            (json_string(), blank(), inner, blank()).prop_map(|(key, a, value, b)| format!("{key}{a}:{a}{value}{b}"));
        prop_oneof![
            prop::collection::vec(element, 0..6).prop_map(|items| format!("[{}]", items.join(","))),
            prop::collection::vec(member, 0..6).prop_map(|members| format!("{{{}}}", members.join(","))),
        ]
    })
}

/// A valid request id: a string, a number, or null.
fn json_id() -> impl Strategy<Value = String> {
    prop_oneof![3 => json_string(), 2 => json_integer(), 2 => json_fraction(), 1 => Just("null".to_owned())]
}

fn wire() -> impl Strategy<Value = Wire> {
    prop::sample::select(Wire::BOTH.to_vec())
}

// ---------------------------------------------------------------------------
// Properties.

#[test]
fn the_generators_write_valid_json() {
    proptest!(config(), |(value in json_value(), id in json_id())| {
        if std::env::var_os("SHOW_SAMPLES").is_some() {
            println!("{value}    id {id}");
        }
        prop_assert!(serde_json::from_str::<&RawValue>(&value).is_ok(), "{}", value);
        prop_assert!(serde_json::from_str::<&RawValue>(&id).is_ok(), "{}", id);
    });
}

#[test]
fn any_json_value_round_trips_through_echo() {
    proptest!(config(), |(wire in wire(), values in prop::collection::vec(json_value(), 1..4))| {
        runtime().block_on(async {
            let (mut conn, _server) = serve_in_process(Server::new(Service.into_rpc()), wire);
            for (i, value) in values.iter().enumerate() {
                for method in ["echo", "echo_later"] {
                    let got = conn.call(request(method, value, &i.to_string())).await;
                    prop_assert_eq!(got, result(value, &i.to_string()), "{:?} {}", wire, method);
                }
            }
            Ok::<_, TestCaseError>(())
        })?;
    });
}

#[test]
fn any_valid_id_is_echoed_byte_for_byte() {
    proptest!(config(), |(wire in wire(), ids in prop::collection::vec(json_id(), 1..6))| {
        runtime().block_on(async {
            let (mut conn, _server) = serve_in_process(Server::new(Service.into_rpc()), wire);
            for id in &ids {
                prop_assert_eq!(conn.call(request("echo", "7", id)).await, result("7", id), "{:?}", wire);
                prop_assert_eq!(conn.call(request("echo_later", "7", id)).await, result("7", id), "{:?}", wire);
                let batch = format!("[{},{}]", request("echo", "1", id), request("echo_later", "2", id));
                let expected = format!("[{},{}]", result("1", id), result("2", id));
                prop_assert_eq!(conn.call(batch).await, expected, "{:?}", wire);
            }
            Ok::<_, TestCaseError>(())
        })?;
    });
}

/// Requests, and the answer each gets.
fn exchanges() -> impl Strategy<Value = Vec<(String, String)>> {
    let exchange =
        (json_value(), json_id()).prop_map(|(value, id)| (request("echo", &value, &id), result(&value, &id)));
    prop::collection::vec(exchange, 1..8)
}

/// Cut points in a stream of `len` bytes, from `fractions` of its length.
fn cuts(len: usize, fractions: &[f64]) -> Vec<usize> {
    let mut cuts: Vec<usize> = fractions.iter().map(|f| (f * len as f64) as usize).collect();
    cuts.push(len);
    cuts.sort_unstable();
    cuts
}

#[test]
fn a_stream_split_anywhere_reads_as_the_same_messages() {
    let fractions = prop::collection::vec(0.0..1.0f64, 0..24);
    proptest!(config(), |(wire in wire(), exchanges in exchanges(), fractions in fractions)| {
        let mut stream = Vec::new();
        for (message, _) in &exchanges {
            stream.extend(wire.encode(message.as_bytes()));
        }
        let cuts = cuts(stream.len(), &fractions);
        runtime().block_on(async {
            // Through `FrameReader`, written in pieces into a pipe.
            let (mut writer, reader) = tokio::io::duplex(64);
            let pieces = stream.clone();
            let cut_at = cuts.clone();
            let write = tokio::spawn(async move {
                let mut start = 0;
                for end in cut_at {
                    writer.write_all(&pieces[start..end]).await.unwrap();
                    writer.flush().await.unwrap();
                    tokio::task::yield_now().await;
                    start = end;
                }
            });
            let mut frames = FrameReader::new(reader, wire.framing(), 1 << 20);
            for (message, _) in &exchanges {
                let frame = frames.next_frame().await.unwrap();
                prop_assert_eq!(frame, Some(Frame::Message(message.clone().into_bytes())), "{:?}", wire);
            }
            write.await.unwrap();
            prop_assert_eq!(frames.next_frame().await.unwrap(), None);

            // Through a server: each request answered, in order.
            let (client, server_end) = tokio::io::duplex(64);
            let (server_read, server_write) = tokio::io::split(server_end);
            let server = Server::new(Service.into_rpc()).framing(wire.framing());
            let serve = tokio::spawn(async move {
                server.serve(rpc_runtime::transport::stream::Stream::new(server_read, server_write).context(rpc_runtime::Context::default())).await
            });
            let (client_read, mut client_write) = tokio::io::split(client);
            let write = tokio::spawn(async move {
                let mut start = 0;
                for end in cuts {
                    client_write.write_all(&stream[start..end]).await.unwrap();
                    client_write.flush().await.unwrap();
                    tokio::task::yield_now().await;
                    start = end;
                }
                client_write.shutdown().await.unwrap();
            });
            let mut answers = BufReader::new(client_read);
            for (_, expected) in &exchanges {
                let answer = wire.read_frame(&mut answers).await.unwrap().map(String::from_utf8);
                prop_assert_eq!(answer, Some(Ok(expected.clone())), "{:?}", wire);
            }
            prop_assert_eq!(wire.read_frame(&mut answers).await.unwrap(), None, "nothing more");
            write.await.unwrap();
            serve.await.unwrap().unwrap();
            Ok::<_, TestCaseError>(())
        })?;
    });
}
