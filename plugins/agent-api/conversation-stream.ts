import { InvalidRequestError } from './agent-errors.js';

/**
 * A chunk's place in an instance's conversation stream: `batch` is the
 * stored thread message it was projected from (its thread position; a
 * settlement takes the position of the last message before it), `index`
 * its place within that batch. Compared by `batch`, then `index`; unique
 * and increasing along the stream, so a client drops what it has seen.
 */
export interface ConversationChunkPosition {
  batch: number;
  index: number;
  /**
   * Only on live-only chunks (tool log lines): their order after the stored
   * chunk at `batch` / `index`, counted from 1 per tail. Never in an offset:
   * a resumed read starts after the stored chunk and does not replay them.
   */
  live?: number;
}

/** One part of a projected message (document 001's streaming protocol, the parts this runtime stores). */
export type ConversationMessagePart =
  | { type: 'text'; text: string; state: 'done' }
  | { type: 'file'; mediaType: string; id: string; size: number; filename?: string };

/** A complete message as the stream shows it (a user turn, a delivered or appended signal). */
export interface ConversationMessage {
  id: string;
  role: 'user' | 'system';
  purpose: 'user' | 'dispatch';
  display: 'visible';
  submissionId?: string;
  signal?: { type: string; tagName?: string; attributes?: Record<string, string> };
  parts: ConversationMessagePart[];
}

/** The chunk bodies: Flue's `ConversationStreamChunkBody`, the members this runtime records. */
export type ConversationStreamChunkBody =
  | { type: 'message-appended'; conversationId: string; message: ConversationMessage }
  | { type: 'message-started'; conversationId: string; messageId: string; submissionId?: string; timestamp: string }
  | { type: 'message-delta'; conversationId: string; messageId: string; kind: 'text'; delta: string }
  | { type: 'tool-input'; conversationId: string; messageId: string; toolCallId: string; toolName: string; input: unknown; timestamp: string }
  | { type: 'tool-output'; conversationId: string; toolCallId: string; output: unknown; durationMs?: number; timestamp: string }
  | { type: 'tool-output-error'; conversationId: string; toolCallId: string; errorText: string; durationMs?: number; timestamp: string }
  | { type: 'message-completed'; conversationId: string; messageId: string; timestamp: string }
  | { type: 'data-part'; conversationId: string; messageId: string; name: string; data: unknown }
  | { type: 'text-delta'; conversationId: string; messageId: string; delta: string }
  | { type: 'tool-log'; conversationId: string; toolCallId: string; level: 'info' | 'warn' | 'error'; message: string; attributes?: Record<string, unknown>; truncated?: true; timestamp: string }
  | {
      type: 'submission-settled';
      conversationId: string;
      submissionId: string;
      outcome: 'completed' | 'failed' | 'aborted';
      error?: { message: string; type?: string };
      answeredBySubmissionId?: string;
      timestamp: string;
    };

/** One projected chunk of an instance's conversation, with its position (document 001 `ConversationStreamChunk`). */
export type ConversationStreamChunk = ConversationStreamChunkBody & { position: ConversationChunkPosition };

/** Where settlement chunks start within a batch (plus the submission's admission `seq`): message chunks use the indexes below it. */
export const SETTLEMENT_INDEX_BASE = 1_000_000;

/** The position before every chunk: reading after it replays the whole conversation (offset `-1`). */
export const STREAM_START: ConversationChunkPosition = Object.freeze({ batch: -1, index: SETTLEMENT_INDEX_BASE - 1 });

/** Whether `a` comes after `b` in the stream. */
export function isAfter(a: ConversationChunkPosition, b: ConversationChunkPosition): boolean {
  return a.batch > b.batch || (a.batch === b.batch && (a.index > b.index || (a.index === b.index && (a.live ?? 0) > (b.live ?? 0))));
}

const OFFSET_PATTERN = /^(\d{16})_(\d{16})$/;

/**
 * The resume token of a position: two 16-digit numbers joined by `_`
 * (`-1` for the stream's start). Opaque to clients: they pass back what a
 * response gave them.
 */
export function formatOffset(position: ConversationChunkPosition): string {
  if (position.batch < 0) return '-1';
  return `${String(position.batch).padStart(16, '0')}_${String(position.index).padStart(16, '0')}`;
}

/** The position an offset names; InvalidRequestError naming `field` for anything but `-1` or the two-number form. */
export function parseOffset(offset: unknown, field = 'offset'): ConversationChunkPosition {
  if (offset === '-1') return STREAM_START;
  const match = typeof offset === 'string' ? OFFSET_PATTERN.exec(offset) : null;
  if (!match) {
    throw new InvalidRequestError(`${field} must be -1 or an offset a response returned (two 16-digit numbers joined by '_')`, { field });
  }
  const batch = Number(match[1]);
  const index = Number(match[2]);
  if (!Number.isSafeInteger(batch) || !Number.isSafeInteger(index)) throw new InvalidRequestError(`${field} is out of range`, { field });
  return { batch, index };
}

/**
 * Where a send admitted at thread head `position` reads its response from:
 * after that message's chunks and the settlements of earlier submissions
 * there, before its own (a settlement's index is SETTLEMENT_INDEX_BASE plus
 * the submission's admission `seq`).
 */
export function offsetAfterMessage(position: number, seq: number): ConversationChunkPosition {
  return { batch: position, index: SETTLEMENT_INDEX_BASE + seq - 1 };
}
