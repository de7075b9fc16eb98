import 'reflect-metadata';
import { HookgateError, errorMessage } from './errors.js';
import type { KernelConfig } from './kernel-config.js';
import type { Operations as OperationsContract } from './operations.js';
import { HookDispatcher, type WebhookSupport } from './hooks/hook-dispatcher.js';
import { createLogger, SecretScrubber, type Logger as LoggerContract } from './logger.js';
import type { Plugin } from './plugin.js';
import { runWithHandle, type OperationHandle } from './operation-handle.js';
import { PluginHost, type PluginStatus } from './plugin-host.js';
import { AgentRegistry } from './runtime/agent-registry.js';
import { AgentSourceRegistry } from './runtime/agent-source-registry.js';
import { StaticAgentSource } from './runtime/agent-source-static.js';
import type { ToolEntry } from './runtime/call-facts.js';
import { AgentRuntime, type ExecAgentOptions } from './runtime/agent-runtime.js';
import { DEFAULT_LEASE_MS, InProcessDriver } from './runtime/in-process-driver.js';
import { OperationEvents, type OperationEvent } from './runtime/operation-events.js';
import { toolKey } from './runtime/runtime-deps.js';
import type { DecisionFilter, DecisionRecord, MessageRecord, OperationFilter, OperationRecord, StepRecord, Store as StoreContract } from './store.js';
import type { Token } from './token.js';
import { AgentSources, Config, Environment, Hooks, Logger, ModelProviders, OperationEventRelay, Operations, Secrets, StepQueue, Store, ThreadHooks, ToolPolicies, ToolSources, UserDirectory, WebhookTransports } from './tokens.js';
import type { StepQueue as StepQueueContract } from './step-queue.js';
import type { OperationEventRelay as OperationEventRelayContract } from './operation-event-relay.js';
import { createWebhookSupport, storeUserDirectory } from './hooks/webhook-support.js';
import type { ModelProvider } from './model.js';
import type { MessageImage, ToolResult } from './messages.js';

/** What `new Kernel(options)` takes; `createKernel` fills `config` and `plugins` for you. */
export interface KernelOptions<C extends KernelConfig = KernelConfig> {
  /** The kernel's configuration; `loadConfig` gives a full `HookgateConfig` (which the bundled plugins need). */
  config: C;
  plugins?: readonly Plugin[];
  /**
   * Loads more plugins when `start()` begins, before the graph is validated
   * (added after `plugins`); `createKernel` passes the loader of
   * `plugins.extra` here, since loading a module is asynchronous. A failure
   * rejects `start()` and nothing starts.
   */
  loadPlugins?: () => Promise<readonly Plugin[]>;
  logger?: LoggerContract;
  scrubber?: SecretScrubber;
  /** Builds webhook delivery once plugins are started (kernel/hooks/webhook); without it, webhook hooks are rejected. */
  webhookSupport?: (kernel: Kernel) => WebhookSupport | undefined;
  /** Environment for webhook header templates, environment hooks and plugins (the `Environment` token: the QStash token, ...); default process.env, read at every send. */
  env?: NodeJS.ProcessEnv;
  /** `queue` delivers only serialized webhooks (workers); default `queue` when a `StepQueue` is bound (execution: queue), else `local`. */
  deliveryMode?: 'local' | 'queue';
}

/** Bound by the kernel once its runtime is built, before any plugin's `ready`. */
const LATE_TOKENS: readonly Token<unknown>[] = [Operations, Hooks];
const CORE_TOKENS: readonly Token<unknown>[] = [Config, Logger, Secrets, Environment, ...LATE_TOKENS];

/**
 * The microkernel: a tsyringe child container, the plugin lifecycle, one hook
 * dispatcher and one agent runtime. Plugins are added before `start()`;
 * after it, nothing can be added.
 *
 * Start: load `loadPlugins` modules, validate the graph and settings, make
 * each plugin's state, register all, start each in dependency order, build
 * the dispatcher and the runtime, bind `Operations` and `Hooks`, then run each
 * plugin's `ready` in start order. Stop: refuse new work first (every
 * `Operations` / kernel method that starts or continues an operation throws
 * KERNEL_STOPPED), then stop the runtime's loops (a running operation stays
 * `running` in the store, for `resume`), then stop the plugins in reverse
 * start order.
 */
