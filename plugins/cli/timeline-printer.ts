import type { OperationEvent } from '../../kernel/runtime/operation-events.js';
import { costText } from './usage-text.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

const TEXT_MARK = '  💬 ';
const TEXT_INDENT = '\n     ';

/**
 * Prints an operation's timeline as it happens: steps, the model's words, tool
 * calls and their results. The model's text is printed live, delta by delta,
 * as a streaming provider sends it (`text_delta` events), and its
 * `assistant_message` then adds only the tool calls; a provider that does not
 * stream gets its text printed whole from the message. On a terminal, a
 * spinner line on stderr shows what is being waited for; it is erased before
 * each printed line and while text streams.
 */
export class TimelinePrinter {
  private spinner: NodeJS.Timeout | undefined;
  private frame = 0;
  private waitingFor = '';
  /** The operation whose streamed text line is open (not yet ended with a newline). */
  private openText: string | undefined;
  /** Operations whose current model turn has streamed text, so its message does not print it again. */
  private readonly streamed = new Set<string>();
  /** Blanks at the end of the streamed text so far, written only if more text follows. */
  private heldBlank = '';

  constructor(
    private readonly out: NodeJS.WritableStream & { isTTY?: boolean },
    private readonly err: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
  ) {}

  handle(event: OperationEvent): void {
    switch (event.type) {
      case 'operation_started':
        this.line(`▶ ${event.parentOperationId ? 'sub-agent' : 'agent'} ${event.agentId}  (operation ${event.operationId})`);
        break;
      case 'step_started':
        // A turn that streamed text and then failed sent no message: its line ends here.
        if (this.streamed.delete(event.operationId)) this.endText(event.operationId);
        this.startSpinner(`step ${event.stepIndex} ${event.kind}`);
        break;
      case 'text_delta':
        this.streamText(event.operationId, event.delta);
        break;
      case 'assistant_message':
        if (this.streamed.delete(event.operationId)) this.endText(event.operationId);
        else if (event.text.trim()) this.line(`${TEXT_MARK}${event.text.trim().replace(/\n/g, TEXT_INDENT)}`);
        for (const c of event.toolCalls) this.line(`  → ${c.identifier}/${c.apiName} ${short(JSON.stringify(c.args), 100)}`);
        break;
      case 'tool_finished': {
        const mark = event.result.success ? '✓' : '✗';
        const how = event.mocked ? 'mocked' : `${event.durationMs} ms`;
        const why = event.result.error ? ` [${event.result.error}]` : '';
        this.line(`  ${mark} ${event.identifier}/${event.apiName} (${how})${why}: ${short(event.result.content, 120)}`);
        break;
      }
      case 'approval_requested':
        for (const t of event.pendingTools) this.line(`  ⏸ approval needed: ${t.identifier}/${t.apiName} ${short(JSON.stringify(t.args), 80)}${t.reason ? ` (${t.reason})` : ''}  [tool call ${t.toolCallId}]`);
        break;
      case 'compacted':
        this.line(`  ⇣ compacted context: ${event.messagesBefore} → ${event.messagesAfter} messages`);
        break;
      case 'step_finished':
        this.stopSpinner();
        break;
      case 'operation_finished': {
        this.stopSpinner();
        const tokens = event.usage.totalTokens;
        const mark = event.status === 'done' ? '■' : '✗';
        const cost = event.usage.cost > 0 ? `, ${costText(event.usage.cost)}` : '';
        this.line(`${mark} ${event.reason} after ${event.steps} steps, ${tokens} tokens${cost}${event.error ? `: ${event.error}` : ''}`);
        break;
      }
      case 'tool_log':
        this.line(`    · ${event.apiName} ${event.level}: ${short(event.message, 160)}`);
        break;
      case 'hook':
      case 'tool_started':
        break;
    }
  }

  close(): void {
    this.stopSpinner();
    this.endText();
  }

  /**
   * Appends a text delta to the operation's open text line, opening one (and
   * ending another operation's) as needed. Blanks at the end of what arrived
   * wait for more text, so a turn's text prints trimmed, as a whole message does.
   */
  private streamText(operationId: string, delta: string): void {
    const continuing = this.streamed.has(operationId);
    let text = this.openText === operationId ? this.heldBlank + delta : delta;
    if (this.openText !== operationId && !continuing) text = text.replace(/^\s+/, '');
    const kept = text.replace(/\s+$/, '');
    if (kept === '') {
      if (this.openText === operationId) this.heldBlank = text;
      return;
    }
    if (this.openText !== operationId) {
      this.endText();
      this.stopSpinner();
      this.out.write(continuing ? `${TEXT_MARK}… ` : TEXT_MARK);
      this.openText = operationId;
      this.streamed.add(operationId);
    }
    this.heldBlank = text.slice(kept.length);
    this.out.write(kept.replace(/\n/g, TEXT_INDENT));
  }

  /** Ends the open text line (of `operationId` only, when given). */
  private endText(operationId?: string): void {
    if (this.openText === undefined || (operationId !== undefined && this.openText !== operationId)) return;
    this.openText = undefined;
    this.heldBlank = '';
    this.out.write('\n');
  }

  private line(text: string): void {
    this.endText();
    this.clearSpinner();
    this.out.write(text + '\n');
  }

  private startSpinner(label: string): void {
    this.waitingFor = label;
    if (!this.err.isTTY || this.spinner || this.openText !== undefined) return;
    this.spinner = setInterval(() => {
      this.frame = (this.frame + 1) % FRAMES.length;
      this.err.write(`\r${FRAMES[this.frame]} ${this.waitingFor}…\x1b[K`);
    }, 80);
    this.spinner.unref();
  }

  private stopSpinner(): void {
    if (this.spinner) clearInterval(this.spinner);
    this.spinner = undefined;
    this.clearSpinner();
  }

  private clearSpinner(): void {
    if (this.err.isTTY) this.err.write('\r\x1b[K');
  }
}

function short(text: string, max: number): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}
