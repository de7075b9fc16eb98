import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig } from '../../index.js';
import { HOOK_TYPES, type AgentHook } from '../../kernel/hooks/hook-types.js';
import type { Kernel } from '../../kernel/kernel.js';
import { definePlugin } from '../../kernel/plugin.js';
import { ToolSources } from '../../kernel/tokens.js';
import { defineHook, type ThreadHookOptions } from '../../threads.js';
import type { ToolSource } from '../../kernel/tools.js';
import { modelAndToolSteps, modelSteps, type ConversationCount, type Contender } from './contender.js';

const AGENT_ID = 'bench-agent';

/**
 * The in-memory contenders' retention (config `retention:`, applied by the bundled store-retention plugin): the
 * newest 100 operations of the agent are kept, a pass every second removes the rest. The AI SDK keeps nothing
 * between conversations; without a limit the memory store keeps every conversation of the run (~50 KB each at 20
 * calls), so its heap, and the cost of every major GC, grows for as long as the bench runs (bench/README.md,
 * "Issue 12: the in-memory step loop at 2x ai 7"). `hookgate-memory-keep-all` is the contender without it.
 */
export const MEMORY_RETENTION = { maxOperations: 100, interval: '1s' } as const;

/**
 * The message and tool-result thread hooks (document 003), one no-op of each, plus a second `before_create_message`
 * (a chain of two on every write): issue 15's "10 registered no-op thread hooks".
 */
const THREAD_BENCH_HOOKS = [
  'before_create_message', 'before_create_message', 'after_create_message', 'before_update_message', 'after_update_message',
  'before_store_tool_result', 'after_tool_call_success', 'after_tool_call_failure', 'tool_call_started', 'tool_call_done',
] as const;

/**
 * hookgate with the in-memory store or with every step persisted to a SQLite
 * file in a fresh temp folder (removed by `teardown`). One kernel serves all
 * conversations, like a long-running process; each conversation is one
 * `execAgent` with 16 no-op handlers (one per hook type) awaited with
 * `handle.completed()`. The model is model-scripted, which keeps no history
 * of its calls; every turn states its usage (10 prompt, 5 completion tokens,
 * as the AI SDK contenders' model does), so no turn estimates tokens from
 * the history.
 */
export function hookgateContender(store: 'memory' | 'sqlite', calls: number, options: { threadHooks?: boolean; keepAll?: boolean } = {}): Contender {
  const retained = store === 'memory' && options.keepAll !== true;
  let kernel: Kernel | undefined;
  let dir: string | undefined;
  let dbFile: string | undefined;
  let toolRuns = 0;
  let hookCalls = 0;
  let conversations = 0;

  const source: ToolSource = {
    id: 'bench',
    list: () => [
      {
        identifier: 'bench',
        apiName: 'noop',
        description: 'Does nothing.',
        parameters: { type: 'object', properties: { i: { type: 'number' } }, required: ['i'] },
        toolSource: 'builtin',
      },
    ],
    execute: async () => {
      toolRuns++;
      return 'ok';
    },
  };
  const benchPlugin = definePlugin({
    id: 'bench-tools',
    description: 'one no-op tool for the step-loop benchmark',
    provides: [ToolSources],
    register: (ctx) => ctx.bindValue(ToolSources, source),
  });
  // One no-op handler per hook type; the counter only proves they ran.
  const hooks: AgentHook[] = HOOK_TYPES.map((type) => ({ id: `bench-${type}`, type, handler: () => void hookCalls++ }) as AgentHook);
  // Issue 15's target: 10 no-op thread hooks, one per message and tool-result hook (null keeps every value), declared with
  // defineHook as document 003 declares them (a plain object is validated again by every execAgent).
  const threadHooks =
    options.threadHooks !== true ? undefined : THREAD_BENCH_HOOKS.map((hook, i) => defineHook({ hook, id: `bench_${i}_${hook}`, execute: () => void hookCalls++ } as ThreadHookOptions<typeof hook>));

  return {
    name: `hookgate-${store}${threadHooks ? '-thread-hooks' : ''}${store === 'memory' && !retained ? '-keep-all' : ''}`,
    calls,
    description:
      store === 'memory'
        ? `createKernel, store-memory (${retained ? `retention: newest ${MEMORY_RETENTION.maxOperations} operations, pruned every ${MEMORY_RETENTION.interval}` : 'keeps every operation'}), model-scripted, 1 no-op tool, 16 no-op hook handlers${threadHooks ? ', 10 no-op thread hooks' : ''}`
        : 'createKernel, store-sqlite (temp file, WAL, synchronous=NORMAL), model-scripted, 1 no-op tool, 16 no-op hook handlers',
    async setup() {
      dir = mkdtempSync(path.join(os.tmpdir(), 'hookgate-bench-'));
      dbFile = path.join(dir, 'bench.db');
      const env: NodeJS.ProcessEnv = { HOOKGATE_STORE__DRIVER: store, HOOKGATE_LOG__LEVEL: 'error' };
      if (store === 'sqlite') env.HOOKGATE_STORE__SQLITE__PATH = dbFile;
      if (retained) {
        env.HOOKGATE_RETENTION__MAX_OPERATIONS = String(MEMORY_RETENTION.maxOperations);
        env.HOOKGATE_RETENTION__INTERVAL = MEMORY_RETENTION.interval;
      }
      kernel = createKernel({ config: loadConfig({ cwd: dir, env }), plugins: [benchPlugin], env: {} });
      await kernel.start();
      const usage = { promptTokens: 10, completionTokens: 5 };
      const turns = [
        ...Array.from({ length: calls }, (_, i) => ({ toolCalls: [{ identifier: 'bench', apiName: 'noop', args: { i } }], usage })),
        { text: 'done', usage },
      ];
      kernel.agents.define({ id: AGENT_ID, model: { provider: 'scripted', turns }, tools: ['bench/*'], limits: { maxSteps: modelAndToolSteps(calls) + 10 } });
    },
    async runConversation(index: number): Promise<ConversationCount> {
      const before = toolRuns;
      const handle = await kernel!.execAgent({ agentId: AGENT_ID, prompt: `Conversation ${index}: call the tool ${calls} times.`, hooks, ...(threadHooks ? { threadHooks } : {}) });
      const record = await handle.completed();
      if (record.reason !== 'done') throw new Error(`hookgate conversation ${index} ended with ${record.reason ?? record.status}: ${record.error?.message ?? ''}`);
      conversations++;
      const steps = record.state.stepIndex;
      if (steps !== modelAndToolSteps(calls)) throw new Error(`hookgate conversation ${index} took ${steps} steps, expected ${modelAndToolSteps(calls)}`);
      return { modelSteps: record.state.modelTurns ?? modelSteps(calls), toolSteps: toolRuns - before };
    },
    facts() {
      const out: Record<string, number | string> = { hookCallsPerConversation: conversations ? Math.round(hookCalls / conversations) : 0 };
      if (store === 'sqlite' && dbFile) {
        out.dbBytes = sizeOf(dbFile);
        out.walBytes = sizeOf(`${dbFile}-wal`);
      }
      return out;
    },
    async teardown() {
      await kernel?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
