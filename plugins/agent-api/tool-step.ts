import { jsonCopy } from '../../kernel/json-copy.js';
import type { ToolStepStore } from '../../kernel/tool-steps.js';
import { AgentRenderError, ToolStepError } from './agent-errors.js';
import { toJsonValue } from './use-persistent-state.js';

/** The durable-step surface a `durable: true` tool gets (document 001 `ToolStep`). */
export interface ToolStep {
  /**
   * Runs `fn` once per `name` for this tool call and records its value
   * durably before resolving; a re-execution of the same call (after a
   * crash) resolves to the recorded value without calling `fn`. Recorded
   * exactly once, executed at least once: a crash between `fn` finishing and
   * the record landing runs `fn` again, so make it idempotent. Rejects with
   * ToolStepError for a name that is empty, longer than MAX_STEP_NAME, not
   * well-formed Unicode or holding control characters, a name already used in
   * this call (also while its first use still runs), a value JSON cannot carry
   * (undefined included) or longer than MAX_STEP_VALUE_CHARS as JSON, more
   * than MAX_STEPS_PER_CALL steps, and a call (or an `fn` finishing) after the
   * tool returned; a rejection of `fn` passes through, recording nothing.
   */
  do<T>(name: string, fn: () => T | Promise<T>): Promise<T>;
}

/** Where one tool call's steps are recorded and read back (built from the store by the agent-functions source). */
export interface ToolStepJournal {
  /** The values earlier executions of this call recorded, by name. */
  load(): Promise<ReadonlyMap<string, unknown>>;
  /** Records `name`'s value; resolves to the value that is recorded (an earlier record wins over this one). */
  record(name: string, value: unknown): Promise<unknown>;
}

/** Longest step name, in UTF-16 units. */
export const MAX_STEP_NAME = 512;
/** Longest step value, as JSON text. Values should stay small: store large artifacts elsewhere and record a pointer. */
export const MAX_STEP_VALUE_CHARS = 1_048_576;
/** Most steps one tool call may record. */
export const MAX_STEPS_PER_CALL = 10_000;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The `step` of one execution of a durable tool: names are claimed
 * synchronously when `do` is called (so a second `do` of a name in flight is
 * refused at once), the journal's records are read on the first `do`, and
 * `close()` (when `run` settled) refuses every later `do` and every record
 * of an `fn` still running. Without a journal (a standalone run) the rules are
 * the same and nothing is recorded.
 */
export function openToolStep(toolName: string, journal?: ToolStepJournal): { step: ToolStep; close(): void } {
  const used = new Set<string>();
  let closed = false;
  let recorded: Promise<ReadonlyMap<string, unknown>> | undefined;
  const step: ToolStep = Object.freeze({
    async do<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
      const shown = checkName(toolName, name);
      if (closed) throw new ToolStepError(toolName, `called step.do(${shown}) after it returned`, { step: shown });
      if (used.has(name)) {
        throw new ToolStepError(toolName, `used the step name ${shown} twice in one call: names identify the work to replay, derive a distinct one per step (\`item:\${id}\`)`, { step: shown });
      }
      if (used.size >= MAX_STEPS_PER_CALL) throw new ToolStepError(toolName, `ran more than ${MAX_STEPS_PER_CALL} steps in one call`, { step: shown });
      if (typeof fn !== 'function') throw new ToolStepError(toolName, `called step.do(${shown}) without a function`, { step: shown });
      used.add(name);
      recorded ??= journal?.load() ?? Promise.resolve(new Map());
      const earlier = await recorded;
      if (earlier.has(name)) return jsonCopy(earlier.get(name)) as T;
      const value = snapshot(toolName, shown, await fn());
      if (closed) throw new ToolStepError(toolName, `step ${shown} finished after the tool returned; its value was not recorded`, { step: shown });
      if (journal === undefined) return value as T;
      return jsonCopy(await journal.record(name, value)) as T;
    },
  });
  return { step, close: () => void (closed = true) };
}

/** The journal of one tool call in the store: its records read once, each new one its own transaction. */
export function storeToolStepJournal(store: ToolStepStore, operationId: string, toolCallId: string): ToolStepJournal {
  return {
    load: async () => new Map((await store.listToolSteps(operationId, toolCallId)).map((s) => [s.name, s.value])),
    record: async (name, value) => (await store.recordToolStep({ operationId, toolCallId, name, value })).step.value,
  };
}

/** The name as error messages show it (escaped, cut); ToolStepError when it is not a usable name. */
function checkName(toolName: string, name: unknown): string {
  if (typeof name !== 'string') throw new ToolStepError(toolName, `called step.do with a ${name === null ? 'null' : typeof name} name: a step name is a non-empty string`);
  const shown = JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);
  if (name.trim() === '') throw new ToolStepError(toolName, `called step.do with an empty step name (${shown}): a step name is a non-empty string`, { step: shown });
  if (name.length > MAX_STEP_NAME) throw new ToolStepError(toolName, `called step.do with a step name of ${name.length} characters (at most ${MAX_STEP_NAME}): ${shown}`, { step: shown });
  if (LONE_SURROGATE.test(name)) throw new ToolStepError(toolName, `called step.do with a step name that is not well-formed Unicode (a lone surrogate): ${shown}`, { step: shown });
  if (CONTROL.test(name)) throw new ToolStepError(toolName, `called step.do with a step name holding control characters: ${shown}`, { step: shown });
  return shown;
}

/** `value` as a JSON copy; ToolStepError when JSON cannot carry it or it is too large. */
function snapshot(toolName: string, shown: string, value: unknown): unknown {
  if (value === undefined) throw new ToolStepError(toolName, `step ${shown} returned undefined, which JSON cannot carry: return null or a value`, { step: shown });
  let copy: unknown;
  try {
    copy = toJsonValue(value, 'value', 0, new Set(), 'step');
  } catch (err) {
    if (!(err instanceof AgentRenderError)) throw err;
    throw new ToolStepError(toolName, `step ${shown} returned a value JSON cannot carry: ${err.message.replace(/^step /, 'the value at ')}`, { step: shown });
  }
  const size = JSON.stringify(copy).length;
  if (size > MAX_STEP_VALUE_CHARS) throw new ToolStepError(toolName, `step ${shown} returned ${size} characters of JSON (at most ${MAX_STEP_VALUE_CHARS}): record a pointer to large data instead`, { step: shown });
  return copy;
}

/** The record that marks a non-durable call as started: a name no `step.do` can use (it holds a control character). */
export const CALL_STARTED_STEP = '\u0000hookgate.started';

/**
 * Marks a call of a non-durable tool as started, durably, before it runs:
 * resolves true for its first execution, false when an earlier execution of
 * the same call had already started (a crash or a lost lease interrupted
 * it), whose outcome is then unknown. One write transaction.
 */
export async function markCallStarted(store: ToolStepStore, operationId: string, toolCallId: string): Promise<boolean> {
  return (await store.recordToolStep({ operationId, toolCallId, name: CALL_STARTED_STEP, value: true })).recorded;
}
