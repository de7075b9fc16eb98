import { HookgateError, errorMessage } from '../errors.js';
import type { Logger } from '../logger.js';
import { snapshotBusHooks, type BusHook, type RegisteredBusHook } from './bus-hook-registration.js';
import { boundedHandler, isThenable } from './handler-timeout.js';
import type { AfterToolCallEvent, AgentHook, ControlVerdict, HookEventMap, HookType, ToolCallHookContext } from './hook-types.js';
import { LIFECYCLE_VOCABULARY } from './vocabulary-lifecycle.js';
import { unknownHookMessage, type HookDeclaration, type HookKind, type HookVocabulary, type TransformErrorRule } from './vocabulary.js';
import { controlStep } from './webhook/control-step.js';
import type { ControlOutcome } from './webhook/webhook-sender.js';

/** The lifecycle paths of HookDispatcher the bus hands lifecycle calls to. */
export interface LifecycleHookPaths {
  register(operationId: string, hooks: readonly AgentHook[]): void;
  unregister(operationId: string): void;
  hasHooks(operationId: string, type?: HookType): boolean;
  dispatch<T extends HookType>(operationId: string, type: T, event: HookEventMap[T], options?: { signal?: AbortSignal }): Promise<void>;
  evaluateToolCall(operationId: string, event: ToolCallHookContext, signal?: AbortSignal): Promise<ControlVerdict>;
  evaluateAfterToolCall(operationId: string, event: AfterToolCallEvent, signal?: AbortSignal): Promise<ControlVerdict>;
}

export interface HookBusOptions {
  logger: Logger;
  /** Bound on one handler's promise (`hooks.handlerTimeoutMs`, as for lifecycle handlers). */
  handlerTimeoutMs: number;
  /** Serves the lifecycle vocabulary (the dispatcher itself). */
  lifecycle: LifecycleHookPaths;
}

const NO_HOOKS: readonly RegisteredBusHook[] = Object.freeze([]);

/** A scope's hooks of one vocabulary: all of them in registration order, and the same by hook name (what a call walks). */
interface ScopeHooks {
  readonly all: readonly RegisteredBusHook[];
  readonly byName: ReadonlyMap<string, readonly RegisteredBusHook[]>;
}

function scopeHooks(all: readonly RegisteredBusHook[]): ScopeHooks {
  const byName = new Map<string, RegisteredBusHook[]>();
  for (const hook of all) {
    const list = byName.get(hook.type);
    if (list === undefined) byName.set(hook.type, [hook]);
    else list.push(hook);
  }
  return { all, byName };
}

/** Whether a batch of hooks is a frozen array of frozen objects (then it can never change). */
function isFrozenBatch(hooks: readonly unknown[]): boolean {
  if (!Array.isArray(hooks) || !Object.isFrozen(hooks)) return false;
  for (const hook of hooks) if (typeof hook !== 'object' || hook === null || !Object.isFrozen(hook)) return false;
  return true;
}

/**
 * Hooks over declared vocabularies. The lifecycle vocabulary is always there
 * and served by HookDispatcher (its webhooks, mocks and controls, exactly as
 * before); any other vocabulary is data (`addVocabulary`), run here by its
 * declared kinds without a change to the dispatcher. Hooks are registered per
 * scope (an operation id for lifecycle; a thread id, a plugin's own name,
 * anything for another vocabulary), run in registration order, one at a
 * time, each promise bounded by `handlerTimeoutMs` (a timeout counts as a
 * throw). A call whose handlers are all synchronous returns synchronously:
 * no promise and no microtask.
 *
 * Calls with a name the vocabulary does not declare, or a name of another
 * kind (observe() on a transform hook), throw HOOK_INVALID synchronously:
 * that is a bug of the caller, not of a handler.
 */
export class HookBus {
  private readonly logger: Logger;
  private readonly handlerTimeoutMs: number;
  private readonly lifecycle: LifecycleHookPaths;
  private readonly known = new Map<string, HookVocabulary>([[LIFECYCLE_VOCABULARY.name, LIFECYCLE_VOCABULARY]]);
  /** vocabulary name → scope → hooks in registration order (and by name). */
  private readonly registrations = new Map<string, Map<string, ScopeHooks>>();
  /**
   * A frozen batch of frozen hooks (thread hooks register one per operation, the same for every operation of an
   * agent) validated once: registered again into an empty scope, its snapshot is reused. Such a batch cannot change,
   * so its snapshot cannot either; nothing reads a scope's hooks mutably.
   */
  private readonly frozenBatches = new WeakMap<object, { readonly vocabulary: HookVocabulary; readonly hooks: ScopeHooks }>();
  /** Each vocabulary's declarations by name: a call looks its hook up here (a keyed load per call showed in profiles). */
  private readonly declarations = new WeakMap<HookVocabulary, ReadonlyMap<string, HookDeclaration>>();

