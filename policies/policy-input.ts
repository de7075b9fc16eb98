import { decodeContent } from './apply-redactions.js';
import { canonicalFor } from './canonical-args.js';
import type { PolicyEventName } from './policy-types.js';

/**
 * The data a policy sees: the event's own plain fields (functions such as
 * `mock` dropped), plus `type` (the hook event), `tool`
 * (`identifier/apiName`, what `match` runs on) and `canonical` (what path,
 * URL and command arguments really name: the tool source's forms, plus forms
 * derived from well-known argument names; see `canonicalFor`), and for a
 * result whose content is encoded (`data.encoding`), `resultText`: what it
 * decodes to. Shallow copy.
 */
export function policyInput(type: PolicyEventName, event: object): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(event)) if (typeof v !== 'function') input[k] = v;
  input.type = type;
  input.tool = toolKey(event as { identifier?: unknown; apiName?: unknown });
  if (input.args === undefined) input.args = {};
  // Absent when no argument has a canonical form (the input, and its digest, stay as they were).
  const canonical = canonicalFor(input.args, input.canonical);
  if (input.canonical !== undefined || hasKeys(canonical)) input.canonical = canonical;
  // An encoded result (fs/readFile with encoding base64...) also as the text it decodes to.
  const result = input.result as { content: unknown; data?: unknown } | undefined;
  const decoded = result !== null && typeof result === 'object' ? decodeContent(result) : undefined;
  if (decoded !== undefined) input.resultText = decoded.text + decoded.rest;
  return input;
}

export function toolKey(event: { identifier?: unknown; apiName?: unknown }): string {
  return `${String(event.identifier ?? '')}/${String(event.apiName ?? '')}`;
}

function hasKeys(o: object): boolean {
  for (const _ in o) return true;
  return false;
}
