import type { Logger } from '../../logger.js';
import type { UserDirectory } from '../../user-directory.js';
import type { HookType, WebhookConfig } from '../hook-types.js';
import { createEmailLookup, EMAIL_CACHE_SIZE, EMAIL_CACHE_TTL_MS } from './email-cache.js';

/** The parts of a hook the payload depends on. */
export interface PayloadHook {
  id: string;
  type: HookType;
  webhook: Pick<WebhookConfig, 'eventFields' | 'body'>;
}

/** `notification`: projection, body and trimmed results; `control`: the whole event, untrimmed. */
export type PayloadMode = 'notification' | 'control';

export type WebhookPayload = Record<string, unknown>;

export interface WebhookPayloadBuilderOptions {
  /** Where `userEmail` comes from; without one no payload has an email. */
  userDirectory?: UserDirectory;
  logger: Logger;
  /** Users kept in the email cache (default 1,000). */
  cacheSize?: number;
  /** Lifetime of a cache entry from insertion, in ms (default 5 minutes). */
  ttlMs?: number;
  /** Clock for the cache's TTL (ms); for specs. */
  now?: () => number;
}

export interface WebhookPayloadBuilder {
  /**
   * Builds the JSON payload of one webhook send; see {@link createWebhookPayloadBuilder}.
   * Resolves `undefined` when `signal` aborted (before or while waiting for the
   * email), so the caller can stop the delivery. Never rejects and never changes `event`.
   */
  build(hook: PayloadHook, event: object, mode: PayloadMode, options?: { signal?: AbortSignal }): Promise<WebhookPayload | undefined>;
}

/**
 * Removes raw skill Work data from a tool result for notification payloads
 * (the reference's `redactResultForEvents`): when the result carries a skill
 * Work registration (`workRegistration.type === 'skill'`), that registration
 * keeps its other fields but gets `data: null` and no `args`. Nothing else is
 * touched: the result's own `data` and `args`, and Work registrations of other
 * types, reach the receiver as they are. Returns a copy when it trims, else
 * the result itself: the in-process result keeps everything.
 */
export function trimResultForNotification(result: unknown): unknown {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return result;
  const work = (result as { workRegistration?: unknown }).workRegistration;
  if (typeof work !== 'object' || work === null || (work as { type?: unknown }).type !== 'skill') return result;
  const { args: _args, ...rest } = work as Record<string, unknown>;
  return { ...result, workRegistration: { ...rest, data: null } };
}

/**
 * Creates the payload builder a dispatcher owns (one per dispatcher: the email
 * cache is per builder).
 *
 * `build` follows these steps:
 * 1. take every event field, or (notifications with `eventFields`) only the
 *    listed fields the event has;
 * 2. add `hookId` and `hookType`, then spread `webhook.body` (notifications
 *    only; the body wins on overlapping keys);
 * 3. afterToolCall notifications get a `result` whose skill Work
 *    registration is trimmed (`data: null`, no `args`; see
 *    {@link trimResultForNotification}); controls get the full result;
 * 4. remove `finalState`, any supplied `userEmail`, and the in-memory `mock`
 *    callback;
 * 5. the effective user id is the payload's `userId` when the payload has that
 *    key, else the event's; for a non-empty string id, and only when there is
 *    no projection or the projection lists `userEmail`, the looked-up email is
 *    added as `userEmail` (a missing email or a look-up error leaves it out).
 *
 * Asynchronous only because of the email look-up (cached, see email-cache.ts).
 */
export function createWebhookPayloadBuilder(options: WebhookPayloadBuilderOptions): WebhookPayloadBuilder {
  const lookup = createEmailLookup({
    userDirectory: options.userDirectory,
    logger: options.logger,
    cacheSize: options.cacheSize ?? EMAIL_CACHE_SIZE,
    ttlMs: options.ttlMs ?? EMAIL_CACHE_TTL_MS,
    now: options.now,
  });

  return {
    async build(hook, event, mode, { signal } = {}) {
      if (signal?.aborted) return undefined;
      const source = event as Record<string, unknown>;
      const eventFields = mode === 'notification' ? hook.webhook.eventFields : undefined;
      const body = mode === 'notification' ? hook.webhook.body : undefined;

      const selected: Record<string, unknown> = {};
      if (eventFields) {
        for (const field of eventFields) if (field in source) selected[field] = source[field];
      } else {
        Object.assign(selected, source);
      }
      const payload: WebhookPayload = { ...selected, hookId: hook.id, hookType: hook.type, ...body };

      if (mode === 'notification' && hook.type === 'afterToolCall' && 'result' in payload) {
        payload.result = trimResultForNotification(payload.result);
      }
      delete payload.finalState;
      delete payload.userEmail;
      if (typeof payload.mock === 'function') delete payload.mock;

      const userId = 'userId' in payload ? payload.userId : source.userId;
      const wantsEmail = !eventFields || eventFields.includes('userEmail');
      if (wantsEmail && typeof userId === 'string' && userId !== '') {
        const email = await lookup(userId, { signal });
        if (signal?.aborted) return undefined;
        if (email !== undefined) payload.userEmail = email;
      }
      return payload;
    },
  };
}
