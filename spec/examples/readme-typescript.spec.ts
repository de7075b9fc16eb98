import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { cliEnv, ROOT } from '../helpers/cli-process.js';

/** The first ```ts block after the README heading `## <heading>`. */
function tsBlockUnder(readme: string, heading: string): string {
  const at = readme.indexOf(`\n## ${heading}\n`);
  assert.ok(at >= 0, `README has a "## ${heading}" section`);
  const start = readme.indexOf('```ts\n', at);
  const next = readme.indexOf('\n## ', at + 4);
  assert.ok(start >= 0 && (next < 0 || start < next), `the "${heading}" section has a ts block`);
  return readme.slice(start + '```ts\n'.length, readme.indexOf('```\n', start + 6));
}

/** Type-checks (and emits next to them) `files` as a project outside the repository would: strict, NodeNext, 'hookgate' from node_modules. */
function compile(dir: string, files: string[]): string[] {
  const program = ts.createProgram(
    files.map((f) => path.join(dir, f)),
    {
      strict: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2023.d.ts'],
      types: ['node'],
      typeRoots: [path.join(ROOT, 'node_modules', '@types')],
      skipLibCheck: true,
      outDir: dir,
      rootDir: dir,
    },
  );
  const emitted = program.emit();
  return [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics].map((d) => {
    const where = d.file && d.start !== undefined ? `${path.basename(d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: ` : '';
    return `${where}TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

function runNode(cwd: string, file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { cwd, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The README's TypeScript ("Hooks in code", "Writing a plugin") compiles under
 * `strict` in a project that has hookgate in node_modules (its published
 * declarations, package.json "exports"), and the hooks example runs (issue 10,
 * typed library).
 */
describe('README TypeScript examples under strict', function () {
  this.timeout(120_000);
  let dir: string;
  let readme: string;

  before(async () => {
    readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-readme-ts-')));
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'readme-user', private: true, type: 'module' }));
    await mkdir(path.join(dir, 'node_modules'));
    await symlink(ROOT, path.join(dir, 'node_modules', 'hookgate'), 'dir');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('"Writing a plugin" shows the greeting-tools example file as it is, importing only from \'hookgate\'', async () => {
    const block = tsBlockUnder(readme, 'Writing a plugin');
    assert.equal(block, await readFile(path.join(ROOT, 'examples', 'plugins', 'greeting-tools', 'index.ts'), 'utf8'));
    const specifiers = [...block.matchAll(/from '([^']+)'/g)].map((m) => m[1]);
    assert.deepEqual(specifiers, ['hookgate']);
  });

  it('both examples compile with no error, and the hooks example runs: the mock answers, text() gives the final text', async () => {
    await writeFile(path.join(dir, 'hooks-example.ts'), tsBlockUnder(readme, 'Hooks in code'));
    await writeFile(path.join(dir, 'plugin-example.ts'), tsBlockUnder(readme, 'Writing a plugin'));
    assert.deepEqual(compile(dir, ['hooks-example.ts', 'plugin-example.ts']), []);
    const r = await runNode(dir, 'hooks-example.js');
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.ok(lines.includes('fs/readFile: denied'), r.stdout);
    assert.ok(lines.includes('0 call_llm') && lines.includes('1 call_tool'), r.stdout);
    assert.equal(lines.at(-1), 'hi');
  });

  it('the same check fails on a type error: a handler reading another type\'s fields, mock() after the call, a matcher on afterStep', async () => {
    await writeFile(
      path.join(dir, 'wrong.ts'),
      [
        "import type { AgentHook } from 'hookgate';",
        'export const hooks: AgentHook[] = [',
        "  { id: 'a', type: 'afterStep', handler: (e) => e.args },",
        "  { id: 'b', type: 'afterToolCall', handler: (e) => e.mock({ content: 'x' }) },",
        "  { id: 'c', type: 'afterStep', matcher: '^fs/', handler: () => undefined },",
        "  { id: 'd', type: 'beforeToolCall', handler: (e) => e.mock({ content: 1 }) },",
        '];',
      ].join('\n'),
    );
    const errors = compile(dir, ['wrong.ts']);
    assert.ok(errors.some((e) => e.startsWith('wrong.ts:3: ') && /Property 'args' does not exist on type 'AfterStepEvent'/.test(e)), errors.join('\n'));
    assert.ok(errors.some((e) => e.startsWith('wrong.ts:4: ') && /Property 'mock' does not exist on type 'AfterToolCallEvent'/.test(e)), errors.join('\n'));
    assert.ok(errors.some((e) => e.startsWith('wrong.ts:5: ') && /'string' is not assignable to type 'undefined'/.test(e)), errors.join('\n'));
    assert.ok(errors.some((e) => e.startsWith('wrong.ts:6: ') && /'number' is not assignable to type 'string'/.test(e)), errors.join('\n'));
    assert.equal(errors.length, 4, errors.join('\n'));
  });
});
