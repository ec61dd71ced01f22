// OAuth 2.1 interop: the official TypeScript MCP SDK's client
// (`@modelcontextprotocol/sdk`) authorizes against the notes example
// served over Streamable HTTP as an OAuth protected resource, with a real
// authorization server started here (`oauth2-mock-server`: authorization
// code grant with PKCE, JWT access tokens signed with RS256, its JWKS).
// The SDK finds the authorization server through the protected resource
// metadata the 401 points at (RFC 9728), authorizes with PKCE S256 and the
// resource indicator (RFC 8707), exchanges the code and calls tools with
// the token; then raw requests check every rejection (expired, not yet
// valid, wrong audience, wrong issuer, unknown key, forged signature,
// `alg` none or HS256), the JWKS refetch on a rotated key (and its
// cooldown), scopes (`scope` and `scp`), the 403 insufficient_scope
// challenge, and the SDK's step-up from a read-only grant. Prints one
// `ok ...` line per check and `all checks passed` at the end; any failed
// check exits non-zero.
//
//   node oauth.mjs NOTES

import { spawn } from 'node:child_process';
import { createHmac, createPublicKey, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OAuth2Issuer, OAuth2Service } from 'oauth2-mock-server';

const [notesPath] = process.argv.slice(2);
assert.ok(notesPath, 'usage: node oauth.mjs NOTES');

const NOTES_TOOLS = ['add_note', 'search', 'get_note', 'delete_note', 'reindex', 'clear_notes', 'suggest_title'];
const WRITE_TOOLS = ['add_note', 'delete_note', 'clear_notes'];
const READ_TOOLS = ['search', 'get_note'];
const BOTH_SCOPES = 'notes:read notes:write';
/** How often at most notes fetches the issuer's keys again for a kid it
 * does not know (rpc-runtime's `DEFAULT_REFRESH_COOLDOWN`). */
const REFRESH_COOLDOWN = 5000;
const PROTOCOL = '2025-06-18';
/** Where the authorization server sends the user agent back; never
 * fetched (the provider reads the code from the redirect). */
const REDIRECT = 'http://127.0.0.1:9/callback';

function ok(message) {
  console.log(`ok ${message}`);
}

/** A port nobody listens on right now (listen on 0, read it, close). */
async function freePort() {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address();
  probe.close();
  await once(probe, 'close');
  return port;
}

/** `Bearer a="b", c="d"`: { scheme, a: 'b', c: 'd' } (`{}` without a header). */
function challenge(header) {
  if (!header) {
    return {};
  }
  const params = { scheme: header.split(' ')[0] };
  for (const [, name, value] of header.matchAll(/([A-Za-z_]+)="([^"]*)"/g)) {
    params[name] = value;
  }
  return params;
}

/** A space-separated scope set, sorted (its order means nothing). */
function sameScopes(scope) {
  return (scope ?? '').split(' ').filter(Boolean).sort().join(' ');
}

/** The claims of a JWT (not verified: only to look at what was issued). */
function claims(jwt) {
  return JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());
}

function base64url(value) {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
}

/** Waits until `check()` holds (polling), or fails naming `what`. */
async function until(what, check) {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `timed out waiting until ${what}`);
    await sleep(20);
  }
}

// --- The authorization server -------------------------------------------

/** oauth2-mock-server's issuer and request handler behind our own HTTP
 * server, so that every request it serves is recorded (who fetched the
 * metadata and the JWKS, and how often). */
