import { HookgateError } from '../../kernel/errors.js';

const MAX_MESSAGE_LENGTH = 500;

/**
 * The MODEL_FAILED error for a non-2xx answer: the status and the server's
 * `error.message` (or the start of the body when it is not the usual JSON).
 * The API key is cut out of the server's text in case the server echoes it.
 */
export function httpError(status: number, statusText: string, bodyText: string, apiKey: string): HookgateError {
  // Scrub before cutting to length, so no partial key survives the cut.
  const serverMessage = extractMessage(scrub(bodyText, apiKey));
  const message = serverMessage
    ? `the model endpoint answered ${status}: ${serverMessage}`
    : `the model endpoint answered ${status}${statusText ? ` ${statusText}` : ''}`;
  return new HookgateError('MODEL_FAILED', message, { details: { status, ...(serverMessage ? { serverMessage } : {}) } });
}

/** The `error.message` of an OpenAI error body, else the trimmed text. */
export function extractMessage(bodyText: string): string {
  let text = bodyText.trim();
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof parsed.error === 'object' && parsed.error && typeof parsed.error.message === 'string') text = parsed.error.message;
    else if (typeof parsed.error === 'string') text = parsed.error;
    else if (typeof parsed.message === 'string') text = parsed.message;
  } catch {
    // Not JSON: keep the text as it came (a proxy's HTML page, for example).
  }
  return text.length > MAX_MESSAGE_LENGTH ? `${text.slice(0, MAX_MESSAGE_LENGTH)}…` : text;
}

/** Removes every occurrence of the key from text meant for errors or logs. */
export function scrub(text: string, apiKey: string): string {
  return apiKey.length > 0 ? text.split(apiKey).join('[redacted]') : text;
}
