//! An HTTP service as an OAuth 2.1 resource server, the way MCP's
//! authorization specification and every MCP host expect: bearer tokens
//! checked on every request, the token's scopes as the caller's
//! [`Permissions`], and the documents and challenges that let a client
//! find where to get a token.
//!
//! Turn it on with [`Http::oauth`](crate::transport::http::Http::oauth)
//! (plain JSON-RPC over HTTP and WebSocket upgrades) or the same on the
//! `Http` given to `McpHttp::http` (MCP's Streamable HTTP). Then:
//!
//! | request | answer |
//! |---|---|
//! | `GET /.well-known/oauth-protected-resource` + the resource's path (and without it) | the RFC 9728 metadata: `resource`, `authorization_servers`, `scopes_supported`, `bearer_methods_supported` |
//! | no `Authorization: Bearer` token | 401, `WWW-Authenticate: Bearer resource_metadata="…", scope="…"` |
//! | a token the verifier rejects (expired, another audience or issuer, an unknown key, a bad signature) | 401, `WWW-Authenticate: Bearer error="invalid_token", resource_metadata="…"`; the reason goes to the logs (`debug`), never to the client |
//! | a valid token: the request is served, its scopes are the caller's [`Permissions`] and the [`Grant`] is a [`Context`] extension | |
//! | a single call of a method whose `#[rpc(requires(...))]` the scopes do not meet | 403, `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`, with the JSON-RPC error (-32003) as the body; inside a batch or over a WebSocket, just the JSON-RPC error |
//!
//! and lists are per caller: `rpc.discover`, MCP's `tools/list`,
//! `resources/list`, `resources/templates/list` and `prompts/list` show
//! only what the caller's permissions let it call.
//!
//! Verification is behind [`VerifyToken`]: [`JwtVerifier`] checks JWT
//! access tokens against the issuer's published keys (RFC 8414 metadata,
//! then its JWKS); a closure or your own type checks opaque tokens (by
//! RFC 7662 introspection, or a table of API keys). A verified token's
//! grant is kept (at most [`GRANT_CACHE_SIZE`] tokens, each until it
//! expires or for at most [`GRANT_CACHE_TTL`]), so a client that sends the
//! same token again costs a lookup, not a signature check.
//!
//! ```no_run
//! # async fn run(router: rpc_runtime::Router) -> std::io::Result<()> {
//! use rpc_runtime::Server;
//! use rpc_runtime::transport::http::Http;
//! use rpc_runtime::transport::http::oauth::ResourceServer;
//!
//! // Tokens from this issuer, for this resource (their `aud`). An
//! // `https://` issuer needs `JwtVerifier::tls` (the `tls` feature): see
//! // the guide below.
//! let protected = ResourceServer::jwt("https://api.example.com/rpc", "http://127.0.0.1:9000")?;
//! let http = Http::default().oauth(protected);
//! Server::new(router).serve(http.bind("0.0.0.0:8080").await?).await
//! # }
//! ```
//!
//! The connection hook ([`Server::on_connect`](crate::Server::on_connect))
//! still runs, after the token was accepted: its context already holds the
//! [`Permissions`] and the [`Grant`], to add to or refuse.
//!
//! [`guide::protecting`](crate::guide::protecting) has the rest: a hook
//! or OAuth, setting up an issuer (and `https://` ones), opaque tokens and
//! introspection, what clients see, mounting in axum (the metadata path
//! routed to the same service), and operations.

mod fetch;
mod jwt;

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::hash::{BuildHasherDefault, Hasher};
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderValue};
use http::{Response, StatusCode};
use http_body_util::Full;

pub use jwt::{DEFAULT_LEEWAY, DEFAULT_REFRESH_COOLDOWN, JwtVerifier};

use crate::dispatch::context::{Context, Extensions};
use crate::dispatch::permissions::Permissions;
use crate::transport::hook::bearer_bytes;

/// Tokens whose grants are kept at most, per protected service.
pub const GRANT_CACHE_SIZE: usize = 4096;

/// How long a grant is kept at most (a token's own expiry comes first).
pub const GRANT_CACHE_TTL: Duration = Duration::from_secs(300);