  constructor(options: HookBusOptions) {
    this.logger = options.logger;
    this.handlerTimeoutMs = options.handlerTimeoutMs;
    this.lifecycle = options.lifecycle;
  }

  /**
   * Makes a vocabulary (from defineHookVocabulary) available for registration
   * and calls. Throws HOOK_INVALID when the name is taken (lifecycle included)
   * or the object is not a declared vocabulary.
   */
  addVocabulary(vocabulary: HookVocabulary): void {
    const v = vocabulary as Partial<HookVocabulary> | null;
    if (typeof v !== 'object' || v === null || typeof v.name !== 'string' || !Array.isArray(v.names) || !Object.isFrozen(v)) {
      throw new HookgateError('HOOK_INVALID', 'addVocabulary: expected a vocabulary made by defineHookVocabulary');
    }
    if (this.known.has(vocabulary.name)) throw new HookgateError('HOOK_INVALID', `addVocabulary: a vocabulary named "${vocabulary.name}" is already registered`, { details: { vocabulary: vocabulary.name } });
    this.known.set(vocabulary.name, vocabulary);
  }

  /** The names of the registered vocabularies, lifecycle first. */
  vocabularyNames(): string[] {
    return [...this.known.keys()];
  }

  /** A registered vocabulary by name; throws HOOK_INVALID naming the registered ones. */
  vocabulary(name: string): HookVocabulary {
    const found = this.known.get(name);
    if (!found) throw new HookgateError('HOOK_INVALID', `unknown hook vocabulary ${JSON.stringify(name)}; registered: ${this.vocabularyNames().join(', ')}`, { details: { vocabulary: name } });
    return found;
  }

  /**
   * Validates the whole batch, then appends it to the scope's hooks of that
   * vocabulary; HOOK_INVALID and nothing changed on any problem. Lifecycle
   * hooks go to HookDispatcher.register (the scope is the operation id).
   */
  register(scope: string, vocabulary: string, hooks: readonly BusHook[] | readonly AgentHook[]): void {
    const v = this.vocabulary(vocabulary);
    if (v === LIFECYCLE_VOCABULARY) return this.lifecycle.register(scope, hooks as readonly AgentHook[]);
    const byScope = this.scopes(v.name);
    const existing = byScope.get(scope)?.all;
    if (existing === undefined || existing.length === 0) {
      const known = this.frozenBatches.get(hooks);
      if (known !== undefined && known.vocabulary === v) return void byScope.set(scope, known.hooks);
    }
    const snapshot = snapshotBusHooks(v, hooks, existing && existing.length > 0 ? new Set(existing.map((h) => h.id)) : undefined);
    const registered = scopeHooks(Object.freeze(existing ? [...existing, ...snapshot] : snapshot));
    byScope.set(scope, registered);
    if ((existing === undefined || existing.length === 0) && isFrozenBatch(hooks)) this.frozenBatches.set(hooks, { vocabulary: v, hooks: registered });
  }

  /** Forgets the scope's hooks of one vocabulary (lifecycle: HookDispatcher.unregister). */
  unregister(scope: string, vocabulary: string): void {
    const v = this.vocabulary(vocabulary);
    if (v === LIFECYCLE_VOCABULARY) return this.lifecycle.unregister(scope);
    this.registrations.get(v.name)?.delete(scope);
  }

  /** Whether the scope has hooks of the vocabulary (of that hook, when given). */
  hasHooks(scope: string, vocabulary: string, name?: string): boolean {
    const v = this.vocabulary(vocabulary);
    if (name !== undefined) this.declared(v, name);
    if (v === LIFECYCLE_VOCABULARY) return this.lifecycle.hasHooks(scope, name as HookType | undefined);
    return this.hooksOf(v.name, scope, name).length > 0;
  }

  /**
   * Tells every matching handler of an observe hook, in order. A handler that
   * throws or times out is logged; the others still run; this never rejects
   * for a handler. Lifecycle: HookDispatcher.dispatch (observe and control
   * hooks: a control hook's notifications), with its webhook rules.
   */
  observe(scope: string, vocabulary: string, name: string, event: unknown, context?: unknown): void | Promise<void> {
    const v = this.vocabulary(vocabulary);
    if (v === LIFECYCLE_VOCABULARY) {
      this.declared(v, name);
      return this.lifecycle.dispatch(scope, name as HookType, event as never);
    }
    const declaration = this.declared(v, name, 'observe');
    const hooks = this.hooksOf(v.name, scope, name);
    for (let i = 0; i < hooks.length; i++) {
      const hook = hooks[i]!;
      if (hook.type !== name || !this.matches(hook, declaration, event, context)) continue;
      try {
        const pending = hook.handler(event, context);
        if (isThenable(pending)) return this.finishObserve(scope, v.name, name, event, context, declaration, hooks, i, pending);
      } catch (err) {
        this.failed(scope, v.name, hook, err, 'observe handler failed');
      }
    }
  }

