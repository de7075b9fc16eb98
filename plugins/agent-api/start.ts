import path from 'node:path';
import type { HookgateConfig } from '../../config/defaults.js';
import { loadConfig, type LoadConfigOptions } from '../../config/load-config.js';
import { Kernel } from '../../kernel/kernel.js';
import { DEFAULT_LEASE_MS } from '../../kernel/runtime/in-process-driver.js';
import type { Plugin } from '../../kernel/plugin.js';
import { pluginsForConfig } from '../catalog.js';
import type { StartAgentEntry } from './agent.js';
import type { AgentDirectory } from './agent-directory.js';
import { AgentRuntimeNotStartedError, AgentRuntimeRunningError, InvalidRequestError } from './agent-errors.js';
import { agentApiPlugin } from './index.js';
import { createAgentDirectory } from './agent-identity.js';
import type { SubmissionCoordinator } from './submission-coordinator.js';
import { ConversationFeed } from './conversation-feed.js';
import { StreamClients } from './stream-clients.js';

/**
 * Where a runtime keeps its instances and submissions: in memory (default:
 * gone at exit), a SQLite file, or `'config'`: the store the config names
 * (`store.driver` and its settings, e.g. PostgreSQL), as `hookgate serve`
 * and `hookgate worker` use it.
 */
export type StartDatabase = 'memory' | 'config' | { sqlite: string };

/** What `start()` takes. */
export interface StartOptions {
  /** The agents this runtime serves (required, non-empty): functions, or `{ agent, name }` to give an identity. */
  agents: readonly StartAgentEntry[];
  /** Persistence: `'memory'` (default), `{ sqlite: path }` (relative paths from the current folder), which survives restarts, or `'config'` (the config's `store`). */
  db?: StartDatabase;
  /** The runtime environment (provider credentials, `HOOKGATE_*` settings); default `process.env`. */
  env?: Record<string, string | undefined>;
  /** The rest of hookgate's configuration (models, policies, hooks): a loaded config or how to load one; default ./hookgate.config.yaml if present. */
  config?: HookgateConfig | LoadConfigOptions;
  /** Plugins to add (tool sources, model providers, agent sources). */
  plugins?: readonly Plugin[];
  /** The agent source the agents' operations run from; default `agent-functions` (the render engine). */
  agentSource?: string;
}

/** The running runtime `start()` resolves: `stop()` drains it; `await using` disposes it. */
export interface AgentRuntimeHandle {
  /** Refuses new sends, lets running submissions settle, then stops the kernel (the store closes). Idempotent. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
  /** The kernel underneath (hooks, operations, the store), for what the agent API does not cover. */
  readonly kernel: Kernel<HookgateConfig>;
}

/** The runtime the agent API of this process uses (one per process). */
export interface ActiveRuntime {
  readonly kernel: Kernel<HookgateConfig>;
  readonly directory: AgentDirectory;
  readonly coordinator: SubmissionCoordinator;
  /** The instances' conversation streams (history reads and live tails). */
  readonly feed: ConversationFeed;
  /** The users' clients on those streams (SSE), and the user-scope hooks their coming and going runs. */
  readonly clients: StreamClients;
}

let active: ActiveRuntime | undefined;
/** Set while a start() runs: a second start() during it is refused too. */
let starting = false;

/**
 * Starts this process's agent runtime (document 001 `start()`): registers
 * the agents (identities from `name`, `agentName` or the function name,
 * never the position), opens the store (`db`), starts the kernel and the
 * submission coordinator, and recovers what a previous process left on the
 * same store (running submissions resumed through the core's leases, queued
 * ones started). After it resolves, `dispatch`, `init` and
 * `getAgentInstance` work. Rejects with AgentRuntimeRunningError while
 * another runtime of this process is running, InvalidRequestError for bad
 * agents or options, and the kernel's start errors (nothing stays running).
 */
export async function start(options: StartOptions): Promise<AgentRuntimeHandle> {
  if (active || starting) throw new AgentRuntimeRunningError();
  starting = true;
  try {
    const directory = createAgentDirectory(options?.agents);
    const config = withDatabase(baseConfig(options), options.db ?? 'memory');
    let coordinator: SubmissionCoordinator | undefined;
    const plugin = agentApiPlugin({ directory, ...(options.agentSource !== undefined ? { agentSource: options.agentSource } : {}), onReady: (c) => (coordinator = c) });
    const kernel = new Kernel<HookgateConfig>({
      config,
      plugins: [...pluginsForConfig(config), ...(options.plugins ?? []), plugin],
      env: (options.env ?? process.env) as NodeJS.ProcessEnv,
    });
    await kernel.start();
    const feed = new ConversationFeed(kernel.store, kernel.events, coordinator!);
    const clients = new StreamClients(kernel);
    const runtime: ActiveRuntime = { kernel, directory, coordinator: coordinator!, feed, clients };
    active = runtime;
    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= (async () => {
        try {
          await runtime.coordinator.drain();
          // Tails still open (an SSE reader, a send whose submission stays as stored) end now.
          feed.close();
          // Their user_client_detached hooks run now, while the store is open.
          await clients.drain();
          await kernel.stop();
        } finally {
          if (active === runtime) active = undefined;
        }
      })();
      return stopping;
    };
    return { stop, [Symbol.asyncDispose]: stop, kernel };
  } finally {
    starting = false;
  }
}

/** The running runtime, or AgentRuntimeNotStartedError naming what needed it. */
export function currentRuntime(what: string): ActiveRuntime {
  if (!active) throw new AgentRuntimeNotStartedError(what);
  return active;
}

function baseConfig(options: StartOptions): HookgateConfig {
  const given = options.config;
  if (given && 'dataDir' in given && 'baseDir' in given) return given;
  return loadConfig({ ...(given as LoadConfigOptions | undefined), env: (options.env ?? process.env) as NodeJS.ProcessEnv });
}

/** The config with the store `db` names, and no takeover of its own: the coordinator resumes its submissions' operations. */
function withDatabase(config: HookgateConfig, db: StartDatabase): HookgateConfig {
  const runtime = { leaseMs: config.runtime?.leaseMs ?? DEFAULT_LEASE_MS, ...config.runtime, takeOver: 'off' as const };
  if (db === 'memory') return { ...config, runtime, store: { ...config.store, driver: 'memory' } };
  if (db === 'config') return { ...config, runtime };
  if (typeof db !== 'object' || db === null || typeof db.sqlite !== 'string' || db.sqlite === '') {
    throw new InvalidRequestError("start({ db }) must be 'memory', 'config' or { sqlite: '<file path>' }", { field: 'db' });
  }
  const file = db.sqlite === ':memory:' ? ':memory:' : path.resolve(db.sqlite);
  return { ...config, runtime, store: { ...config.store, driver: 'sqlite', sqlite: { ...config.store.sqlite, path: file } } };
}