/// The well-known path of protected-resource metadata (RFC 9728).
const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// What a verified token grants: its scopes (the caller's
/// [`Permissions`]), and who it was issued to. Handlers read it with
/// `cx.extension::<Grant>()`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grant {
    scopes: Vec<String>,
    subject: Option<String>,
    client_id: Option<String>,
    expires_at: Option<SystemTime>,
}

impl Grant {
    /// A grant of these scopes.
    pub fn new<I, S>(scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Grant { scopes: scopes.into_iter().map(Into::into).collect(), ..Grant::default() }
    }

    /// The same, for this subject (a JWT's `sub`: the user).
    #[must_use = "a builder does nothing until used"]
    pub fn subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    /// The same, to this client (a JWT's `client_id` or `azp`).
    #[must_use = "a builder does nothing until used"]
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// The same, valid until `at` (a JWT's `exp`); the grant is not kept
    /// past it.
    #[must_use = "a builder does nothing until used"]
    pub fn expires_at(mut self, at: SystemTime) -> Self {
        self.expires_at = Some(at);
        self
    }

    /// The scopes granted.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Who the token speaks for, when it says.
    pub fn subject_id(&self) -> Option<&str> {
        self.subject.as_deref()
    }

    /// The client the token was issued to, when it says.
    pub fn client(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// When the token expires, when it says.
    pub fn expiry(&self) -> Option<SystemTime> {
        self.expires_at
    }
}

/// Why a token was not accepted: for the server's logs only (the client
/// gets `error="invalid_token"` and no reason).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidToken(Cow<'static, str>);

impl InvalidToken {
    /// A rejection, for this reason.
    pub fn new(reason: impl Into<Cow<'static, str>>) -> Self {
        InvalidToken(reason.into())
    }

    /// The reason.
    pub fn reason(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for InvalidToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid access token: {}", self.0)
    }
}

impl std::error::Error for InvalidToken {}

/// The future [`VerifyToken::verify`] returns.
pub type VerifyFuture<'a> = Pin<Box<dyn Future<Output = Result<Grant, InvalidToken>> + Send + 'a>>;

/// Checks a bearer token: what it grants, or why it is not accepted.
///
/// [`JwtVerifier`] is one; for opaque tokens write your own (calling the
/// authorization server's RFC 7662 introspection endpoint, say), or give
/// a closure that answers at once:
///
/// ```
/// use rpc_runtime::transport::http::oauth::{Grant, InvalidToken, ResourceServer};
///
/// let api_keys = |token: &str| match token {
///     "k-admin" => Ok(Grant::new(["read", "write"]).subject("admin")),
///     "k-reader" => Ok(Grant::new(["read"]).subject("reader")),
///     _ => Err(InvalidToken::new("not an API key of ours")),
/// };
/// let protected = ResourceServer::new("https://api.example.com/rpc", api_keys)?
///     .authorization_server("https://auth.example.com");
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// A grant is kept for the same token (see [`GRANT_CACHE_TTL`]): a
/// verifier is asked again only once it expired, was pushed out, or the
/// token is new.
pub trait VerifyToken: Send + Sync + 'static {
    /// What `token` grants, or why it is not accepted.
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a>;
}

impl<F> VerifyToken for F
where
    F: Fn(&str) -> Result<Grant, InvalidToken> + Send + Sync + 'static,
{
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(std::future::ready(self(token)))
    }
}

/// A protected resource: its identifier (the URL clients use, which
/// tokens name as their audience), who issues its tokens, and how they
/// are checked. Give it to [`Http::oauth`](crate::transport::http::Http::oauth).
pub struct ResourceServer {
    resource: String,
    /// `https://host` of the resource, where its metadata is published.
    origin: String,
    /// The resource's path (`/mcp`), or empty for the root.
    path: String,
    authorization_servers: Vec<String>,
    scopes: Option<Vec<String>>,
    resource_name: Option<String>,
    documentation: Option<String>,
    verifier: Box<dyn VerifyToken>,
    grants: GrantCache,
}

