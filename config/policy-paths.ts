import fs from 'node:fs';
import type { HookgateConfig } from './defaults.js';

/** The policy packs to load: configured paths as given (they must exist); the default folder only when it exists. */
export function policyPaths(config: HookgateConfig): string[] {
  return config.policies.pathsAreDefault ? config.policies.paths.filter((p) => fs.existsSync(p)) : config.policies.paths;
}
