//! JWT access tokens (RFC 9068) checked against the issuer's published
//! keys, with the `jsonwebtoken` crate: its metadata found by RFC 8414
//! (or OpenID Connect discovery), its JWKS fetched, kept, and fetched
//! again when a token names a key not seen yet.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, UNIX_EPOCH};

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};

use super::fetch::Fetcher;
use super::{Grant, InvalidToken, VerifyFuture, VerifyToken};

/// The clock skew allowed by default on `exp` and `nbf`.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(60);

/// The least time between two fetches of the keys made for unknown key
/// ids, by default: a client sending made-up `kid`s makes the server
/// fetch at most this often.
pub const DEFAULT_REFRESH_COOLDOWN: Duration = Duration::from_secs(5);

/// How long fetched keys are used before they are fetched again.
const KEYS_MAX_AGE: Duration = Duration::from_secs(3600);

/// The signature algorithms accepted by default: public-key ones only
/// (a JWKS is public, so a shared-secret `HS256` key in it proves nothing).
const ASYMMETRIC: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Checks JWT access tokens issued by one authorization server for one
/// resource: the signature with the issuer's published keys, `iss`,
/// `aud` (the resource, RFC 8707), `exp` and `nbf` (with
/// [`DEFAULT_LEEWAY`] of clock skew). Scopes are read from `scope` (a
/// space-separated string, RFC 9068) or `scp` (an array or a string, as
/// some servers write it).
///
/// The keys are found through the issuer's metadata
/// (`/.well-known/oauth-authorization-server`, RFC 8414, then
/// `/.well-known/openid-configuration`) and its `jwks_uri`, fetched on the
/// first token, kept for an hour, and fetched again when a token names a
/// key id not among them (at most once per
/// [`refresh_cooldown`](JwtVerifier::refresh_cooldown)). An `https://`
/// issuer needs the `tls` feature and [`JwtVerifier::tls`].
pub struct JwtVerifier {
    issuer: String,
    audience: String,
    leeway: Duration,
    cooldown: Duration,
    jwks_uri: Option<String>,
    fetcher: Fetcher,
    keys: Mutex<Keys>,
    /// Held while keys are fetched, so that one fetch serves every
    /// request waiting for it.
    fetching: tokio::sync::Mutex<()>,
}

impl fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("leeway", &self.leeway)
            .finish_non_exhaustive()
    }
}

/// The keys fetched, by key id.
#[derive(Default)]
struct Keys {
    by_id: HashMap<String, Arc<Key>>,
    /// Keys published without a `kid`, tried for tokens without one.
    unnamed: Vec<Arc<Key>>,
    fetched: Option<Instant>,
    jwks_uri: Option<String>,
}

struct Key {
    key: DecodingKey,
    /// The JWK's `alg`, when it names one: tokens must use it.
    algorithm: Option<Algorithm>,
}

