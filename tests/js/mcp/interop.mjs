// Drives the calculator (`--mcp`) and the notes example with the official
// TypeScript MCP SDK (pinned in package-lock.json), over stdio and over
// Streamable HTTP, the way MCP hosts built on that SDK do. The notes
// client declares `elicitation` and `sampling` and answers the server's
// questions with request handlers; it also checks logs (setLoggingLevel),
// subscriptions and list changes through notification handlers, and a
// second client without capabilities. Prints one `ok ...` line per check
// and `all checks passed` at the end; any failed check throws and exits
// non-zero.
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
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  LoggingMessageNotificationSchema,
  McpError,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
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
 * (such as an answer to a request it no longer waits for). With
 * `enforceStrictCapabilities` the SDK refuses, before sending, a request
 * whose capability the server did not declare in its `initialize` answer.
 * `capabilities` are the client's (none by default); `setup` installs
 * handlers before the handshake. */
async function connect(transport, { capabilities = {}, setup = () => {} } = {}) {
  const client = new Client(
    { name: 'rpc-runtime-ts-interop', version: '1.0.0' },
    { capabilities, enforceStrictCapabilities: true },
  );
  const errors = [];
  client.onerror = (error) => errors.push(error);
  setup(client);
  await client.connect(transport);
  return { client, errors };
}

/** What `clear_notes` asks for. */
const CONFIRM_SCHEMA = {
  type: 'object',
  properties: { confirm: { type: 'boolean', description: 'Delete every note? This cannot be undone.' } },
  required: ['confirm'],
};

/** The notes client's side: it can be asked for input (elicitation and
 * sampling, answered from queues filled in advance, one answer per
 * question) and records the notifications it is sent. */
const HOST_CAPABILITIES = { elicitation: {}, sampling: {} };

function hostHandlers(seen) {
  return (client) => {
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      seen.updated.push(notification.params.uri);
    });
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      seen.listChanged += 1;
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      seen.logs.push(notification.params);
    });
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      seen.elicitations.push(request.params);
      assert.ok(seen.elicitAnswers.length > 0, `unexpected elicitation ${JSON.stringify(request.params)}`);
      return seen.elicitAnswers.shift();
    });
    client.setRequestHandler(CreateMessageRequestSchema, (request) => {
      seen.samplings.push(request.params);
      assert.ok(seen.sampleAnswers.length > 0, `unexpected sampling ${JSON.stringify(request.params)}`);
      return seen.sampleAnswers.shift();
    });
  };
}

/** A `fetch` for the HTTP transport that copies what arrives on the
 * session's `GET` event stream into `host.getStream`. */
function watchingFetch(host) {
  host.getStream = '';
  return async (url, init) => {
    const response = await fetch(url, init);
    if ((init?.method ?? 'GET') !== 'GET' || !response.ok || !response.body) {
      return response;
    }
    const [mine, theirs] = response.body.tee();
    (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of mine) {
          host.getStream += decoder.decode(chunk, { stream: true });
        }
      } catch {
        // The SDK closed the stream.
      }
    })();
    const { status, statusText, headers } = response;
    return new Response(theirs, { status, statusText, headers });
  };
}

/** The notes client can be asked for input; the calculator's declares
 * nothing. */
function hostOptions(what, host) {
  return what === 'notes' ? { capabilities: HOST_CAPABILITIES, setup: hostHandlers(host) } : {};
}

function newHost() {
  return {
    updated: [],
    listChanged: 0,
    logs: [],
    elicitations: [],
    elicitAnswers: [],
    samplings: [],
    sampleAnswers: [],
  };
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

  // The calculator declares tools only: in strict mode the SDK refuses
  // the other features' requests itself.
  assert.deepEqual(Object.keys(client.getServerCapabilities()), ['tools']);
  await assert.rejects(client.listResources(), /does not support resources/);
  await assert.rejects(client.listPrompts(), /does not support prompts/);
  ok(`${where}: capabilities are tools only; the SDK refuses resources and prompts requests`);
}

/** The progress notifications the SDK handled only after their call's
 * response, taken out of `errors`. The SDK runs notification handlers a
 * microtask later but responses at once, so a final progress the server
 * wrote just before the response, when the client reads both in one chunk
 * (a loaded machine), finds its handler gone and is reported through
 * `onerror` as "a progress notification for an unknown token"
 * (modelcontextprotocol/typescript-sdk#2580). The server did send it first. */
