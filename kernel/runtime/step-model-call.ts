import { callAllowed, SUBAGENT_IDENTIFIER } from './call-facts.js';
import { callModel, promptMessages, usageOf } from './model-turn.js';
import type { StepExecutor } from './step-executor.js';
import { admitToolCalls, toolEntryFor } from './tool-call-gate.js';
import type { Message } from '../messages.js';
import { sourceJoining, sourceTurnNarration } from './agent-source-lifecycle.js';
import { confirmTurnDeliveries, takeTurnDeliveries, type TurnDelivery } from './turn-inbox.js';

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
  // Messages joining the live response at this turn boundary: the model sees them now, the step's commit stores them.
  const joined = takeTurnDeliveries(op);
  // What the source adds after each joining delivery (agent functions' useAgentStart, once per delivery).
  const joinedAfter = joined.length > 0 ? await sourceJoining(deps, op, joined) : undefined;
  let prompt = promptMessages(op);
  if (narrated.length > 0) prompt = [...prompt, ...narrated.map((m) => ({ role: m.role, content: m.content }))];
  if (joined.length > 0) prompt = [...prompt, ...joined.flatMap((d, i) => [joinedMessage(d), ...(joinedAfter?.[i] ?? []).map((m) => ({ role: m.role, content: m.content }))])];
  const response = await callModel(deps, op, 'turn', prompt, state.modelTurns);
  if (narrated.length > 0) draft.commit.messages.push(...narrated.map((m) => ({ ...m })));
  if (joined.length > 0) {
    draft.commit.messages.push(...joined.flatMap((d, i) => [{ id: d.id, ...joinedMessage(d) }, ...(joinedAfter?.[i] ?? []).map((m) => ({ ...m }))]));
    draft.effects = () => (confirmTurnDeliveries(op, joined), Promise.resolve());
  }
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
  return 'ready';
};

/** A joined delivery as a user message (with its images when it has any). */
function joinedMessage(d: TurnDelivery): Message {
  return d.images === undefined || d.images.length === 0 ? { role: 'user', content: d.content } : { role: 'user', content: d.content, images: d.images };
}
