import { nowIso } from '../../kernel/clock.js';
import { HookgateError } from '../../kernel/errors.js';
import { jsonCopy } from '../../kernel/json-copy.js';
import type { NewToolStep, ToolStepRecord, ToolStepStore } from '../../kernel/tool-steps.js';

/**
 * Durable tool steps in process memory (kernel/tool-steps.ts), by operation,
 * then tool call, then name (insertion order is record order). Values are
 * copied in and out. `hasOperation` and `assertOpen` come from the store.
 */
export class MemoryToolSteps implements ToolStepStore {
  private readonly byOperation = new Map<string, Map<string, Map<string, ToolStepRecord>>>();

  constructor(
    private readonly hasOperation: (operationId: string) => boolean,
    private readonly assertOpen: () => void,
  ) {}

  async recordToolStep(step: NewToolStep): Promise<{ recorded: boolean; step: ToolStepRecord }> {
    this.assertOpen();
    if (!this.hasOperation(step.operationId)) throw new HookgateError('STORE_NOT_FOUND', `Operation ${step.operationId} does not exist`);
    let calls = this.byOperation.get(step.operationId);
    if (calls === undefined) this.byOperation.set(step.operationId, (calls = new Map()));
    let steps = calls.get(step.toolCallId);
    if (steps === undefined) calls.set(step.toolCallId, (steps = new Map()));
    const existing = steps.get(step.name);
    if (existing !== undefined) return { recorded: false, step: jsonCopy(existing) };
    const record: ToolStepRecord = { operationId: step.operationId, toolCallId: step.toolCallId, name: step.name, value: jsonCopy(step.value) ?? null, recordedAt: nowIso() };
    steps.set(step.name, record);
    return { recorded: true, step: jsonCopy(record) };
  }

  async listToolSteps(operationId: string, toolCallId: string): Promise<ToolStepRecord[]> {
    this.assertOpen();
    return [...(this.byOperation.get(operationId)?.get(toolCallId)?.values() ?? [])].map((r) => jsonCopy(r));
  }

  /** Forgets an operation's steps (it was pruned). */
  dropOperation(operationId: string): void {
    this.byOperation.delete(operationId);
  }
}
