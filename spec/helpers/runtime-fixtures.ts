import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig } from '../../index.js';
import type { AgentHook, HookEventMap, HookType } from '../../kernel/hooks/hook-types.js';
import { HOOK_TYPES } from '../../kernel/hooks/hook-types.js';
import type { Kernel } from '../../kernel/kernel.js';
import { createLogger, type LogRecord } from '../../kernel/logger.js';
import type { ModelProvider, ModelRequest, ModelResponse } from '../../kernel/model.js';
import { definePlugin } from '../../kernel/plugin.js';
import { ModelProviders, ToolSources } from '../../kernel/tokens.js';
import type { ToolDefinition, ToolExecutionContext, ToolSource } from '../../kernel/tools.js';
import type { Message } from '../../kernel/messages.js';
import { dropSchema, requirePostgres, TEST_POSTGRES, uniqueSchema } from './postgres-fixtures.js';
import { ScriptedModel } from '../../plugins/model-scripted/scripted-model.js';

/** A tool call the test tool source executed. */
export interface TestToolCall {
  identifier: string;
  apiName: string;
  args: Record<string, unknown>;
  ctx: Omit<ToolExecutionContext, 'signal'>;
}

/** What the `recorded` model provider was asked (messages copied at call time). */
export interface RecordedRequest {
  purpose: ModelRequest['purpose'];
  operationId: string;
  turnIndex: number;
  messages: Message[];
  toolNames: string[];
  /** The offered tools' descriptions by `identifier/apiName`. */
  toolDescriptions: Record<string, string>;
}

/**
 * `test/echo` (returns `echo: <args JSON>`), `test/boom` (throws `args.message`
 * or "boom"), `other/echo` (a second identifier for matcher cases). Every
 * execution is recorded in `calls`.
 */
export class TestTools implements ToolSource {
  readonly id = 'test-tools';
  readonly calls: TestToolCall[] = [];

  list(): ToolDefinition[] {
    const params = { type: 'object', properties: {}, additionalProperties: true };
    return [
      { identifier: 'test', apiName: 'echo', description: 'Echoes its arguments', parameters: params, toolSource: 'test-source' },
      { identifier: 'test', apiName: 'boom', description: 'Always throws', parameters: params, toolSource: 'test-source' },
      { identifier: 'other', apiName: 'echo', description: 'Echoes its arguments', parameters: params, toolSource: 'test-source' },
    ];
  }

  async execute(call: { identifier: string; apiName: string; args: Record<string, unknown> }, ctx: ToolExecutionContext): Promise<string> {
    const { signal: _signal, ...rest } = ctx;
    this.calls.push({ identifier: call.identifier, apiName: call.apiName, args: structuredClone(call.args), ctx: rest });
    if (call.apiName === 'boom') throw new Error(typeof call.args.message === 'string' ? call.args.message : 'boom');
    return `echo: ${JSON.stringify(call.args)}`;
  }
}

/** The scripted model under the provider name `recorded`, keeping a copy of every request. */
export class RecordingModel implements ModelProvider {
  readonly name = 'recorded';
  readonly requests: RecordedRequest[] = [];
  private readonly inner = new ScriptedModel();

  complete(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push({
      purpose: request.purpose,
      operationId: request.operationId,
      turnIndex: request.turnIndex,
      messages: structuredClone([...request.messages]),
      toolNames: request.tools.map((t) => `${t.identifier}/${t.apiName}`),
      toolDescriptions: Object.fromEntries(request.tools.map((t) => [`${t.identifier}/${t.apiName}`, t.description])),
    });
    return this.inner.complete(request);
  }
}

export interface RuntimeFixture {
  kernel: Kernel;
  /** The temp folder (config cwd; `.hookgate/` inside holds the SQLite file and the sandbox). */
  dir: string;
  /** The builtin fs tools' sandbox root. */
  sandbox: string;
  logs: LogRecord[];
  tools: TestTools;
  model: RecordingModel;
  /** Stops the kernel (idempotent) and removes the temp folder. */
  cleanup(): Promise<void>;
}

export interface FixtureOptions {
  /** `memory` (default, fast) or `sqlite` (a real file in the temp folder). */
  store?: 'memory' | 'sqlite';
  /** Reuse a temp folder (a restart on the same data dir). */
  dir?: string;
  /** Leave the folder in place on cleanup (the caller removes it). */
  keepDir?: boolean;
}

