import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runHookgate } from '../helpers/cli-process.js';

// dist/spec/cli/x.spec.js -> the repository root.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const EXAMPLE = path.join(ROOT, 'examples', 'hello-files', 'agent.yaml');

const hookgate = runHookgate;

/**
 * Issue 9, item 12: a hooks module whose handlers never settle used to leave
 * `hookgate run` with nothing to wait for, and Node ended it with exit code 13
 * (an unsettled top-level await), which the README does not document. With
 * `hooks.handlerTimeoutMs` each hung call is that hook's error, the run goes
 * on, and the exit code is a documented one.
 */
describe('hookgate run with a hooks module whose handlers never settle', function () {
  this.timeout(60_000);
  let dir: string;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-cli-hang-')));
    await copyFile(EXAMPLE, path.join(dir, 'agent.yaml'));
    await writeFile(
      path.join(dir, 'hooks.mjs'),
      [
        'const never = () => new Promise(() => {});',
        'export default [',
        "  { id: 'hang-before-step', type: 'beforeStep', handler: never },",
        "  { id: 'hang-before-tool', type: 'beforeToolCall', handler: never },",
        "  { id: 'hang-on-complete', type: 'onComplete', handler: never },",
        '];',
        '',
      ].join('\n'),
    );
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('finishes the run and exits 0, logging each timed-out hook with its id and type', async () => {
    const r = await hookgate(dir, ['run', 'agent.yaml', '--json', '--hooks', 'hooks.mjs'], { HOOKGATE_HOOKS__HANDLER_TIMEOUT_MS: '200' });
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { type: string; status?: string; reason?: string });
    const finished = events.filter((e) => e.type === 'operation_finished');
    assert.equal(finished.length, 1, r.stdout.slice(-2000));
    assert.equal(finished[0]!.reason, 'done');
    const logged = r.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const [hookId, hookType] of [['hang-before-step', 'beforeStep'], ['hang-before-tool', 'beforeToolCall'], ['hang-on-complete', 'onComplete']]) {
      const line = logged.find((l) => l.hookId === hookId);
      assert.ok(line, `${hookId} was logged`);
      assert.equal(line.hookType, hookType);
      assert.match(String(line.error), /did not settle within 200 ms/);
    }
    // The tools really ran (nothing was mocked by the hung beforeToolCall handler).
    assert.equal(await readFile(path.join(dir, '.hookgate', 'sandbox', 'notes', 'hello.txt'), 'utf8'), 'hello from hookgate\n');
  });

  it('a hooks module that never finishes loading (a top-level await nothing settles) exits 1 with a message, not 13', async () => {
    await writeFile(path.join(dir, 'stuck.mjs'), 'await new Promise(() => {});\nexport default [];\n');
    const r = await hookgate(dir, ['run', 'agent.yaml', '--hooks', 'stuck.mjs'], {});
    assert.equal(r.code, 1);
    assert.match(r.stderr, /error: hookgate stopped: the command was waiting on something that can never finish/);
  });

  it('an out-of-range HOOKGATE_HOOKS__HANDLER_TIMEOUT_MS is bad config: exit 2 naming the variable', async () => {
    const r = await hookgate(dir, ['run', 'agent.yaml', '--hooks', 'hooks.mjs'], { HOOKGATE_HOOKS__HANDLER_TIMEOUT_MS: '0' });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /HOOKGATE_HOOKS__HANDLER_TIMEOUT_MS: hooks\.handlerTimeoutMs: expected a whole number/);
  });
});
