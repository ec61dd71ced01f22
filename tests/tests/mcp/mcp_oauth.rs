//! OAuth 2.1 interop: the official TypeScript MCP SDK's client
//! (`@modelcontextprotocol/sdk`) authorizes against the notes example served
//! over Streamable HTTP as an OAuth protected resource (`--oauth-issuer`,
//! `--audience`), with a real authorization server that
//! `tests/js/mcp/oauth.mjs` starts: `oauth2-mock-server` (pinned in
//! `tests/js/mcp/package-lock.json`), which serves OpenID discovery (no RFC
//! 8414 document, so notes takes its fallback), a JWKS, `/authorize` and
//! `/token` with PKCE, and signs RS256 JWT access tokens (its hooks give them
//! `aud` = the RFC 8707 `resource` the client sent and `scope` = what the
//! user granted).
//!
//! It proves that an MCP host built on that SDK gets from a 401 to a
//! working session with no configuration but a pre-registered client id: the
//! 401's `resource_metadata` leads the SDK to the protected resource metadata
//! (RFC 9728), from it to the authorization server; it authorizes with PKCE
//! S256, the challenge's scope and the resource indicator, exchanges the code
//! and calls tools with the bearer token. Raw requests then check the
//! resource server side: the 401 without a token (`resource_metadata`,
//! `scope`, no error code) and the metadata at both well-known paths;
//! tokens accepted (the cached JWKS, an `aud` array, 30 s past `exp` within
//! the 60 s leeway, a key the issuer published later: one JWKS refetch, then
//! cached; an unknown `kid` refetches at most once per 5 s cooldown); tokens refused with 401 `invalid_token` and the reason logged,
//! not answered (expired, not yet valid, wrong or no audience, wrong issuer,
//! unknown `kid`, a forged or tampered signature, `alg` none, HS256 keyed
//! with the public key, not a JWT); scopes from `scope` and from `scp`,
//! `tools/list` showing only the tools a token's scopes allow, and 403
//! `insufficient_scope` naming the missing scope. Last the SDK's step-up: a
//! client granted only `notes:read` calls `add_note`, gets the 403, sends the
//! user to authorize `notes:write`, and after `finishAuth` the same session
//! adds the note.
//!
//! The script prints one line per check (each starts with one below):
//! - `ok authorization server: oauth2-mock-server at ...`
//! - `ok no token: 401 with WWW-Authenticate Bearer resource_metadata and scope="notes:read notes:write", no error code`
//! - `ok protected resource metadata (RFC 9728) at both well-known paths: ...`
//! - `ok SDK: the first connect gets 401 with resource_metadata; connect throws UnauthorizedError ...`
//! - `ok SDK: discovered the authorization server from the protected resource metadata, its metadata by OpenID discovery`
//! - `ok SDK: authorization request with PKCE S256, the challenge's scope, resource (RFC 8707) and state`
//! - `ok SDK: finishAuth exchanged the code (PKCE verifier checked by the authorization server) for a JWT ...`
//! - `ok SDK: connected with the bearer token; listTools lists all ...; add_note then search finds the note; ...`
//! - `ok notes: found the JWKS through the issuer's metadata ...`
//! - `ok a token built by the authorization server: accepted, the cached JWKS serves (no refetch)`
//! - `ok expired token: 401 invalid_token with resource_metadata; the reason is in the log, not in the body`
//! - `ok a token expired 30 s ago: accepted (60 s leeway)`
//! - `ok a token not valid before an hour from now (nbf): 401 invalid_token`
//! - `ok wrong audience: 401 invalid_token ...; no audience: 401; an aud array naming the resource: accepted`
//! - `ok wrong issuer (signed with the right key): 401 invalid_token`
//! - `ok a key the issuer published after notes cached its JWKS: accepted after one refetch, then cached`
//! - `ok unknown kid (a key the issuer does not publish): 401 invalid_token; within the refetch cooldown no JWKS fetch, past it one`
//! - `ok bad signature (the issuer's kid, another key; or a tampered payload): 401 invalid_token`
//! - `ok alg none, HS256 with the public key as secret, and a non-JWT: 401 invalid_token`
//! - `ok notes:read only: tools/list lists ...; add_note is 403 insufficient_scope with scope="notes:write"`
//! - `ok notes:write only: tools/list lists ...; search, resources/read and prompts/get are 403 ... scope="notes:read"`
//! - `ok scopes from scp (an array) as from scope`
//! - `ok SDK step-up: granted notes:read, add_note gets 403 insufficient_scope, the SDK authorizes scope="notes:write" ...`
//!
//! Needs `node` and `npm` (skipped without them unless
//! `RPC_REQUIRE_INTEROP=1`, see `tests::interop`); `.ci/run` installs the
//! locked packages, and this test does too when they are missing.

use crate::client_support;

use std::path::PathBuf;

#[test]
fn the_typescript_sdk_authorizes_with_oauth_against_notes_over_http() {
    let test = "the_typescript_sdk_authorizes_with_oauth_against_notes_over_http";
    if !tests::interop::require(&["node", "npm"], test) {
        return;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("js").join("mcp");
    tests::interop::npm_ci(&dir);
    let checks = [
        "ok authorization server: oauth2-mock-server at ",
        "ok no token: 401 with WWW-Authenticate Bearer resource_metadata and scope=\"notes:read notes:write\", no error code",
        "ok protected resource metadata (RFC 9728) at both well-known paths: resource, authorization_servers, scopes_supported, bearer_methods_supported",
        "ok SDK: the first connect gets 401 with resource_metadata; connect throws UnauthorizedError after sending the user to authorize",
        "ok SDK: discovered the authorization server from the protected resource metadata, its metadata by OpenID discovery",
        "ok SDK: authorization request with PKCE S256, the challenge's scope, resource (RFC 8707) and state",
        "ok SDK: finishAuth exchanged the code (PKCE verifier checked by the authorization server) for a JWT with aud = the resource and both scopes",
        "ok SDK: connected with the bearer token; listTools lists all 7 tools; add_note then search finds the note; every request carried the token",
        "ok notes: found the JWKS through the issuer's metadata",
        "ok a token built by the authorization server: accepted, the cached JWKS serves (no refetch)",
        "ok expired token: 401 invalid_token with resource_metadata; the reason is in the log, not in the body",
        "ok a token expired 30 s ago: accepted (60 s leeway)",
        "ok a token not valid before an hour from now (nbf): 401 invalid_token",
        "ok wrong audience: 401 invalid_token (the reason logged, not in the body); no audience: 401; an aud array naming the resource: accepted",
        "ok wrong issuer (signed with the right key): 401 invalid_token",
        "ok a key the issuer published after notes cached its JWKS: accepted after one refetch, then cached",
        "ok unknown kid (a key the issuer does not publish): 401 invalid_token; within the refetch cooldown no JWKS fetch, past it one",
        "ok bad signature (the issuer's kid, another key; or a tampered payload): 401 invalid_token",
        "ok alg none, HS256 with the public key as secret, and a non-JWT: 401 invalid_token",
        "ok notes:read only: tools/list lists ",
        "ok notes:write only: tools/list lists ",
        "ok scopes from scp (an array) as from scope",
        "ok SDK step-up: granted notes:read, add_note gets 403 insufficient_scope, the SDK authorizes scope=\"notes:write\" (PKCE S256, resource) and after finishAuth the same session adds the note",
    ];
    tests::interop::node_checks(&dir, "oauth.mjs", &[client_support::example("notes")], &checks, "all checks passed");
}
