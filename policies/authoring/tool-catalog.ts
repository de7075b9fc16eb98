import 'reflect-metadata';
import { container as rootContainer, instanceCachingFactory } from 'tsyringe';
import type { HookgateConfig } from '../../config/defaults.js';
import { errorMessage } from '../../kernel/errors.js';
import { createLogger, SecretScrubber } from '../../kernel/logger.js';
import type { Plugin, PluginContext } from '../../kernel/plugin.js';
import { orderPlugins } from '../../kernel/plugin-graph.js';
import { validatePluginSettings } from '../../kernel/plugin-settings.js';
import { SUBAGENT_IDENTIFIER, SUBAGENT_PARAMETERS } from '../../kernel/runtime/next-step.js';
import type { Token } from '../../kernel/token.js';
import { Config, Environment, Logger, Secrets, ToolSources } from '../../kernel/tokens.js';
import type { JsonSchema } from './json-schema-lookup.js';

/** One tool a policy can match: `identifier/apiName` and its input schema. */
export interface CatalogTool {
  key: string;
  identifier: string;
  apiName: string;
  /** The tool source's id (`builtin`, `mcp:<server>`...). */
  toolSource: string;
  /** The plugin that provides the source. */
  plugin?: string;
  /** JSON Schema of the arguments (`ToolSpec.parameters`). */
  parameters: JsonSchema;
  /** The source has `canonicalArgs` (it may describe any argument as a path, URL or command). */
  describesCanonical: boolean;
}

/** The tools `policy check` knows, and what it could not read. */
export interface ToolCatalog {
  tools: CatalogTool[];
  /** Sub-agent calls (`agents/<id>`): ids come from agent files, so any id is accepted; this is their schema. */
  subagents: { identifier: string; parameters: JsonSchema };
  /** Where the tools came from, for the summary line. */
  sources: string[];
  /** Plugins whose tools could not be listed (the catalog is incomplete). */
  problems: string[];
}

const CORE_TOKENS: readonly Token<unknown>[] = [Config, Logger, Secrets, Environment];

/**
 * Reads the tool catalog of the plugins a config selects without starting
 * anything: the plugins that provide `ToolSources`, and the plugins they need,
 * run `register` (no I/O by contract) in a container of their own; then every
 * source's `list()` gives its tools and schemas. No store is opened, no
 * sandbox folder created, no worker started. A plugin that fails to register
 * or list is reported in `problems`.
 */
export function readToolCatalog(config: HookgateConfig, plugins: readonly Plugin[]): ToolCatalog {
  const catalog: ToolCatalog = { tools: [], subagents: { identifier: SUBAGENT_IDENTIFIER, parameters: SUBAGENT_PARAMETERS as JsonSchema }, sources: [], problems: [] };
  const needed = withRequirements(plugins.filter((p) => provides(p, ToolSources)), plugins);
  let order: Plugin[];
  try {
    order = orderPlugins(needed, CORE_TOKENS);
  } catch (err) {
    catalog.problems.push(`the plugin graph is invalid: ${errorMessage(err)}`);
    return catalog;
  }
  const container = rootContainer.createChildContainer();
  container.registerInstance(Config.key, config);
  container.registerInstance(Logger.key, createLogger({ level: 'silent' }));
  container.registerInstance(Secrets.key, new SecretScrubber());
  container.registerInstance(Environment.key, process.env);
  const has = (t: Token<unknown>) => container.isRegistered(t.key, true);
  let settings = new Map<string, unknown>();
  try {
    settings = validatePluginSettings(plugins, config.plugins?.settings ?? {});
  } catch (err) {
    catalog.problems.push(errorMessage(err));
  }
  // Each plugin's instance state for this catalog's container, as a kernel would make it.
  const states = new Map<string, unknown>();
  const context = (plugin: Plugin): PluginContext => {
    if (!states.has(plugin.id)) states.set(plugin.id, plugin.state?.());
    const ctx: PluginContext = {
      container,
      pluginId: plugin.id,
      settings: settings.get(plugin.id),
      state: states.get(plugin.id),
      resolve: <T>(t: Token<T>) => (t.multi ? (container.resolveAll(t.key)[0] as T) : (container.resolve(t.key) as T)),
      resolveAll: <T>(t: Token<T>) => (has(t) ? (container.resolveAll(t.key) as T[]) : []),
      has,
      bindValue: (token, value) => {
        container.registerInstance(token.key, value);
        if (token.key === ToolSources.key) bound.push(plugin.id);
      },
      bindFactory: (token, factory) => {
        container.register(token.key, { useFactory: instanceCachingFactory(() => factory(ctx)) });
        if (token.key === ToolSources.key) bound.push(plugin.id);
      },
    };
    return ctx;
  };
  const bound: string[] = [];
  for (const p of order) {
    try {
      p.register(context(p));
    } catch (err) {
      if (provides(p, ToolSources)) catalog.problems.push(`plugin "${p.id}" did not register: ${errorMessage(err)}`);
    }
  }
  const sources = has(ToolSources) ? container.resolveAll(ToolSources.key) : [];
  sources.forEach((source, i) => {
    const s = source as import('../../kernel/tools.js').ToolSource;
    const plugin = bound[i];
    try {
      for (const t of s.list()) {
        catalog.tools.push({
          key: `${t.identifier}/${t.apiName}`,
          identifier: t.identifier,
          apiName: t.apiName,
          toolSource: t.toolSource ?? s.id,
          plugin,
          parameters: (t.parameters ?? {}) as JsonSchema,
          describesCanonical: typeof s.canonicalArgs === 'function',
        });
      }
      catalog.sources.push(plugin ? `${s.id} (${plugin})` : s.id);
    } catch (err) {
      catalog.problems.push(`tool source "${s.id}"${plugin ? ` of plugin "${plugin}"` : ''} could not list its tools without starting: ${errorMessage(err)}`);
    }
  });
  return catalog;
}

function provides(p: Plugin, token: Token<unknown>): boolean {
  return (p.provides ?? []).some((t) => t.key === token.key);
}

/** `selected` plus, transitively, the plugins that provide what they require. */
function withRequirements(selected: readonly Plugin[], all: readonly Plugin[]): Plugin[] {
  const out = new Set(selected);
  const queue = [...selected];
  while (queue.length > 0) {
    const p = queue.pop()!;
    for (const req of [...(p.requires ?? []), ...(p.optional ?? [])]) {
      if (CORE_TOKENS.some((t) => t.key === req.key)) continue;
      for (const candidate of all) {
        if (!out.has(candidate) && provides(candidate, req)) {
          out.add(candidate);
          queue.push(candidate);
        }
      }
    }
  }
  return all.filter((p) => out.has(p));
}
