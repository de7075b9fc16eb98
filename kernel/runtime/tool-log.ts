import { jsonCopy } from '../json-copy.js';
import type { ToolLog, ToolLogLevel } from '../tools.js';
import type { OperationEvents } from './operation-events.js';

/** Characters of a `tool_log` message kept (the rest is cut, `truncated` set). */
export const MAX_TOOL_LOG_MESSAGE = 4096;
/** Characters of a `tool_log` line's attributes as JSON; larger ones are left out (`truncated` set). */
export const MAX_TOOL_LOG_ATTRIBUTES = 4096;
/** Lines one tool call may write; after these one `warn` line says the rest are dropped. */
export const MAX_TOOL_LOG_LINES = 1000;

const LEVELS: ReadonlySet<string> = new Set<ToolLogLevel>(['info', 'warn', 'error']);

/** The call a log belongs to. */
export interface ToolLogTarget {
  operationId: string;
  stepIndex: number;
  toolCallId: string;
  identifier: string;
  apiName: string;
}

/**
 * The progress log of one tool call (`ToolExecutionContext.log`): each line
 * is a `tool_log` event for `target`'s operation, bounded (message length,
 * attribute size, lines per call) and carrying only what the tool wrote: no
 * arguments, no context. Nothing is stored or logged elsewhere, so a line
 * reaches event listeners and nobody else. `close()` (when the call
 * returned) makes later lines no-ops. The log never throws: a message that
 * cannot become a string is written as `(unprintable)`, attributes JSON
 * cannot carry are left out.
 */
export function openToolLog(events: OperationEvents, target: ToolLogTarget): { log: ToolLog; close(): void } {
  let lines = 0;
  let open = true;
  const log: ToolLog = (level, message, attributes) => {
    if (!open || lines > MAX_TOOL_LOG_LINES) return;
    lines += 1;
    if (!events.listeningTo(target.operationId)) return;
    if (lines > MAX_TOOL_LOG_LINES) {
      events.emit({ type: 'tool_log', ...target, level: 'warn', message: `this tool call wrote more than ${MAX_TOOL_LOG_LINES} log lines; the rest are dropped`, truncated: true });
      return;
    }
    const text = printable(message);
    const kept = cut(text, MAX_TOOL_LOG_MESSAGE);
    const extra = attributesOf(attributes);
    events.emit({
      type: 'tool_log',
      ...target,
      level: typeof level === 'string' && LEVELS.has(level) ? level : 'info',
      message: kept,
      ...(extra.value !== undefined ? { attributes: extra.value } : {}),
      ...(kept.length < text.length || extra.dropped ? { truncated: true as const } : {}),
    });
  };
  return { log, close: () => void (open = false) };
}

function printable(message: unknown): string {
  if (typeof message === 'string') return message;
  try {
    return String(message);
  } catch {
    return '(unprintable)';
  }
}

/** `text` cut to `max` UTF-16 units, never in the middle of a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]!) ? max - 1 : max;
  return text.slice(0, end);
}

function attributesOf(attributes: unknown): { value?: Record<string, unknown>; dropped: boolean } {
  if (attributes === undefined) return { dropped: false };
  if (attributes === null || typeof attributes !== 'object' || Array.isArray(attributes)) return { dropped: true };
  try {
    const copy = jsonCopy(attributes) as Record<string, unknown>;
    return JSON.stringify(copy).length <= MAX_TOOL_LOG_ATTRIBUTES ? { value: copy, dropped: false } : { dropped: true };
  } catch {
    return { dropped: true };
  }
}
