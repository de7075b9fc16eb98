import { CriticalHookDeliveryError, HookgateError, errorMessage } from '../errors.js';
import type { Logger } from '../logger.js';
import {
  restoreHooks,
  serializeHooks,
  snapshotHooks,
  type RegisteredHook,
  type WebhookValidator,
} from './hook-registration.js';
import { controlStep } from './webhook/control-step.js';
import { boundedHandler, isThenable } from './handler-timeout.js';
import { HookBus } from './hook-bus.js';
import { validateMockResult } from './mock-result.js';
import type { ControlOutcome } from './webhook/webhook-sender.js';
import type {
  AfterToolCallEvent,
  AgentHook,
  BeforeToolCallEvent,
  ControlVerdict,
  HookEventMap,
  HookType,
  MockResult,
  SerializedHook,
  ToolCallHookContext,
  WebhookConfig,
} from './hook-types.js';

/** What the dispatcher needs to deliver webhook hooks (built from kernel/hooks/webhook). */
export interface WebhookSupport {
  validate: WebhookValidator;
  sendNotification(hook: SerializedHook, event: object, signal?: AbortSignal): Promise<{ ok: true } | { ok: false; critical: boolean; kind?: string; message?: string }>;
  /** One control's answer; never rejects (failures are `error`, aborts `cancelled`). */
  evaluateControl(hook: SerializedHook, event: object, signal?: AbortSignal): Promise<ControlOutcome>;
  /** The current environment hooks, read at every evaluation (never persisted). */
  environmentHooks(): SerializedHook[];
}

/** `local`: handlers and webhooks in this process; `queue`: only serialized webhooks (workers). */
export type DeliveryMode = 'local' | 'queue';

export interface HookDispatcherOptions {
  logger: Logger;
  /** `local` calls handlers; `queue` delivers only serialized webhooks. */
  mode?: DeliveryMode;
  webhooks?: WebhookSupport;
  /** Told about every delivery (handler called, webhook sent), in order; for timelines. Must not throw. */
  onDelivered?: (operationId: string, hookType: HookType, hookId: string, via: 'handler' | 'webhook', stepIndex: number | undefined) => void;
  /** Reads an operation's persisted caller hooks; a rejection propagates (no policy is never assumed). */
  loadPersistedHooks?: (operationId: string) => Promise<unknown[]>;
  /**
   * How long one local handler call may take to settle (`hooks.handlerTimeoutMs`);
   * default 30,000 ms. A handler that takes longer is logged as that hook's
   * error and treated like one that threw.
   */
  handlerTimeoutMs?: number;
}

/** Default bound on one local handler call (`hooks.handlerTimeoutMs`). */
export const DEFAULT_HOOK_HANDLER_TIMEOUT_MS = 30_000;

/** What beforeToolCall handlers decided: a mocked result, or null to run the tool. */
export type MockOutcome = { isMocked: true; result: MockResult } | null;

const NO_HOOKS: readonly RegisteredHook[] = Object.freeze([]);

/**
 * The event of one beforeToolCall handler: the context, and a `mock()` that
 * accepts a result only while `turn.open` (that handler's turn). A function
 * of its own, so only handlers that run get a closure (in the loop, its scope
 * would be built for every hook scanned).
 */
function mockEvent(context: ToolCallHookContext, run: MockRun, turn: { open: boolean }): BeforeToolCallEvent {
  return {
    ...context,
    mock: (result: MockResult) => {
      if (!turn.open || run.mocked !== undefined) return false;
      // Throws HOOK_MOCK_INVALID at the call: nothing malformed is ever stored.
      run.mocked = validateMockResult(result);
      return true;
    },
  };
}

/** The first accepted mock of one runMockHandlers. */
type MockRun = { mocked: MockResult | undefined };

function mockOutcome(run: MockRun): MockOutcome {
  return run.mocked === undefined ? null : { isMocked: true, result: run.mocked };
}


/**
 * Stores hooks per operation and dispatches them: one hook at a time, in
 * registration order, each awaited. Ordinary handler and webhook errors are
 * logged and never fatal; `fallback: 'none'` webhook failures raise one
 * CriticalHookDeliveryError after every sibling ran.
 */