impl fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceServer")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl ResourceServer {
    /// The resource at `resource` (an absolute `http://` or `https://`
    /// URL: the one clients connect to), its tokens checked by `verifier`.
    /// Name its authorization servers with
    /// [`authorization_server`](ResourceServer::authorization_server).
    pub fn new(resource: impl Into<String>, verifier: impl VerifyToken) -> io::Result<Self> {
        let resource = resource.into();
        let uri: http::Uri = resource.parse().map_err(|err| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("the resource `{resource}` is not a URL: {err}"))
        })?;
        let (Some(scheme @ ("http" | "https")), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the resource `{resource}` must be an absolute http:// or https:// URL"),
            ));
        };
        if uri.query().is_some() || resource.contains('#') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the resource `{resource}` must not have a query or fragment (RFC 8707)"),
            ));
        }
        let origin = format!("{scheme}://{authority}");
        let path = uri.path().trim_end_matches('/').to_owned();
        Ok(ResourceServer {
            resource,
            origin,
            path,
            authorization_servers: Vec::new(),
            scopes: None,
            resource_name: None,
            documentation: None,
            verifier: Box::new(verifier),
            grants: GrantCache::default(),
        })
    }

    /// The resource at `resource`, with JWT access tokens issued by
    /// `issuer` for it ([`JwtVerifier`] with `resource` as the audience),
    /// and `issuer` as its authorization server. The verifier fetches
    /// without TLS settings, so this suits an `http://` issuer; for an
    /// `https://` one, give [`ResourceServer::new`] a
    /// `JwtVerifier::new(issuer, resource).tls(..)` (the `tls` feature).
    pub fn jwt(resource: impl Into<String>, issuer: impl Into<String>) -> io::Result<Self> {
        let resource = resource.into();
        let issuer = issuer.into();
        let verifier = JwtVerifier::new(issuer.clone(), resource.clone());
        Ok(ResourceServer::new(resource, verifier)?.authorization_server(issuer))
    }

    /// The same, with `issuer` among the authorization servers listed in
    /// the metadata (clients get tokens there).
    #[must_use = "a builder does nothing until used"]
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// The same, listing these scopes in the metadata and in the
    /// challenge of a request without a token. By default, every
    /// permission a served method requires (`#[rpc(requires(...))]`).
    #[must_use = "a builder does nothing until used"]
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The same, with a name for people (`resource_name`).
    #[must_use = "a builder does nothing until used"]
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// The same, with a page for developers (`resource_documentation`).
    #[must_use = "a builder does nothing until used"]
    pub fn documentation(mut self, url: impl Into<String>) -> Self {
        self.documentation = Some(url.into());
        self
    }

    /// The resource identifier.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Where the metadata is published: the well-known path with the
    /// resource's path after it (RFC 9728, section 3.1).
    pub fn metadata_url(&self) -> String {
        format!("{}{METADATA_PATH}{}", self.origin, self.path)
    }

    /// The guard of one service, whose methods require `required`.
    pub(crate) fn guard(self: &Arc<Self>, required: Vec<&'static str>) -> Guard {
        let scopes: Vec<String> = match &self.scopes {
            Some(scopes) => scopes.clone(),
            None => required.iter().map(|&scope| scope.to_owned()).collect(),
        };
        let metadata = Metadata {
            resource: &self.resource,
            authorization_servers: &self.authorization_servers,
            scopes_supported: &scopes,
            bearer_methods_supported: &["header"],
            resource_name: self.resource_name.as_deref(),
            resource_documentation: self.documentation.as_deref(),
        };
        let metadata = serde_json::to_vec(&metadata).unwrap_or_else(|err| unreachable!("strings serialize: {err}"));
        let metadata_url = self.metadata_url();
        let scope = (!scopes.is_empty()).then(|| scopes.join(" "));
        let missing = challenge(None, scope.as_deref(), &metadata_url);
        let invalid = challenge(Some("invalid_token"), None, &metadata_url);
        Guard {
            server: Arc::clone(self),
            metadata: Bytes::from(metadata),
            metadata_path: format!("{METADATA_PATH}{}", self.path),
            metadata_url,
            missing,
            invalid,
        }
    }
}

/// The RFC 9728 document.
#[derive(serde::Serialize)]
struct Metadata<'a> {
    resource: &'a str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    authorization_servers: &'a [String],
    scopes_supported: &'a [String],
    bearer_methods_supported: &'a [&'a str],
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_documentation: Option<&'a str>,
}

