import { errorMessage, HookgateError } from '../../kernel/errors.js';
import type { Logger, SecretScrubber } from '../../kernel/logger.js';
import type { ModelProvider, ModelRequest, ModelResponse } from '../../kernel/model.js';
import { ChunkAssembler } from './chunk-assembler.js';
import { toModelResponse, type RawCompletion } from './completion-result.js';
import { extractMessage, httpError, scrub } from './http-error.js';
import { buildRequestBody } from './request-body.js';
import { readSseData } from './sse-events.js';
import { ToolNameMap } from './tool-names.js';
import type { WireChunk, WireCompletion } from './wire-types.js';

export interface OpenAiChatModelOptions {
  /** Base URL of the API, without `/chat/completions` (e.g. `https://api.openai.com/v1`). */
  baseUrl: string;
  /** Name of the environment variable holding the API key; the key is read on every call. */
  apiKeyEnv: string;
  /** Model used when the request names none. */
  model?: string;
  /** Deadline for one whole call, headers and stream included; 0 or less means none. */
  timeoutSeconds: number;
  logger?: Logger;
  /** When given, the key is registered here on every call, so kernel logs scrub it too. */
  secrets?: SecretScrubber;
  /** Where the key is looked up; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Provider name agent files use in `model.provider`; default `openai`. */
  name?: string;
}

/**
 * A ModelProvider for any OpenAI-compatible Chat Completions endpoint
 * (OpenAI, Azure-style proxies, vLLM, Ollama, LiteLLM...), over Node's fetch.
 *
 * `complete` POSTs `{baseUrl}/chat/completions` asking for a stream with usage,
 * calls `onTextDelta` as text arrives, and resolves once the answer is
 * complete; a server that answers with plain `application/json` instead is
 * read as a whole. Rejects with:
 * - CONFIG_INVALID when no model name is known or the key variable is unset
 *   (the message names the variable, never a value);
 * - MODEL_FAILED for non-2xx answers (status and the server's `error.message`),
 *   network failures, the timeout, malformed streams, and tool arguments that
 *   are not a JSON object (naming the tool);
 * - the caller's `signal.reason` when the caller aborts.
 * The API key never appears in errors or logs.
 */
export class OpenAiChatModel implements ModelProvider {
  readonly name: string;
  private readonly endpoint: string;

