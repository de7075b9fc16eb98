/**
 * The progress string of a tool call (document 003's `progressArgument`):
 * the value of one top-level string argument, read from the call's arguments
 * text as the model streamed it. Only the first {@link PROGRESS_SCAN_LIMIT}
 * characters are scanned for the argument as it streams; when it completes
 * later (or the text is cut off there), the complete arguments are read
 * once the response has ended. Models of this runtime may hand over the
 * arguments in one piece; the scan is the same over whatever text there is.
 */

/** How many characters of the streamed arguments are scanned for the progress argument. */
export const PROGRESS_SCAN_LIMIT = 8_192;

/** Where the progress value was found: in the scanned window (`streamed`), only in the complete arguments (`complete`), or not at all. */
export interface ProgressScan {
  readonly progress: string | undefined;
  readonly foundIn: 'streamed' | 'complete' | 'none';
}

/**
 * Scans `text` (a JSON object's text, complete or a fragment) for the
 * top-level string property `name`. Synchronous and never throws: a
 * fragment, a malformed text or a non-string value yields `undefined`.
 * Escapes are decoded as JSON decodes them (`\"`, `\n`, `\u00e9`...). A
 * property of the same name nested inside another value is not it.
 */
export function scanProgressArgument(text: string, name: string, limit = PROGRESS_SCAN_LIMIT): ProgressScan {
  const early = scanWindow(text.length > limit ? text.slice(0, limit) : text, name);
  if (early !== undefined) return { progress: early, foundIn: 'streamed' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { progress: undefined, foundIn: 'none' };
  }
  const value = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && Object.prototype.hasOwnProperty.call(parsed, name) ? (parsed as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? { progress: value, foundIn: 'complete' } : { progress: undefined, foundIn: 'none' };
}

/** The value of top-level `name` when its string completes within `text`; undefined otherwise. */
function scanWindow(text: string, name: string): string | undefined {
  let i = skipSpace(text, 0);
  if (text[i] !== '{') return undefined;
  i += 1;
  for (let first = true; ; first = false) {
    i = skipSpace(text, i);
    // Members are separated by one comma: none before the first.
    if (!first) {
      if (text[i] !== ',') return undefined;
      i = skipSpace(text, i + 1);
    }
    if (text[i] !== '"') return undefined;
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0) return undefined;
    const key = decode(text.slice(i, keyEnd));
    i = skipSpace(text, keyEnd);
    if (text[i] !== ':') return undefined;
    i = skipSpace(text, i + 1);
    if (i >= text.length) return undefined;
    if (text[i] === '"') {
      const end = stringEnd(text, i);
      if (end < 0) return undefined;
      // The first occurrence wins here; a duplicate key later would win in JSON.parse, but models do not repeat keys.
      if (key === name) return decode(text.slice(i, end));
      i = end;
    } else {
      if (key === name) return undefined;
      i = valueEnd(text, i);
      if (i < 0) return undefined;
    }
  }
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i += 1;
  return i;
}

/** The index after the closing quote of the string starting at `start`, or -1 when it does not close in `text`. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i += 1) {
    const c = text[i];
    if (c === '\\') i += 1;
    else if (c === '"') return i + 1;
  }
  return -1;
}

/** The index after a non-string value (number, literal, object, array) starting at `start`, or -1 when it does not end in `text`. */
function valueEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i += 1) {
    const c = text[i];
    if (c === '"') {
      i = stringEnd(text, i);
      if (i < 0) return -1;
      i -= 1;
    } else if (c === '{' || c === '[') depth += 1;
    else if (c === '}' || c === ']') {
      if (depth === 0) return i;
      depth -= 1;
      if (depth === 0) return i + 1;
    } else if (depth === 0 && c === ',') return i;
  }
  return -1;
}

/** A JSON string literal's value (escapes as JSON has them); undefined for a malformed one. */
function decode(literal: string): string | undefined {
  try {
    const value: unknown = JSON.parse(literal);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}
