//! `JwtVerifier` against an authorization server that publishes RFC 8414
//! metadata (`/.well-known/oauth-authorization-server`, the form the
//! TypeScript SDK's test server does not serve) and an ES256 key: tokens
//! signed here with a key made at start (rcgen), served by a small axum
//! app standing in for the issuer's two documents. The full OAuth flow
//! with a real authorization server (RS256, OpenID discovery) is
//! `mcp_oauth`; this covers the other discovery path and algorithm family,
//! and an issuer whose metadata names another issuer.

use crate::web_support;

use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rpc_runtime::transport::http::oauth::ResourceServer;
use serde_json::json;
use web_support::*;

const RESOURCE: &str = "http://127.0.0.1/rpc";

/// base64url without padding (RFC 7515's encoding of JWK members).
fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// The issuer: RFC 8414 metadata naming `metadata_issuer`, and a JWKS with
/// `key` as `kid` "es-1". Answers its origin.
async fn issuer(key: &rcgen::KeyPair, metadata_issuer: Option<String>) -> String {
    let raw = key.public_key_raw();
    let jwk = json!({"kty": "EC", "crv": "P-256", "kid": "es-1", "alg": "ES256", "use": "sig",
        "x": base64url(&raw[1..33]), "y": base64url(&raw[33..65])});
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let metadata = json!({"issuer": metadata_issuer.unwrap_or_else(|| origin.clone()),
        "jwks_uri": format!("{origin}/keys"), "response_types_supported": ["code"]});
    let keys = json!({"keys": [jwk]});
    let document = |value: serde_json::Value| {
        let body = value.to_string();
        axum::routing::get(move || async move { ([("content-type", "application/json")], body) })
    };
    let app = axum::Router::new()
        .route("/.well-known/oauth-authorization-server", document(metadata))
        .route("/keys", document(keys));
    tokio::spawn(async move { axum::serve(listener, app).await });
    origin
}

fn token(key: &rcgen::KeyPair, issuer: &str, audience: &str, expires_in: i64) -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("es-1".into());
    let claims =
        json!({"iss": issuer, "aud": audience, "sub": "carol", "scope": "admin", "iat": now, "exp": now + expires_in});
    jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ec_der(&key.serialize_der())).unwrap()
}

async fn serve_jwt(issuer: &str) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let (server, _) = vault();
    let resource = ResourceServer::jwt(RESOURCE, issuer).unwrap();
    let (addr, stop, _task) = serve(&server, Http::default().oauth(resource)).await;
    (addr, stop)
}

fn wipe(addr: SocketAddr, token: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "method": "wipe", "params": [true], "id": 1}).to_string();
    post_json(addr, &body, &[&format!("Authorization: Bearer {token}")])
}

#[tokio::test]
async fn es256_tokens_are_checked_with_keys_found_through_rfc_8414_metadata() {
    let key = rcgen::KeyPair::generate().unwrap();
    let issuer = issuer(&key, None).await;
    let (addr, _stop) = serve_jwt(&issuer).await;

    let reply = exchange(addr, &wipe(addr, &token(&key, &issuer, RESOURCE, 300))).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.json()["result"], true, "the scope `admin` grants what wipe requires");

    for (what, bad) in [
        ("expired past the leeway", token(&key, &issuer, RESOURCE, -120)),
        ("another audience", token(&key, &issuer, "http://127.0.0.1/other", 300)),
        ("another issuer", token(&key, "http://127.0.0.1:1", RESOURCE, 300)),
        ("another key under the same kid", token(&rcgen::KeyPair::generate().unwrap(), &issuer, RESOURCE, 300)),
    ] {
        let reply = exchange(addr, &wipe(addr, &bad)).await;
        assert_eq!(reply.status, 401, "{what}: {reply:?}");
        assert!(reply.header("www-authenticate").unwrap().contains(r#"error="invalid_token""#), "{what}");
    }
}

#[tokio::test]
async fn metadata_that_names_another_issuer_is_not_trusted() {
    let key = rcgen::KeyPair::generate().unwrap();
    let issuer = issuer(&key, Some("http://impostor.example".into())).await;
    let (addr, _stop) = serve_jwt(&issuer).await;
    let reply = exchange(addr, &wipe(addr, &token(&key, &issuer, RESOURCE, 300))).await;
    assert_eq!(reply.status, 401, "{reply:?}");
    // And the verifier says why at once, when asked to fetch at start.
    let verifier = rpc_runtime::transport::http::oauth::JwtVerifier::new(issuer.clone(), RESOURCE);
    let err = tokio::time::timeout(Duration::from_secs(10), verifier.prefetch()).await.unwrap().unwrap_err();
    assert!(err.to_string().contains("impostor.example"), "{err}");
}
