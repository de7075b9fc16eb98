import { LRUCache } from 'lru-cache';
import type { Logger } from '../../logger.js';
import type { UserDirectory } from '../../user-directory.js';

/** Default size and lifetime of the per-builder email cache. */
export const EMAIL_CACHE_SIZE = 1000;
export const EMAIL_CACHE_TTL_MS = 5 * 60 * 1000;

export interface EmailLookupOptions {
  userDirectory?: UserDirectory;
  logger: Logger;
  cacheSize?: number;
  ttlMs?: number;
  /** Clock for TTL tracking (milliseconds; default `performance.now`); specs pass a fake one. */
  now?: () => number;
}

/** Resolves a user's email through a shared cache; see {@link createEmailLookup}. */
export type EmailLookup = (userId: string, options?: { signal?: AbortSignal }) => Promise<string | undefined>;

/**
 * Creates a cached email look-up over a {@link UserDirectory}.
 *
 * The cache holds at most `cacheSize` users (least recently used evicted
 * first). An entry expires exactly `ttlMs` after it was inserted: a read at
 * `ttlMs` (300,000 ms by default) or later looks the user up again; hits do
 * not extend it. The entry is the look-up's promise, so concurrent callers for one
 * user share one directory call, and a "no email" answer is cached like an
 * email. A directory error is logged and treated as
 * "no email".
 *
 * The returned function never rejects. A caller's `signal` makes only that
 * caller resolve `undefined` when it aborts; the shared look-up keeps running
 * and still fills the cache for everyone else. Without a directory every
 * look-up is `undefined` and nothing is cached.
 */
export function createEmailLookup(options: EmailLookupOptions): EmailLookup {
  const { userDirectory, logger } = options;
  const now = options.now ?? (() => performance.now());
  const ttlMs = options.ttlMs ?? EMAIL_CACHE_TTL_MS;
  // Expiry is checked here, not by lru-cache (which keeps an entry until its age exceeds the TTL,
  // one tick too long): an entry inserted at t is gone at exactly t + ttlMs.
  const cache = new LRUCache<string, { pending: Promise<string | undefined>; insertedAt: number }>({
    max: options.cacheSize ?? EMAIL_CACHE_SIZE,
  });

  const read = async (userId: string): Promise<string | undefined> => {
    try {
      const email = await userDirectory!.getEmail(userId);
      return typeof email === 'string' && email !== '' ? email : undefined;
    } catch (err) {
      logger.warn('webhook user email look-up failed; sending without userEmail', { error: err });
      return undefined;
    }
  };

  return (userId, { signal } = {}) => {
    if (signal?.aborted) return Promise.resolve(undefined);
    if (!userDirectory) return Promise.resolve(undefined);
    const at = now();
    let entry = cache.get(userId);
    if (entry !== undefined && at - entry.insertedAt >= ttlMs) {
      cache.delete(userId);
      entry = undefined;
    }
    if (entry === undefined) {
      entry = { pending: read(userId), insertedAt: at };
      cache.set(userId, entry);
    }
    const pending = entry.pending;
    if (!signal) return pending;
    const shared = pending;
    return new Promise<string | undefined>((resolve) => {
      const onAbort = () => resolve(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      void shared.then((email) => {
        signal.removeEventListener('abort', onAbort);
        resolve(email);
      });
    });
  };
}
