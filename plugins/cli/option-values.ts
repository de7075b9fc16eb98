import { InvalidArgumentError, Option } from 'commander';

/**
 * Parsers for numeric and time option values. Each refuses a bad value with
 * what was expected (commander prefixes the option and the value given:
 * `error: option '--limit <n>' argument 'abc' is invalid. expected a whole
 * number from 1 to 10,000`), which the CLI turns into exit 2. Enumerated
 * options use {@link choiceOption}, whose error lists the allowed values.
 */

/** A whole number from `min` to `max` (decimal digits only: no `1e3`, no `0x10`, no blanks). */
export function wholeNumber(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`expected a whole number from ${min.toLocaleString('en-US')} to ${max.toLocaleString('en-US')}`);
    }
    return n;
  };
}

/** A TCP port for a server to listen on: 0 (any free port) to 65535. */
export const portNumber = wholeNumber(0, 65_535);

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * An ISO 8601 date or date-time (`2026-05-01`, `2026-05-01T12:00:00Z`,
 * `2026-05-01T14:00+02:00`), returned as a UTC ISO timestamp; a date alone
 * is its midnight UTC, a time without a zone is local time, as JavaScript
 * reads it.
 */
export function isoTime(value: string): string {
  const text = value.trim();
  const ms = ISO_TIME.test(text) && isCalendarDate(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(ms)) throw new InvalidArgumentError('expected an ISO 8601 time such as 2026-05-01 or 2026-05-01T12:00:00Z');
  return new Date(ms).toISOString();
}

/** Whether the date part names a real day: JavaScript rolls `2026-02-30` over into March instead of refusing it. */
function isCalendarDate(text: string): boolean {
  const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth;
}

/** An option that takes one of `choices`; commander's error names them all. */
export function choiceOption(flags: string, description: string, choices: readonly string[]): Option {
  return new Option(flags, description).choices(choices);
}

/** A comma-separated list whose items are each one of `choices`. */
export function choiceList(choices: readonly string[]): (value: string) => string[] {
  return (value) => {
    const list = value.split(',').map((s) => s.trim()).filter(Boolean);
    if (list.length === 0) throw new InvalidArgumentError(`expected a comma-separated list of ${choices.join(', ')}`);
    const bad = list.find((d) => !choices.includes(d));
    if (bad !== undefined) throw new InvalidArgumentError(`"${bad}" is not one of ${choices.join(', ')}`);
    return list;
  };
}
