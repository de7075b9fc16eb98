import assert from 'node:assert/strict';
import { policyInput, policyInputs } from '../../policies/policy-input.js';
import { engineWithPack, toolCall, toolResult } from './support/policy-fixtures.js';

// A candidate decided by re2 alone (no policy reads the input), one that reads `canonical` in a worker, and one
// no event matches: the engine derives canonical forms lazily for the first, eagerly for the second.
const PACK = `
policies:
  - id: plain
    match: '^fs/read$'
    effect: deny
    args: { path: '^/secret/' }
  - id: reads-canonical
    match: '^web/get$'
    effect: deny
    when: "canonical.url.host = 'evil.io'"
`;

const PATH_GIVEN = { path: { kind: 'path' as const, raw: 'notes.txt', path: 'app/notes.txt' } };

// Every shape the digest treats differently: no canonical, derived only, given only, given and derived, an empty or
// unusable given canonical with and without derivable arguments, an encoded result.
const EVENTS: Array<[string, object]> = [
  ['no canonical form', toolCall('fs', 'read', { note: 'x' })],
  ['derived forms only', toolCall('fs', 'read', { path: 'app//notes.txt/', url: 'https://x.io/a', command: 'ls -la' })],
  ['given forms only', { ...toolCall('fs', 'read', { note: 'x' }), canonical: PATH_GIVEN }],
  ['given and derived forms', { ...toolCall('fs', 'read', { path: 'notes.txt', url: 'https://x.io/' }), canonical: PATH_GIVEN }],
  ['an empty given canonical, derivable arguments', { ...toolCall('fs', 'read', { path: 'notes.txt' }), canonical: {} }],
  ['an empty given canonical, nothing derivable', { ...toolCall('fs', 'read', { note: 'x' }), canonical: {} }],
  ['an unusable given canonical, derivable arguments', { ...toolCall('fs', 'read', { path: 'a' }), canonical: { path: 5 } }],
  ['a candidate that reads the input', toolCall('web', 'get', { url: 'https://EVIL.io./x' })],
  ['an encoded result', toolResult(toolCall('fs', 'read', { path: 'k.pem' }), { content: Buffer.from('key').toString('base64'), data: { encoding: 'base64' } })],
];

describe('policy input: the digested form and the full form', () => {
  let t: Awaited<ReturnType<typeof engineWithPack>>;
  let raw: Awaited<ReturnType<typeof engineWithPack>>;
  before(async () => {
    t = await engineWithPack(PACK);
    raw = await engineWithPack(PACK, { logRawArgs: true });
  });
  after(async () => {
    await t.close();
    await raw.close();
  });

  for (const [what, event] of EVENTS) {
    it(`${what}: a decision logs the same digest whether or not it derived the canonical forms`, async () => {
      const type = 'result' in event ? 'afterToolCall' : 'beforeToolCall';
      // evaluateToolCall/evaluateToolResult derive lazily; evaluate() always builds what policies see.
      if (type === 'afterToolCall') await t.engine.evaluateToolResult(event as ReturnType<typeof toolResult>);
      else await t.engine.evaluateToolCall(event as ReturnType<typeof toolCall>);
      const full = await t.engine.evaluate(type, event as ReturnType<typeof toolCall>);
      await t.engine.flush();
      const [lazy, eager] = t.log.records.slice(-2).map((r) => r.inputDigest);
      assert.match(lazy!, /^[0-9a-f]{64}$/);
      assert.equal(lazy, eager);
      // What evaluate() returns is what policies see: policyInput, canonical forms included.
      assert.deepEqual(full.input, policyInput(type, event));
    });
  }

  it('the full form is what policyInput always gave: derived forms next to the given ones, in the same key order', () => {
    const event = { ...toolCall('fs', 'read', { path: 'a//b/', url: 'HTTPS://X.io:8443/' }), canonical: PATH_GIVEN };
    const full = policyInputs('beforeToolCall', event).full();
    assert.deepEqual(Object.keys(full.canonical as object), ['path', 'url']);
    assert.deepEqual((full.canonical as Record<string, unknown>).path, PATH_GIVEN.path);
    assert.equal(((full.canonical as Record<string, { host?: string }>).url)!.host, 'x.io');
    assert.deepEqual(Object.keys(policyInput('beforeToolCall', toolCall('fs', 'read', { path: 'x' }))).slice(-3), ['type', 'tool', 'canonical']);
    const encoded = toolResult(toolCall('fs', 'read', { path: 'k' }), { content: Buffer.from('k').toString('base64'), data: { encoding: 'base64' } });
    assert.deepEqual(Object.keys(policyInput('afterToolCall', encoded)).slice(-2), ['canonical', 'resultText']);
  });

  it('a policy that reads canonical decides on the derived forms through the lazy path', async () => {
    assert.equal((await t.engine.evaluateToolCall(toolCall('web', 'get', { url: 'https://EVIL.io./x' }))).effect, 'deny');
    assert.equal((await t.engine.evaluateToolCall(toolCall('web', 'get', { url: 'https://good.io/x' }))).effect, 'allow');
  });

  it('with logRawArgs the logged raw input carries the canonical forms, also when no policy read them', async () => {
    await raw.engine.evaluateToolCall(toolCall('fs', 'read', { path: 'app//x/' }));
    await raw.engine.flush();
    const record = raw.log.records.at(-1)!;
    assert.equal(((record.rawInput as { canonical: Record<string, { path: string }> }).canonical.path)!.path, 'app/x');
  });
});