function lateProgress(errors) {
  const prefix = 'Received a progress notification for an unknown token: ';
  const late = [];
  for (let i = errors.length - 1; i >= 0; i -= 1) {
    const message = String(errors[i]?.message ?? '');
    if (message.startsWith(prefix)) {
      late.unshift(JSON.parse(message.slice(prefix.length)).params);
      errors.splice(i, 1);
    }
  }
  return late;
}

/** Rejects unless `promise` fails with an McpError of `code` whose
 * message includes `message`. */
async function rejectsWith(promise, code, message) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof McpError, String(error));
    assert.equal(error.code, code, String(error));
    assert.ok(error.message.includes(message), error.message);
    return true;
  });
}

/** Resources, the prompt and completion of the notes example, with the
 * note `first` (already added) and one more. */
async function notesFeatures(client, validators, where, first) {
  assert.deepEqual(client.getServerCapabilities(), {
    tools: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    prompts: { listChanged: true },
    completions: {},
    logging: {},
  });
  ok(`${where}: capabilities declare tools, resources, prompts, completions and logging, with changes (the SDK enforces them)`);

  const added = await agree(client, validators, 'add_note', { title: 'plans', body: 'go *north*' });
  const second = added.structuredContent.id;
  const notes = new Map([
    [first, 'groceries'],
    [second, 'plans'],
  ]);

  const listing = await client.listResources();
  assert.equal(listing.nextCursor, undefined);
  for (const [id, title] of notes) {
    const resource = listing.resources.find((r) => r.uri === `notes://${id}`);
    assert.deepEqual(resource, { uri: `notes://${id}`, name: `note-${id}`, title, mimeType: 'text/markdown' });
  }
  assert.ok(listing.resources.every((r) => r.uri.startsWith('notes://')), JSON.stringify(listing));
  ok(`${where}: listResources lists every note by title (${listing.resources.length})`);

  const templates = await client.listResourceTemplates();
  assert.deepEqual(templates.resourceTemplates, [
    {
      uriTemplate: 'notes://{id}',
      name: 'note',
      title: 'A note',
      description: 'One note as Markdown: its title as a heading, then its body.',
      mimeType: 'text/markdown',
    },
  ]);
  ok(`${where}: listResourceTemplates has notes://{id}`);

  const read = await client.readResource({ uri: `notes://${second}` });
  assert.deepEqual(read.contents, [
    { uri: `notes://${second}`, mimeType: 'text/markdown', text: '# plans\n\ngo *north*\n' },
  ]);
  await rejectsWith(client.readResource({ uri: 'notes://999999' }), 1001, 'No such note');
  await rejectsWith(client.readResource({ uri: 'other://1' }), -32002, 'other://1');
  ok(`${where}: readResource answers the note as Markdown; an unknown note is 1001, an unknown URI -32002`);

  const prompts = await client.listPrompts();
  assert.deepEqual(prompts.prompts, [
    {
      name: 'summarize_note',
      title: 'Summarize a note',
      description: 'Asks the model for a short summary of one note.',
      arguments: [{ name: 'id', description: "The note's id (`search` finds it).", required: true }],
    },
  ]);
  ok(`${where}: listPrompts has summarize_note with its required argument`);

  const prompt = await client.getPrompt({ name: 'summarize_note', arguments: { id: String(first) } });
  assert.deepEqual(prompt, {
    description: `Summarize note ${first}`,
    messages: [
      { role: 'user', content: { type: 'text', text: 'Summarize this note in one sentence:' } },
      { role: 'user', content: { type: 'text', text: '# groceries\n\neggs, milk\n' } },
    ],
  });
  await rejectsWith(client.getPrompt({ name: 'summarize_note', arguments: { id: '999999' } }), 1001, 'No such note');
  await rejectsWith(client.getPrompt({ name: 'summarize_note', arguments: {} }), ErrorCode.InvalidParams, 'id');
  ok(`${where}: getPrompt answers the messages with the note; a missing argument is -32602`);

  const ids = [...notes.keys()].map(String);
  for (const ref of [
    { type: 'ref/prompt', name: 'summarize_note' },
    { type: 'ref/resource', uri: 'notes://{id}' },
  ]) {
    for (const prefix of ids) {
      const { completion } = await client.complete({ ref, argument: { name: 'id', value: prefix } });
      assert.ok(completion.values.includes(prefix), JSON.stringify(completion));
      assert.ok(completion.values.every((value) => value.startsWith(prefix)), JSON.stringify(completion));
      assert.equal(completion.total, completion.values.length);
      assert.equal(completion.hasMore, false);
    }
    const all = await client.complete({ ref, argument: { name: 'id', value: '' } });
    assert.ok(ids.every((id) => all.completion.values.includes(id)), JSON.stringify(all));
    const none = await client.complete({ ref, argument: { name: 'id', value: 'x' } });
    assert.deepEqual(none.completion.values, []);
  }
  ok(`${where}: complete suggests note ids for the prompt and the template`);
}

