// The statements of one step commit of store-sqlite, raw, on a store's own connection (bench/README.md, "Issue 12:
// the SQLite step without BEGIN and COMMIT"). Plain JS, run from a built tree; count instructions under callgrind as
// the difference of two commit counts, e.g.
//
//   for n in 500 1500; do NOCKPT=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//     node --single-threaded bench/sqlite-step-statements.mjs . tx $n 2>&1 | grep Collected; done
//
// Variants: tx (BEGIN IMMEDIATE, PRAGMA data_version, the two-row INSERT, COMMIT, through db.transaction), auto (the
// INSERT alone in autocommit mode), cond (the INSERT guarded by the operations row, as usual-step-commit.ts), autoDv
// (the INSERT guarded by pragma_data_version), store (SqliteStore.commitStep). NOCKPT=1 turns the WAL autocheckpoint
// off (statement variants only); PSQ_BG=1 runs the background checkpointer (store variant).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
const [tree, variant, nStr] = process.argv.slice(2);
const N = Number(nStr);
const { SqliteStore } = await import(`${path.resolve(tree)}/dist/plugins/store-sqlite/sqlite-store.js`);
const dir = mkdtempSync(path.join(os.tmpdir(), 'psq-micro-'));
const store = new SqliteStore({ path: path.join(dir, 'b.db'), backgroundCheckpoints: process.env.PSQ_BG === '1' });
await store.migrate();
const db = store.db;
if (process.env.NOCKPT) db.pragma('wal_autocheckpoint = 0');
const state0 = { stepIndex: 0, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 }, pendingToolCalls: [], approvedToolCallIds: [], modelTurns: 0, compactions: 0 };
const agent = { id: 'a', model: { provider: 'scripted' } };
const ops = [];
for (let i = 0; i < Math.ceil(N / 41) + 1; i++) {
  const id = `op_${i}`;
  await store.createOperation({ id, agentId: 'a', agent, context: {}, state: state0 }, [{ role: 'user', content: 'hi' }], []);
  ops.push(id);
}
const seqOf = db.prepare('SELECT seq FROM operations WHERE id = ?').pluck();
const now = new Date().toISOString();
const stateText = JSON.stringify({ ...state0, stepIndex: 3, lastText: undefined });
const usage = '{"promptTokens":10,"completionTokens":5,"totalTokens":15,"cost":0}';
const summary = '{"content":"","toolCalls":[{"id":"c","identifier":"bench","apiName":"noop"}],"toolResults":[]}';
const calls = '[{"id":"call_1","identifier":"bench","apiName":"noop","args":{"i":1}}]';
const cols = `INSERT INTO operation_log (key, operation_seq, entry, created_at, step_index, step_kind, started_at, finished_at, usage, summary, state,
         state_version, message_seq, message_id, role, content, tool_calls, tool_call_id, tool_result)`;
const ins = db.prepare(`${cols}
       VALUES (?, ?, 'step', ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
         (?, ?, 'message', ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ?, NULL, ?, ?, ?, ?, ?)`);
const insDv = db.prepare(`${cols}
       SELECT * FROM (VALUES (?, ?, 'step', ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
         (?, ?, 'message', ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ?, NULL, ?, ?, ?, ?, ?)) WHERE (SELECT data_version FROM pragma_data_version) = ?`);
const dv = db.prepare('PRAGMA data_version').pluck();
const insCond = db.prepare(`${cols}
       SELECT * FROM (VALUES (?, ?, 'step', ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
         (?, ?, 'message', ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ?, NULL, ?, ?, ?, ?, ?))
       WHERE EXISTS (SELECT 1 FROM operations WHERE seq = ? AND id = ? AND state_version = ?)`);
const insNum = db.prepare(`${cols}
       VALUES (?, ?, 'step', ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
         (?, ?, 'message', ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ?, NULL, ?, ?, ?, ?, ?)`);
const argsN = (key, i) => [key, seq, now, i, 'call_llm', now, now, usage, summary, stateText, i + 1, key + 1, i + 2, 'assistant', '', calls, null, null];
function nextN() { if (k > 80) { op++; seq = seqOf.get(ops[op]); k = 1; } const key = seq * 16777216 + 1 + k; k += 2; return argsN(key, k); }

const begin = db.prepare('BEGIN IMMEDIATE'), commit = db.prepare('COMMIT');
let op = 0, k = 1, seq = seqOf.get(ops[0]);
const args = (key, i) => [key, seq, now, i, 'call_llm', now, now, usage, summary, stateText, i + 1, key + 1, seq, now, i + 2, 'assistant', '', calls, null, null];
const tx = db.transaction((a) => { dv.get(); ins.run(...a); });
function next() { if (k > 80) { op++; seq = seqOf.get(ops[op]); k = 1; } const key = seq * 16777216 + 1 + k; k += 2; return args(key, k); }
const variants = {
  tx: () => tx.immediate(next()),
  txNoDv: () => db.transaction((a) => ins.run(...a)).immediate(next()),
  manual: () => { begin.run(); dv.get(); ins.run(...next()); commit.run(); },
  auto: () => ins.run(...next()),
  cond: () => { const a = next(); const r = insCond.run(...a, seq, ops[op], 0); if (r.changes !== 2) throw new Error('cond'); },
  autoDv: () => { const r = insDv.run(...next(), dv.get()); if (r.changes !== 2) throw new Error('dv'); },
};
if (variant === 'store') {
  let i = 0;
  for (const id of ops) { for (let s = 0; s < 40 && i < N; s++, i++) {
    await store.commitStep(id, { state: { ...state0, stepIndex: s + 1 }, messages: [{ role: 'assistant', content: '', toolCalls: [{ id: 'call_' + s, identifier: 'bench', apiName: 'noop', args: { i: s } }] }],
      step: { operationId: id, stepIndex: s, kind: 'call_llm', startedAt: now, finishedAt: now, usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15, cost: 0 }, summary: { content: '', toolCalls: [], toolResults: [] } } });
  } }
} else {
  const f = variants[variant];
  for (let i = 0; i < N; i++) f();
}
await store.close();
rmSync(dir, { recursive: true, force: true });
