import type { DependencyContainer } from 'tsyringe';
import type { GenericSchema } from 'valibot';
import type { Token } from './token.js';

/**
 * What a plugin gets while binding, starting, getting ready and stopping:
 * typed access to the kernel's own child container. `bind*` is allowed only
 * in `register`, and only for tokens the plugin lists in `provides`.
 */
export type PluginContext<Settings = unknown, State = unknown> = PluginContextServices<Settings, State> & PluginStateField<State>;

/**
 * `ctx.state`: this kernel's instance state of the plugin, what the plugin's
 * `state()` returned for this kernel (one call per kernel, before `register`),
 * the same value in register, start, ready and stop. Two kernels never share
 * it. Optional in the type only where the state may be `undefined` (a plugin
 * without `state`).
 */
export type PluginStateField<State> = undefined extends State ? { readonly state?: State } : { readonly state: State };

/** Everything on a plugin's context but its `state` (see {@link PluginContext}). */
export interface PluginContextServices<Settings = unknown, State = unknown> {
  /** The kernel's tsyringe child container, for `@inject(token.key)` classes. */
  readonly container: DependencyContainer;
  readonly pluginId: string;
  /**
   * The plugin's own settings: the config's `plugins.settings.<pluginId>`
   * after the plugin's `settings` schema validated (and transformed) it.
   * `undefined` for a plugin that declares no schema.
   */
  readonly settings: Settings;
  /** The value bound to `token` (for a multi token, the first); throws TOKEN_NOT_BOUND when nothing is. */
  resolve<T>(token: Token<T>): T;
  /** Every value bound to a multi token, in plugin start order. */
  resolveAll<T>(token: Token<T>): T[];
  /** Whether anything is bound to `token`. */
  has(token: Token<unknown>): boolean;
  /** Binds a value; only in `register`, only for a token listed in `provides`. */
  bindValue<T>(token: Token<T>, value: T): void;
  /** Binds a lazily created singleton. */
  bindFactory<T>(token: Token<T>, factory: (ctx: PluginContext<Settings, State>) => T): void;
}

/**
 * A named implementation a plugin offers for a config key to select:
 * `{ kind: 'store', name: 'sqlite' }` is picked by `store.driver: sqlite`.
 * Of the plugins that offer a kind the config selects (today: `store`), only
 * the one with the selected name is loaded; an unknown name fails with the
 * names on offer. Kinds the config does not select (`webhook-transport`, ...)
 * are informational.
 */
export interface PluginDriver {
  /** What it is: `store`, `webhook-transport`, `tool-source`, ... */
  readonly kind: string;
  /** The name the config uses for it: `sqlite`, `postgres`, ... */
  readonly name: string;
}

/** What `definePlugin` takes. `Settings` is inferred from the `settings` schema, `State` from `state`. */
export interface PluginDefinition<Settings = undefined, State = undefined> {
  /** kebab-case, unique within a kernel. */
  readonly id: string;
  readonly description?: string;
  /** Tokens this plugin needs bound (by the kernel or another plugin) before it registers. */
  readonly requires?: readonly Token<unknown>[];
  /** Tokens this plugin uses when present; a missing optional requirement does not make the graph fail. */
  readonly optional?: readonly Token<unknown>[];
  /** Tokens this plugin binds. */
  readonly provides?: readonly Token<unknown>[];
  /** The config names this plugin answers to (`{ kind: 'store', name: 'sqlite' }` for `store.driver: sqlite`). */
  readonly drivers?: readonly PluginDriver[];
  /**
   * A valibot schema for the plugin's own config section,
   * `plugins: { settings: { <id>: ... } }`. The kernel validates it before any
   * plugin registers (an absent section is validated as `{}`, so give optional
   * keys defaults with `v.optional(schema, default)`); a failure is
   * CONFIG_INVALID naming the field, such as
   * `plugins.settings.greeting-tools.greeting: expected string, got 42`.
   * The output is `ctx.settings`. Synchronous schemas only.
   */
  readonly settings?: GenericSchema<unknown, Settings>;
  /**
   * Creates the plugin's instance state for one kernel: called once per
   * kernel, before `register`; the result is `ctx.state` in every phase.
   * Keep what start acquires and stop releases here, never in a module-level
   * variable: one plugin object may serve many kernels in one process.
   */
  readonly state?: () => State;
  /** Binds tokens; no I/O. Runs for every plugin before any starts. */
  register(ctx: PluginContext<Settings, State>): void;
  /** May do I/O; runs in dependency order. */
  start?(ctx: PluginContext<Settings, State>): Promise<void> | void;
  /**
   * Runs once every plugin started and the agent runtime is built, in start
   * order: `Operations`, `Hooks` and `Store` resolve here (and later), so a
   * plugin can start, approve, resume and complete operations. A failure
   * fails `kernel.start()` naming the plugin (PLUGIN_READY_FAILED), and
   * everything that started is stopped.
   */
  ready?(ctx: PluginContext<Settings, State>): Promise<void> | void;
  /**
   * Releases what start acquired; runs in reverse order, also after a failed
   * start. By then the kernel refuses new work and the runtime's loops have
   * stopped (see `Kernel.stop`).
   */
  stop?(ctx: PluginContext<Settings, State>): Promise<void> | void;
}

/** A declared plugin, as `definePlugin` returns it and `createKernel({ plugins })` takes it. */
export type Plugin = Readonly<PluginDefinition<unknown, unknown>>;

/** What a plugin id must look like: kebab-case (`greeting-tools`). */
export const PLUGIN_ID_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/**
 * Declares a plugin. Returns a frozen copy, so later changes to the object
 * change nothing. With a `settings` schema, `ctx.settings` is typed as its
 * output; with `state`, `ctx.state` is typed as what it returns.
 */
export function definePlugin<Settings = undefined, State = undefined>(definition: PluginDefinition<Settings, State>): Plugin {
  return Object.freeze({
    ...definition,
    requires: Object.freeze([...(definition.requires ?? [])]),
    optional: Object.freeze([...(definition.optional ?? [])]),
    provides: Object.freeze([...(definition.provides ?? [])]),
    drivers: Object.freeze((definition.drivers ?? []).map((d) => Object.freeze({ kind: d.kind, name: d.name }))),
  }) as Plugin;
}

/** A plugin's lifecycle state, as `kernel.plugins()` reports it. */
export type PluginState = 'registered' | 'starting' | 'started' | 'failed' | 'stopping' | 'stopped';
