import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AgentRuntimeNotStartedError, AgentRuntimeRunningError, InvalidRequestError } from '../../../plugins/agent-api/agent-errors.js';
import { dispatch } from '../../../plugins/agent-api/dispatch.js';
import { getAgentInstance } from '../../../plugins/agent-api/get-agent-instance.js';
import { init } from '../../../plugins/agent-api/init.js';
import { start, type StartOptions } from '../../../plugins/agent-api/start.js';
import { SPEC_AGENT_SOURCE, specAgentsPlugin } from '../../helpers/agent-api-fixtures.js';

function Support(): void {}
function Billing(): void {}

const SCRIPTS = { Support: { turns: [{ text: 'support here' }], onEnd: 'repeat-last' as const }, Billing: { turns: [{ text: 'billing here' }], onEnd: 'repeat-last' as const }, 'billing-v2': { turns: [{ text: 'v2 here' }], onEnd: 'repeat-last' as const } };

function options(overrides: Partial<StartOptions> = {}): StartOptions {
  return { agents: [Support, Billing], env: {}, plugins: [specAgentsPlugin(SCRIPTS)], agentSource: SPEC_AGENT_SOURCE, ...overrides };
}

/** Document 001 "start()": one runtime per process, identities never positional, db one option away, stop and dispose. */
describe('agent-api: start()', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-start-')));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('before start (and after stop) every send rejects with AgentRuntimeNotStartedError (runtime_unavailable, 503)', async () => {
    const err = await dispatch(Support, { id: 'a', message: 'hi' }).then(() => assert.fail('resolved'), (e: unknown) => e);
    assert.ok(err instanceof AgentRuntimeNotStartedError);
    assert.deepEqual([err.type, err.status], ['runtime_unavailable', 503]);
    await assert.rejects(init(Support).dispatch('hi'), AgentRuntimeNotStartedError);
    await assert.rejects(getAgentInstance(Support, 'a'), AgentRuntimeNotStartedError);
    const runtime = await start(options());
    await runtime.stop();
    await assert.rejects(dispatch(Support, { id: 'a', message: 'hi' }), AgentRuntimeNotStartedError);
  });

  it('one runtime per process: a second start throws, a start after stop works', async () => {
    const runtime = await start(options());
    try {
      await assert.rejects(start(options()), AgentRuntimeRunningError);
    } finally {
      await runtime.stop();
    }
    const again = await start(options());
    await again.stop();
    await again.stop();
  });

  it('await using disposes the runtime (Symbol.asyncDispose is stop)', async () => {
    {
      await using runtime = await start(options());
      assert.equal((await init(Support).dispatch('hi')).text, 'support here');
      assert.equal(runtime[Symbol.asyncDispose], runtime.stop);
    }
    await assert.rejects(dispatch(Support, { id: 'a', message: 'hi' }), AgentRuntimeNotStartedError);
  });

  it('identities come from name, agentName or the function name, never the position: reordering keeps the conversations', async () => {
    const file = path.join(dir, 'run.db');
    let runtime = await start(options({ db: { sqlite: file } }));
    const support = await dispatch(Support, { id: 'c-1', message: 'hi' });
    await runtime.stop();
    runtime = await start(options({ db: { sqlite: file }, agents: [Billing, Support] }));
    try {
      assert.deepEqual(await getAgentInstance(Support, 'c-1'), { id: 'c-1', uid: support.uid });
      assert.equal(await getAgentInstance(Billing, 'c-1'), null);
    } finally {
      await runtime.stop();
    }
  });

  it('an entry name overrides the identity; the agentName static too', async () => {
    const anonymous = [() => undefined][0] as unknown as typeof Support;
    const named = Object.assign(function Internal(): void {}, { agentName: 'billing-v2' });
    const runtime = await start(options({ agents: [{ agent: anonymous, name: 'Support' }, named] }));
    try {
      assert.equal((await init(anonymous).dispatch('hi')).text, 'support here');
      assert.equal((await init(named).dispatch('hi')).text, 'v2 here');
    } finally {
      await runtime.stop();
    }
  });

  it('refuses bad agent lists at start: empty, anonymous without a name, bad identity, duplicates, one function twice, bad durability', async () => {
    const anonymous = [() => undefined][0] as unknown as typeof Support;
    const bad: Array<StartOptions['agents']> = [
      [],
      [anonymous],
      [{ agent: Support, name: '9lives' }],
      [{ agent: Support, name: 'has:colon' }],
      [Support, { agent: Billing, name: 'Support' }],
      [Support, { agent: Support, name: 'Other' }],
      [Object.assign(function Durable(): void {}, { durability: { maxAttempts: 0 } })],
      [Object.assign(function Durable(): void {}, { durability: { retries: 3 } })],
    ];
    for (const agents of bad) await assert.rejects(start(options({ agents })), InvalidRequestError, JSON.stringify(agents));
    // Nothing stayed running.
    const runtime = await start(options());
    await runtime.stop();
  });

  it('db: { sqlite } keeps instances and their conversations across runtimes; the default memory store does not', async () => {
    const file = path.join(dir, 'nested', 'run.db');
    let runtime = await start(options({ db: { sqlite: file } }));
    const handle = init(Support, { id: 'kept' });
    const first = await handle.dispatch('one');
    await runtime.stop();
    runtime = await start(options({ db: { sqlite: file } }));
    try {
      const second = await init(Support, { id: 'kept', uid: first.uid! }).dispatch('two');
      assert.equal(second.uid, first.uid);
      const messages = await runtime.kernel.store.listThreadMessages('agent:Support:kept');
      assert.deepEqual(messages.filter((m) => m.role === 'user').map((m) => m.content), ['one', 'two']);
    } finally {
      await runtime.stop();
    }
    runtime = await start(options());
    try {
      assert.equal(await getAgentInstance(Support, 'kept'), null);
    } finally {
      await runtime.stop();
    }
  });

  it("refuses a db that is neither 'memory' nor { sqlite: path }", async () => {
    await assert.rejects(start(options({ db: { sqlite: '' } })), InvalidRequestError);
    await assert.rejects(start(options({ db: 'postgres' as never })), InvalidRequestError);
  });
});
