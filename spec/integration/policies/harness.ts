import { access, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig } from '../../../index.js';
import type { Kernel } from '../../../kernel/kernel.js';
import { createLogger, type LogRecord } from '../../../kernel/logger.js';
import type { Message } from '../../../kernel/messages.js';
import { definePlugin } from '../../../kernel/plugin.js';
import type { DecisionFilter, DecisionRecord, MessageRecord } from '../../../kernel/store.js';
import { ModelProviders, ToolPolicies } from '../../../kernel/tokens.js';
import { PolicyEngine } from '../../../policies/policy-engine.js';
import { RecordingModel } from '../../helpers/runtime-fixtures.js';

/**
 * One end-to-end policy world: a temp folder (config cwd) with the packs in
 * `packs/` (configured through HOOKGATE_POLICIES__PATHS), a real SQLite store
 * and the builtin fs tools' sandbox under `.hookgate/`, every log record and
 * timeline event captured, and the `recorded` scripted model.
 */
export class PolicyWorld {
  readonly logs: LogRecord[] = [];
  readonly eventLines: string[] = [];
  readonly model = new RecordingModel();
  private kernelInstance: Kernel | undefined;

  private constructor(
    readonly dir: string,
    private readonly configEnv: NodeJS.ProcessEnv,
  ) {}

  /** Creates the folder and writes each pack (`name -> YAML`) into `packs/`. */
  static async create(packs: Record<string, string>, configEnv: NodeJS.ProcessEnv = {}): Promise<PolicyWorld> {
    const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-policies-e2e-')));
    const world = new PolicyWorld(dir, configEnv);
    await mkdir(world.packsDir, { recursive: true });
    for (const [name, yaml] of Object.entries(packs)) await world.writePack(name, yaml);
    return world;
  }

  get packsDir(): string {
    return path.join(this.dir, 'packs');
  }

  get sandbox(): string {
    return path.join(this.dir, '.hookgate', 'sandbox');
  }

  get kernel(): Kernel {
    if (!this.kernelInstance) throw new Error('boot() first');
    return this.kernelInstance;
  }

  /** The policy engine the kernel is running (the plugin's ToolPolicies binding). */
  get engine(): PolicyEngine {
    const engine = this.kernel.resolveAll(ToolPolicies).find((p): p is PolicyEngine => p instanceof PolicyEngine);
    if (!engine) throw new Error('no policy engine bound');
    return engine;
  }

  writePack(name: string, yaml: string): Promise<void> {
    return writeFile(path.join(this.packsDir, name), yaml);
  }

  /** Builds and starts a kernel on this folder; rejects as `kernel.start()` does. */
  async boot(): Promise<Kernel> {
    const config = loadConfig({ cwd: this.dir, env: { HOOKGATE_POLICIES__PATHS: this.packsDir, ...this.configEnv } });
    const logger = createLogger({ level: 'debug', sink: (_line, record) => this.logs.push(record) });
    const model = this.model;
    const recording = definePlugin({
      id: 'policies-e2e-recording-model',
      provides: [ModelProviders],
      register: (ctx) => ctx.bindValue(ModelProviders, model),
    });
    const kernel = createKernel({ config, env: {}, logger, plugins: [recording] });
    kernel.events.on((e) => this.eventLines.push(JSON.stringify(e)));
    this.kernelInstance = kernel;
    await kernel.start();
    return kernel;
  }

  /** Defines an agent over the fs tools whose (recorded) scripted model plays `turns`. */
  defineAgent(id: string, turns: unknown[]): void {
    this.kernel.agents.define({ id, model: { provider: 'recorded', turns }, tools: ['fs/*'] });
  }

  /** Runs an agent to its terminal state. */
  async run(agentId: string, hooks?: Parameters<Kernel['execAgent']>[0]['hooks']): Promise<{ operationId: string; status: string }> {
    const handle = await this.kernel.execAgent({ agentId, prompt: 'go', ...(hooks ? { hooks } : {}) });
    const record = await handle.completed();
    return { operationId: handle.operationId, status: record.status };
  }

  /** The decision log after every pending write has landed. */
  async decisions(filter?: DecisionFilter): Promise<DecisionRecord[]> {
    await this.engine.flush();
    return this.kernel.listDecisions(filter);
  }

  /** The stored tool messages of an operation, in order. */
  async toolMessages(operationId: string): Promise<MessageRecord[]> {
    return (await this.kernel.listMessages(operationId)).filter((m) => m.role === 'tool');
  }

  async sandboxFile(name: string): Promise<string | undefined> {
    try {
      await access(path.join(this.sandbox, name));
    } catch {
      return undefined;
    }
    return readFile(path.join(this.sandbox, name), 'utf8');
  }

  async writeSandboxFile(name: string, text: string): Promise<void> {
    await mkdir(this.sandbox, { recursive: true });
    await writeFile(path.join(this.sandbox, name), text);
  }

  async cleanup(): Promise<void> {
    await this.kernelInstance?.stop().catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** A scripted turn calling fs tools (`[apiName, args]` pairs), all in one assistant message. */
export function fsTurn(...calls: Array<[string, Record<string, unknown>]>): Record<string, unknown> {
  return { toolCalls: calls.map(([apiName, args]) => ({ identifier: 'fs', apiName, args })) };
}

/** Every tool message the model was shown, across all recorded requests. */
export function toolMessagesSeenByModel(model: RecordingModel): Message[] {
  return model.requests.flatMap((r) => r.messages.filter((m) => m.role === 'tool'));
}

/** Polls `predicate` (5 ms steps) until it holds; fails after `limitMs`. Not a timing assertion: only a bound on waiting. */
export async function eventually(predicate: () => boolean | Promise<boolean>, what: string, limitMs = 10_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!(await predicate())) {
    if (Date.now() > end) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