export class Kernel<C extends KernelConfig = KernelConfig> {
  /** The config it was given (`createKernel` gives a whole `HookgateConfig`). */
  readonly config: C;
  readonly logger: LoggerContract;
  readonly secrets: SecretScrubber;
  readonly agents = new AgentRegistry();
  /**
   * Where operations' agents come from, by id: `static` (agent files and
   * `agents.define`), the `AgentSources` plugins provide (added at start)
   * and any added here with `add`.
   */
  readonly agentSources = new AgentSourceRegistry();
  /** The tool catalogue (from every ToolSource at start), which the static source's steps run with. */
  private toolCatalogue: ReadonlyMap<string, ToolEntry> = new Map();
  readonly events = new OperationEvents();
  private readonly host: PluginHost;
  private readonly options: KernelOptions<C>;
  private dispatcherInstance: HookDispatcher | undefined;
  private runtime: AgentRuntime | undefined;
  /** Queue mode's step queue (a plugin binds `StepQueue`), when bound. */
  private stepQueue: StepQueueContract | undefined;
  /** Queue mode's event relay (a plugin binds `OperationEventRelay`), open from start to stop. */
  private eventRelay: OperationEventRelayContract | undefined;
  /** Set when stop() begins: from then on no new work is accepted. */
  private stopping = false;
  private readonly operationsFacade: OperationsContract;

  constructor(options: KernelOptions<C>) {
    this.options = options;
    this.config = options.config;
    this.secrets = options.scrubber ?? new SecretScrubber();
    this.logger = options.logger ?? createLogger({ level: options.config.log.level, format: options.config.log.format, scrubber: this.secrets });
    this.host = new PluginHost(CORE_TOKENS, options.config.plugins?.settings ?? {}, LATE_TOKENS);
    this.host.bindCore(Config, this.config);
    this.host.bindCore(Logger, this.logger);
    this.host.bindCore(Secrets, this.secrets);
    this.host.bindCore(Environment, options.env ?? process.env);
    for (const p of options.plugins ?? []) this.host.add(p);
    this.agentSources.add(new StaticAgentSource(this.agents, () => this.toolCatalogue));
    this.operationsFacade = Object.freeze({
      execAgent: (o) => this.execAgent(o),
      approve: (id, o) => this.approve(id, o),
      reject: (id, o) => this.reject(id, o),
      rejectAndContinue: (id, o) => this.rejectAndContinue(id, o),
      resume: (id, o) => this.resume(id, o),
      abort: (id) => this.abort(id),
      completeToolCall: (id, callId, result) => this.completeToolCall(id, callId, result),
      deliverAtNextTurn: (id, message) => this.deliverAtNextTurn(id, message),
      wait: (id, until) => this.waitForOperation(id, until),
    } satisfies OperationsContract);
  }

  /** What plugins get as the `Operations` token: start, decide, resume, abort, complete, wait. */
  get operations(): OperationsContract {
    return this.operationsFacade;
  }

  /** Adds a plugin. Throws KERNEL_FROZEN once the kernel started. */
  use(plugin: Plugin): this {
    this.host.add(plugin);
    return this;
  }

