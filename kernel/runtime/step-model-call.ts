import { callAllowed, SUBAGENT_IDENTIFIER } from './call-facts.js';
import { callModel, promptMessages, usageOf } from './model-turn.js';
import type { StepDraft, StepExecutor } from './step-executor.js';
import type { RunningOperation } from './running-operation.js';
import { hookedPrompt, hooksAssemblePrompt } from './thread-hook-prompt.js';
import { markWrite } from './thread-hook-writes.js';
import { admitToolCalls, toolEntryFor } from './tool-call-gate.js';
import { announceToolCalls, toolCallsWatched } from './tool-call-thread-hooks.js';
import type { Message } from '../messages.js';
import { sourceJoining, sourceTurnNarration } from './agent-source-lifecycle.js';
import { confirmTurnDeliveries, takeTurnDeliveries, type TurnDelivery } from './turn-inbox.js';
import { takeStoredDeliveries } from './stored-turn-inbox.js';

/**
 * `call_llm`: one model turn. Its answer and the calls it asks for go into
 * one commit; from here on a call is known by the identity minted for it,
 * never by the model's id.
 */
export const modelCallStep: StepExecutor = async ({ deps }, op, draft) => {
  const state = draft.state;
  // The source's own narration first (agent functions' resource signals), stored with the state it keeps about it.
  const narration = sourceTurnNarration(deps, op);
  const narrated = narration.messages;
  if (narration.sourceState !== undefined) state.sourceState = narration.sourceState;
  // Queue mode: messages sent from other processes wait in the store (stored-turn-inbox.ts).
  if (op.queuedRun !== undefined) await takeStoredDeliveries(deps.store, op);
  // Messages joining the live response at this turn boundary: the model sees them now, the step's commit stores them.
  const joined = takeTurnDeliveries(op);
  // What the source adds after each joining delivery (agent functions' useAgentStart, once per delivery).
  const joinedAfter = joined.length > 0 ? await sourceJoining(deps, op, joined) : undefined;
  const joinedPrompt = joined.length > 0 ? joined.flatMap((d, i) => [joinedMessage(d), ...(joinedAfter?.[i] ?? []).map((m) => ({ role: m.role, content: m.content }))]) : [];
  let prompt: readonly Message[];
  if (op.threadHooks !== undefined && hooksAssemblePrompt(op)) {
    // Thread hooks shape the request (system message, history snapshot, provider messages).
    const hooked = await hookedPrompt(op, [...narrated.map((m) => ({ role: m.role, content: m.content })), ...joinedPrompt]);
    if ('blocked' in hooked) return blockedTurn(op, draft, narrated, joined, joinedAfter, hooked.blocked);
    prompt = hooked.messages;
  } else {
    prompt = promptMessages(op);
    if (narrated.length > 0) prompt = [...prompt, ...narrated.map((m) => ({ role: m.role, content: m.content }))];
    if (joined.length > 0) prompt = [...prompt, ...joinedPrompt];
  }
  const response = await callModel(deps, op, 'turn', prompt, state.modelTurns);
  storeTurnInputs(op, draft, narrated, joined, joinedAfter);
  draft.usage = usageOf(op, response);
  const toolCalls = admitToolCalls(deps, op.agent, response.toolCalls);
  state.modelTurns += 1;
  state.pendingToolCalls = toolCalls;
  state.lastText = response.text || state.lastText;
  draft.commit.messages.push({ role: 'assistant', content: response.text, ...(toolCalls.length > 0 ? { toolCalls } : {}) });
  draft.after.content = response.text;
  // Observers see only calls the allow-list lets through: a refused call reaches no hook (the gate's first stage).
  draft.after.toolCalls = toolCalls.filter((c) => callAllowed(op.agent, c) && (c.identifier === SUBAGENT_IDENTIFIER || toolEntryFor(deps, op.agent, c) !== undefined));
  deps.events.emit({ type: 'assistant_message', operationId: op.record.id, stepIndex: draft.stepIndex, text: response.text, toolCalls });
  if (toolCalls.length > 0 && toolCallsWatched(deps, op)) {
    // tool_call_started once the response is stored; the first call step waits for it (tool-call-thread-hooks.ts).
    const before = draft.effects;
    draft.effects = async () => {
      if (before) await before();
      await announceToolCalls(deps, op, toolCalls);
    };
  }
  return 'ready';
};

/** The turn's messages that were not stored yet go into its commit: the narration (signals), then joined deliveries (queued). */
function storeTurnInputs(op: RunningOperation, draft: StepDraft, narrated: readonly Message[], joined: readonly TurnDelivery[], joinedAfter: readonly (readonly Message[])[] | undefined): void {
  if (narrated.length > 0) draft.commit.messages.push(...narrated.map((m) => markWrite({ ...m }, 'signal')));
  if (joined.length > 0) {
    // Each joined delivery, then what the source added after it (useAgentStart's signals).
    draft.commit.messages.push(...joined.flatMap((d, i) => [markWrite({ id: d.id, ...joinedMessage(d) }, 'queued'), ...(joinedAfter?.[i] ?? []).map((m) => markWrite({ ...m }, 'signal'))]));
    draft.effects = () => (op.threadHooks === undefined ? confirmTurnDeliveries(op, joined) : settleHookedDeliveries(op, joined), Promise.resolve());
  }
}

/**
 * With thread hooks, a joined delivery a `before_create_message` hook
 * prevented is not stored and leaves the queue (document 003's queued
 * message): it resolves false (the sender finds no stored message), the
 * others joined.
 */
function settleHookedDeliveries(op: RunningOperation, joined: readonly TurnDelivery[]): void {
  const tail = op.messages.slice(-joined.length - 64);
  const stored = joined.filter((d) => tail.some((m) => m.id === d.id));
  confirmTurnDeliveries(op, stored);
  const prevented = joined.filter((d) => !stored.includes(d));
  if (prevented.length === 0) return;
  op.inboxTaken = (op.inboxTaken ?? []).filter((d) => !prevented.includes(d));
  for (const d of prevented) d.resolve(false);
}

/**
 * A `prefilter_llm_history` hook blocked the request (document 003): the
 * provider is not called; the turn stores the error's message as the
 * assistant's, and the operation finishes `hook_blocked` (next-step.ts).
 */
function blockedTurn(op: RunningOperation, draft: StepDraft, narrated: readonly Message[], joined: readonly TurnDelivery[], joinedAfter: readonly (readonly Message[])[] | undefined, message: string): 'ready' {
  storeTurnInputs(op, draft, narrated, joined, joinedAfter);
  const state = draft.state;
  state.pendingToolCalls = [];
  state.hookBlocked = true;
  draft.commit.messages.push({ role: 'assistant', content: message });
  draft.after.content = message;
  return 'ready';
}

/** A joined delivery as a user message (with its images when it has any). */
function joinedMessage(d: TurnDelivery): Message {
  return d.images === undefined || d.images.length === 0 ? { role: 'user', content: d.content } : { role: 'user', content: d.content, images: d.images };
}
