//! The request messages of the in-process benchmark cases.

use crate::sample_record;

/// One benchmark case: a name and the message sent.
pub struct Case {
    /// Criterion group name.
    pub name: &'static str,
    /// The request (or batch) bytes.
    pub message: String,
    /// `true` for a batch (jsonrpsee needs it split).
    pub batch: bool,
}

/// Every in-process case, in report order.
pub fn all() -> Vec<Case> {
    let record = serde_json::to_string(&sample_record()).expect("record serializes");
    let batch = (0..10)
        .map(|i| format!(r#"{{"jsonrpc":"2.0","method":"add","params":[{i},{}],"id":{i}}}"#, i * 3))
        .collect::<Vec<_>>()
        .join(",");
    let single = |name, message: String| Case { name, message, batch: false };
    vec![
        single("positional", r#"{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}"#.to_owned()),
        single("named", r#"{"jsonrpc":"2.0","method":"add","params":{"a":40,"b":2},"id":1}"#.to_owned()),
        single("zero_params", r#"{"jsonrpc":"2.0","method":"version","id":1}"#.to_owned()),
        single("echo_1kb", format!(r#"{{"jsonrpc":"2.0","method":"echo","params":[{record}],"id":"req-1"}}"#)),
        Case { name: "batch_10", message: format!("[{batch}]"), batch: true },
        single("unknown_method", r#"{"jsonrpc":"2.0","method":"nope","params":[1,2],"id":1}"#.to_owned()),
        single("invalid_params", r#"{"jsonrpc":"2.0","method":"add","params":["forty",2],"id":1}"#.to_owned()),
    ]
}

/// What a response means, for checking that the three implementations
/// agree before timing them: the result, or the error code, per id.
pub fn meaning(response: &[u8]) -> Vec<(String, Result<serde_json::Value, i64>)> {
    let value: serde_json::Value = serde_json::from_slice(response).expect("responses are JSON");
    let entries = match value {
        serde_json::Value::Array(entries) => entries,
        single => vec![single],
    };
    entries
        .into_iter()
        .map(|entry| {
            let id = entry["id"].to_string();
            let outcome = match entry.get("error") {
                Some(error) => Err(error["code"].as_i64().unwrap_or(0)),
                None => Ok(entry["result"].clone()),
            };
            (id, outcome)
        })
        .collect()
}
