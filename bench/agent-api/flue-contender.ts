import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { modelSteps, type ConversationCount, type Contender } from '../step-loop/contender.js';
import { importPeer } from '../step-loop/peer-packages.js';

// The peer's surface as this bench uses it (its types are not a build dependency).
type FlueAgent = (() => string | undefined) & { agentName?: string };
interface FlueRuntime {
  setProvider(provider: unknown): void;
  useModel(specifier: string): void;
  useTool(tool: unknown): void;
  defineTool(definition: { name: string; description: string; input: unknown; run: (args: unknown) => Promise<unknown> }): unknown;
  init(agent: FlueAgent, options?: { id?: string }): {
    dispatch(message: string): Promise<{ submissionId: string }>;
    read(receipt: { submissionId: string }): Promise<{ text: string }>;
  };
}
interface FlueNode {
  start(options: { agents: FlueAgent[]; db?: unknown }): Promise<{ stop(): Promise<void> }>;
  sqlite(file: string): unknown;
}
interface Faux {
  fauxProvider(options: { provider: string; models: { id: string }[] }): { provider: unknown; setResponses(steps: unknown[]): void; state: { callCount: number } };
  fauxAssistantMessage(content: unknown, options?: { stopReason?: string }): unknown;
  fauxToolCall(name: string, args: Record<string, unknown>): unknown;
}
interface Valibot {
  object(entries: Record<string, unknown>): unknown;
  number(): unknown;
}

/**
 * `@flue/runtime` (document 001's reference) on the same conversation as the
 * hookgate agent-API contender: an agent function with `useModel` and one
 * no-op `defineTool` tool, its model pi-ai's faux provider (the reference's
 * own test model, answering from a list of scripted turns: `calls` tool
 * calls, then the text `done`), in memory (the default in-memory SQLite of
 * `start()`) or with `sqlite(<file>)`. One conversation is one send to a
 * fresh instance, awaited to its reply: Flue 2.1's handle `dispatch()`
 * resolves at admission with a receipt and `read(receipt)` awaits the reply
 * (document 001 folds the two into `handle.dispatch()`, as hookgate does).
 * Runs under Node 22.19 or later (`node:sqlite`).
 */
export function flueContender(store: 'memory' | 'sqlite', calls: number): Contender {
  let flue: FlueRuntime | undefined;
  let runtime: { stop(): Promise<void> } | undefined;
  let faux: ReturnType<Faux['fauxProvider']> | undefined;
  let script: unknown[] = [];
  let agent: FlueAgent | undefined;
  let dir: string | undefined;
  let dbFile: string | undefined;
  let toolRuns = 0;
  let version = '';

  return {
    name: `flue-${store}`,
    calls,
    get description() {
      return `@flue/runtime ${version} start({ agents${store === 'sqlite' ? ", db: sqlite(<tmp file>)" : ''} }), init(agent, { id }).dispatch() + read(), faux provider`;
    },
    async setup() {
      const runtimeModule = await importPeer<FlueRuntime>('@flue/runtime');
      version = runtimeModule.version;
      flue = runtimeModule.module;
      const node = (await importPeer<FlueNode>('@flue/runtime', './node')).module;
      const fauxModule = (await importPeer<Faux>('@earendil-works/pi-ai', './providers/faux')).module;
      const v = (await importPeer<Valibot>('valibot')).module;
      faux = fauxModule.fauxProvider({ provider: 'bench', models: [{ id: 'scripted' }] });
      flue.setProvider(faux.provider);
      for (let i = 0; i < calls; i++) script.push(fauxModule.fauxAssistantMessage(fauxModule.fauxToolCall('noop', { i }), { stopReason: 'toolUse' }));
      script.push(fauxModule.fauxAssistantMessage('done'));
      const tool = flue.defineTool({
        name: 'noop',
        description: 'Does nothing.',
        input: v.object({ i: v.number() }),
        run: async () => {
          toolRuns++;
          return 'ok';
        },
      });
      const f = flue;
      agent = function BenchAgent() {
        f.useModel('bench/scripted');
        f.useTool(tool);
        return 'You are a bench.';
      };
      if (store === 'sqlite') {
        dir = mkdtempSync(path.join(os.tmpdir(), 'agent-api-bench-flue-'));
        dbFile = path.join(dir, 'flue.db');
      }
      runtime = await node.start({ agents: [agent], db: dbFile ? node.sqlite(dbFile) : undefined });
    },
    async runConversation(index): Promise<ConversationCount> {
      const before = { calls: faux!.state.callCount, tools: toolRuns };
      faux!.setResponses(script);
      const handle = flue!.init(agent!, { id: `bench-${index}` });
      const reply = await handle.read(await handle.dispatch('go'));
      if (reply.text !== 'done') throw new Error(`flue-${store}: conversation ${index} ended with ${JSON.stringify(reply.text)}`);
      return { modelSteps: faux!.state.callCount - before.calls, toolSteps: toolRuns - before.tools };
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
