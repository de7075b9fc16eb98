import assert from 'node:assert/strict';
import { eventually, fsTurn, PolicyWorld } from './harness.js';

const V1 = `
policies:
  - id: guard
    match: '^fs/writeFile$'
    args: { path: '^secret' }
    effect: deny
    reason: v1 guards secrets only
`;

const V2 = `
policies:
  - id: guard
    match: '^fs/writeFile$'
    effect: deny
    reason: v2 freezes every write
`;

/** An edit that parses but names an unknown effect on policy "half-baked". */
const BROKEN = `
policies:
  - id: half-baked
    match: '^fs/'
    effect: perhaps
`;

/**
 * Policy packs edited under a running kernel: a good edit takes effect for
 * the next tool call, a broken one keeps the last good set.
 */
describe('integration: policy hot reload through a running kernel', function () {
  this.timeout(30_000);
  let world: PolicyWorld;
  afterEach(() => world.cleanup());

  /** Runs a fresh agent writing `file`; returns the stored tool message and whether the file exists. */
  async function write(agentId: string, file: string) {
    world.defineAgent(agentId, [fsTurn(['writeFile', { path: file, content: 'x' }]), { text: 'done' }]);
    const { operationId } = await world.run(agentId);
    const [tool] = await world.toolMessages(operationId);
    return { tool: tool!, written: (await world.sandboxFile(file)) !== undefined };
  }

  const logged = (msg: string) => world.logs.filter((r) => r.msg === msg);

  describe('with policies.hotReload on (the engine watches the pack folder)', () => {
    beforeEach(async () => {
      world = await PolicyWorld.create({ 'guard.yaml': V1 }, { HOOKGATE_POLICIES__HOT_RELOAD: 'true' });
      await world.boot();
    });

    it('a good edit is picked up by the next tool call', async () => {
      const before = await write('w1', 'one.txt');
      assert.equal(before.written, true);

      await world.writePack('guard.yaml', V2);
      await eventually(() => logged('policy set reloaded').length > 0, 'the edited pack is reloaded');

      const after = await write('w2', 'two.txt');
      assert.equal(after.written, false);
      assert.equal(after.tool.toolResult?.error, 'hook_denied');
      assert.equal(after.tool.content, 'v2 freezes every write');
    });

    it('a broken edit is rejected with the file and policy named, and the last good set keeps deciding', async () => {
      await world.writePack('guard.yaml', V2);
      await eventually(() => logged('policy set reloaded').length > 0, 'the good edit is reloaded');
      const goodVersion = world.engine.policySet.version;

      await world.writePack('guard.yaml', BROKEN);
      await eventually(
        () => logged('policy reload rejected; keeping the last good policy set').some((r) => JSON.stringify(r.errors).includes('half-baked')),
        'the broken edit is rejected',
      );
      const rejected = logged('policy reload rejected; keeping the last good policy set').find((r) => JSON.stringify(r.errors).includes('half-baked'))!;
      assert.match(JSON.stringify(rejected.errors), /guard\.yaml/);
      assert.match(JSON.stringify(rejected.errors), /effect/);
      assert.equal(world.engine.policySet.version, goodVersion);

      const after = await write('w3', 'three.txt');
      assert.equal(after.written, false);
      assert.equal(after.tool.content, 'v2 freezes every write');
    });
  });

  describe("through the running engine's reload()", () => {
    beforeEach(async () => {
      world = await PolicyWorld.create({ 'guard.yaml': V1 });
      await world.boot();
    });

    it('a good edit swaps the set in and the next tool call sees it', async () => {
      assert.equal((await write('w1', 'one.txt')).written, true);

      await world.writePack('guard.yaml', V2);
      const result = await world.engine.reload();
      assert.deepEqual(result, { ok: true, changed: true, errors: [] });

      const after = await write('w2', 'two.txt');
      assert.equal(after.written, false);
      assert.equal(after.tool.content, 'v2 freezes every write');
    });

    it('a broken edit returns the errors (file, policy id, field) and the last good set stays', async () => {
      await world.writePack('guard.yaml', V2);
      await world.engine.reload();

      await world.writePack('guard.yaml', BROKEN);
      const result = await world.engine.reload();
      assert.equal(result.ok, false);
      assert.equal(result.changed, false);
      assert.ok(result.errors.some((e) => e.file.endsWith('guard.yaml') && e.policyId === 'half-baked' && e.field === 'effect'), JSON.stringify(result.errors));

      const after = await write('w3', 'three.txt');
      assert.equal(after.written, false);
      assert.equal(after.tool.content, 'v2 freezes every write');
    });

    it('a later fix after a broken edit is taken', async () => {
      await world.writePack('guard.yaml', BROKEN);
      assert.equal((await world.engine.reload()).ok, false);
      await world.writePack('guard.yaml', V2);
      assert.equal((await world.engine.reload()).changed, true);

      assert.equal((await write('w4', 'four.txt')).tool.content, 'v2 freezes every write');
    });
  });
});
