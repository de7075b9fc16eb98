import type { HookgateConfig } from '../config/defaults.js';
import { HookgateError } from '../kernel/errors.js';
import type { Plugin } from '../kernel/plugin.js';
import mcp from './mcp/index.js';
import modelAnthropic from './model-anthropic/index.js';
import modelOpenai from './model-openai/index.js';
import modelScripted from './model-scripted/index.js';
import policyEngine from './policy-engine/index.js';
import { loadPluginModules } from './plugin-modules.js';
import storeMemory from './store-memory/index.js';
import storePostgres from './store-postgres/index.js';
import storeRetention from './store-retention/index.js';
import storeSqlite from './store-sqlite/index.js';
import toolsBuiltin from './tools-builtin/index.js';
import transportFetch from './transport-fetch/index.js';
import transportQstash from './transport-qstash/index.js';
import sandboxLocal from './sandbox-local/index.js';
import executionQueue from './execution-queue/index.js';
import threadHooks from './thread-hooks/index.js';

/** The plugins that ship with hookgate, in start-order tie-break order. */
export const BUNDLED_PLUGINS: readonly Plugin[] = [storeSqlite, storeMemory, storePostgres, modelScripted, modelOpenai, modelAnthropic, toolsBuiltin, mcp, transportFetch, transportQstash, policyEngine, storeRetention, sandboxLocal, threadHooks, executionQueue];

/**
 * The config keys that pick one plugin among those offering a driver kind:
 * `store.driver: sqlite` keeps the plugin with `drivers: [{ kind: 'store', name: 'sqlite' }]`
 * and drops the other store plugins. A new driver is a new plugin, not an edit here.
 */
function selectedDrivers(config: HookgateConfig): { kind: string; field: string; name: string }[] {
  const drivers = [{ kind: 'store', field: 'store.driver', name: config.store.driver }];
  // In-process execution is the kernel's own: no plugin offers it, so every execution plugin is dropped below.
  if (config.execution === 'queue') drivers.push({ kind: 'execution', field: 'execution', name: 'queue' });
  return drivers;
}

/**
 * The plugins a config selects, from the bundled ones and `extra` (the
 * loaded `plugins.extra` modules, after the bundled ones): for each driver
 * kind the config selects, the one plugin offering that name. An embedded
 * install and a scaled-out one differ only here, by config: the kernel never
 * imports a plugin. Throws CONFIG_INVALID for a name no plugin offers,
 * listing the names on offer, and for two plugins offering one name.
 */
export function pluginsForConfig(config: HookgateConfig, extra: readonly Plugin[] = []): Plugin[] {
  let plugins = [...BUNDLED_PLUGINS, ...extra];
  if (config.execution !== 'queue') plugins = plugins.filter((p) => !(p.drivers ?? []).some((d) => d.kind === 'execution'));
  for (const { kind, field, name } of selectedDrivers(config)) {
    const offering = plugins.filter((p) => (p.drivers ?? []).some((d) => d.kind === kind));
    const chosen = offering.filter((p) => (p.drivers ?? []).some((d) => d.kind === kind && d.name === name));
    if (chosen.length === 0) {
      const available = [...new Set(offering.flatMap((p) => (p.drivers ?? []).filter((d) => d.kind === kind).map((d) => `${d.name} (${p.id})`)))];
      throw new HookgateError(
        'CONFIG_INVALID',
        `${whereSet(config, field)}${field}: no plugin provides the ${kind} driver ${JSON.stringify(name)}; available: ${available.join(', ') || 'none'}. A plugin declares it with drivers: [{ kind: '${kind}', name: '${name}' }]; load it with plugins.extra`,
        { details: { field, driver: name, available } },
      );
    }
    if (chosen.length > 1) {
      throw new HookgateError('CONFIG_INVALID', `${whereSet(config, field)}${field}: plugins ${chosen.map((p) => `"${p.id}"`).join(' and ')} both provide the ${kind} driver ${JSON.stringify(name)}; only one may`, {
        details: { field, driver: name, plugins: chosen.map((p) => p.id) },
      });
    }
    plugins = plugins.filter((p) => !offering.includes(p) || chosen.includes(p));
  }
  return plugins;
}

/** `HOOKGATE_STORE__DRIVER: ` or `hookgate.config.yaml: ` when loadConfig recorded where `field` was set; nothing for defaults. */
function whereSet(config: HookgateConfig, field: string): string {
  const where = config.source?.env[field] ?? config.source?.file;
  return where && where !== '(defaults)' ? `${where}: ` : '';
}

/**
 * {@link pluginsForConfig} with the `plugins.extra` modules loaded (by path
 * relative to the config file, or package name): the whole plugin list of a
 * config. Asynchronous, since loading a module is.
 */
export async function resolvePlugins(config: HookgateConfig): Promise<Plugin[]> {
  return pluginsForConfig(config, await loadPluginModules(config.plugins.extra ?? [], config.baseDir));
}