/// A `WWW-Authenticate: Bearer` challenge (RFC 6750, section 3).
fn challenge(error: Option<&str>, scope: Option<&str>, metadata_url: &str) -> HeaderValue {
    let mut value = String::from("Bearer ");
    let mut params = Vec::new();
    if let Some(error) = error {
        params.push(format!("error=\"{error}\""));
    }
    if let Some(scope) = scope {
        params.push(format!("scope=\"{}\"", quoted(scope)));
    }
    params.push(format!("resource_metadata=\"{}\"", quoted(metadata_url)));
    value.push_str(&params.join(", "));
    HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
}

/// `text` inside a quoted string: without `"` and `\`, which scopes and
/// URLs do not have anyway.
fn quoted(text: &str) -> Cow<'_, str> {
    if text.contains(['"', '\\']) { Cow::Owned(text.replace(['"', '\\'], "")) } else { Cow::Borrowed(text) }
}

/// A resource server as one service applies it: the metadata and the
/// challenges made once.
#[derive(Clone)]
pub(crate) struct Guard {
    server: Arc<ResourceServer>,
    metadata: Bytes,
    metadata_path: String,
    metadata_url: String,
    /// For a request without a token (and a hook's 401).
    missing: HeaderValue,
    /// For a token not accepted.
    invalid: HeaderValue,
}

impl fmt::Debug for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guard").field("server", &self.server).finish_non_exhaustive()
    }
}

/// What [`Guard::lookup`] found.
pub(crate) enum Lookup {
    /// No bearer token.
    Missing,
    /// The grant kept for the token, as context extensions.
    Kept(Extensions),
    /// A token to verify ([`Guard::admit`]).
    Verify,
}

/// Why a request was not let through.
pub(crate) enum Challenge {
    /// No bearer token.
    Missing,
    /// A token not accepted.
    Invalid,
}

impl Guard {
    /// The metadata document, for a `GET` of `path` (the path-suffixed
    /// well-known path, or the bare one).
    pub(crate) fn metadata_for(&self, path: &str) -> Option<Response<Full<Bytes>>> {
        if path != self.metadata_path && path != METADATA_PATH {
            return None;
        }
        let mut response = Response::new(Full::new(self.metadata.clone()));
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        // Clients in browsers read it from other origins.
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("max-age=3600"));
        Some(response)
    }

    /// What is known at once of the bearer token of a request with
    /// `headers`: none, a grant kept for it, or a token to verify.
    #[inline]
    pub(crate) fn lookup(&self, headers: &HeaderMap) -> Lookup {
        let Some(token) = bearer_bytes(headers) else {
            return Lookup::Missing;
        };
        match self.server.grants.get(token) {
            Some(extensions) => Lookup::Kept(extensions),
            None => Lookup::Verify,
        }
    }

    /// Checks the bearer token of a request with `headers`: `cx` with
    /// the grant's [`Permissions`] and [`Grant`], or why not.
    pub(crate) async fn admit(&self, headers: &HeaderMap, cx: Context) -> Result<Context, Challenge> {
        let Some(token) = bearer_token(headers) else {
            return Err(Challenge::Missing);
        };
        if let Some(extensions) = self.server.grants.get(token.as_bytes()) {
            return Ok(with_kept(cx, &extensions));
        }
        match self.server.verifier.verify(token).await {
            Ok(grant) => {
                // The verifier judged the expiry (with its leeway); a
                // grant past it is used once, not kept.
                let expires = grant.expires_at;
                let extensions =
                    Context::new().with_extension(Permissions::new(grant.scopes.iter().cloned())).with_extension(grant);
                let extensions = extensions.extensions;
                self.server.grants.put(token, extensions.clone(), expires);
                Ok(with_kept(cx, &extensions))
            }
            Err(invalid) => {
                tracing::debug!(reason = invalid.reason(), "access token refused");
                Err(Challenge::Invalid)
            }
        }
    }

    /// The 401 of `challenge`.
    pub(crate) fn unauthorized(&self, challenge: Challenge) -> Response<Full<Bytes>> {
        let (reason, value) = match challenge {
            Challenge::Missing => (
                "Unauthorized: send an OAuth access token (`Authorization: Bearer ...`); see the resource metadata",
                &self.missing,
            ),
            Challenge::Invalid => ("Unauthorized: the access token was not accepted; get a new one", &self.invalid),
        };
        let mut response = super::responses::status_response(StatusCode::UNAUTHORIZED, reason);
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value.clone());
        response
    }

    /// The challenge of a 401 from the connection hook.
    pub(crate) fn hook_challenge(&self) -> &HeaderValue {
        &self.missing
    }

    /// The `WWW-Authenticate` of a 403 for a call whose method requires
    /// what the token's scopes do not grant.
    pub(crate) fn insufficient_scope(&self, scopes: &[String]) -> HeaderValue {
        challenge(Some("insufficient_scope"), Some(&scopes.join(" ")), &self.metadata_url)
    }
}

