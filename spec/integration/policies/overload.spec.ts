import assert from 'node:assert/strict';
import { writeFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { AgentHook } from '../../../kernel/hooks/hook-types.js';
import type { ToolResult } from '../../../kernel/messages.js';
import { toolCall } from '../../policies/support/policy-fixtures.js';
import { fsTurn, PolicyWorld, toolMessagesSeenByModel } from './harness.js';

/**
 * Issue 12, item 3, through a running kernel: a tool call the policy engine
 * has no capacity for (`policies.maxInFlight`) fails closed as
 * `policy_overloaded`, not as a policy's deny. The capacity is held by one
 * decision whose code policy waits until the spec removes a file, so the
 * overload is certain, not a matter of timing.
 */
describe('integration: a tool call refused because the policy engine is at capacity', function () {
  this.timeout(30_000);
  let world: PolicyWorld;
  after(() => world.cleanup());

  const HOLD = `import { existsSync } from 'node:fs';
export default {
  id: 'code.hold',
  events: ['beforeToolCall'],
  async evaluate(event) {
    while (event.args.hold && existsSync(event.args.hold)) await new Promise((r) => setTimeout(r, 5));
    return { effect: 'allow' };
  },
};
`;

  let operationId: string;
  let held: Promise<unknown>;
  let holdFile: string;
  const afterSeen: ToolResult[] = [];
  let beforeHandlerCalls = 0;

  before(async () => {
    world = await PolicyWorld.create(
      { 'hold.yaml': 'policies: [ { module: ./hold.mjs } ]\n' },
      { HOOKGATE_POLICIES__MAX_IN_FLIGHT: '1', HOOKGATE_POLICIES__MAX_WORKERS: '1', HOOKGATE_POLICIES__DEADLINE_MS: '60000' },
    );
    await world.writePack('hold.mjs', HOLD);
    await world.boot();
    holdFile = path.join(world.dir, 'hold');
    await writeFile(holdFile, '');
    held = world.engine.evaluateToolCall(toolCall('fs', 'readFile', { hold: holdFile }));
    assert.equal(world.engine.stats().inFlight, 1);

    world.defineAgent('writer', [fsTurn(['writeFile', { path: 'out.txt', content: 'x' }]), { text: 'done' }]);
    const hooks: AgentHook[] = [
      { id: 'before', type: 'beforeToolCall', handler: () => void beforeHandlerCalls++ },
      { id: 'after', type: 'afterToolCall', handler: (e) => void afterSeen.push((e as unknown as { result: ToolResult }).result) },
    ];
    ({ operationId } = await world.run('writer', hooks));
  });

  it('the tool did not run; its result is a failure classified policy_overloaded, with a reason the model can act on', async () => {
    assert.equal(await world.sandboxFile('out.txt'), undefined);
    const [tool] = await world.toolMessages(operationId);
    assert.equal(tool?.toolResult?.success, false);
    assert.equal(tool?.toolResult?.error, 'policy_overloaded');
    assert.match(tool?.content ?? '', /^policy_overloaded: the policy engine is at capacity \(1 decision in flight\), so no policy evaluated this tool call and it did not run\. It may succeed if called again later\.$/);
    assert.deepEqual(tool?.toolResult?.state, { type: 'blocked', reason: tool?.content });
    const seen = toolMessagesSeenByModel(world.model).map((m) => m.content);
    assert.deepEqual(seen, [tool?.content]);
  });

  it('hooks see it as that blocked result: afterToolCall gets it, the beforeToolCall handler stage is never reached', () => {
    assert.equal(beforeHandlerCalls, 0);
    assert.equal(afterSeen.length, 1);
    assert.equal(afterSeen[0]!.error, 'policy_overloaded');
    assert.equal(afterSeen[0]!.success, false);
  });

  it('nothing of it is in the decision log; the engine counted it and logged a warning', async () => {
    assert.deepEqual(await world.decisions({ operationId }), []);
    assert.equal(world.engine.stats().overloaded, 1);
    const warned = world.logs.filter((r) => r.level === 'warn' && /policy_overloaded/.test(r.msg));
    assert.equal(warned.length, 1);
    assert.equal(warned[0]!.operationId, operationId);
  });

  it('the decision that held the capacity is decided once it can finish', async () => {
    await rm(holdFile);
    assert.deepEqual(await held, { effect: 'allow', policyIds: ['code.hold'] });
    assert.equal(world.engine.stats().inFlight, 0);
  });
});
