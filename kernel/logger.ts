import { nowIso } from './clock.js';
/**
 * Structured logging. Every line passes through the secret scrubber first, so a
 * resolved header value or token never reaches a log even when a caller puts
 * it in a message by mistake.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

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

/** Values that must never be written anywhere: resolved secrets register here. */
export class SecretScrubber {
  private readonly values = new Set<string>();

  add(value: string): void {
    // Very short values would blank out ordinary words; they are not plausible secrets.
    if (value.length >= 4) this.values.add(value);
  }

  scrub(text: string): string {
    let out = text;
    for (const v of this.values) if (out.includes(v)) out = out.split(v).join('[redacted]');
    return out;
  }

  get size(): number {
    return this.values.size;
  }
}

export type LogSink = (line: string, record: LogRecord) => void;

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
