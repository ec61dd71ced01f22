//! Old/new pairs: a real catalog, edited the way a release would change
//! it, one change per case (plus a few combined), each with the verdicts
//! and names the report must show. The edits are JSON Pointer paths in
//! which a method may be named instead of numbered
//! (`/methods/subtract/params/1`).

use rpc_runtime::catalog::compat::{compare, Report, Verdict};
use serde_json::{json, Value};

use super::catalog;

use Verdict::{Breaking, Compatible, Info};

/// One edit of a document.
enum Edit {
    /// Sets the value at the pointer (its parent must exist).
    Set(&'static str, Value),
    /// Removes the value at the pointer.
    Remove(&'static str),
    /// Inserts into an array at the pointer's last segment (an index).
    Insert(&'static str, Value),
    /// Moves an array element from one index to another of the same array.
    Move(&'static str, usize),
    /// Renames a method and adds the old name back as its alias, as
    /// `#[rpc(alias = "...")]` does.
    RenameWithAlias(&'static str, &'static str),
    /// Renames a component, and every `$ref` to it.
    RenameComponent(&'static str, &'static str),
}

/// One pair and what its report must hold.
struct Case {
    name: &'static str,
    base: &'static str,
    /// Applied to both documents (to set up a situation the base lacks).
    both: Vec<Edit>,
    /// Applied to the new document only.
    edits: Vec<Edit>,
    /// The most severe verdict in the report; `None` for no change at all.
    worst: Option<Verdict>,
    /// Changes that must be reported: a verdict and words its line holds.
    expect: Vec<(Verdict, &'static [&'static str])>,
}

fn case(name: &'static str, base: &'static str, edits: Vec<Edit>, worst: Option<Verdict>) -> Case {
    Case { name, base, both: Vec::new(), edits, worst, expect: Vec::new() }
}

impl Case {
    fn both(mut self, edits: Vec<Edit>) -> Self {
        self.both = edits;
        self
    }

    fn expect(mut self, verdict: Verdict, words: &'static [&'static str]) -> Self {
        self.expect.push((verdict, words));
        self
    }
}

/// `/methods/<name>/...` with the name replaced by the method's index.
fn pointer(doc: &Value, path: &str) -> String {
    let mut segments: Vec<String> = path.split('/').map(str::to_owned).collect();
    if segments.len() > 2 && segments[1] == "methods" && segments[2].parse::<usize>().is_err() {
        let name = segments[2].replace("~1", "/").replace("~0", "~");
        let methods = doc["methods"].as_array().expect("methods");
        let index = methods.iter().position(|method| method["name"] == name.as_str());
        segments[2] = index.unwrap_or_else(|| panic!("no method {name}")).to_string();
    }
    segments.join("/")
}

fn parent<'v>(doc: &'v mut Value, path: &str) -> (&'v mut Value, String) {
    let (parent, last) = path.rsplit_once('/').expect("a pointer with a parent");
    let target = doc.pointer_mut(parent).unwrap_or_else(|| panic!("no {parent}"));
    (target, last.replace("~1", "/").replace("~0", "~"))
}

fn apply(doc: &mut Value, edit: &Edit) {
    match edit {
        Edit::Set(path, value) => {
            let path = pointer(doc, path);
            let (target, key) = parent(doc, &path);
            match target {
                Value::Array(items) => items[key.parse::<usize>().expect("an index")] = value.clone(),
                Value::Object(members) => {
                    members.insert(key, value.clone());
                }
                _ => panic!("{path}: not in an array or object"),
            }
        }
        Edit::Remove(path) => {
            let path = pointer(doc, path);
            let (target, key) = parent(doc, &path);
            match target {
                Value::Array(items) => {
                    items.remove(key.parse::<usize>().expect("an index"));
                }
                Value::Object(members) => {
                    members.remove(&key).unwrap_or_else(|| panic!("{path}: nothing to remove"));
                }
                _ => panic!("{path}: not in an array or object"),
            }
        }
        Edit::Insert(path, value) => {
            let path = pointer(doc, path);
            let (target, key) = parent(doc, &path);
            let items = target.as_array_mut().expect("an array");
            items.insert(key.parse::<usize>().expect("an index"), value.clone());
        }
        Edit::Move(path, to) => {
            let path = pointer(doc, path);
            let (target, key) = parent(doc, &path);
            let items = target.as_array_mut().expect("an array");
            let item = items.remove(key.parse::<usize>().expect("an index"));
            items.insert(*to, item);
        }
        Edit::RenameWithAlias(old, new) => {
            let path = pointer(doc, &format!("/methods/{}", old.replace('~', "~0").replace('/', "~1")));
            let method = doc.pointer_mut(&path).expect("the method");
            method["name"] = json!(new);
            let mut alias = method.clone();
            alias["name"] = json!(old);
            alias["deprecated"] = json!(true);
            alias["x-alias-of"] = json!(new);
            alias["summary"] = json!(format!("Deprecated alias of `{new}`: call `{new}` instead."));
            doc["methods"].as_array_mut().expect("methods").push(alias);
        }
        Edit::RenameComponent(old, new) => {
            let schemas = doc["components"]["schemas"].as_object_mut().expect("components");
            let schema = schemas.remove(*old).expect("the component");
            schemas.insert((*new).to_owned(), schema);
            rename_refs(doc, &format!("#/components/schemas/{old}"), &format!("#/components/schemas/{new}"));
        }
    }
}

/// Points every `$ref` equal to `old` at `new`.
pub(crate) fn rename_refs(value: &mut Value, old: &str, new: &str) {
    match value {
        Value::Object(members) => {
            if members.get("$ref").is_some_and(|reference| reference == old) {
                members.insert("$ref".into(), json!(new));
            }
            members.values_mut().for_each(|member| rename_refs(member, old, new));
        }
        Value::Array(items) => items.iter_mut().for_each(|item| rename_refs(item, old, new)),
        _ => {}
    }
}

fn run(case: &Case) -> Result<Report, String> {
    let mut old = catalog(case.base);
    for edit in &case.both {
        apply(&mut old, edit);
    }
    let mut new = old.clone();
    for edit in &case.edits {
        apply(&mut new, edit);
    }
    compare(&old, &new).map_err(|err| format!("{}: {err}", case.name))
}

/// Checks one case; `Err` says what is wrong, with the report.
fn check(case: &Case) -> Result<(), String> {
    let report = run(case)?;
    if std::env::var_os("SHOW_REPORTS").is_some() {
        println!("== {}\n{report}", case.name);
    }
    let worst = report.changes().iter().map(|change| change.verdict).min();
    if worst != case.worst {
        return Err(format!("{}: worst verdict {worst:?}, expected {:?}\n{report}", case.name, case.worst));
    }
    for (verdict, words) in &case.expect {
        let found = report.changes().iter().any(|change| {
            let line = change.to_string();
            change.verdict == *verdict && words.iter().all(|word| line.contains(word))
        });
        if !found {
            return Err(format!("{}: no {verdict} change mentioning {words:?}\n{report}", case.name));
        }
    }
    for change in report.changes() {
        let line = change.to_string();
        if !line.starts_with(&format!("{}: {}", change.verdict, change.method)) || line.contains('\n') {
            return Err(format!("{}: not one line naming the method: {line:?}", case.name));
        }
    }
    Ok(())
}

fn integer(format: &str) -> Value {
    json!({"type": "integer", "format": format})
}

fn param(name: &str, required: bool, schema: Value) -> Value {
    json!({"name": name, "required": required, "schema": schema})
}

/// A param struct used both as a param and as a result.
fn point_setup() -> Vec<Edit> {
    let point = json!({
        "type": "object",
        "properties": {"x": {"type": "number", "format": "double"}, "y": {"type": "number", "format": "double"}},
        "required": ["x", "y"]
    });
    let method = json!({
        "name": "move_to",
        "params": [param("point", true, json!({"$ref": "#/components/schemas/Point"}))],
        "result": {"name": "result", "required": true, "schema": {"$ref": "#/components/schemas/Point"}},
        "paramStructure": "either"
    });
    vec![Edit::Set("/components/schemas/Point", point), Edit::Insert("/methods/0", method)]
}

/// A string enum used by a param and a result of two methods.
fn color_setup() -> Vec<Edit> {
    let color = json!({"type": "string", "enum": ["red", "green", "blue"]});
    let paint = json!({
        "name": "paint",
        "params": [param("color", true, json!({"$ref": "#/components/schemas/Color"}))],
        "result": {"name": "result", "required": true, "schema": {"type": "null"}},
        "paramStructure": "either"
    });
    let favourite = json!({
        "name": "favourite",
        "params": [],
        "result": {"name": "result", "required": true, "schema": {"$ref": "#/components/schemas/Color"}},
        "paramStructure": "either"
    });
    vec![
        Edit::Set("/components/schemas/Color", color),
        Edit::Insert("/methods/0", paint),
        Edit::Insert("/methods/0", favourite),
    ]
}

fn cases() -> Vec<Case> {
    vec![
        // Methods.
        case("method removed", "calculator", vec![Edit::Remove("/methods/subtract")], Some(Breaking))
            .expect(Breaking, &["subtract", "-32601"]),
        case(
            "method renamed, old name kept as an alias",
            "calculator",
            vec![Edit::RenameWithAlias("subtract", "minus")],
            Some(Compatible),
        )
        .expect(Compatible, &["minus", "added"])
        .expect(Info, &["subtract", "alias of `minus`"]),
        case("alias removed", "calculator", vec![Edit::Remove("/methods/subtract")], Some(Breaking))
            .both(vec![Edit::RenameWithAlias("subtract", "minus")])
            .expect(Breaking, &["subtract", "alias removed"]),
        case(
            "method added",
            "counter",
            vec![Edit::Insert(
                "/methods/2",
                json!({"name": "peek", "params": [], "result": {"name": "result", "schema": integer("uint64")}}),
            )],
            Some(Compatible),
        )
        .expect(Compatible, &["peek", "added"]),
        case(
            "method becomes a notification",
            "calculator",
            vec![Edit::Remove("/methods/greet/result")],
            Some(Breaking),
        )
        .expect(Breaking, &["greet", "now a notification"]),
        case(
            "notification becomes a method",
            "language_client",
            vec![Edit::Set(
                "/methods/window~1logMessage/result",
                json!({"name": "result", "schema": {"type": "null"}}),
            )],
            Some(Breaking),
        )
        .expect(Breaking, &["window/logMessage", "was a notification"]),
        case(
            "x-requires added",
            "counter",
            vec![Edit::Set("/methods/bump/x-requires", json!("admin"))],
            Some(Breaking),
        )
        .expect(Breaking, &["bump", "`admin`", "-32003"]),
        case("x-requires removed", "counter", vec![Edit::Remove("/methods/reset/x-requires")], Some(Compatible))
            .expect(Compatible, &["reset", "no longer requires permission `admin`"]),
        case(
            "x-requires changed",
            "counter",
            vec![Edit::Set("/methods/reset/x-requires", json!("owner"))],
            Some(Breaking),
        )
        .expect(Breaking, &["reset", "`owner` instead of `admin`"]),
        case("deprecated", "calculator", vec![Edit::Set("/methods/sleep/deprecated", json!(true))], Some(Info))
            .expect(Info, &["sleep", "deprecated"]),
        case(
            "summary and description",
            "notes",
            vec![Edit::Set("/methods/search/summary", json!("Finds notes.")), Edit::Remove("/methods/reindex/summary")],
            Some(Info),
        )
        .expect(Info, &["search", "summary"])
        .expect(Info, &["reindex", "summary"]),
        case("error removed", "notes", vec![Edit::Remove("/methods/get_note/errors")], Some(Info))
            .expect(Info, &["get_note", "no longer declares error 1001"]),
        case(
            "error added",
            "calculator",
            vec![Edit::Insert("/methods/divide/errors/2", json!({"code": -32012, "message": "Underflow"}))],
            Some(Info),
        )
        .expect(Info, &["divide", "-32012", "Underflow"]),
        // Params: added.
        case(
            "required param added",
            "calculator",
            vec![Edit::Insert("/methods/subtract/params/2", param("scale", true, integer("int64")))],
            Some(Breaking),
        )
        .expect(Breaking, &["subtract", "param scale", "new required param"]),
        case(
            "optional param added at the end",
            "calculator",
            vec![Edit::Insert(
                "/methods/greet/params/2",
                param("punctuation", false, json!({"type": ["string", "null"]})),
            )],
            Some(Compatible),
        )
        .expect(Compatible, &["greet", "param punctuation", "at the end"]),
        case(
            "optional param added in the middle",
            "calculator",
            vec![Edit::Insert("/methods/greet/params/1", param("title", false, json!({"type": ["string", "null"]})))],
            Some(Breaking),
        )
        .expect(Breaking, &["greet", "param title", "before `greeting`"]),
        case(
            "optional param added in the middle, by name only",
            "calculator",
            vec![Edit::Insert("/methods/greet/params/1", param("title", false, json!({"type": ["string", "null"]})))],
            Some(Compatible),
        )
        .both(vec![Edit::Set("/methods/greet/paramStructure", json!("by-name"))])
        .expect(Compatible, &["greet", "param title", "by name only"]),
        // Params: removed and renamed.
        case("optional param removed", "notes", vec![Edit::Remove("/methods/search/params/1")], Some(Breaking))
            .expect(Breaking, &["search", "param limit", "removed", "-32602"]),
        case(
            "optional param removed, extra params allowed",
            "notes",
            vec![Edit::Remove("/methods/search/params/1")],
            Some(Compatible),
        )
        .both(vec![Edit::Set("/methods/search/x-allow-extra-params", json!(true))])
        .expect(Compatible, &["search", "param limit", "ignored"]),
        case(
            "required param removed, extra params allowed",
            "calculator",
            vec![Edit::Remove("/methods/subtract/params/1")],
            Some(Breaking),
        )
        .both(vec![Edit::Set("/methods/subtract/x-allow-extra-params", json!(true))])
        .expect(Breaking, &["subtract", "param subtrahend", "silently ignored"]),
        case(
            "param removed from the middle",
            "calculator",
            vec![Edit::Remove("/methods/fail/params/1")],
            Some(Breaking),
        )
        .expect(Breaking, &["fail", "param message", "shift"]),
        case(
            "param renamed",
            "calculator",
            vec![Edit::Set("/methods/subtract/params/1/name", json!("amount"))],
            Some(Breaking),
        )
        .expect(Breaking, &["subtract", "param amount", "renamed from `subtrahend`"]),
        case(
            "param renamed, by position only",
            "calculator",
            vec![Edit::Set("/methods/subtract/params/1/name", json!("amount"))],
            Some(Compatible),
        )
        .both(vec![Edit::Set("/methods/subtract/paramStructure", json!("by-position"))])
        .expect(Compatible, &["subtract", "param amount", "renamed from `subtrahend`"]),
        case(
            "optional param renamed, extra params allowed",
            "calculator",
            vec![Edit::Set("/methods/greet/params/1/name", json!("salutation"))],
            Some(Compatible),
        )
        .both(vec![Edit::Set("/methods/greet/x-allow-extra-params", json!(true))])
        .expect(Compatible, &["greet", "param salutation", "ignored"]),
        // Params: order, requiredness, structure.
        case("params reordered", "calculator", vec![Edit::Move("/methods/subtract/params/1", 0)], Some(Breaking))
            .expect(Breaking, &["subtract", "param subtrahend", "moved from position 2 to 1"]),
        case(
            "params reordered, by name only",
            "calculator",
            vec![Edit::Move("/methods/subtract/params/1", 0)],
            Some(Compatible),
        )
        .both(vec![Edit::Set("/methods/subtract/paramStructure", json!("by-name"))])
        .expect(Compatible, &["subtract", "moved", "by name only"]),
        case(
            "required param made optional",
            "calculator",
            vec![Edit::Set("/methods/greet/params/0", param("name", false, json!({"type": ["string", "null"]})))],
            Some(Compatible),
        )
        .expect(Compatible, &["greet", "param name", "now optional"])
        .expect(Compatible, &["greet", "param name", "now also accepts `null`"]),
        case(
            "optional param made required",
            "calculator",
            vec![Edit::Set("/methods/greet/params/1/required", json!(true))],
            Some(Breaking),
        )
        .expect(Breaking, &["greet", "param greeting", "now required"]),
        case(
            "paramStructure narrowed",
            "calculator",
            vec![Edit::Set("/methods/subtract/paramStructure", json!("by-name"))],
            Some(Breaking),
        )
        .expect(Breaking, &["subtract", "`either` to `by-name`", "array"]),
        case(
            "paramStructure widened",
            "calculator",
            vec![Edit::Set("/methods/subtract/paramStructure", json!("either"))],
            Some(Compatible),
        )
        .both(vec![Edit::Set("/methods/subtract/paramStructure", json!("by-position"))])
        .expect(Compatible, &["subtract", "widened"]),
        case(
            "extra params no longer allowed",
            "calculator",
            vec![Edit::Remove("/methods/subtract/x-allow-extra-params")],
            Some(Breaking),
        )
        .both(vec![Edit::Set("/methods/subtract/x-allow-extra-params", json!(true))])
        .expect(Breaking, &["subtract", "no longer allows extra params"]),
        case(
            "extra params now allowed",
            "calculator",
            vec![Edit::Set("/methods/subtract/x-allow-extra-params", json!(true))],
            Some(Compatible),
        )
        .expect(Compatible, &["subtract", "ignores surplus"]),
        // whole_params.
        case(
            "whole params turned off, fixed params instead of a list",
            "calculator",
            vec![
                Edit::Remove("/methods/sum/x-whole-params"),
                Edit::Set(
                    "/methods/sum/params",
                    json!([param("a", true, integer("int64")), param("b", true, integer("int64"))]),
                ),
            ],
            Some(Breaking),
        )
        .expect(Breaking, &["sum", "x-whole-params` turned off", "arrays of fewer than 2 items"]),
        case(
            "whole params turned on, a params struct with the same names",
            "calculator",
            vec![
                Edit::Set("/methods/subtract/x-whole-params", json!(true)),
                Edit::Set(
                    "/methods/subtract/params",
                    json!([param(
                        "params",
                        true,
                        json!({
                            "type": "object",
                            "properties": {"minuend": integer("int64"), "subtrahend": integer("int64")},
                            "required": ["minuend", "subtrahend"],
                            "additionalProperties": false
                        })
                    )]),
                ),
            ],
            Some(Compatible),
        )
        .both(vec![Edit::Set("/methods/subtract/paramStructure", json!("by-name"))])
        .expect(Compatible, &["subtract", "x-whole-params` turned on"]),
        case(
            "whole params schema narrowed",
            "calculator",
            vec![Edit::Set("/methods/sum/params/0/schema/maxItems", json!(10))],
            Some(Breaking),
        )
        .expect(Breaking, &["sum", "arrays of more than 10 items"]),
        case(
            "whole params renamed (not on the wire)",
            "calculator",
            vec![Edit::Set("/methods/sum/params/0/name", json!("values"))],
            None,
        ),
        // Param schemas (may widen).
        case(
            "param type changed",
            "calculator",
            vec![Edit::Set("/methods/greet/params/0/schema", integer("int64"))],
            Some(Breaking),
        )
        .expect(Breaking, &["greet", "param name", "no longer accepts strings"]),
        case(
            "param integer format narrowed",
            "calculator",
            vec![Edit::Set("/methods/subtract/params/0/schema/format", json!("int32"))],
            Some(Breaking),
        )
        .expect(Breaking, &["subtract", "param minuend", "integers above 2147483647"])
        .expect(Breaking, &["subtract", "param minuend", "integers below -2147483648"]),
        case(
            "param integer format widened",
            "notes",
            vec![Edit::Set("/methods/search/params/1/schema/format", json!("uint64"))],
            Some(Compatible),
        )
        .expect(Compatible, &["search", "param limit", "now also accepts integers above 4294967295"]),
        case(
            "param maximum added",
            "notes",
            vec![Edit::Set("/methods/search/params/1/schema/maximum", json!(100))],
            Some(Breaking),
        )
        .expect(Breaking, &["search", "param limit", "integers above 100"]),
        case(
            "param loses null",
            "notes",
            vec![Edit::Set("/methods/search/params/1/schema/type", json!("integer"))],
            Some(Breaking),
        )
        .expect(Breaking, &["search", "param limit", "`null`"]),
        case(
            "param anyOf branch removed",
            "calculator",
            vec![Edit::Remove("/components/schemas/CallbackParams/anyOf/0")],
            Some(Breaking),
        )
        .expect(Breaking, &["ask_client", "param params", "arrays", "CallbackParams"])
        .expect(Breaking, &["notify_client", "param params", "arrays"]),
        case(
            "param enum narrowed",
            "calculator",
            vec![Edit::Set("/components/schemas/Color/enum", json!(["red", "green"]))],
            Some(Breaking),
        )
        .both(color_setup())
        .expect(Breaking, &["paint", "param color", "\"blue\"", "Color"])
        .expect(Compatible, &["favourite", "result", "can no longer be the value `\"blue\"`"]),
        case(
            "enum widened",
            "calculator",
            vec![Edit::Set("/components/schemas/Color/enum", json!(["red", "green", "blue", "black"]))],
            Some(Breaking),
        )
        .both(color_setup())
        .expect(Compatible, &["paint", "param color", "now also accepts the value `\"black\"`"])
        .expect(Breaking, &["favourite", "result", "may now be the value `\"black\"`"]),
        // A component used by a param and a result: the stricter use wins.
        case(
            "required property added to a param and result type",
            "calculator",
            vec![
                Edit::Set("/components/schemas/Point/properties/z", json!({"type": "number"})),
                Edit::Set("/components/schemas/Point/required", json!(["x", "y", "z"])),
            ],
            Some(Breaking),
        )
        .both(point_setup())
        .expect(Breaking, &["move_to", "param point", "objects without property `z`", "Point"]),
        case(
            "property made optional in a param and result type",
            "calculator",
            vec![Edit::Set("/components/schemas/Point/required", json!(["x"]))],
            Some(Breaking),
        )
        .both(point_setup())
        .expect(Compatible, &["move_to", "param point", "objects without property `y`"])
        .expect(Breaking, &["move_to", "result", "may now be objects without property `y`"]),
        case(
            "additionalProperties false added",
            "calculator",
            vec![Edit::Set("/components/schemas/Point/additionalProperties", json!(false))],
            Some(Breaking),
        )
        .both(point_setup())
        .expect(Breaking, &["move_to", "param point", "properties not listed"]),
        case(
            "optional property added to a param type",
            "calculator",
            vec![Edit::Set("/components/schemas/Point/properties/label", json!({"type": ["string", "null"]}))],
            Some(Compatible),
        )
        .both(point_setup()),
        // Results (may narrow).
        case(
            "result may now be null",
            "calculator",
            vec![Edit::Set("/methods/greet/result/schema/type", json!(["string", "null"]))],
            Some(Breaking),
        )
        .expect(Breaking, &["greet", "result", "may now be `null`"]),
        case(
            "result range narrowed",
            "calculator",
            vec![Edit::Set("/methods/sleep/result/schema/format", json!("uint32"))],
            Some(Compatible),
        )
        .expect(Compatible, &["sleep", "result", "can no longer be integers above 4294967295"]),
        case(
            "result array items widened",
            "notes",
            vec![Edit::Set("/components/schemas/Note/properties/tags/items/type", json!(["string", "null"]))],
            Some(Breaking),
        )
        .expect(Breaking, &["search", "result at /properties/matches/items/properties/tags/items", "Note", "`null`"])
        .expect(Breaking, &["get_note", "result", "`null`"]),
        case(
            "result property no longer required",
            "notes",
            vec![Edit::Set("/components/schemas/Note/required", json!(["id", "title", "body"]))],
            Some(Breaking),
        )
        .expect(Breaking, &["add_note", "result", "objects without property `tags`"]),
        case(
            "result tuple item changed",
            "calculator",
            vec![Edit::Set("/methods/get_data/result/schema/items/1", json!({"type": "string"}))],
            Some(Breaking),
        )
        .expect(Breaking, &["get_data", "result at /items/1", "strings"]),
        case(
            "result tuple longer",
            "calculator",
            vec![
                Edit::Insert("/methods/get_data/result/schema/items/2", json!({"type": "boolean"})),
                Edit::Set("/methods/get_data/result/schema/maxItems", json!(3)),
            ],
            Some(Breaking),
        )
        .expect(Breaking, &["get_data", "result", "arrays of more than 2 items"]),
        case(
            "subscription item property no longer required",
            "calculator",
            vec![Edit::Set("/components/schemas/Tick/required", json!([]))],
            Some(Breaking),
        )
        .expect(Breaking, &["ticks", "subscription item", "objects without property `index`", "Tick"]),
        case(
            "subscription notification renamed",
            "calculator",
            vec![Edit::Set("/methods/ticks/x-subscription/notification", json!("tick"))],
            Some(Breaking),
        )
        .expect(Breaking, &["ticks", "`tick` instead of `subscription`"]),
        case("subscription removed", "calculator", vec![Edit::Remove("/methods/ticks/x-subscription")], Some(Breaking))
            .expect(Breaking, &["ticks", "no longer opens a subscription"]),
        // Names are not on the wire.
        case(
            "component renamed",
            "calculator",
            vec![Edit::RenameComponent("Tick", "TickItem"), Edit::RenameComponent("CallbackParams", "Params")],
            None,
        ),
        case("component renamed, used by many methods", "notes", vec![Edit::RenameComponent("Note", "NoteV2")], None),
        // A keyword the checker does not compare is not passed silently.
        case(
            "unsupported keyword",
            "notes",
            vec![Edit::Set("/methods/search/params/0/schema/not", json!({"const": ""}))],
            Some(Breaking),
        )
        .expect(Breaking, &["search", "param query", "`not` changed", "review"]),
        // Several changes in one release.
        case(
            "combined: a removal, an addition and a deprecation",
            "notes",
            vec![
                Edit::Remove("/methods/delete_note"),
                Edit::Insert("/methods/search/params/2", param("tag", false, json!({"type": ["string", "null"]}))),
                Edit::Set("/methods/get_note/deprecated", json!(true)),
            ],
            Some(Breaking),
        )
        .expect(Breaking, &["delete_note", "removed"])
        .expect(Compatible, &["search", "param tag", "at the end"])
        .expect(Info, &["get_note", "deprecated"]),
        case(
            "combined: a compatible release",
            "language_server",
            vec![
                Edit::RenameWithAlias("textDocument/hover", "textDocument/hoverText"),
                Edit::Set("/methods/textDocument~1hoverText/params/1/schema/format", json!("uint64")),
                Edit::Set("/methods/initialize/summary", json!("Starts a session.")),
            ],
            Some(Compatible),
        )
        .expect(Compatible, &["textDocument/hoverText", "added"])
        .expect(Info, &["textDocument/hover", "alias of `textDocument/hoverText`"])
        .expect(Info, &["initialize", "summary"]),
        case(
            "combined: narrowed structure and a required param",
            "language_client",
            vec![
                Edit::Set("/methods/textDocument~1publishDiagnostics/paramStructure", json!("by-name")),
                Edit::Insert(
                    "/methods/textDocument~1publishDiagnostics/params/2",
                    param("version", true, integer("int32")),
                ),
            ],
            Some(Breaking),
        )
        .expect(Breaking, &["textDocument/publishDiagnostics", "`by-name`"])
        .expect(Breaking, &["textDocument/publishDiagnostics", "param version", "new required param"]),
    ]
}

#[test]
fn every_case_reports_what_it_should() {
    let failures: Vec<String> = cases().iter().filter_map(|case| check(case).err()).collect();
    assert!(failures.is_empty(), "{} of {} cases failed:\n\n{}", failures.len(), cases().len(), failures.join("\n\n"));
}

#[test]
fn each_real_catalog_compared_with_itself_reports_nothing() {
    for base in super::BASES {
        let doc = catalog(base);
        let report = compare(&doc, &doc).expect("a valid document");
        assert!(report.is_empty(), "{base}:\n{report}");
    }
}

#[test]
fn documents_the_server_could_not_have_emitted_are_refused_with_a_reason() {
    let good = catalog("counter");
    let mut twice = good.clone();
    twice["methods"][0]["params"] = json!([param("a", true, json!(true)), param("a", false, json!(true))]);
    let err = compare(&good, &twice).expect_err("a param listed twice");
    assert_eq!(err.to_string(), "the new document: method 0: `bump` lists param `a` twice");
    let mut structure = good.clone();
    structure["methods"][1]["paramStructure"] = json!("by-anything");
    let err = compare(&structure, &good).expect_err("an unknown paramStructure");
    assert!(err.to_string().starts_with("the old document: method 1: `reset`: unknown `paramStructure`"), "{err}");
    let err = compare(&json!({"openrpc": "2.0.0", "methods": []}), &good).expect_err("OpenRPC 2");
    assert!(err.to_string().contains("only OpenRPC 1.x"), "{err}");
}