export class HookDispatcher {
  readonly mode: DeliveryMode;
  /**
   * The hook bus over declared vocabularies: lifecycle (served by this
   * dispatcher) and any vocabulary a runtime part or a plugin adds with
   * `bus.addVocabulary` (run by the bus from its declaration).
   */
  readonly bus: HookBus;
  private readonly logger: Logger;
  private readonly webhooks: WebhookSupport | undefined;
  private readonly loadPersisted: ((operationId: string) => Promise<unknown[]>) | undefined;
  private readonly onDelivered: HookDispatcherOptions['onDelivered'];
  private readonly handlerTimeoutMs: number;
  private readonly registrations = new Map<string, readonly RegisteredHook[]>();
  private readonly restored = new Map<string, Promise<readonly RegisteredHook[]>>();
  /** Per frozen registration list, its hooks by type (ofType). */
  private readonly typeIndex = new WeakMap<readonly RegisteredHook[], Map<HookType, RegisteredHook[]>>();

  constructor(options: HookDispatcherOptions) {
    this.logger = options.logger;
    this.mode = options.mode ?? 'local';
    this.webhooks = options.webhooks;
    this.loadPersisted = options.loadPersistedHooks;
    this.onDelivered = options.onDelivered;
    const timeout = options.handlerTimeoutMs ?? DEFAULT_HOOK_HANDLER_TIMEOUT_MS;
    if (!Number.isFinite(timeout) || timeout <= 0) {
      throw new HookgateError('CONFIG_INVALID', `hooks.handlerTimeoutMs: expected a positive number of milliseconds, got ${String(timeout)}`);
    }
    this.handlerTimeoutMs = timeout;
    this.bus = new HookBus({ logger: this.logger, handlerTimeoutMs: timeout, lifecycle: this });
  }

  private delivered(operationId: string, hook: RegisteredHook, via: 'handler' | 'webhook', event: object): void {
    // Positional: three deliveries a step, and usually nobody watches the timeline.
    this.onDelivered?.(operationId, hook.type, hook.id, via, (event as { stepIndex?: number }).stepIndex);
  }

  /**
   * Validates the whole batch (also against the operation's registered hooks:
   * ids must stay unique), then appends snapshots to the operation's hooks, in
   * order. Throws HOOK_INVALID and changes nothing on any problem. An empty
   * batch adds nothing, but marks the operation as registered (its hooks are
   * then the in-memory ones, never read back from the store).
   */
  register(operationId: string, hooks: readonly AgentHook[]): void {
    const existing = this.registrations.get(operationId);
    const taken = existing && existing.length > 0 ? new Set(existing.map((h) => h.id)) : undefined;
    const snapshot = snapshotHooks(
      hooks,
      this.webhooks?.validate,
      (id) => this.logger.warn('dropped a caller hook with a reserved environment id', { operationId, hookId: id }),
      taken,
    );
    if (existing && snapshot.length === 0) return;
    this.registrations.set(operationId, Object.freeze(existing ? [...existing, ...snapshot] : snapshot));
    this.restored.delete(operationId);
  }

  /** Forgets the operation's hooks (called on completion). */
  unregister(operationId: string): void {
    this.registrations.delete(operationId);
    this.restored.delete(operationId);
  }

  /** Whether the operation has in-memory hooks (of a type, when given). */
  hasHooks(operationId: string, type?: HookType): boolean {
    const list = this.registrations.get(operationId);
    if (!list || list.length === 0) return false;
    return type === undefined || list.some((h) => h.type === type);
  }

  /** Whether a hook of the type can be delivered in this mode (queue mode cannot call handlers). */
  canDeliver(operationId: string, type: HookType): boolean {
    const list = this.registrations.get(operationId) ?? [];
    return list.some((h) => h.type === type && this.deliverable(h));
  }

  /**
   * The operation's registered snapshots as hook literals (handlers and
   * webhooks alike), for handing the same hooks to a sub-agent operation.
   * Later changes to the caller's original objects are not reflected.
   */
  getRegisteredHooks(operationId: string): AgentHook[] {
    return (this.registrations.get(operationId) ?? []).map((h) => ({
      id: h.id,
      type: h.type,
      ...(h.matcher.source !== undefined ? { matcher: h.matcher.source } : {}),
      ...(h.handler ? { handler: h.handler } : {}),
      ...(h.webhook ? { webhook: structuredClone(h.webhook) as WebhookConfig } : {}),
      // A snapshot pairs its own type with its own handler and matcher (validated at registration).
    }) as AgentHook);
  }

  /**
   * The persisted form: webhook hooks only, env templates kept, secrets never
   * expanded. `undefined` for an operation nothing was registered for.
   */
  getSerializedHooks(operationId: string): SerializedHook[] | undefined {
    const registered = this.registrations.get(operationId);
    return registered === undefined ? undefined : serializeHooks(registered);
  }

