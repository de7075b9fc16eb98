import * as v from 'valibot';
import { HookgateConfigToken } from '../../config/config-token.js';
import { definePlugin } from '../../kernel/plugin.js';
import { createSandboxFs } from '../../kernel/sandbox-fs.js';
import { Config, Logger, Sandbox } from '../../kernel/tokens.js';
import { DEFAULT_LOCAL_SANDBOX_LIMITS, LocalSandbox } from './local-sandbox.js';

export { LocalSandbox, DEFAULT_LOCAL_SANDBOX_LIMITS, type LocalSandboxLimits } from './local-sandbox.js';
export { localSandbox } from './local-sandbox-factory.js';

const positive = (max: number) => v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(max)));

/** `plugins.settings.sandbox-local`: exec deadline, output bound per stream, largest file read at once. */
const SettingsSchema = v.strictObject({
  execTimeoutMs: positive(24 * 60 * 60 * 1000),
  maxOutputBytes: positive(256 * 1024 * 1024),
  maxReadBytes: positive(1024 * 1024 * 1024),
});

/**
 * `sandbox-local`: provides the `Sandbox` token (document 001's
 * `harness.sandbox`) over `config.sandbox.root`, the folder the builtin fs
 * tools are confined to, with the same confinement. `register` does no I/O;
 * `start` creates the folder.
 */
export default definePlugin({
  id: 'sandbox-local',
  description: 'The agent environment (exec and file verbs) in the sandbox folder on this host',
  requires: [Config, Logger],
  provides: [Sandbox],
  drivers: [{ kind: 'sandbox', name: 'local' }],
  settings: SettingsSchema,
  state: (): { sandbox?: LocalSandbox; root?: string } => ({}),
  register(ctx) {
    const settings = ctx.settings as v.InferOutput<typeof SettingsSchema>;
    const fs = createSandboxFs(ctx.resolve(HookgateConfigToken).sandbox.root);
    const limits = {
      execTimeoutMs: settings.execTimeoutMs ?? DEFAULT_LOCAL_SANDBOX_LIMITS.execTimeoutMs,
      maxOutputBytes: settings.maxOutputBytes ?? DEFAULT_LOCAL_SANDBOX_LIMITS.maxOutputBytes,
      maxReadBytes: settings.maxReadBytes ?? DEFAULT_LOCAL_SANDBOX_LIMITS.maxReadBytes,
    };
    ctx.state.root = fs.root;
    ctx.state.sandbox = new LocalSandbox(fs, limits);
    ctx.bindValue(Sandbox, ctx.state.sandbox);
  },
  async start(ctx) {
    const root = ctx.state.root ?? ctx.resolve(HookgateConfigToken).sandbox.root;
    await createSandboxFs(root).ensureRoot();
  },
});
