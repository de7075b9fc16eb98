import { watch, type FSWatcher } from 'node:fs';
import type { ResourceLimits } from 'node:worker_threads';
import type { HookgateConfig } from '../config/defaults.js';
import { HookgateError } from '../kernel/errors.js';
import type { ToolCallHookContext } from '../kernel/hooks/hook-types.js';
import type { Logger } from '../kernel/logger.js';
import type { ToolResult } from '../kernel/messages.js';
import type { ToolPolicy, ToolPolicyDecision } from '../kernel/tool-policy.js';
import type { CanonicalArgs } from '../kernel/tools.js';
import { buildDecisionRecord, type DecisionLog } from './decision-log.js';
import { evaluateEvent, POLICY_OVERLOADED, type EvaluableEvent, type EvaluationSettings, type PolicyEvaluation } from './evaluate-decision.js';
import { loadPacks, type CodePolicyDescription, type LoadPacksResult } from './load-packs.js';
import { PolicyPool } from './policy-pool.js';
import { PolicySet } from './policy-set.js';
import { formatLoadError, type PolicyLoadError } from './policy-types.js';
import type { DescribeOutcome } from './worker/worker-protocol.js';

export type PolicyEngineOptions = Partial<HookgateConfig['policies']> & {
  /** Where decisions are recorded; without it nothing is logged. */
  store?: DecisionLog;
  logger?: Logger;
  /** Per-worker V8 limits (default 64 MB old generation). */
  resourceLimits?: ResourceLimits;
  /** JSONata guards; `timeout` defaults to 80% of `deadlineMs`. */
  jsonataLimits?: Partial<EvaluationSettings['limits']>;
  /** Inputs nested deeper than this fail closed instead of going to a worker (default 64). */
  maxInputDepth?: number;
  /** At most this many conditions per worker message (default 32; 1 sends each condition alone). */
  maxBatch?: number;
};

/** What the engine counts (`PolicyEngine.stats`). */
export interface PolicyEngineStats {
  /** Decisions refused with `policy_overloaded` since the engine was made. */
  overloaded: number;
  /** Decisions queued for or running in a worker now. */
  inFlight: number;
  /** The capacity (`policies.maxInFlight`). */
  maxInFlight: number;
  workers: number;
}

/** Overload refusals are logged at most this often (each is counted). */
const OVERLOAD_LOG_INTERVAL_MS = 1000;

export interface ReloadResult {
  ok: boolean;
  /** True when a new set was swapped in. */
  changed: boolean;
  errors: PolicyLoadError[];
}

/**
 * The policy engine: the `ToolPolicy` the runtime asks before webhook
 * controls. Holds one immutable compiled `PolicySet`; reloads swap it
 * atomically and a decision finishes on the set it started with. Every
 * decision (allow included) is written to the decision log without delaying
 * the answer; `flush()` waits for those writes.
 *
 * Fails closed: before `start()`, after `stop()`, or on any evaluation
 * failure the answer is a deny naming the reason. A decision the worker pool
 * has no room for (`policies.maxInFlight`) is a deny too, but no policy's:
 * reason `policy_overloaded`, classification `policy_overloaded`, counted in
 * `stats()`, logged, and not in the decision log.
 */
export class PolicyEngine implements ToolPolicy {
  private set: PolicySet = PolicySet.empty();
  private readonly pool: PolicyPool;
  private readonly settings: EvaluationSettings;
  private readonly paths: string[];
  private readonly logRawArgs: boolean;
  private readonly hotReload: boolean;
  private state: 'new' | 'started' | 'stopped' = 'new';
  private readonly pendingWrites = new Set<Promise<void>>();
  private reloading: Promise<ReloadResult> = Promise.resolve({ ok: true, changed: false, errors: [] });
  private watchers: FSWatcher[] = [];
  private watchTimer: NodeJS.Timeout | undefined;
  private overloadedCount = 0;
  private overloadedUnlogged = 0;
  private overloadLoggedAt = -Infinity;

  constructor(private readonly options: PolicyEngineOptions = {}) {
    const deadlineMs = options.deadlineMs ?? 250;
    this.paths = options.paths ?? ['policies'];
    this.logRawArgs = options.logRawArgs ?? false;
    this.hotReload = options.hotReload ?? false;
    this.settings = {
      deadlineMs,
      defaultDecision: options.defaultDecision ?? 'allow',
      limits: {
        timeout: options.jsonataLimits?.timeout ?? Math.max(1, Math.floor(deadlineMs * 0.8)),
        stack: options.jsonataLimits?.stack ?? 200,
        sequence: options.jsonataLimits?.sequence ?? 100_000,
      },
      maxInputDepth: options.maxInputDepth ?? 64,
    };
    this.pool = new PolicyPool({
      maxWorkers: options.maxWorkers,
      maxInFlight: options.maxInFlight,
      maxBatch: options.maxBatch,
      resourceLimits: options.resourceLimits,
      onError: (err) => options.logger?.warn('policy worker error', { error: err.message }),
    });
  }

