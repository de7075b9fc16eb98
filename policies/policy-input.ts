import { decodeContent } from './apply-redactions.js';
import { canonicalFor, derivesCanonical } from './canonical-args.js';
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
  return policyInputs(type, event).full();
}

/**
 * The input of one decision in two forms. `digested`: the input without the
 * canonical forms derived from its own arguments (they add nothing to what
 * identifies it; the tool source's forms stay), which is what the decision
 * log digests; built at once. `full()`: what policies see (`policyInput`),
 * built on the first call only: deriving the canonical forms (path
 * normalization, URL parsing, shell words) is work a decision needs only when
 * a policy reads the input (a `when`, a reason expression, code), an
 * `args: { '*': ... }` matcher scans the forms, or the raw input is logged.
 * Both are plain objects that nobody changes afterwards.
 */
export interface PolicyInputs {
  readonly digested: Record<string, unknown>;
  full(): Record<string, unknown>;
}

export function policyInputs(type: PolicyEventName, event: object): PolicyInputs {
  const input: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(event)) if (typeof v !== 'function') input[k] = v;
  input.type = type;
  input.tool = toolKey(event as { identifier?: unknown; apiName?: unknown });
  if (input.args === undefined) input.args = {};
  const givenRaw = input.canonical;
  // The source's forms (entries that are objects with a known kind), present when the event carries any.
  const given = givenRaw === undefined ? undefined : canonicalFor(undefined, givenRaw);
  if (given !== undefined) input.canonical = given;
  // An encoded result (fs/readFile with encoding base64...) also as the text it decodes to.
  const result = input.result as { content: unknown; data?: unknown } | undefined;
  const decoded = result !== null && typeof result === 'object' ? decodeContent(result) : undefined;
  if (decoded !== undefined) input.resultText = decoded.text + decoded.rest;

  const derivable = derivesCanonical(input.args, given);
  let digested = input;
  // As the log always digested it: with derived forms, an empty `canonical` is left out.
  if (derivable && given !== undefined && !hasKeys(given)) {
    const { canonical: _empty, ...rest } = input;
    digested = rest;
  }
  let full: Record<string, unknown> | undefined = derivable ? undefined : input;
  return {
    digested,
    full: () => (full ??= withDerivedForms(input, givenRaw)),
  };
}

/**
 * `input` with `canonical` holding the source's forms and those derived from
 * the arguments (`canonicalFor`), in the key order `policyInput` always had:
 * `canonical` where the event had it, else after `args`, before `resultText`.
 */
function withDerivedForms(input: Record<string, unknown>, givenRaw: unknown): Record<string, unknown> {
  const canonical = canonicalFor(input.args, givenRaw);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(input)) {
    if (k === 'resultText' && !('canonical' in out)) out.canonical = canonical;
    out[k] = k === 'canonical' ? canonical : input[k];
  }
  if (!('canonical' in out)) out.canonical = canonical;
  return out;
}

export function toolKey(event: { identifier?: unknown; apiName?: unknown }): string {
  return `${String(event.identifier ?? '')}/${String(event.apiName ?? '')}`;
}

function hasKeys(o: object): boolean {
  for (const _ in o) return true;
  return false;
}
