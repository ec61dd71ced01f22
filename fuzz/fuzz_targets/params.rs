//! Params decoding: any JSON value as a request's `params`, split against
//! several method specs and decoded into several types. Checks that
//! nothing panics, that errors are -32602 naming a parameter or the
//! params, and that the fast positional and by-name splits find exactly
//! the values serde_json finds.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rpc_runtime::serde_json::value::RawValue;
use rpc_runtime::{dispatch::{MethodSpec, ParamSpec, Params}, wire::INVALID_PARAMS};
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

const fn param(name: &'static str, ty: &'static str, optional: bool) -> ParamSpec {
    ParamSpec::new(name, ty).optional(optional)
}

const fn spec(name: &'static str, params: &'static [ParamSpec], allow_extra: bool, whole: bool) -> MethodSpec {
    MethodSpec::new(name, params).allow_extra(allow_extra).whole(whole)
}

/// Four optional values that take anything: what the split found is
/// compared with serde_json's reading.
static ANY: MethodSpec = spec(
    "any",
    &[param("a", "Value", true), param("b", "Value", true), param("c", "Value", true), param("d", "Value", true)],
    true,
    false,
);
/// Typed, strict parameters (more than fit inline, to take the heap path).
static TYPED: MethodSpec = spec(
    "typed",
    &[
        param("i", "i64", false),
        param("u", "u8", false),
        param("f", "f64", false),
        param("s", "String", false),
        param("o", "Option<String>", true),
        param("v", "Vec<i32>", true),
        param("b", "bool", true),
    ],
    false,
    false,
);
static WHOLE: MethodSpec = spec("whole", &[param("numbers", "Vec<i64>", false)], false, true);

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = serde_json::from_slice::<&RawValue>(data) else { return };
    if !matches!(raw.get().as_bytes()[0], b'[' | b'{') {
        // The engine answers other shapes -32600 before params are split.
        return;
    }
    check_typed(raw);
    // A `Value` cannot hold every valid JSON number (1e400 is out of range).
    let Ok(value) = serde_json::from_str::<Value>(raw.get()) else { return };
    check_split(raw, &value);
    if let Ok(params) = Params::parse(Some(raw), &WHOLE) {
        check_error(params.decode::<Vec<i64>>(0).err());
        assert_eq!(params.decode::<Value>(0).ok().as_ref(), Some(&value));
    }
});

fn check_split(raw: &RawValue, value: &Value) {
    match Params::parse(Some(raw), &ANY) {
        Ok(params) => {
            for (index, spec) in ANY.params.iter().enumerate() {
                let expected = match value {
                    Value::Array(items) => items.get(index).cloned().unwrap_or(Value::Null),
                    Value::Object(map) => map.get(spec.name).cloned().unwrap_or(Value::Null),
                    _ => unreachable!(),
                };
                let got = params.decode::<Value>(index).expect("a Value decodes from any JSON");
                assert_eq!(got, expected, "param {index} of {}", raw.get());
                let text = params.decode::<Box<RawValue>>(index).expect("any JSON is a RawValue");
                assert_eq!(serde_json::from_str::<Value>(text.get()).unwrap(), expected);
            }
        }
        Err(error) => {
            // Only a name given twice is refused (a map keeps one of them).
            assert_eq!(error.code(), INVALID_PARAMS);
            assert!(error.message().contains("given twice"), "{}: {}", raw.get(), error.message());
            assert!(matches!(value, Value::Object(map) if has_duplicate(raw, map)), "{}", raw.get());
        }
    }
}

/// Whether one of `ANY`'s names is a key of `map` more than once in `raw`.
fn has_duplicate(raw: &RawValue, map: &Map<String, Value>) -> bool {
    struct Keys;
    impl<'de> Visitor<'de> for Keys {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Vec<String>, A::Error> {
            let mut keys = Vec::new();
            while let Some(key) = access.next_key::<String>()? {
                access.next_value::<IgnoredAny>()?;
                keys.push(key);
            }
            Ok(keys)
        }
    }
    let keys = serde_json::Deserializer::from_str(raw.get()).deserialize_map(Keys).expect("an object");
    ANY.params.iter().any(|p| map.contains_key(p.name) && keys.iter().filter(|k| *k == p.name).count() > 1)
}

fn check_typed(raw: &RawValue) {
    let params = match Params::parse(Some(raw), &TYPED) {
        Ok(params) => params,
        Err(error) => return check_error(Some(error)),
    };
    check_error(params.decode::<i64>(0).err());
    check_error(params.decode::<u8>(1).err());
    check_error(params.decode::<f64>(2).err());
    check_error(params.decode::<String>(3).err());
    check_error(params.decode::<Option<String>>(4).err());
    check_error(params.decode::<Option<Vec<i32>>>(5).err());
    check_error(params.decode::<Option<bool>>(6).err());
}

fn check_error(error: Option<rpc_runtime::ErrorObject>) {
    if let Some(error) = error {
        assert_eq!(error.code(), INVALID_PARAMS, "{}", error.message());
        assert!(!error.message().is_empty());
    }
}
