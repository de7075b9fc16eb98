import { access, mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig, type HookgateConfig } from '../../../index.js';
import type { AgentHook, HookType, WebhookConfig } from '../../../kernel/hooks/hook-types.js';
import type { Kernel } from '../../../kernel/kernel.js';
import { createLogger, SecretScrubber } from '../../../kernel/logger.js';
import type { MessageRecord } from '../../../kernel/store.js';
import { definePlugin } from '../../../kernel/plugin.js';
import { ModelProviders } from '../../../kernel/tokens.js';
import { RecordingModel } from '../../helpers/runtime-fixtures.js';
import { RecordingReceiver } from '../../helpers/webhook-receiver.js';

/** How a World is made: the kernel's env object and a config tweak applied at every boot. */
export interface WorldOptions {
  env?: NodeJS.ProcessEnv;
  configure?: (config: HookgateConfig) => void;
}

/**
 * One end-to-end world: a temp folder (config cwd; `.hookgate/hookgate.db` is a
 * real SQLite file, `.hookgate/sandbox` the fs tools' root), an environment
 * object handed to the kernel (mutate it to rotate values), every log line
 * and every timeline event (as NDJSON) captured.
 */
export class World {
  readonly logLines: string[] = [];
  readonly eventLines: string[] = [];
  /** Every model request made through provider `recorded`, across kernels. */
  readonly model = new RecordingModel();
  readonly kernels: Kernel[] = [];

  private constructor(
    readonly dir: string,
    readonly env: NodeJS.ProcessEnv,
    private readonly configure?: (config: HookgateConfig) => void,
  ) {}

  static async create(options: WorldOptions = {}): Promise<World> {
    const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-webhooks-e2e-')));
    return new World(dir, options.env ?? {}, options.configure);
  }

  get dataDir(): string {
    return path.join(this.dir, '.hookgate');
  }

  get dbPath(): string {
    return path.join(this.dataDir, 'hookgate.db');
  }

  get sandbox(): string {
    return path.join(this.dataDir, 'sandbox');
  }

  /** Builds and starts a kernel on this folder (call again for a "restart" on the same data). */
  async boot(): Promise<Kernel> {
    const config = loadConfig({ cwd: this.dir, env: {} });
    this.configure?.(config);
    const scrubber = new SecretScrubber();
    const logger = createLogger({ level: 'debug', scrubber, sink: (line) => this.logLines.push(line) });
    const model = this.model;
    const recording = definePlugin({
      id: 'webhooks-e2e-recording-model',
      provides: [ModelProviders],
      register: (ctx) => ctx.bindValue(ModelProviders, model),
    });
    const kernel = createKernel({ config, env: this.env, logger, scrubber, plugins: [recording] });
    kernel.events.on((e) => this.eventLines.push(JSON.stringify(e)));
    await kernel.start();
    this.kernels.push(kernel);
    return kernel;
  }

  async fileExists(name: string): Promise<boolean> {
    try {
      await access(path.join(this.sandbox, name));
      return true;
    } catch {
      return false;
    }
  }

  readSandbox(name: string): Promise<string> {
    return readFile(path.join(this.sandbox, name), 'utf8');
  }

  /** Stops every kernel this world started and removes the folder. */
  async cleanup(): Promise<void> {
    for (const k of this.kernels) await k.stop().catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** An agent over the fs tools with a scripted (and recorded) model. */
export function defineAgent(kernel: Kernel, id: string, turns: unknown[], extra: { approval?: string[] } = {}): void {
  kernel.agents.define({
    id,
    model: { provider: 'recorded', turns },
    tools: ['fs/*'],
    ...(extra.approval ? { approval: { tools: extra.approval } } : {}),
  });
}

/** A scripted turn calling one fs tool. */
export function fsCall(apiName: string, args: Record<string, unknown>, id?: string): Record<string, unknown> {
  return { toolCalls: [{ ...(id ? { id } : {}), identifier: 'fs', apiName, args }] };
}

/** A webhook hook literal. */
export function webhookHook(id: string, type: HookType, webhook: WebhookConfig, matcher?: string): AgentHook {
  return { id, type, webhook, ...(matcher !== undefined ? { matcher } : {}) } as AgentHook;
}

/** A control webhook (`responseHandling: 'toolCall'`) on beforeToolCall or afterToolCall. */
export function control(id: string, type: 'beforeToolCall' | 'afterToolCall', url: string, extra: Partial<WebhookConfig> = {}): AgentHook<'beforeToolCall' | 'afterToolCall'> {
  return webhookHook(id, type, { url, responseHandling: 'toolCall', ...extra }) as AgentHook<'beforeToolCall' | 'afterToolCall'>;
}

/** The stored tool messages of an operation. */
export async function toolMessages(kernel: Kernel, operationId: string): Promise<MessageRecord[]> {
  return (await kernel.listMessages(operationId)).filter((m) => m.role === 'tool');
}

/** One test's loopback receiver and world. */
export interface WebhookScene {
  receiver: RecordingReceiver;
  world: World;
}

/**
 * Registers mocha hooks in the calling `describe`: before each test a fresh
 * `RecordingReceiver` is started and a `World` created (its options may use
 * the receiver, e.g. its URL in the env), and `use` is called with both; after
 * each test the world is cleaned up (its kernels stopped) and the receiver
 * closed. Nothing is booted: call `world.boot()` in the test or a later hook.
 */
export function useWebhookWorld(use: (scene: WebhookScene) => void, options: WorldOptions | ((receiver: RecordingReceiver) => WorldOptions) = {}): void {
  let scene: WebhookScene | undefined;
  beforeEach(async () => {
    const receiver = await RecordingReceiver.start();
    const world = await World.create(typeof options === 'function' ? options(receiver) : options).catch(async (err: unknown) => {
      await receiver.close();
      throw err;
    });
    scene = { receiver, world };
    use(scene);
  });
  afterEach(async () => {
    const current = scene;
    scene = undefined;
    await current?.world.cleanup();
    await current?.receiver.close();
  });
}
