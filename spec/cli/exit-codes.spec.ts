import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EXIT, EXIT_CODE_TABLE } from '../../plugins/cli/exit-codes.js';
import { CLI, cliEnv, ROOT, runHookgate, type CliResult } from '../helpers/cli-process.js';

const hookgate = runHookgate;

const AGENTS: Record<string, string> = {
  'done.yaml': 'id: done-agent\nmodel: { provider: scripted, turns: [ { text: all done } ] }\n',
  'fails.yaml': 'id: failing\nmodel: { provider: scripted, turns: [ { error: the model broke } ] }\n',
  'max-steps.yaml': `id: looping
model:
  provider: scripted
  onEnd: repeat-last
  turns: [ { toolCalls: [ { identifier: fs, apiName: listDir, args: { path: . } } ] } ]
tools: [fs/*]
limits: { maxSteps: 2 }
`,
  'careful.yaml': `id: careful
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: fs, apiName: writeFile, args: { path: note.txt, content: approved } } ]
    - text: written
tools: [fs/*]
approval: { tools: [fs/writeFile] }
`,
  'careful-then-fails.yaml': `id: careful-then-fails
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: fs, apiName: writeFile, args: { path: note.txt, content: approved } } ]
    - error: the model broke after the decision
tools: [fs/*]
approval: { tools: [fs/writeFile] }
`,
  'asks-twice.yaml': `id: asks-twice
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: fs, apiName: writeFile, args: { path: one.txt, content: one } } ]
    - toolCalls: [ { identifier: fs, apiName: writeFile, args: { path: two.txt, content: two } } ]
    - text: both written
tools: [fs/*]
approval: { tools: [fs/writeFile] }
`,
  'parent.yaml': `id: parent
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: agents, apiName: careful, args: { instruction: write the note } } ]
    - text: the helper wrote it
subagents: [careful.yaml]
tools: [agents/*]
`,
  'parent-then-fails.yaml': `id: parent-then-fails
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: agents, apiName: careful, args: { instruction: write the note } } ]
    - error: the parent broke after its helper
subagents: [careful.yaml]
tools: [agents/*]
`,
  // The second turn waits, so a SIGKILL during it leaves the operation running (a crashed process).
  'slow.yaml': `id: slow
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: fs, apiName: writeFile, args: { path: first.txt, content: one } } ]
    - { text: all done after a pause, delayMs: 1500 }
tools: [fs/*]
`,
  'slow-then-fails.yaml': `id: slow-then-fails
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: fs, apiName: writeFile, args: { path: first.txt, content: one } } ]
    - { error: the model broke after the restart, delayMs: 1500 }
tools: [fs/*]
`,
};

const PACK = `
name: guard
policies:
  - id: no-secret-writes
    match: '^fs/writeFile$'
    args: { path: '^secret' }
    effect: deny
    reason: secrets are read-only
    tests:
      - name: denies a secret write
        event: { identifier: fs, apiName: writeFile, args: { path: secret.txt } }
        expect: { effect: deny }
`;
const FAILING_PACK = `
name: wrong
policies:
  - id: no-rm
    match: '^shell/exec$'
    effect: deny
    tests:
      - name: wrongly expects allow
        event: { identifier: shell, apiName: exec, args: { command: 'rm -rf /' } }
        expect: { effect: allow }
`;
const BROKEN_PACK = "policies:\n  - id: backref\n    match: '(x)\\1'\n    effect: deny\n";

type Mode = 'text' | 'json';

/** One row of the exit-code table: a command in a situation, in the modes it has, and the code it must exit with. */
interface Row {
  command: string;
  situation: string;
  code: number;
  modes: readonly Mode[];
  /** The arguments, after any set-up (a parked or crashed operation of its own). */
  args: (mode: Mode) => Promise<string[]>;
}

const BOTH: readonly Mode[] = ['text', 'json'];
const TEXT: readonly Mode[] = ['text'];

/**
 * Issue 10, items 3 and "What to build" 3: one exit-code table, applied to
 * every command in text and --json mode alike. Each row runs the real CLI as
 * a child process against one SQLite store in a temporary folder.
 */
