import { AgentRenderError } from './agent-errors.js';
import type { DeliveredMessageInput } from './delivered-message.js';
import type { DispatchReceipt } from './dispatch.js';
import { isRendering, requireRootFrame } from './render-slot.js';

/** Sends one message to the instance whose render made it; resolves with the delivery's receipt once it is durably admitted. */
export type DispatchToSelf = (message: DeliveredMessageInput) => Promise<DispatchReceipt>;

/**
 * A dispatcher that sends to THIS instance (its incarnation: the send is
 * conditioned on its uid). While the instance is busy (as it is while its
 * agent runs a tool or an event callback) the delivery joins the live
 * response at the next model turn; when it is idle it starts a new
 * submission; a delivery that misses the live response runs as its own
 * submission, never lost. Each call is a new durable delivery with its own
 * receipt: a re-run tool dispatches again (at-least-once). The dispatcher
 * throws during a render and on a bare render (no runtime behind it); a
 * malformed message rejects with InvalidRequestError storing nothing, as
 * `dispatch()` does. The hook throws outside a render and in a subagent
 * render. Synchronous (the dispatcher returns a Promise).
 */
export function useDispatchMessage(): DispatchToSelf {
  const frame = requireRootFrame('useDispatchMessage', 'a subagent has no instance to dispatch to; return its result to the parent.');
  const send = frame.input.dispatchToSelf;
  return (message: DeliveredMessageInput) => {
    if (isRendering()) throw new AgentRenderError('the dispatcher of useDispatchMessage() was called during a render: dispatch from a tool\'s run or an event hook callback', { hook: 'useDispatchMessage' });
    if (send === undefined) throw new AgentRenderError('the dispatcher of useDispatchMessage() has no agent instance behind this render, so it cannot send', { hook: 'useDispatchMessage' });
    return send(message);
  };
}
