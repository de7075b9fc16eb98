import { defineHookVocabulary, type HookVocabulary } from './vocabulary.js';
import type { HookType } from './hook-types.js';

/** What a tool hook's matcher is tested against: `identifier/apiName` (as compileToolMatcher's `test`). */
function toolSubject(input: unknown): string | undefined {
  const e = input as { identifier?: unknown; apiName?: unknown };
  return typeof e?.identifier === 'string' && typeof e.apiName === 'string' ? `${e.identifier}/${e.apiName}` : undefined;
}

/**
 * The 16 lifecycle hooks of document 000 (hook-types.ts `HOOK_TYPES`, in its
 * order), the first vocabulary of the hook bus. HookDispatcher serves it with
 * its own paths (persisted webhooks, environment hooks, mocks, webhook
 * controls): this declaration is what registration checks names and matchers
 * against, and what the bus reports.
 *
 * - `beforeToolCall`, `afterToolCall`: control (webhook controls with
 *   `responseHandling: 'toolCall'` give verdicts; `beforeToolCall` handlers
 *   may mock), observed too; matchers apply. A failed control follows its
 *   `webhook.onError` (default `continue`, fail open; `block` fails closed).
 * - `onToolCallError`: observe, matchers apply.
 * - every other hook: observe, no matcher.
 */
export const LIFECYCLE_VOCABULARY: HookVocabulary<HookType> = defineHookVocabulary('lifecycle', {
  beforeStep: { kind: 'observe', description: 'a step is about to run' },
  afterStep: { kind: 'observe', description: 'a step committed' },
  onComplete: { kind: 'observe', description: 'the operation ended' },
  onError: { kind: 'observe', description: 'the operation failed' },
  beforeToolCall: { kind: 'control', matchOn: toolSubject, onError: 'continue', description: 'a tool call is about to run: controls decide, handlers may mock' },
  afterToolCall: { kind: 'control', matchOn: toolSubject, onError: 'continue', description: 'a tool call has its result: controls decide before it is published' },
  onToolCallError: { kind: 'observe', matchOn: toolSubject, description: 'a tool call failed' },
  beforeHumanIntervention: { kind: 'observe', description: 'the operation parks for a human decision' },
  afterHumanIntervention: { kind: 'observe', description: 'a human decided' },
  onStopByHumanIntervention: { kind: 'observe', description: "a human's reject halted the run" },
  beforeCompact: { kind: 'observe', description: 'older messages are about to be summarized' },
  afterCompact: { kind: 'observe', description: 'older messages were summarized' },
  onCompactError: { kind: 'observe', description: 'a compaction failed' },
  beforeCallAgent: { kind: 'observe', description: 'a sub-agent is about to run' },
  afterCallAgent: { kind: 'observe', description: 'a sub-agent operation ended' },
  onCallAgentError: { kind: 'observe', description: 'a sub-agent operation could not run or failed' },
});
