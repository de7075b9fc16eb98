import type { AfterToolCallEvent, BeforeToolCallEvent, OnCompleteEvent } from '../../../../kernel/hooks/hook-types.js';
import type { UserDirectory } from '../../../../kernel/user-directory.js';

const context = {
  toolCallId: 'call_1',
  assistantMessageId: 'msg_1',
  identifier: 'fs',
  apiName: 'readFile',
  args: { path: 'notes.txt' },
  callIndex: 0,
  stepIndex: 2,
  operationId: 'op_1',
  executor: 'server' as const,
  agentId: 'agent_1',
  userId: 'user_1',
  timestamp: '2025-01-01T00:00:00.000Z',
};

export function beforeToolCallEvent(overrides: Partial<BeforeToolCallEvent> = {}): BeforeToolCallEvent {
  return { ...context, mock: () => true, ...overrides };
}

export function afterToolCallEvent(overrides: Partial<AfterToolCallEvent> = {}): AfterToolCallEvent {
  return {
    ...context,
    result: { content: 'file text', success: true, executionTime: 12, data: { work: 'x'.repeat(50) }, args: { raw: 'payload' } },
    mocked: false,
    ...overrides,
  };
}

export function onCompleteEvent(overrides: Partial<OnCompleteEvent> = {}): OnCompleteEvent {
  return {
    operationId: 'op_1',
    agentId: 'agent_1',
    stepIndex: 4,
    userId: 'user_1',
    timestamp: '2025-01-01T00:00:00.000Z',
    reason: 'done',
    status: 'done',
    totalUsage: { promptTokens: 1, completionTokens: 2, totalTokens: 3, cost: 0 },
    stepCount: 4,
    finalText: 'bye',
    finalState: { messages: ['huge'] },
    ...overrides,
  };
}

/** A directory backed by a map, counting look-ups; `gate` holds answers until released. */
export class CountingDirectory implements UserDirectory {
  readonly calls: string[] = [];
  failFor = new Set<string>();
  private gate: Promise<void> | undefined;
  private release: (() => void) | undefined;

  constructor(private readonly emails: Record<string, string> = {}) {}

  hold(): void {
    this.gate = new Promise((resolve) => (this.release = resolve));
  }

  open(): void {
    this.release?.();
    this.gate = undefined;
  }

  async getEmail(userId: string): Promise<string | undefined> {
    this.calls.push(userId);
    if (this.gate) await this.gate;
    if (this.failFor.has(userId)) throw new Error('database unavailable');
    return this.emails[userId];
  }
}
