import { Config } from '../kernel/tokens.js';
import type { Token } from '../kernel/token.js';
import type { HookgateConfig } from './defaults.js';

/**
 * The kernel's `Config` binding seen as the full `HookgateConfig`: what the
 * bundled plugins resolve to read their sections (`store.sqlite`,
 * `models.openai`, `sandbox`, `policies`, `webhooks.qstash`). It is the same
 * token as `Config` (list `Config` in `requires`); the kernel itself is typed
 * only with its own part (`KernelConfig`), and a kernel built by
 * `createKernel` / `loadConfig` is given a whole `HookgateConfig`.
 */
export const HookgateConfigToken: Token<HookgateConfig> = Config as Token<unknown> as Token<HookgateConfig>;
