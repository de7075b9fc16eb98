import type { DependencyContainer } from 'tsyringe';
import type { Token } from './token.js';

/**
 * What a plugin gets while binding and while starting: typed access to the
 * kernel's own child container. `bind*` is allowed only in `register`, and only
 * for tokens the plugin lists in `provides`.
 */
export interface PluginContext {
  /** The kernel's tsyringe child container, for `@inject(token.key)` classes. */
  readonly container: DependencyContainer;
  readonly pluginId: string;
  resolve<T>(token: Token<T>): T;
  /** Every value bound to a multi token, in plugin start order. */
  resolveAll<T>(token: Token<T>): T[];
  has(token: Token<unknown>): boolean;
  bindValue<T>(token: Token<T>, value: T): void;
  /** Binds a lazily created singleton. */
  bindFactory<T>(token: Token<T>, factory: (ctx: PluginContext) => T): void;
}

export interface PluginDefinition {
  /** kebab-case, unique within a kernel. */
  readonly id: string;
  readonly description?: string;
  readonly requires?: readonly Token<unknown>[];
  /** Tokens this plugin binds; optional requirements do not make the graph fail when missing. */
  readonly optional?: readonly Token<unknown>[];
  readonly provides?: readonly Token<unknown>[];
  /** Binds tokens; no I/O. Runs for every plugin before any starts. */
  register(ctx: PluginContext): void;
  /** May do I/O; runs in dependency order. */
  start?(ctx: PluginContext): Promise<void> | void;
  /** Releases what start acquired; runs in reverse order, also after a failed start. */
  stop?(ctx: PluginContext): Promise<void> | void;
}

export type Plugin = Readonly<PluginDefinition>;

export const PLUGIN_ID_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/** Declares a plugin. Returns a frozen copy, so later changes to the object change nothing. */
export function definePlugin(definition: PluginDefinition): Plugin {
  return Object.freeze({
    ...definition,
    requires: Object.freeze([...(definition.requires ?? [])]),
    optional: Object.freeze([...(definition.optional ?? [])]),
    provides: Object.freeze([...(definition.provides ?? [])]),
  });
}

export type PluginState = 'registered' | 'starting' | 'started' | 'failed' | 'stopping' | 'stopped';
