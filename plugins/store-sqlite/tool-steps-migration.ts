import type { Migration } from './migrations.js';

/**
 * Schema 10: durable tool steps (document 001 `step.do`). One row per recorded
 * step, keyed by its operation (`operation_seq`), the tool call's id and the
 * step name: the unique index is both the record-once guard (INSERT OR
 * IGNORE: the first record wins) and the look-up of one call's steps, in
 * record order (`seq`). The pruner deletes an operation's rows with it, by
 * the index prefix.
 */
export const TOOL_STEPS_MIGRATION: Migration = Object.freeze({
  version: 10,
  description: 'tool steps: values of durable tools\' step.do(name, fn), recorded once per operation, tool call and name',
  sql: `
    CREATE TABLE tool_steps (
      seq INTEGER PRIMARY KEY,
      operation_seq INTEGER NOT NULL REFERENCES operations (seq),
      tool_call_id TEXT NOT NULL,
      name TEXT NOT NULL,
      value TEXT NOT NULL,
      recorded_at TEXT NOT NULL
    );
    CREATE UNIQUE INDEX tool_steps_by_call ON tool_steps (operation_seq, tool_call_id, name);
  `,
});
