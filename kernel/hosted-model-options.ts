import type { Logger, SecretScrubber } from './logger.js';

/**
 * The options both official-SDK model providers take (model-openai,
 * model-anthropic): where the API is, the env var holding its key (read on
 * every call), the whole-call deadline and retry budget, and what their
 * logging and key scrubbing go to.
 */
export interface HostedModelOptions {
  /** Base URL of the API, without the endpoint path. */
  baseUrl: string;
  /** Name of the environment variable holding the API key; the key is read on every call. */
  apiKeyEnv: string;
  /** Model used when the request names none. */
  model?: string;
  /** Deadline for one whole call (attempts, backoff pauses and the stream); 0 or less means none. */
  timeoutSeconds: number;
  /** Retries after the first attempt, on 408, 409, 429, 5xx and network errors (the SDK's policy); default 2. */
  maxRetries?: number;
  logger?: Logger;
  /** When given, the key is registered here on every call, so kernel logs scrub it too. */
  secrets?: SecretScrubber;
  /** Where the key is looked up; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Provider name agent files use in `model.provider`. */
  name?: string;
  /** The fetch the SDK uses; default Node's global fetch. */
  fetch?: typeof fetch;
  /** How much of the SDK's own logging reaches `logger` (scrubbed of the key); default `warn`. `debug` prints request and response details. */
  sdkLogLevel?: 'off' | 'error' | 'warn' | 'info' | 'debug';
}
