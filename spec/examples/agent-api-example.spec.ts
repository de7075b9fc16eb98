import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cliEnv, ROOT } from '../helpers/cli-process.js';

const SCRIPT = path.join(ROOT, 'dist', 'examples', 'agent-api', 'run.js');

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SCRIPT, ...args], { cwd: ROOT, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** README "Agent functions": examples/agent-api runs as a script of start() + init(). */
describe('example: examples/agent-api (start + init)', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-example-')));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('answers both sends in memory, the tool having labelled the issue through persistent state', async () => {
    const { code, stdout, stderr } = await run([]);
    assert.equal(code, 0, stderr);
    const lines = stdout.trim().split('\n');
    assert.match(lines[0]!, /^Labelled it a bug: .*\(instance uid inst_\S+\)$/);
    assert.equal(lines[1], 'Also seen on staging; labels are now bug, staging.');
  });

  it('with a SQLite file the second run continues the same instance (same uid)', async () => {
    const db = path.join(dir, 'triage.db');
    const first = await run([db]);
    const second = await run([db]);
    assert.equal(second.code, 0, second.stderr);
    const uid = (out: string) => /\(instance uid (inst_\S+)\)/.exec(out)?.[1];
    assert.ok(uid(first.stdout));
    assert.equal(uid(second.stdout), uid(first.stdout));
  });
});
