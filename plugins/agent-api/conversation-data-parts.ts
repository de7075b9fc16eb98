import type { MessageRecord } from '../../kernel/store.js';
import type { StreamDataPart, SubmissionRecord } from '../../kernel/submissions.js';
import { DATA_PARTS_VALUE, type StoredDataParts } from './thread-state-buffer.js';
import type { ConversationStreamChunk } from './conversation-stream.js';

/**
 * Where data part chunks start within a batch: after every chunk of the
 * message the batch is (a model turn has a few plus one per tool call),
 * before the settlements (SETTLEMENT_INDEX_BASE). A response's k-th write
 * is at this base plus k, in the batch of the message its commit stored
 * last, so a reader that saw that message sees the write next, and one that
 * read the commit's messages before its values still finds it after its
 * cursor.
 */
export const DATA_PART_INDEX_BASE = 500_000;

/**
 * The data parts of the thread's latest writing response that are placed
 * (committed), with their stream positions: write k of operation `op` whose
 * commit stored message `seq` S of `op` last is at `{ batch: position of
 * (op, S), index: DATA_PART_INDEX_BASE + k }`. `messages` are looked up for
 * those positions: a write whose message is not among them (read before its
 * commit, or older than the read) is left out. Pure; never throws on a
 * malformed stored value (it yields nothing).
 */
export function placedDataParts(values: Readonly<Record<string, unknown>> | undefined, messages: readonly MessageRecord[], onlyOperation?: string): StreamDataPart[] {
  const stored = values?.[DATA_PARTS_VALUE] as Partial<StoredDataParts> | undefined;
  if (stored === undefined || typeof stored.operationId !== 'string' || !Array.isArray(stored.writes) || stored.parts === undefined) return [];
  const operationId = stored.operationId;
  if (onlyOperation !== undefined && operationId !== onlyOperation) return [];
  const positionOfSeq = new Map<number, number>();
  for (const m of messages) if (m.operationId === operationId) positionOfSeq.set(m.seq, m.position);
  const taken = new Map<string, number>();
  const out: StreamDataPart[] = [];
  stored.writes.forEach((write, k) => {
    const nth = taken.get(write.name) ?? 0;
    taken.set(write.name, nth + 1);
    const batch = write.seq === undefined ? undefined : positionOfSeq.get(write.seq);
    const writes = Object.hasOwn(stored.parts!, write.name) ? stored.parts![write.name] : undefined;
    if (batch === undefined || writes === undefined || nth >= writes.length) return;
    out.push({ operationId, name: write.name, data: writes[nth], batch, index: DATA_PART_INDEX_BASE + k });
  });
  return out;
}

/**
 * The data part chunks of the stream at batches from `fromBatch` on, in
 * position order: settled responses' from what their settlement recorded
 * (`streamData`, the responses that joined another's carry none), the
 * response still writing from the thread's value (left out once its
 * submission settled, so nothing shows twice).
 */
export function dataPartChunks(
  conversationId: string,
  settled: readonly SubmissionRecord[],
  values: Readonly<Record<string, unknown>> | undefined,
  messages: readonly MessageRecord[],
  fromBatch: number,
): ConversationStreamChunk[] {
  const parts: StreamDataPart[] = [];
  const settledOperations = new Set<string>();
  for (const s of settled) {
    if (s.joinedInto !== undefined) continue;
    if (s.operationId !== undefined) settledOperations.add(s.operationId);
    const recorded = s.result?.streamData ?? s.error?.streamData;
    if (Array.isArray(recorded)) for (const part of recorded) if (part.batch >= fromBatch) parts.push(part);
  }
  for (const part of placedDataParts(values, messages)) if (!settledOperations.has(part.operationId)) parts.push(part);
  parts.sort((a, b) => a.batch - b.batch || a.index - b.index);
  return parts.map((part) => ({
    type: 'data-part',
    conversationId,
    messageId: `resp_${part.operationId}`,
    name: part.name,
    data: part.data,
    position: { batch: part.batch, index: part.index },
  }));
}
