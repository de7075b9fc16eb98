import assert from 'node:assert/strict';
import type { Kernel } from '../../../kernel/kernel.js';
import type { OperationRecord } from '../../../kernel/store.js';
import type { ToolDefinition, ToolExecutionContext, ToolSource } from '../../../kernel/tools.js';
import { callIdOf, hook } from '../../helpers/runtime-fixtures.js';

/**
 * Shared by the parked-operation race specs: a payment tool that needs
 * approval (every run counted per operation, with whether an abort of that
 * operation had already been acknowledged), a deferred job tool, the agents
 * that use them, and the ways two calls are started "at once".
 */
export class PaymentTools implements ToolSource {
  readonly id = 'parked-race-tools';
  /** operation id -> runs of pay/send (each: whether its abort had been acknowledged when it started). */
  readonly runs = new Map<string, Array<{ afterAbort: boolean }>>();
  /** Operations whose `abort()` resolved. */
  readonly aborted = new Set<string>();

  list(): ToolDefinition[] {
    const parameters = { type: 'object', properties: {}, additionalProperties: true };
    return [
      { identifier: 'pay', apiName: 'send', description: 'sends a payment', parameters, toolSource: 'race' },
      { identifier: 'job', apiName: 'later', description: 'answers later', parameters, toolSource: 'race' },
    ];
  }

  async execute(call: { identifier: string; apiName: string }, ctx: ToolExecutionContext): Promise<string | { deferred: true }> {
    if (call.identifier === 'job') return { deferred: true };
    const list = this.runs.get(ctx.operationId) ?? [];
    list.push({ afterAbort: this.aborted.has(ctx.operationId) });
    this.runs.set(ctx.operationId, list);
    // A payment takes a moment (the other call of the race gets its chance while it runs).
    await new Promise((r) => setImmediate(r));
    return 'payment sent';
  }

  count(operationId: string): number {
    return this.runs.get(operationId)?.length ?? 0;
  }
}

/** `payer` asks to send a payment (needs approval), then answers; `waiter` starts a deferred job, then answers. */
export function defineRaceAgents(k: Kernel): void {
  k.agents.define({
    id: 'payer',
    tools: ['pay/*'],
    approval: { tools: ['pay/send'] },
    model: { provider: 'scripted', turns: [{ toolCalls: [{ id: 'pay-1', identifier: 'pay', apiName: 'send', args: { amount: 100 } }] }, { text: 'paid' }] },
  });
  k.agents.define({
    id: 'waiter',
    tools: ['job/*'],
    model: { provider: 'scripted', turns: [{ toolCalls: [{ id: 'job-1', identifier: 'job', apiName: 'later', args: {} }] }, { text: 'job done' }] },
  });
}

/**
 * A `payer` operation parked for approval. Its afterHumanIntervention
 * observer (in the parking kernel) takes a few milliseconds, as a webhook
 * would: the window between a decision's commit and its launch.
 */
export async function parkedPayment(k: Kernel): Promise<string> {
  const observer = hook('afterHumanIntervention', () => new Promise((r) => setTimeout(r, 3)));
  const handle = await k.execAgent({ agentId: 'payer', prompt: 'pay', hooks: [observer] });
  const parked = await handle.settled();
  assert.equal(parked.status, 'waiting_approval');
  return handle.operationId;
}

/** A `waiter` operation parked for its deferred job, and the job's call id. */
export async function parkedJob(k: Kernel): Promise<{ operationId: string; callId: string }> {
  const handle = await k.execAgent({ agentId: 'waiter', prompt: 'start the job' });
  const parked = await handle.settled();
  assert.equal(parked.status, 'waiting_tool');
  return { operationId: handle.operationId, callId: callIdOf(await k.listMessages(handle.operationId), 'job-1') };
}

/** How the second call follows the first: in the same tick, after a setImmediate, or after a microtask. */
export const GAPS = ['same tick', 'setImmediate', 'microtask'] as const;
export type Gap = (typeof GAPS)[number];

/** Starts `first`, then `second` after `gap`; both settle. */
export async function race<A, B>(first: () => Promise<A>, second: () => Promise<B>, gap: Gap): Promise<[PromiseSettledResult<A>, PromiseSettledResult<B>]> {
  const a = first();
  if (gap === 'setImmediate') await new Promise((r) => setImmediate(r));
  else if (gap === 'microtask') await Promise.resolve();
  const b = second();
  return Promise.all([settle(a), settle(b)]);
}

function settle<T>(p: Promise<T>): Promise<PromiseSettledResult<T>> {
  return p.then(
    (value) => ({ status: 'fulfilled', value }) as const,
    (reason: unknown) => ({ status: 'rejected', reason }) as const,
  );
}

/** The operation once terminal, within a generous margin (a race that leaves it stuck fails with how it is stored). */
export async function terminal(k: Kernel, operationId: string, ms = 10000): Promise<OperationRecord> {
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('not terminal in time')), ms).unref());
  try {
    return await Promise.race([k.waitForOperation(operationId, 'terminal'), timeout]);
  } catch (err) {
    const stored = await k.getOperation(operationId);
    throw new Error(`operation ${operationId}: ${(err as Error).message}; stored as ${stored?.status} (version ${stored?.version})`);
  }
}

/** The stored tool results of the operation's payment call. */
export async function paymentResults(k: Kernel, operationId: string): Promise<string[]> {
  const messages = await k.listMessages(operationId);
  return messages.filter((m) => m.role === 'tool').map((m) => m.content);
}

/** The code of a refused call (the loser of a race must fail with a clear, known error). */
export function codeOf(result: PromiseSettledResult<unknown>): string | undefined {
  if (result.status === 'fulfilled') return undefined;
  const reason = result.reason as { code?: string; message?: string };
  return reason.code ?? `uncoded: ${reason.message}`;
}

/** Records each `operation_finished` of the operation in any of the kernels; returns the unsubscribe. */
export function onFinished(kernels: readonly Kernel[], operationId: string, into: string[]): () => void {
  const offs = [...new Set(kernels)].map((k) =>
    k.events.onOperation(operationId, (e) => {
      if (e.type === 'operation_finished') into.push(e.status);
    }),
  );
  return () => offs.forEach((off) => off());
}

/**
 * A failing environment: the kernel's store acknowledges each step commit a
 * few milliseconds after it is written (a remote database under load). The
 * write is stored at once, so another call reads the new version while the
 * committing call has not heard back yet.
 */
export function slowAcknowledgements(k: Kernel): void {
  const store = k.store as unknown as { commitStep: (...args: unknown[]) => Promise<unknown> };
  const original = store.commitStep.bind(store);
  store.commitStep = async (...args: unknown[]) => {
    const written = await original(...args);
    await new Promise((r) => setTimeout(r, 4));
    return written;
  };
}
