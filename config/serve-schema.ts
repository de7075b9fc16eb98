import path from 'node:path';
import * as v from 'valibot';

/** Where `hookgate serve` listens by default: loopback only, so dev mode (no tokens) needs no flag. */
export const DEFAULT_SERVE_HOST = '127.0.0.1';
export const DEFAULT_SERVE_PORT = 8787;
export const DEFAULT_SSE_HEARTBEAT_MS = 15_000;

const portLike = v.pipe(
  v.union([v.number(), v.pipe(v.string(), v.regex(/^\d+$/, 'expected a port number'), v.transform(Number))]),
  v.check((n) => Number.isInteger(n) && n >= 0 && n <= 65_535, 'expected a port from 0 to 65535'),
);

const msLike = v.pipe(
  v.union([v.number(), v.pipe(v.string(), v.regex(/^\d+$/, 'expected milliseconds'), v.transform(Number))]),
  v.check((n) => Number.isInteger(n) && n >= 10 && n <= 600_000, 'expected a whole number from 10 to 600,000 (milliseconds)'),
);

/** One API token as the config keeps it: a name (for logs) and the SHA-256 of the token, never the token itself. */
const TokenSchema = v.strictObject({
  name: v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'expected a token name of letters, digits, "_", "." and "-"')),
  sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, 'expected the token\'s SHA-256 as 64 lowercase hex digits (hookgate serve token prints it)')),
});

/**
 * `serve:` in hookgate.config.yaml: what `hookgate serve` listens on, which
 * agent modules it mounts (paths relative to the config file's folder) and
 * the API tokens it accepts (hashed).
 */
export const ServeSchema = v.strictObject({
  host: v.optional(v.pipe(v.string(), v.minLength(1, 'expected a host name or address'))),
  port: v.optional(portLike),
  agents: v.optional(v.array(v.pipe(v.string(), v.minLength(1, 'expected a module path')))),
  tokens: v.optional(v.array(TokenSchema)),
  heartbeatMs: v.optional(msLike),
});

/** The `serve` section with its defaults. */
export interface ServeConfig {
  host: string;
  port: number;
  /** Agent module files, absolute. */
  agents: readonly string[];
  tokens: ReadonlyArray<{ name: string; sha256: string }>;
  heartbeatMs: number;
}

/** Defaults: loopback, port 8787, no agents, no tokens (dev mode), 15 s heartbeats. */
export function serveConfig(parsed: v.InferOutput<typeof ServeSchema> | undefined, baseDir: string): ServeConfig {
  return {
    host: parsed?.host ?? DEFAULT_SERVE_HOST,
    port: parsed?.port ?? DEFAULT_SERVE_PORT,
    agents: (parsed?.agents ?? []).map((file) => path.resolve(baseDir, file)),
    tokens: parsed?.tokens ?? [],
    heartbeatMs: parsed?.heartbeatMs ?? DEFAULT_SSE_HEARTBEAT_MS,
  };
}
