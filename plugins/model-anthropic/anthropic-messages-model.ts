import type Anthropic from '@anthropic-ai/sdk';
import type { Message, MessageCreateParamsStreaming } from '@anthropic-ai/sdk/resources/messages';
import { errorMessage, HookgateError } from '../../kernel/errors.js';
import type { ModelProvider, ModelRequest, ModelResponse } from '../../kernel/model.js';
import { fetchWithinDeadline, runWithinDeadline, settleOnAbort, startCallDeadline } from '../../kernel/model-call-deadline.js';
import { scrubSecret, sdkLoggerFor } from '../../kernel/model-sdk-logger.js';
import type { HostedModelOptions } from '../../kernel/hosted-model-options.js';
import { ToolNameMap } from '../../kernel/model-tool-names.js';
import { MessageAssembler } from './message-assembler.js';
import { buildRequestBody } from './request-body.js';
import { fromSdkError, loadSdk, timeoutError } from './sdk-error.js';

/** Options of the Anthropic provider: the shared hosted-model options and the default `max_tokens`. */
export interface AnthropicMessagesModelOptions extends HostedModelOptions {
  /** `max_tokens` when the request sets no `maxOutputTokens` (the API requires one); default 4096. */
  maxOutputTokens?: number;
}

/** The SDK's per-attempt timeout when the call has no deadline: the largest a timer holds. */
const NO_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * A ModelProvider for the Anthropic Messages API, on the official
 * `@anthropic-ai/sdk`.
 *
 * `complete` POSTs `{baseUrl}/v1/messages` with `stream: true` (key in
 * `x-api-key`, the SDK's `anthropic-version`), calls `onTextDelta` for each
 * `text_delta`, and resolves at `message_stop` with the text, the `tool_use`
 * blocks as tool calls, usage and the stop reason; a server that answers
 * with plain `application/json` is read as a whole Message. Before any byte
 * of an answer arrives the SDK retries 408, 409, 429, 5xx (529 overloaded
 * included) and network errors up to `maxRetries` times with exponential
 * backoff (0.5 s doubling to 8 s, with jitter), waiting what `Retry-After` /
 * `retry-after-ms` ask instead when the server sends them; an error inside a
 * stream (an `event: error`) is never retried. Rejects with:
 * - CONFIG_INVALID when no model name is known or the key variable is unset
 *   (naming the variable, never a value);
 * - MODEL_FAILED for non-2xx answers (status, error type and message), network
 *   failures, the deadline, error events and streams cut before
 *   `message_stop`, and tool input that is not a JSON object (naming the tool);
 * - the caller's `signal.reason` as soon as the caller aborts.
 * The API key never appears in errors or logs.
 */
export class AnthropicMessagesModel implements ModelProvider {
  readonly name: string;
  private readonly baseURL: string;
  private readonly endpoint: string;
  private readonly maxRetries: number;
  private readonly maxOutputTokens: number;
  /** One SDK client per key value: a rotated key gets a new client, an unchanged one reuses its connections. */
  private client: { apiKey: string; sdk: Anthropic } | undefined;

  constructor(private readonly options: AnthropicMessagesModelOptions) {
    this.name = options.name ?? 'anthropic';
    this.baseURL = options.baseUrl.replace(/\/+$/, '');
    this.endpoint = `${this.baseURL}/v1/messages`;
    this.maxRetries = options.maxRetries ?? 2;
    this.maxOutputTokens = options.maxOutputTokens ?? 4096;
    if (!Number.isInteger(this.maxRetries) || this.maxRetries < 0) {
      throw new HookgateError('CONFIG_INVALID', `models.anthropic.maxRetries: expected a whole number from 0, got ${String(options.maxRetries)}`);
    }
    if (!Number.isInteger(this.maxOutputTokens) || this.maxOutputTokens < 1) {
      throw new HookgateError('CONFIG_INVALID', `models.anthropic.maxOutputTokens: expected a whole number from 1, got ${String(options.maxOutputTokens)}`);
    }
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const model = request.model || this.options.model;
    if (!model) {
      throw new HookgateError('CONFIG_INVALID', `no model name for provider "${this.name}": set model.name in the agent file or models.anthropic.model in the config`);
    }
    const apiKey = (this.options.env ?? process.env)[this.options.apiKeyEnv];
    if (!apiKey) {
      throw new HookgateError(
        'CONFIG_INVALID',
        `the environment variable ${this.options.apiKeyEnv} is not set; it must hold the API key for ${this.options.baseUrl} (models.anthropic.apiKeyEnv names the variable)`,
        { details: { apiKeyEnv: this.options.apiKeyEnv } },
      );
    }
    this.options.secrets?.add(apiKey);
    request.signal.throwIfAborted();

    const names = new ToolNameMap(request.tools);
    const body = buildRequestBody(request, model, this.maxOutputTokens, names);
    const deadline = startCallDeadline(request.signal, this.options.timeoutSeconds);
    const started = Date.now();
    this.options.logger?.debug('model request', { provider: this.name, model, messages: body.messages.length, tools: body.tools?.length ?? 0 });

    try {
      const sdk = await this.sdkFor(apiKey);
      const work = runWithinDeadline(this.options.timeoutSeconds, 'models.anthropic.timeoutSeconds', () => this.call(sdk, body, names, request, deadline.signal, apiKey));
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
      const mapped = fromSdkError(err, { endpoint: this.endpoint, apiKey, maxRetries: this.maxRetries, timeoutSeconds: this.options.timeoutSeconds });
      this.options.logger?.debug('model call failed', { provider: this.name, model, error: mapped.message, ms: Date.now() - started });
      throw mapped;
    }
  }

  private async call(sdk: Anthropic, body: MessageCreateParamsStreaming, names: ToolNameMap, request: ModelRequest, signal: AbortSignal, apiKey: string): Promise<ModelResponse> {
    const { data: stream, response } = await sdk.messages.create(body, { signal }).withResponse();
    if ((response.headers.get('content-type') ?? '').includes('application/json')) {
      // Not iterated, the SDK's stream never touched the body: read it as the whole Message.
      return MessageAssembler.fromMessage(readMessage(await response.text(), apiKey), names);
    }
    const assembler = new MessageAssembler((delta) => this.emitText(request, delta));
    for await (const event of stream) assembler.push(event);
    // The SDK ends a stream quietly when it is aborted: the signal says whether it was.
    signal.throwIfAborted();
    if (!assembler.complete) throw new HookgateError('MODEL_FAILED', 'the model stream ended before the answer was complete (no message_stop event)');
    return assembler.result(names);
  }

  private async sdkFor(apiKey: string): Promise<Anthropic> {
    if (this.client?.apiKey === apiKey) return this.client.sdk;
    const { default: AnthropicClient } = await loadSdk();
    // Another call may have made the client for this key while the SDK loaded.
    if (this.client?.apiKey === apiKey) return this.client.sdk;
    const sdk = new AnthropicClient({
      // Passing the key keeps the SDK from reading ANTHROPIC_AUTH_TOKEN or a credentials chain as well.
      apiKey,
      baseURL: this.baseURL,
      maxRetries: this.maxRetries,
      timeout: this.options.timeoutSeconds > 0 ? Math.ceil(this.options.timeoutSeconds * 1000) : NO_TIMEOUT_MS,
      // A Retry-After the call's deadline cannot wait for fails the call at once, with the server's answer.
      fetch: fetchWithinDeadline(this.options.fetch ?? globalThis.fetch),
      // The SDK's own logs go through hookgate's logger (scrubbed of the key), never to the console; ANTHROPIC_LOG is ignored.
      logger: sdkLoggerFor(this.options.logger, apiKey, 'anthropic sdk'),
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

function readMessage(text: string, apiKey: string): Message {
  let parsed: Omit<Partial<Message>, 'type'> & { type?: string; error?: { type?: string; message?: string } };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    throw new HookgateError('MODEL_FAILED', 'the model endpoint answered with application/json that does not parse');
  }
  if (parsed.type === 'error' || parsed.error) {
    const message = scrubSecret(String(parsed.error?.message ?? JSON.stringify(parsed.error)), apiKey).slice(0, 500);
    throw new HookgateError('MODEL_FAILED', `the model endpoint reported an error${parsed.error?.type ? ` (${parsed.error.type})` : ''}: ${message}`);
  }
  if (!Array.isArray(parsed.content)) throw new HookgateError('MODEL_FAILED', 'the model endpoint answered without a content array');
  return parsed as unknown as Message;
}
