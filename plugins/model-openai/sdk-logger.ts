import type { Logger } from '../../kernel/logger.js';
import { errorMessage } from '../../kernel/errors.js';
import { scrub } from './sdk-error.js';

/** The logger shape the `openai` SDK calls: a message and any values. */
export interface SdkLogger {
  error(message: string, ...rest: unknown[]): void;
  warn(message: string, ...rest: unknown[]): void;
  info(message: string, ...rest: unknown[]): void;
  debug(message: string, ...rest: unknown[]): void;
}

/**
 * Routes the SDK's log lines to hookgate's logger, with the key cut out of
 * every text (the SDK already redacts auth headers; this covers bodies), and
 * to nowhere without a logger. Never throws.
 */
export function sdkLogger(logger: Logger | undefined, apiKey: string): SdkLogger {
  const forward = (level: 'error' | 'warn' | 'info' | 'debug') => (message: string, ...rest: unknown[]) => {
    if (!logger) return;
    try {
      const extra = rest.map((r) => (typeof r === 'string' ? r : safeJson(r))).join(' ');
      logger[level](`openai sdk: ${scrub(String(message), apiKey)}`, extra ? { sdk: scrub(extra, apiKey).slice(0, 2000) } : undefined);
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