impl JwtVerifier {
    /// Tokens from `issuer` (its identifier, exactly as in tokens' `iss`)
    /// for `audience` (the resource's identifier, as in their `aud`).
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        JwtVerifier {
            issuer: issuer.into(),
            audience: audience.into(),
            leeway: DEFAULT_LEEWAY,
            cooldown: DEFAULT_REFRESH_COOLDOWN,
            jwks_uri: None,
            fetcher: Fetcher::default(),
            keys: Mutex::new(Keys::default()),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    /// The same, allowing `leeway` of clock skew on `exp` and `nbf`.
    #[must_use = "a builder does nothing until used"]
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The same, fetching the keys for an unknown key id at most once per
    /// `cooldown` ([`DEFAULT_REFRESH_COOLDOWN`]).
    #[must_use = "a builder does nothing until used"]
    pub fn refresh_cooldown(mut self, cooldown: Duration) -> Self {
        self.cooldown = cooldown;
        self
    }

    /// The same, with the keys at `url` instead of the `jwks_uri` of the
    /// issuer's metadata.
    #[must_use = "a builder does nothing until used"]
    pub fn jwks_uri(mut self, url: impl Into<String>) -> Self {
        self.jwks_uri = Some(url.into());
        self
    }

    /// The same, fetching `https://` metadata and keys with `tls` (the
    /// CAs trusted). Needs the `tls` feature.
    #[cfg(feature = "tls")]
    #[must_use = "a builder does nothing until used"]
    pub fn tls(mut self, tls: crate::transport::tls::ClientTls) -> Self {
        self.fetcher.tls = Some(tls);
        self
    }

    /// Fetches the issuer's keys now (rather than on the first token), to
    /// find a wrong issuer URL at start.
    pub async fn prefetch(&self) -> io::Result<()> {
        self.refresh().await
    }

    async fn check(&self, token: &str) -> Result<Grant, InvalidToken> {
        let header =
            jsonwebtoken::decode_header(token).map_err(|err| InvalidToken::new(format!("not a JWT: {err}")))?;
        if !ASYMMETRIC.contains(&header.alg) {
            return Err(InvalidToken::new(format!("signed with {:?}, not a public-key algorithm", header.alg)));
        }
        let key = self.key(header.kid.as_deref()).await?;
        if key.algorithm.is_some_and(|algorithm| algorithm != header.alg) {
            return Err(InvalidToken::new(format!("signed with {:?}, which its key is not for", header.alg)));
        }
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        let claims = jsonwebtoken::decode::<Claims>(token, &key.key, &validation).map_err(|err| rejected(&err))?;
        Ok(claims.claims.grant())
    }

    /// The key `kid` names (or the only unnamed one), fetching the keys
    /// when it is not known yet.
    async fn key(&self, kid: Option<&str>) -> Result<Arc<Key>, InvalidToken> {
        if let Some(key) = self.known(kid, false) {
            return Ok(key);
        }
        let stale = {
            let keys = self.keys.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            keys.fetched.is_none_or(|at| at.elapsed() >= self.cooldown)
        };
        if stale {
            let _fetching = self.fetching.lock().await;
            // Another request may have fetched them meanwhile.
            if let Some(key) = self.known(kid, true) {
                return Ok(key);
            }
            let recent = {
                let keys = self.keys.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                keys.fetched.is_some_and(|at| at.elapsed() < self.cooldown)
            };
            if !recent && let Err(err) = self.refresh().await {
                tracing::warn!(issuer = %self.issuer, error = %err, "fetching the issuer's keys failed");
                // Keys fetched before (older than an hour) still serve
                // while the issuer cannot be reached.
                return self
                    .known(kid, true)
                    .ok_or_else(|| InvalidToken::new(format!("the issuer's keys could not be fetched: {err}")));
            }
        }
        self.known(kid, true).ok_or_else(|| match kid {
            Some(kid) => InvalidToken::new(format!("signed with key `{kid}`, which the issuer does not publish")),
            None => InvalidToken::new("no `kid`, and the issuer publishes several keys or none"),
        })
    }

    /// A key already fetched (and, unless `any_age`, not older than an
    /// hour).
    fn known(&self, kid: Option<&str>, any_age: bool) -> Option<Arc<Key>> {
        let keys = self.keys.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !any_age && keys.fetched.is_none_or(|at| at.elapsed() >= KEYS_MAX_AGE) {
            return None;
        }
        match kid {
            Some(kid) => keys.by_id.get(kid).cloned(),
            None if keys.unnamed.len() == 1 => keys.unnamed.first().cloned(),
            None if keys.unnamed.is_empty() && keys.by_id.len() == 1 => keys.by_id.values().next().cloned(),
            None => None,
        }
    }

    /// Fetches the keys (and, the first time, the metadata that says
    /// where they are).
    async fn refresh(&self) -> io::Result<()> {
        let known_uri = self.keys.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).jwks_uri.clone();
        let jwks_uri = match known_uri.or_else(|| self.jwks_uri.clone()) {
            Some(uri) => uri,
            None => self.discover().await?,
        };
        let set: JwkSet = self.fetcher.json(&jwks_uri).await?;
        let mut by_id = HashMap::new();
        let mut unnamed = Vec::new();
        for jwk in &set.keys {
            if matches!(&jwk.common.public_key_use, Some(usage) if *usage != PublicKeyUse::Signature) {
                continue;
            }
            let Ok(key) = DecodingKey::from_jwk(jwk) else {
                tracing::debug!(kid = ?jwk.common.key_id, "a published key of a kind this verifier does not read was left out");
                continue;
            };
            let algorithm = jwk.common.key_algorithm.and_then(|alg| alg.to_string().parse::<Algorithm>().ok());
            let key = Arc::new(Key { key, algorithm });
            match &jwk.common.key_id {
                Some(kid) => {
                    by_id.insert(kid.clone(), key);
                }
                None => unnamed.push(key),
            }
        }
        tracing::debug!(issuer = %self.issuer, keys = by_id.len() + unnamed.len(), "fetched the issuer's keys");
        let mut keys = self.keys.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        *keys = Keys { by_id, unnamed, fetched: Some(Instant::now()), jwks_uri: Some(jwks_uri) };
        Ok(())
    }

