import { errorMessage, HookgateError } from './errors.js';
import { RETRY_BEYOND_DEADLINE_HEADER } from './model-call-deadline.js';
import { scrubSecret } from './model-sdk-logger.js';

const MAX_MESSAGE_LENGTH = 500;

/**
 * What a hosted model provider's SDK failure is mapped with: where the call
 * went, the key to cut out of every text, the retry budget and deadline, and
 * the provider's config section (`models.openai`) that errors point at.
 */
export interface SdkErrorContext {
  endpoint: string;
  apiKey: string;
  maxRetries: number;
  timeoutSeconds: number;
  configKey: string;
}

/** An HTTP error answer as the SDKs expose it: status, headers, the server's own words and its error type. */
export interface SdkHttpFailure {
  /** Undefined for an error event inside a stream. */
  status: number | undefined;
  headers: { get(name: string): string | null } | undefined;
  serverText: string;
  errorType?: string;
}

/**
 * The MODEL_FAILED errors both official SDKs' failures map to, once their own
 * retries were spent (each provider plugin does its SDK's `instanceof`
 * checks and calls these): never the SDK error as `cause` (it holds response
 * headers and bodies that logs would print), the key cut out of every text.
 */
export const sdkErrors = {
  /** A network failure before an answer: the endpoint and the cause chain. */
  connection(message: string, cause: unknown, ctx: SdkErrorContext): HookgateError {
    const chain = cause !== undefined ? `: ${errorMessage(cause)}${cause instanceof Error && cause.cause !== undefined ? `: ${errorMessage(cause.cause)}` : ''}` : '';
    return new HookgateError('MODEL_FAILED', `cannot get an answer from ${ctx.endpoint}: ${scrubSecret(`${message}${chain}`, ctx.apiKey)}${retriedNote(ctx)}`, {
      details: { endpoint: ctx.endpoint, retries: ctx.maxRetries },
    });
  },

  /** An HTTP error answer (retryable ones say how often they were retried), or an error event inside a stream. */
  http(failure: SdkHttpFailure, ctx: SdkErrorContext): HookgateError {
    const serverMessage = clip(scrubSecret(failure.serverText, ctx.apiKey));
    const { errorType } = failure;
    const typeNote = errorType ? ` (${errorType})` : '';
    if (failure.status === undefined) {
      return new HookgateError('MODEL_FAILED', `the model stream reported an error${typeNote}: ${serverMessage}`, { details: { ...(errorType ? { errorType } : {}), serverMessage } });
    }
    const calledOff = failure.headers?.get(RETRY_BEYOND_DEADLINE_HEADER) ?? undefined;
    const retryable = isRetryableStatus(failure.status) && calledOff === undefined;
    const retryAfter = failure.headers?.get('retry-after') ?? undefined;
    const message = `the model endpoint answered ${failure.status}${typeNote}${serverMessage ? `: ${serverMessage}` : ''}${retryable ? retriedNote(ctx) : ''}${calledOff ? ` (${calledOff})` : ''}`;
    return new HookgateError('MODEL_FAILED', message, {
      details: {
        status: failure.status,
        ...(errorType ? { errorType } : {}),
        ...(serverMessage ? { serverMessage } : {}),
        ...(retryable ? { retries: ctx.maxRetries } : {}),
        ...(retryAfter ? { retryAfter } : {}),
      },
    });
  },

  /** A stream event that is not JSON. */
  malformedStream(): HookgateError {
    return new HookgateError('MODEL_FAILED', 'the model stream sent an event that is not JSON');
  },

  /** Anything else the call threw. */
  other(err: unknown, ctx: SdkErrorContext): HookgateError {
    return new HookgateError('MODEL_FAILED', `the model call to ${ctx.endpoint} failed: ${scrubSecret(errorMessage(err), ctx.apiKey)}`, { details: { endpoint: ctx.endpoint } });
  },

  /** A call that gave no complete answer within its deadline. */
  timeout(timeoutSeconds: number, configKey: string): HookgateError {
    return new HookgateError('MODEL_FAILED', `the model endpoint gave no complete answer within ${timeoutSeconds}s (${configKey}.timeoutSeconds)`, { details: { timeoutSeconds } });
  },
};

/** The statuses the SDKs retry (absent an `x-should-retry` header): 408, 409, 429 and 5xx (Anthropic's 529 overloaded included). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** The server's words without the SDK's status prefix (`429 ...`); '' for the SDK's "no body" placeholder. */
export function withoutStatusPrefix(text: string): string {
  const stripped = text.replace(/^\d{3} /, '');
  return stripped === 'status code (no body)' ? '' : stripped;
}

function retriedNote(ctx: SdkErrorContext): string {
  return ctx.maxRetries > 0 ? ` (retried up to ${ctx.maxRetries} times; ${ctx.configKey}.maxRetries)` : '';
}

function clip(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > MAX_MESSAGE_LENGTH ? `${trimmed.slice(0, MAX_MESSAGE_LENGTH)}…` : trimmed;
}
