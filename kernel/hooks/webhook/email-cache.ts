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
  /** Clock for TTL tracking (milliseconds); specs pass a fake one. Must not return 0. */
  now?: () => number;
}

/** Resolves a user's email through a shared cache; see {@link createEmailLookup}. */
export type EmailLookup = (userId: string, options?: { signal?: AbortSignal }) => Promise<string | undefined>;

/**
 * Creates a cached email look-up over a {@link UserDirectory}.
 *
 * The cache holds at most `cacheSize` users (least recently used evicted
 * first). An entry expires exactly `ttlMs` after it was inserted; hits do not
 * extend it. The entry is the look-up's promise, so concurrent callers for one
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
  const now = options.now;
  const cache = new LRUCache<string, Promise<string | undefined>>({
    max: options.cacheSize ?? EMAIL_CACHE_SIZE,
    ttl: options.ttlMs ?? EMAIL_CACHE_TTL_MS,
    updateAgeOnGet: false,
    updateAgeOnHas: false,
    allowStale: false,
    // Exact expiry: no cached clock reading between checks.
    ttlResolution: 0,
    ...(now ? { perf: { now } } : {}),
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
    let pending = cache.get(userId);
    if (pending === undefined) {
      pending = read(userId);
      cache.set(userId, pending);
    }
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
