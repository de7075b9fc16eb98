import type * as SdkModule from '@anthropic-ai/sdk';
import { HookgateError } from '../../kernel/errors.js';
import { sdkErrors, withoutStatusPrefix, type SdkErrorContext } from '../../kernel/model-sdk-errors.js';

/** The SDK once imported: until the first call nothing can have thrown one of its errors. */
let sdk: typeof SdkModule | undefined;

/**
 * The `@anthropic-ai/sdk` SDK, imported at the provider's first call rather than with the
 * plugin: every kernel loads the bundled plugins, most run one provider.
 */
export async function loadSdk(): Promise<typeof SdkModule> {
  return (sdk ??= await import('@anthropic-ai/sdk'));
}

/** Where this provider's errors point (`models.anthropic.maxRetries`, `.timeoutSeconds`). */
export const CONFIG_KEY = 'models.anthropic';

/**
 * The HookgateError for anything `@anthropic-ai/sdk` threw once its own
 * retries were spent, by the kernel's shared mapping
 * (kernel/model-sdk-errors.ts): MODEL_FAILED with the status, the error type
 * and the server's `error.message` for an HTTP error (`{ type: 'error',
 * error: { type, message } }`), the endpoint for a network failure, the
 * timeout for the SDK's per-attempt timeout, the `event: error` payload for
 * an error inside the stream (such as `overloaded_error`). The key is cut out
 * of every text.
 */
export function fromSdkError(err: unknown, ctx: Omit<SdkErrorContext, 'configKey'>): HookgateError {
  const context = { ...ctx, configKey: CONFIG_KEY };
  if (err instanceof HookgateError) return err;
  if (sdk === undefined) return err instanceof SyntaxError ? sdkErrors.malformedStream() : sdkErrors.other(err, context);
  const { APIConnectionError, APIConnectionTimeoutError, APIError } = sdk;
  if (err instanceof APIConnectionTimeoutError) return timeoutError(ctx.timeoutSeconds);
  if (err instanceof APIConnectionError) return sdkErrors.connection(err.message, err.cause, context);
  if (err instanceof APIError) {
    const serverText = typeof err.apiMessage === 'string' ? err.apiMessage : withoutStatusPrefix(err.message);
    return sdkErrors.http({ status: err.status, headers: err.headers, serverText, ...(typeof err.type === 'string' ? { errorType: err.type } : {}) }, context);
  }
  if (err instanceof SyntaxError) return sdkErrors.malformedStream();
  return sdkErrors.other(err, context);
}

/** MODEL_FAILED for a call that gave no complete answer within its deadline. */
export function timeoutError(timeoutSeconds: number): HookgateError {
  return sdkErrors.timeout(timeoutSeconds, CONFIG_KEY);
}
