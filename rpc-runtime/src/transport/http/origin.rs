//! Which requests may be served, by the host they name and the page that
//! sent them: the `Host` check (DNS rebinding protection), the `Origin`
//! check (cross-site requests and WebSocket hijacking), and the RFC 3986
//! reading of `host[:port]` that both rely on.
//!
//! These checks are a security boundary, kept apart from the request
//! pipeline so they can be read and tested on their own; the HTTP
//! service, its WebSocket upgrades and MCP's Streamable HTTP endpoint all
//! call them (as methods of the service's shared [`Inner`]).

use std::net::IpAddr;

use bytes::Bytes;
use http::header::HeaderValue;
use http::{Response, StatusCode};
use http_body_util::Full;

use super::body::ends_with_ignore_case;
use super::responses::status_response;
use super::service::{Heads, HttpAddrs, Inner};

/// Which `Host` headers are served (DNS rebinding protection).
#[derive(Clone, Debug)]
pub(super) enum HostCheck {
    /// Loopback names only when the server is local: bound to a loopback
    /// address (or, when that is not known, called from one); any host
    /// otherwise.
    Auto,
    /// Any host.
    Any,
    /// These hosts (`name` matches any port, `name:port` that port only),
    /// plus the loopback names when the server is local.
    Only(Vec<String>),
}

impl Inner {
    /// [`Inner::check_host_of`], reading the headers of `request`: for
    /// MCP's Streamable HTTP endpoint, which checks the host before it
    /// hands a request on (the HTTP service reads the headers once for all
    /// its checks).
    #[cfg(feature = "mcp")]
    pub(crate) fn check_host<B>(
        &self,
        request: &http::Request<B>,
        addrs: Option<HttpAddrs>,
    ) -> Option<Response<Full<Bytes>>> {
        self.check_host_of(&Heads::of(request.headers()), request.uri(), request.version(), addrs)
    }

    /// 400 unless the request names one valid host (RFC 9112 §3.2), 403
    /// unless that host is allowed (see [`HostCheck`]); `None` when it is.
    ///
    /// The host is the target's authority when the request has one (an
    /// absolute-form target, HTTP/2's `:authority`: RFC 9112 §3.2.2 says
    /// the `Host` header is then ignored), else the one `Host` header. Two
    /// `Host` headers, a `Host` that is not `host[:port]` (userinfo, a
    /// port that is not digits, text after an IPv6 literal), or an
    /// HTTP/1.1 request without any host are refused before anything else
    /// reads them, so no malformed value can pass for a loopback name.
    ///
    /// `heads` are the headers of the request, already read.
    pub(super) fn check_host_of(
        &self,
        heads: &Heads<'_>,
        uri: &http::Uri,
        version: http::Version,
        addrs: Option<HttpAddrs>,
    ) -> Option<Response<Full<Bytes>>> {
        let host = match request_host(heads, uri, version) {
            Ok(host) => host,
            Err(why) => {
                tracing::debug!(why, "refused an HTTP request with a bad Host");
                return Some(status_response(StatusCode::BAD_REQUEST, &format!("Bad Request: {why}")));
            }
        };
        if self.host_allowed(host, addrs) {
            return None;
        }
        tracing::debug!(host = ?host, "refused an HTTP request for a host that is not allowed");
        Some(status_response(
            StatusCode::FORBIDDEN,
            "Forbidden: this Host is not served (DNS rebinding protection); the server can allow it with allowed_hosts",
        ))
    }

    /// Whether a request for `host` (its `Host` header, or its URI's
    /// authority) is served (see [`HostCheck`]).
    pub(crate) fn host_allowed(&self, host: Option<&str>, addrs: Option<HttpAddrs>) -> bool {
        let local = match addrs {
            Some(addrs) => addrs.local.ip().is_loopback(),
            None => false,
        };
        let extra: &[String] = match &self.config.hosts {
            HostCheck::Any => return true,
            HostCheck::Auto if !local => return true,
            HostCheck::Auto => &[],
            HostCheck::Only(hosts) => hosts,
        };
        // `extra` is lower case: comparing without regard to ASCII case is
        // comparing the lower-cased host, without allocating it.
        host.is_some_and(|host| {
            let name = host_name(host);
            (local && is_loopback_name(name))
                || extra.iter().any(|allowed| allowed.eq_ignore_ascii_case(host) || allowed.eq_ignore_ascii_case(name))
        })
    }

    /// 403 when an `Origin` is given and is neither the request's own (its
    /// `host`, see [`own_host`]) nor an allowed one; `None` otherwise.
    pub(crate) fn check_origin(
        &self,
        origin: Option<&HeaderValue>,
        host: Option<&str>,
    ) -> Option<Response<Full<Bytes>>> {
        let origin = origin.map(|value| value.to_str().ok());
        if self.origin_allowed(origin, host) {
            return None;
        }
        let origin = origin.flatten().unwrap_or("").to_ascii_lowercase();
        tracing::debug!(origin, "refused an HTTP request from an origin that is not allowed");
        Some(status_response(
            StatusCode::FORBIDDEN,
            "Forbidden: requests from this Origin are not allowed; the server can allow it with allowed_origins or cors",
        ))
    }

    /// Whether a request with this `Origin` (none; or one, as text when
    /// it is visible ASCII) for `host` is allowed.
    pub(crate) fn origin_allowed(&self, origin: Option<Option<&str>>, host: Option<&str>) -> bool {
        if self.config.any_origin {
            return true;
        }
        let Some(origin) = origin else { return true };
        let origin = origin.unwrap_or("");
        let same_origin = host.is_some_and(|host| {
            let authority = origin.split_once("://").map_or("", |(_, authority)| authority);
            authority.eq_ignore_ascii_case(host)
        });
        // The allowed origins are lower case (see `allowed_origins`).
        same_origin || self.config.origins.iter().any(|allowed| allowed.eq_ignore_ascii_case(origin))
    }
}

