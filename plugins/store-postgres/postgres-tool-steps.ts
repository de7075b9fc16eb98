import { nowIso } from '../../kernel/clock.js';
import { HookgateError } from '../../kernel/errors.js';
import type { NewToolStep, ToolStepRecord } from '../../kernel/tool-steps.js';
import type { PostgresConnection } from './postgres-connection.js';

interface ToolStepRow {
  operation_id: string;
  tool_call_id: string;
  name: string;
  value: string;
  recorded_at: string;
}

const COLUMNS = 'o.id AS operation_id, t.tool_call_id, t.name, t.value, t.recorded_at';

/**
 * PostgreSQL text refuses NUL, and the runtime's own step names start with
 * one (CALL_STARTED_STEP, kept apart from tool names that may not hold control
 * characters). A name holding NUL, or one that starts with the marker, is
 * stored as the marker plus its UTF-8 hex; every other name as is, so the
 * mapping stays one-to-one and plain names read the same in SQL.
 */
const ENCODED_NAME = '\u0001hex:';

function encodeName(name: string): string {
  return name.includes('\u0000') || name.startsWith(ENCODED_NAME) ? ENCODED_NAME + Buffer.from(name, 'utf8').toString('hex') : name;
}

function decodeName(stored: string): string {
  return stored.startsWith(ENCODED_NAME) ? Buffer.from(stored.slice(ENCODED_NAME.length), 'hex').toString('utf8') : stored;
}

function toRecord(row: ToolStepRow): ToolStepRecord {
  return { operationId: row.operation_id, toolCallId: row.tool_call_id, name: decodeName(row.name), value: JSON.parse(row.value) as unknown, recordedAt: row.recorded_at };
}

/**
 * Durable tool steps in store-postgres (`tool_steps`). A record is one
 * INSERT ... ON CONFLICT DO NOTHING (its own transaction, committed when it
 * resolves): when another process inserts the same key at the same time,
 * PostgreSQL makes this insert wait for that one and then skip, so the first
 * record wins and the read that follows returns it.
 */
export class PostgresToolSteps {
  constructor(private readonly db: PostgresConnection) {}

  async record(step: NewToolStep): Promise<{ recorded: boolean; step: ToolStepRecord }> {
    const value = JSON.stringify(step.value ?? null);
    const inserted = await this.db.query<ToolStepRow>(
      `WITH o AS (SELECT seq, id FROM operations WHERE id = $1),
         t AS (INSERT INTO tool_steps (operation_seq, tool_call_id, name, value, recorded_at) SELECT seq, $2, $3, $4, $5 FROM o
               ON CONFLICT (operation_seq, tool_call_id, name) DO NOTHING RETURNING tool_call_id, name, value, recorded_at)
       SELECT ${COLUMNS} FROM t, o`,
      [step.operationId, step.toolCallId, encodeName(step.name), value, nowIso()],
    );
    if (inserted.rows[0]) return { recorded: true, step: toRecord(inserted.rows[0]) };
    const { rows } = await this.db.query<ToolStepRow>(
      `SELECT ${COLUMNS} FROM operations o LEFT JOIN tool_steps t ON t.operation_seq = o.seq AND t.tool_call_id = $2 AND t.name = $3 WHERE o.id = $1`,
      [step.operationId, step.toolCallId, encodeName(step.name)],
    );
    if (!rows[0]) throw new HookgateError('STORE_NOT_FOUND', `Operation ${step.operationId} does not exist`);
    return { recorded: false, step: toRecord(rows[0]) };
  }

  async list(operationId: string, toolCallId: string): Promise<ToolStepRecord[]> {
    const { rows } = await this.db.query<ToolStepRow>(
      `SELECT ${COLUMNS} FROM tool_steps t JOIN operations o ON o.seq = t.operation_seq WHERE o.id = $1 AND t.tool_call_id = $2 ORDER BY t.seq`,
      [operationId, toolCallId],
    );
    return rows.map(toRecord);
  }
}
