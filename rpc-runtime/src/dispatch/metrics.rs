#![doc = include_str!("../../docs/metrics.md")]

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use ::metrics::{Counter, Gauge, Histogram, Key, Label, Level, Metadata, Recorder, Unit};

use crate::catalog::DISCOVER_METHOD;
use crate::dispatch::pending::CatchUnwind;
use crate::dispatch::router::{Called, MethodFuture, NameHasher, Router, panicked};
use crate::wire::error::{ErrorObject, METHOD_NOT_FOUND, SERVER_OVERLOADED};

/// Calls answered (or given up), by `method` and `outcome` (`ok`, `error`,
/// `cancelled`): a counter.
pub const CALLS: &str = "rpc_server_calls_total";
/// Calls answered with an error object, by `method` and `code`: a counter.
pub const ERRORS: &str = "rpc_server_errors_total";
/// Time from dispatching a call to its answer being ready, in seconds, by
/// `method`: a histogram.
pub const CALL_DURATION: &str = "rpc_server_call_duration_seconds";
/// Calls dispatched and not answered yet, by `method`: a gauge.
pub const CALLS_IN_FLIGHT: &str = "rpc_server_calls_in_flight";
/// Connections being served, by `transport`: a gauge.
pub const OPEN_CONNECTIONS: &str = "rpc_server_open_connections";
/// Subscriptions open, by the `method` that opened them: a gauge.
pub const OPEN_SUBSCRIPTIONS: &str = "rpc_server_open_subscriptions";
/// The `method` label of a call whose method name the server does not
/// have (answered -32601), whatever name the client sent.
pub const OTHER_METHOD: &str = "_OTHER";

/// Bucket bounds, in seconds, suited to [`CALL_DURATION`]: from 100 µs
/// (an in-process call takes a few) to 10 s. For a Prometheus exporter:
/// `PrometheusBuilder::new().set_buckets_for_metric(Matcher::Full(CALL_DURATION.into()), DURATION_BUCKETS)`.
pub const DURATION_BUCKETS: &[f64] =
    &[0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

/// Describes every series to the recorder current now (its unit and help
/// text, the `# HELP` lines of a Prometheus exporter). Call it once after
/// installing the recorder; the series are reported without it too.
pub fn describe() {
    ::metrics::describe_counter!(
        CALLS,
        Unit::Count,
        "JSON-RPC calls answered, by method and outcome (ok, error, cancelled)"
    );
    ::metrics::describe_counter!(
        ERRORS,
        Unit::Count,
        "JSON-RPC calls answered with an error object, by method and error code"
    );
    ::metrics::describe_histogram!(
        CALL_DURATION,
        Unit::Seconds,
        "Time from dispatching a JSON-RPC call to its answer being ready, by method"
    );
    ::metrics::describe_gauge!(
        CALLS_IN_FLIGHT,
        Unit::Count,
        "JSON-RPC calls dispatched and not answered yet, by method"
    );
    ::metrics::describe_gauge!(OPEN_CONNECTIONS, Unit::Count, "Connections being served, by transport");
    ::metrics::describe_gauge!(OPEN_SUBSCRIPTIONS, Unit::Count, "Subscriptions open, by the method that opened them");
}

/// Where the series come from, for recorders that filter on it.
static METADATA: Metadata<'static> = Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

/// The series of one method, registered once.
struct MethodSeries {
    method: &'static str,
    ok: Counter,
    error: Counter,
    cancelled: Counter,
    duration: Histogram,
    in_flight: Gauge,
    /// Error counters by code, registered at each code's first error.
    errors: Mutex<Vec<(i64, Counter)>>,
}

/// Most error codes whose counters a method keeps at hand; past them, a
/// code's counter is looked up again at each error.
const KEPT_ERROR_CODES: usize = 16;

impl MethodSeries {
    fn new(method: &'static str, recorder: &dyn Recorder) -> Self {
        let label = Label::from_static_parts("method", method);
        let calls = |outcome: &'static str| {
            let key = Key::from_parts(CALLS, vec![label.clone(), Label::from_static_parts("outcome", outcome)]);
            recorder.register_counter(&key, &METADATA)
        };
        MethodSeries {
            method,
            ok: calls("ok"),
            error: calls("error"),
            cancelled: calls("cancelled"),
            duration: recorder.register_histogram(&Key::from_parts(CALL_DURATION, vec![label.clone()]), &METADATA),
            in_flight: recorder.register_gauge(&Key::from_parts(CALLS_IN_FLIGHT, vec![label]), &METADATA),
            errors: Mutex::default(),
        }
    }

    /// Counts the end of a call that started at `started`, answered with
    /// an error of code `error` or a result.
    fn answered(&self, started: Instant, error: Option<i64>) {
        self.in_flight.decrement(1.0);
        self.duration.record(started.elapsed().as_secs_f64());
        match error {
            None => self.ok.increment(1),
            Some(code) => {
                self.error.increment(1);
                self.count_error(code);
            }
        }
    }

    #[cold]
    fn count_error(&self, code: i64) {
        let mut errors = self.errors.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, counter)) = errors.iter().find(|(kept, _)| *kept == code) {
            counter.increment(1);
            return;
        }
        let labels = vec![Label::from_static_parts("method", self.method), Label::new("code", code.to_string())];
        let counter =
            ::metrics::with_recorder(|recorder| recorder.register_counter(&Key::from_parts(ERRORS, labels), &METADATA));
        counter.increment(1);
        if errors.len() < KEPT_ERROR_CODES {
            errors.push((code, counter));
        }
    }

    /// Counts a call given up before its answer: `rejected` when it never
    /// ran (turned away by the concurrency limit), else cancelled.
    #[cold]
    fn given_up(&self, rejected: bool) {
        self.in_flight.decrement(1.0);
        if rejected {
            self.error.increment(1);
            self.count_error(SERVER_OVERLOADED);
        } else {
            self.cancelled.increment(1);
        }
    }
}

