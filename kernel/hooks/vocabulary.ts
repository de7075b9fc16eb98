import { HookgateError } from '../errors.js';

/**
 * What a hook of a vocabulary does with its handlers:
 * - `observe`: each handler is told, in registration order; its return value
 *   is ignored, and one that throws (or times out) is logged while the
 *   others still run.
 * - `transform`: a value passes through the handlers in registration order;
 *   each gets what the previous one returned, and `null` / `undefined` keeps
 *   the value it was given. A handler that throws follows the hook's
 *   {@link TransformErrorRule}.
 * - `control`: handlers give verdicts (allow, or deny with a reason); the
 *   first deny stops the walk. A handler that throws follows the
 *   registration's (else the hook's) {@link ControlErrorRule}.
 */
export type HookKind = 'observe' | 'transform' | 'control';

/**
 * What a transform does when one of its handlers throws (or times out):
 * - `keep`: the error is logged, the value stays the last good one (what the
 *   handler was given), and the chain goes on with the next handler
 *   (document 003: "execution continues with the last successful result");
 * - `propagate`: the chain stops (later handlers do not run) and the
 *   handler's own error reaches the caller unchanged (document 003's
 *   `before_create_message` on `injectMessage()`: the write is prevented);
 * - a function: asked for each error (document 003's `block: true` errors
 *   of `prefilter_llm_history` propagate, others are kept).
 * A call can override the hook's rule (`transform(..., { onError })`): in
 * document 003 one hook propagates for some writes and keeps for others.
 */
export type TransformErrorRule = 'keep' | 'propagate' | ((error: unknown) => 'keep' | 'propagate');

/**
 * What a control does when a handler throws, times out or returns something
 * that is not a verdict, as webhook controls do today: `continue` (fail open,
 * the default, as `webhook.onError`) checks the next control; `block` (fail
 * closed) denies with `hook_control_error`.
 */
export type ControlErrorRule = 'continue' | 'block';

/** One hook of a vocabulary. */
export interface HookDeclaration {
  readonly kind: HookKind;
  /**
   * When set, a registration may carry a `matcher` (an re2 regex, as on the
   * tool hooks), tested against what this returns for a call (`undefined`
   * matches no matcher). Without it a matcher is refused at registration.
   * Gets the observed event, the transformed value, or the control's event,
   * and the call's context (transform only).
   */
  readonly matchOn?: (input: unknown, context: unknown) => string | undefined;
  /** `transform`: the rule for a handler that throws (default `keep`); `control`: the default rule (default `continue`). Not on `observe`. */
  readonly onError?: TransformErrorRule | ControlErrorRule;
  /** One line for error messages and docs. */
  readonly description?: string;
}

/** A named, closed set of hooks: the bus rejects any other name for it. */
export interface HookVocabulary<Name extends string = string> {
  readonly name: string;
  /** Hook names in declaration order. */
  readonly names: readonly Name[];
  readonly hooks: Readonly<Record<Name, HookDeclaration>>;
  /** Put before the bus's log line for a handler that failed (document 003 logs `[Hooks] ✗ ...`). */
  readonly logPrefix?: string;
}

/** What a vocabulary declares besides its hooks. */
export interface HookVocabularyOptions {
  /** Put before the bus's log line for a handler that failed. */
  readonly logPrefix?: string;
}

const KINDS: readonly HookKind[] = ['observe', 'transform', 'control'];
const NAME = /^[A-Za-z][A-Za-z0-9_.-]*$/;

/**
 * Declares a vocabulary: validates every declaration and returns a frozen
 * vocabulary (its names in the order given). Throws HOOK_INVALID naming the
 * vocabulary and the hook for a bad name, an unknown kind or key, a
 * `matchOn` that is not a function, or an `onError` the kind does not take.
 */
