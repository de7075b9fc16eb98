import { randomUUID } from 'node:crypto';
import { errorMessage } from '../errors.js';
import { ZERO_USAGE } from '../messages.js';
import { conversationTokens } from './conversation-tokens.js';
import { callModel, usageOf } from './model-turn.js';
import { compactableCount } from './next-step.js';
import { endsAfterCompaction } from './agent-source-view.js';
import { baseEvent, dispatchHook } from './operation-dispatch.js';
import type { StepExecutor } from './step-executor.js';

/** What the summarizing model is asked to do with the older part of the conversation. */
const SUMMARY_INSTRUCTIONS = 'Summarize the conversation so far for your own later use. Keep facts, decisions, file names and open tasks. Be brief.';

/**
 * `compress_context`: replaces the older messages of the thread with a
 * model-written summary, in one commit (the summary message and which
 * messages it replaced). On failure the run goes on uncompressed and does
 * not try again until the conversation grew by half the threshold.
 */
export const compactionStep: StepExecutor = async ({ deps }, op, draft) => {
  const state = draft.state;
  const keep = op.agent.compaction?.keepRecent ?? 4;
  const cut = compactableCount(op.messages, keep);
  const older = op.messages.slice(0, cut);
  const tokenCount = conversationTokens(op.messages);
  const base = { ...baseEvent(op), stepIndex: draft.stepIndex };
  await dispatchHook(deps, op, 'beforeCompact', { ...base, messageCount: op.messages.length, tokenCount });
  try {
    const transcript = older.map((m) => `${m.role}: ${m.content}${m.toolCalls ? ` [tool calls: ${m.toolCalls.map((c) => `${c.identifier}/${c.apiName}`).join(', ')}]` : ''}`).join('\n');
    const response = await callModel(
      deps,
      op,
      'summarize',
      [
        { role: 'system', content: SUMMARY_INSTRUCTIONS },
        { role: 'user', content: transcript },
      ],
      state.compactions,
    );
    const summaryId = `msg_${randomUUID()}`;
    const summary = response.text;
    state.compactions += 1;
    state.compactRetryAboveTokens = undefined;
    // An operation whose work is this compaction (harness.compact()) ends here, as `done`, not at its step limit.
    if (endsAfterCompaction(op.agent)) state.endRequested = true;
    draft.commit.messages.push({ id: summaryId, role: 'summary', content: summary });
    draft.commit.compact = { messageIds: older.map((m) => m.id), summaryId };
    const messagesBefore = op.messages.length;
    const messagesAfter = messagesBefore - older.length + 1;
    draft.usage = usageOf(op, response);
    draft.effects = async () => {
      deps.events.emit({ type: 'compacted', operationId: op.record.id, stepIndex: draft.stepIndex, messagesBefore, messagesAfter });
      await dispatchHook(deps, op, 'afterCompact', { ...base, groupId: summaryId, messagesBefore, messagesAfter, summary });
    };
  } catch (err) {
    if (op.abort.signal.aborted) throw err;
    state.compactRetryAboveTokens = tokenCount + Math.ceil((op.agent.compaction?.thresholdTokens ?? 0) / 2);
    await dispatchHook(deps, op, 'onCompactError', { ...base, error: errorMessage(err), tokenCount });
    draft.usage = { ...ZERO_USAGE };
  }
  return 'ready';
};
