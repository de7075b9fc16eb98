import assert from 'node:assert/strict';
import type { AgentHook } from '../../../kernel/hooks/hook-types.js';
import { allow, RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { fsTurn, PolicyWorld, toolMessagesSeenByModel } from './harness.js';

/**
 * Each policy effect through the real kernel: packs loaded from the configured
 * folder by the policy-engine plugin, the builtin fs tools acting on the
 * sandbox, a real SQLite store.
 */
describe('integration: policy effects through the kernel', function () {
  this.timeout(20_000);
  let world: PolicyWorld;
  afterEach(() => world.cleanup());

  describe('deny', () => {
    const PACK = `
name: guard
policies:
  - id: no-secret-writes
    match: '^fs/writeFile$'
    args: { path: '^secret' }
    effect: deny
    reason: secrets are read-only
`;
    let receiver: RecordingReceiver;
    beforeEach(async () => {
      receiver = await RecordingReceiver.start();
      receiver.route('/gate', allow());
      world = await PolicyWorld.create({ 'guard.yaml': PACK });
      await world.boot();
    });
    afterEach(() => receiver.close());

    const gate = (): AgentHook => ({ id: 'gate', type: 'beforeToolCall', webhook: { url: receiver.url('/gate'), responseHandling: 'toolCall' } }) as AgentHook;

    it('blocks fs/writeFile: no file in the sandbox, the stored tool message is hook_denied with the policy reason', async () => {
      world.defineAgent('writer', [fsTurn(['writeFile', { path: 'secret.txt', content: 'x' }]), { text: 'done' }]);
      const { operationId, status } = await world.run('writer');

      assert.equal(status, 'done');
      assert.equal(await world.sandboxFile('secret.txt'), undefined);
      const [tool] = await world.toolMessages(operationId);
      assert.equal(tool?.toolResult?.error, 'hook_denied');
      assert.equal(tool?.toolResult?.success, false);
      assert.equal(tool?.content, 'secrets are read-only');
      assert.deepEqual(tool?.toolResult?.state, { type: 'blocked', reason: 'secrets are read-only' });
    });

    it('a beforeToolCall webhook control on the same run receives no request for the denied call', async () => {
      world.defineAgent('writer', [fsTurn(['writeFile', { path: 'secret.txt', content: 'x' }]), { text: 'done' }]);
      await world.run('writer', [gate()]);

      assert.equal(receiver.requests.length, 0);
    });

    it('the same control is asked for a call the policy lets through (it was live, the deny skipped it)', async () => {
      world.defineAgent('writer', [fsTurn(['writeFile', { path: 'secret.txt', content: 'x' }], ['writeFile', { path: 'notes.txt', content: 'ok' }]), { text: 'done' }]);
      await world.run('writer', [gate()]);

      assert.deepEqual(
        receiver.to('/gate').map((r) => r.body.args.path),
        ['notes.txt'],
      );
      assert.equal(await world.sandboxFile('notes.txt'), 'ok');
      assert.equal(await world.sandboxFile('secret.txt'), undefined);
    });
  });

  describe('ask', () => {
    const PACK = `
policies:
  - id: writes-need-a-human
    match: '^fs/writeFile$'
    effect: ask
    reason: writes outside drafts/ need a reviewer
`;
    beforeEach(async () => {
      world = await PolicyWorld.create({ 'ask.yaml': PACK });
      await world.boot();
      world.defineAgent('writer', [fsTurn(['writeFile', { path: 'report.txt', content: 'quarterly' }]), { text: 'done' }]);
    });

    it('parks the operation in waiting_approval with the policy reason on the pending tool; the tool has not run', async () => {
      const handle = await world.kernel.execAgent({ agentId: 'writer', prompt: 'go' });
      const parked = await handle.settled();

      assert.equal(parked.status, 'waiting_approval');
      assert.equal(parked.state.approval?.pendingTools.length, 1);
      assert.equal(parked.state.approval?.pendingTools[0]?.reason, 'writes outside drafts/ need a reviewer');
      assert.equal(parked.state.approval?.pendingTools[0]?.apiName, 'writeFile');
      assert.equal(await world.sandboxFile('report.txt'), undefined);
    });

    it('approve runs the tool and the operation finishes', async () => {
      const handle = await world.kernel.execAgent({ agentId: 'writer', prompt: 'go' });
      await handle.settled();
      const done = await (await world.kernel.approve(handle.operationId)).completed();

      assert.equal(done.status, 'done');
      assert.equal(await world.sandboxFile('report.txt'), 'quarterly');
      const [tool] = await world.toolMessages(handle.operationId);
      assert.equal(tool?.toolResult?.success, true);
    });

    it('the decision log records the ask with the policy and its reason', async () => {
      const handle = await world.kernel.execAgent({ agentId: 'writer', prompt: 'go' });
      await handle.settled();

      const asks = await world.decisions({ operationId: handle.operationId, decision: 'ask' });
      assert.ok(asks.length >= 1);
      assert.equal(asks[0]!.event, 'beforeToolCall');
      assert.equal(asks[0]!.apiName, 'writeFile');
      assert.equal(asks[0]!.reason, 'writes outside drafts/ need a reviewer');
      assert.deepEqual(
        asks[0]!.policies.map((p) => [p.id, p.effect, p.mode]),
        [['writes-need-a-human', 'ask', 'enforce']],
      );
    });
  });

  describe('redact on afterToolCall', () => {
    const EMAIL = 'jane.doe@example.com';
    const PACK = `
policies:
  - id: pii.emails
    events: [afterToolCall]
    match: '^fs/readFile$'
    effect: redact
    redact: { pattern: '[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}', replacement: '[EMAIL]' }
`;
    let operationId: string;
    beforeEach(async () => {
      world = await PolicyWorld.create({ 'pii.yaml': PACK });
      await world.boot();
      await world.writeSandboxFile('contacts.txt', `owner: ${EMAIL}\n`);
      world.defineAgent('reader', [fsTurn(['readFile', { path: 'contacts.txt' }]), { text: 'read it' }]);
      ({ operationId } = await world.run('reader'));
    });

    it('the stored tool message carries the redacted content, not the email', async () => {
      const [tool] = await world.toolMessages(operationId);
      assert.equal(tool?.toolResult?.success, true);
      assert.equal(tool?.content, 'owner: [EMAIL]\n');
      assert.ok(!JSON.stringify(tool).includes(EMAIL));
    });

    it('the next model request shows the redaction and never the raw email', async () => {
      const seen = toolMessagesSeenByModel(world.model);
      assert.ok(seen.length >= 1);
      assert.ok(seen.every((m) => m.content === 'owner: [EMAIL]\n'));
      assert.ok(!JSON.stringify(world.model.requests).includes(EMAIL));
    });

    it('no timeline event carries the raw email', async () => {
      assert.ok(world.eventLines.length > 0);
      assert.deepEqual(
        world.eventLines.filter((l) => l.includes(EMAIL)),
        [],
      );
    });

    it('the decision is logged as redact by the policy', async () => {
      const [record] = await world.decisions({ operationId, decision: 'redact' });
      assert.equal(record?.event, 'afterToolCall');
      assert.deepEqual(
        record?.policies.map((p) => [p.id, p.effect]),
        [['pii.emails', 'redact']],
      );
    });
  });

  describe('shadow mode', () => {
    const PACK = `
policies:
  - id: would-block-writes
    match: '^fs/writeFile$'
    effect: deny
    reason: trial rule
    mode: shadow
`;
    let operationId: string;
    beforeEach(async () => {
      world = await PolicyWorld.create({ 'shadow.yaml': PACK });
      await world.boot();
      world.defineAgent('writer', [fsTurn(['writeFile', { path: 'a.txt', content: 'written' }]), { text: 'done' }]);
      ({ operationId } = await world.run('writer'));
    });

    it('the tool runs despite a matching shadow deny', async () => {
      assert.equal(await world.sandboxFile('a.txt'), 'written');
      const [tool] = await world.toolMessages(operationId);
      assert.equal(tool?.toolResult?.success, true);
    });

    it('the decision log shows the shadow policy (effect deny, mode shadow) and an allow', async () => {
      const [record] = await world.decisions({ operationId, policyId: 'would-block-writes' });
      assert.equal(record?.event, 'beforeToolCall');
      assert.equal(record?.decision, 'allow');
      assert.deepEqual(record?.policies, [{ id: 'would-block-writes', effect: 'deny', mode: 'shadow', reason: 'trial rule' }]);
    });
  });

  describe('defaultDecision deny (allow-list install)', () => {
    const PACK = `
policies:
  - id: reads-allowed
    match: '^fs/readFile$'
    effect: allow
`;
    let operationId: string;
    beforeEach(async () => {
      world = await PolicyWorld.create({ 'allow-list.yaml': PACK }, { HOOKGATE_POLICIES__DEFAULT_DECISION: 'deny' });
      await world.boot();
      await world.writeSandboxFile('in.txt', 'input');
      world.defineAgent('agent', [fsTurn(['readFile', { path: 'in.txt' }], ['writeFile', { path: 'out.txt', content: 'x' }]), { text: 'done' }]);
      ({ operationId } = await world.run('agent'));
    });

    it('an unmatched tool call is denied; the allow-listed one runs', async () => {
      assert.equal(await world.sandboxFile('out.txt'), undefined);
      const [read, write] = await world.toolMessages(operationId);
      assert.equal(read?.toolResult?.success, true);
      assert.equal(read?.content, 'input');
      assert.equal(write?.toolResult?.error, 'hook_denied');
      assert.equal(write?.content, 'no policy allows this tool call (default deny)');
    });

    it('the denial is logged as defaulted with no policy; the allow is not', async () => {
      const before = (await world.decisions({ operationId })).filter((r) => r.event === 'beforeToolCall');
      const write = before.find((r) => r.apiName === 'writeFile');
      const read = before.find((r) => r.apiName === 'readFile');
      assert.equal(write?.decision, 'deny');
      assert.equal(write?.defaulted, true);
      assert.deepEqual(write?.policies, []);
      assert.equal(read?.decision, 'allow');
      assert.equal(read?.defaulted, false);
    });
  });
});