async function startAuthorizationServer() {
  const issuer = new OAuth2Issuer();
  const mainKey = await issuer.keys.generate('RS256');
  const service = new OAuth2Service(issuer);
  const requests = [];
  const http = createServer((req, res) => {
    requests.push({
      method: req.method,
      path: new URL(req.url, 'http://x').pathname,
      agent: req.headers['user-agent'] ?? '',
      at: Date.now(),
    });
    service.requestHandler(req, res);
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  issuer.url = `http://127.0.0.1:${http.address().port}`;

  // What each authorization code was issued for: the scope the user
  // granted, the resource indicator (RFC 8707) and the client.
  const grants = new Map();
  const authorizations = [];
  const tokenRequests = [];
  /** The first grant of a client listed here is narrowed to this scope
   * (the user consented to less than asked); those clients get no
   * refresh token either, so that a wider scope needs a new grant. */
  const narrowFirstGrant = new Map();
  const noRefresh = new Set();
  service.on('beforeAuthorizeRedirect', ({ url }, req) => {
    const query = new URL(req.url, issuer.url).searchParams;
    const clientId = query.get('client_id');
    let scope = query.get('scope') ?? '';
    if (narrowFirstGrant.has(clientId)) {
      scope = narrowFirstGrant.get(clientId);
      narrowFirstGrant.delete(clientId);
    }
    authorizations.push(query);
    const code = url.searchParams.get('code');
    if (code) {
      grants.set(code, { scope, resource: query.get('resource'), clientId });
    }
  });
  service.on('beforeTokenSigning', (token, req) => {
    // The access token's transform sets `scope`; the ID token's does not.
    if (!('scope' in token.payload)) {
      return;
    }
    const grant = grants.get(req.body.code);
    token.payload.scope = grant?.scope ?? token.payload.scope;
    token.payload.aud = req.body.resource ?? grant?.resource;
    token.payload.client_id = req.body.client_id ?? grant?.clientId;
  });
  service.on('beforeResponse', (response, req) => {
    const grant = grants.get(req.body.code);
    tokenRequests.push({ ...req.body });
    if (response.statusCode === 200 && grant) {
      response.body.scope = grant.scope;
      if (noRefresh.has(grant.clientId)) {
        delete response.body.refresh_token;
      }
    }
  });
  return {
    issuer,
    mainKey,
    url: issuer.url,
    requests,
    authorizations,
    tokenRequests,
    narrowFirstGrant,
    noRefresh,
    /** Requests the notes server made (not Node's fetch). */
    fromNotes: () => requests.filter((request) => request.agent !== 'node'),
    async stop() {
      http.closeAllConnections();
      http.close();
      await once(http, 'close');
    },
  };
}

// --- The notes server -----------------------------------------------------

async function startNotes(port, issuerUrl, resource) {
  const env = { ...process.env, RPC_LOG: 'debug' };
  const server = spawn(notesPath, ['--http', `127.0.0.1:${port}`, '--oauth-issuer', issuerUrl, '--audience', resource], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env,
  });
  const log = [];
  const lines = createInterface({ input: server.stderr });
  const listening = new Promise((resolve, reject) => {
    lines.on('line', (line) => {
      log.push(line);
      if (line.startsWith('listening on http://')) {
        resolve();
      }
    });
    server.on('exit', (code, signal) => reject(new Error(`notes exited (${code ?? signal}) before listening:\n${log.join('\n')}`)));
    server.on('error', reject);
  });
  await listening;
  return { server, log };
}

async function stopNotes(server) {
  if (server.exitCode === null && server.signalCode === null) {
    server.kill('SIGTERM');
    await once(server, 'exit');
  }
}

// --- Raw Streamable HTTP --------------------------------------------------

/** The JSON-RPC answer to `id` in a JSON or SSE body. */
function answer(contentType, text, id) {
  if (!text) {
    return undefined;
  }
  if ((contentType ?? '').includes('text/event-stream')) {
    for (const event of text.split(/\r?\n\r?\n/)) {
      const data = event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (data) {
        const message = JSON.parse(data);
        if (message.id === id) {
          return message;
        }
      }
    }
    return undefined;
  }
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function initializeRequest(id = 1) {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'rpc-runtime-oauth-raw', version: '1.0.0' } },
  };
}

// --- The SDK's OAuth client -----------------------------------------------

/** An `OAuthClientProvider` for a client registered beforehand with the
 * authorization server (no dynamic registration), keeping its tokens and
 * PKCE verifier in memory. Its user agent fetches the authorization URL
 * and takes the code from the redirect, as a browser would after the user
 * consents. */
class Provider {
  constructor(clientId) {
    this.clientId = clientId;
    this.authorizationUrls = [];
    this.codes = [];
    this.saved = [];
    this.savedClientInformation = [];
    this.discovery = undefined;
    this._tokens = undefined;
    this._verifier = undefined;
    this._state = undefined;
  }
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      client_name: 'rpc-runtime OAuth interop',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    this._state = randomBytes(16).toString('hex');
    return this._state;
  }
  clientInformation() {
    return { client_id: this.clientId };
  }
  saveClientInformation(information) {
    this.savedClientInformation.push(information);
  }
  tokens() {
    return this._tokens;
  }
  saveTokens(tokens) {
    this._tokens = tokens;
    this.saved.push(tokens);
  }
  saveCodeVerifier(verifier) {
    this._verifier = verifier;
  }
  codeVerifier() {
    return this._verifier;
  }
  saveDiscoveryState(state) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
  async redirectToAuthorization(url) {
    this.authorizationUrls.push(new URL(url));
    const response = await fetch(url, { redirect: 'manual' });
    await response.body?.cancel();
    assert.ok([302, 303].includes(response.status), `the authorization endpoint redirects (${response.status})`);
    const location = new URL(response.headers.get('location'));
    assert.equal(`${location.origin}${location.pathname}`, REDIRECT, 'redirected to redirect_uri');
    assert.equal(location.searchParams.get('error'), null, `authorization error: ${location}`);
    assert.equal(location.searchParams.get('state'), this._state, 'the state comes back');
    this.codes.push(location.searchParams.get('code'));
  }
}

