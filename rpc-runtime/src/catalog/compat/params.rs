//! Rules for a method's params, as the server decodes them: by position
//! (an array in declaration order; trailing optional params may be left
//! out; surplus ones refused) and by name (an object; unknown names
//! refused), unless extra params are allowed; `paramStructure` says which
//! of the two a method takes, `x-whole-params` that its one param is the
//! whole `params` value.

use serde_json::{Map, Value, json};

use super::document::{Document, Method, Param};
use super::methods::{Direction, Sides, schemas};
use super::schema::{What, excess};
use super::{Changes, Part, Verdict};

/// Every param change of a method both documents have.
pub(super) fn compare(
    changes: &mut Changes<'_>,
    old_doc: &Document<'_>,
    old: &Method<'_>,
    new_doc: &Document<'_>,
    new: &Method<'_>,
) {
    structure(changes, old, new);
    extra(changes, old, new);
    match (old.whole, new.whole, old.params.first(), new.params.first()) {
        (true, true, Some(before), Some(now)) => {
            // The param's name is not on the wire: only its schema counts.
            let sides = Sides { old_doc, old: before.schema, new_doc, new: now.schema };
            schemas(changes, Part::Param, Some(now.name), sides, Direction::Accepts);
        }
        (false, false, _, _) => Params { changes, old_doc, old, new_doc, new }.compare(),
        _ if old.whole != new.whole => whole_toggled(changes, old_doc, old, new_doc, new),
        _ => {}
    }
}

/// `paramStructure`: an array or an object no longer taken is breaking.
fn structure(changes: &mut Changes<'_>, old: &Method<'_>, new: &Method<'_>) {
    let (before, now) = (old.structure_name, new.structure_name);
    let mut lost = Vec::new();
    if old.structure.by_position && !new.structure.by_position {
        lost.push("an array (by position)");
    }
    if old.structure.by_name && !new.structure.by_name {
        lost.push("an object (by name)");
    }
    if !lost.is_empty() {
        let lost = lost.join(" or ");
        changes.method(
            Verdict::Breaking,
            format!("`paramStructure` changed from `{before}` to `{now}`: calls with params as {lost} are refused with -32602"),
        );
    } else if old.structure != new.structure {
        changes.method(
            Verdict::Compatible,
            format!("`paramStructure` widened from `{before}` to `{now}`: both old and new shapes of params are taken"),
        );
    }
}

/// `x-allow-extra-params`.
fn extra(changes: &mut Changes<'_>, old: &Method<'_>, new: &Method<'_>) {
    match (old.allow_extra, new.allow_extra) {
        (true, false) => changes.method(
            Verdict::Breaking,
            "no longer allows extra params: calls with surplus positional or unknown named params are refused with \
             -32602"
                .to_owned(),
        ),
        (false, true) => {
            changes.method(Verdict::Compatible, "now ignores surplus positional and unknown named params".to_owned())
        }
        _ => {}
    }
}

/// `x-whole-params` turned on or off: judged by the whole `params` value
/// each version takes, since a params struct may well become separate
/// params with the same names.
fn whole_toggled(
    changes: &mut Changes<'_>,
    old_doc: &Document<'_>,
    old: &Method<'_>,
    new_doc: &Document<'_>,
    new: &Method<'_>,
) {
    let (before, now) = (params_value_schema(old), params_value_schema(new));
    let mut lost = excess((old_doc.doc, &before), (new_doc.doc, &now), true);
    lost.retain(|finding| !matches!(finding.what, What::Undeclared(_)));
    let switched = if new.whole { "on" } else { "off" };
    if lost.is_empty() {
        changes.method(
            Verdict::Compatible,
            format!("`x-whole-params` turned {switched}; every `params` value the old version took is still taken"),
        );
        return;
    }
    let missing: Vec<String> = lost
        .iter()
        .map(|finding| match &finding.what {
            // Paths would point into a schema no document has.
            What::Values(values) => values.clone(),
            What::Unsupported(why) => why.clone(),
            What::Undeclared(name) => format!("property `{name}`"),
        })
        .collect();
    changes.method(
        Verdict::Breaking,
        format!(
            "`x-whole-params` turned {switched}: `params` values the old version took are refused with -32602 ({})",
            missing.join("; ")
        ),
    );
}

