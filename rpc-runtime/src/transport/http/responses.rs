//! The HTTP error answers every endpoint on these settings shares (the
//! JSON-RPC service, its WebSocket upgrades, MCP's Streamable HTTP, the
//! standalone server's own refusals): a status with a plain-text reason.
//!
//! In one place so that every refusal has the same shape, and the reasons
//! a client reads stay consistent.

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Method, Response, StatusCode};
use http_body_util::Full;

use crate::transport::hook::Refused;

/// 413 for a body over `max_body` bytes.
pub(super) fn too_large(max_body: usize) -> Response<Full<Bytes>> {
    status_response(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("Payload Too Large: the body exceeds the limit of {max_body} bytes"),
    )
}

/// 401 (with `WWW-Authenticate`) or 403 for a refusal of the hook; the
/// reason stays in the server's logs.
pub(super) fn refusal(refused: &Refused) -> Response<Full<Bytes>> {
    if refused.is_unauthorized() {
        let mut response =
            status_response(StatusCode::UNAUTHORIZED, "Unauthorized: this service needs credentials it accepts");
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        response
    } else {
        status_response(StatusCode::FORBIDDEN, "Forbidden: this caller may not use this service")
    }
}

/// An HTTP error answer with a plain-text reason.
pub(crate) fn status_response(status: StatusCode, reason: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{reason}\n"))));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

/// 405, with `Allow: POST`, for a request that is neither a `POST` nor a
/// WebSocket upgrade.
pub(super) fn method_not_allowed(method: &Method) -> Response<Full<Bytes>> {
    let mut response = status_response(
        StatusCode::METHOD_NOT_ALLOWED,
        &format!("Method Not Allowed: JSON-RPC over HTTP takes POST, not {method}"),
    );
    response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
    response
}
