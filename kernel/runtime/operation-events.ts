import { EventEmitter } from 'node:events';
import type { StepKind, TerminalReason, PendingTool } from '../hooks/hook-types.js';
import type { ToolResult, Usage } from '../messages.js';
import type { ToolLogLevel } from '../tools.js';

/**
 * Timeline events the runtime emits as an operation runs (the CLI prints them;
 * `--json` writes them as NDJSON; `run.events()` yields one operation's).
 * A union discriminated by `type`; every member names its `operationId`.
 */
export type OperationEvent =
  | { type: 'operation_started'; operationId: string; agentId: string; parentOperationId?: string }
  | { type: 'step_started'; operationId: string; stepIndex: number; kind: StepKind }
  | { type: 'text_delta'; operationId: string; delta: string }
  | { type: 'assistant_message'; operationId: string; stepIndex: number; text: string; toolCalls: Array<{ id: string; identifier: string; apiName: string; args: unknown }> }
  | { type: 'tool_started'; operationId: string; stepIndex: number; toolCallId: string; identifier: string; apiName: string; args: unknown }
  | { type: 'tool_finished'; operationId: string; stepIndex: number; toolCallId: string; identifier: string; apiName: string; result: ToolResult; mocked: boolean; durationMs: number }
  /**
   * A progress line a running tool wrote (`ToolExecutionContext.log`; an agent function tool's `context.log`):
   * streamed to listeners only, never stored and never shown to the model. `message` is cut to
   * MAX_TOOL_LOG_MESSAGE characters and `attributes` (JSON) left out past MAX_TOOL_LOG_ATTRIBUTES characters,
   * `truncated` saying so; nothing but what the tool wrote (kernel/runtime/tool-log.ts).
   */
  | { type: 'tool_log'; operationId: string; stepIndex: number; toolCallId: string; identifier: string; apiName: string; level: ToolLogLevel; message: string; attributes?: Record<string, unknown>; truncated?: true }
  /** A hook was delivered (a handler called or a webhook sent), in delivery order. */
  /** A thread hook's `state.emit(event, data)` (document 003 thread events), for connected clients. */
  | { type: 'thread_event'; operationId: string; threadId: string; event: string; data: unknown }
  | { type: 'hook'; operationId: string; hookType: string; hookId: string; via: 'handler' | 'webhook'; stepIndex?: number }
  | { type: 'approval_requested'; operationId: string; stepIndex: number; pendingTools: PendingTool[] }
  | { type: 'compacted'; operationId: string; stepIndex: number; messagesBefore: number; messagesAfter: number }
  | { type: 'step_finished'; operationId: string; stepIndex: number; kind: StepKind; usage: Usage; durationMs: number }
  | { type: 'operation_finished'; operationId: string; reason: TerminalReason; status: string; usage: Usage; steps: number; finalText?: string; error?: string };

/** One event type of {@link OperationEvent}: `OperationEventOf<'tool_finished'>`. */
export type OperationEventOf<T extends OperationEvent['type']> = Extract<OperationEvent, { type: T }>;

type Listener = (event: OperationEvent) => void;

/**
 * A typed emitter; listeners must not throw (errors are swallowed so they
 * never break a run). `on` hears every operation; `onOperation` hears one.
 */
export class OperationEvents {
  private readonly emitter = new EventEmitter();
  /** Listeners of one operation each: an emit reaches only its own operation's, whatever the number of runs. */
  private readonly byOperation = new Map<string, Set<Listener>>();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  /** Hears every operation's events, in emission order; returns the unsubscribe function. */
  on(listener: Listener): () => void {
    const safe = guarded(listener);
    this.emitter.on('event', safe);
    return () => this.emitter.off('event', safe);
  }

  /** Hears only `operationId`'s events (not its sub-agents'), in emission order; returns the unsubscribe function. */
  onOperation(operationId: string, listener: Listener): () => void {
    const safe = guarded(listener);
    let set = this.byOperation.get(operationId);
    if (!set) this.byOperation.set(operationId, (set = new Set()));
    set.add(safe);
    return () => {
      set.delete(safe);
      if (set.size === 0 && this.byOperation.get(operationId) === set) this.byOperation.delete(operationId);
    };
  }

  /** Whether anyone listens at all: lets a caller skip building an event nobody reads. */
  get listening(): boolean {
    return this.emitter.listenerCount('event') > 0 || this.byOperation.size > 0;
  }

  /** Whether anyone would hear an event of `operationId`. */
  listeningTo(operationId: string): boolean {
    return this.emitter.listenerCount('event') > 0 || this.byOperation.has(operationId);
  }

  emit(event: OperationEvent): void {
    if (this.emitter.listenerCount('event') > 0) this.emitter.emit('event', event);
    if (this.byOperation.size === 0) return;
    const own = this.byOperation.get(event.operationId);
    if (own) for (const listener of [...own]) listener(event);
  }
}

function guarded(listener: Listener): Listener {
  return (event) => {
    try {
      listener(event);
    } catch {
      // A timeline listener never breaks a run.
    }
  };
}