const NOTES_TOOLS = ['add_note', 'search', 'get_note', 'delete_note', 'reindex', 'clear_notes', 'suggest_title'];

async function addNote(client, title, body) {
  const added = await client.callTool({ name: 'add_note', arguments: { title, body } });
  assert.ok(!added.isError, text(added));
  return added.structuredContent.id;
}

/** How many notes there are. */
async function countNotes(client) {
  const found = await client.callTool({ name: 'search', arguments: { query: '', limit: 1 } });
  assert.ok(!found.isError, text(found));
  return found.structuredContent.total;
}

/** `notes` is the notes client's (`host` what it saw); `connectBare()`
 * connects another client that declares no capabilities. */
async function notesChecks(client, errors, where, host, connectBare) {
  const tools = await allTools(client);
  assert.deepEqual(tools.map((tool) => tool.name), NOTES_TOOLS);
  const validators = inputValidators(tools);
  const added = await agree(client, validators, 'add_note', { title: 'groceries', body: 'eggs, milk', tags: ['home'] });
  assert.equal(added.structuredContent.title, 'groceries');
  await agree(client, validators, 'add_note', { title: 'x', tags: 'home' });
  const found = await agree(client, validators, 'search', { query: 'milk' });
  assert.equal(found.structuredContent.matches[0].title, 'groceries');
  ok(`${where}: notes tools listed (clear_notes and suggest_title too), a note added and found, structured objects pass the SDK's outputSchema check`);

  await notesFeatures(client, validators, where, added.structuredContent.id);

  const progress = [];
  const result = await client.callTool({ name: 'reindex', arguments: {} }, undefined, {
    onprogress: (update) => progress.push(update),
  });
  assert.ok(!result.isError, text(result));
  const late = lateProgress(errors);
  assert.ok(progress.length > 0, 'progress arrived');
  const last = [...progress, ...late].pop();
  assert.equal(last.progress, last.total, JSON.stringify({ progress, late }));
  assert.deepEqual(errors.map(String), []);
  const lateNote = late.length > 0 ? `, ${late.length} handled after the response (typescript-sdk#2580)` : '';
  ok(`${where}: progress notifications reach onprogress (${progress.length}${lateNote})`);

  await notesLogging(client, where, host);
  await notesChanges(client, where, host);
  await notesSampling(client, where, host);
  await notesElicitation(client, where, host);
  assert.deepEqual(errors.map(String), []);

  // A client that declares no elicitation: a tool error naming it.
  const bare = await connectBare();
  try {
    await addNote(bare.client, 'survivor', 'of a refused clear');
    const before = await countNotes(bare.client);
    const refused = await bare.client.callTool({ name: 'clear_notes', arguments: {} });
    assert.equal(refused.isError, true, text(refused));
    assert.match(text(refused), /`elicitation` capability/);
    assert.match(text(refused), /-32021/);
    assert.equal(await countNotes(bare.client), before);
    assert.deepEqual(bare.errors.map(String), []);
  } finally {
    await bare.close();
  }
  ok(`${where}: a client without the elicitation capability gets a tool error naming it from clear_notes`);
}

/** `setLoggingLevel('debug')` then `'info'`: `search` and `reindex` log
 * at debug (and `reindex` its end at info), `add_note` at info. */