  /**
   * Loads `loadPlugins` modules, validates the plugin graph, starts plugins
   * in dependency order, builds the runtime, then runs each plugin's `ready`.
   * A failing `ready` stops everything and rejects with PLUGIN_READY_FAILED.
   */
  async start(): Promise<void> {
    if (this.options.loadPlugins && this.host.phaseName === 'open') {
      for (const p of await this.options.loadPlugins()) this.host.add(p);
    }
    await this.host.start();
    try {
      const store = this.host.resolve(Store);
      this.stepQueue = this.host.has(StepQueue) ? this.host.resolve(StepQueue) : undefined;
      this.dispatcherInstance = new HookDispatcher({
        logger: this.logger.child({ component: 'hooks' }),
        // Queue mode: steps run in workers, where only the persisted webhooks of an operation exist.
        mode: this.options.deliveryMode ?? (this.stepQueue ? 'queue' : 'local'),
        webhooks: this.options.webhookSupport ? this.options.webhookSupport(this) : this.defaultWebhookSupport(store),
        loadPersistedHooks: (id) => store.loadHooks(id),
        handlerTimeoutMs: this.config.hooks?.handlerTimeoutMs,
        onDelivered: (operationId, hookType, hookId, via, stepIndex) => {
          if (!this.events.listeningTo(operationId)) return;
          const event: Extract<OperationEvent, { type: 'hook' }> = { type: 'hook', operationId, hookType, hookId, via };
          if (stepIndex !== undefined) event.stepIndex = stepIndex;
          this.events.emit(event);
        },
      });
      const models = new Map<string, ModelProvider>();
      for (const m of this.host.resolveAll(ModelProviders)) models.set(m.name, m);
      const tools = new Map<string, ToolEntry>();
      for (const source of this.host.resolveAll(ToolSources)) {
        for (const tool of source.list()) tools.set(toolKey(tool.identifier, tool.apiName), { tool, source });
      }
      this.toolCatalogue = tools;
      for (const source of this.host.resolveAll(AgentSources)) this.agentSources.add(source, 'the AgentSources token');
      const runtimeLogger = this.logger.child({ component: 'runtime' });
      this.runtime = new AgentRuntime({
        store,
        dispatcher: this.dispatcherInstance,
        logger: runtimeLogger,
        events: this.events,
        agents: this.agents,
        agentSources: this.agentSources,
        models,
        tools,
        policies: this.host.resolveAll(ToolPolicies),
        ...(this.host.has(ThreadHooks) ? { threadHooks: this.host.resolve(ThreadHooks) } : {}),
      }, new InProcessDriver(store, runtimeLogger, { leaseMs: this.config.runtime?.leaseMs }), this.stepQueue);
      this.host.bindCore(Operations, this.operationsFacade);
      this.host.bindCore(Hooks, this.dispatcherInstance);
      // Before any plugin's ready: a step a worker runs from here on is heard here too.
      if (this.host.has(OperationEventRelay)) {
        this.eventRelay = this.host.resolve(OperationEventRelay);
        await this.eventRelay.open(this.events);
      }
    } catch (err) {
      await this.host.stop().catch(() => undefined);
      throw err;
    }
    try {
      await this.host.ready();
    } catch (err) {
      await this.stop().catch(() => undefined);
      throw err;
    }
    // After every plugin's `ready`, so the agent sources and tools a taken-over operation needs are there. The first
    // scan is awaited (it claims and launches; the runs go on in the background): once `start` resolves, a taken-over
    // operation is this process's, and waiting for it waits for its end.
    const takeOver = this.config.runtime?.takeOver ?? 'off';
    if (takeOver !== 'off') {
      const leaseMs = this.config.runtime?.leaseMs ?? DEFAULT_LEASE_MS;
      await this.runtime.startTakeOver(takeOver === 'watch' ? leaseMs : undefined).catch((err: unknown) =>
        this.logger.warn('the takeover scan failed', { error: errorMessage(err) }),
      );
    }
  }

  /** Webhook delivery over the bound transports; none bound means webhook hooks are rejected at registration. */
  private defaultWebhookSupport(store: StoreContract): WebhookSupport | undefined {
    const transports = this.host.resolveAll(WebhookTransports);
    if (transports.length === 0) return undefined;
    return createWebhookSupport({
      config: this.config,
      transports,
      userDirectory: this.host.has(UserDirectory) ? this.host.resolve(UserDirectory) : storeUserDirectory(store),
      logger: this.logger.child({ component: 'webhooks' }),
      scrubber: this.secrets,
      env: this.options.env,
    });
  }

