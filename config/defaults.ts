import path from 'node:path';
import type { ParsedConfig } from './schema.js';
import type { LOG_LEVELS } from './schema.js';

/** The configuration with every default filled in; what plugins read. */
export interface HookgateConfig {
  dataDir: string;
  log: { level: (typeof LOG_LEVELS)[number]; format: 'json' | 'pretty' };
  store: { driver: 'sqlite' | 'memory'; sqlite: { path: string; backgroundCheckpoints: boolean } };
  sandbox: { root: string };
  models: { openai: { baseUrl: string; apiKeyEnv: string; model?: string; timeoutSeconds: number } };
  webhooks: {
    publicBaseUrl?: string;
    internalBaseUrl?: string;
    qstash: { url: string; tokenEnv: string };
    signing: { secretEnv?: string };
  };
  /** `pathsAreDefault`: the paths were not configured, so a missing default folder just means no policies. */
  policies: { paths: string[]; pathsAreDefault: boolean; defaultDecision: 'allow' | 'deny'; deadlineMs: number; maxWorkers: number; logRawArgs: boolean; hotReload: boolean };
  /** `handlerTimeoutMs`: bound on one local hook handler call (default 30,000 ms). */
  hooks: { handlerTimeoutMs: number };
  /** `settings`: each plugin's own section by plugin id, as written (the plugin's schema validates it at kernel start). */
  plugins: { settings: Readonly<Record<string, unknown>> };
  /** Folder the config file was read from (or the working directory); relative paths resolve against it. */
  baseDir: string;
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
    },
    sandbox: { root: resolve(parsed.sandbox?.root, path.join(dataDir, 'sandbox')) },
    models: {
      openai: {
        baseUrl: parsed.models?.openai?.baseUrl ?? 'https://api.openai.com/v1',
        apiKeyEnv: parsed.models?.openai?.apiKeyEnv ?? 'OPENAI_API_KEY',
        model: parsed.models?.openai?.model,
        timeoutSeconds: parsed.models?.openai?.timeoutSeconds ?? 120,
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
      maxWorkers: parsed.policies?.maxWorkers ?? 2,
      logRawArgs: parsed.policies?.logRawArgs ?? false,
      hotReload: parsed.policies?.hotReload ?? false,
    },
    hooks: { handlerTimeoutMs: parsed.hooks?.handlerTimeoutMs ?? 30_000 },
    plugins: { settings: parsed.plugins?.settings ?? {} },
  };
}
