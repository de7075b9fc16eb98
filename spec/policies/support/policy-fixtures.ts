import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ToolCallHookContext } from '../../../kernel/hooks/hook-types.js';
import type { ToolResult } from '../../../kernel/messages.js';
import type { DecisionFilter, DecisionRecord } from '../../../kernel/store.js';
import type { DecisionLog } from '../../../policies/decision-log.js';
import { PolicyEngine, type PolicyEngineOptions } from '../../../policies/policy-engine.js';

/** The shipped packs (source folder, not dist). */
export const SHIPPED_PACKS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../policies/packs');

/** A decision log in memory: just the two Store methods the engine uses. */
export class MemoryDecisionLog implements DecisionLog {
  readonly records: DecisionRecord[] = [];

  async recordDecision(decision: DecisionRecord): Promise<void> {
    this.records.push(structuredClone(decision));
  }

  async listDecisions(filter: DecisionFilter = {}): Promise<DecisionRecord[]> {
    const out = this.records
      .filter((r) => filter.operationId === undefined || r.operationId === filter.operationId)
      .filter((r) => filter.policyId === undefined || r.policies.some((p) => p.id === filter.policyId))
      .filter((r) => filter.decision === undefined || r.decision === filter.decision)
      .filter((r) => filter.since === undefined || r.createdAt >= filter.since)
      .filter((r) => filter.until === undefined || r.createdAt <= filter.until)
      .reverse();
    return filter.limit === undefined ? out : out.slice(0, filter.limit);
  }
}

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hookgate-policy-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export async function writeFileIn(dir: string, name: string, text: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, text);
  return file;
}

let callCounter = 0;

/** A tool call event as the runtime builds it. */
export function toolCall(identifier: string, apiName: string, args: Record<string, unknown> = {}, extra: Partial<ToolCallHookContext> = {}): ToolCallHookContext {
  callCounter++;
  return {
    toolCallId: `call-${callCounter}`,
    assistantMessageId: 'msg-1',
    identifier,
    apiName,
    args,
    callIndex: 0,
    stepIndex: 1,
    operationId: 'op-1',
    executor: 'server',
    agentId: 'agent-1',
    userId: 'user-1',
    timestamp: '2025-01-01T00:00:00.000Z',
    ...extra,
  };
}

export function toolResult(event: ToolCallHookContext, result: Partial<ToolResult> & { content: string }): ToolCallHookContext & { result: ToolResult } {
  return { ...event, result: { success: true, ...result } };
}

/** Writes `yaml` as a pack in a fresh folder and starts an engine on it. */
export async function engineWithPack(
  yaml: string,
  options: Partial<PolicyEngineOptions> = {},
  files: Record<string, string> = {},
): Promise<{ engine: PolicyEngine; log: MemoryDecisionLog; dir: string; close: () => Promise<void> }> {
  const { dir, cleanup } = await tempDir();
  await writeFileIn(dir, 'pack.yaml', yaml);
  for (const [name, text] of Object.entries(files)) await writeFileIn(dir, name, text);
  const log = new MemoryDecisionLog();
  const engine = new PolicyEngine({ paths: [dir], store: log, maxWorkers: 2, ...options });
  try {
    await engine.start();
  } catch (err) {
    await cleanup();
    throw err;
  }
  return {
    engine,
    log,
    dir,
    close: async () => {
      await engine.stop();
      await cleanup();
    },
  };
}
