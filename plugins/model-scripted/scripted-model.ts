import * as v from 'valibot';
import { HookgateError } from '../../kernel/errors.js';
import type { ModelProvider, ModelRequest, ModelResponse } from '../../kernel/model.js';

const UsageSchema = v.optional(v.strictObject({ promptTokens: v.optional(v.number()), completionTokens: v.optional(v.number()) }));

const TurnSchema = v.strictObject({
  text: v.optional(v.string()),
  toolCalls: v.optional(
    v.array(v.strictObject({ id: v.optional(v.string()), identifier: v.string(), apiName: v.string(), args: v.optional(v.record(v.string(), v.unknown())) })),
  ),
  usage: UsageSchema,
  /** Makes this turn fail with the message (to exercise error paths). */
  error: v.optional(v.string()),
  /** Waits before answering (to exercise aborts). */
  delayMs: v.optional(v.number()),
});

const ScriptSchema = v.looseObject({
  turns: v.optional(v.array(TurnSchema)),
  /** Answers for compaction calls, in order; without them a deterministic summary is written. */
  summaries: v.optional(v.array(v.strictObject({ text: v.optional(v.string()), error: v.optional(v.string()) }))),
  /** When the turns run out: `error` (default) or repeat the last turn. */
  onEnd: v.optional(v.picklist(['error', 'repeat-last'])),
});

export type ScriptedTurn = v.InferOutput<typeof TurnSchema>;
export type ModelScript = v.InferOutput<typeof ScriptSchema>;

/**
 * A deterministic model: it plays the turns of the agent file's `model` block
 * (or a script given in code) by turn index, so a replay after a restart gives
 * the same answers. Usage defaults to an estimate from the text lengths.
 */
export class ScriptedModel implements ModelProvider {
  readonly name = 'scripted';

  private readonly parsed = new WeakMap<object, ModelScript>();

  constructor(private readonly fixedScript?: ModelScript) {}

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const script = this.scriptOf(request);
    if (request.purpose === 'summarize') return this.summarize(script, request);
    const turns = script.turns ?? [];
    let turn = turns[request.turnIndex];
    if (!turn && script.onEnd === 'repeat-last' && turns.length > 0) turn = turns[turns.length - 1];
    if (!turn) {
      throw new HookgateError('MODEL_FAILED', `the scripted model has no turn ${request.turnIndex + 1} (the script has ${turns.length})`);
    }
    if (turn.delayMs) await delay(turn.delayMs, request.signal);
    if (turn.error) throw new HookgateError('MODEL_FAILED', turn.error);
    const text = turn.text ?? '';
    if (text && request.onTextDelta) for (const piece of text.match(/\S+\s*/g) ?? []) request.onTextDelta(piece);
    const toolCalls = (turn.toolCalls ?? []).map((c, i) => ({
      id: c.id ?? `call_${request.turnIndex}_${i}`,
      identifier: c.identifier,
      apiName: c.apiName,
      args: c.args ?? {},
    }));
    const promptTokens = turn.usage?.promptTokens ?? estimate(request);
    const completionTokens = turn.usage?.completionTokens ?? Math.ceil((text.length + JSON.stringify(toolCalls).length) / 4);
    return {
      text,
      toolCalls,
      usage: { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens },
      finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
    };
  }

  private summarize(script: ModelScript, request: ModelRequest): ModelResponse {
    const scripted = script.summaries?.[request.turnIndex];
    if (scripted?.error) throw new HookgateError('MODEL_FAILED', scripted.error);
    const transcript = request.messages.map((m) => m.content).join('\n');
    const text = scripted?.text ?? `Summary of the earlier conversation (${transcript.split('\n').length} lines): ${transcript.slice(0, 200)}`;
    const promptTokens = estimate(request);
    const completionTokens = Math.ceil(text.length / 4);
    return { text, toolCalls: [], usage: { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens }, finishReason: 'stop' };
  }

  private scriptOf(request: ModelRequest): ModelScript {
    if (this.fixedScript) return this.fixedScript;
    const options = request.modelOptions ?? {};
    // The runtime passes the same agent model block on every turn: validate it once.
    const cached = this.parsed.get(options);
    if (cached) return cached;
    const result = v.safeParse(ScriptSchema, options);
    if (!result.success) {
      const issue = result.issues[0];
      throw new HookgateError('AGENT_INVALID', `model (scripted): ${v.getDotPath(issue) ?? ''}: ${issue.message}`);
    }
    this.parsed.set(options, result.output);
    return result.output;
  }
}

function estimate(request: ModelRequest): number {
  let chars = 0;
  for (const m of request.messages) chars += m.content.length;
  return Math.ceil(chars / 4);
}

/** Waits `ms`, or rejects with the signal's reason on abort; the abort listener is removed either way. */
function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    // One operation's signal sees every delayed turn; a listener left behind per turn would leak.
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