  private async finishObserve(scope: string, vocabulary: string, name: string, event: unknown, context: unknown, declaration: HookDeclaration, hooks: readonly RegisteredBusHook[], i: number, first: PromiseLike<unknown>): Promise<void> {
    for (let j = i; j < hooks.length; j++) {
      const hook = hooks[j]!;
      if (j > i && (hook.type !== name || !this.matches(hook, declaration, event, context))) continue;
      try {
        const pending = j === i ? first : hook.handler(event, context);
        if (isThenable(pending)) await boundedHandler(pending, hook, this.handlerTimeoutMs);
      } catch (err) {
        this.failed(scope, vocabulary, hook, err, 'observe handler failed');
      }
    }
  }

  /**
   * Passes `value` through the matching handlers of a transform hook, in
   * registration order: each gets what the previous one returned (and the
   * call's `context`); `null` / `undefined` keeps the value. A handler that
   * throws or times out follows `options.onError`, else the hook's rule
   * (default `keep`): `keep` logs it and goes on with the last good value;
   * `propagate` stops the chain and rethrows the handler's error (a timeout
   * is HOOK_HANDLER_TIMEOUT). Synchronous while every handler is.
   */
  transform<V>(scope: string, vocabulary: string, name: string, value: V, context?: unknown, options?: { onError?: TransformErrorRule }): V | Promise<V> {
    const v = this.vocabulary(vocabulary);
    const declaration = this.declared(v, name, 'transform');
    const rule = options?.onError ?? (declaration.onError as TransformErrorRule | undefined) ?? 'keep';
    const hooks = this.hooksOf(v.name, scope, name);
    let current = value;
    for (let i = 0; i < hooks.length; i++) {
      const hook = hooks[i]!;
      if (hook.type !== name || !this.matches(hook, declaration, current, context)) continue;
      let out: unknown;
      try {
        out = hook.handler(current, context);
      } catch (err) {
        this.transformFailed(scope, v.name, hook, err, rule);
        continue;
      }
      if (isThenable(out)) return this.finishTransform(scope, v.name, name, current, context, declaration, rule, hooks, i, out);
      if (out !== null && out !== undefined) current = out as V;
    }
    return current;
  }

  private async finishTransform<V>(scope: string, vocabulary: string, name: string, value: V, context: unknown, declaration: HookDeclaration, rule: TransformErrorRule, hooks: readonly RegisteredBusHook[], i: number, first: PromiseLike<unknown>): Promise<V> {
    let current = value;
    for (let j = i; j < hooks.length; j++) {
      const hook = hooks[j]!;
      if (j > i && (hook.type !== name || !this.matches(hook, declaration, current, context))) continue;
      let out: unknown;
      try {
        out = j === i ? first : hook.handler(current, context);
        if (isThenable(out)) out = await boundedHandler(out, hook, this.handlerTimeoutMs);
      } catch (err) {
        this.transformFailed(scope, vocabulary, hook, err, rule);
        continue;
      }
      if (out !== null && out !== undefined) current = out as V;
    }
    return current;
  }

  /** Applies the transform error rule: returns (keep: logged, go on) or rethrows the handler's error (propagate). */
  private transformFailed(scope: string, vocabulary: string, hook: RegisteredBusHook, err: unknown, rule: TransformErrorRule): void {
    const decided = typeof rule === 'function' ? rule(err) : rule;
    if (decided === 'propagate') throw err;
    this.failed(scope, vocabulary, hook, err, 'transform handler failed; the value it was given is kept');
  }

  /**
   * Walks the matching handlers of a control hook, in order, as the webhook
   * controls are walked (control-step.ts): allow (or nothing) checks the next
   * one, the first deny stops with `blocked` / `hook_denied`; a handler that
   * throws, times out or returns something else follows its `onError`
   * (`continue`, fail open, by default; `block` stops with
   * `hook_control_error`); an aborted `signal` gives `cancelled`. Without a
   * deny the verdict is `allow`. Lifecycle `beforeToolCall` / `afterToolCall`:
   * HookDispatcher's control evaluation (webhook controls).
   */
  decide(scope: string, vocabulary: string, name: string, event: unknown, options?: { signal?: AbortSignal; context?: unknown }): ControlVerdict | Promise<ControlVerdict> {
    const v = this.vocabulary(vocabulary);
    const declaration = this.declared(v, name, 'control');
    const signal = options?.signal;
    if (v === LIFECYCLE_VOCABULARY) {
      return name === 'beforeToolCall'
        ? this.lifecycle.evaluateToolCall(scope, event as ToolCallHookContext, signal)
        : this.lifecycle.evaluateAfterToolCall(scope, event as AfterToolCallEvent, signal);
    }
    return this.walkControls(scope, v.name, name, event, options?.context, declaration, signal);
  }

