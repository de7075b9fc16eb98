import type { MessageRecord, Store } from '../../kernel/store.js';
import type { SubmissionRecord } from '../../kernel/submissions.js';
import { parseDeliveredMessage, type DeliveredMessage } from './delivered-message.js';
import { SUBMISSION_CONTEXT_KEY } from './submission-settlement.js';
import { dataPartChunks } from './conversation-data-parts.js';
import {
  isAfter,
  SETTLEMENT_INDEX_BASE,
  STREAM_START,
  type ConversationChunkPosition,
  type ConversationMessage,
  type ConversationStreamChunk,
  type ConversationStreamChunkBody,
} from './conversation-stream.js';

/** What one read of the stream returns: the chunks after the offset, in order, and where the next read starts. */
export interface ConversationRead {
  chunks: ConversationStreamChunk[];
  /** The last chunk's position, or the read's own offset when nothing came after it. */
  next: ConversationChunkPosition;
}

/** The id of an attachment of a submission's delivered message: `<submission id>.<index>`. */
export function attachmentIdOf(submissionId: string, index: number): string {
  return `${submissionId}.${index}`;
}

const CACHE_LIMIT = 4_096;

/**
 * Projects an instance's conversation (its thread's stored messages and its
 * submissions' settlements) into document 001's ConversationStreamChunk
 * values. Everything comes from the store, so a history read and the live
 * tail (which re-reads after each change) give one stream: the same chunk
 * has the same position whichever way it was read, and a read from an
 * offset returns exactly the chunks after it.
 *
 * Per stored message: a user message that is a submission's prompt or a
 * joined delivery is `message-appended` as the sender delivered it (a signal
 * as `role: 'system'`, attachments as `file` parts), other user messages
 * (signals appended by event hooks) as a system `dispatch` message; an
 * assistant message is `message-started`, its text as one `message-delta`,
 * a `tool-input` per call and `message-completed`, all addressed to one
 * message per response (`resp_<operation id>`, so continuations share it);
 * a tool message is `tool-output` or `tool-output-error`. Summaries and
 * placeholders of deferred results are not shown. A settled submission is
 * `submission-settled` at the position recorded when it settled (after the
 * last message before it); submissions settled before positions were
 * recorded are not shown. `useDataWriter` writes are `data-part` chunks
 * after the message their commit stored (conversation-data-parts.ts).
 */
export class ConversationProjector {
  /** Operation id -> the submission its context names ('' for none): contexts never change. */
  private readonly submissionOfOperation = new Map<string, string>();
  /** Submission id -> its delivered message: admitted messages never change. */
  private readonly messages = new Map<string, DeliveredMessage | null>();

  constructor(private readonly store: Store) {}

  /** The chunks of `threadId`'s stream after `after` (all of them from STREAM_START). */
  async read(threadId: string, after: ConversationChunkPosition = STREAM_START): Promise<ConversationRead> {
    const conversationId = threadId;
    // Messages first: a data part is placed on a message its commit stored, so values read after the messages
    // show no part whose message this read missed (it comes with the next read, still after the cursor).
    const records = await this.store.listThreadMessages(threadId, { fromPosition: Math.max(0, after.batch), includeCompacted: true });
    const [thread, settled] = await Promise.all([
      this.store.getThread(threadId),
      this.store.listSubmissions({ threadId, statuses: ['completed', 'failed', 'aborted'] }),
    ]);
    const out: ConversationStreamChunk[] = [];
    const anchored = mergeByPosition(dataPartChunks(conversationId, settled, thread?.values, records, after.batch), settlementChunks(conversationId, settled, after.batch));
    let s = 0;
    for (const record of records) {
      while (s < anchored.length && anchored[s]!.position.batch < record.position) push(out, anchored[s++]!, after);
      const bodies = await this.bodiesOf(conversationId, record);
      bodies.forEach((body, index) => push(out, { ...body, position: { batch: record.position, index } } as ConversationStreamChunk, after));
      while (s < anchored.length && anchored[s]!.position.batch === record.position) push(out, anchored[s++]!, after);
    }
    while (s < anchored.length) push(out, anchored[s++]!, after);
    return { chunks: out, next: out.length > 0 ? out[out.length - 1]!.position : after };
  }

  private async bodiesOf(conversationId: string, record: MessageRecord): Promise<ConversationStreamChunkBody[]> {
    switch (record.role) {
      case 'user':
        return [{ type: 'message-appended', conversationId, message: await this.userMessage(record) }];
      case 'assistant': {
        const messageId = `resp_${record.operationId}`;
        const submissionId = await this.submissionOf(record.operationId);
        const timestamp = record.createdAt;
        const bodies: ConversationStreamChunkBody[] = [
          { type: 'message-started', conversationId, messageId, ...(submissionId ? { submissionId } : {}), timestamp },
        ];
        if (record.content !== '') bodies.push({ type: 'message-delta', conversationId, messageId, kind: 'text', delta: record.content });
        for (const call of record.toolCalls ?? []) {
          bodies.push({ type: 'tool-input', conversationId, messageId, toolCallId: call.id, toolName: toolNameOf(call.identifier, call.apiName), input: call.args, timestamp });
        }
        bodies.push({ type: 'message-completed', conversationId, messageId, timestamp });
        return bodies;
      }
      case 'tool': {
        const result = record.toolResult;
        // An empty placeholder waits for a deferred result: the publication fills it in (same position) later.
        if (!result || record.toolCallId === undefined) return [];
        const timing = result.executionTime !== undefined ? { durationMs: result.executionTime } : {};
        if (!result.success) {
          return [{ type: 'tool-output-error', conversationId, toolCallId: record.toolCallId, errorText: result.content !== '' ? result.content : (result.error ?? 'the tool call failed'), ...timing, timestamp: record.createdAt }];
        }
        return [{ type: 'tool-output', conversationId, toolCallId: record.toolCallId, output: result.data !== undefined ? result.data : result.content, ...timing, timestamp: record.createdAt }];
      }
      default:
        return [];
    }
  }