async function notesLogging(client, where, host) {
  // No level set yet: this server sends no logs.
  await addNote(client, 'unheard', 'no level set');
  await client.callTool({ name: 'reindex', arguments: {} });
  await sleep(200);
  assert.deepEqual(host.logs, []);

  const counts = {};
  for (const level of ['debug', 'info']) {
    assert.deepEqual(await client.setLoggingLevel(level), {});
    host.logs.length = 0;
    const id = await addNote(client, `logged at ${level}`, 'log me');
    const found = await client.callTool({ name: 'search', arguments: { query: 'log me' } });
    const indexed = await client.callTool({ name: 'reindex', arguments: {} });
    const notes = indexed.structuredContent.notes;
    const has = (lvl, message) => host.logs.some((log) => log.level === lvl && log.data?.message === message);
    await until(`the info logs arrive at ${level}`, () => has('info', 'note added') && has('info', 'index rebuilt'));
    await sleep(200);
    for (const log of host.logs) {
      assert.equal(log.logger, 'notes', JSON.stringify(log));
    }
    const data = (message) => host.logs.filter((log) => log.data.message === message).map((log) => log.data);
    assert.deepEqual(data('note added'), [{ message: 'note added', id }]);
    assert.deepEqual(data('index rebuilt'), [{ message: 'index rebuilt', notes }]);
    if (level === 'debug') {
      assert.deepEqual(data('searched the notes'), [
        { message: 'searched the notes', query: 'log me', found: found.structuredContent.total },
      ]);
      assert.deepEqual(
        data('indexed a note').map((entry) => entry.done),
        Array.from({ length: notes }, (_, i) => i + 1),
      );
    } else {
      assert.ok(host.logs.every((log) => log.level !== 'debug'), JSON.stringify(host.logs));
    }
    counts[level] = host.logs.length;
  }
  ok(`${where}: setLoggingLevel: debug and info logs at debug (${counts.debug}), info only at info (${counts.info})`);
}

/** Subscribed to one of two notes: deleting both, only its update
 * arrives (on the session's GET stream over HTTP), and the list changes. */
async function notesChanges(client, where, host) {
  const kept = await addNote(client, 'unwatched', 'not subscribed');
  const watched = await addNote(client, 'watched', 'subscribed');
  const uri = `notes://${watched}`;
  host.updated.length = 0;
  host.listChanged = 0;
  assert.deepEqual(await client.subscribeResource({ uri }), {});
  for (const id of [kept, watched]) {
    const deleted = await client.callTool({ name: 'delete_note', arguments: { id } });
    assert.ok(!deleted.isError, text(deleted));
  }
  await until(`${uri} is updated and the list changed`, () => host.updated.includes(uri) && host.listChanged > 0);
  // The unwatched note went first: its update would have come before.
  assert.deepEqual(host.updated, [uri]);
  assert.deepEqual(await client.unsubscribeResource({ uri }), {});
  let how = '';
  if (host.getStream !== undefined) {
    // Over HTTP they came on the GET stream the SDK opened after initialized.
    const messages = host.getStream
      .split('\n')
      .filter((line) => line.startsWith('data:') && line.slice(5).trim().startsWith('{'))
      .map((line) => JSON.parse(line.slice(5)));
    assert.ok(
      messages.some((m) => m.method === 'notifications/resources/updated' && m.params.uri === uri),
      `resources/updated for ${uri} on the GET stream: ${host.getStream}`,
    );
    assert.ok(messages.some((m) => m.method === 'notifications/resources/list_changed'), host.getStream);
    how = ' (on the GET stream)';
  }
  ok(`${where}: subscribeResource brings resources/updated for the note deleted, and resources/list_changed${how}`);
}

/** `suggest_title` asks the host's model; the tool answers its text. */
async function notesSampling(client, where, host) {
  const id = await addNote(client, 'stuff to buy', 'eggs, milk, flour');
  host.samplings.length = 0;
  host.sampleAnswers.push({
    role: 'assistant',
    content: { type: 'text', text: '  Weekly shopping list\n' },
    model: 'test-model',
    stopReason: 'endTurn',
  });
  const result = await client.callTool({ name: 'suggest_title', arguments: { id } });
  assert.ok(!result.isError, text(result));
  assert.deepEqual(result.structuredContent, { result: 'Weekly shopping list' });
  assert.equal(host.samplings.length, 1);
  const [asked] = host.samplings;
  assert.equal(asked.maxTokens, 60);
  assert.equal(asked.temperature, 0.3);
  assert.match(asked.systemPrompt, /^You suggest short, specific titles/);
  assert.equal(asked.messages.length, 1);
  assert.equal(asked.messages[0].role, 'user');
  assert.equal(asked.messages[0].content.type, 'text');
  assert.match(asked.messages[0].content.text, /stuff to buy/);
  assert.match(asked.messages[0].content.text, /eggs, milk, flour/);
  const unknown = await client.callTool({ name: 'suggest_title', arguments: { id: 999999 } });
  assert.equal(unknown.isError, true);
  assert.match(text(unknown), /No such note/);
  assert.equal(host.samplings.length, 1, 'an unknown note asks nothing');
  ok(`${where}: suggest_title asks the CreateMessageRequestSchema handler (maxTokens 60, the note in the message) and answers its text`);
}

