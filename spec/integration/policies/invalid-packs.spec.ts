import assert from 'node:assert/strict';
import path from 'node:path';
import { HookgateError } from '../../../kernel/errors.js';
import { PolicyWorld } from './harness.js';

/** The full chain of messages of an error and its causes (the kernel may wrap a plugin's start failure). */
function messages(err: unknown): string {
  const out: string[] = [];
  for (let e = err as { message?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) out.push(String(e.message));
  return out.join('\n');
}

/** A code anywhere in the cause chain. */
function codes(err: unknown): string[] {
  const out: string[] = [];
  for (let e = err as { code?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) if (typeof e.code === 'string') out.push(e.code);
  return out;
}

/** An install never runs on a half-loaded policy set: kernel.start() fails and says what is wrong where. */
describe('integration: invalid policy packs stop the kernel from starting', function () {
  this.timeout(20_000);
  let world: PolicyWorld;
  afterEach(() => world.cleanup());

  it('an invalid pack makes kernel.start() fail naming the file and the policy id', async () => {
    world = await PolicyWorld.create({
      'good.yaml': `policies: [ { id: fine, match: '^fs/', effect: allow } ]`,
      'broken.yaml': `policies: [ { id: bad-effect, match: '^fs/', effect: perhaps } ]`,
    });
    const err = await world.boot().then(
      () => assert.fail('kernel.start() should have failed'),
      (e: unknown) => e,
    );

    assert.ok(err instanceof HookgateError, String(err));
    assert.ok(codes(err).includes('POLICY_INVALID'), codes(err).join(','));
    const text = messages(err);
    assert.ok(text.includes(path.join(world.packsDir, 'broken.yaml')), text);
    assert.match(text, /policy "bad-effect": field "effect"/);
    assert.doesNotMatch(text, /good\.yaml/);
  });

  it('every error is listed at once, across files', async () => {
    world = await PolicyWorld.create({
      'a.yaml': `policies: [ { id: backref, match: '(x)\\1', effect: deny } ]`,
      'b.yaml': `policies: [ { id: bad-when, when: '((', effect: deny } ]`,
    });
    const err = await world.boot().then(
      () => assert.fail('kernel.start() should have failed'),
      (e: unknown) => e,
    );

    const text = messages(err);
    assert.match(text, /a\.yaml: policy "backref": field "match"/);
    assert.match(text, /b\.yaml: policy "bad-when": field "when"/);
  });

  it('a configured pack folder that does not exist makes kernel.start() fail naming it', async () => {
    world = await PolicyWorld.create({}, { HOOKGATE_POLICIES__PATHS: '/nonexistent/hookgate-packs' });
    const err = await world.boot().then(
      () => assert.fail('kernel.start() should have failed'),
      (e: unknown) => e,
    );

    assert.match(messages(err), /\/nonexistent\/hookgate-packs/);
  });

});
