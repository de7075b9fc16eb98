import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { SqliteStore } from '../../plugins/store-sqlite/sqlite-store.js';
import { CLI, cliEnv, ROOT, runHookgate, type CliResult } from '../helpers/cli-process.js';
import { FakeOpenAiServer, finishChunk, roleChunk, sse, textChunk, usageChunk } from '../helpers/fake-openai-server.js';

const hookgate = runHookgate;
const run = promisify(execFile);

const FAILS = 'id: failing\nmodel: { provider: scripted, turns: [ { error: the model broke in a way you can see } ] }\n';
const CAREFUL = `id: careful
model:
  provider: scripted
  turns:
    - toolCalls:
        - { identifier: fs, apiName: writeFile, args: { path: a.txt, content: a } }
        - { identifier: fs, apiName: writeFile, args: { path: b.txt, content: b } }
    - error: the model broke after the approval
tools: [fs/*]
approval: { tools: [fs/writeFile] }
`;

function events(stdout: string): Array<Record<string, unknown> & { type: string }> {
  return stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown> & { type: string });
}

function operationIdOf(r: CliResult): string {
  return String(events(r.stdout).find((e) => e.type === 'operation_started')!.operationId);
}

function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/** Issue 10, items 3 and 4 as they now behave: the CLI conventions a newcomer meets. */
describe('hookgate CLI conventions', function () {
  this.timeout(90_000);
  let dir: string;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-conventions-')));
    await writeFile(path.join(dir, 'fails.yaml'), FAILS);
    await writeFile(path.join(dir, 'careful.yaml'), CAREFUL);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  describe('--version', () => {
    it('prints the version from package.json and exits 0', async () => {
      const { version } = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
      for (const flag of ['--version', '-V']) {
        const r = await hookgate(dir, [flag]);
        assert.equal(r.code, 0);
        assert.equal(r.stdout, `${version}\n`);
      }
    });
  });

  describe('each failure is printed once', () => {
    it('text mode: the timeline line says why, and no log line repeats it', async () => {
      const r = await hookgate(dir, ['run', 'fails.yaml']);
      assert.equal(r.code, 1);
      assert.match(r.stdout, /^✗ error after 0 steps, 0 tokens: the model broke in a way you can see$/m);
      assert.equal(occurrences(r.stdout + r.stderr, 'the model broke in a way you can see'), 1, `stdout: ${r.stdout}\nstderr: ${r.stderr}`);
      assert.equal(r.stderr, '');
    });

    it('--json mode: the operation_finished event carries it, stderr stays empty', async () => {
      const r = await hookgate(dir, ['run', 'fails.yaml', '--json']);
      assert.equal(r.code, 1);
      const finished = events(r.stdout).filter((e) => e.type === 'operation_finished');
      assert.deepEqual(finished.map((e) => e.error), ['the model broke in a way you can see']);
      assert.equal(occurrences(r.stdout + r.stderr, 'the model broke in a way you can see'), 1);
      assert.equal(r.stderr, '');
    });

    it('approve, in both modes: the run failing after the decision is printed once', async () => {
      for (const mode of [[], ['--json']]) {
        const parked = await hookgate(dir, ['run', 'careful.yaml', '--json']);
        const r = await hookgate(dir, ['approve', operationIdOf(parked), ...mode]);
        assert.equal(r.code, 1, r.stderr);
        assert.equal(occurrences(r.stdout + r.stderr, 'the model broke after the approval'), 1, `stdout: ${r.stdout}\nstderr: ${r.stderr}`);
        assert.equal(r.stderr, '');
      }
    });

    it('an error that stops a command is one error line on stderr, in both modes', async () => {
      for (const mode of [[], ['--json']]) {
        const r = await hookgate(dir, ['show', 'op_nope', ...mode]);
        assert.equal(r.code, 2);
        assert.equal(r.stdout, '');
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assert.match(r.stderr, /^error: no operation has id op_nope/);
      }
    });
  });

  describe('operation and tool-call ids by unique prefix', () => {
    let ids: string[];
    beforeEach(async () => {
      ids = [];
      for (let i = 0; i < 2; i++) ids.push(operationIdOf(await hookgate(dir, ['run', 'careful.yaml', '--json'])));
    });

    /** The shortest prefix of `id` that no other id shares. */
    const uniquePrefix = (id: string) => {
      for (let n = 4; n <= id.length; n++) if (ids.filter((other) => other.startsWith(id.slice(0, n))).length === 1) return id.slice(0, n);
      return id;
    };
    const commonPrefix = () => {
      let n = 0;
      while (ids.every((id) => id[n] === ids[0]![n])) n++;
      return ids[0]!.slice(0, n);
    };

    it('show takes a unique prefix and shows the operation it names', async () => {
      const r = await hookgate(dir, ['show', uniquePrefix(ids[1]!), '--json']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal((JSON.parse(r.stdout) as { operation: { id: string } }).operation.id, ids[1]);
    });

    it('an ambiguous prefix exits 2 listing every id it matches, and the store', async () => {
      const prefix = commonPrefix();
      const r = await hookgate(dir, ['show', prefix]);
      assert.equal(r.code, 2);
      const dbPath = path.join(dir, '.hookgate', 'hookgate.db');
      assert.equal(r.stderr, `error: operation id prefix ${prefix} is ambiguous in the SQLite store at ${dbPath}: it matches ${[...ids].sort().join(', ')}\n`);
    });

    it('a prefix nothing matches exits 2 naming the SQLite store it searched', async () => {
      const r = await hookgate(dir, ['approve', 'op_ffff']);
      assert.equal(r.code, 2);
      assert.equal(r.stderr, `error: no operation has id op_ffff in the SQLite store at ${path.join(dir, '.hookgate', 'hookgate.db')}\n`);
    });

    it('the memory store is named as such', async () => {
      const r = await hookgate(dir, ['show', 'op_ffff'], { HOOKGATE_STORE__DRIVER: 'memory' });
      assert.equal(r.code, 2);
      assert.equal(r.stderr, 'error: no operation has id op_ffff in the memory store (empty in every new process)\n');
    });

    it('approve --tool-call takes a unique prefix of a pending call: only that call is decided', async () => {
      const op = ids[0]!;
      const pending = await readPending(dir, op);
      assert.equal(pending.length, 2);
      const [first, second] = pending as [string, string];
      let n = 1;
      while (second.startsWith(first.slice(0, n))) n++;
      const r = await hookgate(dir, ['approve', uniquePrefix(op), '--tool-call', first.slice(0, n), '--json']);
      assert.equal(r.code, 3, `one call decided, the other still waits: ${r.stderr}`);
      assert.deepEqual(await readPending(dir, op), [second]);
    });

    it('an ambiguous or unknown --tool-call exits 2 listing the pending calls', async () => {
      const op = ids[0]!;
      const pending = await readPending(dir, op);
      const shared = 'call_';
      const ambiguous = await hookgate(dir, ['approve', op, '--tool-call', shared]);
      assert.equal(ambiguous.code, 2);
      assert.equal(ambiguous.stderr, `error: tool call id prefix ${shared} is ambiguous in operation ${op}: it matches ${pending.join(', ')}\n`);
      const unknown = await hookgate(dir, ['reject', op, '--tool-call', 'call_nope']);
      assert.equal(unknown.code, 2);
      assert.equal(unknown.stderr, `error: operation ${op} is not waiting for tool call call_nope; it waits on ${pending[0]} (fs/writeFile), ${pending[1]} (fs/writeFile)\n`);
      assert.equal((await readPending(dir, op)).length, 2, 'nothing was decided');
    });
  });

  describe('option values are checked, with the allowed values in the error (exit 2)', () => {
    const cases: Array<{ args: string[]; error: string }> = [
      { args: ['operations', '--status', 'bogus'], error: "error: option '--status <status>' argument 'bogus' is invalid. Allowed choices are running, waiting_approval, waiting_tool, done, error, interrupted." },
      { args: ['operations', '--limit', '0'], error: "error: option '--limit <n>' argument '0' is invalid. expected a whole number from 1 to 10,000" },
      { args: ['decisions', '--limit', 'abc'], error: "error: option '--limit <n>' argument 'abc' is invalid. expected a whole number from 1 to 10,000" },
      { args: ['decisions', '--limit', '2.5'], error: "error: option '--limit <n>' argument '2.5' is invalid. expected a whole number from 1 to 10,000" },
      { args: ['decisions', '--effect', 'block'], error: "error: option '--effect <effect>' argument 'block' is invalid. Allowed choices are allow, deny, ask, redact." },
      { args: ['decisions', '--since', 'yesterday'], error: "error: option '--since <time>' argument 'yesterday' is invalid. expected an ISO 8601 time such as 2026-05-01 or 2026-05-01T12:00:00Z" },
      { args: ['decisions', '--until', '2026-13-45'], error: "error: option '--until <time>' argument '2026-13-45' is invalid. expected an ISO 8601 time such as 2026-05-01 or 2026-05-01T12:00:00Z" },
      { args: ['decisions', '--since', '2026-02-30'], error: "error: option '--since <time>' argument '2026-02-30' is invalid. expected an ISO 8601 time such as 2026-05-01 or 2026-05-01T12:00:00Z" },
      { args: ['webhook', 'verify', '--port', 'x'], error: "error: option '--port <port>' argument 'x' is invalid. expected a whole number from 0 to 65,535" },
      { args: ['webhook', 'verify', '--port', '70000'], error: "error: option '--port <port>' argument '70000' is invalid. expected a whole number from 0 to 65,535" },
      { args: ['webhook', 'verify', '--decision', 'maybe'], error: "error: option '--decision <decision>' argument 'maybe' is invalid. Allowed choices are allow, deny, none." },
      { args: ['run', 'agent.yaml', '--decide', 'approve,yes'], error: 'error: option \'--decide <list>\' argument \'approve,yes\' is invalid. "yes" is not one of approve, reject, continue' },
      { args: ['completion', 'powershell'], error: "error: command-argument value 'powershell' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish." },
      { args: ['--quiet', '--verbose', 'plugins'], error: "error: option '-q, --quiet' cannot be used with option '-v, --verbose'" },
      { args: ['approve', 'op_x', '--reason', 'why'], error: "error: unknown option '--reason'" },
    ];
    for (const { args, error } of cases) {
      it(`hookgate ${args.join(' ')}`, async () => {
        const r = await hookgate(dir, args);
        assert.equal(r.code, 2, r.stdout + r.stderr);
        assert.equal(r.stderr.split('\n')[0], error);
        assert.match(r.stderr, /Usage: hookgate /, 'the usage of the command follows');
      });
    }

    it('--since and --until accept ISO dates and times', async () => {
      const r = await hookgate(dir, ['decisions', '--since', '2026-01-01', '--until', '2026-05-01T14:00:00+02:00', '--limit', '5', '--json']);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), []);
    });

    it('--reason is described for what it does on reject and on reject-continue', async () => {
      const reject = await hookgate(dir, ['reject', '--help']);
      assert.match(reject.stdout.replace(/\s+/g, ' '), /--reason <text> why you stop it: the rejected call\(s\) get the result "The user rejected this tool call: <text>", and afterHumanIntervention \/ onStopByHumanIntervention hooks get it as rejectionReason/);
      const cont = await hookgate(dir, ['reject-continue', '--help']);
      assert.match(cont.stdout.replace(/\s+/g, ' '), /--reason <text> why: the model reads "The user rejected this tool call: <text>" as the call's result and goes on/);
      const approve = await hookgate(dir, ['approve', '--help']);
      assert.doesNotMatch(approve.stdout, /--reason/, 'an approval takes no reason');
    });
  });

  describe('--quiet, --verbose and log.format', () => {
    it('--verbose logs at debug level, --quiet only errors, over log.level', async () => {
      await writeFile(path.join(dir, 'hookgate.config.yaml'), 'log: { level: info }\n');
      const verbose = await hookgate(dir, ['--verbose', 'plugins']);
      assert.equal(verbose.code, 0, verbose.stderr);
      assert.match(verbose.stderr, /"level":"info","time":"[^"]+","msg":"store migrated"/, 'the first open of the store is logged');
      await rm(path.join(dir, '.hookgate'), { recursive: true });
      const quiet = await hookgate(dir, ['plugins', '-q']);
      assert.equal(quiet.code, 0, quiet.stderr);
      assert.equal(quiet.stderr, '', 'an info record is below --quiet');
    });

    it('log.format: pretty prints pino-pretty lines instead of JSON', async () => {
      await writeFile(path.join(dir, 'hookgate.config.yaml'), 'log: { format: pretty }\n');
      const r = await hookgate(dir, ['plugins', '--verbose']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: store migrated\n {4}plugin: "store-sqlite"\n {4}version: 1\n/m);
      assert.doesNotMatch(r.stderr, /^\{/m, 'no JSON line');
    });
  });

  describe('shell completion', () => {
    it('bash can source the script, and it completes commands, subcommands, options and allowed values', async () => {
      const script = await hookgate(dir, ['completion', 'bash']);
      assert.equal(script.code, 0);
      await writeFile(path.join(dir, 'hookgate.bash'), script.stdout);
      const complete = async (...words: string[]) => {
        const probe = `set -e; source ./hookgate.bash; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _hookgate; printf '%s\\n' "\${COMPREPLY[@]}"; complete -p hookgate >&2`;
        const { stdout, stderr } = await run('bash', ['-c', probe], { cwd: dir });
        assert.match(stderr, /complete -o default -F _hookgate hookgate/);
        return stdout.split('\n').filter(Boolean);
      };
      const help = await hookgate(dir, ['--help']);
      const commands = [...help.stdout.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
      assert.ok(commands.length >= 12);
      assert.deepEqual(await complete('hookgate', ''), commands);
      assert.deepEqual(await complete('hookgate', 're'), ['reject', 'reject-continue', 'resume']);
      assert.deepEqual(await complete('hookgate', 'policy', ''), ['check', 'test', 'eval']);
      assert.deepEqual(await complete('hookgate', '-c', 'x.yaml', 'operations', '--status', ''), ['running', 'waiting_approval', 'waiting_tool', 'done', 'error', 'interrupted']);
      assert.deepEqual(await complete('hookgate', 'decisions', '--effect', 'a'), ['allow', 'ask']);
      assert.deepEqual(await complete('hookgate', 'completion', ''), ['bash', 'zsh', 'fish']);
      const runOptions = await complete('hookgate', 'run', '--');
      for (const option of ['--json', '--user', '--hooks', '--auto-approve', '--decide', '--help', '--config', '--quiet', '--verbose']) assert.ok(runOptions.includes(option), option);
    });

    it('zsh and fish scripts name every command (and parse, where the shell is installed)', async () => {
      const help = await hookgate(dir, ['--help']);
      const commands = [...help.stdout.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
      for (const shell of ['zsh', 'fish']) {
        const r = await hookgate(dir, ['completion', shell]);
        assert.equal(r.code, 0);
        for (const command of commands) assert.ok(r.stdout.includes(shell === 'fish' ? `-a '${command}'` : `'${command}'`), `${shell} completes ${command}`);
        const file = path.join(dir, `hookgate.${shell}`);
        await writeFile(file, r.stdout);
        const installed = await run('sh', ['-c', `command -v ${shell}`]).then(() => true, () => false);
        if (installed) await run(shell, ['-n', file]);
      }
    });
  });

  describe('streamed text in the timeline', () => {
    let server: FakeOpenAiServer;
    beforeEach(async () => {
      server = await FakeOpenAiServer.start();
      await writeFile(path.join(dir, 'hookgate.config.yaml'), `models: { openai: { baseUrl: '${server.baseUrl}', apiKeyEnv: SPEC_OPENAI_KEY } }\n`);
      await writeFile(path.join(dir, 'live.yaml'), 'id: live\nmodel: { provider: openai, name: gpt-fake }\n');
    });
    afterEach(() => server.close());

    /** Runs the agent while the model's answer is still streaming; resolves once stdout shows `until`, and stops the child. */
    function watch(args: string[], until: (stdout: string) => boolean): Promise<string> {
      return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env: cliEnv({ SPEC_OPENAI_KEY: 'sk-spec' }), stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
        child.stdout.setEncoding('utf8').on('data', (d: string) => {
          stdout += d;
          if (!until(stdout)) return;
          child.removeAllListeners('close');
          child.on('close', () => resolve(stdout));
          child.kill('SIGKILL');
        });
        child.on('error', reject);
        child.on('close', (code) => reject(new Error(`hookgate exited (${code}) before the text showed: ${stdout}${stderr}`)));
      });
    }

    it('the text shows while the model is still answering (the response has not ended)', async () => {
      // The server sends three text deltas and then holds the response open: the turn cannot be over.
      server.enqueue(sse([roleChunk(), textChunk('Hello '), textChunk('live '), textChunk('world')], { done: false, hold: true }));
      const stdout = await watch(['run', 'live.yaml', 'hi'], (out) => out.includes('world'));
      assert.match(stdout, /^ {2}💬 Hello live world$/m);
      assert.doesNotMatch(stdout, /■|✗/, 'the run had not finished');
    });

    it('--json shows each text delta as an event as it arrives', async () => {
      server.enqueue(sse([roleChunk(), textChunk('Hello '), textChunk('world')], { done: false, hold: true }));
      const stdout = await watch(['run', 'live.yaml', 'hi', '--json'], (out) => out.includes('"delta":"world"'));
      const deltas = events(stdout).filter((e) => e.type === 'text_delta').map((e) => e.delta);
      assert.deepEqual(deltas, ['Hello ', 'world']);
      assert.ok(!events(stdout).some((e) => e.type === 'assistant_message'), 'the message was not complete yet');
    });

    it('a finished streamed turn is printed once', async () => {
      server.enqueue(sse([roleChunk(), textChunk('Hello '), textChunk('world'), finishChunk('stop'), usageChunk(3, 2)]));
      const r = await hookgate(dir, ['run', 'live.yaml', 'hi'], { SPEC_OPENAI_KEY: 'sk-spec' });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(occurrences(r.stdout, 'Hello world'), 1, r.stdout);
      assert.match(r.stdout, /^ {2}💬 Hello world\n■ done after/m);
    });
  });
});

/** The tool call ids an operation waits on, read from its SQLite store. */
async function readPending(dir: string, operationId: string): Promise<string[]> {
  const store = new SqliteStore({ path: path.join(dir, '.hookgate', 'hookgate.db'), backgroundCheckpoints: false });
  await store.migrate();
  try {
    const op = await store.getOperation(operationId);
    return (op?.state.approval?.pendingTools ?? []).map((t) => t.toolCallId);
  } finally {
    await store.close();
  }
}
