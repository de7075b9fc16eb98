import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import type { Kernel } from '../../../kernel/kernel.js';
import { allow, type RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { control, defineAgent, fsCall, useWebhookWorld, webhookHook, type World } from './harness.js';

const HEADER_SECRET = 's3cr3t-VALUE-123456';
const ENV_TOKEN = 'envT0ken-SECRET-987654';

/** Reads a file's bytes, or an empty buffer when it does not exist. */
async function bytes(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch {
    return Buffer.alloc(0);
  }
}

/** Everything the process writes to stdout/stderr while `fn` runs (still passed through). */
async function captureOutput<T>(fn: () => Promise<T>): Promise<{ value: T; output: string }> {
  const chunks: string[] = [];
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((c: unknown, ...rest: unknown[]) => (chunks.push(String(c)), out(c as never, ...(rest as [])))) as typeof process.stdout.write;
  process.stderr.write = ((c: unknown, ...rest: unknown[]) => (chunks.push(String(c)), err(c as never, ...(rest as [])))) as typeof process.stderr.write;
  try {
    return { value: await fn(), output: chunks.join('') };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

/**
 * A full run with a secret header value (a `${API_KEY}` template) and an
 * environment hook token: the receivers get both, and neither appears in the
 * SQLite file (main file and WAL), any log line, stdout/stderr, the timeline
 * events (as NDJSON) or any API output.
 */
describe('integration: webhook secrets appear nowhere but on the wire', function () {
  this.timeout(20_000);
  let world: World;
  let receiver: RecordingReceiver;

  useWebhookWorld(
    (s) => ({ world, receiver } = s),
    (r) => ({
      env: {
        API_KEY: HEADER_SECRET,
        AGENT_HOOK_WEBHOOK_URL: r.url('/env'),
        AGENT_HOOK_WEBHOOK_TOKEN: ENV_TOKEN,
        AGENT_HOOK_WEBHOOK_EVENTS: 'beforeToolCall,afterToolCall,afterStep,onComplete',
        AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING: 'toolCall',
      },
      configure: (config) => void (config.webhooks.qstash.tokenEnv = 'HOOKGATE_E2E_UNSET_QSTASH_TOKEN'),
    }),
  );

  it('after a run with approvals, failures and fallbacks, only the receivers ever saw the secrets', async () => {
    receiver.route('/gate', allow()).route('/env', allow()).route('/failing', { status: 500, body: `echo ${HEADER_SECRET}` });
    const withSecret = { headers: { 'X-Api-Key': '${API_KEY}', Authorization: 'Bearer ${API_KEY}' }, allowedEnvVars: ['API_KEY'] };
    const hooks = [
      control('gate', 'beforeToolCall', receiver.url('/gate'), withSecret),
      control('broken-control', 'afterToolCall', receiver.url('/failing'), { ...withSecret, onError: 'continue' }),
      webhookHook('failing-notification', 'afterToolCall', { url: receiver.url('/failing'), ...withSecret }),
      webhookHook('queued', 'afterStep', { url: receiver.url('/queued'), delivery: 'qstash', ...withSecret }),
      webhookHook('done', 'onComplete', { url: receiver.url('/done'), ...withSecret }),
    ];

    const { value: collected, output } = await captureOutput(async () => {
      const kernel: Kernel = await world.boot();
      await mkdir(world.sandbox, { recursive: true });
      defineAgent(kernel, 'careful', [fsCall('listDir', { path: '.' }), fsCall('writeFile', { path: 'w.txt', content: 'data' }), { text: 'finished' }], {
        approval: ['fs/writeFile'],
      });
      const handle = await kernel.execAgent({ agentId: 'careful', prompt: 'go', userId: 'u1', hooks });
      const operationId = handle.operationId;
      assert.equal((await handle.settled()).status, 'waiting_approval');
      const whileParked = {
        serialized: kernel.hooks.getSerializedHooks(operationId),
        stored: await kernel.store.loadHooks(operationId),
        operation: await kernel.getOperation(operationId),
      };
      const record = await (await kernel.approve(operationId)).completed();
      await receiver.waitFor(() => receiver.to('/done').length === 1 && receiver.to('/env').some((r) => r.body?.hookType === 'onComplete'));
      const after = {
        record,
        operation: await kernel.getOperation(operationId),
        operations: await kernel.listOperations(),
        messages: await kernel.listMessages(operationId, { includeCompacted: true }),
        steps: await kernel.listSteps(operationId),
        serialized: kernel.hooks.getSerializedHooks(operationId),
        stored: await kernel.store.loadHooks(operationId),
        decisions: await kernel.listDecisions(),
        user: await kernel.store.getUser('u1'),
        plugins: kernel.plugins(),
      };
      const dbWhileOpen = Buffer.concat([await bytes(world.dbPath), await bytes(`${world.dbPath}-wal`), await bytes(`${world.dbPath}-shm`)]);
      await kernel.stop();
      const dbAfterStop = Buffer.concat([await bytes(world.dbPath), await bytes(`${world.dbPath}-wal`)]);
      return { whileParked, after, dbWhileOpen, dbAfterStop };
    });

    // The wire: each secret was delivered where it belongs (so the scans below are not vacuous).
    assert.equal(receiver.to('/gate')[0]!.headers['x-api-key'], HEADER_SECRET);
    assert.equal(receiver.to('/gate')[0]!.headers.authorization, `Bearer ${HEADER_SECRET}`);
    assert.ok(receiver.to('/env').length >= 4);
    assert.ok(receiver.to('/env').every((r) => r.headers.authorization === `Bearer ${ENV_TOKEN}`));
    assert.ok(receiver.to('/queued').length >= 1, 'the QStash hook fell back to fetch');
    assert.equal(receiver.to('/queued')[0]!.headers['x-api-key'], HEADER_SECRET);
    assert.equal(collected.after.record.status, 'done');
    assert.equal(await world.readSandbox('w.txt'), 'data');
    assert.ok(collected.dbWhileOpen.length > 0);
    assert.ok(world.logLines.some((l) => l.includes('broken-control')), 'the failing control was logged');
    assert.ok(world.logLines.some((l) => l.includes('falling back to fetch')), 'the QStash fallback was logged');
    assert.ok(JSON.stringify(collected.whileParked.stored).includes('${API_KEY}'), 'the store keeps the template');
    assert.equal(collected.whileParked.serialized?.length, hooks.length);

    const places: Record<string, string> = {
      'SQLite file + WAL + SHM while open': collected.dbWhileOpen.toString('latin1'),
      'SQLite file + WAL after stop': collected.dbAfterStop.toString('latin1'),
      'log lines': world.logLines.join('\n'),
      'stdout/stderr': output,
      'timeline events (NDJSON)': world.eventLines.join('\n'),
      'API outputs while parked': JSON.stringify(collected.whileParked),
      'API outputs after the run': JSON.stringify(collected.after),
      'model requests': JSON.stringify(world.model.requests),
    };
    for (const [where, text] of Object.entries(places)) {
      assert.ok(!text.includes(HEADER_SECRET), `the header secret leaked into ${where}`);
      assert.ok(!text.includes(ENV_TOKEN), `the environment token leaked into ${where}`);
      assert.ok(!text.includes(Buffer.from(HEADER_SECRET, 'utf16le').toString('latin1')), `the header secret (UTF-16) leaked into ${where}`);
    }
  });
});
