import type { DeliveredMessage } from './delivered-message.js';
import { requireRenderFrame } from './render-slot.js';

/**
 * The message in front of the model: the delivered message of the
 * submission the response answers (`{ kind: 'user', body, attachments? }` or
 * `{ kind: 'signal', type, body, attributes?, tagName? }`), frozen. It
 * advances when a delivery joins the live response (from the render after
 * the model turn that read it) and when a `useAgentStart` / `useAgentFinish`
 * callback appends a signal; nothing else the framework adds moves it.
 * Constant within one render. Undefined in a subagent render and on a bare
 * render (no submission behind it). After a restart the cursor is derived
 * from what is stored (the submission's message, the joined messages); a
 * signal appended before the crash is not recovered as the cursor.
 * Synchronous; throws outside a render.
 */
export function useDelivery(): DeliveredMessage | undefined {
  const frame = requireRenderFrame('useDelivery');
  return frame.kind === 'subagent' ? undefined : frame.input.delivery;
}
