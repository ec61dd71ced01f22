// Drives the calculator (`--mcp`) and the notes example with the official
// TypeScript MCP SDK (pinned in package-lock.json), over stdio and over
// Streamable HTTP, the way MCP hosts built on that SDK do. Prints one
// `ok ...` line per check and `all checks passed` at the end; any failed
// check throws and exits non-zero.
//
//   node interop.mjs CALCULATOR NOTES

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

const [calculatorPath, notesPath] = process.argv.slice(2);
assert.ok(calculatorPath && notesPath, 'usage: node interop.mjs CALCULATOR NOTES');

function ok(message) {
  console.log(`ok ${message}`);
}

/** The server's environment: no RPC_LOG, so stderr stays quiet. */
function serverEnv() {
  const env = { ...process.env };
  delete env.RPC_LOG;
  return env;
}

/** A client that records every error the SDK reports outside a call
 * (such as an answer to a request it no longer waits for). */
async function connect(transport) {
  const client = new Client({ name: 'rpc-runtime-ts-interop', version: '1.0.0' }, { capabilities: {} });
  const errors = [];
  client.onerror = (error) => errors.push(error);
  await client.connect(transport);
  return { client, errors };
}

/** `path args --http 127.0.0.1:0`: its endpoint's URL and the process. */
async function serveHttp(path, args) {
  const server = spawn(path, [...args, '--http', '127.0.0.1:0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: serverEnv(),
  });
  const lines = createInterface({ input: server.stderr });
  for await (const line of lines) {
    if (line.startsWith('listening on http://')) {
      // Keep draining stderr so the server never blocks on it.
      lines.on('line', () => {});
      return { url: new URL(`${line.split(' ').pop()}/mcp`), server };
    }
  }
  throw new Error(`${path} exited before saying where it listens`);
}

async function stop(server) {
  if (server.exitCode === null && server.signalCode === null) {
    server.kill('SIGTERM');
    await once(server, 'exit');
  }
}

/** Every tool, following `nextCursor`. */
async function allTools(client) {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

function text(result) {
  return result.content.map((part) => part.text).join('\n');
}

/** The tool's input validator (the SDK's own JSON Schema validator). */
function inputValidators(tools) {
  const validator = new AjvJsonSchemaValidator();
  return new Map(tools.map((tool) => [tool.name, validator.getValidator(tool.inputSchema)]));
}

/** Calls `name` and checks that the server and the tool's input schema
 * agree on whether `args` are valid. */
async function agree(client, validators, name, args) {
  const valid = validators.get(name)(args).valid;
  const result = await client.callTool({ name, arguments: args });
  assert.equal(!result.isError, valid, `${name} ${JSON.stringify(args)}: schema says ${valid}, server ${text(result)}`);
  return result;
}

/** Waits until `check()` holds (polling), or fails naming `what`. */
async function until(what, check) {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `timed out waiting until ${what}`);
    await sleep(20);
  }
}

async function calculatorChecks(client, errors, where) {
  // Listing: every schema is one the SDK took (it parses the listing with
  // MCP's own schema, which wants every property schema to be an object).
  const tools = await allTools(client);
  const names = tools.map((tool) => tool.name);
  for (const name of ['subtract', 'sum', 'echo', 'fail', 'divide', 'wait', 'waiting']) {
    assert.ok(names.includes(name), `${name} is listed: ${names}`);
  }
  assert.ok(!names.includes('panic'), 'hidden tools are not listed');
  const validators = inputValidators(tools);
  const outputs = new AjvJsonSchemaValidator();
  for (const tool of tools) {
    if (tool.outputSchema) {
      outputs.getValidator(tool.outputSchema);
    }
  }
  ok(`${where}: listTools lists ${tools.length} tools, every input and output schema compiles with the SDK's validator`);

  // Valid arguments; the SDK checks structuredContent against outputSchema
  // itself (callTool throws when they disagree).
  const subtracted = await agree(client, validators, 'subtract', { minuend: 42, subtrahend: 23 });
  assert.equal(text(subtracted), '19');
  assert.deepEqual(subtracted.structuredContent, { result: 19 });
  const subtract = tools.find((tool) => tool.name === 'subtract');
  const check = outputs.getValidator(subtract.outputSchema);
  assert.ok(check(subtracted.structuredContent).valid, 'structured content matches outputSchema');
  assert.ok(!check({ result: 'nineteen' }).valid, 'the validator is not a pass-through');
  const calls = [
    ['sum', { numbers: [1, 2, 4] }, { result: 7 }],
    ['get_data', {}, { result: ['hello', 5] }],
    ['echo', { value: { any: ['json', 1, null] } }, { result: { any: ['json', 1, null] } }],
    ['greet', { name: 'Ada' }, { result: 'Hello, Ada!' }],
    ['divide', { dividend: 7, divisor: 2 }, { result: 3 }],
    ['sleep', { ms: 1 }, { result: 1 }],
  ];
  for (const [name, args, structured] of calls) {
    const result = await agree(client, validators, name, args);
    assert.deepEqual(result.structuredContent, structured, `${name}: ${JSON.stringify(result)}`);
  }
  ok(`${where}: callTool with valid arguments; structuredContent passes the SDK's outputSchema check (${calls.length + 1} tools)`);

  // Invalid arguments: a tool execution error naming the parameter, and
  // the schema rejects them too.
  const wrongType = await agree(client, validators, 'subtract', { minuend: 'x', subtrahend: 1 });
  assert.equal(wrongType.isError, true);
  assert.match(text(wrongType), /minuend/);
  const missing = await agree(client, validators, 'subtract', { minuend: 1 });
  assert.match(text(missing), /subtrahend/);
  await agree(client, validators, 'subtract', { minuend: 1, subtrahend: 2, extra: 3 });
  ok(`${where}: callTool with invalid arguments is a tool error naming the parameter, as the schema says`);

  // The tool's own error.
  const divided = await client.callTool({ name: 'divide', arguments: { dividend: 1, divisor: 0 } });
  assert.equal(divided.isError, true);
  assert.match(text(divided), /Division by zero/);
  const failed = await client.callTool({
    name: 'fail',
    arguments: { code: -32001, message: 'no luck', data: { why: 'asked to' } },
  });
  assert.equal(failed.isError, true);
  assert.match(text(failed), /no luck/);
  try {
    await client.callTool({ name: 'no_such_tool', arguments: {} });
    assert.fail('an unknown tool must be a protocol error');
  } catch (error) {
    assert.ok(error instanceof McpError && error.code === ErrorCode.InvalidParams, String(error));
  }
  ok(`${where}: a failing tool is a tool error (isError) with its message; an unknown tool is -32602`);

  // Cancellation by AbortSignal: the SDK sends notifications/cancelled, the
  // server stops the call, and no answer to it ever arrives (the SDK would
  // report one as "a response for an unknown message ID").
  const running = async () => (await client.callTool({ name: 'waiting', arguments: {} })).structuredContent.result;
  // With a progress token the call's answer is an event stream (over HTTP).
  for (const [shape, extra] of [['plain', {}], ['asking for progress', { onprogress: () => {} }]]) {
    const abort = new AbortController();
    const options = { signal: abort.signal, ...extra };
    const waiting = client.callTool({ name: 'wait', arguments: { ms: 60_000 } }, undefined, options);
    await until('the wait call runs', async () => (await running()) === 1);
    abort.abort('the user gave up');
    await assert.rejects(waiting);
    await until('the server stopped the cancelled call', async () => (await running()) === 0);
    await sleep(500);
    assert.deepEqual(errors.map(String), [], `nothing arrives for the cancelled call (${shape})`);
  }
  ok(`${where}: cancellation by AbortSignal stops the call and nothing answers it afterwards`);

  assert.deepEqual(await client.ping(), {});
  ok(`${where}: ping`);
}

