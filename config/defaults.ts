import { availableParallelism } from 'node:os';
import path from 'node:path';
import type { KernelConfig } from '../kernel/kernel-config.js';
import type { ParsedConfig } from './schema.js';
import { mcpConfig, type McpConfig } from './mcp-schema.js';
import { serveConfig, type ServeConfig } from './serve-schema.js';
import { postgresConfig, type PostgresConfig } from './postgres-schema.js';
import { retentionConfig, type RetentionConfig } from './retention-schema.js';
import { queueConfig, type ExecutionMode, type QueueConfig } from './queue-schema.js';

/**
 * The configuration with every default filled in: the kernel's part
 * (`KernelConfig`) plus the sections of the bundled plugins, which they read
 * through `HookgateConfigToken`. `store.driver` names the plugin that
 * provides the store (a plugin's `drivers: [{ kind: 'store', name }]`).
 */
export interface HookgateConfig extends KernelConfig {
  store: { driver: string; sqlite: { path: string; backgroundCheckpoints: boolean }; postgres: PostgresConfig };
  sandbox: { root: string };
  models: {
    openai: { baseUrl: string; apiKeyEnv: string; model?: string; timeoutSeconds: number; maxRetries: number };
    anthropic: { baseUrl: string; apiKeyEnv: string; model?: string; timeoutSeconds: number; maxRetries: number; maxOutputTokens: number };
  };
  webhooks: {
    publicBaseUrl?: string;
    internalBaseUrl?: string;
    qstash: { url: string; tokenEnv: string };
    signing: { secretEnv?: string };
  };
  /** `pathsAreDefault`: the paths were not configured, so a missing default folder just means no policies. */
  policies: { paths: string[]; pathsAreDefault: boolean; defaultDecision: 'allow' | 'deny'; deadlineMs: number; maxWorkers: number; maxInFlight: number; logRawArgs: boolean; hotReload: boolean };
  /** What `hookgate prune` and the background pass (plugins/store-retention) remove; an empty policy removes nothing. */
  retention: RetentionConfig;
  /** MCP servers the `mcp` plugin connects to at start (header values still `${VAR}` templates). */
  mcp: McpConfig;
  /** Where steps run: `in-process`, or `queue` (the `execution-queue` plugin, BullMQ on Redis; `hookgate worker` runs them). */
  execution: ExecutionMode;
  /** Queue mode's Redis (password by env var name only), key prefix and per-worker concurrency. */
  queue: QueueConfig;
  /** What `hookgate serve` listens on, mounts and accepts (token hashes only). */
  serve: ServeConfig;
  /** `extra`: plugin modules by path (relative to `baseDir`) or package name, loaded when the kernel starts. */
  plugins: { settings: Readonly<Record<string, unknown>>; extra: readonly string[] };
  /**
   * Where the values came from, for errors found after loading (an unknown `store.driver`): `file` as errors name it
   * (`hookgate.config.yaml`, the `--config` path, `(defaults)`), `env` the HOOKGATE_* variable that set a key path.
   */
  source?: { file: string; env: Readonly<Record<string, string>> };
}

/** Fills defaults; relative paths resolve against `baseDir`. */
export function withDefaults(parsed: ParsedConfig, baseDir: string): HookgateConfig {
  const dataDir = path.resolve(baseDir, parsed.dataDir ?? '.hookgate');
  const resolve = (p: string | undefined, fallback: string) => (p === undefined ? fallback : path.resolve(baseDir, p));
  return {
    baseDir,
    dataDir,
    log: { level: parsed.log?.level ?? 'warn', format: parsed.log?.format ?? 'json' },
    store: {
      driver: parsed.store?.driver ?? 'sqlite',
      sqlite: {
        path: parsed.store?.sqlite?.path === ':memory:' ? ':memory:' : resolve(parsed.store?.sqlite?.path, path.join(dataDir, 'hookgate.db')),
        backgroundCheckpoints: parsed.store?.sqlite?.backgroundCheckpoints ?? true,
      },
      postgres: postgresConfig(parsed.store?.postgres),
    },
    sandbox: { root: resolve(parsed.sandbox?.root, path.join(dataDir, 'sandbox')) },
    models: {
      openai: {
        baseUrl: parsed.models?.openai?.baseUrl ?? 'https://api.openai.com/v1',
        apiKeyEnv: parsed.models?.openai?.apiKeyEnv ?? 'OPENAI_API_KEY',
        model: parsed.models?.openai?.model,
        timeoutSeconds: parsed.models?.openai?.timeoutSeconds ?? 120,
        maxRetries: parsed.models?.openai?.maxRetries ?? 2,
      },
      anthropic: {
        baseUrl: parsed.models?.anthropic?.baseUrl ?? 'https://api.anthropic.com',
        apiKeyEnv: parsed.models?.anthropic?.apiKeyEnv ?? 'ANTHROPIC_API_KEY',
        model: parsed.models?.anthropic?.model,
        timeoutSeconds: parsed.models?.anthropic?.timeoutSeconds ?? 120,
        maxRetries: parsed.models?.anthropic?.maxRetries ?? 2,
        maxOutputTokens: parsed.models?.anthropic?.maxOutputTokens ?? 4096,
      },
    },
    webhooks: {
      publicBaseUrl: parsed.webhooks?.publicBaseUrl,
      internalBaseUrl: parsed.webhooks?.internalBaseUrl,
      qstash: { url: parsed.webhooks?.qstash?.url ?? 'https://qstash.upstash.io', tokenEnv: parsed.webhooks?.qstash?.tokenEnv ?? 'QSTASH_TOKEN' },
      signing: { secretEnv: parsed.webhooks?.signing?.secretEnv },
    },
    policies: {
      paths: (parsed.policies?.paths ?? ['policies']).map((p) => path.resolve(baseDir, p)),
      pathsAreDefault: parsed.policies?.paths === undefined,
      defaultDecision: parsed.policies?.defaultDecision ?? 'allow',
      deadlineMs: parsed.policies?.deadlineMs ?? 250,
      maxWorkers: parsed.policies?.maxWorkers ?? defaultPolicyWorkers(),
      maxInFlight: parsed.policies?.maxInFlight ?? 1024,
      logRawArgs: parsed.policies?.logRawArgs ?? false,
      hotReload: parsed.policies?.hotReload ?? false,
    },
    hooks: { handlerTimeoutMs: parsed.hooks?.handlerTimeoutMs ?? 30_000 },
    runtime: { leaseMs: parsed.runtime?.leaseMs ?? 30_000, takeOver: parsed.runtime?.takeOver ?? 'off' },
    retention: retentionConfig(parsed.retention),
    mcp: mcpConfig(parsed.mcp),
    serve: serveConfig(parsed.serve, baseDir),
    execution: parsed.execution ?? 'in-process',
    queue: queueConfig(parsed.queue),
    plugins: { settings: parsed.plugins?.settings ?? {}, extra: parsed.plugins?.extra ?? [] },
  };
}

/** One policy worker per core the process may use, at most 8 (each worker holds its own heap); as the engine's own default. */
function defaultPolicyWorkers(): number {
  return Math.max(1, Math.min(availableParallelism(), 8));
}