  /**
   * Ordinary (notification) dispatch of one event. `webhooksOnly` skips local
   * handlers (beforeToolCall observation, whose handlers ran with `mock`).
   */
  async dispatch<T extends HookType>(
    operationId: string,
    type: T,
    event: HookEventMap[T],
    options: { signal?: AbortSignal; webhooksOnly?: boolean } = {},
  ): Promise<void> {
    // The usual case, in-memory hooks and no environment hook: only the registered hooks of this type.
    const registered = this.registrations.get(operationId);
    const found = registered !== undefined && this.environmentHooks().length === 0 ? this.ofType(registered, type) : this.hooksFor(operationId);
    const hooks = found instanceof Promise ? await found : found;
    let critical: CriticalHookDeliveryError | undefined;
    for (let i = 0; i < hooks.length; i++) {
      const hook = hooks[i]!;
      if (hook.type !== type || hook.isControl || !this.matches(hook, event) || !this.deliverable(hook)) continue;
      if (this.mode === 'local' && hook.handler) {
        if (options.webhooksOnly) continue;
        try {
          // Only a promise is awaited: sync handlers cost no extra microtask.
          this.delivered(operationId, hook, 'handler', event);
          const pending = hook.handler(event as never);
          if (isThenable(pending)) await this.bounded(pending, hook);
        } catch (err) {
          this.logger.error('hook handler failed', { operationId, hookId: hook.id, hookType: type, error: errorMessage(err) });
        }
        continue;
      }
      this.delivered(operationId, hook, 'webhook', event);
      const outcome = await this.webhooks!.sendNotification(this.serialized(hook), event, options.signal);
      if (!outcome.ok) {
        this.logger.warn('webhook delivery failed', { operationId, hookId: hook.id, hookType: type, kind: outcome.kind });
        if (outcome.critical) critical ??= new CriticalHookDeliveryError(hook.id);
      }
    }
    if (critical) throw critical;
  }

  /**
   * Runs local beforeToolCall handlers with `event.mock()`. The first accepted
   * mock wins and skips the remaining handlers. `mock()` validates the result
   * (see validateMockResult) and throws HOOK_MOCK_INVALID for a malformed one,
   * which is then not accepted (a later handler may still mock); the result
   * kept is a deep copy. Delivers no webhooks. Always null in queue mode.
   */
  async dispatchBeforeToolCall(operationId: string, context: ToolCallHookContext): Promise<MockOutcome> {
    return this.runMockHandlers(operationId, context);
  }

  /**
   * dispatchBeforeToolCall without a promise while it can: handlers run in
   * order, and only once one returns a promise does the rest wait for it (a
   * sync handler costs no microtask, as in `dispatch`). Never throws.
   */
  runMockHandlers(operationId: string, context: ToolCallHookContext): MockOutcome | Promise<MockOutcome> {
    if (this.mode === 'queue') return null;
    const hooks = this.ofType(this.registrations.get(operationId) ?? NO_HOOKS, 'beforeToolCall');
    const run: MockRun = { mocked: undefined };
    for (let i = 0; i < hooks.length; i++) {
      if (run.mocked !== undefined) break;
      const hook = hooks[i]!;
      if (!this.mocks(hook, context)) continue;
      // One event per handler: once its handler settled (or timed out), its mock() accepts nothing.
      const turn = { open: true };
      let pending: unknown;
      try {
        this.delivered(operationId, hook, 'handler', context);
        pending = hook.handler!(mockEvent(context, run, turn));
      } catch (err) {
        this.mockHandlerFailed(operationId, hook, run, err);
        turn.open = false;
        continue;
      }
      if (isThenable(pending)) return this.finishMockHandlers(operationId, context, hooks, i, pending, turn, run);
      turn.open = false;
    }
    return mockOutcome(run);
  }