/// The schema of the whole `params` value a method takes (by position, by
/// name, or its one param's for `x-whole-params`).
fn params_value_schema(method: &Method<'_>) -> Value {
    if method.whole {
        return method.params.first().map_or(Value::Bool(true), |param| param.schema.clone());
    }
    let mut shapes = Vec::new();
    if method.structure.by_name {
        let properties: Map<String, Value> =
            method.params.iter().map(|param| (param.name.to_owned(), param.schema.clone())).collect();
        let required: Vec<&str> = method.params.iter().filter(|param| param.required).map(|param| param.name).collect();
        let mut object = json!({"type": "object", "properties": properties, "required": required});
        if !method.allow_extra {
            object["additionalProperties"] = Value::Bool(false);
        }
        shapes.push(object);
    }
    if method.structure.by_position {
        let items: Vec<Value> = method.params.iter().map(|param| param.schema.clone()).collect();
        // Trailing optional params may be left out; earlier ones are `null`.
        let least = method.params.iter().rposition(|param| param.required).map_or(0, |last| last + 1);
        let mut array = json!({"type": "array", "items": items, "minItems": least});
        if !method.allow_extra {
            array["maxItems"] = method.params.len().into();
        }
        shapes.push(array);
    }
    json!({ "anyOf": shapes })
}

/// The param rules of two methods without `x-whole-params`.
struct Params<'c, 'a, 'd> {
    changes: &'c mut Changes<'a>,
    old_doc: &'c Document<'d>,
    old: &'c Method<'d>,
    new_doc: &'c Document<'d>,
    new: &'c Method<'d>,
}

