//! Properties over generated documents in the JSON Schema subset the
//! catalog emits (recursive components included): a document compared
//! with itself, or with a copy whose components are renamed, reports
//! nothing; widening params to any value never breaks; any two documents
//! compare without a panic, one line per change naming its method.

use proptest::prelude::*;
use rpc_runtime::catalog::compat::{compare, Verdict};
use serde_json::{json, Map, Value};

use super::corpus::rename_refs;
use super::{catalog, BASES};

/// How many components a generated document has (`C0`, `C1`, ...).
const COMPONENTS: usize = 3;

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(96);
    // No regression file: proptest would file this module's seeds under
    // `tests/tests/proptest-regressions/properties.txt`, the file of the
    // other `properties` module (`api::properties`). A failure prints its shrunk document.
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(vec!["int8", "uint8", "int32", "uint32", "int64", "uint64"])
            .prop_map(|format| json!({"type": "integer", "format": format})),
        Just(json!({"type": "string"})),
        Just(json!({"type": ["string", "null"]})),
        Just(json!({"type": "boolean"})),
        Just(json!({"type": "null"})),
        Just(json!(true)),
        (-5i64..5, 5i64..50).prop_map(|(min, max)| json!({"type": "number", "minimum": min, "maximum": max})),
        prop::collection::vec("[a-c]{1,3}", 1..4).prop_map(|values| json!({"type": "string", "enum": values})),
        (0..COMPONENTS).prop_map(|index| json!({"$ref": format!("#/components/schemas/C{index}")})),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            (prop::collection::btree_map("[a-d]", inner.clone(), 0..4), any::<u8>(), any::<bool>()).prop_map(
                |(properties, required_bits, closed)| {
                    let required: Vec<&String> = properties
                        .keys()
                        .enumerate()
                        .filter(|(i, _)| required_bits & (1 << i) != 0)
                        .map(|(_, k)| k)
                        .collect();
                    let mut object = json!({"type": "object", "properties": properties, "required": required});
                    if closed {
                        object["additionalProperties"] = json!(false);
                    }
                    object
                }
            ),
            inner.clone().prop_map(|items| json!({"type": "array", "items": items})),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|items| {
                let len = items.len();
                json!({"type": "array", "items": items, "minItems": len, "maxItems": len})
            }),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|branches| json!({"anyOf": branches})),
            inner.prop_map(|schema| json!({"anyOf": [schema, {"type": "null"}]})),
        ]
    })
}

fn method(index: usize) -> impl Strategy<Value = Value> {
    let params = prop::collection::vec((schema(), any::<bool>()), 0..4);
    let structure = prop::sample::select(vec!["either", "by-name", "by-position"]);
    (params, prop::option::of(schema()), structure, any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
        move |(params, result, structure, allow_extra, whole, deprecated)| {
            let params: Vec<Value> = params
                .into_iter()
                .enumerate()
                .map(|(i, (schema, required))| json!({"name": format!("p{i}"), "required": required, "schema": schema}))
                .collect();
            let whole = whole && params.len() == 1;
            let mut method = json!({"name": format!("m{index}"), "params": params, "paramStructure": structure});
            if let Some(result) = result {
                method["result"] = json!({"name": "result", "required": true, "schema": result});
            }
            for (key, on) in
                [("x-allow-extra-params", allow_extra), ("x-whole-params", whole), ("deprecated", deprecated)]
            {
                if on {
                    method[key] = json!(true);
                }
            }
            method
        },
    )
}

fn document() -> impl Strategy<Value = Value> {
    let methods = (1usize..4).prop_flat_map(|count| (0..count).map(method).collect::<Vec<_>>());
    (methods, prop::collection::vec(schema(), COMPONENTS)).prop_map(|(methods, components)| {
        // A component that is only a `$ref` may name itself, which no
        // generator emits and no validator can follow.
        let schemas: Map<String, Value> = components
            .into_iter()
            .enumerate()
            .map(|(index, schema)| {
                let schema =
                    if schema.get("$ref").is_some() { json!({"type": "array", "items": schema}) } else { schema };
                (format!("C{index}"), schema)
            })
            .collect();
        json!({
            "openrpc": "1.3.2",
            "info": {"title": "Generated", "version": "1.0.0"},
            "methods": methods,
            "components": {"schemas": schemas}
        })
    })
}

