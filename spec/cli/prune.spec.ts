import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readStore, runHookgate, type CliResult } from '../helpers/cli-process.js';

/*
 * `hookgate prune` end to end: real CLI processes on a real SQLite file in a
 * temp folder, the retention read from its hookgate.config.yaml.
 */

const DONE = 'id: done-agent\nmodel: { provider: scripted, turns: [ { text: all done } ] }\n';
const CAREFUL = `id: careful
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: fs, apiName: writeFile, args: { path: note.txt, content: approved } } ]
    - text: written
tools: [fs/*]
approval: { tools: [fs/writeFile] }
`;
// done-agent keeps its newest 2 operations; careful only 1 (both of its operations will be parked); the decision log 3 entries.
const CONFIG = 'retention:\n  maxOperations: 2\n  agents: { careful: { maxOperations: 1 } }\n  decisionLog: { maxEntries: 3 }\n';

function shown(r: CliResult): string {
  return `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

function operationIdOf(r: CliResult): string {
  const id = /\(operation (op_[0-9a-f-]+)\)/.exec(r.stdout)?.[1];
  assert.ok(id, shown(r));
  return id;
}

describe('hookgate prune (a real SQLite file, through the CLI)', function () {
  this.timeout(120_000);
  let dir: string;
  const hookgate = (...args: string[]) => runHookgate(dir, args);
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-prune-cli-')));
    await writeFile(path.join(dir, 'done.yaml'), DONE);
    await writeFile(path.join(dir, 'careful.yaml'), CAREFUL);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('--dry-run says what would go per kind and removes nothing; then prune removes exactly that, and parked operations still work', async () => {
    await writeFile(path.join(dir, 'hookgate.config.yaml'), CONFIG);
    const parked: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await hookgate('run', 'careful.yaml');
      assert.equal(r.code, 3, shown(r));
      parked.push(operationIdOf(r));
    }
    const done: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await hookgate('run', 'done.yaml');
      assert.equal(r.code, 0, shown(r));
      done.push(operationIdOf(r));
    }
    await readStore(dir, async (store) => {
      for (let day = 1; day <= 5; day++) {
        await store.recordDecision({
          id: `d-${day}`, createdAt: `2025-01-0${day}T00:00:00.000Z`, event: 'beforeToolCall', policies: [], decision: 'allow', defaulted: true, latencyMicros: 1, inputDigest: 'x',
        });
      }
    });

    const dry = await hookgate('prune', '--dry-run');
    assert.equal(dry.code, 0, shown(dry));
    assert.match(dry.stdout, /^would remove \(dry run: nothing removed\) from the SQLite store at .*hookgate\.db, by maxOperations 2; agent careful: maxOperations 1; decision log: maxEntries 3:$/m);
    for (const [kind, n] of [['threads', 2], ['operations', 2], ['messages', 4], ['steps', 2], ['hooks', 0], ['decisions', 2]] as const) {
      assert.match(dry.stdout, new RegExp(`^  ${kind} +${n}$`, 'm'), `${kind}: ${shown(dry)}`);
    }
    const listed = await hookgate('operations', '--json');
    assert.equal((JSON.parse(listed.stdout) as unknown[]).length, 6, 'the dry run removed nothing');

    const pruned = await hookgate('prune', '--json');
    assert.equal(pruned.code, 0, shown(pruned));
    const report = JSON.parse(pruned.stdout) as { dryRun: boolean; removed: Record<string, number> };
    assert.equal(report.dryRun, false);
    assert.deepEqual({ ...report.removed, reclaimedBytes: 0 }, { threads: 2, operations: 2, messages: 4, steps: 2, hooks: 0, decisions: 2, reclaimedBytes: 0 });

    const left = JSON.parse((await hookgate('operations', '--json')).stdout) as Array<{ id: string }>;
    assert.deepEqual(left.map((o) => o.id).sort(), [...parked, done[2]!, done[3]!].sort(), 'the two oldest done operations went; both parked ones stayed');
    const gone = await hookgate('show', done[0]!);
    assert.equal(gone.code, 2, shown(gone));
    assert.match(gone.stderr, /no operation has id/);
    const decisions = JSON.parse((await hookgate('decisions', '--json')).stdout) as Array<{ id: string }>;
    assert.deepEqual(decisions.map((d) => d.id).filter((id) => id.startsWith('d-')), ['d-5', 'd-4', 'd-3']);
    // The older parked operation is beyond careful's count, and still complete: approving it finishes the run.
    const approved = await hookgate('approve', parked[0]!);
    assert.equal(approved.code, 0, shown(approved));

    const again = await hookgate('prune');
    assert.equal(again.code, 0, shown(again));
    assert.match(again.stdout, /^removed from the SQLite store at .*, by .*:$/m);
    assert.match(again.stdout, /^ {2}reclaimed +\d/m);
  });

  it('without retention in the config says so and removes nothing', async () => {
    assert.equal((await hookgate('run', 'done.yaml')).code, 0);
    assert.equal((await hookgate('run', 'done.yaml')).code, 0);
    const r = await hookgate('prune');
    assert.equal(r.code, 0, shown(r));
    assert.match(r.stdout, /^no retention configured .*: nothing removed from the SQLite store at /);
    assert.equal((JSON.parse((await hookgate('operations', '--json')).stdout) as unknown[]).length, 2);
  });

  it('refuses an invalid retention key with the key and what was expected (exit 2)', async () => {
    await writeFile(path.join(dir, 'hookgate.config.yaml'), 'retention: { maxAge: 30 }\n');
    const r = await hookgate('prune', '--dry-run');
    assert.equal(r.code, 2, shown(r));
    assert.equal(r.stderr.trim(), 'error: hookgate.config.yaml: retention.maxAge: expected a duration such as 30d, 12h, 15m or 90s (1 second to 100 years), or unlimited, got 30');
  });
});
