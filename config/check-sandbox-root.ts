import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { KernelConfig } from '../kernel/kernel-config.js';
import type { HookgateConfig } from './defaults.js';

/** Folders a sandbox root may never be, nor lie inside (pseudo file systems: devices, processes, kernel state). */
const PSEUDO_FILE_SYSTEMS = ['/dev', '/proc', '/sys'];
/** System folders a sandbox root may not be (the agent could rewrite the system). */
const SYSTEM_FOLDERS = ['/bin', '/boot', '/etc', '/lib', '/lib32', '/lib64', '/opt', '/root', '/run', '/sbin', '/srv', '/tmp', '/usr', '/var'];

/**
 * Refuses a sandbox root that would hand the agent more than a scratch folder:
 * the file-system root, a system folder, anything under /dev, /proc or /sys,
 * and any folder that is or contains the data folder, the SQLite file, the
 * folder the config is read from (where hookgate.config.yaml lives or would be
 * created), the user's home folder, or a policy path (and a root inside a
 * policy folder, where the agent could write packs or code policies).
 * Symlinks of the deepest existing ancestor are resolved first, so a root that
 * is a link to `/` is caught too. Returns the reason, or undefined when the
 * root is acceptable. Synchronous; reads only the file-system's link structure.
 */
export function unsafeSandboxRoot(config: HookgateConfig): string | undefined {
  return unsafeHostRoot(config.sandbox.root, config);
}

/** What of the configuration a host folder is judged against: the kernel's part, and the store and policy sections when the config has them. */
export type HostRootConfig = KernelConfig & { store?: Partial<Pick<HookgateConfig['store'], 'driver' | 'sqlite'>>; policies?: Partial<Pick<HookgateConfig['policies'], 'paths'>> };

/**
 * The same judgement for any host folder an agent would get as its files
 * (the config's `sandbox.root`, or the root of a `localSandbox(root)` an
 * agent function mounts with `useSandbox`).
 */
export function unsafeHostRoot(configuredRoot: string, config: HostRootConfig): string | undefined {
  const root = realish(configuredRoot);
  if (path.parse(root).root === root) return 'is the root of the file system: the agent could read or rewrite every file hookgate can';
  if (process.platform !== 'win32') {
    for (const pseudo of PSEUDO_FILE_SYSTEMS) if (isInside(pseudo, root)) return `is inside ${pseudo}, a pseudo file system of devices and kernel state`;
    if (SYSTEM_FOLDERS.includes(root)) return `is the system folder ${root}, shared with the rest of the system: the agent could read or rewrite files that are not its own`;
  }
  const protectedPaths: Array<[string, string]> = [
    [config.baseDir, 'the folder the configuration is read from'],
    [config.dataDir, 'the data folder (dataDir)'],
  ];
  const sqlitePath = config.store?.driver === 'sqlite' ? config.store.sqlite?.path : undefined;
  if (sqlitePath !== undefined && sqlitePath !== ':memory:') protectedPaths.push([sqlitePath, 'the SQLite database (store.sqlite.path)']);
  const home = os.homedir();
  if (home && path.parse(home).root !== home) protectedPaths.push([home, 'the home folder']);
  const policyPaths = config.policies?.paths ?? [];
  for (const p of policyPaths) protectedPaths.push([p, 'a policy path (policies.paths)']);
  for (const [p, what] of protectedPaths) {
    const real = realish(p);
    if (isInside(root, real)) return `${real === root ? 'is' : 'contains'} ${what} ${JSON.stringify(p)}: the agent could read or rewrite it`;
  }
  for (const p of policyPaths) {
    if (isInside(realish(p), root)) return `is inside a policy path (policies.paths) ${JSON.stringify(p)}: the agent could write policy packs and code policies`;
  }
  return undefined;
}

/** Where a sandbox root really is, when a symlink makes that differ from what was configured (for messages). */
export function realSandboxRoot(configured: string): string | undefined {
  const real = realish(configured);
  return real === path.resolve(configured) ? undefined : real;
}

/** True when `child` is `parent` or lies under it. */
function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel));
}

/** The real path of `p`, or of its deepest existing ancestor with the missing rest appended. */
function realish(p: string): string {
  const abs = path.resolve(p);
  try {
    return fs.realpathSync.native(abs);
  } catch {
    const parent = path.dirname(abs);
    return parent === abs ? abs : path.join(realish(parent), path.basename(abs));
  }
}
