import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import type { OperationEvent } from '../../kernel/runtime/operation-events.js';
import { TimelinePrinter } from '../../plugins/cli/timeline-printer.js';

/** A stdout stand-in that keeps every write, so a spec can see what was on screen after each event. */
class Screen extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2, cost: 0 };
const delta = (operationId: string, text: string): OperationEvent => ({ type: 'text_delta', operationId, delta: text });
const message = (operationId: string, text: string, toolCalls: Array<{ id: string; identifier: string; apiName: string; args: unknown }> = []): OperationEvent => ({
  type: 'assistant_message',
  operationId,
  stepIndex: 0,
  text,
  toolCalls,
});

/** Issue 10, item 4: the timeline shows streamed text live, and each turn's text once. */
describe('TimelinePrinter: streamed text', () => {
  let screen: Screen;
  let printer: TimelinePrinter;
  beforeEach(() => {
    screen = new Screen();
    printer = new TimelinePrinter(screen, new Screen());
  });

  it('prints each text delta as it arrives, before the turn is over', () => {
    printer.handle({ type: 'step_started', operationId: 'op1', stepIndex: 0, kind: 'call_llm' });
    printer.handle(delta('op1', 'Hello '));
    assert.equal(screen.text, '  💬 Hello');
    printer.handle(delta('op1', 'live '));
    printer.handle(delta('op1', 'world'));
    assert.equal(screen.text, '  💬 Hello live world');
  });

  it('prints a streamed turn once: its message adds only the tool calls', () => {
    for (const piece of ['Writing ', 'the ', 'note.']) printer.handle(delta('op1', piece));
    printer.handle(message('op1', 'Writing the note.', [{ id: 'c1', identifier: 'fs', apiName: 'writeFile', args: { path: 'a' } }]));
    assert.equal(screen.text, '  💬 Writing the note.\n  → fs/writeFile {"path":"a"}\n');
  });

  it('prints a tool progress line (tool_log) on one line, cut, after the text it interrupts', () => {
    printer.handle(delta('op1', 'Working'));
    printer.handle({ type: 'tool_log', operationId: 'op1', stepIndex: 1, toolCallId: 'c1', identifier: 'agent', apiName: 'sync', level: 'warn', message: 'page 3\nretrying' });
    assert.equal(screen.text, '  💬 Working\n    · sync warn: page 3 retrying\n');
  });

  it('prints the whole text of a turn that did not stream', () => {
    printer.handle(message('op1', '  Done.\nAll good.  '));
    assert.equal(screen.text, '  💬 Done.\n     All good.\n');
  });

  it('indents streamed line breaks like a whole message and drops blanks at both ends', () => {
    for (const piece of ['\n  First', ' line\n', 'second line', '\n\n']) printer.handle(delta('op1', piece));
    printer.handle(message('op1', 'First line\nsecond line'));
    assert.equal(screen.text, '  💬 First line\n     second line\n');
  });

  it('keeps the text of two operations (a parent and its sub-agent) on separate lines', () => {
    printer.handle(delta('parent', 'Asking '));
    printer.handle(delta('child', 'Working'));
    printer.handle(delta('parent', 'the helper'));
    printer.handle(message('child', 'Working'));
    printer.handle(message('parent', 'Asking the helper'));
    assert.equal(screen.text, '  💬 Asking\n  💬 Working\n  💬 … the helper\n');
  });

  it('ends the line of a turn that streamed and then failed before the next step', () => {
    printer.handle(delta('op1', 'Half a'));
    printer.handle({ type: 'step_started', operationId: 'op1', stepIndex: 1, kind: 'call_llm' });
    printer.handle({ type: 'operation_finished', operationId: 'op1', reason: 'error', status: 'error', usage, steps: 1, error: 'cut off' });
    assert.equal(screen.text, '  💬 Half a\n✗ error after 1 steps, 2 tokens: cut off\n');
  });

  it('prints the cost of the operation when the agent priced its model', () => {
    printer.handle({ type: 'operation_finished', operationId: 'op1', reason: 'done', status: 'done', usage: { promptTokens: 1200, completionTokens: 40, totalTokens: 1240, cost: 0.0042 }, steps: 3 });
    assert.equal(screen.text, '■ done after 3 steps, 1240 tokens, $0.004200\n');
  });
});