async function notesChecks(client, errors, where) {
  const tools = await allTools(client);
  const validators = inputValidators(tools);
  const added = await agree(client, validators, 'add_note', { title: 'groceries', body: 'eggs, milk', tags: ['home'] });
  assert.equal(added.structuredContent.title, 'groceries');
  await agree(client, validators, 'add_note', { title: 'x', tags: 'home' });
  const found = await agree(client, validators, 'search', { query: 'milk' });
  assert.equal(found.structuredContent.matches[0].title, 'groceries');
  ok(`${where}: notes tools listed, a note added and found, structured objects pass the SDK's outputSchema check`);

  const progress = [];
  const result = await client.callTool({ name: 'reindex', arguments: {} }, undefined, {
    onprogress: (update) => progress.push(update),
  });
  assert.ok(!result.isError, text(result));
  assert.ok(progress.length > 0, 'progress arrived');
  const last = progress[progress.length - 1];
  assert.equal(last.progress, last.total, JSON.stringify(progress));
  assert.deepEqual(errors.map(String), []);
  ok(`${where}: progress notifications reach onprogress (${progress.length})`);
}

async function overStdio() {
  for (const [path, args, checks, what] of [
    [calculatorPath, ['--mcp'], calculatorChecks, 'calculator'],
    [notesPath, [], notesChecks, 'notes'],
  ]) {
    const transport = new StdioClientTransport({ command: path, args, env: serverEnv(), stderr: 'ignore' });
    const { client, errors } = await connect(transport);
    assert.equal(client.getServerVersion().name, what);
    const where = `stdio ${what}`;
    await checks(client, errors, where);
    // The SDK closes stdin and waits for the process, then resorts to
    // signals after two seconds; a clean close is an exit of its own, 0.
    const child = transport._process;
    await client.close();
    assert.equal(child.signalCode, null, 'the server exited by itself when stdin closed');
    assert.equal(child.exitCode, 0);
    assert.deepEqual(errors.map(String), []);
    ok(`stdio ${what}: close ends the server cleanly (exit 0)`);
  }
}

async function overStreamableHttp() {
  for (const [path, args, checks, what] of [
    [calculatorPath, ['--mcp'], calculatorChecks, 'calculator'],
    [notesPath, [], notesChecks, 'notes'],
  ]) {
    const { url, server } = await serveHttp(path, args);
    try {
      const transport = new StreamableHTTPClientTransport(url);
      const { client, errors } = await connect(transport);
      const session = transport.sessionId;
      assert.ok(session, 'the server issued a session');
      await checks(client, errors, `Streamable HTTP ${what}`);
      await transport.terminateSession();
      await client.close();
      assert.deepEqual(errors.map(String), []);
      const after = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': session,
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      assert.equal(after.status, 404, 'the session ended');
      ok(`Streamable HTTP ${what}: terminateSession ends the session (then 404), close is clean`);
    } finally {
      await stop(server);
    }
  }
}

await overStdio();
await overStreamableHttp();
console.log('all checks passed');