/** `clear_notes` asks for confirmation: declined, cancelled or not
 * confirmed, nothing is deleted (0); confirmed, every note is. */
async function notesElicitation(client, where, host) {
  await addNote(client, 'keep me', 'unless confirmed');
  const watched = await addNote(client, 'watched', 'until cleared');
  const uri = `notes://${watched}`;
  const before = await countNotes(client);
  for (const reply of [
    { action: 'decline' },
    { action: 'cancel' },
    { action: 'accept', content: { confirm: false } },
  ]) {
    host.elicitations.length = 0;
    host.elicitAnswers.push(reply);
    const result = await client.callTool({ name: 'clear_notes', arguments: {} });
    assert.ok(!result.isError, text(result));
    assert.deepEqual(result.structuredContent, { result: 0 }, JSON.stringify(reply));
    assert.equal(host.elicitations.length, 1);
    const [asked] = host.elicitations;
    assert.equal(asked.message, `Delete all ${before} notes? This cannot be undone.`);
    assert.deepEqual(asked.requestedSchema, CONFIRM_SCHEMA);
    assert.equal(await countNotes(client), before);
  }
  ok(`${where}: clear_notes asks the ElicitRequestSchema handler; decline, cancel and confirm false delete nothing (0)`);

  host.elicitAnswers.push({ action: 'accept', content: { confirm: true } });
  host.updated.length = 0;
  host.listChanged = 0;
  await client.subscribeResource({ uri });
  const result = await client.callTool({ name: 'clear_notes', arguments: {} });
  assert.deepEqual(result.structuredContent, { result: before }, text(result));
  await until(`${uri} is updated and the list changed`, () => host.updated.includes(uri) && host.listChanged > 0);
  await client.unsubscribeResource({ uri });
  assert.equal(await countNotes(client), 0);
  assert.deepEqual((await client.listResources()).resources, []);
  if (host.getStream !== undefined) {
    // The questions came on the calls' own (POST) event streams.
    assert.ok(!host.getStream.includes('elicitation/create'), host.getStream);
    assert.ok(!host.getStream.includes('sampling/createMessage'), host.getStream);
  }
  ok(`${where}: accepted with confirm true, clear_notes deletes every note (${before}); the subscribed one is updated`);
}

async function overStdio() {
  for (const [path, args, checks, what] of [
    [calculatorPath, ['--mcp'], calculatorChecks, 'calculator'],
    [notesPath, [], notesChecks, 'notes'],
  ]) {
    const stdio = () => new StdioClientTransport({ command: path, args, env: serverEnv(), stderr: 'ignore' });
    const host = newHost();
    const transport = stdio();
    const { client, errors } = await connect(transport, hostOptions(what, host));
    assert.equal(client.getServerVersion().name, what);
    const where = `stdio ${what}`;
    const connectBare = async () => {
      const bare = await connect(stdio());
      return { ...bare, close: () => bare.client.close() };
    };
    await checks(client, errors, where, host, connectBare);
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
      const host = newHost();
      const transport = new StreamableHTTPClientTransport(url, what === 'notes' ? { fetch: watchingFetch(host) } : {});
      const { client, errors } = await connect(transport, hostOptions(what, host));
      const session = transport.sessionId;
      assert.ok(session, 'the server issued a session');
      const connectBare = async () => {
        const bareTransport = new StreamableHTTPClientTransport(url);
        const bare = await connect(bareTransport);
        return {
          ...bare,
          close: async () => {
            await bareTransport.terminateSession();
            await bare.client.close();
          },
        };
      };
      await checks(client, errors, `Streamable HTTP ${what}`, host, connectBare);
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
