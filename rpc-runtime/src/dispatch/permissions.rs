//! Per-method authorization: what a caller may do, as granted by the
//! connection hook, checked against what a method requires
//! (`#[rpc(requires = "...")]`) before its params are decoded.

use std::collections::BTreeSet;

use crate::dispatch::context::Context;
use crate::spec::Requirement;
use crate::wire::error::{ErrorObject, PERMISSION_DENIED};

/// The permissions a caller holds: attach them to the connection's
/// [`Context`] in the connection hook (after checking a token, say), and
/// every method declared `#[rpc(requires = "name")]` checks them before
/// decoding its params.
///
/// A caller without a `Permissions` extension holds none: methods that
/// require one are refused with -32003 ([`PERMISSION_DENIED`]), and
/// methods that require nothing are served as usual.
///
/// ```
/// use rpc_runtime::{Context, dispatch::Permissions};
///
/// let cx = Context::new().with_extension(Permissions::new(["read", "admin"]));
/// assert!(Permissions::of(&cx).grants("admin"));
/// assert!(!Permissions::of(&Context::new()).grants("admin"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Permissions(BTreeSet<Box<str>>);

impl Permissions {
    /// These permissions.
    pub fn new<I, S>(permissions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<Box<str>>,
    {
        Permissions(permissions.into_iter().map(Into::into).collect())
    }

    /// The same, plus `permission`.
    pub fn with(mut self, permission: impl Into<Box<str>>) -> Self {
        self.0.insert(permission.into());
        self
    }

    /// Whether `permission` is granted.
    pub fn grants(&self, permission: &str) -> bool {
        self.0.contains(permission)
    }

    /// The permissions held by the caller of `cx` (none when the hook
    /// attached none).
    pub fn of(cx: &Context) -> &Permissions {
        static NONE: Permissions = Permissions(BTreeSet::new());
        cx.extension::<Permissions>().unwrap_or(&NONE)
    }

    /// Whether a method that requires `requirement` (or nothing) may be
    /// called with these permissions.
    pub(crate) fn allow(&self, requirement: Option<&Requirement>) -> bool {
        requirement.is_none_or(|requirement| requirement.is_met(|permission| self.grants(permission)))
    }

    /// The permissions granted, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|permission| &**permission)
    }
}

/// -32003 for a caller of `method` who does not meet `requirement`; it is
/// named in `data` (`"admin"`, or `{"anyOf": [...]}` / `{"allOf": [...]}`)
/// so that a client can say what is missing.
#[cold]
pub(crate) fn denied(method: &str, requirement: &Requirement) -> ErrorObject {
    #[derive(serde::Serialize)]
    struct Data<'a> {
        requires: &'a Requirement,
    }
    ErrorObject::new(PERMISSION_DENIED, format!("Permission denied: method `{method}` requires {requirement}"))
        .with_data(&Data { requires: requirement })
}

/// What the `data` of a -32003 names (written by [`denied`]), read back:
/// every permission in `requires`, one for `"admin"`, each listed for
/// `{"anyOf": [...]}` or `{"allOf": [...]}`. `None` for data without a
/// `requires` this reads.
pub(crate) fn named_in(data: &serde_json::value::RawValue) -> Option<Vec<String>> {
    #[derive(serde::Deserialize)]
    struct Data {
        requires: Required,
    }
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Required {
        One(String),
        Any {
            #[serde(rename = "anyOf")]
            any_of: Vec<String>,
        },
        All {
            #[serde(rename = "allOf")]
            all_of: Vec<String>,
        },
    }
    Some(match serde_json::from_str::<Data>(data.get()).ok()?.requires {
        Required::One(permission) => vec![permission],
        Required::Any { any_of: permissions } | Required::All { all_of: permissions } => permissions,
    })
}
