let lastMs = -1;
let lastIso = '';

/**
 * The current time as an ISO string. Formatting a Date costs more than the
 * rest of a step's bookkeeping, and many events share one millisecond, so the
 * string is reused within the same millisecond.
 */
export function nowIso(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}