/// The series of every method of an engine's router, looked up by name.
pub(crate) struct Series {
    methods: HashMap<&'static str, Arc<MethodSeries>, BuildHasherDefault<NameHasher>>,
    other: Arc<MethodSeries>,
}

impl Series {
    /// The series of `router`'s methods (and `rpc.discover`), registered
    /// with the recorder current now.
    pub(crate) fn of(router: &Router) -> Self {
        ::metrics::with_recorder(|recorder| {
            let names = router.method_names().into_iter().filter_map(|name| router.spec(name)).map(|spec| spec.name);
            let series = |name| Arc::new(MethodSeries::new(name, recorder));
            let methods = names.chain([DISCOVER_METHOD]).map(|name| (name, series(name))).collect();
            Series { methods, other: series(OTHER_METHOD) }
        })
    }

    /// Starts measuring a call of `method` (as the client named it).
    #[inline]
    pub(crate) fn start(&self, method: &str) -> Metered<'_> {
        let series = self.methods.get(method).unwrap_or(&self.other);
        series.in_flight.increment(1.0);
        Metered { series, started: Instant::now() }
    }
}

impl std::fmt::Debug for Series {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Series").field("methods", &self.methods.len()).finish()
    }
}

/// A call being measured, from its dispatch.
pub(crate) struct Metered<'s> {
    series: &'s Arc<MethodSeries>,
    started: Instant,
}

impl Metered<'_> {
    /// Counts the call if its answer is ready; an `async` call is counted
    /// by [`Metered::pending`].
    #[inline]
    pub(crate) fn ready(&self, called: &Called) {
        match called {
            Called::Written => self.series.answered(self.started, None),
            Called::Failed(error) => self.series.answered(self.started, Some(error.code())),
            Called::Pending(_) => {}
            Called::NotFound => self.series.answered(self.started, Some(METHOD_NOT_FOUND)),
        }
    }

    /// `future`, the rest of an `async` call: counted when it ends (a
    /// panic as -32603, as the engine answers it), or when it is dropped
    /// before.
    pub(crate) fn pending(self, future: MethodFuture) -> MethodFuture {
        let mut call = Unanswered { series: Arc::clone(self.series), started: self.started, ran: false, done: false };
        Box::pin(async move {
            call.ran = true;
            let result = CatchUnwind(future).await.unwrap_or_else(|panic| Err(panicked(call.series.method, &*panic)));
            call.answered(result.as_ref().err().map(ErrorObject::code));
            result
        })
    }
}

/// An `async` call until its answer is ready; counted as given up if
/// dropped before.
struct Unanswered {
    series: Arc<MethodSeries>,
    started: Instant,
    /// Polled at least once: dropped unpolled, it was turned away.
    ran: bool,
    /// Counted as answered.
    done: bool,
}

impl Unanswered {
    fn answered(&mut self, error: Option<i64>) {
        self.done = true;
        self.series.answered(self.started, error);
    }
}

impl Drop for Unanswered {
    fn drop(&mut self) {
        if !self.done {
            self.series.given_up(!self.ran);
        }
    }
}

/// A connection being served, counted in [`OPEN_CONNECTIONS`] until
/// dropped.
pub(crate) struct OpenConnection(Gauge);

impl OpenConnection {
    /// Counts a connection over `transport`.
    pub(crate) fn new(transport: &'static str) -> Self {
        OpenConnection(opened(OPEN_CONNECTIONS, "transport", transport))
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.decrement(1.0);
    }
}

/// An open subscription, counted in [`OPEN_SUBSCRIPTIONS`] until
/// [`OpenSubscription::close`]d or dropped.
pub(crate) struct OpenSubscription {
    gauge: Gauge,
    open: AtomicBool,
}

impl OpenSubscription {
    /// Counts a subscription opened by `method`.
    pub(crate) fn new(method: &'static str) -> Self {
        OpenSubscription { gauge: opened(OPEN_SUBSCRIPTIONS, "method", method), open: AtomicBool::new(true) }
    }

    /// It ended: no longer counted (the first time only).
    pub(crate) fn close(&self) {
        if self.open.swap(false, Ordering::AcqRel) {
            self.gauge.decrement(1.0);
        }
    }
}

impl Drop for OpenSubscription {
    fn drop(&mut self) {
        self.close();
    }
}

/// Gauge `name{label=value}` of the current recorder, one up.
fn opened(name: &'static str, label: &'static str, value: &'static str) -> Gauge {
    let key = Key::from_parts(name, vec![Label::from_static_parts(label, value)]);
    let gauge = ::metrics::with_recorder(|recorder| recorder.register_gauge(&key, &METADATA));
    gauge.increment(1.0);
    gauge
}
