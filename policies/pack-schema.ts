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
  name: nonEmpty,
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

/** Issues as `{ field, message }`, field as a dot path. */
export function issuesOf(issues: readonly v.BaseIssue<unknown>[]): Array<{ field?: string; message: string }> {
  return issues.map((issue) => ({ field: v.getDotPath(issue) ?? undefined, message: issue.message }));
}
