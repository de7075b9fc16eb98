import { errorMessage } from './errors.js';
import type { Logger } from './logger.js';

/** The logger shape the official model SDKs (`openai`, `@anthropic-ai/sdk`) call: a message and any values. */
export interface SdkLogger {
  error(message: string, ...rest: unknown[]): void;
  warn(message: string, ...rest: unknown[]): void;
  info(message: string, ...rest: unknown[]): void;
  debug(message: string, ...rest: unknown[]): void;
}

/** Removes every occurrence of `secret` from text meant for errors or logs. Pure. */
export function scrubSecret(text: string, secret: string): string {
  return secret.length > 0 ? text.split(secret).join('[redacted]') : text;
}

/**
 * Routes an SDK's log lines to hookgate's logger as `<label>: <message>`, with
 * the key cut out of every text (the SDKs redact auth headers themselves;
 * this covers bodies that echo a key), and to nowhere without a logger.
 * Synchronous; never throws.
 */
export function sdkLoggerFor(logger: Logger | undefined, apiKey: string, label: string): SdkLogger {
  const forward = (level: 'error' | 'warn' | 'info' | 'debug') => (message: string, ...rest: unknown[]) => {
    if (!logger) return;
    try {
      const extra = rest.map((r) => (typeof r === 'string' ? r : safeJson(r))).join(' ');
      logger[level](`${label}: ${scrubSecret(String(message), apiKey)}`, extra ? { sdk: scrubSecret(extra, apiKey).slice(0, 2000) } : undefined);
    } catch {
      // A log line never breaks a model call.
    }
  };
  return { error: forward('error'), warn: forward('warn'), info: forward('info'), debug: forward('debug') };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch (err) {
    return `(unprintable: ${errorMessage(err)})`;
  }
}
