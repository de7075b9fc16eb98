import type { ChildProcess } from 'node:child_process';
import type { Kernel } from '../../../kernel/kernel.js';
import type { SubmissionRecord } from '../../../kernel/submissions.js';
import type { AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import type { OperationRecord } from '../../../kernel/store.js';
import type { AgentHook } from '../../../kernel/hooks/hook-types.js';
import { AGENT_FUNCTION_SOURCE_ID, type StartAgentEntry } from '../../../plugins/agent-api/agent.js';
import { agentFunctionSource } from '../../../plugins/agent-api/agent-function-source.js';
import { createAgentDirectory } from '../../../plugins/agent-api/agent-identity.js';
import { startKernel, type FixtureOptions, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/** A kernel (memory store unless told) serving `agents` through the agent-functions source. */
export async function startAgentKernel(agents: readonly StartAgentEntry[], options: FixtureOptions = {}): Promise<RuntimeFixture> {
  const fx = await startKernel(options);
  try {
    addAgentFunctions(fx.kernel, agents);
  } catch (err) {
    await fx.cleanup();
    throw err;
  }
  return fx;
}

/** Adds the agent-functions source for `agents` to a started kernel. */
export function addAgentFunctions(kernel: Kernel, agents: readonly StartAgentEntry[]): void {
  kernel.agentSources.add(agentFunctionSource(createAgentDirectory(agents), kernel.store));
}

/** Creates the thread of an instance (`id` is `props.id`) of agent `identity`; resolves its thread id. */
export async function instanceThread(kernel: Kernel, identity: string, id: string, extra: { initialData?: unknown; values?: Record<string, unknown> } = {}): Promise<string> {
  const threadId = `thread-${identity}-${id}`;
  await kernel.store.createThread({ id: threadId, agentId: identity, instanceId: id, ...extra });
  return threadId;
}

/** Runs one operation of agent `identity` to its end. */
export async function runAgent(kernel: Kernel, identity: string, prompt: string, options: { threadId?: string; hooks?: AgentHook[] } = {}): Promise<OperationRecord> {
  const handle = await kernel.execAgent({ agentSource: AGENT_FUNCTION_SOURCE_ID, agentId: identity, prompt, ...options });
  return handle.completed();
}

/** A scripted model block played by the `recorded` provider (requests are kept on `fx.model`). */
export function recordedModel(turns: unknown[], extra: Record<string, unknown> = {}): { provider: string; turns: unknown[] } {
  return { provider: 'recorded', turns, ...extra };
}

/** A scripted turn calling the agent function tool `name`. */
export function agentToolTurn(name: string, args: Record<string, unknown> = {}, id?: string): Record<string, unknown> {
  return { toolCalls: [{ ...(id ? { id } : {}), identifier: 'agent', apiName: name, args }] };
}

/** Polls the store until the submission is settled (completed, failed or aborted). */
export async function settledSubmission(runtime: AgentRuntimeHandle, id: string): Promise<SubmissionRecord> {
  for (;;) {
    const found = await runtime.kernel.store.getSubmission(id);
    if (found && ['completed', 'failed', 'aborted'].includes(found.status)) return found;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Resolves when a crash-spec child prints `{"type":"hanging"}` (rejects if it exits first). */
export function untilHanging(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('"type":"hanging"')) resolve();
    });
    child.on('close', (code) => reject(new Error(`the child exited (${code}) before hanging: ${stderr}`)));
  });
}