  /** Overload refusals so far, and the pool's load and size. */
  stats(): PolicyEngineStats {
    return { overloaded: this.overloadedCount, inFlight: this.pool.inFlight, maxInFlight: this.pool.maxInFlight, workers: this.pool.workers };
  }

  /** The compiled set decisions currently start on. */
  get policySet(): PolicySet {
    return this.set;
  }

  /**
   * Starts the worker pool and loads the packs. Throws POLICY_INVALID (all
   * errors in the message and `details.errors`) when a pack is invalid: an
   * install never runs on a half-loaded policy set. Starts watching the
   * paths when `hotReload` is on.
   */
  async start(): Promise<void> {
    await this.pool.start();
    const loaded = await this.load();
    if (loaded.errors.length > 0) {
      await this.pool.stop();
      throw invalidPacks(loaded.errors);
    }
    this.set = new PolicySet(loaded.packs);
    this.state = 'started';
    if (this.hotReload) this.watch();
  }

  /** Stops watching, waits for decision log writes, terminates the workers. Idempotent. */
  async stop(): Promise<void> {
    this.state = 'stopped';
    clearTimeout(this.watchTimer);
    for (const w of this.watchers) w.close();
    this.watchers = [];
    await this.flush();
    await this.pool.stop();
  }

  /**
   * Loads and checks every pack again. When all are valid and something
   * changed, the new set replaces the old one in a single assignment; when any
   * is broken the last good set stays and the errors are returned (and logged).
   * Calls are serialized.
   */
  reload(): Promise<ReloadResult> {
    this.reloading = this.reloading.then(async () => {
      const loaded = await this.load();
      if (loaded.errors.length > 0) {
        this.options.logger?.warn('policy reload rejected; keeping the last good policy set', {
          errors: loaded.errors.map(formatLoadError),
        });
        return { ok: false, changed: false, errors: loaded.errors };
      }
      const next = new PolicySet(loaded.packs);
      if (next.version === this.set.version) return { ok: true, changed: false, errors: [] };
      this.set = next;
      this.options.logger?.info('policy set reloaded', { version: next.version });
      return { ok: true, changed: true, errors: [] };
    });
    return this.reloading;
  }

  /** Waits until every decision record written so far is stored. */
  async flush(): Promise<void> {
    while (this.pendingWrites.size > 0) await Promise.all([...this.pendingWrites]);
  }

  /** False when no pack is loaded and the answer can only be an unlogged allow (see `decide`). */
  mayDecide(type: 'beforeToolCall' | 'afterToolCall'): boolean {
    return !(this.state === 'started' && this.set.policies.length === 0 && (type === 'afterToolCall' || this.settings.defaultDecision === 'allow'));
  }

  /** `canonical`: the tool source's canonical arguments (what the gate got from `ToolSource.canonicalArgs`), if any. */
  evaluateToolCall(event: ToolCallHookContext & { agentId?: string; canonical?: CanonicalArgs }, signal?: AbortSignal): Promise<ToolPolicyDecision> {
    return this.decide('beforeToolCall', event, signal);
  }

  evaluateToolResult(event: ToolCallHookContext & { result: ToolResult; canonical?: CanonicalArgs }, signal?: AbortSignal): Promise<ToolPolicyDecision> {
    return this.decide('afterToolCall', event, signal);
  }

  /**
   * Decides and logs one event, returning the full evaluation (every verdict,
   * latency, redacted result). What `evaluateToolCall`/`evaluateToolResult`
   * and `policy eval` use. Never rejects.
   */
  async evaluate(type: 'beforeToolCall' | 'afterToolCall', event: EvaluableEvent, signal?: AbortSignal): Promise<PolicyEvaluation> {
    return this.evaluateAndRecord(type, event, signal, true);
  }

  /**
   * `fullInput`: whether the evaluation's input must be what policies saw
   * (see evaluateEvent); the raw-input log needs it, a digest does not.
   */
  private async evaluateAndRecord(type: 'beforeToolCall' | 'afterToolCall', event: EvaluableEvent, signal: AbortSignal | undefined, fullInput: boolean): Promise<PolicyEvaluation> {
    if (this.state !== 'started') return this.refuse(type, event);
    const evaluation = await evaluateEvent(this.set, this.pool, this.settings, type, event, signal, { fullInput: fullInput || this.logRawArgs });
    // No policy decided a refused decision: it is counted and logged, never written as a policy's deny.
    if (evaluation.overloaded) this.noteOverload(type, event);
    else this.record(evaluation);
    return evaluation;
  }

