import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { errorMessage, HookgateError } from '../../kernel/errors.js';
import { RETRY_BEYOND_DEADLINE_HEADER } from '../../kernel/model-call-deadline.js';
import { scrubSecret as scrub } from '../../kernel/model-sdk-logger.js';

const MAX_MESSAGE_LENGTH = 500;

/** What an SDK failure is mapped with: where the call went, the key to cut out, the retry budget. */
export interface SdkErrorContext {
  endpoint: string;
  apiKey: string;
  maxRetries: number;
  timeoutSeconds: number;
}

/**
 * The HookgateError for anything the `openai` SDK threw once its own retries
 * were spent: MODEL_FAILED with the status and the server's `error.message`
 * for an HTTP error (retryable ones say how often they were retried), the
 * endpoint for a network failure, the timeout for the SDK's per-attempt
 * timeout, the error event's message for an error inside the stream. The key
 * is cut out of every text (servers echo it back), and the SDK error is not
 * kept as `cause`: it holds response headers and bodies that logs would print.
 */
export function fromSdkError(err: unknown, ctx: SdkErrorContext): HookgateError {
  if (err instanceof HookgateError) return err;
  if (err instanceof APIConnectionTimeoutError) return timeoutError(ctx.timeoutSeconds);
  if (err instanceof APIConnectionError) {
    const cause = err.cause !== undefined ? `: ${errorMessage(err.cause)}${causeOf(err.cause)}` : '';
    return new HookgateError('MODEL_FAILED', `cannot get an answer from ${ctx.endpoint}: ${scrub(`${err.message}${cause}`, ctx.apiKey)}${retriedNote(ctx)}`, {
      details: { endpoint: ctx.endpoint, retries: ctx.maxRetries },
    });
  }
  if (err instanceof APIError) {
    const serverMessage = clip(scrub(serverText(err), ctx.apiKey));
    if (err.status === undefined) {
      return new HookgateError('MODEL_FAILED', `the model stream reported an error: ${serverMessage}`, { details: { serverMessage } });
    }
    const calledOff = err.headers?.get(RETRY_BEYOND_DEADLINE_HEADER) ?? undefined;
    const retryable = isRetryableStatus(err.status) && calledOff === undefined;
    const retryAfter = err.headers?.get('retry-after') ?? undefined;
    const message = `the model endpoint answered ${err.status}${serverMessage ? `: ${serverMessage}` : ''}${retryable ? retriedNote(ctx) : ''}${calledOff ? ` (${calledOff})` : ''}`;
    return new HookgateError('MODEL_FAILED', message, {
      details: { status: err.status, ...(serverMessage ? { serverMessage } : {}), ...(retryable ? { retries: ctx.maxRetries } : {}), ...(retryAfter ? { retryAfter } : {}) },
    });
  }
  if (err instanceof SyntaxError) {
    return new HookgateError('MODEL_FAILED', 'the model stream sent an event that is not JSON');
  }
  return new HookgateError('MODEL_FAILED', `the model call to ${ctx.endpoint} failed: ${scrub(errorMessage(err), ctx.apiKey)}`, { details: { endpoint: ctx.endpoint } });
}

/** MODEL_FAILED for a call that gave no complete answer within its deadline. */
export function timeoutError(timeoutSeconds: number): HookgateError {
  return new HookgateError('MODEL_FAILED', `the model endpoint gave no complete answer within ${timeoutSeconds}s (models.openai.timeoutSeconds)`, {
    details: { timeoutSeconds },
  });
}

/** The statuses the SDK retries (absent an `x-should-retry` header): 408, 409, 429 and 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** The server's own words: `error.message` of the body, else the SDK's text without its status prefix. */
function serverText(err: APIError): string {
  const body = err.error as { message?: unknown } | undefined;
  if (body && typeof body.message === 'string') return body.message;
  const text = err.message.replace(/^\d{3} /, '');
  return text === 'status code (no body)' ? '' : text;
}

function retriedNote(ctx: SdkErrorContext): string {
  return ctx.maxRetries > 0 ? ` (retried up to ${ctx.maxRetries} times; models.openai.maxRetries)` : '';
}

function causeOf(err: unknown): string {
  return err instanceof Error && err.cause !== undefined ? `: ${errorMessage(err.cause)}` : '';
}

function clip(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > MAX_MESSAGE_LENGTH ? `${trimmed.slice(0, MAX_MESSAGE_LENGTH)}…` : trimmed;
}
