import type { Usage } from '../../kernel/messages.js';
import type { PromptUsage } from './harness.js';
import type { ModelBlock } from './use-model.js';

/** A prompt operation's usage as `PromptUsage`: token counts, and cost from the model block's `pricing` (per million tokens; zeros without). */
export function promptUsage(usage: Usage, model: ModelBlock): PromptUsage {
  const pricing = model.pricing as { inputPerMillion?: number; outputPerMillion?: number } | undefined;
  const input = pricing?.inputPerMillion !== undefined ? (usage.promptTokens * pricing.inputPerMillion) / 1_000_000 : 0;
  const output = pricing?.outputPerMillion !== undefined ? (usage.completionTokens * pricing.outputPerMillion) / 1_000_000 : 0;
  return {
    input: usage.promptTokens,
    output: usage.completionTokens,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: usage.totalTokens,
    cost: { input, output, cacheRead: 0, cacheWrite: 0, total: usage.cost },
  };
}
