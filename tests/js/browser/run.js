#!/usr/bin/env node
// A real browser calls the calculator from a web page on another origin.
//
//   node run.js CALCULATOR CHROMIUM
//
// Two local web servers stand for two sites: the calculator is started
// with `--ws ADDR --allow-origin <the first site>`, and headless Chromium
// (driven by puppeteer-core, pinned in package-lock.json) loads a page
// from each. From the allowed page: fetch() calls with a JSON content type
// (which the browser sends only after a CORS preflight the server must
// answer), a batch, an error with data, a notification, then a WebSocket
// with a call, a subscription and a call from the server that the page
// answers. From the other page, both fetch() and the WebSocket are
// refused. Prints one `ok ...` line per check and `all checks passed`; a
// failed check throws (exit 1).

"use strict";

const assert = require("node:assert/strict");
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const http = require("node:http");
const os = require("node:os");
const path = require("node:path");
const readline = require("node:readline");
const puppeteer = require("puppeteer-core");

const [calculatorPath, chromium] = process.argv.slice(2);
assert.ok(calculatorPath && chromium, "usage: node run.js CALCULATOR CHROMIUM");

/** `name` as a path: as it is when it has a slash, else found on PATH. */
function onPath(name) {
  if (name.includes("/")) return name;
  for (const dir of (process.env.PATH || "").split(path.delimiter)) {
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error(`${name} is not on PATH`);
}
const chromiumPath = onPath(chromium);

function ok(message) {
  console.log(`ok ${message}`);
}

/** A web site on a free local port serving one empty page; resolves to its origin. */
function site() {
  const server = http.createServer((request, response) => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end("<!doctype html><title>calculator client</title><p>test page</p>");
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve({ server, origin: `http://127.0.0.1:${server.address().port}` }));
  });
}

/** `calculator args`, once it says where it listens: [address, process]. */
function calculator(args) {
  const child = spawn(calculatorPath, args, { stdio: ["ignore", "ignore", "pipe"] });
  const lines = readline.createInterface({ input: child.stderr });
  return new Promise((resolve, reject) => {
    lines.on("line", (line) => {
      const match = /^listening on ws:\/\/([\d.]+:\d+)/.exec(line);
      if (match) resolve([match[1], child]);
    });
    child.on("exit", (code) => reject(new Error(`the calculator exited (${code}) before listening`)));
  });
}

/** What a page on the allowed origin does (runs in the browser). */
async function allowedPage(httpUrl, wsUrl) {
  const post = async (body) => {
    // `application/json` is not a "simple" content type: the browser
    // sends an OPTIONS preflight first and goes on only if it is allowed.
    const response = await fetch(httpUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  };
  const out = {};
  out.call = await post({ jsonrpc: "2.0", method: "subtract", params: [42, 23], id: 1 });
  out.batch = await post([
    { jsonrpc: "2.0", method: "subtract", params: { minuend: 5, subtrahend: 7 }, id: 2 },
    { jsonrpc: "2.0", method: "notify_hello", params: [1] },
    { jsonrpc: "2.0", method: "divide", params: [1, 0], id: 3 },
  ]);
  out.error = await post({
    jsonrpc: "2.0",
    method: "fail",
    params: { code: -32001, message: "no luck", data: { why: "asked to" } },
    id: 4,
  });
  out.notification = await post({ jsonrpc: "2.0", method: "notify_hello", params: [5] });

  const socket = new WebSocket(wsUrl);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = () => reject(new Error("the WebSocket did not open"));
  });
  const received = [];
  let wake = () => {};
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    if (message.method === "double" && message.id !== undefined) {
      // The server calls the page: answer it.
      out.serverCall = message;
      socket.send(JSON.stringify({ jsonrpc: "2.0", result: message.params[0] * 2, id: message.id }));
      return;
    }
    received.push(message);
    wake();
  };
  const next = async (matches) => {
    const deadline = Date.now() + 10000;
    for (;;) {
      const index = received.findIndex(matches);
      if (index >= 0) return received.splice(index, 1)[0];
      if (Date.now() > deadline) throw new Error("timed out waiting for a WebSocket message");
      await new Promise((resolve) => {
        wake = resolve;
        setTimeout(resolve, 100);
      });
    }
  };
  const send = (message) => socket.send(JSON.stringify(message));
  send({ jsonrpc: "2.0", method: "subtract", params: [10, 3], id: 10 });
  out.wsCall = await next((message) => message.id === 10);
  send({ jsonrpc: "2.0", method: "ticks", params: { count: 3, interval_ms: 10 }, id: 11 });
  out.subscribed = await next((message) => message.id === 11);
  out.ticks = [];
  for (;;) {
    const note = await next((message) => message.method === "subscription");
    out.ticks.push(note.params);
    if (note.params.end || note.params.error) break;
  }
  send({ jsonrpc: "2.0", method: "ask_client", params: ["double", [21]], id: 12 });
  out.asked = await next((message) => message.id === 12);
  socket.close();
  return out;
}