  private async userMessage(record: MessageRecord): Promise<ConversationMessage> {
    const submissionId = record.id.startsWith('join_') ? record.id.slice('join_'.length) : record.seq === 1 ? await this.submissionOf(record.operationId) : '';
    const delivered = submissionId ? await this.deliveredOf(submissionId) : null;
    if (!delivered) return { id: record.id, role: 'system', purpose: 'dispatch', display: 'visible', parts: [{ type: 'text', text: record.content, state: 'done' }] };
    if (delivered.kind === 'signal') {
      return {
        id: record.id,
        role: 'system',
        purpose: 'dispatch',
        display: 'visible',
        submissionId,
        signal: { type: delivered.type, ...(delivered.tagName !== undefined ? { tagName: delivered.tagName } : {}), ...(delivered.attributes !== undefined ? { attributes: { ...delivered.attributes } } : {}) },
        parts: [{ type: 'text', text: delivered.body, state: 'done' }],
      };
    }
    const files = (delivered.attachments ?? []).map((a, i) => ({
      type: 'file' as const,
      mediaType: a.mimeType,
      id: attachmentIdOf(submissionId, i),
      size: Buffer.byteLength(a.data, 'base64'),
      ...(a.filename !== undefined ? { filename: a.filename } : {}),
    }));
    return { id: record.id, role: 'user', purpose: 'user', display: 'visible', submissionId, parts: [{ type: 'text', text: delivered.body, state: 'done' }, ...files] };
  }

  private async submissionOf(operationId: string): Promise<string> {
    const known = this.submissionOfOperation.get(operationId);
    if (known !== undefined) return known;
    const op = await this.store.getOperation(operationId);
    const id = op?.context[SUBMISSION_CONTEXT_KEY] ?? '';
    remember(this.submissionOfOperation, operationId, id);
    return id;
  }

  private async deliveredOf(submissionId: string): Promise<DeliveredMessage | null> {
    if (this.messages.has(submissionId)) return this.messages.get(submissionId)!;
    const submission = await this.store.getSubmission(submissionId);
    let message: DeliveredMessage | null = null;
    try {
      if (submission) message = parseDeliveredMessage(submission.message);
    } catch {
      message = null;
    }
    remember(this.messages, submissionId, message);
    return message;
  }
}

/** The name a client sees for a tool: an agent function's tool by its own name, others as `identifier/apiName`. */
function toolNameOf(identifier: string, apiName: string): string {
  return identifier === 'agent' ? apiName : `${identifier}/${apiName}`;
}

/** The stream position a settlement recorded (the thread position it follows), if any. */
export function settlementPositionOf(submission: SubmissionRecord): number | undefined {
  const recorded = submission.result?.streamPosition ?? submission.error?.streamPosition;
  return typeof recorded === 'number' && Number.isSafeInteger(recorded) ? recorded : undefined;
}

/** The settlement chunks of batches from `fromBatch` on, in stream order (by position, then admission order). */
function settlementChunks(conversationId: string, settled: readonly SubmissionRecord[], fromBatch: number): ConversationStreamChunk[] {
  const anchored = settled
    .map((s) => ({ s, at: settlementPositionOf(s) }))
    .filter((x): x is { s: SubmissionRecord; at: number } => x.at !== undefined && x.at >= fromBatch)
    .sort((a, b) => a.at - b.at || a.s.seq - b.s.seq);
  const chunks: ConversationStreamChunk[] = [];
  for (const { s, at } of anchored) {
    // A thread settles its submissions in admission order, so seq keeps the live order within a batch.
    const index = SETTLEMENT_INDEX_BASE + s.seq;
    const outcome = s.status as 'completed' | 'failed' | 'aborted';
    chunks.push({
      type: 'submission-settled',
      conversationId,
      submissionId: s.id,
      outcome,
      ...(outcome !== 'completed' && s.error ? { error: { message: s.error.message, ...(s.error.type !== undefined ? { type: s.error.type } : {}) } } : {}),
      ...(s.joinedInto !== undefined ? { answeredBySubmissionId: s.joinedInto } : {}),
      timestamp: s.settledAt ?? s.updatedAt,
      position: { batch: at, index },
    });
  }
  return chunks;
}

/** Two position-ordered chunk lists as one. */
function mergeByPosition(a: ConversationStreamChunk[], b: ConversationStreamChunk[]): ConversationStreamChunk[] {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  return [...a, ...b].sort((x, y) => x.position.batch - y.position.batch || x.position.index - y.position.index);
}

function push(out: ConversationStreamChunk[], chunk: ConversationStreamChunk, after: ConversationChunkPosition): void {
  if (isAfter(chunk.position, after)) out.push(chunk);
}

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= CACHE_LIMIT) map.delete(map.keys().next().value!);
  map.set(key, value);
}
