import { ERROR_CATALOG, type ErrorCategory, type ErrorCode } from './error-catalog.js';

/**
 * The one error base class. `code` is stable (see error-catalog.ts), `category`
 * says whose problem it is, `details` carries machine-readable context and never
 * secrets.
 */
export class HookgateError extends Error {
  readonly code: ErrorCode;
  readonly category: ErrorCategory;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HookgateError';
    this.code = code;
    this.category = ERROR_CATALOG[code].category;
    this.details = options.details ?? {};
  }

  toJSON(): Record<string, unknown> {
    return { name: this.name, code: this.code, category: this.category, message: this.message, details: this.details };
  }
}

/** Raised once, after every sibling hook ran, when a `fallback: 'none'` webhook failed. */
export class CriticalHookDeliveryError extends HookgateError {
  readonly hookId: string;
  constructor(hookId: string, cause?: unknown) {
    super('CRITICAL_HOOK_DELIVERY', `Critical webhook delivery failed: ${hookId}`, { cause, details: { hookId } });
    this.name = 'CriticalHookDeliveryError';
    this.hookId = hookId;
  }
}

/** Whether `err` is a HookgateError (with `code`, when given). */
export function isHookgateError(err: unknown, code?: ErrorCode): err is HookgateError {
  return err instanceof HookgateError && (code === undefined || err.code === code);
}

/** A readable message for anything thrown. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}
