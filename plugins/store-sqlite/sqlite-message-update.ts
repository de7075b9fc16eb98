import type Database from 'better-sqlite3';
import { HookgateError } from '../../kernel/errors.js';
import { checkMessageUpdate } from '../../kernel/message-update.js';
import type { MessageRecord, MessageUpdate } from '../../kernel/store.js';
import type { MessageIds } from './message-ids.js';
import { toMessageRecord, type MessageRow } from './rows.js';

/** How the store selects message rows: its column list and its operations-to-log join (aliases `o` and `l`). */
export interface MessageSql {
  readonly columns: string;
  readonly from: string;
}

/**
 * `Store.updateMessage` for store-sqlite: one IMMEDIATE transaction that finds
 * the message by id (a generated id names its log key, a supplied one is
 * looked up on its index), checks that it belongs to the thread and is not
 * compacted, and rewrites the fields it gives (content, status, completion
 * time) in place. The log's keys and seqs do
 * not move, so the store's cached log tail stays true. Synchronous under the
 * store's guard; throws as the contract says, with nothing written.
 */
export class SqliteMessageUpdate {
  private readonly byKey: Database.Statement<[number], MessageRow & { thread_id: string }>;
  private readonly byGivenId: Database.Statement<[string], MessageRow & { thread_id: string }>;
  private readonly setFields: Database.Statement<[string | null, string | null, number | null, number]>;
  private readonly tx: Database.Transaction<(threadId: string, messageId: string, update: MessageUpdate) => MessageRecord>;

  constructor(db: Database.Database, private readonly ids: MessageIds, sql: MessageSql) {
    const select = `SELECT ${sql.columns}, t.id AS thread_id FROM ${sql.from} JOIN threads t ON t.seq = o.thread_seq WHERE l.entry = 'message'`;
    // A generated id names the message at its key only when that message has no supplied id (as message-ids.ts says).
    this.byKey = db.prepare(`${select} AND l.key = ? AND l.message_id IS NULL`);
    this.byGivenId = db.prepare(`${select} AND l.message_id = ?`);
    // A field the update does not give is bound as NULL and keeps its value.
    this.setFields = db.prepare(
      "UPDATE operation_log SET content = coalesce(?, content), status = coalesce(?, status), response_completed_at = coalesce(?, response_completed_at) WHERE key = ? AND entry = 'message'",
    );
    this.tx = db.transaction((threadId: string, messageId: string, update: MessageUpdate) => {
      const row = this.find(messageId);
      if (row === undefined || row.thread_id !== threadId) {
        throw new HookgateError('STORE_NOT_FOUND', `Thread ${threadId} has no message ${messageId}`, { details: { threadId, messageId } });
      }
      if (row.compacted_into !== null) {
        throw new HookgateError('STORE_CONFLICT', `Message ${messageId} was compacted into ${row.compacted_into}; a compacted message cannot be updated`, { details: { threadId, messageId } });
      }
      if (update.content === undefined && update.status === undefined && update.responseCompletedAt === undefined) return toMessageRecord(row, this.ids);
      this.setFields.run(update.content ?? null, update.status ?? null, update.responseCompletedAt ?? null, row.key);
      return toMessageRecord(
        { ...row, content: update.content ?? row.content, status: update.status ?? row.status, response_completed_at: update.responseCompletedAt ?? row.response_completed_at },
        this.ids,
      );
    });
  }

  /** Checks the update, then runs the transaction. */
  update(threadId: string, messageId: string, update: MessageUpdate): MessageRecord {
    const checked = checkMessageUpdate(messageId, update);
    return this.tx.immediate(threadId, messageId, checked);
  }

  private find(messageId: string): (MessageRow & { thread_id: string }) | undefined {
    const key = this.ids.keyOf(messageId);
    return key !== undefined ? this.byKey.get(key) : this.byGivenId.get(messageId);
  }
}
