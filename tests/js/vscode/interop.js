// Drives the calculator example with vscode-jsonrpc, the JSON-RPC library
// VS Code itself uses, over Content-Length framed stdio:
//   node interop.js <path to the calculator binary>
// Prints one line per check and exits 0 when all pass, 1 otherwise.
'use strict';

const { spawn } = require('child_process');
const assert = require('assert');
const {
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
  ResponseError,
} = require('vscode-jsonrpc/node');

const binary = process.argv[2];
if (!binary) {
  console.error('usage: node interop.js <calculator binary>');
  process.exit(2);
}

const child = spawn(binary, ['--framing', 'content-length'], { stdio: ['pipe', 'pipe', 'inherit'] });
const connection = createMessageConnection(
  new StreamMessageReader(child.stdout),
  new StreamMessageWriter(child.stdin),
);

const notes = [];
// Server-to-client request, answered on this side.
connection.onRequest('double', (params) => {
  assert.deepStrictEqual(params, { x: 21 });
  return params.x * 2;
});
connection.onRequest('refuse', () => new ResponseError(-32042, 'refused by vscode-jsonrpc', { side: 'node' }));
connection.onNotification('note', (params) => notes.push(params.text));
connection.listen();

let passed = 0;
async function check(name, body) {
  await body();
  passed += 1;
  console.log(`ok ${name}`);
}

async function rejects(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the request to fail');
}

async function main() {
  await check('request by position', async () => {
    assert.strictEqual(await connection.sendRequest('subtract', 42, 23), 19);
  });
  await check('request by name', async () => {
    assert.strictEqual(await connection.sendRequest('subtract', { subtrahend: 23, minuend: 42 }), 19);
  });
  await check('optional param omitted and given', async () => {
    assert.strictEqual(await connection.sendRequest('greet', { name: 'Ada' }), 'Hello, Ada!');
    assert.strictEqual(await connection.sendRequest('greet', 'Ada', 'Hi'), 'Hi, Ada!');
  });
  await check('whole positional params', async () => {
    assert.strictEqual(await connection.sendRequest('sum', 1, 2, 3, 4), 10);
  });
  await check('notifications are not answered', async () => {
    await connection.sendNotification('notify_hello', 7);
    await connection.sendNotification('notify_sum', 1, 2, 3);
    await connection.sendNotification('update', 'a', 'b');
    // Still in step: the next request gets its own answer.
    assert.deepStrictEqual(await connection.sendRequest('get_data'), ['hello', 5]);
  });
  await check('error object with data', async () => {
    const err = await rejects(connection.sendRequest('fail', { code: -32001, message: 'nope', data: { why: 1 } }));
    assert.strictEqual(err.code, -32001);
    assert.strictEqual(err.message, 'nope');
    assert.deepStrictEqual(err.data, { why: 1 });
  });
  await check('unknown method', async () => {
    const err = await rejects(connection.sendRequest('no_such_method'));
    assert.strictEqual(err.code, -32601);
  });
  await check('invalid params name the parameter', async () => {
    const err = await rejects(connection.sendRequest('subtract', { minuend: 1 }));
    assert.strictEqual(err.code, -32602);
    assert.match(err.message, /subtrahend/);
  });
  await check('concurrent requests, answered out of order', async () => {
    const order = [];
    const calls = [];
    for (let i = 0; i < 20; i += 1) {
      const ms = (20 - i) * 5;
      calls.push(connection.sendRequest('sleep', ms).then((answer) => {
        order.push(answer);
        return answer;
      }));
    }
    for (let i = 0; i < 200; i += 1) {
      calls.push(connection.sendRequest('subtract', i, 1));
    }
    const answers = await Promise.all(calls);
    for (let i = 0; i < 20; i += 1) assert.strictEqual(answers[i], (20 - i) * 5);
    for (let i = 0; i < 200; i += 1) assert.strictEqual(answers[20 + i], i - 1);
    // The first (longest) sleep did not hold up the last (shortest) one.
    assert.ok(order.indexOf(5) < order.indexOf(100), `answer order ${order}`);
  });
  await check('server-to-client request answered by vscode-jsonrpc', async () => {
    assert.strictEqual(await connection.sendRequest('ask_client', { method: 'double', params: { x: 21 } }), 42);
  });
  await check("server-to-client request failing with vscode-jsonrpc's error", async () => {
    const err = await rejects(connection.sendRequest('ask_client', { method: 'refuse' }));
    assert.strictEqual(err.code, -32042);
    assert.strictEqual(err.message, 'refused by vscode-jsonrpc');
    assert.deepStrictEqual(err.data, { side: 'node' });
  });
  await check('server-to-client notification arrives before the answer', async () => {
    await connection.sendRequest('notify_client', { method: 'note', params: { text: 'hi' } });
    assert.deepStrictEqual(notes, ['hi']);
  });
  await check('concurrent server-to-client requests', async () => {
    const calls = [];
    for (let i = 0; i < 50; i += 1) {
      calls.push(connection.sendRequest('ask_client', { method: 'double', params: { x: 21 } }));
    }
    assert.deepStrictEqual(await Promise.all(calls), new Array(50).fill(42));
  });
}

main().then(
  () => {
    connection.dispose();
    child.stdin.end();
    child.on('exit', (code) => {
      if (code !== 0) {
        console.error(`calculator exited with ${code}`);
        process.exit(1);
      }
      console.log(`all ${passed} checks passed`);
      process.exit(0);
    });
  },
  (err) => {
    console.error(`FAILED after ${passed} checks: ${err && err.stack ? err.stack : err}`);
    child.kill();
    process.exit(1);
  },
);