    /// The `jwks_uri` of the issuer's metadata: RFC 8414's well-known
    /// path, then OpenID Connect's.
    async fn discover(&self) -> io::Result<String> {
        #[derive(serde::Deserialize)]
        struct Metadata {
            issuer: String,
            jwks_uri: Option<String>,
        }
        let issuer = self.issuer.trim_end_matches('/');
        let (origin, path) = split_origin(issuer);
        let urls = [
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{issuer}/.well-known/openid-configuration"),
        ];
        let mut failures = Vec::new();
        for url in &urls {
            match self.fetcher.json::<Metadata>(url).await {
                Ok(metadata) => {
                    if metadata.issuer.trim_end_matches('/') != issuer {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            format!("{url} is the metadata of issuer `{}`, not `{issuer}`", metadata.issuer),
                        ));
                    }
                    return metadata
                        .jwks_uri
                        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, format!("{url} has no `jwks_uri`")));
                }
                Err(err) => failures.push(err.to_string()),
            }
        }
        Err(io::Error::other(format!("no authorization server metadata found: {}", failures.join("; "))))
    }
}

impl VerifyToken for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.check(token))
    }
}

/// `https://host` and `/path` of a URL (the path empty for none).
fn split_origin(url: &str) -> (&str, &str) {
    let after_scheme = url.find("://").map_or(0, |at| at + 3);
    match url[after_scheme..].find('/') {
        Some(at) => url.split_at(after_scheme + at),
        None => (url, ""),
    }
}

/// Why `jsonwebtoken` refused a token, for the logs.
fn rejected(err: &jsonwebtoken::errors::Error) -> InvalidToken {
    let reason = match err.kind() {
        ErrorKind::ExpiredSignature => "it has expired (`exp`)".to_owned(),
        ErrorKind::ImmatureSignature => "it is not valid yet (`nbf`)".to_owned(),
        ErrorKind::InvalidAudience => "it is for another audience (`aud`)".to_owned(),
        ErrorKind::InvalidIssuer => "it is from another issuer (`iss`)".to_owned(),
        ErrorKind::InvalidSignature => "its signature does not verify".to_owned(),
        ErrorKind::MissingRequiredClaim(claim) => format!("it has no `{claim}` claim"),
        _ => format!("{err}"),
    };
    InvalidToken::new(reason)
}

/// The claims read from an access token.
#[derive(serde::Deserialize)]
struct Claims {
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    scp: Option<Scopes>,
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    azp: Option<String>,
    #[serde(default)]
    exp: Option<u64>,
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Scopes {
    List(Vec<String>),
    Text(String),
}

impl Claims {
    fn grant(self) -> Grant {
        let mut scopes: Vec<String> =
            self.scope.iter().flat_map(|scope| scope.split_whitespace()).map(str::to_owned).collect();
        match self.scp {
            Some(Scopes::List(list)) => scopes.extend(list),
            Some(Scopes::Text(text)) => scopes.extend(text.split_whitespace().map(str::to_owned)),
            None => {}
        }
        let mut grant = Grant::new(scopes);
        if let Some(sub) = self.sub {
            grant = grant.subject(sub);
        }
        if let Some(client) = self.client_id.or(self.azp) {
            grant = grant.client_id(client);
        }
        if let Some(exp) = self.exp {
            grant = grant.expires_at(UNIX_EPOCH + Duration::from_secs(exp));
        }
        grant
    }
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use super::*;

    #[test]
    fn origins_and_paths_of_issuers() {
        assert_eq!(split_origin("https://as.example"), ("https://as.example", ""));
        assert_eq!(split_origin("https://as.example/tenant/1"), ("https://as.example", "/tenant/1"));
        assert_eq!(split_origin("http://127.0.0.1:9000"), ("http://127.0.0.1:9000", ""));
    }

    #[test]
    fn scopes_come_from_scope_or_scp() {
        let claims: Claims =
            serde_json::from_str(r#"{"scope":"a b","scp":["c"],"sub":"u","azp":"app","exp":4102444800}"#).unwrap();
        let grant = claims.grant();
        assert_eq!(grant.scopes(), ["a", "b", "c"]);
        assert_eq!(grant.subject_id(), Some("u"));
        assert_eq!(grant.client(), Some("app"));
        assert!(grant.expiry().is_some_and(|at| at > SystemTime::now()));
        let claims: Claims = serde_json::from_str(r#"{"scp":"x  y"}"#).unwrap();
        assert_eq!(claims.grant().scopes(), ["x", "y"]);
    }
}
