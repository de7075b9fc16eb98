import type { OperationEvent } from '../../kernel/runtime/operation-events.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * Prints an operation's timeline as it happens: steps, the model's words, tool
 * calls and their results. On a terminal, a spinner line shows what is being
 * waited for; it is erased before each printed line.
 */
export class TimelinePrinter {
  private spinner: NodeJS.Timeout | undefined;
  private frame = 0;
  private waitingFor = '';

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
        this.startSpinner(`step ${event.stepIndex} ${event.kind}`);
        break;
      case 'text_delta':
        break;
      case 'assistant_message':
        if (event.text) this.line(`  💬 ${event.text.trim().replace(/\n/g, '\n     ')}`);
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
        for (const t of event.pendingTools) this.line(`  ⏸ approval needed: ${t.identifier}/${t.apiName} ${short(JSON.stringify(t.args), 80)}${t.reason ? ` (${t.reason})` : ''}`);
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
        this.line(`${mark} ${event.reason} after ${event.steps} steps, ${tokens} tokens${event.error ? `: ${event.error}` : ''}`);
        break;
      }
      case 'hook':
      case 'tool_started':
        break;
    }
  }

  close(): void {
    this.stopSpinner();
  }

  private line(text: string): void {
    this.clearSpinner();
    this.out.write(text + '\n');
  }

  private startSpinner(label: string): void {
    this.waitingFor = label;
    if (!this.err.isTTY || this.spinner) return;
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
