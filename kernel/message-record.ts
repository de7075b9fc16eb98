import { copyToolCalls, copyToolResult } from './step-copies.js';
import type { MessageRecord, NewMessage } from './store.js';

/**
 * The record a store returns for a message it has just stored, the same a
 * later read returns: JSON values copied as a JSON column keeps them, absent
 * fields left out. Fields are added one by one (setting a key to undefined
 * and deleting it would leave a slow dictionary-mode object). Throws only
 * what jsonCopy throws (a cycle, a BigInt).
 */
export function newMessageRecord(m: NewMessage, id: string, operationId: string, seq: number, position: number, createdAt: string): MessageRecord {
  const record: MessageRecord = { id, operationId, seq, position, role: m.role, content: m.content, createdAt };
  const toolCalls = copyToolCalls(m.toolCalls);
  if (toolCalls !== undefined) record.toolCalls = toolCalls;
  if (m.toolCallId !== undefined) record.toolCallId = m.toolCallId;
  if (m.images !== undefined && m.images.length > 0) record.images = m.images.map((i) => ({ mediaType: i.mediaType, data: i.data }));
  const toolResult = copyToolResult(m.toolResult);
  if (toolResult !== undefined) record.toolResult = toolResult;
  return record;
}