/// The same document with every component under another name.
fn renamed(doc: &Value) -> Value {
    let mut copy = doc.clone();
    let names: Vec<String> =
        copy["components"]["schemas"].as_object().map(|schemas| schemas.keys().cloned().collect()).unwrap_or_default();
    for name in names {
        let new = format!("Renamed{name}");
        let schemas = copy["components"]["schemas"].as_object_mut().expect("components");
        if let Some(schema) = schemas.remove(&name) {
            schemas.insert(new.clone(), schema);
        }
        rename_refs(&mut copy, &format!("#/components/schemas/{name}"), &format!("#/components/schemas/{new}"));
    }
    copy
}

#[test]
fn a_document_compared_with_itself_reports_nothing() {
    proptest!(config(), |(doc in document())| {
        let report = compare(&doc, &doc).expect("a valid document");
        prop_assert!(report.is_empty(), "{}\n{}", report, doc);
    });
}

#[test]
fn renamed_components_report_nothing() {
    proptest!(config(), |(doc in document())| {
        let report = compare(&doc, &renamed(&doc)).expect("valid documents");
        prop_assert!(report.is_empty(), "{}\n{}", report, doc);
    });
}

#[test]
fn real_catalogs_with_renamed_components_report_nothing() {
    for base in BASES {
        let doc = catalog(base);
        let report = compare(&doc, &renamed(&doc)).expect("valid documents");
        assert!(report.is_empty(), "{base}:\n{report}");
    }
}

#[test]
fn params_widened_to_any_value_never_break() {
    proptest!(config(), |(doc in document())| {
        let mut wide = doc.clone();
        for method in wide["methods"].as_array_mut().expect("methods") {
            for param in method["params"].as_array_mut().expect("params") {
                param["schema"] = json!(true);
            }
        }
        let report = compare(&doc, &wide).expect("valid documents");
        prop_assert!(!report.is_breaking(), "{}\n{}", report, doc);
    });
}

#[test]
fn any_two_documents_compare_one_line_per_change() {
    proptest!(config(), |(old in document(), new in document())| {
        let report = compare(&old, &new).expect("valid documents");
        for change in report.changes() {
            let line = change.to_string();
            let prefix = format!("{}: {}", change.verdict, change.method);
            prop_assert!(line.starts_with(&prefix) && !line.contains('\n'), "{:?}", line);
        }
        // Swapping the documents keeps every method removed one way added
        // the other way.
        let back = compare(&new, &old).expect("valid documents");
        let removed = report.changes().iter().filter(|c| c.reason.starts_with("method removed")).count();
        let added = back.changes().iter().filter(|c| c.verdict == Verdict::Compatible && c.reason == "method added").count();
        prop_assert_eq!(removed, added);
    });
}

/// Any JSON value, small.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |x| x.is_finite()).prop_map(Value::from),
        prop::sample::select(vec![
            "type",
            "integer",
            "object",
            "$ref",
            "#/components/schemas/C0",
            "p0",
            "1.3.2",
            "by-name"
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        let keys = prop::sample::select(vec![
            "type",
            "enum",
            "anyOf",
            "items",
            "properties",
            "required",
            "$ref",
            "minimum",
            "name",
            "schema",
            "params",
            "result",
            "not",
            "additionalProperties",
            "x-whole-params",
            "paramStructure",
        ]);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(keys, inner, 0..5)
                .prop_map(|members| Value::Object(members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

#[test]
fn arbitrary_json_never_panics() {
    proptest!(config(), |(old in any_json(), new in any_json(), doc in document(), params in any_json(), schema in any_json())| {
        let _ = compare(&old, &new);
        // Valid frames with arbitrary insides: params, schemas, components.
        let mut odd = doc.clone();
        odd["methods"][0]["params"] = params;
        odd["components"]["schemas"]["C0"] = schema.clone();
        if let Some(result) = odd["methods"][0].get_mut("result") {
            result["schema"] = schema;
        }
        let _ = compare(&doc, &odd);
        let _ = compare(&odd, &doc);
        let _ = compare(&odd, &odd);
    });
}
