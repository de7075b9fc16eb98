let lastMs = -1;
let lastIso = '';
/** The day `dayPrefix` formats (days since 1970-01-01), and `YYYY-MM-DDT` of it. */
let lastDay = -1;
let dayPrefix = '';

/** 9999-12-31T23:59:59.999Z + 1 ms: up to here an ISO string has a four-digit year. */
const FOUR_DIGIT_YEARS_END = 253402300800000;
const MS_PER_DAY = 86400000;
const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/**
 * The current time as an ISO string. Many events share one millisecond, so
 * the string is reused within the same millisecond; otherwise it is
 * {@link isoString}, which formats the time of day itself (a step of a real
 * model turn never shares a millisecond, and `Date#toISOString` costs more
 * than the rest of a step's bookkeeping).
 */
export function nowIso(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = isoString(ms);
  }
  return lastIso;
}

/**
 * `new Date(ms).toISOString()`, the same string: the date part is formatted
 * once per day, the time of day from the remainder. Outside 1970-9999 (never
 * the clock's reading) it is `toISOString` itself.
 */
export function isoString(ms: number): string {
  if (!(ms >= 0 && ms < FOUR_DIGIT_YEARS_END) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const day = Math.floor(ms / MS_PER_DAY);
  if (day !== lastDay) {
    lastDay = day;
    dayPrefix = `${new Date(day * MS_PER_DAY).toISOString().slice(0, 10)}T`;
  }
  let rest = ms - day * MS_PER_DAY;
  const hours = Math.floor(rest / 3600000);
  rest -= hours * 3600000;
  const minutes = Math.floor(rest / 60000);
  rest -= minutes * 60000;
  const seconds = Math.floor(rest / 1000);
  PARTS[0] = dayPrefix;
  PARTS[1] = TWO_DIGITS[hours]!;
  PARTS[3] = TWO_DIGITS[minutes]!;
  PARTS[5] = TWO_DIGITS[seconds]!;
  PARTS[7] = THREE_DIGITS[rest - seconds * 1000]!;
  // Joined, not concatenated: `+` and template strings make a tree of cons strings, which the store keeps (every
  // record's timestamps) and the scavenger then copies piece by piece; join makes one flat string, as toISOString does.
  return PARTS.join('');
}

/** The pieces of an ISO string: date prefix, hours, minutes, seconds, milliseconds (set by isoString). */
const PARTS: string[] = ['', '00', ':', '00', ':', '00', '.', '000', 'Z'];