  /**
   * Queue mode: makes this process a worker. Takes step jobs from the queue
   * (each runs one step of an operation here, `AgentRuntime.runQueuedStep`)
   * and sweeps every `runtime.leaseMs` for running operations nobody holds
   * whose job was lost, enqueueing them again. Resolves once jobs are taken;
   * `stop()` stops taking them and lets the ones in flight finish first.
   * QUEUE_NOT_CONFIGURED without a step queue (`execution: queue`).
   */
  async work(): Promise<void> {
    const { runtime } = this.requireAccepting();
    const queue = this.stepQueue;
    if (!queue) throw new HookgateError('QUEUE_NOT_CONFIGURED', 'this kernel has no step queue: set execution: queue (and queue.redis) in the config to run workers');
    await queue.consume((step) => runtime.runQueuedStep(step));
    await runtime.startTakeOver(this.config.runtime?.leaseMs ?? DEFAULT_LEASE_MS).catch((err: unknown) =>
      this.logger.warn('the queue sweep failed', { error: errorMessage(err) }),
    );
  }

  /**
   * Refuses new work, stops taking queued steps (queue mode: in-flight steps
   * finish and enqueue their next), stops the runtime loops, then stops
   * plugins in reverse start order. Idempotent.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.stepQueue?.stopConsuming().catch((err: unknown) => this.logger.warn('could not stop taking queued steps', { error: errorMessage(err) }));
    await this.runtime?.shutdown();
    await this.eventRelay?.close().catch((err: unknown) => this.logger.warn('could not close the event relay', { error: errorMessage(err) }));
    await this.host.stop();
  }

  /** Plugins with their lifecycle state. */
  plugins(): PluginStatus[] {
    return this.host.status();
  }

  resolve<T>(token: Token<T>): T {
    return this.host.resolve(token);
  }

  resolveAll<T>(token: Token<T>): T[] {
    return this.host.resolveAll(token);
  }

  /** Whether a plugin provides `token` (an optional service such as ThreadHooks). */
  has(token: Token<unknown>): boolean {
    return this.host.has(token);
  }

  /** The hook dispatcher shared by every operation (document 000's HookDispatcher). */
  get hooks(): HookDispatcher {
    return this.requireStarted().dispatcher;
  }

  get store(): StoreContract {
    return this.host.resolve(Store);
  }

  /**
   * Starts an operation: validates hooks (nothing is stored when they are
   * invalid), persists the operation, then runs it in the background.
   * Await `handle.completed()` for the terminal state.
   */
  async execAgent(options: ExecAgentOptions): Promise<OperationHandle> {
    const { runtime } = this.requireAccepting();
    return this.track(() => runtime.start(options));
  }

  /** Approves a parked operation's pending tool call(s) and resumes it; works after a restart. */
  async approve(operationId: string, options: { toolCallId?: string } = {}): Promise<OperationHandle> {
    const { runtime } = this.requireAccepting();
    return this.track(async () => (await runtime.decide(operationId, { action: 'approve', ...options }), operationId), operationId);
  }

  /** Rejects and halts the operation (`onStopByHumanIntervention`). */
  async reject(operationId: string, options: { toolCallId?: string; reason?: string } = {}): Promise<OperationHandle> {
    const { runtime } = this.requireAccepting();
    return this.track(async () => (await runtime.decide(operationId, { action: 'reject', ...options }), operationId), operationId);
  }

  /** Rejects the pending tool call(s); the model sees the reason and the run goes on. */
  async rejectAndContinue(operationId: string, options: { toolCallId?: string; reason?: string } = {}): Promise<OperationHandle> {
    const { runtime } = this.requireAccepting();
    return this.track(async () => (await runtime.decide(operationId, { action: 'reject_continue', ...options }), operationId), operationId);
  }