  /** The rest of runMockHandlers once handler `i` returned a promise. */
  private async finishMockHandlers(
    operationId: string,
    context: ToolCallHookContext,
    hooks: readonly RegisteredHook[],
    i: number,
    pending: PromiseLike<unknown>,
    turn: { open: boolean },
    run: MockRun,
  ): Promise<MockOutcome> {
    try {
      await this.bounded(pending, hooks[i]!);
    } catch (err) {
      this.mockHandlerFailed(operationId, hooks[i]!, run, err);
    } finally {
      turn.open = false;
    }
    for (let j = i + 1; j < hooks.length; j++) {
      if (run.mocked !== undefined) break;
      const hook = hooks[j]!;
      if (!this.mocks(hook, context)) continue;
      const next = { open: true };
      try {
        this.delivered(operationId, hook, 'handler', context);
        const result = hook.handler!(mockEvent(context, run, next));
        if (isThenable(result)) await this.bounded(result, hook);
      } catch (err) {
        this.mockHandlerFailed(operationId, hook, run, err);
      } finally {
        next.open = false;
      }
    }
    return mockOutcome(run);
  }

  /** Whether `hook` is a beforeToolCall handler that may mock this call. */
  private mocks(hook: RegisteredHook, context: ToolCallHookContext): boolean {
    return hook.type === 'beforeToolCall' && !hook.isControl && hook.handler !== undefined && this.matches(hook, context);
  }

  private mockHandlerFailed(operationId: string, hook: RegisteredHook, run: MockRun, err: unknown): void {
    this.logger.error('beforeToolCall handler failed', { operationId, hookId: hook.id, hookType: hook.type, error: errorMessage(err), mockedBeforeThrow: run.mocked !== undefined });
  }

  /** beforeToolCall controls: caller controls in order, then environment controls. */
  evaluateToolCall(operationId: string, event: ToolCallHookContext, signal?: AbortSignal): Promise<ControlVerdict> {
    return this.evaluateControls(operationId, 'beforeToolCall', event, signal);
  }

  /** afterToolCall controls, with the full untrimmed result; runs before anything is published. */
  evaluateAfterToolCall(operationId: string, event: AfterToolCallEvent, signal?: AbortSignal): Promise<ControlVerdict> {
    return this.evaluateControls(operationId, 'afterToolCall', event, signal);
  }

  /**
   * A synchronous, conservative pre-check for the hot path: false only when
   * the operation's hooks are in memory and none of them (nor an environment
   * hook) could take part in this kind of delivery. `true` means "ask".
   */
  mightHandle(operationId: string, type: HookType, kind: 'notification' | 'webhook-notification' | 'control'): boolean {
    const caller = this.registrations.get(operationId);
    if (!caller) return true;
    // Indexed loops over the hook lists here and in dispatch: V8 does not inline `for...of` over a frozen array's
    // iterator, and this runs several times a step; only the caller's hooks of this type are looked at.
    const own = this.ofType(caller, type);
    for (let i = 0; i < own.length; i++) if (this.relevant(own[i]!, type, kind)) return true;
    const env = this.environmentHooks();
    for (let i = 0; i < env.length; i++) if (this.relevant(env[i]!, type, kind)) return true;
    return false;
  }

  /**
   * A registration list's hooks of one type, in registration order. Registration lists are frozen and replaced
   * (never changed) by `register`, so each is indexed once, by identity; a step then scans one or two hooks
   * instead of every registered one (a caller that registers all 16 types: 16 per delivery).
   */
  private ofType(list: readonly RegisteredHook[], type: HookType): readonly RegisteredHook[] {
    if (list.length === 0) return list;
    let index = this.typeIndex.get(list);
    if (index === undefined) {
      index = new Map();
      for (let i = 0; i < list.length; i++) {
        const hook = list[i]!;
        const same = index.get(hook.type);
        if (same === undefined) index.set(hook.type, [hook]);
        else same.push(hook);
      }
      this.typeIndex.set(list, index);
    }
    return index.get(type) ?? NO_HOOKS;
  }

  private relevant(h: RegisteredHook, type: HookType, kind: 'notification' | 'webhook-notification' | 'control'): boolean {
    if (h.type !== type) return false;
    if (kind === 'control') return h.isControl;
    if (h.isControl) return false;
    return kind === 'notification' ? this.deliverable(h) : h.webhook !== undefined && (this.mode === 'queue' || !h.handler);
  }


