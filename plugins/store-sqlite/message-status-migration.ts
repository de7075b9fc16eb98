import type { Migration } from './migrations.js';

/**
 * Schema 12: what a message update of document 003 may set besides the
 * content: the message's `status` and the time its response completed
 * (`response_completed_at`, microseconds since the epoch), two columns of
 * the message's log entry, NULL until an update sets them (no byte more for
 * any other row). Existing messages have neither.
 */
export const MESSAGE_STATUS_MIGRATION: Migration = Object.freeze({
  version: 12,
  description: 'message status and response completion time, set by message updates',
  sql: `
    ALTER TABLE operation_log ADD COLUMN status TEXT;
    ALTER TABLE operation_log ADD COLUMN response_completed_at INTEGER;
  `,
});
