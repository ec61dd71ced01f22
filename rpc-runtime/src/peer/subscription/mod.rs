//! Subscriptions: a call answered with a subscription id, then items sent
//! to the caller as notifications until either side ends it.
//!
//! On the wire (the Ethereum convention; the notification's method is set
//! per trait, `subscription` by default):
//!
//! ```text
//! --> {"jsonrpc":"2.0","method":"ticks","params":{"count":3},"id":1}
//! <-- {"jsonrpc":"2.0","result":7,"id":1}
//! <-- {"jsonrpc":"2.0","method":"subscription","params":{"subscription":7,"result":{"index":1}}}
//! <-- {"jsonrpc":"2.0","method":"subscription","params":{"subscription":7,"end":true}}
//! --> {"jsonrpc":"2.0","method":"unsubscribe_ticks","params":[7],"id":2}
//! <-- {"jsonrpc":"2.0","result":false,"id":2}
//! ```
//!
//! The last notification, sent when the server ends a subscription, has no
//! `result`: `"end": true` when its method returned, or `"error"` (an error
//! object) when it failed or its reader fell behind. A subscription the
//! client ends (unsubscribing, or closing the connection) gets no last
//! notification.
//!
//! [`server`] is the serving side (the connection's table of open
//! subscriptions, and what both kinds of subscription method share), with
//! [`SubscriptionSink`](server::SubscriptionSink) in `sink` and
//! [`PendingSubscription`](server::PendingSubscription) in `pending`;
//! [`client`] the calling side ([`Subscription`](client::Subscription), a
//! typed stream, and the table that routes incoming items to it).

pub(crate) mod client;
mod pending;
pub(crate) mod server;
mod sink;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// The params of a subscription's notification, as received.
#[derive(Deserialize)]
struct NotificationParams<'a> {
    #[serde(borrow)]
    subscription: &'a RawValue,
    /// An item (which may be `null`: present and absent differ).
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// Keeps `"result": null` (an item) apart from no `result` (the end).
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&'de RawValue>::deserialize(deserializer).map(Some)
}
