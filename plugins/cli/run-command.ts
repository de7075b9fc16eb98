import readline from 'node:readline/promises';
import { loadAgentFile } from '../../config/agent-file.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { AgentHook } from '../../kernel/hooks/hook-types.js';
import type { OperationRecord } from '../../kernel/store.js';
import { HookgateError } from '../../kernel/errors.js';
import type { CliSession } from './cli-session.js';
import { EXIT, exitCodeForOutcome } from './exit-codes.js';
import { resolveOperation, resolvePendingToolCallId } from './id-prefix.js';
import { outcomeOfTree, reportParked, settleTree } from './operation-tree.js';
import { storeName } from './store-name.js';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

export interface RunOptions {
  json?: boolean;
  user?: string;
  /** Continue this thread (`run --thread`). */
  thread?: string;
  hooks?: string;
  /** Approve every approval request without asking (demos, CI). */
  autoApprove?: boolean;
  /** Decisions for successive approval requests, in order: approve | reject | continue (demos, CI). */
  decide?: string[];
}

/**
 * `hookgate run <agent.yaml> [prompt]`: runs the agent and prints its timeline
 * (or NDJSON events with --json). Asks for approval on a terminal; otherwise
 * leaves the operation parked, says how to decide it, and exits 3.
 */
export async function runCommand(session: CliSession, kernel: Kernel, agentFile: string, prompt: string | undefined, options: RunOptions): Promise<number> {
  const agent = loadAgentFile(agentFile, kernel.agents);
  const hooks = options.hooks ? await loadHooksModule(options.hooks) : [];
  const close = session.showTimeline(kernel, options.json);
  try {
    const handle = await kernel.execAgent({ agentId: agent.id, prompt: prompt ?? defaultPrompt(agent.description), hooks, userId: options.user, ...(options.thread ? { threadId: options.thread } : {}) });
    let stoppedByHuman = false;
    for (;;) {
      const waiting = await settleTree(kernel, handle.operationId);
      if (waiting.status !== 'waiting_approval') break;
      const decision = await askApproval(waiting, options);
      if (decision === 'park') {
        reportParked(waiting.id, options.json);
        return EXIT.parked;
      }
      if (decision === 'approve') await kernel.approve(waiting.id);
      else if (decision === 'reject') {
        stoppedByHuman = true;
        await kernel.reject(waiting.id, { reason: 'rejected at the terminal' });
      } else await kernel.rejectAndContinue(waiting.id, { reason: 'rejected at the terminal' });
    }
    const record = await kernel.waitForOperation(handle.operationId, 'terminal');
    // A run a human chose to stop did what was asked; max_steps and cost_limit did not finish the job.
    return exitCodeForOutcome(record, { askedToStop: stoppedByHuman });
  } finally {
    close();
  }
}

/**
 * `hookgate approve|reject|reject-continue <op>`: decides a parked operation
 * (also after a restart: the pending state is in the store) and follows its
 * run, sub-agents and their parents included, until it is over or waits for
 * a human again. `<op>` and `--tool-call` take an id or a unique prefix of one.
 * Exit codes as `run` (a `reject` that stopped the run is 0).
 */
export async function decideCommand(
  session: CliSession,
  kernel: Kernel,
  action: 'approve' | 'reject' | 'reject-continue',
  typedId: string,
  options: { json?: boolean; toolCall?: string; reason?: string },
): Promise<number> {
  const record = await resolveOperation(kernel.store, typedId, storeName(kernel.config));
  // An operation not waiting is refused by the runtime with what to do instead; only a waiting one has calls to match.
  const toolCallId = options.toolCall === undefined ? undefined : record.status === 'waiting_approval' ? resolvePendingToolCallId(record, options.toolCall) : options.toolCall;
  const close = session.showTimeline(kernel, options.json);
  try {
    const args = { ...(toolCallId !== undefined ? { toolCallId } : {}), ...(options.reason !== undefined ? { reason: options.reason } : {}) };
    if (action === 'approve') await kernel.approve(record.id, args);
    else if (action === 'reject') await kernel.reject(record.id, args);
    else await kernel.rejectAndContinue(record.id, args);
    return await outcomeOfTree(kernel, record, options.json, action === 'reject');
  } finally {
    close();
  }
}

async function askApproval(record: OperationRecord, options: RunOptions): Promise<'approve' | 'reject' | 'reject_continue' | 'park'> {
  if (options.autoApprove) return 'approve';
  if (options.decide && options.decide.length > 0) {
    const next = options.decide.shift()!;
    return next === 'approve' ? 'approve' : next === 'reject' ? 'reject' : 'reject_continue';
  }
  if (!process.stdin.isTTY || options.json) return 'park';
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
  try {
    const tools = record.state.approval?.pendingTools.map((t) => `${t.identifier}/${t.apiName}`).join(', ');
    const answer = (await rl.question(`Approve ${tools}? [y]es / [n]o, stop / [c]ontinue without it / [l]ater: `)).trim().toLowerCase();
    if (answer.startsWith('y')) return 'approve';
    if (answer.startsWith('n')) return 'reject';
    if (answer.startsWith('c')) return 'reject_continue';
    return 'park';
  } finally {
    rl.close();
  }
}

async function loadHooksModule(file: string): Promise<AgentHook[]> {
  const mod = (await import(pathToFileURL(path.resolve(file)).href)) as { default?: unknown; hooks?: unknown };
  const hooks = mod.default ?? mod.hooks;
  if (!Array.isArray(hooks)) throw new HookgateError('HOOK_INVALID', `${file}: expected the module to export a list of hooks (export default [...])`);
  return hooks as AgentHook[];
}

function defaultPrompt(description: string | undefined): string {
  return description ?? 'Begin.';
}
