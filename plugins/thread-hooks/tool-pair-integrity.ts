import type { Message } from '../../kernel/messages.js';

/** What a drop is logged with: the calls whose pair was broken, by id. */
export interface DroppedToolPairs {
  [field: string]: string[];
  /** Tool calls whose result the filter removed: the call went too. */
  callsWithoutResult: string[];
  /** Tool results whose call the filter removed: the result went too. */
  resultsWithoutCall: string[];
}

/**
 * Keeps the request's tool calls paired (document 003's history integrity):
 * providers refuse a tool result with no call before it, and a call with no
 * result. After a filter, a result whose call is gone is dropped, and a call
 * whose result is gone is taken out of its assistant message (the message
 * goes when nothing else is left of it). Both halves of a pair go together;
 * `log` is told once per request that dropped anything. Returns the same
 * array when nothing was dropped.
 */
export function keepToolPairs<M extends Message>(messages: M[], log: (dropped: DroppedToolPairs) => void): M[] {
  const calls = new Set<string>();
  const results = new Set<string>();
  for (const m of messages) {
    if (m.role === 'tool' && m.toolCallId !== undefined) results.add(m.toolCallId);
    for (const call of m.toolCalls ?? []) calls.add(call.id);
  }
  const callsWithoutResult = [...calls].filter((id) => !results.has(id));
  const seen = new Set<string>();
  const resultsWithoutCall: string[] = [];
  // A result counts as paired only when its call comes before it.
  for (const m of messages) {
    for (const call of m.toolCalls ?? []) seen.add(call.id);
    if (m.role === 'tool' && m.toolCallId !== undefined && !seen.has(m.toolCallId)) resultsWithoutCall.push(m.toolCallId);
  }
  if (callsWithoutResult.length === 0 && resultsWithoutCall.length === 0) return messages;
  // A result before its call is an orphan too, and so is that call: the pair goes together.
  const orphanCalls = new Set([...callsWithoutResult, ...resultsWithoutCall]);
  const orphanResults = new Set(resultsWithoutCall);
  const out: M[] = [];
  for (const m of messages) {
    if (m.role === 'tool' && m.toolCallId !== undefined && orphanResults.has(m.toolCallId)) continue;
    if (m.toolCalls !== undefined && m.toolCalls.some((c) => orphanCalls.has(c.id))) {
      const left = m.toolCalls.filter((c) => !orphanCalls.has(c.id));
      if (left.length === 0 && m.content === '') continue;
      out.push(left.length === 0 ? { ...m, toolCalls: undefined } : { ...m, toolCalls: left });
      continue;
    }
    out.push(m);
  }
  log({ callsWithoutResult, resultsWithoutCall });
  return out;
}
