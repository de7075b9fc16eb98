import { AgentRenderError } from './agent-errors.js';
import { requireRenderFrame } from './render-slot.js';

/**
 * Adds instruction text for this render: the instruction document is the
 * agent function's returned string, then each `useInstruction` text in call
 * order, joined with blank lines. Synchronous; AgentRenderError outside a
 * render or for a text that is not a string.
 */
export function useInstruction(text: string): void {
  const frame = requireRenderFrame('useInstruction');
  if (typeof text !== 'string') throw new AgentRenderError(`useInstruction(text) takes a string; got ${text === null ? 'null' : typeof text}`, { hook: 'useInstruction' });
  frame.instructions.push(text);
}
