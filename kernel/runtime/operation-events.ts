import { EventEmitter } from 'node:events';
import type { StepKind, TerminalReason, PendingTool } from '../hooks/hook-types.js';
import type { ToolResult, Usage } from '../messages.js';

/** Timeline events the runtime emits as an operation runs (the CLI prints them; `--json` writes them as NDJSON). */
export type OperationEvent =
  | { type: 'operation_started'; operationId: string; agentId: string; parentOperationId?: string }
  | { type: 'step_started'; operationId: string; stepIndex: number; kind: StepKind }
  | { type: 'text_delta'; operationId: string; delta: string }
  | { type: 'assistant_message'; operationId: string; stepIndex: number; text: string; toolCalls: Array<{ id: string; identifier: string; apiName: string; args: unknown }> }
  | { type: 'tool_started'; operationId: string; stepIndex: number; toolCallId: string; identifier: string; apiName: string; args: unknown }
  | { type: 'tool_finished'; operationId: string; stepIndex: number; toolCallId: string; identifier: string; apiName: string; result: ToolResult; mocked: boolean; durationMs: number }
  /** A hook was delivered (a handler called or a webhook sent), in delivery order. */
  | { type: 'hook'; operationId: string; hookType: string; hookId: string; via: 'handler' | 'webhook'; stepIndex?: number }
  | { type: 'approval_requested'; operationId: string; stepIndex: number; pendingTools: PendingTool[] }
  | { type: 'compacted'; operationId: string; stepIndex: number; messagesBefore: number; messagesAfter: number }
  | { type: 'step_finished'; operationId: string; stepIndex: number; kind: StepKind; usage: Usage; durationMs: number }
  | { type: 'operation_finished'; operationId: string; reason: TerminalReason; status: string; usage: Usage; steps: number; finalText?: string; error?: string };

/** A typed emitter; listeners must not throw (errors are swallowed so they never break a run). */
export class OperationEvents {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  on(listener: (event: OperationEvent) => void): () => void {
    const safe = (e: OperationEvent) => {
      try {
        listener(e);
      } catch {
        // A timeline listener never breaks a run.
      }
    };
    this.emitter.on('event', safe);
    return () => this.emitter.off('event', safe);
  }

  /** Whether anyone listens: lets a caller skip building an event nobody reads. */
  get listening(): boolean {
    return this.emitter.listenerCount('event') > 0;
  }

  emit(event: OperationEvent): void {
    if (this.emitter.listenerCount('event') > 0) this.emitter.emit('event', event);
  }
}
