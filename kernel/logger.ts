import { nowIso } from './clock.js';
/**
 * Structured logging. Every line passes through the secret scrubber first, so a
 * resolved header value or token never reaches a log even when a caller puts
 * it in a message by mistake.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** One structured log line, after secrets were scrubbed. */
export interface LogRecord {
  level: Exclude<LogLevel, 'silent'>;
  msg: string;
  time: string;
  [field: string]: unknown;
}

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(bindings: Record<string, unknown>): Logger;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** What a scrubbed secret is replaced with. */
export const REDACTED = '[redacted]';

/** Shorter values are not plausible secrets and would blank out ordinary words. */
const MIN_SECRET_LENGTH = 4;

/**
 * Values that must never be written anywhere: resolved secrets register here.
 *
 * `scrub` replaces each registered value, and the spellings a receiver or a
 * tool is likely to echo it in, with `[redacted]`: the value itself, its
 * JSON-escaped and percent-encoded forms, lower- and upper-case hex, and
 * base64 / base64url at each of the three byte alignments (so the value is
 * caught also inside a longer encoded string such as `base64("Bearer " + value)`).
 * Longer patterns are replaced first. Synchronous; never throws.
 */
export class SecretScrubber {
  private readonly values = new Set<string>();
  private readonly patterns = new Set<string>();
  private ordered: string[] | undefined = [];

  add(value: string): void {
    if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH || this.values.has(value)) return;
    this.values.add(value);
    for (const p of spellingsOf(value)) if (p.length >= MIN_SECRET_LENGTH) this.patterns.add(p);
    this.ordered = undefined;
  }

  scrub(text: string): string {
    if (this.patterns.size === 0) return text;
    this.ordered ??= [...this.patterns].sort((a, b) => b.length - a.length);
    let out = text;
    for (const p of this.ordered) if (out.includes(p)) out = out.split(p).join(REDACTED);
    return out;
  }

  /** How many distinct secret values are registered. */
  get size(): number {
    return this.values.size;
  }
}

/** The value and its common encodings (see {@link SecretScrubber}). */
function spellingsOf(value: string): string[] {
  const raw = Buffer.from(value, 'utf8');
  const hex = raw.toString('hex');
  const out = [value, JSON.stringify(value).slice(1, -1), hex, hex.toUpperCase()];
  try {
    out.push(encodeURIComponent(value));
  } catch {
    // A lone surrogate cannot be percent-encoded; the other spellings still apply.
  }
  for (let offset = 0; offset < 3; offset++) {
    const core = base64Core(raw, offset);
    out.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return out;
}

/**
 * The base64 characters that depend only on `raw` when it starts `offset`
 * bytes (mod 3) into a longer encoded string: characters that mix in bits of
 * the neighbouring bytes are cut off at both ends.
 */
function base64Core(raw: Buffer, offset: number): string {
  const padded = Buffer.concat([Buffer.alloc(offset), raw]);
  let encoded = padded.toString('base64').replace(/=+$/, '');
  if (padded.length % 3 !== 0) encoded = encoded.slice(0, -1);
  return encoded.slice([0, 2, 3][offset]);
}

export type LogSink = (line: string, record: LogRecord) => void;

/** A JSON-lines logger at `level` (default warn) writing to `sink` (default stderr), scrubbing `scrubber`'s secrets. */
export function createLogger(options: { level?: LogLevel; sink?: LogSink; scrubber?: SecretScrubber; bindings?: Record<string, unknown> } = {}): Logger {
  const level = options.level ?? 'info';
  const sink: LogSink = options.sink ?? ((line) => process.stderr.write(line + '\n'));
  const scrubber = options.scrubber ?? new SecretScrubber();
  const bindings = options.bindings ?? {};
  const write = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < RANK[level]) return;
    const record: LogRecord = { level: lvl, time: nowIso(), msg, ...bindings, ...serializeFields(fields) };
    const line = scrubber.scrub(JSON.stringify(record));
    sink(line, JSON.parse(line) as LogRecord);
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (b) => createLogger({ level, sink, scrubber, bindings: { ...bindings, ...b } }),
  };
}

function serializeFields(fields?: Record<string, unknown>): Record<string, unknown> {
  if (!fields) return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    out[k] = v instanceof Error ? { name: v.name, message: v.message, ...('code' in v ? { code: (v as { code: unknown }).code } : {}) } : v;
  }
  return out;
}
