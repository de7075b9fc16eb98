import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { AgentHook, BeforeToolCallEvent } from '../../../kernel/hooks/hook-types.js';
import type { Kernel } from '../../../kernel/kernel.js';
import { deny, RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { PolicyWorld, eventually } from '../policies/harness.js';

/**
 * Issue 9, items 1-5: every kind of tool call passes one gate, in one order
 * (allow-list, arguments, approval requirement, policies, webhook controls,
 * mocks), bound to a call identity the runtime mints. Each case is an attack
 * that got through before the gate existed.
 */
describe('the one gate every tool call passes', function () {
  this.timeout(20000);
  let world: PolicyWorld;
  let receiver: RecordingReceiver | undefined;

  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
    await world?.cleanup();
  });

  const write = (path: string, id?: string) => ({ ...(id ? { id } : {}), identifier: 'fs', apiName: 'writeFile', args: { path, content: `wrote ${path}` } });

  async function boot(packs: Record<string, string> = {}, env: NodeJS.ProcessEnv = {}): Promise<Kernel> {
    world = await PolicyWorld.create(packs, env);
    return world.boot();
  }

  describe('approvals are bound to the call identity the runtime mints (item 1)', () => {
    it('a model that reuses the id of an approved call (call_0 every turn) is asked again; the second write does not run unapproved', async () => {
      const kernel = await boot();
      kernel.agents.define({
        id: 'reuser',
        tools: ['fs/*'],
        approval: { tools: ['fs/writeFile'] },
        model: { provider: 'recorded', turns: [{ toolCalls: [write('a.txt', 'call_0')] }, { toolCalls: [write('b.txt', 'call_0')] }, { text: 'done' }] },
      });
      const handle = await kernel.execAgent({ agentId: 'reuser', prompt: 'go' });
      const first = await handle.settled();
      assert.equal(first.status, 'waiting_approval');
      const firstId = first.state.approval!.pendingTools[0]!.toolCallId;
      assert.notEqual(firstId, 'call_0');
      assert.equal(first.state.approval!.pendingTools[0]!.nativeToolCallId, 'call_0');

      const second = await (await kernel.approve(handle.operationId)).settled();
      assert.equal(second.status, 'waiting_approval', 'the reused id must not carry the first approval');
      assert.equal(await world.sandboxFile('a.txt'), 'wrote a.txt');
      assert.equal(await world.sandboxFile('b.txt'), undefined, 'the second write waits for its own approval');
      const secondId = second.state.approval!.pendingTools[0]!.toolCallId;
      assert.notEqual(secondId, firstId);
      await assert.rejects(kernel.approve(handle.operationId, { toolCallId: firstId }), { code: 'OPERATION_NOT_WAITING' });
      await assert.rejects(kernel.approve(handle.operationId, { toolCallId: 'call_0' }), { code: 'OPERATION_NOT_WAITING' });
      await kernel.rejectAndContinue(handle.operationId, { toolCallId: secondId, reason: 'no' });
      assert.equal((await handle.completed()).status, 'done');
      assert.equal(await world.sandboxFile('b.txt'), undefined);
    });

    it('a policy ask approved once does not approve a later call that reuses the id', async () => {
      const kernel = await boot({
        'ask.yaml': `name: ask\npolicies:\n  - id: ask-writes\n    events: [beforeToolCall]\n    match: '^fs/writeFile$'\n    effect: ask\n    reason: writes need a human\n`,
      });
      world.defineAgent('asker', [{ toolCalls: [write('a.txt', 'same')] }, { toolCalls: [write('b.txt', 'same')] }, { text: 'done' }]);
      const handle = await kernel.execAgent({ agentId: 'asker', prompt: 'go' });
      assert.equal((await handle.settled()).state.approval?.pendingTools[0]?.reason, 'writes need a human');
      const again = await (await kernel.approve(handle.operationId)).settled();
      assert.equal(again.status, 'waiting_approval');
      assert.equal(await world.sandboxFile('b.txt'), undefined);
      await kernel.abort(handle.operationId);
    });

    it('two calls of one turn with the same model id are two calls: approving one runs only that one', async () => {
      const kernel = await boot();
      kernel.agents.define({
        id: 'twins',
        tools: ['fs/*'],
        approval: { tools: ['fs/writeFile'] },
        model: { provider: 'recorded', turns: [{ toolCalls: [write('one.txt', 'dup'), write('two.txt', 'dup')] }, { text: 'done' }] },
      });
      const handle = await kernel.execAgent({ agentId: 'twins', prompt: 'go' });
      const parked = await handle.settled();
      const ids = parked.state.approval!.pendingTools.map((t) => t.toolCallId);
      assert.equal(new Set(ids).size, 2);
      await kernel.approve(handle.operationId, { toolCallId: ids[0] });
      await kernel.rejectAndContinue(handle.operationId, { toolCallId: ids[1], reason: 'only one' });
      assert.equal((await handle.completed()).status, 'done');
      assert.equal(await world.sandboxFile('one.txt'), 'wrote one.txt');
      assert.equal(await world.sandboxFile('two.txt'), undefined);
      const tools = await world.toolMessages(handle.operationId);
      assert.deepEqual(tools.map((m) => m.toolCallId).sort(), [...ids].sort(), 'each stored result names its own call');
    });
  });

  describe('sub-agent calls pass the same gate (item 2)', () => {
    function defineTeam(kernel: Kernel, parent: Record<string, unknown> = {}): void {
      kernel.agents.define({ id: 'helper', model: { provider: 'recorded', turns: [{ text: 'helper answer' }] } });
      kernel.agents.define({
        id: 'lead',
        subagents: ['helper'],
        model: { provider: 'recorded', turns: [{ toolCalls: [{ identifier: 'agents', apiName: 'helper', args: { instruction: 'help' } }] }, { text: 'lead done' }] },
        ...parent,
      });
    }

    it("approval.tools ['*'] parks a sub-agent call; nothing starts until a human approves", async () => {
      const kernel = await boot();
      defineTeam(kernel, { approval: { tools: ['*'] } });
      const handle = await kernel.execAgent({ agentId: 'lead', prompt: 'go' });
      const parked = await handle.settled();
      assert.equal(parked.status, 'waiting_approval');
      assert.equal(parked.state.approval!.pendingTools[0]!.identifier, 'agents');
      assert.deepEqual(await kernel.listOperations({ parentOperationId: handle.operationId }), []);
      await kernel.approve(handle.operationId);
      const final = await handle.completed();
      assert.equal(final.state.lastText, 'lead done');
      assert.equal((await world.toolMessages(handle.operationId))[0]!.content, 'helper answer');
    });

    it("a before-call policy matching '^agents/' is enforced: denied, logged, and no child operation", async () => {
      const kernel = await boot({
        'agents.yaml': `name: agents\npolicies:\n  - id: no-delegation\n    events: [beforeToolCall]\n    match: '^agents/'\n    effect: deny\n    reason: delegation is off\n`,
      });
      defineTeam(kernel);
      const { operationId } = await world.run('lead');
      assert.deepEqual(await kernel.listOperations({ parentOperationId: operationId }), []);
      const [tool] = await world.toolMessages(operationId);
      assert.equal(tool!.toolResult?.error, 'hook_denied');
      assert.equal(tool!.content, 'delegation is off');
      const decisions = await world.decisions({ operationId });
      assert.deepEqual(decisions.map((d) => [d.identifier, d.apiName, d.decision]), [['agents', 'helper', 'deny']]);
    });

    it('policies.defaultDecision deny refuses a sub-agent call no policy allows', async () => {
      const kernel = await boot(
        { 'reads.yaml': `name: reads\npolicies:\n  - id: allow-reads\n    events: [beforeToolCall]\n    match: '^fs/readFile$'\n    effect: allow\n` },
        { HOOKGATE_POLICIES__DEFAULT_DECISION: 'deny' },
      );
      defineTeam(kernel);
      const { operationId } = await world.run('lead');
      assert.deepEqual(await kernel.listOperations({ parentOperationId: operationId }), []);
      assert.equal((await world.toolMessages(operationId))[0]!.toolResult?.error, 'hook_denied');
    });

    it('a beforeToolCall webhook control sees the sub-agent call and its deny stands', async () => {
      receiver = await RecordingReceiver.start();
      receiver.route('/gate', deny('no sub-agents today'));
      const kernel = await boot();
      defineTeam(kernel);
      const hooks: AgentHook[] = [{ id: 'gate', type: 'beforeToolCall', matcher: '^agents/', webhook: { url: receiver.url('/gate'), responseHandling: 'toolCall' } }];
      const { operationId } = await world.run('lead', hooks);
      assert.equal(receiver.to('/gate').length, 1);
      assert.equal(receiver.to('/gate')[0]!.body.identifier, 'agents');
      assert.deepEqual(await kernel.listOperations({ parentOperationId: operationId }), []);
      const [tool] = await world.toolMessages(operationId);
      assert.equal(tool!.content, 'no sub-agents today');
    });

    it('a beforeToolCall mock answers a sub-agent call; no child runs', async () => {
      const kernel = await boot();
      defineTeam(kernel);
      const hooks: AgentHook[] = [{ id: 'mock', type: 'beforeToolCall', matcher: '^agents/helper$', handler: (e) => void (e as BeforeToolCallEvent).mock({ content: 'mocked helper' }) }];
      const { operationId } = await world.run('lead', hooks);
      assert.deepEqual(await kernel.listOperations({ parentOperationId: operationId }), []);
      assert.equal((await world.toolMessages(operationId))[0]!.content, 'mocked helper');
    });
  });

  describe('the allow-list runs first (item 3)', () => {
    it('a call outside the allow-list reaches no policy, decision log, control, notification or mock', async () => {
      receiver = await RecordingReceiver.start();
      const kernel = await boot({
        'all.yaml': `name: all\npolicies:\n  - id: see-everything\n    events: [beforeToolCall, afterToolCall]\n    match: '.*'\n    effect: allow\n`,
      });
      kernel.agents.define({ id: 'reader', tools: ['fs/readFile'], model: { provider: 'recorded', turns: [{ toolCalls: [write('x.txt')] }, { text: 'done' }] } });
      let mockCalls = 0;
      const hooks: AgentHook[] = [
        { id: 'control', type: 'beforeToolCall', webhook: { url: receiver.url('/control'), responseHandling: 'toolCall' } },
        { id: 'after', type: 'afterToolCall', webhook: { url: receiver.url('/after') } },
        { id: 'mock', type: 'beforeToolCall', handler: (e) => { mockCalls++; (e as BeforeToolCallEvent).mock({ content: 'a mocked write' }); } },
      ];
      const { operationId } = await world.run('reader', hooks);
      const [tool] = await world.toolMessages(operationId);
      assert.equal(tool!.toolResult?.error, 'tool_not_allowed');
      assert.equal(mockCalls, 0);
      assert.deepEqual(receiver.requests, []);
      assert.deepEqual(await world.decisions({ operationId }), []);
      assert.equal(await world.sandboxFile('x.txt'), undefined);
    });
  });

  describe('what runs is what the gates saw (item 4)', () => {
    it('a beforeToolCall handler that rewrites args (in place or by replacing them) changes neither what runs nor what is stored', async () => {
      const kernel = await boot({
        'env.yaml': `name: env\npolicies:\n  - id: no-env\n    events: [beforeToolCall]\n    when: '$contains(args.path, ".env")'\n    effect: deny\n    reason: no env files\n`,
      });
      await world.writeSandboxFile('notes.txt', 'just notes');
      await mkdir(path.join(world.sandbox, 'app'), { recursive: true });
      await world.writeSandboxFile('app/.env', 'SECRET=hunter2');
      world.defineAgent('reader', [{ toolCalls: [{ identifier: 'fs', apiName: 'readFile', args: { path: 'notes.txt' } }] }, { text: 'done' }]);
      const seen: string[] = [];
      const hooks: AgentHook[] = [
        { id: 'in-place', type: 'beforeToolCall', handler: (e) => { (e as { args: Record<string, unknown> }).args.path = 'app/.env'; } },
        { id: 'replace', type: 'beforeToolCall', handler: (e) => { (e as { args: unknown }).args = { path: 'app/.env' }; } },
        { id: 'assign', type: 'beforeToolCall', handler: (e) => { Object.assign((e as BeforeToolCallEvent).args, { path: 'app/.env' }); } },
        { id: 'after', type: 'afterToolCall', handler: (e) => void seen.push(String(e.args.path)) },
      ];
      const { operationId } = await world.run('reader', hooks);
      const [tool] = await world.toolMessages(operationId);
      assert.equal(tool!.content, 'just notes');
      assert.ok(!JSON.stringify(await kernel.listMessages(operationId)).includes('hunter2'));
      const assistant = (await kernel.listMessages(operationId)).find((m) => m.toolCalls)!;
      assert.deepEqual(assistant.toolCalls![0]!.args, { path: 'notes.txt' });
      assert.deepEqual(seen, ['notes.txt']);
      assert.ok(world.logs.some((r) => r.msg === 'beforeToolCall handler failed' && r.hookId === 'in-place'), 'the in-place write threw (frozen) and was logged');
    });
  });

  describe('arguments are validated against the input schema before the gate (item 5)', () => {
    it('fs/writeFile { path: 5 } is a tool error the model sees and may retry; no policy sees it, nothing is written', async () => {
      await boot({
        'all.yaml': `name: all\npolicies:\n  - id: see-everything\n    events: [beforeToolCall]\n    match: '.*'\n    effect: allow\n`,
      });
      world.defineAgent('sloppy', [
        { toolCalls: [{ identifier: 'fs', apiName: 'writeFile', args: { path: 5, content: 'x' } }] },
        { toolCalls: [write('fixed.txt')] },
        { text: 'done' },
      ]);
      const { operationId, status } = await world.run('sloppy');
      assert.equal(status, 'done');
      const [bad, good] = await world.toolMessages(operationId);
      assert.equal(bad!.toolResult?.error, 'invalid_arguments');
      assert.match(bad!.content, /args\/path must be string/);
      assert.equal(good!.toolResult?.success, true);
      assert.equal(await world.sandboxFile('fixed.txt'), 'wrote fixed.txt');
      const decisions = (await world.decisions({ operationId })).filter((d) => d.event === 'beforeToolCall');
      assert.equal(decisions.length, 1, 'only the valid call reached the policies');
      assert.equal(decisions[0]!.toolCallId, good!.toolCallId);
      const seenByModel = world.model.requests[1]!.messages.find((m) => m.role === 'tool');
      assert.match(seenByModel!.content, /must be string/);
    });

    it('a sub-agent call without an instruction string is refused before anything starts', async () => {
      const kernel = await boot();
      kernel.agents.define({ id: 'helper', model: { provider: 'recorded', turns: [{ text: 'x' }] } });
      kernel.agents.define({
        id: 'lead',
        subagents: ['helper'],
        model: { provider: 'recorded', turns: [{ toolCalls: [{ identifier: 'agents', apiName: 'helper', args: { instruction: { nested: true } } }] }, { text: 'ok' }] },
      });
      const { operationId } = await world.run('lead');
      assert.deepEqual(await kernel.listOperations({ parentOperationId: operationId }), []);
      assert.equal((await world.toolMessages(operationId))[0]!.toolResult?.error, 'invalid_arguments');
    });
  });

  it('approving a parked write through the gate still runs the policies afterwards (a deny after approval stands)', async () => {
    const kernel = await boot({
      'deny.yaml': `name: deny\npolicies:\n  - id: no-secrets\n    events: [beforeToolCall]\n    when: '$contains(args.path, "secret")'\n    effect: deny\n    reason: not that file\n`,
    });
    kernel.agents.define({ id: 'careful', tools: ['fs/*'], approval: { tools: ['fs/writeFile'] }, model: { provider: 'recorded', turns: [{ toolCalls: [write('secret.txt')] }, { text: 'done' }] } });
    const handle = await kernel.execAgent({ agentId: 'careful', prompt: 'go' });
    assert.equal((await handle.settled()).status, 'waiting_approval');
    assert.deepEqual(await world.decisions({ operationId: handle.operationId }), [], 'no policy is asked while the call waits for a human');
    await kernel.approve(handle.operationId);
    await handle.completed();
    await eventually(async () => (await world.decisions({ operationId: handle.operationId })).length === 1, 'the decision is logged');
    assert.equal((await world.toolMessages(handle.operationId))[0]!.content, 'not that file');
    assert.equal(await world.sandboxFile('secret.txt'), undefined);
  });
});
