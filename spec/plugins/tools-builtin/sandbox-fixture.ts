import { mkdtemp, mkdir, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../../kernel/logger.js';
import type { ToolExecutionContext } from '../../../kernel/tools.js';
import { BuiltinToolSource } from '../../../plugins/tools-builtin/builtin-tool-source.js';
import { createSandboxFs } from '../../../plugins/tools-builtin/sandbox-path.js';

/** A temp folder with `sandbox/` (the root) and a sibling `outside/` the tools must never reach. */
export interface SandboxFixture {
  base: string;
  root: string;
  outside: string;
  source: BuiltinToolSource;
  call(identifier: string, apiName: string, args: Record<string, unknown>): Promise<{ content: string; data?: unknown }>;
  cleanup(): Promise<void>;
}

export async function createSandboxFixture(options: { readLimitBytes?: number; now?: () => Date } = {}): Promise<SandboxFixture> {
  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-tools-')));
  const root = path.join(base, 'sandbox');
  const outside = path.join(base, 'outside');
  await mkdir(root);
  await mkdir(outside);
  const source = new BuiltinToolSource({
    sandbox: createSandboxFs(root),
    logger: createLogger({ level: 'silent' }),
    ...options,
  });
  return {
    base,
    root,
    outside,
    source,
    async call(identifier, apiName, args) {
      const result = await source.execute({ identifier, apiName, args }, toolContext());
      return typeof result === 'string' ? { content: result } : result;
    },
    cleanup: () => rm(base, { recursive: true, force: true }),
  };
}

export function toolContext(signal: AbortSignal = new AbortController().signal): ToolExecutionContext {
  return { operationId: 'op-spec', toolCallId: 'call-spec', agentId: 'agent-spec', signal };
}
