import type { PolicyEventName } from './policy-types.js';

/**
 * The data a policy sees: the event's own plain fields (functions such as
 * `mock` dropped), plus `type` (the hook event) and `tool`
 * (`identifier/apiName`, what `match` runs on). Shallow copy.
 */
export function policyInput(type: PolicyEventName, event: object): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(event)) if (typeof v !== 'function') input[k] = v;
  input.type = type;
  input.tool = toolKey(event as { identifier?: unknown; apiName?: unknown });
  if (input.args === undefined) input.args = {};
  return input;
}

export function toolKey(event: { identifier?: unknown; apiName?: unknown }): string {
  return `${String(event.identifier ?? '')}/${String(event.apiName ?? '')}`;
}