  constructor(private readonly options: OpenAiChatModelOptions) {
    this.name = options.name ?? 'openai';
    this.endpoint = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const model = request.model || this.options.model;
    if (!model) {
      throw new HookgateError('CONFIG_INVALID', 'no model name for provider "openai": set model.name in the agent file or models.openai.model in the config');
    }
    const apiKey = (this.options.env ?? process.env)[this.options.apiKeyEnv];
    if (!apiKey) {
      throw new HookgateError(
        'CONFIG_INVALID',
        `the environment variable ${this.options.apiKeyEnv} is not set; it must hold the API key for ${this.options.baseUrl} (models.openai.apiKeyEnv names the variable)`,
        { details: { apiKeyEnv: this.options.apiKeyEnv } },
      );
    }
    this.options.secrets?.add(apiKey);
    request.signal.throwIfAborted();

    const names = new ToolNameMap(request.tools);
    const body = buildRequestBody(request, model, names);
    const timeout = this.options.timeoutSeconds > 0 ? AbortSignal.timeout(this.options.timeoutSeconds * 1000) : undefined;
    const signal = timeout ? AbortSignal.any([request.signal, timeout]) : request.signal;
    const started = Date.now();
    this.options.logger?.debug('model request', { provider: this.name, model, messages: body.messages.length, tools: body.tools?.length ?? 0 });

    try {
      const response = await fetch(this.endpoint, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${apiKey}`,
          'content-type': 'application/json',
          accept: 'text/event-stream, application/json',
        },
        body: JSON.stringify(body),
        signal,
      });
      if (!response.ok) throw httpError(response.status, response.statusText, await response.text(), apiKey);
      const contentType = response.headers.get('content-type') ?? '';
      const raw = contentType.includes('application/json') ? readJson(await response.text(), apiKey) : await this.readStream(response, request, apiKey);
      const result = toModelResponse(raw, names);
      this.options.logger?.debug('model response', {
        provider: this.name,
        model,
        status: response.status,
        finishReason: result.finishReason,
        usage: result.usage,
        toolCalls: result.toolCalls.length,
        ms: Date.now() - started,
      });
      return result;
    } catch (err) {
      if (request.signal.aborted) throw request.signal.reason;
      if (timeout?.aborted) {
        throw new HookgateError('MODEL_FAILED', `the model endpoint gave no complete answer within ${this.options.timeoutSeconds}s (models.openai.timeoutSeconds)`, {
          details: { timeoutSeconds: this.options.timeoutSeconds },
        });
      }
      if (err instanceof HookgateError) throw err;
      const reason = err instanceof Error && err.cause !== undefined ? `${errorMessage(err)}: ${errorMessage(err.cause)}` : errorMessage(err);
      throw new HookgateError('MODEL_FAILED', `cannot get an answer from ${this.endpoint}: ${scrub(reason, apiKey)}`, { details: { endpoint: this.endpoint } });
    }
  }

  private async readStream(response: Response, request: ModelRequest, apiKey: string): Promise<RawCompletion> {
    if (!response.body) throw new HookgateError('MODEL_FAILED', 'the model endpoint answered without a body');
    const assembler = new ChunkAssembler((delta) => this.emitText(request, delta));
    let sawDone = false;
    for await (const data of readSseData(response.body)) {
      if (data.trim() === '[DONE]') {
        sawDone = true;
        break;
      }
      let chunk: WireChunk;
      try {
        chunk = JSON.parse(data) as WireChunk;
      } catch {
        throw new HookgateError('MODEL_FAILED', 'the model stream sent an event that is not JSON', { details: { eventLength: data.length } });
      }
      if (chunk.error) throw new HookgateError('MODEL_FAILED', `the model stream reported an error: ${extractMessage(scrub(JSON.stringify(chunk), apiKey))}`);
      assembler.push(chunk);
    }
    if (!sawDone && !assembler.finished) {
      throw new HookgateError('MODEL_FAILED', 'the model stream ended before the answer was complete (no finish_reason and no [DONE])');
    }
    return assembler.result();
  }

  /** Observer callbacks never break a model call: a throwing onTextDelta is logged and ignored. */
  private emitText(request: ModelRequest, delta: string): void {
    if (!request.onTextDelta) return;
    try {
      request.onTextDelta(delta);
    } catch (err) {
      this.options.logger?.warn('onTextDelta threw; the model call goes on', { provider: this.name, error: errorMessage(err) });
    }
  }
}

function readJson(text: string, apiKey: string): RawCompletion {
  let parsed: WireCompletion;
  try {
    parsed = JSON.parse(text) as WireCompletion;
  } catch {
    throw new HookgateError('MODEL_FAILED', 'the model endpoint answered with application/json that does not parse');
  }
  if (parsed.error) throw new HookgateError('MODEL_FAILED', `the model endpoint reported an error: ${extractMessage(scrub(text, apiKey))}`);
  const choice = parsed.choices?.[0];
  if (!choice?.message) throw new HookgateError('MODEL_FAILED', 'the model endpoint answered without choices[0].message');
  const message = choice.message;
  return {
    text: (message.content ?? '') + (message.refusal ?? ''),
    toolCalls: (message.tool_calls ?? []).map((c, i) => ({
      id: c.id || `call_${i}`,
      name: c.function?.name ?? '',
      arguments: c.function?.arguments ?? '',
    })),
    finishReason: choice.finish_reason,
    usage: parsed.usage,
  };
}
