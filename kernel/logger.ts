import { createRequire } from 'node:module';
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

/** Where a log line goes: `line` is the text to write (JSON or pretty), `record` the scrubbed record it shows. */
export type LogSink = (line: string, record: LogRecord) => void;

/** `json`: one JSON object a line (the default). `pretty`: pino-pretty's human-readable lines. */
export type LogFormat = 'json' | 'pretty';

export interface LoggerOptions {
  level?: LogLevel;
  format?: LogFormat;
  /** Colours in `pretty` lines; default: when stderr is a terminal. */
  colorize?: boolean;
  sink?: LogSink;
  scrubber?: SecretScrubber;
  bindings?: Record<string, unknown>;
}

/**
 * A logger. Every record is serialized to JSON and scrubbed of registered
 * secrets before anything else sees it: the `pretty` format is rendered from
 * the scrubbed record, and the sink gets only scrubbed text. Synchronous;
 * the default sink writes to stderr.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const sink: LogSink = options.sink ?? ((line) => process.stderr.write(line + '\n'));
  const scrubber = options.scrubber ?? new SecretScrubber();
  const render = options.format === 'pretty' ? prettyRenderer(options.colorize ?? Boolean(process.stderr.isTTY)) : undefined;
  return buildLogger(level, sink, scrubber, render, options.bindings ?? {});
}

type Render = (record: LogRecord) => string;

function buildLogger(level: LogLevel, sink: LogSink, scrubber: SecretScrubber, render: Render | undefined, bindings: Record<string, unknown>): Logger {
  const write = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < RANK[level]) return;
    const record: LogRecord = { level: lvl, time: nowIso(), msg, ...bindings, ...serializeFields(fields) };
    const json = scrubber.scrub(JSON.stringify(record));
    const scrubbed = JSON.parse(json) as LogRecord;
    sink(render ? render(scrubbed) : json, scrubbed);
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (b) => buildLogger(level, sink, scrubber, render, { ...bindings, ...b }),
  };
}

/** pino's numeric levels, which pino-pretty labels and colours. */
const PINO_LEVEL: Record<LogRecord['level'], number> = { debug: 20, info: 30, warn: 40, error: 50 };

/**
 * pino-pretty's formatter over our records (`[12:00:00.000] ERROR: msg` and
 * one indented line per field). Loaded only when the pretty format is asked
 * for, so JSON logging never pays for it.
 */
function prettyRenderer(colorize: boolean): Render {
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  const pretty = prettyFactory({ colorize, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: false });
  return (record) => pretty({ ...record, level: PINO_LEVEL[record.level], time: Date.parse(record.time) }).replace(/\n$/, '');
}

function serializeFields(fields?: Record<string, unknown>): Record<string, unknown> {
  if (!fields) return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    out[k] = v instanceof Error ? { name: v.name, message: v.message, ...('code' in v ? { code: (v as { code: unknown }).code } : {}) } : v;
  }
  return out;
}
