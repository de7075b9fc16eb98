import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_TEMPLATES } from '../../plugins/cli/init/project-templates.js';
import { cliEnv, ROOT, runHookgate, type CliResult } from '../helpers/cli-process.js';

/** Runs `node <script>` in `cwd` as a real child process. */
function runNode(cwd: string, script: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { cwd, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('hookgate init', () => {
  let tmp: string;
  before(async () => (tmp = await mkdtemp(path.join(os.tmpdir(), 'hookgate-init-'))));
  after(async () => rm(tmp, { recursive: true, force: true }));

  describe('a generated project works as generated', () => {
    let project: string;
    before(async () => {
      project = path.join(tmp, 'project');
      await mkdir(project);
      // No [dir]: the working folder.
      const init = await runHookgate(project, ['init']);
      assert.equal(init.code, 0, init.stderr);
      for (const t of PROJECT_TEMPLATES) assert.match(init.stdout, new RegExp(`^  ${t.path.replace(/\./g, '\\.')} `, 'm'));
    });

    it('writes every template, byte for byte', async () => {
      for (const t of PROJECT_TEMPLATES) assert.equal(await readFile(path.join(project, t.path), 'utf8'), t.content, t.path);
    });

    it('hookgate run <agent> runs it through the generated config: sandbox, store and policy pack', async () => {
      const run = await runHookgate(project, ['run', 'agents/assistant.yaml']);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /✓ fs\/writeFile .*wrote 20 bytes to "notes\/hello\.txt"/);
      assert.match(run.stdout, /✗ fs\/readFile .*\[hook_denied\]: \.env files hold secrets; reading them is blocked/);
      assert.match(run.stdout, /■ done after 8 steps/);
      assert.equal(await readFile(path.join(project, '.hookgate', 'sandbox', 'notes', 'hello.txt'), 'utf8'), 'hello from hookgate\n');
      const ops = await runHookgate(project, ['operations', '--json']);
      assert.equal(ops.code, 0, ops.stderr);
      assert.ok((JSON.parse(ops.stdout) as Array<{ agentId: string; reason: string }>).some((o) => o.agentId === 'assistant' && o.reason === 'done'));
      assert.ok(existsSync(path.join(project, '.hookgate', 'hookgate.db')));
    });

    it('hookgate run <agent> --hooks <generated module> runs its handlers and its mock', async () => {
      const run = await runHookgate(project, ['run', 'agents/assistant.yaml', '--hooks', 'hooks/audit.mjs']);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /✓ time\/now \(mocked\): 2030-01-01T00:00:00\.000Z/);
      assert.match(run.stderr, /^\[audit\] fs\/writeFile -> ok$/m);
      assert.match(run.stderr, /^\[audit\] time\/now -> ok$/m);
      assert.match(run.stderr, /^\[audit\] fs\/readFile -> failed: .*\.env files hold secrets/m);
      assert.match(run.stderr, /^\[audit\] assistant ended \(done\) after 8 steps$/m);
    });

    it('hookgate policy test passes every inline test of the generated pack', async () => {
      const test = await runHookgate(project, ['policy', 'test']);
      assert.equal(test.code, 0, test.stdout + test.stderr);
      assert.match(test.stdout, /PASS: 5\/5/);
      assert.doesNotMatch(test.stdout, /FAIL/);
    });

    it('hookgate policy check compiles the generated pack without errors', async () => {
      const check = await runHookgate(project, ['policy', 'check']);
      assert.equal(check.code, 0, check.stdout + check.stderr);
      assert.match(check.stdout, /project\.yaml \(project: 2 policies, 5 tests\)/);
      assert.match(check.stdout, /no errors/);
    });

    it('the generated tests really decide: a wrong expectation fails policy test', async () => {
      const pack = await readFile(path.join(project, 'policies', 'project.yaml'), 'utf8');
      const broken = path.join(tmp, 'broken.yaml');
      const allowNote = 'content: hello } }\n        expect: { effect: allow }';
      assert.ok(pack.includes(allowNote));
      await writeFile(broken, pack.replace(allowNote, allowNote.replace('allow', 'deny')));
      const test = await runHookgate(project, ['policy', 'test', broken]);
      assert.equal(test.code, 1, test.stdout + test.stderr);
      assert.match(test.stdout, /FAIL: project\/project\.no-scripts: allows a note/);
    });

    it('embed.mjs loads the plugin skeleton and the hooks through the package name and runs its tool', async () => {
      // What `npm install hookgate` gives the project: the package under node_modules/hookgate.
      await mkdir(path.join(project, 'node_modules'));
      await symlink(ROOT, path.join(project, 'node_modules', 'hookgate'), 'dir');
      const run = await runNode(project, 'embed.mjs');
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /^tool: Hello, Ada!$/m);
      assert.match(run.stdout, /^assistant: I greeted Ada\.$/m);
      assert.match(run.stdout, /^operation op_\S+: done$/m);
      assert.match(run.stderr, /^\[audit\] hello\/greet -> ok$/m);
    });

    it('the config loads the plugin skeleton by path once its commented plugins.extra line is on and hookgate is installed in the project', async () => {
      const other = path.join(tmp, 'with-extra');
      await mkdir(other);
      assert.equal((await runHookgate(other, ['init'])).code, 0);
      await mkdir(path.join(other, 'node_modules'));
      await symlink(ROOT, path.join(other, 'node_modules', 'hookgate'), 'dir');
      const configFile = path.join(other, 'hookgate.config.yaml');
      const config = await readFile(configFile, 'utf8');
      assert.match(config, /^# plugins: \{ extra: \[\.\/plugins\/hello-tools\.mjs\] \}$/m);
      await writeFile(configFile, config.replace('# plugins: { extra:', 'plugins: { extra:'));
      const plugins = await runHookgate(other, ['plugins', '--json']);
      assert.equal(plugins.code, 0, plugins.stderr);
      assert.match(plugins.stdout, /"hello-tools"/);
      const check = await runHookgate(other, ['policy', 'check', '--json']);
      assert.equal(check.code, 0, check.stdout + check.stderr);
    });
    it('the commented retention line, once on, is a retention hookgate prune applies', async () => {
      const other = path.join(tmp, 'with-retention');
      await mkdir(other);
      assert.equal((await runHookgate(other, ['init'])).code, 0);
      const configFile = path.join(other, 'hookgate.config.yaml');
      const config = await readFile(configFile, 'utf8');
      assert.match(config, /^# retention: \{ maxAge: 30d, maxOperations: 1000, decisionLog: \{ maxAge: 90d \}, interval: 1h \}$/m);
      assert.equal((await runHookgate(other, ['run', 'agents/assistant.yaml'])).code, 0);
      await writeFile(configFile, config.replace('# retention:', 'retention:'));
      const prune = await runHookgate(other, ['prune', '--dry-run', '--json']);
      assert.equal(prune.code, 0, prune.stderr);
      const out = JSON.parse(prune.stdout) as { retention: { maxAgeMs?: number; maxOperations?: number; decisionLog?: { maxAgeMs?: number } }; wouldRemove: { operations: number } };
      assert.equal(out.retention.maxAgeMs, 30 * 86_400_000);
      assert.equal(out.retention.maxOperations, 1000);
      assert.equal(out.retention.decisionLog?.maxAgeMs, 90 * 86_400_000);
      // The one operation just run is young and within the count: nothing would go.
      assert.equal(out.wouldRemove.operations, 0);
    });
  });

  describe('existing files', () => {
    it('refuses to overwrite, names every file that exists, and writes nothing', async () => {
      const dir = path.join(tmp, 'existing');
      await mkdir(path.join(dir, 'policies'), { recursive: true });
      await writeFile(path.join(dir, 'hookgate.config.yaml'), 'log: { level: info }\n');
      await writeFile(path.join(dir, 'policies', 'project.yaml'), 'policies: []\n');
      const init = await runHookgate(tmp, ['init', 'existing']);
      assert.equal(init.code, 2);
      assert.match(init.stderr, /error: hookgate init: these files exist in .*existing and would be overwritten: hookgate\.config\.yaml, policies\/project\.yaml \(nothing was written; --force overwrites them\)/);
      assert.equal(await readFile(path.join(dir, 'hookgate.config.yaml'), 'utf8'), 'log: { level: info }\n');
      assert.equal(await readFile(path.join(dir, 'policies', 'project.yaml'), 'utf8'), 'policies: []\n');
      assert.ok(!existsSync(path.join(dir, 'agents')), 'no other file was written');

      const forced = await runHookgate(tmp, ['init', 'existing', '--force']);
      assert.equal(forced.code, 0, forced.stderr);
      for (const t of PROJECT_TEMPLATES) assert.equal(await readFile(path.join(dir, t.path), 'utf8'), t.content, t.path);
    });

    it('counts a symlink as existing, and --force replaces the link instead of writing through it', async () => {
      const dir = path.join(tmp, 'linked');
      await mkdir(dir);
      const outside = path.join(tmp, 'outside.md');
      await writeFile(outside, 'not yours\n');
      await symlink(outside, path.join(dir, 'README.md'));
      const init = await runHookgate(dir, ['init']);
      assert.equal(init.code, 2);
      assert.match(init.stderr, /this file exists in .* and would be overwritten: README\.md /);

      const forced = await runHookgate(dir, ['init', '--force']);
      assert.equal(forced.code, 0, forced.stderr);
      assert.equal(await readFile(outside, 'utf8'), 'not yours\n');
      assert.equal(await readFile(path.join(dir, 'README.md'), 'utf8'), PROJECT_TEMPLATES.find((t) => t.path === 'README.md')!.content);
    });

    it('refuses a [dir] that is a file', async () => {
      await writeFile(path.join(tmp, 'a-file'), 'x');
      const init = await runHookgate(tmp, ['init', 'a-file']);
      assert.equal(init.code, 2);
      assert.match(init.stderr, /error: hookgate init: .*a-file exists and is not a folder/);
    });
  });
});