/** A fetch for the transport that records every exchange. */
function recordingFetch(log) {
  return async (url, init = {}) => {
    const response = await fetch(url, init);
    const headers = new Headers(init.headers);
    log.push({
      url: String(url),
      method: init.method ?? 'GET',
      authorization: headers.get('authorization'),
      body: typeof init.body === 'string' ? init.body : init.body instanceof URLSearchParams ? init.body.toString() : undefined,
      status: response.status,
      wwwAuthenticate: response.headers.get('www-authenticate'),
    });
    return response;
  };
}

function newClient() {
  return new Client({ name: 'rpc-runtime-oauth-interop', version: '1.0.0' }, { capabilities: {} });
}

async function toolNames(client) {
  const names = [];
  let cursor;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    names.push(...page.tools.map((tool) => tool.name));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return names;
}

function text(result) {
  return result.content.map((part) => part.text).join('\n');
}

// --- The checks -----------------------------------------------------------

const as = await startAuthorizationServer();
const port = await freePort();
const ORIGIN = `http://127.0.0.1:${port}`;
const RESOURCE = `${ORIGIN}/mcp`;
const METADATA = `${ORIGIN}/.well-known/oauth-protected-resource/mcp`;
let notes;
const watchdog = setTimeout(() => {
  console.log('FAILED: timed out after 120 s');
  if (notes) {
    console.log(`--- the notes server's log (last lines) ---\n${notes.log.slice(-60).join('\n')}`);
    notes.server.kill('SIGKILL');
  }
  process.exit(1);
}, 120_000);
try {
  notes = await startNotes(port, as.url, RESOURCE);
  await checks();
  console.log('all checks passed');
} catch (error) {
  console.log(`FAILED: ${error?.stack ?? error}`);
  if (notes) {
    // Its logs are written in the background: let the last ones arrive.
    await sleep(300);
    console.log(`--- the notes server's log (last lines) ---\n${notes.log.slice(-60).join('\n')}`);
  }
  process.exitCode = 1;
} finally {
  if (notes) {
    await stopNotes(notes.server);
  }
  await as.stop();
  clearTimeout(watchdog);
}
// An SDK transport left open by a failed check would keep Node running.
process.exit(process.exitCode ?? 0);