/// The host `request` is for, which a same-origin `Origin` names: its
/// target's authority when it has one (HTTP/2 sends `:authority`, not
/// `Host`), else its `Host` header.
#[cfg(feature = "mcp")]
pub(crate) fn own_host<B>(request: &http::Request<B>) -> Option<&str> {
    Heads::of_request(request).own_host()
}

/// The host a request is for (see [`Inner::check_host_of`]), or why it
/// names none that can be served.
fn request_host<'a>(
    heads: &Heads<'a>,
    uri: &'a http::Uri,
    version: http::Version,
) -> Result<Option<&'a str>, &'static str> {
    if heads.hosts > 1 {
        return Err("more than one Host header (RFC 9112 section 3.2)");
    }
    if let Some(authority) = uri.authority() {
        let authority = authority.as_str();
        if !is_authority(authority) {
            return Err("the request target's authority is not host[:port]");
        }
        return Ok(Some(authority));
    }
    match heads.host {
        Some(value) => match value.to_str() {
            Ok(host) if is_authority(host) => Ok(Some(host)),
            _ => Err("the Host header is not host[:port] (RFC 9112 section 3.2)"),
        },
        None if version == http::Version::HTTP_11 => Err("an HTTP/1.1 request needs a Host header"),
        None => Ok(None),
    }
}

/// Whether `text` is `host[:port]` as RFC 3986 writes an authority
/// without userinfo: an IP literal in brackets or a name of unreserved,
/// percent-encoded and sub-delimiter characters (an IPv4 address is such a
/// name), then an optional port of at most five digits.
fn is_authority(text: &str) -> bool {
    let (host_ok, port) = match text.strip_prefix('[') {
        Some(literal) => {
            let Some((inside, after)) = literal.split_once(']') else { return false };
            let port = match after {
                "" => "",
                _ => match after.strip_prefix(':') {
                    Some(port) => port,
                    None => return false,
                },
            };
            let address = inside.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
            (!inside.is_empty() && address, port)
        }
        None => {
            let (host, port) = text.rsplit_once(':').unwrap_or((text, ""));
            (!host.is_empty() && host.bytes().all(is_name_byte), port)
        }
    };
    host_ok && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit())
}

/// A byte of a host name (RFC 3986 `reg-name`: unreserved,
/// percent-encoded or a sub-delimiter).
fn is_name_byte(b: u8) -> bool {
    matches!(b, b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'%' | b'!' | b'$' | b'&' | b'\''..=b',' | b';' | b'=')
}

/// `host` of `host:port`, `[::1]` of `[::1]:port`.
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    // A short reverse scan (host names are short; memrchr costs more).
    host.bytes().rposition(|byte| byte == b':').map_or(host, |colon| &host[..colon])
}

/// Whether `name` (in any ASCII case) names this machine: `localhost`, a
/// `.localhost` name, or a loopback address.
fn is_loopback_name(name: &str) -> bool {
    if name == "127.0.0.1" || name.eq_ignore_ascii_case("localhost") || ends_with_ignore_case(name, ".localhost") {
        return true;
    }
    let bare = name.trim_start_matches('[').trim_end_matches(']');
    bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use http::{Request, header};

    use super::*;

    #[test]
    fn a_host_is_one_authority_without_userinfo() {
        for good in
            ["localhost", "localhost:8080", "127.0.0.1:80", "[::1]", "[::1]:8080", "app.localhost", "a-b.example:"]
        {
            assert!(is_authority(good), "{good}");
        }
        for bad in [
            "localhost:80@evil.com",
            "localhost:evil",
            "[::1].evil.com",
            "localhost:1:2",
            "user@localhost",
            "",
            ":80",
            "[]",
            "[::1",
            "local host",
            "localhost:123456",
        ] {
            assert!(!is_authority(bad), "{bad}");
        }
        let host_of = |hosts: &[&'static str], target: &str| {
            let mut request = Request::builder().uri(target);
            for host in hosts {
                request = request.header(header::HOST, *host);
            }
            let request = request.body(()).unwrap();
            let heads = Heads::of(request.headers());
            request_host(&heads, request.uri(), request.version()).map(|host| host.map(str::to_owned))
        };
        assert_eq!(host_of(&["localhost:1"], "/"), Ok(Some("localhost:1".to_owned())));
        assert!(host_of(&["localhost", "localhost"], "/").is_err());
        assert!(host_of(&[], "/").is_err(), "HTTP/1.1 without Host");
        assert!(host_of(&["localhost:80@evil.com"], "/").is_err());
        // An absolute-form target's authority is the host, whatever the header says.
        assert_eq!(host_of(&["localhost"], "http://evil.example/"), Ok(Some("evil.example".to_owned())));
        assert!(host_of(&["localhost"], "http://localhost@evil.example/").is_err());
    }

    #[test]
    fn hosts_are_read_as_browsers_send_them() {
        assert_eq!(host_name("localhost:8080"), "localhost");
        assert_eq!(host_name("[::1]:8080"), "[::1]");
        assert_eq!(host_name("example.com"), "example.com");
        assert!(is_loopback_name("127.0.0.1") && is_loopback_name("[::1]") && is_loopback_name("app.localhost"));
        assert!(!is_loopback_name("evil.example") && !is_loopback_name("127.0.0.1.nip.io"));
    }
}
