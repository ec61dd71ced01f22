//! The exact -32602 messages for params that fail to decode: they name the
//! parameter (or the whole params) and the method, drop serde's position
//! in the parameter's own slice, and add the declared type when serde does
//! not say what it expected.

use std::net::IpAddr;

use rpc_runtime::{Context, Limits, dispatch::Engine, rpc};

#[rpc]
trait Api {
    fn add(&self, a: i64, b: i64) -> i64;
    fn ping(&self, host: IpAddr) -> bool;
    #[rpc(whole_params)]
    fn sum(&self, numbers: Vec<i64>) -> i64;
}

struct Service;

impl Api for Service {
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
    fn ping(&self, _host: IpAddr) -> bool {
        true
    }
    fn sum(&self, numbers: Vec<i64>) -> i64 {
        numbers.iter().sum()
    }
}

fn error_message(request: &str) -> String {
    let engine = Engine::new(Service.into_rpc(), Limits::default());
    let mut out = Vec::new();
    assert!(engine.process(request.as_bytes(), &Context::default(), &mut out).is_none());
    let response: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(response["error"]["code"], -32602, "{response}");
    response["error"]["message"].as_str().unwrap().to_owned()
}

#[test]
fn a_wrong_type_names_the_parameter_and_the_method() {
    assert_eq!(
        error_message(r#"{"jsonrpc":"2.0","method":"add","params":[1,"two"],"id":1}"#),
        r#"invalid parameter `b` of method `add`: invalid type: string "two", expected i64"#
    );
}

#[test]
fn the_declared_type_is_added_when_serde_does_not_say_what_it_expected() {
    assert_eq!(
        error_message(r#"{"jsonrpc":"2.0","method":"ping","params":{"host":"not an address"},"id":1}"#),
        "invalid parameter `host` of method `ping`: invalid IP address syntax (expected IpAddr)"
    );
}

#[test]
fn whole_params_are_named_as_params() {
    assert_eq!(
        error_message(r#"{"jsonrpc":"2.0","method":"sum","params":[1,"x"],"id":1}"#),
        r#"invalid params of method `sum`: invalid type: string "x", expected i64"#
    );
}