  private async walkControls(scope: string, vocabulary: string, name: string, event: unknown, context: unknown, declaration: HookDeclaration, signal: AbortSignal | undefined): Promise<ControlVerdict> {
    for (const hook of this.hooksOf(vocabulary, scope, name)) {
      if (hook.type !== name || !this.matches(hook, declaration, event, context)) continue;
      if (signal?.aborted) return { decision: 'cancelled' };
      let outcome: ControlOutcome;
      try {
        let answer = hook.handler(event, context);
        if (isThenable(answer)) answer = await boundedHandler(answer, hook, this.handlerTimeoutMs);
        outcome = signal?.aborted ? { kind: 'cancelled' } : verdictOutcome(answer);
      } catch (err) {
        outcome = signal?.aborted ? { kind: 'cancelled' } : { kind: 'error', reason: errorMessage(err) };
      }
      if (outcome.kind === 'error') {
        this.logger.warn('control handler failed', { scope, vocabulary, hookId: hook.id, hookType: hook.type, reason: outcome.reason, onError: hook.onError });
      }
      const step = controlStep({ id: hook.id, webhook: { onError: hook.onError } }, outcome);
      if (!step.next) return step.verdict;
    }
    return { decision: 'allow' };
  }

  private scopes(vocabulary: string): Map<string, ScopeHooks> {
    let byScope = this.registrations.get(vocabulary);
    if (!byScope) this.registrations.set(vocabulary, (byScope = new Map()));
    return byScope;
  }

  /** The scope's hooks of the vocabulary in registration order: all of them, or those of hook `name`. */
  private hooksOf(vocabulary: string, scope: string, name?: string): readonly RegisteredBusHook[] {
    const hooks = this.registrations.get(vocabulary)?.get(scope);
    if (hooks === undefined) return NO_HOOKS;
    return name === undefined ? hooks.all : (hooks.byName.get(name) ?? NO_HOOKS);
  }

  /** The declaration of `name`; HOOK_INVALID for a name the vocabulary lacks, or one of another kind than `kind`. */
  private declared(vocabulary: HookVocabulary, name: string, kind?: HookKind): HookDeclaration {
    let byName = this.declarations.get(vocabulary);
    if (byName === undefined) this.declarations.set(vocabulary, (byName = new Map(vocabulary.names.map((n) => [n, vocabulary.hooks[n]!]))));
    const declaration = byName.get(name);
    if (declaration === undefined) throw new HookgateError('HOOK_INVALID', unknownHookMessage(vocabulary, name), { details: { vocabulary: vocabulary.name, hookType: name } });
    if (kind !== undefined && declaration.kind !== kind) {
      throw new HookgateError('HOOK_INVALID', `${name} is ${withArticle(declaration.kind)} hook of the ${vocabulary.name} vocabulary, not ${withArticle(kind)} hook`, { details: { vocabulary: vocabulary.name, hookType: name } });
    }
    return declaration;
  }

  private matches(hook: RegisteredBusHook, declaration: HookDeclaration, input: unknown, context: unknown): boolean {
    return hook.matcher.matchesAll || hook.matcher.testSubject(declaration.matchOn!(input, context));
  }

  private failed(scope: string, vocabulary: string, hook: RegisteredBusHook, err: unknown, message: string): void {
    const prefix = this.known.get(vocabulary)?.logPrefix;
    this.logger.error(prefix === undefined ? message : `${prefix} ${message}`, { scope, vocabulary, hookId: hook.id, hookType: hook.type, error: errorMessage(err) });
  }
}

/** A control handler's answer as a control outcome: nothing or allow is allow, a deny needs a non-empty reason, anything else is an error. */
function verdictOutcome(answer: unknown): ControlOutcome {
  if (answer === null || answer === undefined) return { kind: 'allow' };
  const a = answer as { decision?: unknown; reason?: unknown };
  if (a.decision === 'allow') return { kind: 'allow' };
  if (a.decision === 'deny' && typeof a.reason === 'string' && a.reason.trim() !== '') return { kind: 'deny', reason: a.reason };
  return { kind: 'error', reason: 'the handler returned no verdict: expected nothing, { decision: "allow" } or { decision: "deny", reason }' };
}

function withArticle(kind: HookKind): string {
  return kind === 'observe' ? 'an observe' : `a ${kind}`;
}