/// The token of `Authorization: Bearer <token>` in `headers`, read as
/// [`ConnectionInfo::bearer_token`](crate::ConnectionInfo::bearer_token)
/// reads it (the scheme in any case, RFC 9110 section 11.1): for code
/// that holds headers rather than a connection's information.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    std::str::from_utf8(bearer_bytes(headers)?).ok()
}

/// How long the grant of a connection's context has left, if it expires.
#[cfg(feature = "ws")]
pub(crate) fn time_left(cx: &Context) -> Option<Duration> {
    let expiry = cx.extension::<Grant>()?.expiry()?;
    Some(expiry.duration_since(SystemTime::now()).unwrap_or_default())
}

/// Runs a long-lived connection (a WebSocket) admitted with a grant that
/// has `left` to live: when it expires (or `server` drains first), `own`,
/// the connection's drain signal, is raised, so that it stops reading,
/// answers what is running and closes.
#[cfg(feature = "ws")]
pub(crate) async fn run_until_expiry<F: Future>(
    run: F,
    left: Duration,
    own: &crate::dispatch::signal::Signal,
    server: Option<&crate::dispatch::signal::Signal>,
) -> F::Output {
    let mut run = std::pin::pin!(run);
    let server = async {
        match server {
            Some(signal) => signal.raised().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        out = &mut run => return out,
        () = tokio::time::sleep(left) => tracing::debug!("a connection's access token expired: closing it"),
        () = server => {}
    }
    own.raise();
    run.await
}

/// The scopes to name in the 403 of an answer that is a single
/// permission error (-32003): what its `data.requires` says. `None` for
/// any other answer (a batch's too).
pub(crate) fn denied_scopes(out: &[u8]) -> Option<Vec<String>> {
    #[derive(serde::Deserialize)]
    struct Reply<'a> {
        #[serde(borrow)]
        error: Option<Error<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Error<'a> {
        code: i64,
        #[serde(borrow)]
        data: Option<&'a serde_json::value::RawValue>,
    }
    if out.first() != Some(&b'{') || memchr::memmem::find(out, b"-32003").is_none() {
        return None;
    }
    let Reply { error: Some(error) } = serde_json::from_slice::<Reply>(out).ok()? else {
        return None;
    };
    if error.code != crate::wire::error::PERMISSION_DENIED {
        return None;
    }
    Some(error.data.and_then(crate::dispatch::permissions::named_in).unwrap_or_default())
}

/// `cx` with every value of `kept` added: sharing the table when `cx`
/// has none yet (no copy, no allocation: the common case).
pub(crate) fn with_kept(mut cx: Context, kept: &Extensions) -> Context {
    let Some(added) = &kept.0 else {
        return cx;
    };
    match cx.extensions.0.take() {
        None => cx.extensions = kept.clone(),
        Some(own) => {
            let mut map = (*own).clone();
            map.extend(added.iter().map(|(id, value)| (*id, Arc::clone(value))));
            cx.extensions = Extensions(Some(Arc::new(map)));
        }
    }
    cx
}

/// Verified tokens' grants, as context extensions ready to attach,
/// bounded in number and age.
#[derive(Default)]
struct GrantCache(Mutex<HashMap<TokenKey, Kept, BuildHasherDefault<TailHasher>>>);

struct Kept {
    extensions: Extensions,
    until: Instant,
}

impl GrantCache {
    #[inline]
    fn get(&self, token: &[u8]) -> Option<Extensions> {
        let grants = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let kept = grants.get(token)?;
        (kept.until > Instant::now()).then(|| kept.extensions.clone())
    }