  /**
   * Publishes the result of a deferred tool call (a tool that returned
   * `{ deferred: true }`) into its placeholder, once, through the same result
   * control as any tool result; resumes the operation when nothing else is
   * outstanding. Duplicates resolve `{ published: false }` and change nothing.
   * `toolCallId` is the call identity the runtime minted (the tool got it as
   * `ctx.toolCallId`), never the model's id. A completion that arrives while a
   * step of the operation runs resolves after that step committed.
   */
  async completeToolCall(operationId: string, toolCallId: string, result: ToolResult | string): Promise<{ published: boolean }> {
    const full: ToolResult = typeof result === 'string' ? { content: result, success: true } : result;
    return this.requireAccepting().runtime.completeToolCall(operationId, toolCallId, full);
  }

  /** Aborts an operation; it ends with reason `interrupted`. */
  async abort(operationId: string): Promise<void> {
    await this.requireStarted().runtime.abort(operationId);
  }

  /**
   * Continues an operation a stopped process left `running`, once its lease
   * has expired or was released (OPERATION_LEASED before that; `force` takes
   * an unexpired lease over). A parked or ended operation is left as it is
   * (nothing claimed): the handle waits for it.
   */
  async resume(operationId: string, options: { force?: boolean } = {}): Promise<OperationHandle> {
    const { runtime } = this.requireAccepting();
    return this.track(async () => (await runtime.resume(operationId, options), operationId), operationId);
  }

  /**
   * Joins a user message to an operation this process runs, at its next
   * model turn: the model sees it then and that step's commit stores it under
   * `message.id`. Resolves true once stored; false when no loop of the
   * operation runs here, or when the loop ends (finishes, parks, stops) first.
   */
  deliverAtNextTurn(operationId: string, message: { id: string; content: string; images?: readonly MessageImage[] }): Promise<boolean> {
    if (this.stopping || !this.runtime) return Promise.resolve(false);
    return this.runtime.deliverAtNextTurn(operationId, message);
  }

  waitForOperation(operationId: string, until: 'settled' | 'terminal' = 'terminal'): Promise<OperationRecord> {
    return this.requireStarted().runtime.wait(operationId, until);
  }

  getOperation(operationId: string): Promise<OperationRecord | undefined> {
    return this.store.getOperation(operationId);
  }

  listOperations(filter?: OperationFilter): Promise<OperationRecord[]> {
    return this.store.listOperations(filter);
  }

  listMessages(operationId: string, options?: { includeCompacted?: boolean }): Promise<MessageRecord[]> {
    return this.store.listMessages(operationId, options);
  }

  listSteps(operationId: string): Promise<StepRecord[]> {
    return this.store.listSteps(operationId);
  }

  /** The policy decision log, newest first. */
  listDecisions(filter?: DecisionFilter): Promise<DecisionRecord[]> {
    return this.store.listDecisions(filter);
  }

  /** Runs what starts or resumes an operation and returns its handle, recording its events from before the action on. */
  private track(action: () => Promise<string>, operationId?: string): Promise<OperationHandle> {
    return runWithHandle(this.events, (id, until) => this.waitForOperation(id, until), action, operationId);
  }

  /** As {@link requireStarted}, and refuses once stop() began: nothing new starts or continues then. */
  private requireAccepting(): { runtime: AgentRuntime; dispatcher: HookDispatcher } {
    if (this.stopping && this.runtime) throw new HookgateError('KERNEL_STOPPED', 'the kernel is stopping; it accepts no new work');
    return this.requireStarted();
  }

  private requireStarted(): { runtime: AgentRuntime; dispatcher: HookDispatcher } {
    if (!this.runtime || !this.dispatcherInstance) {
      throw new HookgateError('KERNEL_NOT_STARTED', 'the kernel must be started first (await kernel.start())');
    }
    if (this.host.phaseName === 'stopped' || this.host.phaseName === 'stopping') {
      throw new HookgateError('KERNEL_STOPPED', 'the kernel was stopped');
    }
    return { runtime: this.runtime, dispatcher: this.dispatcherInstance };
  }
}
