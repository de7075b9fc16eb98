import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig } from '../../../index.js';
import type { AgentDefinition } from '../../../kernel/agent-definition.js';
import type { Kernel } from '../../../kernel/kernel.js';
import { createLogger, type LogRecord } from '../../../kernel/logger.js';
import type { ToolResult } from '../../../kernel/messages.js';
import { definePlugin } from '../../../kernel/plugin.js';
import type { OperationEvent } from '../../../kernel/runtime/operation-events.js';
import { ModelProviders, ToolPolicies, ToolSources } from '../../../kernel/tokens.js';
import type { ToolPolicy, ToolPolicyDecision } from '../../../kernel/tool-policy.js';
import type { ToolDefinition, ToolSource } from '../../../kernel/tools.js';
import { RecordingModel, scripted } from '../../helpers/runtime-fixtures.js';

const PARAMS = { type: 'object', properties: { description: { type: 'string' } }, additionalProperties: true };

/** `files/write` (declares the progress argument `description`), `files/fail` (throws), `files/secret` (answers a secret). */
export class FileTools implements ToolSource {
  readonly id = 'file-tools';
  runs = 0;
  list(): ToolDefinition[] {
    return [
      { identifier: 'files', apiName: 'write', description: 'Writes a file', parameters: PARAMS, progressArgument: 'description', toolSource: 'files' },
      { identifier: 'files', apiName: 'fail', description: 'Always fails', parameters: PARAMS, toolSource: 'files' },
      { identifier: 'files', apiName: 'secret', description: 'Answers a secret', parameters: PARAMS, toolSource: 'files' },
    ];
  }
  async execute(call: { apiName: string; args: Record<string, unknown> }): Promise<string | { content: string; data: unknown }> {
    this.runs += 1;
    if (call.apiName === 'fail') throw new Error('disk full at /home/alice');
    if (call.apiName === 'secret') return { content: 'token sk-live-123 for 123-45-6789', data: { ssn: '123-45-6789' } };
    return `Wrote ${String(call.args.path)}`;
  }
}

/** A result policy: denies `files/secret` results when `deny` is set, and redacts `sk-live-…` otherwise. */
export class ResultPolicy implements ToolPolicy {
  deny = false;
  async evaluateToolCall(): Promise<ToolPolicyDecision> {
    return { effect: 'allow', policyIds: [] };
  }
  async evaluateToolResult(event: { apiName: string; result: ToolResult }): Promise<ToolPolicyDecision> {
    if (event.apiName !== 'secret') return { effect: 'allow', policyIds: [] };
    if (this.deny) return { effect: 'deny', reason: 'Secrets stay inside.', policyIds: ['no-secrets'] };
    return { effect: 'allow', policyIds: ['redact'], redactedResult: { ...event.result, content: event.result.content.replace(/sk-live-\d+/g, '[key]') } };
  }
}

export interface World {
  kernel: Kernel;
  logs: LogRecord[];
  model: RecordingModel;
  tools: FileTools;
  policy: ResultPolicy;
  timeline: string[];
  events: OperationEvent[];
  cleanup(): Promise<void>;
}

/** A started kernel on a real SQLite file with the file tools, the result policy, the recorded model, and every event in `timeline`. */
export async function startWorld(): Promise<World> {
  const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-tool-hooks-')));
  const logs: LogRecord[] = [];
  const tools = new FileTools();
  const policy = new ResultPolicy();
  const model = new RecordingModel();
  const plugin = definePlugin({
    id: 'tool-hooks-spec',
    provides: [ToolSources, ModelProviders, ToolPolicies],
    register: (ctx) => {
      ctx.bindValue(ToolSources, tools);
      ctx.bindValue(ModelProviders, model);
      ctx.bindValue(ToolPolicies, policy);
    },
  });
  const kernel = createKernel({ config: loadConfig({ cwd: dir, env: {} }), plugins: [plugin], logger: createLogger({ level: 'debug', sink: (_l, r) => logs.push(r) }), env: {} });
  await kernel.start();
  const timeline: string[] = [];
  const events: OperationEvent[] = [];
  kernel.events.on((e) => {
    events.push(e);
    if (e.type === 'thread_event') timeline.push(`event ${e.event} ${JSON.stringify(e.data)}`);
    if (e.type === 'tool_finished') timeline.push(`tool_finished ${e.result.content}`);
  });
  return { kernel, logs, model, tools, policy, timeline, events, cleanup: async () => { await kernel.stop(); await rm(dir, { recursive: true, force: true }); } };
}

export const call = (apiName: string, args: Record<string, unknown> = {}) => ({ toolCalls: [{ identifier: 'files', apiName, args }] });
export const agent = (id: string, turns: unknown[]): AgentDefinition => ({ id, model: scripted(turns, { provider: 'recorded' }), tools: ['files/write', 'files/fail', 'files/secret'] }) as AgentDefinition;

