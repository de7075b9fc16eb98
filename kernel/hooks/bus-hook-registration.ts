import { HookgateError } from '../errors.js';
import { compileToolMatcher, type ToolMatcher } from './matcher.js';
import { declaresHook, matcherHooks, unknownHookMessage, type ControlErrorRule, type HookDeclaration, type HookVocabulary } from './vocabulary.js';

/** What a control handler answers: `null` / `undefined` / allow lets the next control decide; deny stops the walk. */
export type BusVerdict = { decision: 'allow' } | { decision: 'deny'; reason: string };

/**
 * A handler of a bus hook. What it gets and what its return means follow the
 * hook's kind: `observe` (event, context; return ignored), `transform`
 * (value, context; returns the next value, `null` / `undefined` keeps it),
 * `control` (event, context; returns a {@link BusVerdict} or nothing).
 */
export type BusHookHandler = (input: never, context: never) => unknown;

/** A hook of a vocabulary other than lifecycle, as a runtime part or a plugin registers it on the bus. */
export interface BusHook {
  /** Unique among the scope's hooks of this vocabulary. */
  id: string;
  /** A name the vocabulary declares. */
  type: string;
  /** An re2 regex on the hook's `matchOn` subject; only on hooks that declare `matchOn`. */
  matcher?: string;
  handler: BusHookHandler;
  /** Control hooks only: what a failing handler does (default: the hook's rule, else `continue`). */
  onError?: ControlErrorRule;
}

/** A validated bus hook (a frozen snapshot: later changes to the caller's object change nothing). */
export interface RegisteredBusHook {
  readonly id: string;
  readonly type: string;
  readonly declaration: HookDeclaration;
  readonly matcher: ToolMatcher;
  readonly handler: (input: unknown, context: unknown) => unknown;
  /** Control hooks: the resolved error rule. */
  readonly onError: ControlErrorRule;
}

const KEYS = new Set(['id', 'type', 'matcher', 'handler', 'onError']);

/**
 * Validates a whole batch for one vocabulary before anything is kept (as
 * snapshotHooks does for lifecycle hooks). Throws HOOK_INVALID naming the
 * hook index, id and field: a type the vocabulary does not declare (with the
 * vocabulary named, a close name and its hooks), an unknown key, a missing
 * handler, a matcher on a hook without `matchOn` or an invalid regex, an
 * `onError` on a hook that is not a control, an id used twice in the batch
 * or already in `takenIds`.
 */
export function snapshotBusHooks(vocabulary: HookVocabulary, hooks: unknown, takenIds?: ReadonlySet<string>): RegisteredBusHook[] {
  if (!Array.isArray(hooks)) throw invalid('hooks', 'expected a list of hooks');
  const ids = new Set<string>();
  return hooks.map((raw, index) => {
    const where = `hooks[${index}]`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid(where, 'expected an object');
    const h = raw as Record<string, unknown>;
    for (const key of Object.keys(h)) if (!KEYS.has(key)) throw invalid(`${where}.${key}`, 'unknown key');
    if (typeof h.id !== 'string' || h.id.trim() === '') throw invalid(`${where}.id`, 'expected a non-empty string');
    const at = `${where} "${h.id}"`;
    if (ids.has(h.id) || takenIds?.has(h.id)) {
      throw invalid(`${at}.id`, `duplicate hook id: ${ids.has(h.id) ? 'an earlier hook of this batch' : `a ${vocabulary.name} hook already registered for this scope`} has it`);
    }
    ids.add(h.id);
    if (!declaresHook(vocabulary, h.type)) throw invalid(`${at}.type`, unknownHookMessage(vocabulary, h.type));
    const declaration = vocabulary.hooks[h.type]!;
    if (typeof h.handler !== 'function') throw invalid(`${at}.handler`, 'expected a function');
    let matcher = compileToolMatcher(undefined);
    if (h.matcher !== undefined) {
      if (typeof h.matcher !== 'string') throw invalid(`${at}.matcher`, 'expected a string');
      if (declaration.matchOn === undefined) {
        const allowed = matcherHooks(vocabulary);
        throw invalid(`${at}.matcher`, `matchers are only allowed on ${allowed.length > 0 ? allowed.join(', ') : 'no hook'} of the ${vocabulary.name} vocabulary, not on ${h.type}`);
      }
      try {
        matcher = compileToolMatcher(h.matcher);
      } catch (err) {
        throw invalid(`${at}.matcher`, (err as Error).message);
      }
    }
    if (h.onError !== undefined) {
      if (declaration.kind !== 'control') throw invalid(`${at}.onError`, `only control hooks take onError; ${h.type} is a ${declaration.kind} hook (its error rule is the vocabulary's)`);
      if (h.onError !== 'continue' && h.onError !== 'block') throw invalid(`${at}.onError`, `expected "continue" or "block", got ${JSON.stringify(h.onError)}`);
    }
    const onError = (h.onError ?? (declaration.kind === 'control' ? declaration.onError : undefined) ?? 'continue') as ControlErrorRule;
    return Object.freeze({ id: h.id, type: h.type, declaration, matcher, handler: h.handler as RegisteredBusHook['handler'], onError });
  });
}

function invalid(where: string, what: string): HookgateError {
  return new HookgateError('HOOK_INVALID', `${where}: ${what}`, { details: { where } });
}