  private async evaluateControls(
    operationId: string,
    type: 'beforeToolCall' | 'afterToolCall',
    event: ToolCallHookContext | AfterToolCallEvent,
    signal: AbortSignal | undefined,
  ): Promise<ControlVerdict> {
    if (signal?.aborted) return { decision: 'cancelled' };
    const found = this.hooksFor(operationId);
    const hooks = found instanceof Promise ? await found : found;
    for (let i = 0; i < hooks.length; i++) {
      const hook = hooks[i]!;
      if (hook.type !== type || !hook.isControl || !this.matches(hook, event)) continue;
      if (signal?.aborted) return { decision: 'cancelled' };
      this.delivered(operationId, hook, 'webhook', event);
      const answer = await this.webhooks!.evaluateControl(this.serialized(hook), event, signal);
      if (signal?.aborted) return { decision: 'cancelled' };
      if (answer.kind === 'error') {
        this.logger.warn('control webhook failed', { operationId, hookId: hook.id, hookType: type, reason: answer.reason, onError: hook.webhook?.onError ?? 'continue' });
      }
      // allow, notification, or a tolerated error: the next control is still checked.
      const step = controlStep({ id: hook.id, webhook: hook.webhook ?? {} }, answer);
      if (!step.next) return step.verdict;
    }
    return { decision: 'allow' };
  }

  /**
   * The hooks in force for an operation: in-memory registrations, else the
   * persisted caller hooks; then the current environment hooks.
   */
  /**
   * The hooks in force for an operation: in-memory registrations, else the
   * persisted caller hooks; then the current environment hooks. Synchronous
   * when nothing has to be read from the store (the hot path of every step).
   */
  private hooksFor(operationId: string): readonly RegisteredHook[] | Promise<readonly RegisteredHook[]> {
    const caller = this.registrations.get(operationId);
    if (caller) return this.withEnvironment(caller);
    if (!this.loadPersisted) return this.withEnvironment([]);
    let pending = this.restored.get(operationId);
    if (!pending) {
      pending = this.loadPersisted(operationId).then(
        (raw) => restoreHooks(raw, this.webhooks?.validate, operationId),
        (err: unknown) => {
          // A read failure must not pass through as a parser message that may quote the stored row.
          throw new HookgateError('HOOK_RESTORE_FAILED', `persisted hooks of operation ${operationId} could not be read`, { cause: err, details: { operationId } });
        },
      );
      this.restored.set(operationId, pending);
      pending.catch(() => this.restored.delete(operationId));
    }
    return pending.then((restored) => this.withEnvironment(restored));
  }

  private withEnvironment(caller: readonly RegisteredHook[]): readonly RegisteredHook[] {
    const env = this.environmentHooks();
    if (env.length === 0) return caller;
    // Caller hooks never carry the reserved prefix: snapshotHooks dropped them at registration and restore.
    return [...caller, ...env];
  }

  private environmentHooks(): readonly RegisteredHook[] {
    // The usual answer, asked several times a step: shared, not a new array each time.
    if (!this.webhooks) return NO_HOOKS;
    const raw = this.webhooks.environmentHooks();
    if (raw.length === 0) return NO_HOOKS;
    const known = this.envSnapshots.get(raw);
    if (known) return known;
    // Env hooks carry the reserved prefix, so they are validated here, not dropped.
    const snapshots = raw.map((h) => {
      const [snap] = snapshotHooks([{ ...h, id: `env:${h.id}` }], this.webhooks!.validate);
      return Object.freeze({ ...snap!, id: h.id });
    });
    this.envSnapshots.set(raw, snapshots);
    return snapshots;
  }

  /** Snapshots per environment-hook list (the support returns the same list while the variables stay the same). */
  private readonly envSnapshots = new WeakMap<readonly SerializedHook[], RegisteredHook[]>();

  /** A handler's promise bounded by `handlerTimeoutMs` (see boundedHandler). */
  private bounded(pending: PromiseLike<unknown>, hook: RegisteredHook): Promise<unknown> {
    return boundedHandler(pending, hook, this.handlerTimeoutMs);
  }

  private deliverable(hook: RegisteredHook): boolean {
    if (this.mode === 'local') return hook.handler !== undefined || (hook.webhook !== undefined && this.webhooks !== undefined);
    return hook.webhook !== undefined && this.webhooks !== undefined;
  }

  private matches(hook: RegisteredHook, event: object): boolean {
    if (hook.matcher.matchesAll) return true;
    const e = event as { identifier?: unknown; apiName?: unknown };
    return hook.matcher.test(typeof e.identifier === 'string' ? e.identifier : undefined, typeof e.apiName === 'string' ? e.apiName : undefined);
  }

  private serialized(hook: RegisteredHook): SerializedHook {
    if (!hook.webhook) throw new HookgateError('HOOK_INVALID', `hook "${hook.id}" has no webhook to deliver`);
    return { id: hook.id, type: hook.type, ...(hook.matcher.source !== undefined ? { matcher: hook.matcher.source } : {}), webhook: hook.webhook };
  }
}