  /**
   * Counts a `policy_overloaded` refusal and logs it, at most once a second
   * (with how many were refused since the last line), so overload does not
   * also flood the log.
   */
  private noteOverload(type: 'beforeToolCall' | 'afterToolCall', event: EvaluableEvent): void {
    this.overloadedCount++;
    this.overloadedUnlogged++;
    const now = performance.now();
    if (now - this.overloadLoggedAt < OVERLOAD_LOG_INTERVAL_MS) return;
    this.overloadLoggedAt = now;
    const e = event as { operationId?: unknown; toolCallId?: unknown };
    this.options.logger?.warn('policy decision refused: the worker pool is at capacity (policy_overloaded)', {
      reason: POLICY_OVERLOADED,
      event: type,
      operationId: e.operationId,
      toolCallId: e.toolCallId,
      tool: `${event.identifier}/${event.apiName}`,
      maxInFlight: this.pool.maxInFlight,
      refusedSinceLastLog: this.overloadedUnlogged,
      refusedTotal: this.overloadedCount,
    });
    this.overloadedUnlogged = 0;
  }

  private async decide(type: 'beforeToolCall' | 'afterToolCall', event: EvaluableEvent, signal?: AbortSignal): Promise<ToolPolicyDecision> {
    // No packs at all: nothing to decide and nothing to log, unless an allow-list install denies by default.
    if (!this.mayDecide(type)) return { effect: 'allow', policyIds: [] };
    const e = await this.evaluateAndRecord(type, event, signal, false);
    const decision: ToolPolicyDecision = { effect: e.effect, policyIds: e.policyIds };
    if (e.reason !== undefined) decision.reason = e.reason;
    if (e.redactedResult !== undefined) decision.redactedResult = e.redactedResult;
    if (e.overloaded) decision.classification = POLICY_OVERLOADED;
    return decision;
  }

  private refuse(type: 'beforeToolCall' | 'afterToolCall', event: EvaluableEvent): PolicyEvaluation {
    const reason = this.state === 'new' ? 'policy engine is not started' : 'policy engine is stopped';
    return { type, effect: 'deny', decision: 'deny', reason, policyIds: [], redactions: [], defaulted: false, verdicts: [], latencyMicros: 0, input: { ...event } };
  }

  /**
   * Queues the decision's log record. The record (digest included) is built
   * on the next turn of the event loop so hashing a large input never delays
   * the decision itself; `flush()` waits for it.
   */
  private record(evaluation: PolicyEvaluation): void {
    const store = this.options.store;
    if (!store) return;
    const now = new Date();
    const tracked: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => store.recordDecision(buildDecisionRecord(evaluation, { logRawArgs: this.logRawArgs, now })))
      .catch((err: unknown) => this.options.logger?.error('policy decision could not be recorded', { error: (err as Error)?.message }))
      .finally(() => this.pendingWrites.delete(tracked));
    this.pendingWrites.add(tracked);
  }

  private load(): Promise<LoadPacksResult> {
    return loadPacks(this.paths, { describeModule: (m) => describeModule(this.pool, m, this.settings.deadlineMs * 20) });
  }

  private watch(): void {
    const schedule = () => {
      clearTimeout(this.watchTimer);
      this.watchTimer = setTimeout(() => void this.reload(), 100);
      this.watchTimer.unref();
    };
    for (const p of this.paths) {
      try {
        const w = watch(p, { recursive: true, persistent: false }, schedule);
        w.on('error', (err) => this.options.logger?.warn('policy watch failed', { path: p, error: err.message }));
        this.watchers.push(w);
      } catch (err) {
        this.options.logger?.warn('policy watch failed', { path: p, error: (err as Error).message });
      }
    }
  }
}

/** Imports a code policy module inside a worker and returns its declaration. */
export async function describeModule(pool: PolicyPool, module: string, timeoutMs: number): Promise<CodePolicyDescription> {
  const out = await pool.run<DescribeOutcome>({ kind: 'describe', module }, AbortSignal.timeout(timeoutMs));
  if (!out.ok) throw new Error(out.error);
  return { id: out.id, events: out.events, match: out.match, ...(out.effects === undefined ? {} : { effects: out.effects }) };
}

export function invalidPacks(errors: readonly PolicyLoadError[]): HookgateError {
  return new HookgateError('POLICY_INVALID', `Invalid policy packs:\n${errors.map(formatLoadError).join('\n')}`, {
    details: { errors: errors.map((e) => ({ ...e })) },
  });
}
