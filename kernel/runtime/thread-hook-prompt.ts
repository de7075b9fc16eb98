import { errorMessage } from '../errors.js';
import type { Message } from '../messages.js';
import { promptMessageOf } from './model-turn.js';
import type { RunningOperation } from './running-operation.js';

/** The hooks that take part in assembling a model request. */
const ASSEMBLY_HOOKS = ['after_system_message', 'filter_messages', 'prefilter_llm_history'] as const;

/** Whether the operation's thread hooks change how a model request is assembled (else the incremental prompt is used). */
export function hooksAssemblePrompt(op: RunningOperation): boolean {
  const hooks = op.threadHooks;
  return hooks !== undefined && ASSEMBLY_HOOKS.some((h) => hooks.has(h));
}

/** What assembling a request with hooks gives: the messages to send, or the message a blocking hook stopped it with. */
export type HookedPrompt = { messages: readonly Message[] } | { blocked: string };

/**
 * Assembles one model request through the thread hooks, in document 003's
 * order: the system message (`after_system_message`), one stable snapshot of
 * the eligible persisted history (the operation's active messages as they
 * are now: a message injected while the hooks run enters the next snapshot)
 * through `filter_messages`, then the messages of this turn not stored yet
 * (`extra`: the source's narration, joined deliveries), then
 * `prefilter_llm_history` over the whole request. Filters that break a tool
 * call / result pair lose the pair (the plugin drops and logs it). An error
 * with `block: true` from `prefilter_llm_history` gives `{ blocked }` (its
 * message); other hook errors were kept by the chain.
 */
export async function hookedPrompt(op: RunningOperation, extra: readonly Message[]): Promise<HookedPrompt> {
  const hooks = op.threadHooks!;
  let system = op.agent.instructions ?? '';
  if (hooks.has('after_system_message')) system = await hooks.afterSystemMessage(system);
  const snapshot = op.messages.slice();
  const rows = hooks.has('filter_messages') ? await hooks.filterMessages(snapshot) : snapshot;
  let messages: Message[] = system !== '' ? [{ role: 'system', content: system }] : [];
  for (const m of rows) messages.push(promptMessageOf(m));
  for (const m of extra) messages.push(m);
  if (hooks.has('prefilter_llm_history')) {
    try {
      messages = await hooks.prefilterLlmHistory(messages);
    } catch (err) {
      return { blocked: errorMessage(err) };
    }
  }
  return { messages };
}
