import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT, runHookgate } from '../helpers/cli-process.js';

const EXAMPLE = path.join(ROOT, 'examples', 'hello-files', 'agent.yaml');

/** Runs `node dist/cli.js ...args` in `cwd` with no HOOKGATE_* variables from the developer's shell. */
const hookgate = runHookgate;

function ndjson(text: string): Array<Record<string, unknown> & { type: string }> {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown> & { type: string });
}

describe('hookgate CLI', function () {
  this.timeout(60_000);
  let dir: string;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-cli-')));
    await copyFile(EXAMPLE, path.join(dir, 'agent.yaml'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('--help explains every command and exits 0', async () => {
    const r = await hookgate(dir, ['--help']);
    assert.equal(r.code, 0);
    for (const command of ['run', 'approve', 'reject', 'reject-continue', 'plugins', 'operations', 'show']) {
      assert.match(r.stdout, new RegExp(`^\\s+${command} `, 'm'), `--help lists ${command}`);
    }
  });

  it('exits 2 on an unknown command', async () => {
    const r = await hookgate(dir, ['launch']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown command 'launch'/);
  });

  it('exits 2 on an invalid config file, printing the file, key path and what was expected', async () => {
    await writeFile(path.join(dir, 'hookgate.config.yaml'), 'store:\n  sqlite:\n    path: 42\n');
    const r = await hookgate(dir, ['plugins']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /hookgate\.config\.yaml: store\.sqlite\.path: expected string, got 42/);
  });

  it('exits 2 when the --config file does not exist, naming it', async () => {
    const r = await hookgate(dir, ['--config', 'nowhere.yaml', 'plugins']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /nowhere\.yaml: cannot read the file/);
  });

  it('exits 2 on an invalid HOOKGATE_* variable, naming it', async () => {
    const r = await hookgate(dir, ['plugins'], { HOOKGATE_STORE__DRIVER: 'Not A Driver' });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /HOOKGATE_STORE__DRIVER: store\.driver: /);
  });

  it('runs the example agent on embedded defaults and prints its timeline', async () => {
    const r = await hookgate(dir, ['run', 'agent.yaml']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n').map((l) => l.trim()).filter(Boolean);
    assert.ok(lines.some((l) => l.startsWith('✓ fs/writeFile')), 'the write succeeded');
    assert.ok(lines.some((l) => l.startsWith('✓ fs/readFile') && l.includes('hello from hookgate')), 'the read returned the note');
    assert.ok(lines.some((l) => l.startsWith('✗ fs/readFile') && l.includes('outside the sandbox')), 'the escape was refused');
    assert.match(lines.at(-1)!, /^■ done/);
    assert.equal(await readFile(path.join(dir, '.hookgate', 'sandbox', 'notes', 'hello.txt'), 'utf8'), 'hello from hookgate\n');
  });

  it('run --json prints NDJSON events from operation_started to operation_finished (done)', async () => {
    const r = await hookgate(dir, ['run', 'agent.yaml', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const events = ndjson(r.stdout);
    assert.equal(events[0]!.type, 'operation_started');
    const last = events.at(-1)!;
    assert.equal(last.type, 'operation_finished');
    assert.equal(last.reason, 'done');
    const tools = events.filter((e) => e.type === 'tool_finished').map((e) => `${String(e.identifier)}/${String(e.apiName)}`);
    assert.deepEqual(tools, ['fs/writeFile', 'fs/readFile', 'fs/listDir', 'fs/readFile']);
    assert.ok(events.every((e) => e.operationId === events[0]!.operationId));
  });

  it('exits 1 when the agent run does not finish (step limit reached)', async () => {
    const text = (await readFile(path.join(dir, 'agent.yaml'), 'utf8')).replace('maxSteps: 20', 'maxSteps: 2');
    await writeFile(path.join(dir, 'short.yaml'), text);
    const r = await hookgate(dir, ['run', 'short.yaml', '--json']);
    assert.equal(r.code, 1);
    assert.equal(ndjson(r.stdout).at(-1)!.reason, 'max_steps');
  });

  it('exits 2 on an invalid agent file, naming the file and the key', async () => {
    await writeFile(path.join(dir, 'broken.yaml'), 'id: broken\nmodel:\n  provider: scripted\nlimits:\n  maxSteps: many\n');
    const r = await hookgate(dir, ['run', 'broken.yaml']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /broken\.yaml: limits\.maxSteps: /);
  });

  it('plugins lists store-sqlite as started on embedded defaults', async () => {
    const r = await hookgate(dir, ['plugins']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^store-sqlite\s+started\b/m);
    assert.match(r.stdout, /^model-scripted\s+started\b/m);
    assert.match(r.stdout, /^tools-builtin\s+started\b/m);
  });

  it('persists the run: a second process shows its steps, tool calls and tool results', async () => {
    const run = await hookgate(dir, ['run', 'agent.yaml', '--json']);
    assert.equal(run.code, 0, run.stderr);
    const operationId = String(ndjson(run.stdout)[0]!.operationId);

    const r = await hookgate(dir, ['show', operationId, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const shown = JSON.parse(r.stdout) as {
      operation: { id: string; status: string; reason: string };
      steps: Array<{ kind: string }>;
      messages: Array<{ role: string; content: string; toolCalls?: Array<{ identifier: string; apiName: string }>; toolResult?: { success: boolean } }>;
    };
    assert.equal(shown.operation.id, operationId);
    assert.equal(shown.operation.reason, 'done');
    assert.ok(shown.steps.some((s) => s.kind === 'call_llm'));
    assert.ok(shown.steps.some((s) => s.kind === 'call_tool'));
    const calls = shown.messages.flatMap((m) => m.toolCalls ?? []).map((c) => `${c.identifier}/${c.apiName}`);
    assert.deepEqual(calls, ['fs/writeFile', 'fs/readFile', 'fs/listDir', 'fs/readFile']);
    const results = shown.messages.filter((m) => m.role === 'tool');
    assert.equal(results.length, 4);
    assert.ok(results.some((m) => m.content === 'hello from hookgate\n' && m.toolResult?.success === true));
    assert.ok(results.some((m) => m.toolResult?.success === false && /outside the sandbox/.test(m.content)));
    assert.equal(shown.messages[0]!.role, 'user');
    assert.equal(shown.messages.at(-1)!.role, 'assistant');
  });

  it('show exits 2 for an operation id that does not exist', async () => {
    const r = await hookgate(dir, ['show', 'op_nope']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /op_nope/);
  });
});
