import type { PolicyEffect } from '../policy-types.js';

/** JSONata's own guards, set on every compiled expression. */
export interface JsonataLimits {
  /** Milliseconds one evaluation may run (checked by JSONata between steps). */
  timeout: number;
  /** Maximum evaluation depth (recursion). */
  stack: number;
  /** Maximum length of a sequence an expression may build. */
  sequence: number;
}

/** One candidate policy of one decision, as a worker evaluates it. */
export interface ConditionTask {
  /** `packVersion:policyId`: compiled forms are cached under it in each worker. */
  key: string;
  policyId: string;
  when?: string;
  reasonExpr?: string;
  module?: string;
  limits: JsonataLimits;
  /** The policy input; conditions of one decision share the object, so a message carries it once. */
  input: Record<string, unknown>;
  /** Set when the policy sees the event under another type than `input.type` (`onToolCallError`). */
  eventType?: string;
}

/**
 * Several conditions (of one decision or of several queued ones) in one
 * worker hop, evaluated one after another. `progress` is shared memory the
 * worker writes as it goes, so the pool can start each condition's deadline
 * when the worker starts it (not when it was queued) and knows which
 * condition was running when the worker had to be terminated or died:
 * `progress[0]` is `2i + 1` while condition `i` runs and `2i + 2` once it is
 * done; `progress[1 + i]` is when condition `i` started, in ms after `epoch`
 * (the pool's `Date.now()` when it sent the batch).
 */
export interface EvaluateBatchTask {
  kind: 'evaluateBatch';
  epoch: number;
  progress: Int32Array;
  conditions: ConditionTask[];
}

/** A code policy's redaction request; patterns are compiled with re2 by the engine. */
export interface RedactRequest {
  pattern: string;
  replacement?: string;
  flags?: string;
}

/** Errors come back as values, so a failing policy does not look like a crashed worker. */
export interface EvaluateOutcome {
  matched: boolean;
  /** Only code policies set it; declarative policies keep their YAML effect. */
  effect?: PolicyEffect;
  reason?: string;
  redact?: RedactRequest[];
  error?: string;
}

/** Import a code policy module and report what it declares. */
export interface DescribeTask {
  kind: 'describe';
  module: string;
}

export type DescribeOutcome = { ok: true; id: string; events: string[]; match?: string; effects?: string[] } | { ok: false; error: string };

/** Warm-up: loads the worker's dependencies. */
export interface PingTask {
  kind: 'ping';
}

/**
 * `policy eval --explain` and `policy test --coverage`: evaluate one `when`
 * with every `and`/`or` operand and `? :` test recorded (see
 * authoring/condition-branches.ts). Never cached, never used for a decision.
 */
export interface ExplainTask {
  kind: 'explain';
  when: string;
  limits: JsonataLimits;
  input: Record<string, unknown>;
}

/** The `when` value (JSON-safe: `undefined` is absent), or its error, and each branch point's outcomes in evaluation order. */
export interface ExplainOutcome {
  value?: unknown;
  error?: string;
  branches: Array<[id: number, truthy: boolean]>;
}

export type WorkerTask = EvaluateBatchTask | DescribeTask | PingTask | ExplainTask;