describe('hookgate exit codes: every command, text and --json', function () {
  this.timeout(120_000);
  let dir: string;

  before(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-exit-')));
    for (const [file, text] of Object.entries(AGENTS)) await writeFile(path.join(dir, file), text);
    await mkdir(path.join(dir, 'packs'));
    await writeFile(path.join(dir, 'packs', 'guard.yaml'), PACK);
    await writeFile(path.join(dir, 'failing.yaml'), FAILING_PACK);
    await writeFile(path.join(dir, 'broken.yaml'), BROKEN_PACK);
    await writeFile(path.join(dir, 'event.json'), JSON.stringify({ type: 'beforeToolCall', identifier: 'fs', apiName: 'writeFile', args: { path: 'secret.txt' } }));
    await writeFile(path.join(dir, 'bad-event.json'), '{ not json');
    await writeFile(path.join(dir, 'bad-retention.yaml'), 'retention: { maxOperations: 0 }\n');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const json = (mode: Mode) => (mode === 'json' ? ['--json'] : []);

  /** Runs an agent until it parks; the parked operation's id. */
  async function parked(agent: string): Promise<string> {
    const r = await hookgate(dir, ['run', agent, '--json']);
    assert.equal(r.code, EXIT.parked, `${agent} parks: ${r.stderr}`);
    return firstOperationId(r);
  }

  /** Runs a parent whose sub-agent parks; the sub-agent's operation id. */
  async function parkedChild(agent: string): Promise<string> {
    const r = await hookgate(dir, ['run', agent, '--json']);
    assert.equal(r.code, EXIT.parked, `${agent} parks: ${r.stderr}`);
    const started = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; operationId: string; parentOperationId?: string });
    const child = started.find((e) => e.type === 'operation_started' && e.parentOperationId !== undefined);
    assert.ok(child, 'a sub-agent started');
    assert.ok(started.some((e) => e.type === 'parked' && e.operationId === child.operationId), 'the sub-agent is the one parked');
    return child.operationId;
  }

  async function finished(agent: string): Promise<string> {
    const r = await hookgate(dir, ['run', agent, '--json']);
    return firstOperationId(r);
  }

  /** Starts a run and SIGKILLs it during its slow second turn: an operation a crashed process left running. */
  function crashed(agent: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, 'run', agent, '--json'], { cwd: dir, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      let buffer = '';
      let operationId = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        buffer += d;
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const event = JSON.parse(buffer.slice(0, nl)) as { type: string; operationId?: string; stepIndex?: number };
          buffer = buffer.slice(nl + 1);
          if (event.type === 'operation_started') operationId = String(event.operationId);
          if (event.type === 'step_started' && event.stepIndex === 2) {
            child.removeAllListeners('close');
            child.on('close', () => resolve(operationId));
            child.kill('SIGKILL');
          }
        }
      });
      child.on('error', reject);
      child.on('close', (code) => reject(new Error(`${agent} exited (${code}) before its second turn`)));
    });
  }

  const rows: Row[] = [
    // run
    { command: 'run', situation: 'the run finishes done', code: 0, modes: BOTH, args: async (m) => ['run', 'done.yaml', ...json(m)] },
    { command: 'run', situation: 'the run ends in error', code: 1, modes: BOTH, args: async (m) => ['run', 'fails.yaml', ...json(m)] },
    { command: 'run', situation: 'the run hits max_steps', code: 1, modes: BOTH, args: async (m) => ['run', 'max-steps.yaml', ...json(m)] },
    { command: 'run', situation: 'the run parks for approval', code: 3, modes: BOTH, args: async (m) => ['run', 'careful.yaml', ...json(m)] },
    { command: 'run', situation: '--auto-approve: approved, done', code: 0, modes: BOTH, args: async (m) => ['run', 'careful.yaml', '--auto-approve', ...json(m)] },
    { command: 'run', situation: '--decide reject: stopped as asked', code: 0, modes: BOTH, args: async (m) => ['run', 'careful.yaml', '--decide', 'reject', ...json(m)] },
    { command: 'run', situation: '--decide continue, then the run fails', code: 1, modes: BOTH, args: async (m) => ['run', 'careful-then-fails.yaml', '--decide', 'continue', ...json(m)] },
    { command: 'run', situation: 'a missing agent file', code: 2, modes: BOTH, args: async (m) => ['run', 'nowhere.yaml', ...json(m)] },
    // approve / reject / reject-continue
    { command: 'approve', situation: 'the run then finishes done', code: 0, modes: BOTH, args: async (m) => ['approve', await parked('careful.yaml'), ...json(m)] },
    { command: 'approve', situation: 'the run then ends in error', code: 1, modes: BOTH, args: async (m) => ['approve', await parked('careful-then-fails.yaml'), ...json(m)] },
    { command: 'approve', situation: "a sub-agent's call: its parent then finishes done", code: 0, modes: BOTH, args: async (m) => ['approve', await parkedChild('parent.yaml'), ...json(m)] },
    { command: 'approve', situation: "a sub-agent's call: its parent then ends in error", code: 1, modes: BOTH, args: async (m) => ['approve', await parkedChild('parent-then-fails.yaml'), ...json(m)] },
    { command: 'approve', situation: 'the run then parks again', code: 3, modes: BOTH, args: async (m) => ['approve', await parked('asks-twice.yaml'), ...json(m)] },
    { command: 'approve', situation: 'an operation that is not waiting', code: 2, modes: BOTH, args: async (m) => ['approve', await finished('done.yaml'), ...json(m)] },
    { command: 'approve', situation: 'an unknown operation', code: 2, modes: BOTH, args: async (m) => ['approve', 'op_nope', ...json(m)] },
    { command: 'reject', situation: 'the run stops as asked (interrupted)', code: 0, modes: BOTH, args: async (m) => ['reject', await parked('careful-then-fails.yaml'), '--reason', 'no', ...json(m)] },
    { command: 'reject', situation: 'an operation that is not waiting', code: 2, modes: BOTH, args: async (m) => ['reject', await finished('done.yaml'), ...json(m)] },
    { command: 'reject-continue', situation: 'the run then finishes done', code: 0, modes: BOTH, args: async (m) => ['reject-continue', await parked('careful.yaml'), '--reason', 'no', ...json(m)] },
    { command: 'reject-continue', situation: 'the run then ends in error', code: 1, modes: BOTH, args: async (m) => ['reject-continue', await parked('careful-then-fails.yaml'), ...json(m)] },
    { command: 'reject-continue', situation: 'an unknown operation', code: 2, modes: BOTH, args: async (m) => ['reject-continue', 'op_nope', ...json(m)] },
    // resume / abort
    { command: 'resume', situation: 'a crashed run finishes done', code: 0, modes: BOTH, args: async (m) => ['resume', await crashed('slow.yaml'), '--force', ...json(m)] },
    { command: 'resume', situation: 'a crashed run then ends in error', code: 1, modes: BOTH, args: async (m) => ['resume', await crashed('slow-then-fails.yaml'), '--force', ...json(m)] },
    { command: 'resume', situation: 'a parked operation', code: 2, modes: BOTH, args: async (m) => ['resume', await parked('careful.yaml'), ...json(m)] },
    { command: 'resume', situation: 'a finished operation', code: 2, modes: BOTH, args: async (m) => ['resume', await finished('done.yaml'), '--force', ...json(m)] },
    { command: 'abort', situation: 'a parked operation ends interrupted as asked', code: 0, modes: BOTH, args: async (m) => ['abort', await parked('careful.yaml'), ...json(m)] },
    { command: 'abort', situation: 'an operation that already finished', code: 0, modes: BOTH, args: async (m) => ['abort', await finished('fails.yaml'), ...json(m)] },
    { command: 'abort', situation: 'an unknown operation', code: 2, modes: BOTH, args: async (m) => ['abort', 'op_nope', ...json(m)] },
    // init
    { command: 'init', situation: 'scaffolds a new folder', code: 0, modes: TEXT, args: async () => ['init', 'scaffolded'] },
    { command: 'init', situation: 'a folder whose files exist (refused, nothing written)', code: 2, modes: TEXT, args: async () => {
        assert.equal((await hookgate(dir, ['init', 'scaffolded-twice'])).code, 0, 'the first init writes the folder');
        return ['init', 'scaffolded-twice'];
      } },
    // listings
    { command: 'plugins', situation: 'lists the plugins', code: 0, modes: BOTH, args: async (m) => ['plugins', ...json(m)] },
    { command: 'operations', situation: 'lists operations', code: 0, modes: BOTH, args: async (m) => ['operations', '--status', 'done', ...json(m)] },
    { command: 'operations', situation: 'a status that does not exist', code: 2, modes: BOTH, args: async (m) => ['operations', '--status', 'bogus', ...json(m)] },
    { command: 'show', situation: 'a stored operation', code: 0, modes: BOTH, args: async (m) => ['show', await finished('done.yaml'), ...json(m)] },
    { command: 'show', situation: 'an unknown operation', code: 2, modes: BOTH, args: async (m) => ['show', 'op_nope', ...json(m)] },
    { command: 'prune', situation: 'a pass by the config\'s retention (none configured: nothing removed)', code: 0, modes: BOTH, args: async (m) => ['prune', ...json(m)] },
    { command: 'prune', situation: '--dry-run', code: 0, modes: BOTH, args: async (m) => ['prune', '--dry-run', ...json(m)] },
    { command: 'prune', situation: 'a retention value outside its range', code: 2, modes: BOTH, args: async (m) => ['prune', '--config', 'bad-retention.yaml', ...json(m)] },
    { command: 'decisions', situation: 'queries the decision log', code: 0, modes: BOTH, args: async (m) => ['decisions', '--effect', 'deny', ...json(m)] },
    { command: 'decisions', situation: 'a limit that is not a number', code: 2, modes: BOTH, args: async (m) => ['decisions', '--limit', 'abc', ...json(m)] },
    // policy
    { command: 'policy check', situation: 'packs without errors', code: 0, modes: TEXT, args: async () => ['policy', 'check', 'packs'] },
    { command: 'policy check', situation: 'a broken pack', code: 2, modes: TEXT, args: async () => ['policy', 'check', 'broken.yaml'] },
    { command: 'policy test', situation: 'every test passes', code: 0, modes: BOTH, args: async (m) => ['policy', 'test', 'packs', ...json(m)] },
    { command: 'policy test', situation: 'a test fails', code: 1, modes: BOTH, args: async (m) => ['policy', 'test', 'failing.yaml', ...json(m)] },
    { command: 'policy test', situation: 'a broken pack', code: 2, modes: BOTH, args: async (m) => ['policy', 'test', 'broken.yaml', ...json(m)] },
    { command: 'policy eval', situation: 'an event', code: 0, modes: BOTH, args: async (m) => ['policy', 'eval', '--event', 'event.json', 'packs', ...json(m)] },
    { command: 'policy eval', situation: 'an event file that is not JSON', code: 2, modes: BOTH, args: async (m) => ['policy', 'eval', '--event', 'bad-event.json', 'packs', ...json(m)] },
    // serve (a running server's exits, SIGTERM drains -> 0, are driven in spec/cli/serve.spec.ts)
    { command: 'serve', situation: 'no agent modules to serve', code: 2, modes: TEXT, args: async () => ['serve'] },
    { command: 'serve token', situation: 'mints a token', code: 0, modes: TEXT, args: async () => ['serve', 'token', 'ops'] },
    { command: 'serve token', situation: 'a name that is not a token name', code: 2, modes: TEXT, args: async () => ['serve', 'token', 'bad name!'] },
    { command: 'worker', situation: 'a config without execution: queue', code: 2, modes: TEXT, args: async () => ['worker'] },
    // webhook, completion, the program itself
    { command: 'webhook secret', situation: 'prints a secret', code: 0, modes: TEXT, args: async () => ['webhook', 'secret'] },
    { command: 'webhook verify', situation: 'a port that is not a number', code: 2, modes: TEXT, args: async () => ['webhook', 'verify', '--port', 'x'] },
    { command: 'webhook verify', situation: 'no secret in the environment', code: 2, modes: TEXT, args: async () => ['webhook', 'verify', '--secret-env', 'SPEC_UNSET_WEBHOOK_SECRET'] },
    { command: 'completion', situation: 'a known shell', code: 0, modes: TEXT, args: async () => ['completion', 'bash'] },
    { command: 'completion', situation: 'an unknown shell', code: 2, modes: TEXT, args: async () => ['completion', 'powershell'] },
    { command: 'hookgate', situation: '--version', code: 0, modes: TEXT, args: async () => ['--version'] },
    { command: 'hookgate', situation: '--help', code: 0, modes: TEXT, args: async () => ['--help'] },
    { command: 'hookgate', situation: 'no command', code: 2, modes: TEXT, args: async () => [] },
    { command: 'hookgate', situation: 'an unknown command', code: 2, modes: TEXT, args: async () => ['launch'] },
    { command: 'hookgate', situation: 'an unknown option', code: 2, modes: BOTH, args: async (m) => ['plugins', '--colour', ...json(m)] },
  ];

  for (const row of rows) {
    for (const mode of row.modes) {
      it(`${row.command}${mode === 'json' ? ' --json' : ''}: ${row.situation} → exit ${row.code}`, async () => {
        const args = await row.args(mode);
        const r = await hookgate(dir, args);
        assert.equal(r.code, row.code, `hookgate ${args.join(' ')}\nstdout: ${r.stdout.slice(-1500)}\nstderr: ${r.stderr.slice(-1500)}`);
        if (mode === 'json' && row.code !== EXIT.usage && r.stdout.trim() !== '') assertJsonOutput(r.stdout);
      });
    }
  }

  it('webhook verify: a receiver stopped with Ctrl-C (SIGINT) → exit 0', async () => {
    const child = spawn(process.execPath, [CLI, 'webhook', 'verify', '--port', '0'], { cwd: dir, env: cliEnv({ WEBHOOK_SIGNING_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        if (d.includes('listening on')) child.kill('SIGINT');
      });
      child.on('error', reject);
      child.on('close', (c, s) => resolve([c, s]));
    });
    assert.equal(code, 0, `exit ${code}, signal ${signal}: ${stderr}`);
  });

  it('every command of --help has a row in this table', async () => {
    const help = await hookgate(dir, ['--help']);
    const listed = [...help.stdout.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
    const covered = new Set(rows.map((r) => r.command.split(' ')[0]!));
    for (const command of listed) assert.ok(covered.has(command), `no exit-code row for ${command}`);
  });

  it('--help and the README print the same exit-code table', async () => {
    const help = await hookgate(dir, ['--help']);
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    const cli = readme.slice(readme.indexOf('## The CLI'), readme.indexOf('\n## ', readme.indexOf('## The CLI') + 1));
    for (const { code, meaning } of EXIT_CODE_TABLE) assert.ok(help.stdout.includes(`${code}  ${meaning}`), `--help lists exit code ${code}`);
    const documented = [...cli.matchAll(/^\| `(\d+)` \| (.*) \|$/gm)].map((m) => ({ code: Number(m[1]), meaning: m[2]!.replace(/\\\|/g, '|') }));
    assert.deepEqual(documented, EXIT_CODE_TABLE.map((e) => ({ ...e })), "README's CLI section lists exactly the exit codes the CLI has");
  });
});

function firstOperationId(r: CliResult): string {
  const first = r.stdout.split('\n').find((l) => l.includes('"operation_started"'));
  assert.ok(first, `the run started an operation: ${r.stderr}`);
  return String((JSON.parse(first) as { operationId: string }).operationId);
}

/** --json output is JSON: one document, or one event a line. */
function assertJsonOutput(stdout: string): void {
  try {
    JSON.parse(stdout);
    return;
  } catch {
    for (const line of stdout.split('\n').filter((l) => l.trim() !== '')) assert.doesNotThrow(() => JSON.parse(line), `not JSON: ${line}`);
  }
}
