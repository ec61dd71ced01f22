#!/usr/bin/env node
// Generates the calculator's TypeScript client with the official OpenRPC
// generator (@open-rpc/generator, pinned in generator/package-lock.json;
// it has a directory of its own, as its dependencies clash with those of
// the client it writes, pinned in package-lock.json here) from its
// `--catalog`, compiles it, and calls every method the calculator can
// answer over HTTP through the generated class. Prints one `ok ...` line
// per check and `all checks passed`; a failed check throws (exit 1).
//
//   node run.js CALCULATOR
//
// Where the generator itself is wrong, this works around it (the README
// says so too):
// - its client template pins TypeScript 4.2, which cannot parse today's
//   @types packages: the client is compiled with the TypeScript of
//   package.json instead;
// - its client template pins @open-rpc/meta-schema 1.14.2, whose types
//   know only OpenRPC 1.2 (`openrpc: "1.2.x"`, every method with a
//   `result`), and types the embedded 1.3.2 document with them: that
//   literal is cast (`as unknown as OpenRPC`);
// - for a method with a dotted name it writes `public items.list = ...`,
//   which is no TypeScript: such members are quoted.

"use strict";

const assert = require("node:assert/strict");
const { execFileSync, spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const readline = require("node:readline");

const calculatorPath = process.argv[2];
assert.ok(calculatorPath, "usage: node run.js CALCULATOR");

function ok(message) {
  console.log(`ok ${message}`);
}

const bin = (name) => path.join(__dirname, "node_modules", ".bin", name);
const generatorBin = path.join(__dirname, "generator", "node_modules", ".bin", "open-rpc-generator");
const generated = path.join(__dirname, "generated");
const clientDir = path.join(generated, "client", "typescript");

function generate() {
  fs.rmSync(generated, { recursive: true, force: true });
  fs.mkdirSync(generated, { recursive: true });
  const catalog = execFileSync(calculatorPath, ["--catalog"], { encoding: "utf8" });
  const document = path.join(generated, "calculator.openrpc.json");
  fs.writeFileSync(document, catalog);
  execFileSync(
    generatorBin,
    ["generate", "-d", document, "-o", generated, "-t", "client", "-l", "typescript", "-n", "calculator"],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  const source = path.join(clientDir, "src", "index.ts");
  const patched = fs
    .readFileSync(source, "utf8")
    .replace(/public ([A-Za-z_$][\w$]*(?:\.[\w$]+)+):/g, 'public "$1":')
    .replace(/(public static openrpcDocument: OpenRPC = )(\{.*\}) ;$/m, "$1($2) as unknown as OpenRPC;");
  assert.ok(patched.includes("as unknown as OpenRPC;"), "the generated client's document literal was found");
  fs.writeFileSync(source, patched);
  ok("the generator wrote a TypeScript client from --catalog");
  execFileSync(bin("tsc"), ["-p", clientDir], { stdio: "inherit" });
  ok("the generated client compiles (strict)");
  return require(path.join(clientDir, "build", "index.js")).default;
}

/** Starts `calculator --http 127.0.0.1:0`; resolves to [host, port, process]. */
function serve() {
  const server = spawn(calculatorPath, ["--http", "127.0.0.1:0"], { stdio: ["ignore", "ignore", "pipe"] });
  const lines = readline.createInterface({ input: server.stderr });
  return new Promise((resolve, reject) => {
    lines.on("line", (line) => {
      const match = /^listening on http:\/\/([\d.]+):(\d+)/.exec(line);
      if (match) resolve([match[1], Number(match[2]), server]);
    });
    server.on("exit", (code) => reject(new Error(`the calculator exited (${code}) before listening`)));
  });
}

/** The JSON-RPC error a call was refused with. */
async function refused(promise) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("the call should have failed");
}

async function main() {
  const Calculator = generate();
  const [host, port, server] = await serve();
  try {
    const client = new Calculator({ transport: { type: "http", host, port } });

    assert.equal(await client.subtract(42, 23), 19);
    assert.equal(await client.subtract(-5, 7), -12);
    assert.equal(await client.divide(7, 2), 3);
    assert.deepEqual(await client.get_data(), ["hello", 5]);
    assert.deepEqual(await client.echo({ any: ["json", 1, null] }), { any: ["json", 1, null] });
    assert.equal(await client.greet("Ada"), "Hello, Ada!");
    assert.equal(await client.greet("Ada", "Hi"), "Hi, Ada!");
    assert.equal(await client.sleep(5), 5);
    assert.equal(await client.wait(5), 5);
    assert.equal(await client.waiting(), 0);
    assert.equal(await client.unsubscribe_ticks(12345), false);
    ok("calls with integer params pass the client's own ajv check and are answered");

    const division = await refused(client.divide(1, 0));
    assert.equal(division.code, -32010, String(division));
    assert.equal(division.message, "Division by zero");
    const failed = await refused(client.fail(-32001, "no luck", { why: "asked to" }));
    assert.equal(failed.code, -32001);
    assert.deepEqual(failed.data, { why: "asked to" });
    const panicked = await refused(client.panic());
    assert.equal(panicked.code, -32603);
    ok("errors arrive with their code, message and data");

    // Checked against the catalog's schemas before anything is sent.
    const invalid = await refused(client.subtract("x", 1));
    assert.ok(Array.isArray(invalid) && invalid.length > 0, String(invalid));
    ok("invalid params are refused by the generated client's validator");

    await client.notify_hello(5);
    ok("a notification is sent as one (no answer awaited)");

    client.startBatch();
    const batch = [client.subtract(3, 1), client.divide(9, 3), client.greet("Bob")];
    client.stopBatch();
    assert.deepEqual(await Promise.all(batch), [2, 3, "Hello, Bob!"]);
    ok("a batch through startBatch/stopBatch");

    // OpenRPC 1.3 cannot describe variadic params (x-params-note): the
    // class sends `[[1, 2, 4]]` for `sum`, which the server refuses as it
    // should; the class's own JSON-RPC client sends the real shape.
    const wrapped = await refused(client.sum([1, 2, 4]));
    assert.equal(wrapped.code, -32602, String(wrapped));
    assert.equal(await client.rpc.request({ method: "sum", params: [1, 2, 4] }), 7);
    ok("sum (whole_params list): the generated method is refused as documented, client.rpc.request works");

    // Calls that need messages from the server outside an answer cannot
    // work over plain HTTP POST; the server says so.
    for (const [name, call] of [
      ["ask_client", () => client.ask_client("ping")],
      ["notify_client", () => client.notify_client("ping")],
      ["ticks", () => client.ticks(3, 10)],
    ]) {
      const error = await refused(call());
      assert.equal(typeof error.code, "number", `${name}: ${String(error)}`);
      console.log(`note ${name} over HTTP: ${error.code} ${error.message}`);
    }
    ok("methods that need a two-way transport are refused over HTTP");
  } finally {
    server.kill("SIGTERM");
  }
  console.log("all checks passed");
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
