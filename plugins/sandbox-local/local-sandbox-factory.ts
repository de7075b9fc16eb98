import type { SandboxFactory } from '../../kernel/sandbox.js';
import { createSandboxFs } from '../../kernel/sandbox-fs.js';
import { DEFAULT_LOCAL_SANDBOX_LIMITS, LocalSandbox, type LocalSandboxLimits } from './local-sandbox.js';

/**
 * A sandbox factory for `useSandbox`: a folder on this host (`root`,
 * resolved against the process's working directory, made on first use),
 * confined like the `sandbox-local` plugin's, with `limits` over the
 * defaults. Each call of the factory (once per submission) makes a new
 * `LocalSandbox` over the same folder. Synchronous, no I/O; CONFIG_INVALID
 * for an empty root or the file system's root.
 */
export function localSandbox(root: string, limits: Partial<LocalSandboxLimits> = {}): SandboxFactory {
  const fs = createSandboxFs(root);
  const merged: LocalSandboxLimits = Object.freeze({ ...DEFAULT_LOCAL_SANDBOX_LIMITS, ...limits });
  return () => new LocalSandbox(fs, merged);
}
