import type { DependencyContainer } from 'tsyringe';
import type { GenericSchema } from 'valibot';
import type { Token } from './token.js';

/**
 * What a plugin gets while binding and while starting: typed access to the
 * kernel's own child container. `bind*` is allowed only in `register`, and only
 * for tokens the plugin lists in `provides`.
 */
export interface PluginContext<Settings = unknown> {
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
  bindFactory<T>(token: Token<T>, factory: (ctx: PluginContext<Settings>) => T): void;
}

/** What `definePlugin` takes. `Settings` is inferred from the `settings` schema. */
export interface PluginDefinition<Settings = undefined> {
  /** kebab-case, unique within a kernel. */
  readonly id: string;
  readonly description?: string;
  /** Tokens this plugin needs bound (by the kernel or another plugin) before it registers. */
  readonly requires?: readonly Token<unknown>[];
  /** Tokens this plugin uses when present; a missing optional requirement does not make the graph fail. */
  readonly optional?: readonly Token<unknown>[];
  /** Tokens this plugin binds. */
  readonly provides?: readonly Token<unknown>[];
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
  /** Binds tokens; no I/O. Runs for every plugin before any starts. */
  register(ctx: PluginContext<Settings>): void;
  /** May do I/O; runs in dependency order. */
  start?(ctx: PluginContext<Settings>): Promise<void> | void;
  /** Releases what start acquired; runs in reverse order, also after a failed start. */
  stop?(ctx: PluginContext<Settings>): Promise<void> | void;
}

/** A declared plugin, as `definePlugin` returns it and `createKernel({ plugins })` takes it. */
export type Plugin = Readonly<PluginDefinition<unknown>>;

/** What a plugin id must look like: kebab-case (`greeting-tools`). */
export const PLUGIN_ID_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/**
 * Declares a plugin. Returns a frozen copy, so later changes to the object
 * change nothing. With a `settings` schema, `ctx.settings` is typed as its output.
 */
export function definePlugin<Settings = undefined>(definition: PluginDefinition<Settings>): Plugin {
  return Object.freeze({
    ...definition,
    requires: Object.freeze([...(definition.requires ?? [])]),
    optional: Object.freeze([...(definition.optional ?? [])]),
    provides: Object.freeze([...(definition.provides ?? [])]),
  }) as Plugin;
}

/** A plugin's lifecycle state, as `kernel.plugins()` reports it. */
export type PluginState = 'registered' | 'starting' | 'started' | 'failed' | 'stopping' | 'stopped';
