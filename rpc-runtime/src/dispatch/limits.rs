//! [`Limits`]: what one connection may make a server hold.
//!
//! The connection (`peer::connection`) reads most of them (concurrency,
//! queued bytes, subscriptions and their buffers), the transports read
//! the message size (the framing, HTTP bodies, NATS), and the engine the
//! batch length. They live in `dispatch` because the
//! [`Engine`](crate::dispatch::Engine) carries them to every transport it
//! is served over.

/// Limits that protect a server from oversized or abusive input.
///
/// Start from the defaults and change what you need:
///
/// ```
/// use rpc_runtime::Limits;
///
/// let limits = Limits::default().max_message_size(64 * 1024).max_batch_len(10);
/// assert_eq!((limits.max_message_size, limits.max_batch_len), (64 * 1024, 10));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Limits {
    /// Largest accepted message, in bytes (default 10 MiB). A larger frame is
    /// skipped and answered with -32600; the connection stays usable.
    pub max_message_size: usize,
    /// Most entries accepted in one batch (default 1,000).
    pub max_batch_len: usize,
    /// Most `async` requests running at once on one connection (default
    /// 1,024), counting each waiting entry of a batch. A request beyond that
    /// (or a batch whose entries do not all fit) is answered with -32000 at
    /// once.
    pub max_concurrent_requests: usize,
    /// Most bytes of answers and outgoing calls queued on one connection
    /// and not yet written (default 4 MiB). Past it, tasks with more to
    /// send wait, and the connection stops reading new requests until the
    /// other side reads: a peer that never reads costs at most this much
    /// (plus the message being answered). A single larger message is still
    /// sent, alone.
    pub max_queued_bytes: usize,
    /// Most subscriptions open at once on one connection (default 1,024).
    /// A subscribe call beyond it is answered with -32000 and opens nothing.
    pub max_subscriptions: usize,
    /// Most items of one subscription waiting to be written (default
    /// 1,024), on either side. A server's `SubscriptionSink::send` waits for room;
    /// `SubscriptionSink::try_send` finding no room ends the subscription with
    /// [`SUBSCRIPTION_LAGGED`](crate::wire::SUBSCRIPTION_LAGGED) (the slow-reader
    /// policy). On a client, a stream whose items are not read ends with
    /// [`ClientError::Lagged`](crate::ClientError::Lagged) and unsubscribes.
    pub subscription_buffer: usize,
}

impl Limits {
    /// These limits with the largest accepted message, in bytes set to `max_message_size` (see the field).
    #[must_use = "a builder does nothing until used"]
    pub const fn max_message_size(mut self, max_message_size: usize) -> Self {
        self.max_message_size = max_message_size;
        self
    }

    /// These limits with the most entries accepted in one batch set to `max_batch_len` (see the field).
    #[must_use = "a builder does nothing until used"]
    pub const fn max_batch_len(mut self, max_batch_len: usize) -> Self {
        self.max_batch_len = max_batch_len;
        self
    }

    /// These limits with the most `async` requests running at once on one connection set to `max_concurrent_requests` (see the field).
    #[must_use = "a builder does nothing until used"]
    pub const fn max_concurrent_requests(mut self, max_concurrent_requests: usize) -> Self {
        self.max_concurrent_requests = max_concurrent_requests;
        self
    }

    /// These limits with the most bytes of answers and outgoing calls queued on one connection set to `max_queued_bytes` (see the field).
    #[must_use = "a builder does nothing until used"]
    pub const fn max_queued_bytes(mut self, max_queued_bytes: usize) -> Self {
        self.max_queued_bytes = max_queued_bytes;
        self
    }

    /// These limits with the most subscriptions open at once on one connection set to `max_subscriptions` (see the field).
    #[must_use = "a builder does nothing until used"]
    pub const fn max_subscriptions(mut self, max_subscriptions: usize) -> Self {
        self.max_subscriptions = max_subscriptions;
        self
    }

    /// These limits with the most items of one subscription waiting to be written set to `subscription_buffer` (see the field).
    #[must_use = "a builder does nothing until used"]
    pub const fn subscription_buffer(mut self, subscription_buffer: usize) -> Self {
        self.subscription_buffer = subscription_buffer;
        self
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_message_size: 10 * 1024 * 1024,
            max_batch_len: 1_000,
            max_concurrent_requests: 1_024,
            max_queued_bytes: 4 * 1024 * 1024,
            max_subscriptions: 1_024,
            subscription_buffer: 1_024,
        }
    }
}
