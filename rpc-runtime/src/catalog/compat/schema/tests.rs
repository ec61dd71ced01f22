use serde_json::json;

use super::*;

/// Findings of `narrow` against `wide`, both in `doc`.
fn lost(doc: &Value, narrow: &Value, wide: &Value) -> Vec<Finding> {
    excess((Doc::new(doc), narrow), (Doc::new(doc), wide), true)
}

#[test]
fn a_recursive_type_compares_with_itself_and_a_renamed_copy() {
    let old = json!({"components": {"schemas": {
        "List": {"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#/components/schemas/List"}, {"type": "null"}]}}}
    }}});
    let new = json!({"components": {"schemas": {
        "Chain": {"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#/components/schemas/Chain"}, {"type": "null"}]}}}
    }}});
    let (old_ref, new_ref) =
        (json!({"$ref": "#/components/schemas/List"}), json!({"$ref": "#/components/schemas/Chain"}));
    assert_eq!(lost(&old, &old_ref, &old_ref), []);
    assert_eq!(excess((Doc::new(&old), &old_ref), (Doc::new(&new), &new_ref), true), []);
    assert_eq!(excess((Doc::new(&new), &new_ref), (Doc::new(&old), &old_ref), false), []);
}

#[test]
fn a_change_deep_in_a_recursive_type_is_found() {
    let doc = json!({"components": {"schemas": {
        "A": {"type": "object", "properties": {"next": {"$ref": "#/components/schemas/A"}, "n": {"type": "integer"}}},
        "B": {"type": "object", "properties": {"next": {"$ref": "#/components/schemas/B"}, "n": {"type": "string"}}}
    }}});
    let found = lost(&doc, &json!({"$ref": "#/components/schemas/A"}), &json!({"$ref": "#/components/schemas/B"}));
    assert_eq!(found[0].what, What::Values("integers".into()));
    assert_eq!((found[0].path.as_str(), found[0].component.as_deref()), ("/properties/n", Some("B")));
}

#[test]
fn references_are_percent_and_pointer_decoded() {
    let doc = json!({"components": {"schemas": {"Pair<A/B>": {"type": "string"}}}});
    let reference = json!({"$ref": "#/components/schemas/Pair%3CA~1B%3E"});
    assert_eq!(lost(&doc, &reference, &json!({"type": "string"})), []);
    let found = lost(&doc, &reference, &json!({"type": "integer"}));
    assert_eq!(found[0].component.as_deref(), Some("Pair<A/B>"));
    assert_eq!(found[0].what, What::Values("strings".into()));
    let dangling = lost(&doc, &json!({"$ref": "#/components/schemas/Missing"}), &json!({"type": "string"}));
    assert!(matches!(&dangling[0].what, What::Unsupported(why) if why.contains("Missing")), "{dangling:?}");
}

#[test]
fn deep_nesting_is_reported_not_followed() {
    let mut deep = json!({"type": "string"});
    for _ in 0..200 {
        deep = json!({"type": "array", "items": deep});
    }
    let found = lost(&json!({}), &deep, &json!({"type": "array", "items": {"type": "array"}}));
    assert_eq!(found, []);
    let found = lost(&json!({}), &deep, &deep.clone());
    assert!(
        matches!(&found[..], [Finding { what: What::Unsupported(why), .. }] if why.contains("nesting")),
        "{found:?}"
    );
}

#[test]
fn unions_of_unions_are_compared_in_bounded_time() {
    let mut wide = json!({"type": "integer"});
    let mut narrow = json!({"type": "string"});
    for _ in 0..10 {
        wide = json!({"anyOf": [wide.clone(), {"type": "array", "items": wide.clone()}, {"type": "array", "items": wide}]});
        narrow = json!({"type": "array", "items": narrow});
    }
    // Nested arrays of strings fit no branch: found, in bounded time
    // (a step budget stops worse inputs).
    let found = lost(&json!({}), &narrow, &wide);
    assert!(!found.is_empty());
}

#[test]
fn a_schema_past_the_step_budget_is_reported() {
    let properties: Map<String, Value> =
        (0..MAX_STEPS + 1).map(|i| (format!("p{i}"), json!({"type": "integer"}))).collect();
    let object = json!({"type": "object", "properties": properties});
    let found = lost(&json!({}), &object, &object.clone());
    assert!(matches!(&found[..], [Finding { what: What::Unsupported(why), .. }] if why.contains("steps")), "{found:?}");
}

#[test]
fn integer_formats_bound_ranges() {
    let doc = json!({});
    let found =
        lost(&doc, &json!({"type": "integer", "format": "uint16"}), &json!({"type": "integer", "format": "uint8"}));
    assert_eq!(found[0].what, What::Values("integers above 255".into()));
    let found = lost(&doc, &json!({"type": "integer", "format": "uint8"}), &json!({"type": "integer", "minimum": 1}));
    assert_eq!(found[0].what, What::Values("integers below 1".into()));
    let found =
        lost(&doc, &json!({"type": "number", "maximum": 10}), &json!({"type": "number", "exclusiveMaximum": 10}));
    assert_eq!(found[0].what, What::Values("numbers of 10 or more".into()));
}

#[test]
fn a_type_list_may_spread_over_union_branches() {
    let doc = json!({});
    let narrow = json!({"type": ["string", "null"]});
    assert_eq!(lost(&doc, &narrow, &json!({"anyOf": [{"type": "null"}, {"type": "string"}]})), []);
    let found = lost(&doc, &narrow, &json!({"anyOf": [{"type": "boolean"}, {"type": "string"}]}));
    assert_eq!(found[0].what, What::Values("`null`".into()));
}
