import type { ToolResult } from '../kernel/messages.js';
import { evaluateEvent, type EvaluationSettings, type PolicyEvaluation } from './evaluate-decision.js';
import type { PolicyPool } from './policy-pool.js';
import { PolicySet } from './policy-set.js';
import type { CompiledPack, InlineTest } from './policy-types.js';

export interface TestOutcome {
  effect: string;
  reason?: string;
  content?: string;
}

export interface PackTestResult {
  file: string;
  pack: string;
  policyId?: string;
  name: string;
  pass: boolean;
  expected: TestOutcome;
  actual: TestOutcome;
  durationMs: number;
}

/**
 * Runs every inline test of `packs`. Each test is decided against its own
 * pack only (default allow), the way `opa test` scopes a package, through the
 * same evaluation path as live decisions (workers, deadline, fail-closed).
 */
export async function runPackTests(packs: readonly CompiledPack[], pool: PolicyPool, settings: EvaluationSettings): Promise<PackTestResult[]> {
  const results: PackTestResult[] = [];
  for (const pack of packs) {
    const set = new PolicySet([pack]);
    for (const test of pack.tests) {
      const started = performance.now();
      const evaluation = await evaluateTestEvent(set, pool, { ...settings, defaultDecision: 'allow' }, test.event);
      results.push(compare(pack, test, evaluation, performance.now() - started));
    }
  }
  return results;
}

/**
 * Evaluates a test or `policy eval` event: `type` picks the hook
 * (beforeToolCall by default; onToolCallError is an afterToolCall with a failed
 * result). Missing tool-call fields get harmless placeholders.
 */
export function evaluateTestEvent(set: PolicySet, pool: PolicyPool, settings: EvaluationSettings, raw: Record<string, unknown>, signal?: AbortSignal): Promise<PolicyEvaluation> {
  const { type = 'beforeToolCall', ...fields } = raw as { type?: string } & Record<string, unknown>;
  const event = {
    toolCallId: 'test-call',
    operationId: 'policy-test',
    identifier: '',
    apiName: '',
    args: {},
    ...fields,
  } as { identifier: string; apiName: string; args: Record<string, unknown>; result?: ToolResult; error?: unknown };
  if (type === 'onToolCallError') {
    const content = typeof event.error === 'string' ? event.error : '';
    event.result = { content, ...(event.result ?? {}), success: false };
    return evaluateEvent(set, pool, settings, 'afterToolCall', event, signal);
  }
  if (type === 'afterToolCall' && event.result === undefined) event.result = { content: '', success: true };
  return evaluateEvent(set, pool, settings, type === 'afterToolCall' ? 'afterToolCall' : 'beforeToolCall', event, signal);
}

function compare(pack: CompiledPack, test: InlineTest, e: PolicyEvaluation, durationMs: number): PackTestResult {
  const expected: TestOutcome = { effect: test.expect.effect };
  const actual: TestOutcome = { effect: e.decision };
  if (test.expect.reason !== undefined) {
    expected.reason = test.expect.reason;
    actual.reason = e.reason;
  }
  if (test.expect.content !== undefined) {
    expected.content = test.expect.content;
    actual.content = e.redactedResult?.content ?? (e.input.result as ToolResult | undefined)?.content;
  }
  const pass = expected.effect === actual.effect && expected.reason === actual.reason && expected.content === actual.content;
  return { file: pack.file, pack: pack.name, policyId: test.policyId, name: test.name, pass, expected, actual, durationMs };
}
