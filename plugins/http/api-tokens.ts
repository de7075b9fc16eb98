import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A configured API token: its name and the SHA-256 of the token (hex). The token itself is never kept. */
export interface ApiTokenEntry {
  name: string;
  sha256: string;
}

/** The SHA-256 of a token, as the config's `serve.tokens[].sha256` keeps it. */
export function hashApiToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A fresh random API token (`hg_` + 32 random bytes, base64url) to hand an operator once. */
export function mintApiToken(): string {
  return `hg_${randomBytes(32).toString('base64url')}`;
}

/**
 * Checks bearer tokens against the configured hashes: the presented token
 * is hashed, and its digest compared with every entry with
 * `timingSafeEqual` (no early exit), so neither the time taken nor the
 * answer says which entry or how much of one matched. Returns the matching
 * entry's name, else undefined. The token is never stored or logged.
 */
export class ApiTokenCheck {
  private readonly digests: ReadonlyArray<{ name: string; digest: Buffer }>;

  constructor(entries: readonly ApiTokenEntry[]) {
    this.digests = entries.map((e) => ({ name: e.name, digest: Buffer.from(e.sha256, 'hex') }));
  }

  /** Whether any token is configured (without one, the server runs in dev mode on loopback). */
  get configured(): boolean {
    return this.digests.length > 0;
  }

  /** The name of the entry the `Authorization: Bearer <token>` header matches, else undefined. */
  match(authorization: string | undefined): string | undefined {
    const token = /^Bearer ([\x21-\x7e]{1,512})$/.exec(authorization ?? '')?.[1];
    // A missing or malformed header is hashed too, so it takes as long as a wrong token.
    const presented = createHash('sha256').update(token ?? '', 'utf8').digest();
    let found: string | undefined;
    for (const entry of this.digests) {
      if (timingSafeEqual(presented, entry.digest) && token !== undefined) found ??= entry.name;
    }
    return found;
  }
}

/** Whether a listen host is a loopback address (the only place dev mode, with no tokens, may listen). */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}