async function checks() {
  const now = () => Math.floor(Date.now() / 1000);

  /** A JWT from `issuer` (the authorization server's own by default)
   * signed with `kid`, for RESOURCE, with both scopes; `claims` override
   * (undefined removes one). */
  async function token({ issuer = as.issuer, kid = as.mainKey.kid, claims: extra = {} } = {}) {
    return issuer.buildToken({
      kid,
      scopesOrTransform: (_header, payload) => {
        Object.assign(payload, { sub: 'johndoe', aud: RESOURCE, scope: BOTH_SCOPES, client_id: 'raw' }, extra);
        for (const [name, value] of Object.entries(payload)) {
          if (value === undefined) {
            delete payload[name];
          }
        }
      },
    });
  }

  async function post(body, { bearer, session, version = PROTOCOL } = {}) {
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': version,
    };
    if (bearer !== undefined) {
      headers.authorization = `Bearer ${bearer}`;
    }
    if (session) {
      headers['mcp-session-id'] = session;
    }
    const response = await fetch(RESOURCE, { method: 'POST', headers, body: JSON.stringify(body) });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      text,
      challenge: challenge(response.headers.get('www-authenticate')),
      message: answer(response.headers.get('content-type'), text, body.id),
    };
  }

  /** An initialized session with `bearer`: `call(method, params)` posts a
   * request in it (the raw answer). */
  async function session(bearer) {
    const init = await post(initializeRequest(), { bearer });
    assert.equal(init.status, 200, `initialize with a valid token: ${init.status} ${init.text}`);
    assert.ok(init.message?.result, `initialize answers a result: ${init.text}`);
    const id = init.headers.get('mcp-session-id') ?? undefined;
    const version = init.message.result.protocolVersion;
    const initialized = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { bearer, session: id, version });
    assert.equal(initialized.status, 202, `notifications/initialized: ${initialized.status} ${initialized.text}`);
    let next = 2;
    return {
      call: (method, params = {}) => post({ jsonrpc: '2.0', id: next++, method, params }, { bearer, session: id, version }),
      async tools() {
        const listed = await this.call('tools/list');
        assert.equal(listed.status, 200, `tools/list: ${listed.status} ${listed.text}`);
        return listed.message.result.tools.map((tool) => tool.name);
      },
      async close() {
        if (id) {
          await fetch(RESOURCE, {
            method: 'DELETE',
            headers: { authorization: `Bearer ${bearer}`, 'mcp-session-id': id, 'mcp-protocol-version': version },
          });
        }
      },
    };
  }

  /** `bearer` is refused at initialize: 401 invalid_token pointing at the
   * metadata, and the body does not say why (`secrets` absent). */
  async function rejected(what, bearer, secrets) {
    const seen = notes.log.length;
    const refused = await post(initializeRequest(), { bearer });
    assert.equal(refused.status, 401, `${what}: ${refused.status} ${refused.text}`);
    assert.equal(refused.challenge.scheme, 'Bearer', `${what}: ${refused.headers.get('www-authenticate')}`);
    assert.equal(refused.challenge.error, 'invalid_token', `${what}: ${refused.headers.get('www-authenticate')}`);
    assert.equal(refused.challenge.resource_metadata, METADATA, `${what}: ${refused.headers.get('www-authenticate')}`);
    const body = refused.text.toLowerCase();
    for (const secret of secrets) {
      assert.ok(!body.includes(secret), `${what}: the 401 body names the reason (${secret}): ${refused.text}`);
    }
    const description = (refused.challenge.error_description ?? '').toLowerCase();
    for (const secret of secrets) {
      assert.ok(!description.includes(secret), `${what}: the challenge names the reason (${secret})`);
    }
    return { refused, logged: () => notes.log.slice(seen).join('\n').toLowerCase() };
  }

  async function accepted(what, bearer) {
    const answered = await post(initializeRequest(), { bearer });
    assert.equal(answered.status, 200, `${what}: ${answered.status} ${answered.headers.get('www-authenticate')} ${answered.text}`);
    assert.ok(answered.message?.result, `${what}: ${answered.text}`);
  }

  // 1. The authorization server as the SDK and notes will see it.
  const oidc = await (await fetch(`${as.url}/.well-known/openid-configuration`)).json();
  assert.equal(oidc.issuer, as.url);
  assert.ok(oidc.code_challenge_methods_supported.includes('S256'), JSON.stringify(oidc));
  const rfc8414 = await fetch(`${as.url}/.well-known/oauth-authorization-server`);
  await rfc8414.body?.cancel();
  assert.equal(rfc8414.status, 404, 'the mock serves only OpenID discovery');
  ok(`authorization server: oauth2-mock-server at ${as.url}, OpenID discovery only (RFC 8414's document is 404), PKCE S256, RS256 key ${as.mainKey.kid.slice(0, 8)}...`);

  // 2. Without a token: 401 pointing at the metadata, with the scopes.
  const bare = await post(initializeRequest());
  assert.equal(bare.status, 401, `no token: ${bare.status} ${bare.text}`);
  assert.equal(bare.challenge.scheme, 'Bearer', bare.headers.get('www-authenticate'));
  assert.equal(bare.challenge.resource_metadata, METADATA, bare.headers.get('www-authenticate'));
  assert.equal(sameScopes(bare.challenge.scope), BOTH_SCOPES, bare.headers.get('www-authenticate'));
  assert.equal(bare.challenge.error, undefined, `no error code without a token (RFC 6750 3.1): ${bare.headers.get('www-authenticate')}`);
  ok('no token: 401 with WWW-Authenticate Bearer resource_metadata and scope="notes:read notes:write", no error code');

  for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
    const response = await fetch(`${ORIGIN}${path}`);
    assert.equal(response.status, 200, `${path}: ${response.status}`);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/, path);
    const metadata = await response.json();
    assert.equal(metadata.resource, RESOURCE, `${path}: ${JSON.stringify(metadata)}`);
    assert.deepEqual(metadata.authorization_servers, [as.url], `${path}: ${JSON.stringify(metadata)}`);
    assert.deepEqual([...metadata.scopes_supported].sort(), ['notes:read', 'notes:write'], `${path}: ${JSON.stringify(metadata)}`);
    assert.deepEqual(metadata.bearer_methods_supported, ['header'], `${path}: ${JSON.stringify(metadata)}`);
  }
  ok('protected resource metadata (RFC 9728) at both well-known paths: resource, authorization_servers, scopes_supported, bearer_methods_supported');

  // 3. The SDK's whole flow.
  const exchanges = [];
  const provider = new Provider('notes-interop');
  const first = new StreamableHTTPClientTransport(new URL(RESOURCE), { authProvider: provider, fetch: recordingFetch(exchanges) });
  const firstClient = newClient();
  await assert.rejects(firstClient.connect(first), (error) => error instanceof UnauthorizedError, 'the first connect needs authorization');
  const unauthorized = exchanges.find((exchange) => exchange.url === RESOURCE && exchange.method === 'POST');
  assert.equal(unauthorized?.status, 401, JSON.stringify(exchanges));
  assert.equal(challenge(unauthorized.wwwAuthenticate).resource_metadata, METADATA);
  ok('SDK: the first connect gets 401 with resource_metadata; connect throws UnauthorizedError after sending the user to authorize');

  const fetched = exchanges.filter((exchange) => exchange.method === 'GET').map((exchange) => `${exchange.url} ${exchange.status}`);
  assert.ok(fetched.includes(`${METADATA} 200`), `the SDK fetched the resource metadata: ${fetched}`);
  assert.ok(fetched.includes(`${as.url}/.well-known/openid-configuration 200`), `the SDK fetched the AS metadata: ${fetched}`);
  assert.equal(String(provider.discovery?.authorizationServerUrl).replace(/\/$/, ''), as.url, JSON.stringify(provider.discovery));
  assert.equal(provider.discovery?.resourceMetadata?.resource, RESOURCE);
  ok('SDK: discovered the authorization server from the protected resource metadata, its metadata by OpenID discovery');

  assert.equal(provider.authorizationUrls.length, 1);
  const authorize = provider.authorizationUrls[0];
  assert.equal(`${authorize.origin}${authorize.pathname}`, `${as.url}/authorize`);
  const query = authorize.searchParams;
  assert.equal(query.get('response_type'), 'code');
  assert.equal(query.get('client_id'), 'notes-interop');
  assert.equal(query.get('code_challenge_method'), 'S256', authorize.href);
  assert.match(query.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/, authorize.href);
  assert.equal(query.get('scope'), bare.challenge.scope, 'the scope of the 401 challenge');
  assert.equal(query.get('resource'), RESOURCE, 'the resource indicator (RFC 8707)');
  assert.equal(query.get('redirect_uri'), REDIRECT);
  ok('SDK: authorization request with PKCE S256, the challenge\'s scope, resource (RFC 8707) and state');

  await first.finishAuth(provider.codes[0]);
  const exchange = as.tokenRequests.at(-1);
  assert.equal(exchange.grant_type, 'authorization_code');
  assert.ok(exchange.code_verifier, 'the code verifier was sent (and the mock checked it against the challenge)');
  assert.equal(exchange.resource, RESOURCE, 'the resource indicator in the token request');
  const issued = provider.tokens();
  assert.ok(issued?.access_token, JSON.stringify(issued));
  const issuedClaims = claims(issued.access_token);
  assert.equal(issuedClaims.iss, as.url);
  assert.equal(issuedClaims.aud, RESOURCE);
  assert.equal(sameScopes(issuedClaims.scope), BOTH_SCOPES);
  await firstClient.close().catch(() => {});
  ok('SDK: finishAuth exchanged the code (PKCE verifier checked by the authorization server) for a JWT with aud = the resource and both scopes');

  const calls = [];
  const transport = new StreamableHTTPClientTransport(new URL(RESOURCE), { authProvider: provider, fetch: recordingFetch(calls) });
  const client = newClient();
  await client.connect(transport);
  const names = await toolNames(client);
  assert.deepEqual([...names].sort(), [...NOTES_TOOLS].sort(), `both scopes list every tool: ${names}`);
  const added = await client.callTool({ name: 'add_note', arguments: { title: 'oauth', body: 'authorized by the SDK' } });
  assert.ok(!added.isError, text(added));
  const found = await client.callTool({ name: 'search', arguments: { query: 'authorized by' } });
  assert.ok(!found.isError, text(found));
  assert.equal(found.structuredContent?.total, 1, JSON.stringify(found));
  const posts = calls.filter((call) => call.url === RESOURCE);
  assert.ok(posts.length >= 4, JSON.stringify(posts));
  for (const call of posts) {
    assert.equal(call.authorization, `Bearer ${issued.access_token}`, `every request carries the token: ${call.method} ${call.status}`);
    const noStream = call.method === 'GET' && call.status === 405;
    assert.ok(call.status < 400 || noStream, `${call.method} ${call.status} ${call.wwwAuthenticate}`);
  }
  ok(`SDK: connected with the bearer token; listTools lists all ${names.length} tools; add_note then search finds the note; every request carried the token`);
  await transport.terminateSession().catch(() => {});
  await client.close();

  const notesFetches = as.fromNotes().map((request) => `${request.method} ${request.path}`);
  assert.ok(notesFetches.includes('GET /.well-known/openid-configuration'), `notes read the issuer's metadata: ${notesFetches}`);
  assert.ok(notesFetches.includes('GET /jwks'), `notes fetched the JWKS: ${notesFetches}`);
  ok(`notes: found the JWKS through the issuer's metadata (${notesFetches.join(', ')})`);

  // 4. Rejections, with raw requests.
  const jwksFetches = () => as.fromNotes().filter((request) => request.path === '/jwks').length;
  const lastJwksFetch = () => as.fromNotes().findLast((request) => request.path === '/jwks')?.at ?? 0;
  const pastCooldown = () => sleep(Math.max(0, lastJwksFetch() + REFRESH_COOLDOWN + 500 - Date.now()));
  const jwksBefore = jwksFetches();
  await accepted('a token built for the resource', await token());
  await accepted('another one', await token());
  assert.equal(jwksFetches(), jwksBefore, 'a known key needs no JWKS fetch');
  ok('a token built by the authorization server: accepted, the cached JWKS serves (no refetch)');

  const anHourAgo = { iat: now() - 7200, nbf: now() - 7200, exp: now() - 3600 };
  const expired = await rejected('expired an hour ago', await token({ claims: anHourAgo }), ['expired']);
  await until('the reason is logged', () => /expired|\bexp\b/.test(expired.logged()));
  ok('expired token: 401 invalid_token with resource_metadata; the reason is in the log, not in the body');

  await accepted('expired 30 s ago (leeway 60 s)', await token({ claims: { iat: now() - 600, nbf: now() - 600, exp: now() - 30 } }));
  ok('a token expired 30 s ago: accepted (60 s leeway)');

  await rejected('not valid for an hour', await token({ claims: { nbf: now() + 3600 } }), ['nbf', 'not yet', 'immature']);
  ok('a token not valid before an hour from now (nbf): 401 invalid_token');

  const audience = await rejected('wrong audience', await token({ claims: { aud: `${ORIGIN}/other` } }), ['audience']);
  await until('the reason is logged', () => /audience|\baud\b/.test(audience.logged()));
  await rejected('no audience', await token({ claims: { aud: undefined } }), ['audience']);
  await accepted('audience among others', await token({ claims: { aud: ['https://other.example', RESOURCE] } }));
  ok('wrong audience: 401 invalid_token (the reason logged, not in the body); no audience: 401; an aud array naming the resource: accepted');

  const wrongIssuer = await rejected('wrong issuer', await token({ claims: { iss: 'https://issuer.example' } }), ['issuer']);
  await until('the reason is logged', () => /issuer|\biss\b/.test(wrongIssuer.logged()));
  ok('wrong issuer (signed with the right key): 401 invalid_token');

  // notes fetches the keys again for an unknown kid at most once per
  // REFRESH_COOLDOWN (so that made-up kids cannot make it hammer the
  // issuer): let that pass since its last fetch.
  await pastCooldown();
  const rotated = await as.issuer.keys.generate('RS256');
  const beforeRotation = jwksFetches();
  await accepted('a key the issuer added after notes fetched its JWKS', await token({ kid: rotated.kid }));
  assert.equal(jwksFetches(), beforeRotation + 1, 'notes refetched the JWKS once');
  await accepted('the rotated key again', await token({ kid: rotated.kid }));
  assert.equal(jwksFetches(), beforeRotation + 1, 'the new key is cached');
  ok('a key the issuer published after notes cached its JWKS: accepted after one refetch, then cached');

  const rogue = new OAuth2Issuer();
  rogue.url = as.url;
  const rogueKey = await rogue.keys.generate('RS256');
  const unknown = await token({ issuer: rogue, kid: rogueKey.kid });
  const lastFetch = lastJwksFetch();
  await rejected('unknown kid within the cooldown', unknown, ['kid', 'unknown key']);
  if (Date.now() - lastFetch < REFRESH_COOLDOWN - 1000) {
    assert.equal(jwksFetches(), beforeRotation + 1, 'no refetch within the cooldown');
  }
  await pastCooldown();
  const beforeUnknown = jwksFetches();
  await rejected('unknown kid', unknown, ['kid', 'unknown key']);
  assert.equal(jwksFetches(), beforeUnknown + 1, 'an unknown kid past the cooldown refetches the JWKS once');
  ok('unknown kid (a key the issuer does not publish): 401 invalid_token; within the refetch cooldown no JWKS fetch, past it one');

  const forger = new OAuth2Issuer();
  forger.url = as.url;
  await forger.keys.generate('RS256', { kid: as.mainKey.kid });
  await rejected('forged signature', await token({ issuer: forger }), ['signature']);
  const genuine = (await token()).split('.');
  const tampered = base64url({ ...JSON.parse(Buffer.from(genuine[1], 'base64url')), scope: 'notes:read notes:write admin' });
  await rejected('tampered payload', `${genuine[0]}.${tampered}.${genuine[2]}`, ['signature']);
  ok('bad signature (the issuer\'s kid, another key; or a tampered payload): 401 invalid_token');

  const payload = claims(await token());
  await rejected('alg none', `${base64url({ alg: 'none', typ: 'JWT', kid: as.mainKey.kid })}.${base64url(payload)}.`, ['algorithm', '"none"']);
  const hsInput = `${base64url({ alg: 'HS256', typ: 'JWT', kid: as.mainKey.kid })}.${base64url(payload)}`;
  const publicPem = createPublicKey({ key: { kty: 'RSA', n: as.mainKey.n, e: as.mainKey.e }, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
  const hsSignature = createHmac('sha256', publicPem).update(hsInput).digest('base64url');
  await rejected('alg HS256', `${hsInput}.${hsSignature}`, ['hs256', 'algorithm']);
  await rejected('not a JWT', 'not-a-jwt', []);
  ok('alg none, HS256 with the public key as secret, and a non-JWT: 401 invalid_token');

  // Scopes.
  const reader = await session(await token({ claims: { scope: 'notes:read' } }));
  const readable = await reader.tools();
  for (const name of READ_TOOLS) {
    assert.ok(readable.includes(name), `notes:read lists ${name}: ${readable}`);
  }
  for (const name of WRITE_TOOLS) {
    assert.ok(!readable.includes(name), `notes:read does not list ${name}: ${readable}`);
  }
  const searched = await reader.call('tools/call', { name: 'search', arguments: { query: '' } });
  assert.equal(searched.status, 200, `search with notes:read: ${searched.status} ${searched.text}`);
  assert.ok(searched.message?.result && !searched.message.result.isError, searched.text);
  const read = await reader.call('resources/read', { uri: 'notes://1' });
  assert.equal(read.status, 200, `resources/read with notes:read: ${read.status} ${read.text}`);
  const forbidden = await reader.call('tools/call', { name: 'add_note', arguments: { title: 'no', body: 'no' } });
  assert.equal(forbidden.status, 403, `add_note with notes:read: ${forbidden.status} ${forbidden.text}`);
  assert.equal(forbidden.challenge.scheme, 'Bearer', forbidden.headers.get('www-authenticate'));
  assert.equal(forbidden.challenge.error, 'insufficient_scope', forbidden.headers.get('www-authenticate'));
  assert.equal(forbidden.challenge.scope, 'notes:write', forbidden.headers.get('www-authenticate'));
  assert.equal(forbidden.challenge.resource_metadata, METADATA, forbidden.headers.get('www-authenticate'));
  await reader.close();
  ok(`notes:read only: tools/list lists ${readable.join(', ')} (no ${WRITE_TOOLS.join(', ')}); search and resources/read work; add_note is 403 insufficient_scope with scope="notes:write"`);

  const writer = await session(await token({ claims: { scope: 'notes:write' } }));
  const writable = await writer.tools();
  for (const name of WRITE_TOOLS) {
    assert.ok(writable.includes(name), `notes:write lists ${name}: ${writable}`);
  }
  for (const name of READ_TOOLS) {
    assert.ok(!writable.includes(name), `notes:write does not list ${name}: ${writable}`);
  }
  for (const [method, params] of [
    ['tools/call', { name: 'search', arguments: { query: '' } }],
    ['resources/read', { uri: 'notes://1' }],
    ['prompts/get', { name: 'summarize_note', arguments: { id: '1' } }],
  ]) {
    const refused = await writer.call(method, params);
    assert.equal(refused.status, 403, `${method} with notes:write only: ${refused.status} ${refused.text}`);
    assert.equal(refused.challenge.error, 'insufficient_scope', refused.headers.get('www-authenticate'));
    assert.equal(refused.challenge.scope, 'notes:read', refused.headers.get('www-authenticate'));
  }
  await writer.close();
  ok(`notes:write only: tools/list lists ${writable.join(', ')}; search, resources/read and prompts/get are 403 insufficient_scope with scope="notes:read"`);

  const scp = await session(await token({ claims: { scope: undefined, scp: ['notes:read'] } }));
  const scpTools = await scp.tools();
  assert.ok(scpTools.includes('search') && !scpTools.includes('add_note'), `scp ["notes:read"]: ${scpTools}`);
  await scp.close();
  const scpBoth = await session(await token({ claims: { scope: undefined, scp: ['notes:read', 'notes:write'] } }));
  assert.deepEqual([...(await scpBoth.tools())].sort(), [...NOTES_TOOLS].sort());
  await scpBoth.close();
  ok('scopes from scp (an array) as from scope');

  // 5. Step-up: a client granted notes:read gets notes:write when a call
  // needs it (the SDK answers 403 insufficient_scope by authorizing again).
  as.narrowFirstGrant.set('notes-step-up', 'notes:read');
  as.noRefresh.add('notes-step-up');
  const stepExchanges = [];
  const stepProvider = new Provider('notes-step-up');
  const stepFirst = new StreamableHTTPClientTransport(new URL(RESOURCE), { authProvider: stepProvider, fetch: recordingFetch(stepExchanges) });
  const stepFirstClient = newClient();
  await assert.rejects(stepFirstClient.connect(stepFirst), (error) => error instanceof UnauthorizedError);
  await stepFirst.finishAuth(stepProvider.codes[0]);
  await stepFirstClient.close().catch(() => {});
  assert.equal(claims(stepProvider.tokens().access_token).scope, 'notes:read');
  assert.equal(stepProvider.tokens().refresh_token, undefined);
  const stepTransport = new StreamableHTTPClientTransport(new URL(RESOURCE), { authProvider: stepProvider, fetch: recordingFetch(stepExchanges) });
  const stepClient = newClient();
  await stepClient.connect(stepTransport);
  const stepTools = await toolNames(stepClient);
  assert.ok(!stepTools.includes('add_note'), `granted notes:read: ${stepTools}`);
  await assert.rejects(
    stepClient.callTool({ name: 'add_note', arguments: { title: 'step-up', body: 'after more consent' } }),
    (error) => error instanceof UnauthorizedError,
    'the SDK sends the user to authorize notes:write',
  );
  const refusal = stepExchanges.findLast((exchange) => exchange.url === RESOURCE && exchange.status === 403);
  assert.ok(refusal, JSON.stringify(stepExchanges.map((exchange) => `${exchange.method} ${exchange.url} ${exchange.status}`)));
  assert.equal(challenge(refusal.wwwAuthenticate).error, 'insufficient_scope');
  assert.equal(stepProvider.authorizationUrls.length, 2);
  const again = stepProvider.authorizationUrls[1].searchParams;
  assert.equal(again.get('scope'), 'notes:write', 'the scope of the 403 challenge');
  assert.equal(again.get('code_challenge_method'), 'S256');
  assert.equal(again.get('resource'), RESOURCE);
  await stepTransport.finishAuth(stepProvider.codes[1]);
  const widened = claims(stepProvider.tokens().access_token).scope;
  const stepAdded = await stepClient.callTool({ name: 'add_note', arguments: { title: 'step-up', body: 'after more consent' } });
  assert.ok(!stepAdded.isError, text(stepAdded));
  assert.equal(stepAdded.structuredContent?.title, 'step-up', JSON.stringify(stepAdded));
  ok(`SDK step-up: granted notes:read, add_note gets 403 insufficient_scope, the SDK authorizes scope="notes:write" (PKCE S256, resource) and after finishAuth the same session adds the note (token scope now "${widened}")`);
  await stepTransport.terminateSession().catch(() => {});
  await stepClient.close();
}
