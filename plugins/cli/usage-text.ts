import type { Usage } from '../../kernel/messages.js';

/**
 * A step's or an operation's usage as the CLI prints it:
 * `1,240 tokens (1,200 in / 40 out), $0.004200`. The cost is left out when it
 * is 0 (no `model.pricing`); nothing at all for a step that used no tokens.
 * Pure.
 */
export function usageText(usage: Usage | undefined): string {
  if (!usage || usage.totalTokens === 0) return '';
  const n = (x: number) => x.toLocaleString('en-US');
  const cost = usage.cost > 0 ? `, ${costText(usage.cost)}` : '';
  return `${n(usage.totalTokens)} tokens (${n(usage.promptTokens)} in / ${n(usage.completionTokens)} out)${cost}`;
}

/** `$0.004200`: six decimals, since one model turn often costs less than a cent. */
export function costText(cost: number): string {
  return `$${cost.toFixed(6)}`;
}
