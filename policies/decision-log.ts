import { randomUUID } from 'node:crypto';
import type { DecisionRecord, Store } from '../kernel/store.js';
import { givenCanonical } from './canonical-args.js';
import { canonicalDigest } from './canonical-json.js';
import { effectOf } from './combine-decisions.js';
import type { PolicyEvaluation } from './evaluate-decision.js';

/** The part of the store the policy engine writes to and reads from. */
export type DecisionLog = Pick<Store, 'recordDecision' | 'listDecisions'>;

/**
 * What the digest covers: the input without the canonical forms derived from
 * its own arguments (they add nothing to what identifies it); a tool source's
 * canonical forms stay. Without any, the input itself.
 */
function digestInput(input: Record<string, unknown>): Record<string, unknown> {
  const canonical = input.canonical;
  if (canonical === null || typeof canonical !== 'object') return input;
  const given = givenCanonical(canonical as Record<string, unknown>);
  if (given === canonical) return input;
  const { canonical: _derived, ...rest } = input;
  return Object.keys(given).length > 0 ? { ...rest, canonical: given } : rest;
}

/**
 * The log record of one decision: every candidate policy (shadow included)
 * with its effect, mode, reason and error; the enforced decision; latency; and
 * a sha256 of the canonical input (see `digestInput`). Raw input only when `logRawArgs` is on.
 */
export function buildDecisionRecord(evaluation: PolicyEvaluation, options: { logRawArgs: boolean; now?: Date }): DecisionRecord {
  const input = evaluation.input;
  const str = (k: string) => (typeof input[k] === 'string' ? (input[k] as string) : undefined);
  const record: DecisionRecord = {
    id: randomUUID(),
    createdAt: (options.now ?? new Date()).toISOString(),
    operationId: str('operationId'),
    toolCallId: str('toolCallId'),
    agentId: str('agentId'),
    event: evaluation.type,
    identifier: str('identifier'),
    apiName: str('apiName'),
    policies: evaluation.verdicts.map((v) => ({
      id: v.policy.id,
      effect: effectOf(v) ?? 'not_applicable',
      mode: v.policy.mode,
      ...(v.reason !== undefined && v.error === undefined ? { reason: v.reason } : {}),
      ...(v.error !== undefined ? { error: v.error } : {}),
    })),
    decision: evaluation.decision,
    defaulted: evaluation.defaulted,
    latencyMicros: Math.round(evaluation.latencyMicros * 1000) / 1000,
    inputDigest: canonicalDigest(digestInput(input)),
  };
  if (evaluation.reason !== undefined) record.reason = evaluation.reason;
  if (options.logRawArgs) record.rawInput = input;
  return record;
}