    fn put(&self, token: &str, extensions: Extensions, expires: Option<SystemTime>) {
        let now = Instant::now();
        let left = match expires.map(|at| at.duration_since(SystemTime::now())) {
            None => GRANT_CACHE_TTL,
            Some(Ok(left)) if !left.is_zero() => left.min(GRANT_CACHE_TTL),
            // Expired already (accepted within the verifier's leeway).
            Some(_) => return,
        };
        let until = now + left;
        let mut grants = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if grants.len() >= GRANT_CACHE_SIZE {
            grants.retain(|_, kept| kept.until > now);
            if grants.len() >= GRANT_CACHE_SIZE {
                // Full of live grants: forget them all (they are verified
                // again when used) rather than grow.
                grants.clear();
            }
        }
        grants.insert(TokenKey(token.as_bytes().into()), Kept { extensions, until });
    }
}

/// A token as a key: hashed by its last bytes (a signature's, in a JWT;
/// see [`TailHasher`]), compared whole. Only verified tokens are kept, so
/// a client cannot fill the table with keys of its choosing.
#[derive(PartialEq, Eq, Hash)]
struct TokenKey(Box<[u8]>);

impl std::borrow::Borrow<[u8]> for TokenKey {
    fn borrow(&self) -> &[u8] {
        &self.0
    }
}

/// Hashes what it is given by its last 16 bytes: a token's tail tells
/// tokens apart as well as the whole, for a fraction of the work.
#[derive(Default)]
struct TailHasher(std::collections::hash_map::DefaultHasher);

impl Hasher for TailHasher {
    fn finish(&self) -> u64 {
        self.0.finish()
    }

    fn write(&mut self, bytes: &[u8]) {
        let start = bytes.len().saturating_sub(16);
        self.0.write(&bytes[start..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(scope: &str) -> Extensions {
        Context::new().with_extension(Grant::new([scope])).extensions
    }

    #[test]
    fn grants_are_kept_by_the_whole_token_and_never_past_their_expiry() {
        let cache = GrantCache::default();
        // Two tokens with the same last 16 bytes: the same hash, told
        // apart by the whole comparison.
        let (a, b) = ("aaaa.same-tail-1234567890", "bbbb.same-tail-1234567890");
        cache.put(a, kept("a"), None);
        assert!(cache.get(a.as_bytes()).is_some());
        assert!(cache.get(b.as_bytes()).is_none());
        cache.put(b, kept("b"), Some(SystemTime::now() + Duration::from_secs(60)));
        let grant = |token: &str| {
            let extensions = cache.get(token.as_bytes()).unwrap();
            with_kept(Context::new(), &extensions).extension::<Grant>().unwrap().scopes()[0].clone()
        };
        assert_eq!((grant(a), grant(b)), ("a".to_owned(), "b".to_owned()));
        // Expired already (accepted within a verifier's leeway): not kept.
        cache.put("c", kept("c"), Some(SystemTime::now() - Duration::from_secs(1)));
        assert!(cache.get(b"c").is_none());
    }

    #[test]
    fn the_cache_never_holds_more_than_its_bound() {
        let cache = GrantCache::default();
        for n in 0..GRANT_CACHE_SIZE * 2 + 7 {
            cache.put(&format!("token-{n}"), kept("s"), None);
            let held = cache.0.lock().unwrap().len();
            assert!(held <= GRANT_CACHE_SIZE, "{held} grants after {n} puts");
        }
        // The newest is always kept.
        assert!(cache.get(format!("token-{}", GRANT_CACHE_SIZE * 2 + 6).as_bytes()).is_some());
    }

    #[test]
    fn a_permission_error_names_its_scopes_and_nothing_else_does() {
        let denied = |data: &str| {
            denied_scopes(
                format!(r#"{{"jsonrpc":"2.0","error":{{"code":-32003,"message":"no","data":{data}}},"id":1}}"#)
                    .as_bytes(),
            )
        };
        assert_eq!(denied(r#"{"requires":"write"}"#), Some(vec!["write".to_owned()]));
        assert_eq!(denied(r#"{"requires":{"anyOf":["a","b"]}}"#), Some(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(denied(r#"{"requires":{"allOf":["a","b"]}}"#), Some(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(denied_scopes(br#"{"jsonrpc":"2.0","result":"-32003","id":1}"#), None);
        assert_eq!(denied_scopes(br#"[{"jsonrpc":"2.0","error":{"code":-32003,"message":"no"},"id":1}]"#), None);
        assert_eq!(denied_scopes(br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"-32003"},"id":1}"#), None);
    }
}
