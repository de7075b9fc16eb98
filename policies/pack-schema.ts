import * as v from 'valibot';
import { POLICY_EFFECTS, POLICY_EVENTS } from './policy-types.js';

/**
 * The YAML shape of a policy pack. Objects are strict so a misspelt field
 * (`efect:`) is an error instead of a silently ignored line.
 */
const nonEmpty = v.pipe(v.string(), v.minLength(1, 'must not be empty'));

export const redactSchema = v.strictObject({
  pattern: nonEmpty,
  replacement: v.optional(v.string(), '[REDACTED]'),
  /** re2 flags besides `g` (always on): `i`, `m`, `s`, `u`. */
  flags: v.optional(v.pipe(v.string(), v.regex(/^[imsu]*$/, 'flags may only contain i, m, s, u'))),
});

export const reasonSchema = v.union([v.string(), v.strictObject({ expr: nonEmpty })], 'must be text or { expr: <JSONata> }');

export const testSchema = v.strictObject({
  /** Optional: a test without one is named by its place (`<policy id> test 1`). */
  name: v.optional(nonEmpty),
  /** The event: `type` (defaults to the policy's first event), identifier, apiName, args, result... */
  event: v.record(v.string(), v.unknown()),
  expect: v.strictObject({
    effect: v.picklist(POLICY_EFFECTS),
    reason: v.optional(v.string()),
    /** For redactions: the expected result `content` after rewriting. */
    content: v.optional(v.string()),
  }),
});

export const policySchema = v.strictObject({
  id: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'must be letters, digits and . _ : -'))),
  description: v.optional(v.string()),
  events: v.optional(v.pipe(v.array(v.picklist(POLICY_EVENTS)), v.minLength(1, 'must list at least one event'))),
  match: v.optional(nonEmpty),
  args: v.optional(v.record(nonEmpty, nonEmpty)),
  when: v.optional(nonEmpty),
  effect: v.optional(v.picklist(POLICY_EFFECTS)),
  reason: v.optional(reasonSchema),
  redact: v.optional(v.union([redactSchema, v.pipe(v.array(redactSchema), v.minLength(1))])),
  mode: v.optional(v.picklist(['enforce', 'shadow'])),
  tests: v.optional(v.array(testSchema)),
  module: v.optional(nonEmpty),
});

export type RawPolicy = v.InferOutput<typeof policySchema>;
export type RawTest = v.InferOutput<typeof testSchema>;

export const packSchema = v.strictObject({
  name: v.optional(nonEmpty),
  description: v.optional(v.string()),
  defaults: v.optional(
    v.strictObject({
      mode: v.optional(v.picklist(['enforce', 'shadow'])),
      events: v.optional(v.pipe(v.array(v.picklist(POLICY_EVENTS)), v.minLength(1))),
    }),
  ),
  policies: v.array(v.unknown()),
  tests: v.optional(v.array(v.unknown())),
});

export type RawPack = v.InferOutput<typeof packSchema>;

/** Which schema a list of issues came from (the unknown-field message names the fields it allows). */
export type SchemaRoot = 'pack' | 'policy' | 'test';

/**
 * Issues as `{ field, message }`, field as a dot path. valibot's "Invalid key"
 * messages are said plainly: a required field that is missing, a field the
 * object does not have (with the fields it does have).
 */
export function issuesOf(issues: readonly v.BaseIssue<unknown>[], root: SchemaRoot = 'pack'): Array<{ field?: string; message: string }> {
  return issues.map((issue) => ({ field: v.getDotPath(issue) ?? undefined, message: plainMessage(issue, root) }));
}

function plainMessage(issue: v.BaseIssue<unknown>, root: SchemaRoot): string {
  if (issue.kind !== 'schema' || !issue.message.startsWith('Invalid key')) return issue.message;
  if (issue.received === 'undefined') return 'required';
  if (issue.expected !== 'never') return issue.message;
  const keys = (issue.path ?? []).map((p) => p.key).filter((k): k is string => typeof k === 'string');
  keys.pop();
  const allowed = allowedKeys(root, keys);
  return `unknown field${allowed ? ` (allowed: ${allowed.join(', ')})` : ''}`;
}

/** The fields of the object at `keys` (object keys only, list indexes dropped) below `root`. */
function allowedKeys(root: SchemaRoot, keys: readonly string[]): string[] | undefined {
  let at: SchemaRoot | 'expect' | 'defaults' | 'redact' = root;
  for (const key of keys) {
    if (at === 'pack' && key === 'defaults') at = 'defaults';
    else if (at === 'policy' && key === 'tests') at = 'test';
    else if (at === 'policy' && key === 'redact') at = 'redact';
    else if (at === 'test' && key === 'expect') at = 'expect';
    else return undefined;
  }
  const entries = { pack: packSchema.entries, policy: policySchema.entries, test: testSchema.entries, redact: redactSchema.entries, defaults: { mode: 0, events: 0 }, expect: { effect: 0, reason: 0, content: 0 } }[at];
  return Object.keys(entries);
}
