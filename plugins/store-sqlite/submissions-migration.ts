import type { Migration } from './migrations.js';

/**
 * Schema 8: document 001's submissions. One row per admitted delivery, on its
 * instance's thread (`thread_seq`: the pruner removes a thread's submissions
 * with it, and keeps a thread that has an unsettled one). `dispatch_id` is
 * unique, so admitting one delivery twice finds the first row. Unsettled rows
 * have a partial index of their own (by thread, in admission order): the
 * next submission of an instance and recovery at start are found without
 * reading the settled history.
 */
export const SUBMISSIONS_MIGRATION: Migration = Object.freeze({
  version: 8,
  description: 'submissions: durable deliveries to agent instances (queued, running, joined, completed, failed, aborted)',
  sql: `
    CREATE TABLE submissions (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      dispatch_id TEXT NOT NULL UNIQUE,
      thread_seq INTEGER NOT NULL REFERENCES threads (seq),
      agent_id TEXT NOT NULL,
      instance_id TEXT NOT NULL,
      status TEXT NOT NULL,
      message TEXT NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0,
      first_started_at TEXT,
      operation_id TEXT,
      joined_into TEXT,
      abort_requested_at TEXT,
      result TEXT,
      error TEXT,
      accepted_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      settled_at TEXT
    );
    CREATE INDEX submissions_by_thread ON submissions (thread_seq, seq);
    CREATE INDEX submissions_unsettled ON submissions (thread_seq, seq) WHERE status IN ('queued', 'running', 'joined');
  `,
});
