import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineTool, init, start, useModel, useTool, v, type Agent, type AgentRuntimeHandle } from '../../index.js';
import { modelSteps, type ConversationCount, type Contender } from '../step-loop/contender.js';

/**
 * hookgate's document 001 API on the agent-API bench's conversation: an
 * agent function with `useModel` (model-scripted, `calls` turns that call
 * the one `defineTool` tool, then the text `done`, each turn stating its
 * usage) and `useTool`, run by `start({ agents, db })` with the in-memory
 * store or a SQLite file in a fresh temp folder (every step committed, as
 * store-sqlite opens it: WAL, synchronous NORMAL). One conversation is one
 * `init(agent, { id }).dispatch('go')` to a fresh instance, awaited to its
 * reply: admission (the instance thread and the submission stored), the
 * operation, settlement.
 */
export function hookgateAgentApiContender(store: 'memory' | 'sqlite', calls: number): Contender {
  let runtime: AgentRuntimeHandle | undefined;
  let agent: Agent | undefined;
  let dir: string | undefined;
  let dbFile: string | undefined;
  let toolRuns = 0;

  const usage = { promptTokens: 10, completionTokens: 5 };
  const turns = [
    ...Array.from({ length: calls }, (_, i) => ({ toolCalls: [{ identifier: 'agent', apiName: 'noop', args: { i } }], usage })),
    { text: 'done', usage },
  ];

  return {
    name: `hookgate-${store}`,
    calls,
    description: `hookgate start({ agents, db: ${store === 'sqlite' ? '{ sqlite: <tmp file> }' : "'memory'"} }), init(agent, { id }).dispatch(), model-scripted`,
    async setup() {
      const noop = defineTool({
        name: 'noop',
        description: 'Does nothing.',
        input: v.object({ i: v.number() }),
        run: async () => {
          toolRuns++;
          return 'ok';
        },
      });
      agent = function BenchAgent() {
        useModel({ provider: 'scripted', turns });
        useTool(noop);
        return 'You are a bench.';
      };
      if (store === 'sqlite') {
        dir = mkdtempSync(path.join(os.tmpdir(), 'agent-api-bench-hookgate-'));
        dbFile = path.join(dir, 'hookgate.db');
      }
      runtime = await start({
        agents: [agent],
        db: dbFile ? { sqlite: dbFile } : 'memory',
        env: {},
        config: { cwd: dir ?? os.tmpdir(), env: {} },
      });
    },
    async runConversation(index): Promise<ConversationCount> {
      const before = toolRuns;
      const reply = await init(agent!, { id: `bench-${index}` }).dispatch('go');
      // The script has calls + 1 turns: 'done' is its last, so exactly that many model turns ran.
      if (reply.text !== 'done') throw new Error(`hookgate-${store}: conversation ${index} ended with ${JSON.stringify(reply.text)}`);
      return { modelSteps: modelSteps(calls), toolSteps: toolRuns - before };
    },
    facts() {
      return { modelStepsPerConversation: modelSteps(calls), ...(dbFile ? { dbBytes: statSync(dbFile).size } : {}) };
    },
    async teardown() {
      await runtime?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
