import assert from 'node:assert/strict';
import { costText, usageText } from '../../plugins/cli/usage-text.js';

describe('CLI usage text (hookgate show, per step and in total)', () => {
  it('gives tokens in and out and the cost of a priced turn', () => {
    assert.equal(usageText({ promptTokens: 1200, completionTokens: 40, totalTokens: 1240, cost: 0.0042 }), '1,240 tokens (1,200 in / 40 out), $0.004200');
  });

  it('leaves the cost out without pricing, and says nothing for a step that used no tokens', () => {
    assert.equal(usageText({ promptTokens: 8, completionTokens: 2, totalTokens: 10, cost: 0 }), '10 tokens (8 in / 2 out)');
    assert.equal(usageText({ promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 }), '');
    assert.equal(usageText(undefined), '');
  });

  it('keeps sub-cent costs visible', () => {
    assert.equal(costText(0.000003), '$0.000003');
  });
});
