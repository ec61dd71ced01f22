use super::*;
use crate::dispatch::params::Params;
use crate::dispatch::router::MethodOutcome;
use crate::spec::{MethodSpec, ParamSpec};

static ADD_PARAMS: [ParamSpec; 2] = [ParamSpec::new("a", "i64"), ParamSpec::new("b", "i64")];
static ADD: MethodSpec = MethodSpec::new("add", &ADD_PARAMS);
static BOOM: MethodSpec = MethodSpec::new("boom", &[]);
static FAIL: MethodSpec = MethodSpec::new("fail", &[]);
static LATER: MethodSpec = MethodSpec::new("later", &[]);
static OLD: MethodSpec = MethodSpec::new("old", &ADD_PARAMS);

/// Methods of every kind and outcome: a direct handler that writes,
/// fails, panics or waits, and one added with `Router::register`.
fn every_outcome() -> Engine {
    let mut router = Router::new();
    let add = |params: &Params<'_>, _: &Context, out: &mut Vec<u8>| {
        let (a, b): (i64, i64) = (params.decode(0)?, params.decode(1)?);
        out.extend_from_slice(a.wrapping_add(b).to_string().as_bytes());
        Ok(None)
    };
    router.register_direct(&ADD, Box::new(add)).unwrap();
    router.register_direct(&BOOM, Box::new(|_, _, _| panic!("boom"))).unwrap();
    let fail = |_: &Params<'_>, _: &Context, _: &mut Vec<u8>| Err(ErrorObject::new(-32001, "refused"));
    router.register_direct(&FAIL, Box::new(fail)).unwrap();
    let later = |_: &Params<'_>, _: &Context, _: &mut Vec<u8>| {
        let future: MethodFuture = Box::pin(async { crate::dispatch::router::encode(&"done") });
        Ok(Some(future))
    };
    router.register_direct(&LATER, Box::new(later)).unwrap();
    router
        .register(&OLD, |params, _| {
            let (a, b): (i64, i64) = (params.decode(0)?, params.decode(1)?);
            Ok(MethodOutcome::Ready(crate::dispatch::router::encode(&(a - b))))
        })
        .unwrap();
    Engine::new(router, Limits::default())
}

fn answer(engine: &Engine, message: &str) -> Vec<u8> {
    let mut out = Vec::new();
    match engine.process(message.as_bytes(), &Context::default(), &mut out) {
        Some(pending) => tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(pending.run()),
        None => out,
    }
}

/// A call made directly answers every request byte for byte as one
/// made inside its span (a subscriber takes `DEBUG`) and one made
/// through a layer, with every feature set (metrics included).
#[test]
fn every_path_of_a_call_answers_alike() {
    let engine = every_outcome();
    // No other test of this crate installs a subscriber.
    assert!(!super::super::span::enabled());
    let messages = [
        r#"{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}"#,
        r#"{"jsonrpc":"2.0","method":"add","params":{"a":1,"b":2},"id":"x"}"#,
        r#"{"jsonrpc":"2.0","method":"add","params":[1,2]}"#,
        r#"{"jsonrpc":"2.0","method":"add","params":[1],"id":null}"#,
        r#"{"jsonrpc":"2.0","method":"add","params":[1,"2"],"id":2}"#,
        r#"{"jsonrpc":"2.0","method":"add","params":7,"id":3}"#,
        r#"{"jsonrpc":"2.0","method":"\u0061dd","params":[1,2],"id":4}"#,
        r#"{"jsonrpc":"2.0","method":"boom","id":5}"#,
        r#"{"jsonrpc":"2.0","method":"fail","id":6}"#,
        r#"{"jsonrpc":"2.0","method":"fail"}"#,
        r#"{"jsonrpc":"2.0","method":"later","id":7}"#,
        r#"{"jsonrpc":"2.0","method":"old","params":[5,2],"id":8}"#,
        r#"{"jsonrpc":"2.0","method":"nope","id":9}"#,
        r#"{"jsonrpc":"2.0","method":"nope"}"#,
        r#"{"jsonrpc":"2.0","method":"rpc.discover","id":10}"#,
        r#"{"jsonrpc":"1.0","method":"add","params":[1,2],"id":11}"#,
        r#"{"method":"add","params":[1,2],"id":12}"#,
        r#"{"jsonrpc":"2.0","method":"add","params":[1,2],"id":[13]}"#,
        r#"{"jsonrpc":"2.0","method":1,"id":14}"#,
        r#"[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":15},{"jsonrpc":"2.0","method":"later","id":16}]"#,
    ];
    let answers =
        |engine: &Engine| -> Vec<Vec<u8>> { messages.iter().map(|message| answer(engine, message)).collect() };
    let direct = answers(&engine);
    let subscriber =
        tracing_subscriber::fmt().with_max_level(tracing::Level::DEBUG).with_writer(std::io::sink).finish();
    let observed = tracing::subscriber::with_default(subscriber, || {
        assert!(super::super::span::enabled());
        answers(&engine)
    });
    let layered = answers(&every_outcome().layer(tower_layer::Identity::new()));
    for (path, answers) in [("inside its span", &observed), ("through a layer", &layered)] {
        for ((message, direct), other) in messages.iter().zip(&direct).zip(answers) {
            let (direct, other) = (String::from_utf8_lossy(direct), String::from_utf8_lossy(other));
            assert_eq!(direct, other, "{message}, directly and {path}");
        }
    }
    assert_eq!(direct[0], br#"{"jsonrpc":"2.0","result":3,"id":1}"#);
    assert_eq!(direct[6], br#"{"jsonrpc":"2.0","result":3,"id":4}"#, "an escaped name is read");
    assert!(direct[2].is_empty() && direct[9].is_empty() && direct[13].is_empty());
}