/** Creates and starts a kernel from `loadConfig` in a temp folder, with the test tools and the recording model. */
export async function startKernel(options: FixtureOptions = {}): Promise<RuntimeFixture> {
  const dir = options.dir ?? (await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-runtime-'))));
  const env: NodeJS.ProcessEnv = options.store === 'sqlite' ? {} : { HOOKGATE_STORE__DRIVER: 'memory' };
  const config = loadConfig({ cwd: dir, env });
  const logs: LogRecord[] = [];
  const logger = createLogger({ level: 'debug', sink: (_line, record) => logs.push(record) });
  const tools = new TestTools();
  const model = new RecordingModel();
  const testPlugin = definePlugin({
    id: 'runtime-spec-fixtures',
    provides: [ToolSources, ModelProviders],
    register: (ctx) => {
      ctx.bindValue(ToolSources, tools);
      ctx.bindValue(ModelProviders, model);
    },
  });
  const kernel = createKernel({ config, plugins: [testPlugin], logger, env: {} });
  await kernel.start();
  let cleaned = false;
  return {
    kernel,
    dir,
    sandbox: config.sandbox.root,
    logs,
    tools,
    model,
    async cleanup() {
      if (cleaned) return;
      cleaned = true;
      await kernel.stop();
      if (!options.keepDir && !options.dir) await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One event a recording hook saw (functions such as `mock` left out). */
export interface RecordedEvent {
  type: HookType;
  hookId: string;
  event: Record<string, unknown>;
}

export interface HookRecorder {
  hooks: AgentHook[];
  events: RecordedEvent[];
  /** Events of one type, in order, typed. */
  of<T extends HookType>(type: T, operationId?: string): Array<Omit<HookEventMap[T], 'mock'>>;
  /** The hook types in the order they fired (optionally for one operation). */
  sequence(operationId?: string): HookType[];
}

/** A handler-only hook on every given type (default all 16) that records each event. */
export function recordHooks(types: readonly HookType[] = HOOK_TYPES, events: RecordedEvent[] = []): HookRecorder {
  const hooks = types.map((type) => ({
    id: `record-${type}`,
    type,
    handler: (event: object) => {
      const copy: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(event)) if (typeof v !== 'function') copy[k] = v;
      events.push({ type, hookId: `record-${type}`, event: copy });
    },
  })) as AgentHook[];
  const forOp = (operationId?: string) => events.filter((e) => operationId === undefined || e.event.operationId === operationId);
  return {
    hooks,
    events,
    of: (type, operationId) => forOp(operationId).filter((e) => e.type === type).map((e) => e.event) as never,
    sequence: (operationId) => forOp(operationId).map((e) => e.type),
  };
}

/** A typed hook literal. */
export function hook<T extends HookType>(type: T, handler: (event: HookEventMap[T]) => unknown, extra: { id?: string; matcher?: string } = {}): AgentHook {
  return { id: extra.id ?? `${type}-${Math.random().toString(36).slice(2, 8)}`, type, handler, ...(extra.matcher !== undefined ? { matcher: extra.matcher } : {}) } as AgentHook;
}

/** A scripted model block: `turns` played in order, optional compaction `summaries`. */
export function scripted(turns: unknown[], extra: { summaries?: unknown[]; provider?: 'scripted' | 'recorded' } = {}): Record<string, unknown> {
  return { provider: extra.provider ?? 'scripted', turns, ...(extra.summaries ? { summaries: extra.summaries } : {}) };
}

/** A scripted turn that calls one tool. */
export function toolTurn(identifier: string, apiName: string, args: Record<string, unknown> = {}, id?: string): Record<string, unknown> {
  return { toolCalls: [{ ...(id ? { id } : {}), identifier, apiName, args }] };
}

/** Waits until `predicate` holds (polling), or fails after `timeoutMs`. */
export async function until(predicate: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Kernels that share one SQLite data dir, one after another (a restart). */
export interface SqliteRestart {
  /** Kernel A: a fresh temp folder with a SQLite store; the folder outlives A's stop. */
  first(): Promise<RuntimeFixture>;
  /** Another kernel on the folder (and SQLite file) of the last `first()`. */
  next(): Promise<RuntimeFixture>;
}

/**
 * For restart specs: registers an `afterEach` in the calling `describe` that
 * stops every kernel started through the returned object (idempotent) and
 * removes the shared folder. Call at describe level, use inside tests.
 */
export function useSqliteRestart(): SqliteRestart {
  let started: RuntimeFixture[] = [];
  let dir: string | undefined;
  afterEach(async () => {
    const fixtures = started;
    const folder = dir;
    started = [];
    dir = undefined;
    for (const fx of fixtures) await fx.cleanup();
    if (folder) await rm(folder, { recursive: true, force: true });
  });
  return {
    async first() {
      const fx = await startKernel({ store: 'sqlite', keepDir: true });
      started.push(fx);
      dir = fx.dir;
      return fx;
    },
    async next() {
      if (!dir) throw new Error('useSqliteRestart: call first() before next()');
      const fx = await startKernel({ store: 'sqlite', dir });
      started.push(fx);
      return fx;
    },
  };
}

/**
 * The call identity the runtime minted for the model's call `nativeId` (the id
 * a scripted turn gave it): what tool messages, approvals and completions name.
 * Searches the assistant messages' tool calls; throws when no call has it.
 */
export function callIdOf(messages: readonly Message[], nativeId: string): string {
  for (const m of messages) for (const c of m.toolCalls ?? []) if (c.nativeId === nativeId) return c.id;
  throw new Error(`no tool call with native id ${nativeId} in ${messages.length} messages`);
}

/** The model's id for a minted call identity (the inverse of callIdOf), or undefined. */
export function nativeIdOf(messages: readonly Message[], callId: string | undefined): string | undefined {
  for (const m of messages) for (const c of m.toolCalls ?? []) if (c.id === callId) return c.nativeId;
  return undefined;
}

/** `t/later`: answers every call later (`{ deferred: true }`), for specs that complete calls with kernel.completeToolCall. */
export class DeferredTool implements ToolSource {
  readonly id = 'deferred-spec-tools';
  list(): ToolDefinition[] {
    return [{ identifier: 't', apiName: 'later', description: 'answers later', parameters: { type: 'object', properties: {}, additionalProperties: true }, toolSource: 'spec' }];
  }
  async execute(): Promise<{ deferred: true }> {
    return { deferred: true };
  }
}

/** Kernels on one SQLite file (or one PostgreSQL schema), as separate processes would be (each its own lease owner), started by `start`. */
export interface KernelsOnOneFile {
  /** The shared folder (config cwd; the SQLite file is in `.hookgate/`). */
  dir(): string;
  /** Starts another kernel on the folder's config with `tools` as its one extra tool source, and `logs` collecting its log records (else it logs nothing). */
  start(tools: ToolSource, logs?: LogRecord[]): Promise<Kernel>;
}

/**
 * For specs of several kernels on one store: registers a `beforeEach` (a
 * fresh folder; with `store: 'postgres'`, a fresh schema on the local
 * PostgreSQL, failing when it is down) and an `afterEach` (every kernel
 * stopped, the folder and schema removed) in the calling `describe`. Call at
 * describe level, use inside tests.
 */
export function useKernelsOnOneFile(prefix: string, store: 'sqlite' | 'postgres' = 'sqlite'): KernelsOnOneFile {
  let dir: string | undefined;
  let schema: string | undefined;
  const kernels: Kernel[] = [];
  if (store === 'postgres') before(requirePostgres);
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), `hookgate-${prefix}-`)));
    if (store === 'postgres') schema = uniqueSchema(prefix.replace(/[^a-z0-9_]/g, '_'));
  });
  afterEach(async () => {
    for (const k of kernels.splice(0)) await k.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (schema) await dropSchema(schema);
    dir = undefined;
    schema = undefined;
  });
  return {
    dir: () => dir!,
    async start(tools, logs) {
      const plugin = definePlugin({ id: 'one-file-spec-tools', provides: [ToolSources], register: (ctx) => ctx.bindValue(ToolSources, tools) });
      const logger = logs ? createLogger({ level: 'debug', sink: (_line, record) => logs.push(record) }) : createLogger({ level: 'error', sink: () => undefined });
      const env = store === 'postgres' ? postgresEnv(schema!) : {};
      const kernel = createKernel({ config: loadConfig({ cwd: dir!, env }), plugins: [plugin], logger, env: {} });
      await kernel.start();
      kernels.push(kernel);
      return kernel;
    },
  };
}

/** The HOOKGATE_* variables that put a kernel on `schema` of the test PostgreSQL. */
export function postgresEnv(schema: string): Record<string, string> {
  return {
    HOOKGATE_STORE__DRIVER: 'postgres',
    HOOKGATE_STORE__POSTGRES__HOST: TEST_POSTGRES.host,
    HOOKGATE_STORE__POSTGRES__PORT: String(TEST_POSTGRES.port),
    HOOKGATE_STORE__POSTGRES__DATABASE: TEST_POSTGRES.database,
    HOOKGATE_STORE__POSTGRES__USER: TEST_POSTGRES.user,
    HOOKGATE_STORE__POSTGRES__SCHEMA: schema,
  };
}
