import { HookgateError } from '../errors.js';
import { deepFreeze } from '../agent-definition.js';
import { compileToolMatcher, type ToolMatcher } from './matcher.js';
import { isReservedEnvHookId } from './webhook/environment-hooks.js';
import type { HookHandler, HookType, SerializedHook, WebhookConfig } from './hook-types.js';
import { LIFECYCLE_VOCABULARY } from './vocabulary-lifecycle.js';
import { declaresHook, matcherHooks, unknownHookMessage } from './vocabulary.js';

/** The lifecycle hooks that take a matcher, for the message that refuses one elsewhere. */
const MATCHER_HOOKS = matcherHooks(LIFECYCLE_VOCABULARY).join(', ');

/** A validated, snapshotted hook: later changes to the caller's object change nothing. */
export interface RegisteredHook {
  readonly id: string;
  readonly type: HookType;
  readonly matcher: ToolMatcher;
  readonly handler?: HookHandler;
  readonly webhook?: Readonly<WebhookConfig>;
  /** A control answers allow/deny (`responseHandling: 'toolCall'`); controls get no notifications. */
  readonly isControl: boolean;
}

export type WebhookValidator = (type: HookType, raw: unknown, where: string) => WebhookConfig;

/**
 * Validates a whole batch before anything is kept, and returns snapshots.
 * Throws HOOK_INVALID naming the hook index, id and field. Caller hooks with a
 * reserved environment id are dropped (reported through `onDropped`).
 *
 * Refused: a type the lifecycle vocabulary does not declare (the message
 * names the vocabulary, a close name and its hooks), an unknown key, a matcher on a type other than
 * beforeToolCall / afterToolCall / onToolCallError (even `''` or `*`), an
 * invalid regex, a control (`webhook.responseHandling: 'toolCall'`) that also
 * has a handler, and an id used twice in the batch or already in `takenIds`
 * (the operation's registered hooks, when a batch is appended).
 */
export function snapshotHooks(
  hooks: unknown,
  validateWebhook: WebhookValidator | undefined,
  onDropped?: (id: string) => void,
  takenIds?: ReadonlySet<string>,
): RegisteredHook[] {
  if (!Array.isArray(hooks)) throw invalid('hooks', 'expected a list of hooks');
  const out: RegisteredHook[] = [];
  const ids = new Set<string>();
  hooks.forEach((raw, index) => {
    const where = `hooks[${index}]`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid(where, 'expected an object');
    const h = raw as Record<string, unknown>;
    const known = new Set(['id', 'type', 'matcher', 'handler', 'webhook']);
    for (const key of Object.keys(h)) if (!known.has(key)) throw invalid(`${where}.${key}`, 'unknown key');
    if (typeof h.id !== 'string' || h.id.trim() === '') throw invalid(`${where}.id`, 'expected a non-empty string');
    const at = `${where} "${h.id}"`;
    if (ids.has(h.id) || takenIds?.has(h.id)) {
      throw invalid(`${at}.id`, `duplicate hook id: ${ids.has(h.id) ? 'an earlier hook of this batch' : 'a hook already registered for this operation'} has it`);
    }
    ids.add(h.id);
    if (!declaresHook(LIFECYCLE_VOCABULARY, h.type)) throw invalid(`${at}.type`, unknownHookMessage(LIFECYCLE_VOCABULARY, h.type));
    const type = h.type;
    if (h.handler !== undefined && typeof h.handler !== 'function') throw invalid(`${at}.handler`, 'expected a function');
    if (h.handler === undefined && h.webhook === undefined) throw invalid(at, 'a hook needs a handler or a webhook');
    let matcher: ToolMatcher;
    if (h.matcher !== undefined) {
      if (typeof h.matcher !== 'string') throw invalid(`${at}.matcher`, 'expected a string');
      // Even '' and '*' (which match everything) are a matcher on another type.
      if (LIFECYCLE_VOCABULARY.hooks[type].matchOn === undefined) {
        throw invalid(`${at}.matcher`, `matchers are only allowed on ${MATCHER_HOOKS}, not on ${type}`);
      }
      try {
        matcher = compileToolMatcher(h.matcher);
      } catch (err) {
        throw invalid(`${at}.matcher`, (err as Error).message);
      }
    } else {
      matcher = compileToolMatcher(undefined);
    }
    let webhook: WebhookConfig | undefined;
    if (h.webhook !== undefined) {
      if (!validateWebhook) throw invalid(`${at}.webhook`, 'webhook hooks need a webhook transport plugin (transport-fetch) to be enabled');
      webhook = deepFreeze(validateWebhook(type, structuredClone(h.webhook), `${at}.webhook`));
    }
    const isControl = webhook?.responseHandling === 'toolCall';
    if (isControl && h.handler !== undefined) {
      throw invalid(`${at}.handler`, 'a control hook (webhook.responseHandling: "toolCall") cannot also have a handler: its webhook decides, and a handler would never run');
    }
    if (isReservedEnvHookId(h.id)) {
      onDropped?.(h.id);
      return;
    }
    out.push(
      Object.freeze({
        id: h.id,
        type,
        matcher,
        handler: h.handler as HookHandler | undefined,
        webhook,
        isControl,
      }),
    );
  });
  return out;
}

/** What is persisted for an operation: webhook hooks only, templates kept, no functions. */
export function serializeHooks(hooks: readonly RegisteredHook[]): SerializedHook[] {
  return hooks
    .filter((h) => h.webhook !== undefined)
    .map((h) => ({ id: h.id, type: h.type, ...(h.matcher.source !== undefined ? { matcher: h.matcher.source } : {}), webhook: structuredClone(h.webhook!) as WebhookConfig }));
}

/**
 * Restores persisted hooks strictly: anything that does not validate makes
 * the restore fail (HOOK_RESTORE_FAILED), so an operation never runs without
 * its policy.
 */
export function restoreHooks(raw: unknown, validateWebhook: WebhookValidator | undefined, operationId: string): RegisteredHook[] {
  try {
    if (!Array.isArray(raw)) throw new Error('expected a list');
    for (const [i, h] of raw.entries()) {
      if (typeof h !== 'object' || h === null || (h as { webhook?: unknown }).webhook === undefined || 'handler' in h) {
        throw new Error(`hooks[${i}] is not a serialized webhook hook`);
      }
    }
    return snapshotHooks(raw, validateWebhook);
  } catch (err) {
    throw new HookgateError('HOOK_RESTORE_FAILED', `persisted hooks of operation ${operationId} are corrupt: ${(err as Error).message}`, { cause: err, details: { operationId } });
  }
}

function invalid(where: string, what: string): HookgateError {
  return new HookgateError('HOOK_INVALID', `${where}: ${what}`, { details: { where } });
}
