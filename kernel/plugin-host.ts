import 'reflect-metadata';
import { container as rootContainer, instanceCachingFactory, type DependencyContainer } from 'tsyringe';
import { HookgateError, errorMessage } from './errors.js';
import type { Plugin, PluginContext, PluginState } from './plugin.js';
import { orderPlugins } from './plugin-graph.js';
import { validatePluginSettings } from './plugin-settings.js';
import type { Token } from './token.js';

/** A plugin as `kernel.plugins()` reports it: its lifecycle state, and the error of a failed one. */
export interface PluginStatus {
  id: string;
  state: PluginState;
  description?: string;
  error?: string;
}

/**
 * Owns the kernel's child container and the plugin lifecycle: validate the
 * graph, make each plugin's instance state, register every plugin, start in
 * dependency order, run `ready` in the same order once the kernel asks, stop
 * in reverse.
 * `stop()` is idempotent and also stops what started before a failed start.
 */
export class PluginHost {
  readonly container: DependencyContainer;
  private readonly plugins: Plugin[] = [];
  private readonly states = new Map<string, PluginStatus>();
  private started: Plugin[] = [];
  private phase: 'open' | 'starting' | 'started' | 'stopping' | 'stopped' = 'open';
  private registering: Plugin | undefined;
  private stopPromise: Promise<void> | undefined;
  private inFlightStart: Promise<unknown> | undefined;
  /** Each plugin's validated settings (`ctx.settings`), filled when start() begins. */
  private settings = new Map<string, unknown>();
  /** Each plugin's instance state for this kernel (`ctx.state`), made once when start() begins. */
  private instanceState = new Map<string, unknown>();

  /**
   * `pluginSettings`: the config's `plugins.settings`, validated against each plugin's schema at start.
   * `lateTokens`: core tokens the kernel binds only once its runtime is built (resolvable from `ready` on).
   */
  constructor(
    private readonly coreTokens: readonly Token<unknown>[],
    private readonly pluginSettings: Readonly<Record<string, unknown>> = {},
    private readonly lateTokens: readonly Token<unknown>[] = [],
  ) {
    this.container = rootContainer.createChildContainer();
  }

  /** Adds a plugin; only before start. */
  add(plugin: Plugin): void {
    if (this.phase !== 'open') {
      throw new HookgateError('KERNEL_FROZEN', `cannot add plugin "${plugin.id}": the kernel is already ${this.phase}`);
    }
    this.plugins.push(plugin);
    this.states.set(plugin.id, { id: plugin.id, state: 'registered', description: plugin.description });
  }

  get phaseName(): string {
    return this.phase;
  }

  /** Binds a core token (kernel services) before plugins register. */
  bindCore<T>(token: Token<T>, value: T): void {
    this.container.registerInstance(token.key, value);
  }

  resolve<T>(token: Token<T>): T {
    if (!this.container.isRegistered(token.key, true)) {
      if (this.lateTokens.some((t) => t.key === token.key)) {
        throw new HookgateError('TOKEN_NOT_BOUND', `"${token.id}" is bound once the agent runtime is built: resolve it in a plugin's ready phase (or later), not in register or start`, {
          details: { token: token.id },
        });
      }
      throw new HookgateError('TOKEN_NOT_BOUND', `nothing is bound to "${token.id}"; is the plugin that provides it enabled?`, { details: { token: token.id } });
    }
    return token.multi ? (this.container.resolveAll(token.key)[0] as T) : (this.container.resolve(token.key) as T);
  }

  resolveAll<T>(token: Token<T>): T[] {
    return this.container.isRegistered(token.key, true) ? (this.container.resolveAll(token.key) as T[]) : [];
  }

  has(token: Token<unknown>): boolean {
    return this.container.isRegistered(token.key, true);
  }

  status(): PluginStatus[] {
    return this.plugins.map((p) => ({ ...this.states.get(p.id)! }));
  }

  /**
   * Validates the graph, registers every plugin, then starts them in order.
   * On a failed start, stops the ones already started and rethrows the wrapped error.
   */
  async start(): Promise<void> {
    if (this.phase !== 'open') throw new HookgateError('KERNEL_FROZEN', `the kernel is already ${this.phase}`);
    const order = orderPlugins(this.plugins, this.coreTokens);
    try {
      this.settings = validatePluginSettings(this.plugins, this.pluginSettings);
    } catch (err) {
      this.phase = 'stopped';
      throw err;
    }
    this.phase = 'starting';
    for (const p of order) {
      try {
        this.instanceState.set(p.id, p.state?.());
      } catch (err) {
        this.setState(p.id, 'failed', err);
        this.phase = 'stopped';
        throw this.wrap('PLUGIN_REGISTER_FAILED', `plugin '${p.id}' failed to create its state`, p, err);
      }
    }
    for (const p of order) {
      this.registering = p;
      try {
        p.register(this.contextFor(p));
      } catch (err) {
        this.setState(p.id, 'failed', err);
        this.phase = 'stopped';
        throw this.wrap('PLUGIN_REGISTER_FAILED', `plugin '${p.id}' failed to register`, p, err);
      } finally {
        this.registering = undefined;
      }
    }
    for (const p of order) {
      this.setState(p.id, 'starting');
      // Listed before its start runs, so a failed start still gets its stop to release what it acquired.
      this.started.push(p);
      const run = (async () => p.start?.(this.contextFor(p)))();
      this.inFlightStart = run;
      try {
        await run;
      } catch (err) {
        this.setState(p.id, 'failed', err);
        const wrapped = this.wrap('PLUGIN_START_FAILED', `plugin '${p.id}' failed to start`, p, err);
        await this.stop().catch(() => undefined);
        throw wrapped;
      } finally {
        this.inFlightStart = undefined;
      }
      // stop() was called while this plugin started: it stops what started; nothing more may start.
      if (this.stopPromise) {
        throw new HookgateError('KERNEL_STOPPED', `the kernel was stopped while plugin '${p.id}' was starting; later plugins were not started`, {
          details: { pluginId: p.id },
        });
      }
      this.setState(p.id, 'started');
    }
    this.phase = 'started';
  }

