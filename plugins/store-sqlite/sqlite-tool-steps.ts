import type Database from 'better-sqlite3';
import { nowIso } from '../../kernel/clock.js';
import { HookgateError } from '../../kernel/errors.js';
import type { NewToolStep, ToolStepRecord } from '../../kernel/tool-steps.js';

interface ToolStepRow {
  operation_id: string;
  tool_call_id: string;
  name: string;
  value: string;
  recorded_at: string;
}

const COLUMNS = 'o.id AS operation_id, t.tool_call_id, t.name, t.value, t.recorded_at';
const FROM = 'tool_steps t JOIN operations o ON o.seq = t.operation_seq';

function toRecord(row: ToolStepRow): ToolStepRecord {
  return { operationId: row.operation_id, toolCallId: row.tool_call_id, name: row.name, value: JSON.parse(row.value) as unknown, recordedAt: row.recorded_at };
}

/**
 * Durable tool steps in store-sqlite (the `tool_steps` table of schema 10).
 * A record is its own IMMEDIATE transaction (committed when `record`
 * returns); methods run inside the store's guard.
 */
export class SqliteToolSteps {
  private readonly s;
  private readonly recordTx: Database.Transaction<(step: NewToolStep) => { recorded: boolean; step: ToolStepRecord }>;

  constructor(db: Database.Database) {
    const s = (this.s = {
      operationSeq: db.prepare<[string], number>('SELECT seq FROM operations WHERE id = ?').pluck(),
      insert: db.prepare<[number, string, string, string, string]>(
        'INSERT OR IGNORE INTO tool_steps (operation_seq, tool_call_id, name, value, recorded_at) VALUES (?, ?, ?, ?, ?)',
      ),
      one: db.prepare<[number, string, string], ToolStepRow>(`SELECT ${COLUMNS} FROM ${FROM} WHERE t.operation_seq = ? AND t.tool_call_id = ? AND t.name = ?`),
      ofCall: db.prepare<[string, string], ToolStepRow>(
        `SELECT ${COLUMNS} FROM ${FROM} WHERE t.operation_seq = (SELECT seq FROM operations WHERE id = ?) AND t.tool_call_id = ? ORDER BY t.seq`,
      ),
    });
    this.recordTx = db.transaction((step: NewToolStep) => {
      const opSeq = s.operationSeq.get(step.operationId);
      if (opSeq === undefined) throw new HookgateError('STORE_NOT_FOUND', `Operation ${step.operationId} does not exist`);
      const written = s.insert.run(opSeq, step.toolCallId, step.name, JSON.stringify(step.value ?? null), nowIso()).changes === 1;
      return { recorded: written, step: toRecord(s.one.get(opSeq, step.toolCallId, step.name)!) };
    });
  }

  record(step: NewToolStep): { recorded: boolean; step: ToolStepRecord } {
    return this.recordTx.immediate(step);
  }

  list(operationId: string, toolCallId: string): ToolStepRecord[] {
    return this.s.ofCall.all(operationId, toolCallId).map(toRecord);
  }
}
