//! Rules for a method as a whole: present or not, answered or not, who may
//! call it, its result and its subscription items; its params are
//! [`params`]' part.

use serde_json::Value;

use super::document::{Document, Method};
use super::schema::{What, excess};
use super::{Change, Changes, Part, Verdict, params};

/// A method of the old document the new one does not have.
pub(super) fn removed(method: &Method<'_>, new: &Document<'_>) -> Change {
    let hint = match method.alias_of.filter(|current| new.method(current).is_some()) {
        Some(current) => format!("keep `#[rpc(alias = \"{}\")]` on `{current}` until callers have moved", method.name),
        None => {
            format!("keep the name with `#[rpc(alias = \"{}\")]` on its successor, or deprecate it first", method.name)
        }
    };
    let what = if method.alias_of.is_some() { "alias removed" } else { "method removed" };
    Change::of_method(Verdict::Breaking, method.name, format!("{what}: callers get -32601 (method not found); {hint}"))
}

/// A method only the new document has.
pub(super) fn added(method: &Method<'_>) -> Change {
    let reason = match method.alias_of {
        Some(current) => format!("added as an alias of `{current}`"),
        None => "method added".to_owned(),
    };
    Change::of_method(Verdict::Compatible, method.name, reason)
}

/// Everything that changed in a method both documents have.
pub(super) fn compare(
    old_doc: &Document<'_>,
    old: &Method<'_>,
    new_doc: &Document<'_>,
    new: &Method<'_>,
    out: &mut Vec<Change>,
) {
    let mut changes = Changes { method: new.name, out };
    kind(&mut changes, old, new);
    access(&mut changes, old, new);
    documentation(&mut changes, old, new);
    params::compare(&mut changes, old_doc, old, new_doc, new);
    if let (Some(old_result), Some(new_result)) = (old.result, new.result) {
        let sides = Sides { old_doc, old: old_result, new_doc, new: new_result };
        schemas(&mut changes, Part::ResultValue, None, sides, Direction::Produces);
    }
    subscription(&mut changes, old_doc, old, new_doc, new);
}

/// Notification (no `result`, never answered) or method.
fn kind(changes: &mut Changes<'_>, old: &Method<'_>, new: &Method<'_>) {
    match (old.result.is_some(), new.result.is_some()) {
        (true, false) => changes.method(
            Verdict::Breaking,
            "now a notification: it is never answered, so callers waiting for its result wait until they time out"
                .to_owned(),
        ),
        (false, true) => changes.method(
            Verdict::Breaking,
            "was a notification, now a method with a result: old callers send it without an id and never see its \
             result or its errors; add a method under a new name instead"
                .to_owned(),
        ),
        _ => {}
    }
}

/// `x-requires`.
fn access(changes: &mut Changes<'_>, old: &Method<'_>, new: &Method<'_>) {
    match (old.requires, new.requires) {
        (None, Some(permission)) => changes.method(
            Verdict::Breaking,
            format!("now requires permission `{permission}`: callers without it are refused with -32003"),
        ),
        (Some(permission), None) => {
            changes.method(Verdict::Compatible, format!("no longer requires permission `{permission}`"))
        }
        (Some(before), Some(now)) if before != now => changes.method(
            Verdict::Breaking,
            format!("requires permission `{now}` instead of `{before}`: callers holding only `{before}` are refused with -32003"),
        ),
        _ => {}
    }
}

/// Deprecation, aliases, summaries, descriptions and declared errors:
/// nothing on the wire.
fn documentation(changes: &mut Changes<'_>, old: &Method<'_>, new: &Method<'_>) {
    match (old.alias_of, new.alias_of) {
        (before, Some(now)) if before != Some(now) => changes.method(
            Verdict::Info,
            format!("now an alias of `{now}`, served the same way; callers should move to `{now}`"),
        ),
        (Some(before), None) => changes.method(Verdict::Info, format!("no longer an alias of `{before}`")),
        _ => match (old.deprecated, new.deprecated) {
            (false, true) => {
                changes.method(Verdict::Info, "deprecated: still served; tell callers what to use instead".to_owned())
            }
            (true, false) => changes.method(Verdict::Info, "no longer deprecated".to_owned()),
            _ => {}
        },
    }
    if old.summary != new.summary {
        changes.method(Verdict::Info, "summary changed".to_owned());
    }
    if old.description != new.description {
        changes.method(Verdict::Info, "description changed".to_owned());
    }
    for (code, message) in &new.errors {
        if !old.errors.contains(&(*code, message)) {
            changes.method(Verdict::Info, format!("declares error {code} ({message})"));
        }
    }
    for (code, message) in &old.errors {
        if !new.errors.contains(&(*code, message)) {
            changes.method(Verdict::Info, format!("no longer declares error {code} ({message})"));
        }
    }
}