  /**
   * Runs each started plugin's `ready` in start order, once the kernel built
   * its runtime and bound the late tokens. A failure is PLUGIN_READY_FAILED
   * naming the plugin; the caller (the kernel) stops everything then.
   */
  async ready(): Promise<void> {
    if (this.phase !== 'started') throw new HookgateError('KERNEL_FROZEN', `plugins can get ready only once started; the kernel is ${this.phase}`);
    for (const p of [...this.started]) {
      if (this.stopPromise) {
        throw new HookgateError('KERNEL_STOPPED', `the kernel was stopped before plugin '${p.id}' got ready`, { details: { pluginId: p.id } });
      }
      if (!p.ready) continue;
      const run = (async () => p.ready?.(this.contextFor(p)))();
      this.inFlightStart = run;
      try {
        await run;
      } catch (err) {
        this.setState(p.id, 'failed', err);
        throw this.wrap('PLUGIN_READY_FAILED', `plugin '${p.id}' failed in its ready phase`, p, err);
      } finally {
        this.inFlightStart = undefined;
      }
    }
  }

  /**
   * Stops started plugins in reverse order. Idempotent; collects failures and throws the first after all ran.
   * Called while start() runs, it waits for the plugin starting now, stops everything started so far,
   * and start() rejects with KERNEL_STOPPED instead of starting the rest.
   */
  stop(): Promise<void> {
    this.stopPromise ??= this.runStop();
    return this.stopPromise;
  }

  private async runStop(): Promise<void> {
    this.phase = 'stopping';
    // Never stop a plugin while its start is still running; start() sees the stop and starts no more.
    await this.inFlightStart?.catch(() => undefined);
    let first: unknown;
    for (const p of [...this.started].reverse()) {
      const wasFailed = this.states.get(p.id)?.state === 'failed';
      if (!wasFailed) this.setState(p.id, 'stopping');
      try {
        await p.stop?.(this.contextFor(p));
        if (!wasFailed) this.setState(p.id, 'stopped');
      } catch (err) {
        this.setState(p.id, 'failed', err);
        first ??= this.wrap('PLUGIN_STOP_FAILED', `plugin '${p.id}' failed to stop`, p, err);
      }
    }
    this.started = [];
    this.phase = 'stopped';
    if (first) throw first;
  }

  private setState(id: string, state: PluginState, err?: unknown): void {
    const s = this.states.get(id);
    if (!s) return;
    s.state = state;
    if (err !== undefined) s.error = errorMessage(err);
  }

  private wrap(code: 'PLUGIN_REGISTER_FAILED' | 'PLUGIN_START_FAILED' | 'PLUGIN_READY_FAILED' | 'PLUGIN_STOP_FAILED', message: string, p: Plugin, err: unknown): HookgateError {
    return new HookgateError(code, `${message}: ${errorMessage(err)}`, { cause: err, details: { pluginId: p.id } });
  }

  private contextFor(plugin: Plugin): PluginContext {
    const host = this;
    const assertBinding = (token: Token<unknown>) => {
      if (host.registering !== plugin) {
        throw new HookgateError('KERNEL_FROZEN', `plugin "${plugin.id}" may bind "${token.id}" only while it registers`);
      }
      if (!(plugin.provides ?? []).some((t) => t.key === token.key)) {
        throw new HookgateError('PLUGIN_UNDECLARED_BINDING', `plugin "${plugin.id}" binds "${token.id}" but does not list it in provides`, {
          details: { pluginId: plugin.id, token: token.id },
        });
      }
    };
    const ctx: PluginContext = {
      container: host.container,
      pluginId: plugin.id,
      settings: host.settings.get(plugin.id),
      state: host.instanceState.get(plugin.id),
      resolve: (t) => host.resolve(t),
      resolveAll: (t) => host.resolveAll(t),
      has: (t) => host.has(t),
      bindValue: (token, value) => {
        assertBinding(token);
        host.container.registerInstance(token.key, value);
      },
      bindFactory: (token, factory) => {
        assertBinding(token);
        host.container.register(token.key, { useFactory: instanceCachingFactory(() => factory(ctx)) });
      },
    };
    return ctx;
  }
}
