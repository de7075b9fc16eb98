import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../config/load-config.js';
import { NUMERIC_RANGES } from '../../config/schema.js';
import { readFileSync } from 'node:fs';
import { isHookgateError } from '../../kernel/errors.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');

describe('config: numeric ranges and the sandbox root', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-ranges-')));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const withFile = async (yaml: string) => writeFile(path.join(dir, 'hookgate.config.yaml'), yaml);
  const load = (env: NodeJS.ProcessEnv = {}) => loadConfig({ cwd: dir, env });
  function refused(message: string | RegExp, env: NodeJS.ProcessEnv = {}): void {
    assert.throws(
      () => load(env),
      (err: unknown) => {
        assert.ok(isHookgateError(err, 'CONFIG_INVALID'), `expected CONFIG_INVALID, got ${String(err)}`);
        if (typeof message === 'string') assert.equal(err.message, message);
        else assert.match(err.message, message);
        return true;
      },
    );
  }

  describe('policies.deadlineMs', () => {
    for (const bad of ['-5', '0', '3e9', '2.5', '9', '60001', '.inf']) {
      it(`refuses ${bad} naming the key and the allowed range`, async () => {
        await withFile(`policies:\n  deadlineMs: ${bad}\n`);
        refused(new RegExp(`^hookgate\\.config\\.yaml: policies\\.deadlineMs: expected a whole number from 10 to 60,000 \\(milliseconds\\), got `));
      });
    }
    it('names the environment variable when it holds the bad value', () => {
      refused('HOOKGATE_POLICIES__DEADLINE_MS: policies.deadlineMs: expected a whole number from 10 to 60,000 (milliseconds), got -5', { HOOKGATE_POLICIES__DEADLINE_MS: '-5' });
    });
    it('accepts the bounds', async () => {
      await withFile('policies:\n  deadlineMs: 10\n');
      assert.equal(load().policies.deadlineMs, 10);
      await withFile('policies:\n  deadlineMs: 60000\n');
      assert.equal(load().policies.deadlineMs, 60_000);
      assert.equal(load({ HOOKGATE_POLICIES__DEADLINE_MS: '400' }).policies.deadlineMs, 400);
    });
  });

  describe('policies.maxWorkers', () => {
    for (const bad of ['0', '-1', '1.5', '65', '1e6']) {
      it(`refuses ${bad}`, async () => {
        await withFile(`policies:\n  maxWorkers: ${bad}\n`);
        refused(/^hookgate\.config\.yaml: policies\.maxWorkers: expected a whole number from 1 to 64 \(worker threads\), got /);
      });
    }
    it('accepts 1 and 64', async () => {
      await withFile('policies:\n  maxWorkers: 1\n');
      assert.equal(load().policies.maxWorkers, 1);
      assert.equal(load({ HOOKGATE_POLICIES__MAX_WORKERS: '64' }).policies.maxWorkers, 64);
    });
  });

  it("every numeric key is documented in the README's table of ranges, with its bounds", () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const rows = new Map(readme.split('\n').flatMap((line) => {
      const m = /^\| `([\w.]+)` \| (.*) \| (.*) \|$/.exec(line);
      return m ? [[m[1]!, m[2]!] as const] : [];
    }));
    const fmt = (n: number) => n.toLocaleString('en-US');
    const problems = Object.entries(NUMERIC_RANGES).flatMap(([key, range]) => {
      const row = rows.get(key);
      if (row === undefined) return [`${key} has no row`];
      return row.includes(`${fmt(range.min)} to ${fmt(range.max)}`) ? [] : [`${key}: the row does not say ${fmt(range.min)} to ${fmt(range.max)} (${row})`];
    });
    assert.deepEqual(problems, []);
  });

  describe('policies.maxWorkers default', () => {
    it('is one worker per core the process may use, at most 8', async () => {
      await withFile('policies: {}\n');
      assert.equal(load().policies.maxWorkers, Math.max(1, Math.min(os.availableParallelism(), 8)));
    });
  });

  describe('policies.maxInFlight', () => {
    for (const bad of ['0', '-1', '1.5', '1000001', 'many', '.inf']) {
      it(`refuses ${bad} naming the key and the allowed range`, async () => {
        await withFile(`policies:\n  maxInFlight: ${bad}\n`);
        refused(/^hookgate\.config\.yaml: policies\.maxInFlight: expected (a whole number from 1 to 1,000,000 \(decisions\), got |a number)/);
      });
    }
    it('names the environment variable when it holds the bad value', () => {
      refused('HOOKGATE_POLICIES__MAX_IN_FLIGHT: policies.maxInFlight: expected a whole number from 1 to 1,000,000 (decisions), got 0', { HOOKGATE_POLICIES__MAX_IN_FLIGHT: '0' });
    });
    it('accepts the bounds; defaults to 1,024', async () => {
      await withFile('policies: {}\n');
      assert.equal(load().policies.maxInFlight, 1024);
      await withFile('policies:\n  maxInFlight: 1\n');
      assert.equal(load().policies.maxInFlight, 1);
      assert.equal(load({ HOOKGATE_POLICIES__MAX_IN_FLIGHT: '1000000' }).policies.maxInFlight, 1_000_000);
    });
  });

  describe('models.openai.timeoutSeconds', () => {
    for (const bad of ['-1', '0.5', '3601', '.inf', '.nan']) {
      it(`refuses ${bad}`, async () => {
        await withFile(`models:\n  openai:\n    timeoutSeconds: ${bad}\n`);
        refused(/^hookgate\.config\.yaml: models\.openai\.timeoutSeconds: expected (0 \(no timeout\) or a number of seconds from 1 to 3,600|a number), got /);
      });
    }
    it('accepts 0 (no timeout), 1.5 and 3600', async () => {
      for (const ok of [0, 1.5, 3600]) {
        await withFile(`models:\n  openai:\n    timeoutSeconds: ${ok}\n`);
        assert.equal(load().models.openai.timeoutSeconds, ok);
      }
    });
  });

  describe('hooks.handlerTimeoutMs', () => {
    for (const bad of ['0', '9', '1.5', '3600001', '-30000']) {
      it(`refuses ${bad}`, async () => {
        await withFile(`hooks:\n  handlerTimeoutMs: ${bad}\n`);
        refused(/^hookgate\.config\.yaml: hooks\.handlerTimeoutMs: expected a whole number from 10 to 3,600,000 \(milliseconds\), got /);
      });
    }
  });

  describe('sandbox.root', () => {
    it('refuses an empty root (it meant the config folder, database and all)', async () => {
      await withFile('sandbox: { root: "" }\n');
      refused('hookgate.config.yaml: sandbox.root: expected a non-empty path, got ""');
    });
    it('refuses a blank root, from the file or the environment', async () => {
      await withFile('sandbox: { root: "   " }\n');
      refused('hookgate.config.yaml: sandbox.root: expected a non-empty path, got "   "');
      await rm(path.join(dir, 'hookgate.config.yaml'));
      refused('HOOKGATE_SANDBOX__ROOT: sandbox.root: expected a non-empty path, got ""', { HOOKGATE_SANDBOX__ROOT: '' });
    });
    it('refuses a root with a NUL byte or an unexpanded ~', async () => {
      await withFile('sandbox: { root: "box\\0x" }\n');
      refused(/^hookgate\.config\.yaml: sandbox\.root: expected a path without NUL bytes, got /);
      await withFile('sandbox: { root: "~/box" }\n');
      refused('hookgate.config.yaml: sandbox.root: expected a path without a leading "~" (it is not expanded: write the full path), got "~/box"');
    });
    it('refuses "." : the folder the config is read from', async () => {
      await withFile('sandbox: { root: . }\n');
      refused(`hookgate.config.yaml: sandbox.root: ${JSON.stringify(dir)} is the folder the configuration is read from ${JSON.stringify(dir)}: the agent could read or rewrite it. Give the sandbox a folder of its own, such as ./.hookgate/sandbox`);
    });
    it('refuses the data folder that holds the database', async () => {
      await withFile('sandbox: { root: ./.hookgate }\n');
      const data = path.join(dir, '.hookgate');
      refused(`hookgate.config.yaml: sandbox.root: ${JSON.stringify(data)} is the data folder (dataDir) ${JSON.stringify(data)}: the agent could read or rewrite it. Give the sandbox a folder of its own, such as ./.hookgate/sandbox`);
    });
    it('refuses a folder holding the SQLite file kept outside the data folder', async () => {
      await withFile('store: { sqlite: { path: ./db/main.db } }\nsandbox: { root: ./db }\n');
      refused(/sandbox\.root: "[^"]+\/db" contains the SQLite database \(store\.sqlite\.path\) "[^"]+\/db\/main\.db"/);
    });
    it('refuses the file-system root, also through a symlink', async () => {
      await withFile('sandbox: { root: / }\n');
      refused(/^hookgate\.config\.yaml: sandbox\.root: "\/" is the root of the file system/);
      await mkdir(path.join(dir, 'links'));
      await symlink('/', path.join(dir, 'links', 'box'));
      await withFile('sandbox: { root: ./links/box }\n');
      refused(/^hookgate\.config\.yaml: sandbox\.root: "[^"]+\/links\/box" \(really "\/"\) is the root of the file system/);
    });
    it('refuses system folders and pseudo file systems', async () => {
      for (const [root, why] of [['/etc', 'is the system folder /etc'], ['/tmp', 'is the system folder /tmp'], ['/proc/sys', 'is inside /proc'], ['/dev/shm', 'is inside /dev']] as const) {
        await withFile(`sandbox: { root: ${root} }\n`);
        refused(new RegExp(`sandbox\\.root: "${root}" ${why}`));
      }
    });
    it('refuses the home folder (dotfiles, keys) or a folder containing it', async () => {
      const home = process.env.HOME;
      process.env.HOME = path.join(dir, 'users', 'me'); // os.homedir() reads HOME
      try {
        await withFile('sandbox: { root: ./users/me }\n');
        refused(/sandbox\.root: "[^"]+\/users\/me" is the home folder "[^"]+\/users\/me": the agent could read or rewrite it/);
        await withFile('sandbox: { root: ./users }\n');
        refused(/sandbox\.root: "[^"]+\/users" contains the home folder/);
      } finally {
        process.env.HOME = home;
      }
    });
    it('refuses a root inside a policy folder, or one containing it', async () => {
      await withFile('policies: { paths: [packs] }\nsandbox: { root: ./packs/box }\n');
      refused(/sandbox\.root: "[^"]+\/packs\/box" is inside a policy path \(policies\.paths\) "[^"]+\/packs": the agent could write policy packs and code policies/);
      await withFile('policies: { paths: [./state/packs] }\nsandbox: { root: ./state }\n');
      refused(/sandbox\.root: "[^"]+\/state" contains a policy path \(policies\.paths\) "[^"]+\/state\/packs"/);
    });
    it('names HOOKGATE_SANDBOX__ROOT when the environment set the bad root', () => {
      refused(/^HOOKGATE_SANDBOX__ROOT: sandbox\.root: "\/" is the root/, { HOOKGATE_SANDBOX__ROOT: '/' });
    });
    it('accepts the default and a sibling folder of its own', async () => {
      assert.equal(load().sandbox.root, path.join(dir, '.hookgate', 'sandbox'));
      await withFile('sandbox: { root: ./box }\n');
      assert.equal(load().sandbox.root, path.join(dir, 'box'));
    });
    it('CLI: `hookgate run` with `sandbox: { root: "" }` exits 2 before the agent runs, naming the key', async () => {
      await withFile('sandbox: { root: "" }\nstore: { driver: memory }\n');
      await writeFile(path.join(dir, 'agent.yaml'), 'id: a\nmodel: { provider: scripted, turns: [ { text: hi } ] }\n');
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('HOOKGATE_')));
      const r = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [CLI, 'run', 'agent.yaml'], { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stderr }));
      });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /hookgate\.config\.yaml: sandbox\.root: expected a non-empty path, got ""/);
    });
  });
});
