import assert from 'node:assert/strict';
import path from 'node:path';
import { policyCheck } from '../../policies/cli/policy-check.js';
import { policyTest } from '../../policies/cli/policy-test.js';
import { SHIPPED_PACKS } from './support/policy-fixtures.js';

describe('shipped policy packs', () => {
  it('all load without errors', async () => {
    const r = await policyCheck([SHIPPED_PACKS]);
    assert.equal(r.exitCode, 0, r.output);
  });

  for (const pack of ['sandbox-secrets', 'dangerous-shell', 'pii-redaction', 'network-egress']) {
    it(`${pack}: every inline test passes`, async () => {
      const r = await policyTest([path.join(SHIPPED_PACKS, `${pack}.yaml`)], { json: true });
      const parsed = JSON.parse(r.output) as { passed: number; failed: number; results: Array<{ name: string; pass: boolean }> };
      assert.deepEqual(parsed.results.filter((x) => !x.pass), []);
      assert.ok(parsed.passed >= 5, `${pack} has ${parsed.passed} tests`);
      assert.equal(r.exitCode, 0);
    });
  }
});