/** What a page on an origin not allowed gets (runs in the browser). */
async function otherPage(httpUrl, wsUrl) {
  const out = {};
  try {
    const response = await fetch(httpUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", method: "subtract", params: [2, 1], id: 1 }),
    });
    out.fetch = `answered ${response.status}`;
  } catch (error) {
    out.fetch = `refused: ${error}`;
  }
  out.ws = await new Promise((resolve) => {
    const socket = new WebSocket(wsUrl);
    socket.onopen = () => {
      resolve("open");
      socket.close();
    };
    socket.onerror = () => resolve("refused");
  });
  return out;
}

/** A request from Node (no browser rules): status and headers. */
function raw(address, method, headers, body) {
  const [host, port] = address.split(":");
  return new Promise((resolve, reject) => {
    const request = http.request({ host, port, method, path: "/", headers }, (response) => {
      response.resume();
      response.on("end", () => resolve({ status: response.statusCode, headers: response.headers }));
    });
    request.on("error", reject);
    request.end(body);
  });
}

async function main() {
  const allowed = await site();
  const other = await site();
  const [address, server] = await calculator(["--ws", "127.0.0.1:0", "--allow-origin", allowed.origin]);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "rpc-runtime-chromium-"));
  let browser;
  try {
    // What the server says, without a browser in between.
    const preflight = await raw(address, "OPTIONS", {
      Origin: allowed.origin,
      "Access-Control-Request-Method": "POST",
      "Access-Control-Request-Headers": "content-type",
    });
    assert.equal(preflight.headers["access-control-allow-origin"], allowed.origin, JSON.stringify(preflight));
    assert.match(preflight.headers["access-control-allow-methods"] || "", /POST/);
    const body = JSON.stringify({ jsonrpc: "2.0", method: "subtract", params: [2, 1], id: 1 });
    const json = { "Content-Type": "application/json" };
    const foreign = await raw(address, "POST", { ...json, Origin: other.origin }, body);
    assert.equal(foreign.status, 403, "another origin is refused by the server itself");
    ok(`the server answers preflights for ${allowed.origin} and refuses ${other.origin} (403)`);

    browser = await puppeteer.launch({
      executablePath: chromiumPath,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        `--user-data-dir=${profile}`,
      ],
    });
    ok(`launched ${await browser.version()}`);
    const httpUrl = `http://${address}/`;
    const wsUrl = `ws://${address}/`;

    const page = await browser.newPage();
    await page.goto(`${allowed.origin}/`);
    const seen = await page.evaluate(allowedPage, httpUrl, wsUrl);
    assert.deepEqual(seen.call, { status: 200, body: { jsonrpc: "2.0", result: 19, id: 1 } });
    ok("fetch with a JSON body (after a CORS preflight) is answered");
    assert.equal(seen.batch.status, 200);
    assert.deepEqual(seen.batch.body, [
      { jsonrpc: "2.0", result: -2, id: 2 },
      { jsonrpc: "2.0", error: { code: -32010, message: "Division by zero" }, id: 3 },
    ]);
    ok("a batch: its calls answered in one array, its notification not");
    assert.deepEqual(seen.error.body.error, { code: -32001, message: "no luck", data: { why: "asked to" } });
    ok("an error arrives with its data");
    assert.equal(seen.notification.status, 204);
    assert.equal(seen.notification.body, null);
    ok("a notification is answered 204 without a body");
    assert.deepEqual(seen.wsCall, { jsonrpc: "2.0", result: 7, id: 10 });
    ok("a call over the page's WebSocket");
    const subscription = seen.subscribed.result;
    assert.equal(typeof subscription, "number", JSON.stringify(seen.subscribed));
    assert.deepEqual(seen.ticks, [
      { subscription, result: { index: 1 } },
      { subscription, result: { index: 2 } },
      { subscription, result: { index: 3 } },
      { subscription, end: true },
    ]);
    ok("a subscription over the WebSocket: its items, then its end");
    assert.deepEqual(seen.serverCall.params, [21]);
    assert.deepEqual(seen.asked, { jsonrpc: "2.0", result: 42, id: 12 });
    ok("the server calls the page, which answers");

    const otherTab = await browser.newPage();
    await otherTab.goto(`${other.origin}/`);
    const refused = await otherTab.evaluate(otherPage, httpUrl, wsUrl);
    assert.match(refused.fetch, /^refused: TypeError/, JSON.stringify(refused));
    assert.equal(refused.ws, "refused", JSON.stringify(refused));
    ok("a page from another origin is refused over fetch and WebSocket");
  } finally {
    if (browser) await browser.close();
    server.kill("SIGTERM");
    allowed.server.close();
    other.server.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  console.log("all checks passed");
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