/// `x-subscription`: how items arrive and end, and their schema.
fn subscription(
    changes: &mut Changes<'_>,
    old_doc: &Document<'_>,
    old: &Method<'_>,
    new_doc: &Document<'_>,
    new: &Method<'_>,
) {
    match (&old.subscription, &new.subscription) {
        (Some(_), None) => changes.method(
            Verdict::Breaking,
            "no longer opens a subscription: callers waiting for its items get none".to_owned(),
        ),
        (None, Some(_)) => changes.method(
            Verdict::Breaking,
            "now opens a subscription: it answers a subscription id and sends items as notifications, which old \
             callers do not expect"
                .to_owned(),
        ),
        (Some(before), Some(now)) => {
            if before.notification != now.notification {
                changes.method(
                    Verdict::Breaking,
                    format!(
                        "items now arrive as notifications `{}` instead of `{}`: old callers do not listen for them",
                        now.notification.unwrap_or("?"),
                        before.notification.unwrap_or("?")
                    ),
                );
            }
            if before.unsubscribe != now.unsubscribe {
                changes.method(
                    Verdict::Breaking,
                    format!(
                        "subscriptions now end with `{}` instead of `{}`: old callers cannot end theirs",
                        now.unsubscribe.unwrap_or("?"),
                        before.unsubscribe.unwrap_or("?")
                    ),
                );
            }
            let sides = Sides { old_doc, old: before.item, new_doc, new: now.item };
            schemas(changes, Part::SubscriptionItem, None, sides, Direction::Produces);
        }
        (None, None) => {}
    }
}

/// Which way a schema may change without breaking callers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    /// Callers send values of it (a param): the new schema must accept
    /// every value the old one did.
    Accepts,
    /// Callers receive values of it (a result, a subscription item): the
    /// new schema must not produce a value the old one did not.
    Produces,
}

/// The old and new schema of the same thing, with their documents.
pub(super) struct Sides<'a, 'd> {
    pub old_doc: &'a Document<'d>,
    pub old: &'a Value,
    pub new_doc: &'a Document<'d>,
    pub new: &'a Value,
}

/// Compares one schema both ways: what callers lose is breaking, what
/// they gain is compatible.
pub(super) fn schemas(
    changes: &mut Changes<'_>,
    part: Part,
    param: Option<&str>,
    sides: Sides<'_, '_>,
    direction: Direction,
) {
    let old = (sides.old_doc.doc, sides.old);
    let new = (sides.new_doc.doc, sides.new);
    let (lost, gained) = match direction {
        Direction::Accepts => (excess(old, new, true), excess(new, old, false)),
        Direction::Produces => (excess(new, old, false), excess(old, new, true)),
    };
    for finding in lost {
        let (verdict, reason) = match (&finding.what, direction) {
            (What::Values(values), Direction::Accepts) => {
                (Verdict::Breaking, format!("no longer accepts {values}: callers sending them are refused with -32602"))
            }
            (What::Values(values), Direction::Produces) => {
                (Verdict::Breaking, format!("may now be {values}, which callers of the old version do not expect"))
            }
            (What::Unsupported(why), _) => {
                (Verdict::Breaking, format!("{why}: review the change by hand, then accept it"))
            }
            (What::Undeclared(name), Direction::Accepts) => {
                (Verdict::Compatible, format!("property `{name}` is no longer declared: the server ignores it if sent"))
            }
            (What::Undeclared(name), Direction::Produces) => {
                (Verdict::Compatible, format!("may now have property `{name}`, which the old object left open"))
            }
        };
        push_schema_change(changes, verdict, &part, param, finding.path, finding.component, reason);
    }
    for finding in gained {
        let reason = match (&finding.what, direction) {
            (What::Values(values), Direction::Accepts) => format!("now also accepts {values}"),
            (What::Values(values), Direction::Produces) => format!("can no longer be {values}"),
            (What::Undeclared(name), Direction::Accepts) => format!("now also accepts property `{name}`"),
            (What::Undeclared(name), Direction::Produces) => format!("no longer declares property `{name}`"),
            // Reported once, by the other pass.
            (What::Unsupported(_), _) => continue,
        };
        push_schema_change(changes, Verdict::Compatible, &part, param, finding.path, finding.component, reason);
    }
}

fn push_schema_change(
    changes: &mut Changes<'_>,
    verdict: Verdict,
    part: &Part,
    param: Option<&str>,
    path: String,
    component: Option<String>,
    reason: String,
) {
    changes.push(verdict, part.clone(), param, reason);
    if let Some(change) = changes.out.last_mut() {
        change.schema_path = Some(path);
        change.component = component;
    }
}
