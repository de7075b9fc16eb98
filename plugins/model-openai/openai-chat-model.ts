import type OpenAI from 'openai';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { errorMessage, HookgateError } from '../../kernel/errors.js';
import type { ModelProvider, ModelRequest, ModelResponse } from '../../kernel/model.js';
import { fetchWithinDeadline, runWithinDeadline, settleOnAbort, startCallDeadline } from '../../kernel/model-call-deadline.js';
import type { HostedModelOptions } from '../../kernel/hosted-model-options.js';
import { ToolNameMap } from '../../kernel/model-tool-names.js';
import { ChunkAssembler } from './chunk-assembler.js';
import { toModelResponse, type RawCompletion } from './completion-result.js';
import { buildRequestBody } from './request-body.js';
import { scrubSecret, sdkLoggerFor } from '../../kernel/model-sdk-logger.js';
import { fromSdkError, loadSdk, timeoutError } from './sdk-error.js';

/** Options of the OpenAI provider: the shared hosted-model options. */
export interface OpenAiChatModelOptions extends HostedModelOptions {}

/** The SDK's per-attempt timeout when the call has no deadline: the largest a timer holds. */
const NO_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * A ModelProvider for any OpenAI-compatible Chat Completions endpoint
 * (OpenAI, Azure-style proxies, vLLM, Ollama, LiteLLM...), on the official
 * `openai` SDK.
 *
 * `complete` asks `{baseUrl}/chat/completions` for a stream with usage, calls
 * `onTextDelta` as text arrives, and resolves once the answer is complete; a
 * server that answers with plain `application/json` instead is read as a
 * whole. Before any byte of an answer arrives, the SDK retries 408, 409, 429,
 * 5xx and network errors up to `maxRetries` times with exponential backoff
 * (0.5 s doubling to 8 s, with jitter), waiting what `Retry-After` or
 * `retry-after-ms` asks instead when the server sends one; a failure inside a
 * stream is never retried (its text already reached `onTextDelta`). Rejects
 * with:
 * - CONFIG_INVALID when no model name is known or the key variable is unset
 *   (the message names the variable, never a value);
 * - MODEL_FAILED for non-2xx answers (status and the server's `error.message`),
 *   network failures, the deadline, malformed streams, and tool arguments that
 *   are not a JSON object (naming the tool);
 * - the caller's `signal.reason` as soon as the caller aborts, backoff pauses
 *   included.
 * The API key never appears in errors or logs.
 */
export class OpenAiChatModel implements ModelProvider {
  readonly name: string;
  private readonly endpoint: string;
  private readonly baseURL: string;
  private readonly maxRetries: number;
  /** One SDK client per key value: a rotated key gets a new client, an unchanged one reuses its connections. */
  private client: { apiKey: string; sdk: OpenAI } | undefined;

  constructor(private readonly options: OpenAiChatModelOptions) {
    this.name = options.name ?? 'openai';
    this.baseURL = options.baseUrl.replace(/\/+$/, '');
    this.endpoint = `${this.baseURL}/chat/completions`;
    this.maxRetries = options.maxRetries ?? 2;
    if (!Number.isInteger(this.maxRetries) || this.maxRetries < 0) {
      throw new HookgateError('CONFIG_INVALID', `models.openai.maxRetries: expected a whole number from 0, got ${String(options.maxRetries)}`);
    }
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const model = request.model || this.options.model;
    if (!model) {
      throw new HookgateError('CONFIG_INVALID', `no model name for provider "${this.name}": set model.name in the agent file or models.openai.model in the config`);
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
    const deadline = startCallDeadline(request.signal, this.options.timeoutSeconds);
    const errorContext = { endpoint: this.endpoint, apiKey, maxRetries: this.maxRetries, timeoutSeconds: this.options.timeoutSeconds };
    const started = Date.now();
    this.options.logger?.debug('model request', { provider: this.name, model, messages: body.messages.length, tools: body.tools?.length ?? 0 });

    try {
      const sdk = await this.sdkFor(apiKey);
      const work = runWithinDeadline(this.options.timeoutSeconds, 'models.openai.timeoutSeconds', () => this.call(sdk, body, names, request, deadline.signal, apiKey));
      const result = await settleOnAbort(work, deadline.signal);
      this.options.logger?.debug('model response', {
        provider: this.name,
        model,
        finishReason: result.finishReason,
        usage: result.usage,
        toolCalls: result.toolCalls.length,
        ms: Date.now() - started,
      });
      return result;
    } catch (err) {
      if (request.signal.aborted) throw request.signal.reason;
      if (deadline.timedOut()) throw timeoutError(this.options.timeoutSeconds);
      const mapped = fromSdkError(err, errorContext);
      this.options.logger?.debug('model call failed', { provider: this.name, model, error: mapped.message, ms: Date.now() - started });
      throw mapped;
    }
  }

  private async call(sdk: OpenAI, body: ReturnType<typeof buildRequestBody>, names: ToolNameMap, request: ModelRequest, signal: AbortSignal, apiKey: string): Promise<ModelResponse> {
    const { data: stream, response } = await sdk.chat.completions.create(body, { signal }).withResponse();
    const contentType = response.headers.get('content-type') ?? '';
    let raw: RawCompletion;
    if (contentType.includes('application/json')) {
      // Not iterated, the SDK's stream never touched the body: read it as the whole answer.
      raw = readJson(await response.text(), apiKey);
    } else {
      const assembler = new ChunkAssembler((delta) => this.emitText(request, delta));
      for await (const chunk of stream) assembler.push(chunk);
      // The SDK ends a stream quietly when it is aborted: the signal says whether it was.
      signal.throwIfAborted();
      // The SDK swallows `data: [DONE]`, so completeness is read from the chunks: a finish_reason, or the usage chunk.
      if (!assembler.finished) {
        throw new HookgateError('MODEL_FAILED', 'the model stream ended before the answer was complete (no finish_reason and no usage chunk)');
      }
      raw = assembler.result();
    }
    return toModelResponse(raw, names);
  }

  private async sdkFor(apiKey: string): Promise<OpenAI> {
    if (this.client?.apiKey === apiKey) return this.client.sdk;
    const { default: OpenAIClient } = await loadSdk();
    // Another call may have made the client for this key while the SDK loaded.
    if (this.client?.apiKey === apiKey) return this.client.sdk;
    const sdk = new OpenAIClient({
      apiKey,
      baseURL: this.baseURL,
      // Explicit, so OPENAI_ORG_ID / OPENAI_PROJECT_ID in the environment do not change what hookgate sends.
      organization: null,
      project: null,
      maxRetries: this.maxRetries,
      timeout: this.options.timeoutSeconds > 0 ? Math.ceil(this.options.timeoutSeconds * 1000) : NO_TIMEOUT_MS,
      // A Retry-After the call's deadline cannot wait for fails the call at once, with the server's answer.
      fetch: fetchWithinDeadline(this.options.fetch ?? globalThis.fetch),
      // The SDK's own logs go through hookgate's logger (scrubbed of the key), never to the console; OPENAI_LOG is ignored.
      logger: sdkLoggerFor(this.options.logger, apiKey, 'openai sdk'),
      logLevel: this.options.logger ? (this.options.sdkLogLevel ?? 'warn') : 'off',
    });
    this.client = { apiKey, sdk };
    return sdk;
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
  let parsed: Partial<ChatCompletion> & { error?: { message?: string } };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    throw new HookgateError('MODEL_FAILED', 'the model endpoint answered with application/json that does not parse');
  }
  if (parsed.error) {
    throw new HookgateError('MODEL_FAILED', `the model endpoint reported an error: ${scrubSecret(String(parsed.error.message ?? JSON.stringify(parsed.error)), apiKey).slice(0, 500)}`);
  }
  const choice = parsed.choices?.[0];
  if (!choice?.message) throw new HookgateError('MODEL_FAILED', 'the model endpoint answered without choices[0].message');
  const message = choice.message;
  return {
    text: (message.content ?? '') + (message.refusal ?? ''),
    toolCalls: (message.tool_calls ?? []).map((c, i) => ({
      id: c.id || `call_${i}`,
      name: c.type === 'function' ? (c.function?.name ?? '') : '',
      arguments: c.type === 'function' ? (c.function?.arguments ?? '') : '',
    })),
    finishReason: choice.finish_reason,
    usage: parsed.usage,
  };
}
