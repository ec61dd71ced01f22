//! The method table: wire name -> handler, built from one or more services.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::OnceLock;

use serde::Serialize;
use serde_json::value::RawValue;

use crate::catalog::{Catalog, DISCOVER_METHOD};
use crate::context::Context;
use crate::error::ErrorObject;
use crate::params::{MethodSpec, Params};

/// What a method produced: its result as raw JSON, or an error object.
pub type MethodResult = Result<Box<RawValue>, ErrorObject>;

/// The future of an `async` method, already encoding its result.
pub type MethodFuture = Pin<Box<dyn Future<Output = MethodResult> + Send + 'static>>;

/// What calling a handler gives back: a finished result (plain `fn`
/// methods, and every params error) or a future to run (`async fn` methods).
pub enum MethodOutcome {
    /// The answer is known now; no task is spawned.
    Ready(MethodResult),
    /// The answer comes when this future completes.
    Pending(MethodFuture),
}

type Handler = dyn Fn(Params<'_>, &Context) -> Result<MethodOutcome, ErrorObject> + Send + Sync;

struct Method {
    spec: &'static MethodSpec,
    handler: Box<Handler>,
}

/// Two services registered the same method name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateMethod(pub String);

impl fmt::Display for DuplicateMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "method `{}` is registered twice", self.0)
    }
}

impl std::error::Error for DuplicateMethod {}

/// A table of methods, keyed by wire name. `#[rpc]` traits produce one with
/// `into_rpc()`; several can be combined with [`Router::merge`].
///
/// A duplicate name is an error when it is added, never a silent override.
///
/// A router also carries the [`Catalog`] of its traits and answers
/// `rpc.discover` (params `[]`) with its OpenRPC document, unless turned off
/// with [`Router::set_discover`].
#[derive(Default)]
pub struct Router {
    methods: HashMap<Box<str>, Method>,
    catalog: Catalog,
    discover_off: bool,
    /// The `rpc.discover` answer, built on first use.
    document: OnceLock<Box<RawValue>>,
}

impl Router {
    /// An empty router.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a method. `handler` receives the params already split against
    /// `spec` and decodes each one. Fails if the name is taken.
    pub fn register<F>(&mut self, spec: &'static MethodSpec, handler: F) -> Result<(), DuplicateMethod>
    where
        F: Fn(Params<'_>, &Context) -> Result<MethodOutcome, ErrorObject> + Send + Sync + 'static,
    {
        if self.methods.contains_key(spec.name) {
            return Err(DuplicateMethod(spec.name.to_owned()));
        }
        self.methods.insert(spec.name.into(), Method { spec, handler: Box::new(handler) });
        Ok(())
    }

    /// Moves every method of `other` into `self`. Fails, leaving `self`
    /// unchanged, if any name is already taken.
    pub fn merge(&mut self, other: Router) -> Result<(), DuplicateMethod> {
        if let Some(name) = other.methods.keys().find(|name| self.methods.contains_key(*name)) {
            return Err(DuplicateMethod(name.to_string()));
        }
        self.methods.extend(other.methods);
        self.catalog.merge(other.catalog);
        self.document = OnceLock::new();
        Ok(())
    }

    /// The catalog of every trait in this router (merged by [`Router::merge`]).
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Adds `catalog` to this router's catalog; `into_rpc()` does this for
    /// each trait. Use [`Catalog::set_info`] on [`Router::catalog_mut`] to
    /// set the merged document's title and version.
    pub fn add_catalog(&mut self, catalog: Catalog) {
        self.catalog.merge(catalog);
        self.document = OnceLock::new();
    }

    /// The catalog, to change its `info`.
    pub fn catalog_mut(&mut self) -> &mut Catalog {
        self.document = OnceLock::new();
        &mut self.catalog
    }

    /// Whether `rpc.discover` is answered (default `true`). When off, it is
    /// an unknown method (-32601) like any other.
    pub fn set_discover(&mut self, on: bool) {
        self.discover_off = !on;
    }

    /// The wire names of all methods, sorted.
    pub fn method_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.methods.keys().map(|name| &**name).collect();
        names.sort_unstable();
        names
    }

    /// The spec of method `name`, if registered.
    pub fn spec(&self, name: &str) -> Option<&'static MethodSpec> {
        self.methods.get(name).map(|method| method.spec)
    }

    /// Calls method `name`; `None` if there is no such method. A panic in
    /// the synchronous part of the handler becomes -32603.
    pub(crate) fn call(&self, name: &str, params: Option<&RawValue>, cx: &Context) -> Option<MethodOutcome> {
        let Some(method) = self.methods.get(name) else {
            if name == DISCOVER_METHOD && !self.discover_off {
                // A user's `JsonSchema` impl runs here: keep its panics in.
                let result = catch_unwind(AssertUnwindSafe(|| self.discover(params)))
                    .unwrap_or_else(|panic| Err(panicked(name, &*panic)));
                return Some(MethodOutcome::Ready(result));
            }
            return None;
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let params = Params::parse(params, method.spec)?;
            (method.handler)(params, cx)
        }));
        Some(match outcome {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(err)) => MethodOutcome::Ready(Err(err)),
            Err(panic) => MethodOutcome::Ready(Err(panicked(name, &*panic))),
        })
    }
}

impl Router {
    /// The answer to `rpc.discover`: the document, for params absent, `[]` or `{}`.
    fn discover(&self, params: Option<&RawValue>) -> MethodResult {
        let empty = match params {
            None => true,
            Some(raw) => {
                let text: String = raw.get().chars().filter(|c| !c.is_ascii_whitespace()).collect();
                text == "[]" || text == "{}"
            }
        };
        if !empty {
            return Err(ErrorObject::invalid_params(format!(
                "`{DISCOVER_METHOD}` takes no params; send `[]` or omit them"
            )));
        }
        let document = self.document.get_or_init(|| {
            serde_json::value::to_raw_value(&self.catalog.document())
                .unwrap_or_else(|err| unreachable!("documents serialize: {err}"))
        });
        Ok(document.clone())
    }
}

impl fmt::Debug for Router {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Router").field("methods", &self.method_names()).finish()
    }
}

/// -32603 for a handler that panicked; the panic message is logged, not sent.
#[cold]
pub(crate) fn panicked(method: &str, panic: &(dyn std::any::Any + Send)) -> ErrorObject {
    let text = panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("non-string panic payload");
    tracing::error!(method, panic = text, "method handler panicked");
    ErrorObject::internal_error(format!("Internal error: method `{method}` panicked"))
}

/// Serializes a method's return value.
pub fn encode<T: Serialize>(value: &T) -> MethodResult {
    serde_json::value::to_raw_value(value).map_err(encode_failed)
}

#[cold]
fn encode_failed(err: serde_json::Error) -> ErrorObject {
    ErrorObject::internal_error(format!("Internal error: the result failed to serialize: {err}"))
}

/// A method return type that is a `Result<T, E>` with `E` convertible into
/// an error object.
pub trait IntoMethodResult {
    /// Encodes `Ok` as the result, converts `Err` into an error object.
    fn into_method_result(self) -> MethodResult;
}

impl<T: Serialize, E: Into<ErrorObject>> IntoMethodResult for Result<T, E> {
    fn into_method_result(self) -> MethodResult {
        match self {
            Ok(value) => encode(&value),
            Err(err) => Err(err.into()),
        }
    }
}
