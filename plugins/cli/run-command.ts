import readline from 'node:readline/promises';
import { loadAgentFile } from '../../config/agent-file.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { AgentHook } from '../../kernel/hooks/hook-types.js';
import { TERMINAL_STATUSES, type OperationRecord } from '../../kernel/store.js';
import { HookgateError } from '../../kernel/errors.js';
import { EXIT } from './exit-codes.js';
import { TimelinePrinter } from './timeline-printer.js';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

export interface RunOptions {
  json?: boolean;
  user?: string;
  hooks?: string;
  /** Approve every approval request without asking (demos, CI). */
  autoApprove?: boolean;
  /** Decisions for successive approval requests, in order: approve | reject | continue (demos, CI). */
  decide?: string[];
}

/**
 * `hookgate run <agent.yaml> [prompt]`: runs the agent and prints its timeline
 * (or NDJSON events with --json). Asks for approval on a terminal; otherwise
 * leaves the operation parked and says how to resume it.
 */
export async function runCommand(kernel: Kernel, agentFile: string, prompt: string | undefined, options: RunOptions): Promise<number> {
  const agent = loadAgentFile(agentFile, kernel.agents);
  const hooks = options.hooks ? await loadHooksModule(options.hooks) : [];
  const printer = options.json ? undefined : new TimelinePrinter(process.stdout);
  const off = kernel.events.on((event) => {
    if (options.json) process.stdout.write(JSON.stringify(event) + '\n');
    else printer!.handle(event);
  });
  try {
    const handle = await kernel.execAgent({ agentId: agent.id, prompt: prompt ?? defaultPrompt(agent.description), hooks, userId: options.user });
    let stoppedByHuman = false;
    for (;;) {
      const waiting = await settleTree(kernel, handle.operationId);
      if (waiting.status !== 'waiting_approval') break;
      const decision = await askApproval(waiting, options);
      if (decision === 'park') {
        const msg = `operation ${waiting.id} is waiting for approval; resume it with: hookgate approve ${waiting.id}  (or reject / reject-continue)`;
        if (options.json) process.stdout.write(JSON.stringify({ type: 'parked', operationId: waiting.id }) + '\n');
        else process.stdout.write(msg + '\n');
        return EXIT.ok;
      }
      if (decision === 'approve') await kernel.approve(waiting.id);
      else if (decision === 'reject') {
        stoppedByHuman = true;
        await kernel.reject(waiting.id, { reason: 'rejected at the terminal' });
      } else await kernel.rejectAndContinue(waiting.id, { reason: 'rejected at the terminal' });
    }
    const record = await kernel.waitForOperation(handle.operationId, 'terminal');
    // A run a human chose to stop did what was asked; max_steps and cost_limit did not finish the job.
    return record.reason === 'done' || (stoppedByHuman && record.reason === 'interrupted') ? EXIT.ok : EXIT.failed;
  } finally {
    off();
    printer?.close();
  }
}

/** `hookgate approve|reject|reject-continue <operationId>`: resumes a parked operation, also after a restart. */
export async function decideCommand(kernel: Kernel, action: 'approve' | 'reject' | 'reject-continue', operationId: string, options: RunOptions & { toolCall?: string; reason?: string }): Promise<number> {
  const printer = options.json ? undefined : new TimelinePrinter(process.stdout);
  const off = kernel.events.on((event) => (options.json ? process.stdout.write(JSON.stringify(event) + '\n') : printer!.handle(event)));
  try {
    const args = { ...(options.toolCall ? { toolCallId: options.toolCall } : {}), ...(options.reason ? { reason: options.reason } : {}) };
    const handle = action === 'approve' ? await kernel.approve(operationId, args) : action === 'reject' ? await kernel.reject(operationId, args) : await kernel.rejectAndContinue(operationId, args);
    const record = await handle.settled();
    if (record.status === 'waiting_approval' && !options.json) process.stdout.write(`operation ${operationId} is waiting for approval again\n`);
    return record.reason === 'done' || record.status === 'waiting_approval' || (action === 'reject' && record.reason === 'interrupted') ? EXIT.ok : EXIT.failed;
  } finally {
    off();
    printer?.close();
  }
}

const TERMINAL = TERMINAL_STATUSES;

/**
 * Waits until the run needs a human or is over: resolves the root when it is
 * terminal, or whichever operation of its tree (sub-agents included) waits
 * for approval. A parent waiting for its sub-agents is not settled for us.
 */
async function settleTree(kernel: Kernel, operationId: string): Promise<OperationRecord> {
  for (;;) {
    const record = await kernel.waitForOperation(operationId, 'settled');
    if (record.status !== 'waiting_tool') return record;
    const children = (await kernel.listOperations({ parentOperationId: operationId })).filter((c) => !TERMINAL.has(c.status));
    if (children.length === 0) {
      // The last child finished and its answer is being published: the parent resumes in a moment.
      await new Promise((resolve) => setTimeout(resolve, 5));
      continue;
    }
    const first = await Promise.race(children.map((c) => settleTree(kernel, c.id)));
    if (first.status === 'waiting_approval') return first;
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
