import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { json, type RecordedWebhook, type RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { control, defineAgent, fsCall, toolMessages, useWebhookWorld, type World } from './harness.js';
import { runHookgate } from '../../helpers/cli-process.js';


/** A header secret with characters that percent-encoding and base64 change. */
const HOOK_TOKEN = 'hk/Tok+en=SECRET-4417';
const ENV_TOKEN = 'envTok-SECRET/9c2+ab';

/** Every spelling of a secret a receiver might echo back (the value, its header line, base64, URL encoding). */
function spellings(secret: string): string[] {
  const bearer = `Bearer ${secret}`;
  return [
    secret,
    bearer,
    Buffer.from(secret).toString('base64'),
    Buffer.from(secret).toString('base64url'),
    Buffer.from(bearer).toString('base64'),
    encodeURIComponent(secret),
    Buffer.from(secret).toString('hex'),
  ];
}

/** A control receiver that denies and echoes what it was sent, in several encodings. */
function echoingDeny(req: RecordedWebhook) {
  const auth = String(req.headers.authorization ?? '');
  const secret = auth.replace(/^Bearer /, '');
  const reason = [
    `token was ${auth}`,
    `value ${secret}`,
    `b64 ${Buffer.from(secret).toString('base64')}`,
    `b64url ${Buffer.from(secret).toString('base64url')}`,
    `header-b64 ${Buffer.from(auth).toString('base64')}`,
    `url ${encodeURIComponent(secret)}`,
    `hex ${Buffer.from(secret).toString('hex')}`,
  ].join('; ');
  return json({ decision: 'deny', reason, extra: auth });
}

async function bytes(file: string): Promise<string> {
  try {
    return (await readFile(file)).toString('latin1');
  } catch {
    return '';
  }
}

/** Runs `node dist/cli.js ...args` in `cwd` without HOOKGATE_* or AGENT_HOOK_* variables. */
const hookgate = runHookgate;

/**
 * Issue 9, item 9: a control receiver that echoes the credentials it was sent
 * in its deny reason. The reason becomes the tool result the model reads and
 * the store keeps, so every resolved secret (a `${HOOK_TOKEN}` header value,
 * the environment hook token) is replaced with `[redacted]` before it becomes
 * a verdict, in every spelling the receiver used.
 */
describe('integration: secrets echoed back by a control receiver are never stored', function () {
  this.timeout(30_000);
  let world: World;
  let receiver: RecordingReceiver;

  useWebhookWorld(
    (s) => ({ world, receiver } = s),
    (r) => ({
      env: {
        HOOK_TOKEN,
        AGENT_HOOK_WEBHOOK_URL: r.url('/env'),
        AGENT_HOOK_WEBHOOK_TOKEN: ENV_TOKEN,
        AGENT_HOOK_WEBHOOK_EVENTS: 'afterToolCall',
        AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING: 'toolCall',
      },
    }),
  );

  it('a deny reason quoting the header secret or the environment token is stored, listed and shown with [redacted]', async () => {
    receiver.route('/gate', echoingDeny).route('/env', echoingDeny);
    const kernel = await world.boot();
    await mkdir(world.sandbox, { recursive: true });
    // Call 1 is denied by the caller's beforeToolCall control (header secret);
    // call 2 passes it (no match) and is denied by the environment afterToolCall control.
    defineAgent(kernel, 'echo', [fsCall('writeFile', { path: 'w.txt', content: 'data' }), fsCall('listDir', { path: '.' }), { text: 'finished' }]);
    const gate = control('gate', 'beforeToolCall', receiver.url('/gate'), { headers: { Authorization: 'Bearer ${HOOK_TOKEN}' }, allowedEnvVars: ['HOOK_TOKEN'] });
    const handle = await kernel.execAgent({ agentId: 'echo', prompt: 'go', hooks: [{ ...gate, matcher: '^fs/writeFile$' }] });
    const record = await handle.completed();
    const operationId = handle.operationId;
    assert.equal(record.status, 'done');

    // The receivers really were sent the secrets, and echoed them (so the scans below are not vacuous).
    assert.equal(receiver.to('/gate')[0]!.headers.authorization, `Bearer ${HOOK_TOKEN}`);
    assert.ok(receiver.to('/env').length >= 1);
    assert.ok(receiver.to('/env').every((r) => r.headers.authorization === `Bearer ${ENV_TOKEN}`));

    const tools = await toolMessages(kernel, operationId);
    assert.equal(tools.length, 2);
    const [denied, afterDenied] = tools;
    assert.equal(denied!.toolResult?.error, 'hook_denied');
    assert.equal(afterDenied!.toolResult?.error, 'hook_denied');
    for (const tool of tools) {
      // The reason survives, with each secret spelling replaced.
      assert.match(tool.content, /^token was \[redacted\]; value \[redacted\]; b64 \[redacted\]/);
      assert.match(tool.content, /header-b64 [^;]*\[redacted\]/);
      assert.match(tool.content, /url \[redacted\]; hex \[redacted\]$/);
      assert.deepEqual(tool.toolResult?.state, { type: 'blocked', reason: tool.content });
    }

    const messages = JSON.stringify(await kernel.listMessages(operationId, { includeCompacted: true }));
    const steps = JSON.stringify(await kernel.listSteps(operationId));
    const operation = JSON.stringify(await kernel.getOperation(operationId));
    const timeline = world.eventLines.join('\n');
    const modelRequests = JSON.stringify(world.model.requests);
    const dbWhileOpen = (await bytes(world.dbPath)) + (await bytes(`${world.dbPath}-wal`));
    await kernel.stop();
    const dbAfterStop = (await bytes(world.dbPath)) + (await bytes(`${world.dbPath}-wal`));

    const show = await hookgate(world.dir, ['show', operationId, '--json']);
    assert.equal(show.code, 0, show.stderr);
    const shown = JSON.parse(show.stdout) as { messages: Array<{ role: string; content: string }> };
    assert.equal(shown.messages.filter((m) => m.role === 'tool' && m.content.startsWith('token was [redacted]')).length, 2);
    const showText = await hookgate(world.dir, ['show', operationId]);
    assert.equal(showText.code, 0, showText.stderr);

    const places: Record<string, string> = {
      'SQLite file + WAL while open': dbWhileOpen,
      'SQLite file + WAL after stop': dbAfterStop,
      listMessages: messages,
      listSteps: steps,
      getOperation: operation,
      'timeline events': timeline,
      'model requests': modelRequests,
      'hookgate show --json': show.stdout + show.stderr,
      'hookgate show': showText.stdout + showText.stderr,
      'log lines': world.logLines.join('\n'),
    };
    assert.ok(dbAfterStop.length > 0);
    for (const [where, text] of Object.entries(places)) {
      for (const secret of [HOOK_TOKEN, ENV_TOKEN]) {
        for (const spelling of spellings(secret)) {
          assert.ok(!text.includes(spelling), `${JSON.stringify(spelling)} (a spelling of a secret) leaked into ${where}`);
        }
      }
    }
  });
});
