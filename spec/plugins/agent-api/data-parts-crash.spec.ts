import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { currentRuntime, start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { formatOffset } from '../../../plugins/agent-api/conversation-stream.js';
import { settledSubmission as settled, untilHanging } from './agent-api-fixtures.js';
import { cliEnv, killed } from '../../helpers/cli-process.js';
import { DataCrash } from './fixtures/data-parts-agent.js';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'data-parts-child.js');
const ENV = { HOOKGATE_RUNTIME__LEASE_MS: '1500' };

/** useDataWriter's parts are committed with their step: a process killed mid-response loses none and duplicates none. */
describe('agent-api: data parts across a SIGKILL', function () {
  this.timeout(60_000);
  let dir: string;
  let runtime: AgentRuntimeHandle | undefined;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-data-crash-')));
  });
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('a part written by a committed step before the kill is in the reply of the resumed response, once', async () => {
    const db = path.join(dir, 'crash.db');
    const child = spawn(process.execPath, [CHILD, db], { env: cliEnv({ ...ENV, SPEC_DATA_PARTS_HANG: '1' }), stdio: ['ignore', 'pipe', 'pipe'] });
    await untilHanging(child);
    await killed(child);

    runtime = await start({ agents: [DataCrash], db: { sqlite: db }, env: ENV });
    const [submission] = await runtime.kernel.store.listSubmissions({ threadId: 'agent:DataCrash:crash' });
    assert.ok(submission !== undefined, 'the send was not admitted before the kill');
    const final = await settled(runtime, submission.id);
    assert.deepEqual([final.status, final.result?.text, final.attempts], ['completed', 'done', 2]);
    assert.deepEqual(final.result?.data, { card: [{ n: 1 }], after: ['resumed'] });
    // The stream shows each part once, at increasing positions, the one written before the kill first.
    const { chunks } = await currentRuntime('spec').feed.read('agent:DataCrash:crash');
    const parts = chunks.filter((c) => c.type === 'data-part').map((c) => (c.type === 'data-part' ? [c.name, c.data] : []));
    assert.deepEqual(parts, [['card', { n: 1 }], ['after', 'resumed']]);
    const order = chunks.map((c) => formatOffset(c.position));
    assert.deepEqual([...order].sort(), order);
    assert.equal(new Set(order).size, order.length);
  });
});