impl<'c, 'd> Params<'c, '_, 'd> {
    /// Calls by position that worked before still reach the server as an
    /// array only if both versions take one; the same for by name.
    fn by_position(&self) -> bool {
        self.old.structure.by_position && self.new.structure.by_position
    }

    fn by_name(&self) -> bool {
        self.old.structure.by_name && self.new.structure.by_name
    }

    fn old_index(&self, name: &str) -> Option<usize> {
        self.old.params.iter().position(|param| param.name == name)
    }

    fn new_index(&self, name: &str) -> Option<usize> {
        self.new.params.iter().position(|param| param.name == name)
    }

    /// A param that is gone from its place and whose place holds a param
    /// that is new: taken as renamed.
    fn renamed_to(&self, index: usize) -> Option<&'c Param<'d>> {
        let (old, new) = (self.old.params.get(index)?, self.new.params.get(index)?);
        (self.new_index(old.name).is_none() && self.old_index(new.name).is_none()).then_some(new)
    }

    fn compare(mut self) {
        let (old, new) = (self.old, self.new);
        for (index, param) in old.params.iter().enumerate() {
            if let Some(now) = self.new_index(param.name).map(|index| &new.params[index]) {
                self.kept(param, now);
            } else if let Some(now) = self.renamed_to(index) {
                self.renamed(param, now);
            } else {
                self.removed(index, param);
            }
        }
        for (index, param) in new.params.iter().enumerate() {
            let renamed = self.renamed_to(index).is_some();
            if self.old_index(param.name).is_none() && !renamed {
                self.added(index, param);
            }
        }
        self.reordered();
    }

    /// The same name in both: requiredness, schema, description.
    fn kept(&mut self, before: &Param<'_>, now: &Param<'_>) {
        self.requiredness(before, now);
        if before.description != now.description {
            self.changes.param(Verdict::Info, now.name, "description changed".to_owned());
        }
        let sides = Sides { old_doc: self.old_doc, old: before.schema, new_doc: self.new_doc, new: now.schema };
        schemas(self.changes, Part::Param, Some(now.name), sides, Direction::Accepts);
    }

    fn requiredness(&mut self, before: &Param<'_>, now: &Param<'_>) {
        match (before.required, now.required) {
            (false, true) => self.changes.param(
                Verdict::Breaking,
                now.name,
                "now required: callers that leave it out are refused with -32602".to_owned(),
            ),
            (true, false) => self.changes.param(Verdict::Compatible, now.name, "now optional".to_owned()),
            _ => {}
        }
    }

    fn renamed(&mut self, before: &Param<'_>, now: &Param<'_>) {
        let (verdict, reason) = if !self.by_name() {
            (
                Verdict::Compatible,
                format!("renamed from `{}`: only taken by position, where names are not sent", before.name),
            )
        } else if self.new.allow_extra && !before.required && !now.required {
            (
                Verdict::Compatible,
                format!(
                    "renamed from `{}`: by-name callers still sending it have it ignored (extra params are allowed)",
                    before.name
                ),
            )
        } else {
            (
                Verdict::Breaking,
                format!(
                    "renamed from `{}`: by-name callers sending `{}` are refused with -32602; keep the wire name with \
                     `#[rpc(name = \"{}\")]` on the param",
                    before.name, before.name, before.name
                ),
            )
        };
        self.changes.param(verdict, now.name, reason);
        self.requiredness(before, now);
        let sides = Sides { old_doc: self.old_doc, old: before.schema, new_doc: self.new_doc, new: now.schema };
        schemas(self.changes, Part::Param, Some(now.name), sides, Direction::Accepts);
    }

    fn removed(&mut self, index: usize, before: &Param<'_>) {
        let later_kept = self.old.params[index + 1..].iter().any(|later| self.new_index(later.name).is_some());
        let (verdict, reason) = if self.by_position() && later_kept {
            (
                Verdict::Breaking,
                "removed from the middle: by-position callers' later params shift into the wrong places".to_owned(),
            )
        } else if !self.new.allow_extra {
            (
                Verdict::Breaking,
                "removed: callers that send it are refused with -32602 (unknown or surplus param); keep it as an \
                 ignored optional param, or allow extra params"
                    .to_owned(),
            )
        } else if before.required {
            (
                Verdict::Breaking,
                "removed: callers still send it (it was required) and it is now silently ignored (extra params are \
                 allowed)"
                    .to_owned(),
            )
        } else {
            (
                Verdict::Compatible,
                "removed: callers that still send it have it ignored (extra params are allowed)".to_owned(),
            )
        };
        self.changes.param(verdict, before.name, reason);
    }

    fn added(&mut self, index: usize, now: &Param<'_>) {
        let before_old = self.new.params.iter().enumerate().skip(index + 1).find_map(|(at, later)| {
            (self.old_index(later.name).is_some() || self.renamed_to(at).is_some()).then_some(later)
        });
        let (verdict, reason) = match before_old {
            _ if now.required => (
                Verdict::Breaking,
                "new required param: callers of the old version do not send it and are refused with -32602; make it \
                 an `Option` (at the end)"
                    .to_owned(),
            ),
            Some(later) if self.by_position() => (
                Verdict::Breaking,
                format!(
                    "new optional param before `{}`: by-position callers' value for `{}` lands in it; add it at the end",
                    later.name, later.name
                ),
            ),
            Some(_) => (
                Verdict::Compatible,
                "new optional param (taken by name only, so its place does not matter)".to_owned(),
            ),
            None => (Verdict::Compatible, "new optional param at the end".to_owned()),
        };
        self.changes.param(verdict, now.name, reason);
    }

    /// Params both versions have, in a different order relative to each
    /// other (insertions and removals are reported on their own).
    fn reordered(&mut self) {
        let old_order: Vec<&str> =
            self.old.params.iter().map(|param| param.name).filter(|name| self.new_index(name).is_some()).collect();
        let new_order: Vec<&str> =
            self.new.params.iter().map(|param| param.name).filter(|name| self.old_index(name).is_some()).collect();
        for (before, name) in old_order.iter().zip(&new_order) {
            if before == name {
                continue;
            }
            let from = self.old_index(name).unwrap_or(0) + 1;
            let to = self.new_index(name).unwrap_or(0) + 1;
            let (verdict, reason) = if self.by_position() {
                (
                    Verdict::Breaking,
                    format!("moved from position {from} to {to}: by-position callers' values land in other params"),
                )
            } else {
                (
                    Verdict::Compatible,
                    format!("moved from position {from} to {to}: taken by name only, so callers are unaffected"),
                )
            };
            self.changes.param(verdict, name, reason);
        }
    }
}