export function defineHookVocabulary<const H extends Record<string, HookDeclaration>>(name: string, hooks: H, options?: HookVocabularyOptions): HookVocabulary<Extract<keyof H, string>> {
  if (typeof name !== 'string' || !NAME.test(name)) throw invalid(`vocabulary ${JSON.stringify(name)}`, 'a vocabulary name is a word of letters, digits, "_", "-" or "." starting with a letter');
  if (typeof hooks !== 'object' || hooks === null || Array.isArray(hooks)) throw invalid(`vocabulary "${name}"`, 'expected an object of hook declarations');
  const names = Object.keys(hooks) as Array<Extract<keyof H, string>>;
  if (names.length === 0) throw invalid(`vocabulary "${name}"`, 'declares no hooks');
  const out: Record<string, HookDeclaration> = {};
  for (const hook of names) {
    const at = `vocabulary "${name}" hook ${JSON.stringify(hook)}`;
    if (!NAME.test(hook)) throw invalid(at, 'a hook name is a word of letters, digits, "_", "-" or "." starting with a letter');
    const d = hooks[hook] as unknown;
    if (typeof d !== 'object' || d === null || Array.isArray(d)) throw invalid(at, 'expected a declaration object');
    const decl = d as Record<string, unknown>;
    for (const key of Object.keys(decl)) {
      if (!['kind', 'matchOn', 'onError', 'description'].includes(key)) throw invalid(`${at}.${key}`, 'unknown key');
    }
    if (!KINDS.includes(decl.kind as HookKind)) throw invalid(`${at}.kind`, `expected one of ${KINDS.join(', ')}, got ${JSON.stringify(decl.kind)}`);
    const kind = decl.kind as HookKind;
    if (decl.matchOn !== undefined && typeof decl.matchOn !== 'function') throw invalid(`${at}.matchOn`, 'expected a function');
    if (decl.description !== undefined && typeof decl.description !== 'string') throw invalid(`${at}.description`, 'expected a string');
    if (decl.onError !== undefined) {
      const ok =
        kind === 'transform' ? decl.onError === 'keep' || decl.onError === 'propagate' || typeof decl.onError === 'function'
        : kind === 'control' ? decl.onError === 'continue' || decl.onError === 'block'
        : false;
      if (!ok) {
        const allowed = kind === 'transform' ? '"keep", "propagate" or a function' : kind === 'control' ? '"continue" or "block"' : 'nothing: an observe handler that throws is logged and the others run';
        throw invalid(`${at}.onError`, `${kind === 'observe' ? 'an' : 'a'} ${kind} hook takes ${allowed}`);
      }
    }
    out[hook] = Object.freeze({ ...(decl as unknown as HookDeclaration) });
  }
  if (options?.logPrefix !== undefined && typeof options.logPrefix !== 'string') throw invalid(`vocabulary "${name}" logPrefix`, 'expected a string');
  return Object.freeze({
    name,
    names: Object.freeze(names),
    hooks: Object.freeze(out) as Readonly<Record<Extract<keyof H, string>, HookDeclaration>>,
    ...(options?.logPrefix !== undefined ? { logPrefix: options.logPrefix } : {}),
  });
}

/** Whether `name` is a hook of `vocabulary`. */
export function declaresHook<N extends string>(vocabulary: HookVocabulary<N>, name: unknown): name is N {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(vocabulary.hooks, name);
}

/**
 * The message for a name the vocabulary does not declare: the name, the
 * vocabulary, the closest declared name when one is close (case and small
 * typos), and every name it has.
 */
export function unknownHookMessage(vocabulary: HookVocabulary, name: unknown): string {
  const guess = typeof name === 'string' ? closestName(name, vocabulary.names) : undefined;
  return (
    `unknown hook type ${JSON.stringify(name)}: not a hook of the ${vocabulary.name} vocabulary` +
    (guess !== undefined ? ` (did you mean "${guess}"?)` : '') +
    `; its hooks: ${vocabulary.names.join(', ')}`
  );
}

/** The declared names that accept a matcher, in declaration order. */
export function matcherHooks(vocabulary: HookVocabulary): string[] {
  return vocabulary.names.filter((n) => vocabulary.hooks[n]!.matchOn !== undefined);
}

/** The declared name closest to `name` (case-insensitive edit distance at most a third of its length, at least 2), if any. */
function closestName(name: string, names: readonly string[]): string | undefined {
  const wanted = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of names) {
    const d = editDistance(wanted, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

function invalid(where: string, what: string): HookgateError {
  return new HookgateError('HOOK_INVALID', `${where}: ${what}`, { details: { where } });
}
