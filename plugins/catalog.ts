import type { HookgateConfig } from '../config/defaults.js';
import type { Plugin } from '../kernel/plugin.js';
import modelOpenai from './model-openai/index.js';
import modelScripted from './model-scripted/index.js';
import policyEngine from './policy-engine/index.js';
import storeMemory from './store-memory/index.js';
import storeSqlite from './store-sqlite/index.js';
import toolsBuiltin from './tools-builtin/index.js';
import transportFetch from './transport-fetch/index.js';
import transportQstash from './transport-qstash/index.js';

/**
 * The plugins a config selects. An embedded install and a scaled-out one
 * differ only here, by config: the kernel never imports a plugin.
 */
export function pluginsForConfig(config: HookgateConfig): Plugin[] {
  return [
    config.store.driver === 'memory' ? storeMemory : storeSqlite,
    modelScripted,
    modelOpenai,
    toolsBuiltin,
    transportFetch,
    transportQstash,
    policyEngine,
  ];
}
