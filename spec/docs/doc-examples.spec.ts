import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYamlText } from 'yaml';
import { loadAgentFile } from '../../config/agent-file.js';
import { loadConfig } from '../../config/load-config.js';
import { AgentRegistry } from '../../kernel/runtime/agent-registry.js';
import { loadPacks } from '../../policies/load-packs.js';
import { cliEnv, ROOT, runHookgate } from '../helpers/cli-process.js';
import { compileExamples, type CompiledExample } from './compile-examples.js';
import { readFencedBlocks, userDocFiles, type FencedBlock } from './fenced-blocks.js';
import { copyWorkingTree, runShell, tail, writeHookgateCommand } from './repo-copy.js';

/*
 * Every fenced block of README.md and docs/*.md is run or checked here, so a doc
 * example that breaks fails the suite:
 * - sh: run through /bin/sh -e in a copy of the working tree (one copy per doc,
 *   blocks in document order, as a reader follows them), `hookgate` on PATH
 *   as `node dist/cli.js`; exit 0 unless marked `<!-- doc-test: exit N -->`;
 * - ts: compiled together under `strict`, with 'hookgate' resolving to this
 *   package as it does in a user's project; a block that exports nothing is a
 *   complete program and is also run (embedded defaults, its own folder);
 * - yaml: an agent file (has `id` and `model`) through loadAgentFile, a policy
 *   pack (a `policies` list) through loadPacks and `hookgate policy test`,
 *   anything else as hookgate.config.yaml through loadConfig;
 * - json: parsed.
 * Blocks marked `output`, `fragment (why)` or `walkthrough (why)` are listed as
 * pending with their mark (never skipped silently); an unmarked block of any
 * other language fails.
 */

/**
 * Blocks (file#section#language) in README sections other helpers of issue 10 are rewriting, known to
 * fail until that work lands: listed as pending, and a test FAILS once such a
 * block passes, so the entry is removed rather than forgotten.
 */
const KNOWN_BROKEN: Record<string, string> = {
};

const RUNNABLE = new Set(['sh', 'ts', 'yaml', 'json']);
/**
 * Commands never run from a working-tree copy: its node_modules links to the
 * installed packages, which an install would rewrite, and `npm test` would run
 * this suite inside itself. Set-up blocks are marked walkthrough instead.
 */
const INSTALLS_OR_TESTS = /\bnpm\s+(?:install|ci|i|uninstall|update|rebuild|link|test|t)\b/;
const PROGRAM_TIMEOUT_MS = 60_000;

function where(block: FencedBlock): string {
  return `${block.file}:${block.line}`;
}

function knownBroken(block: FencedBlock): string | undefined {
  return KNOWN_BROKEN[`${block.file}#${block.section}#${block.lang}`];
}

function title(block: FencedBlock, what: string): string {
  const known = knownBroken(block);
  return `${where(block)} (${block.section || 'top'}): ${what}${known ? ` [known broken: ${known}]` : ''}`;
}

/** Runs `check`; for a known-broken block a failure makes the test pending and a pass fails it. */
async function expectWorks(ctx: Mocha.Context, block: FencedBlock, check: () => Promise<void> | void): Promise<void> {
  const known = knownBroken(block);
  if (!known) return check();
  try {
    await check();
  } catch {
    ctx.skip();
  }
  assert.fail(`${where(block)} passes now: remove "${block.file}#${block.section}#${block.lang}" from KNOWN_BROKEN in spec/docs/doc-examples.spec.ts`);
}

type YamlKind = 'agent file' | 'policy pack' | 'config';

function yamlKind(value: unknown): YamlKind {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const v = value as Record<string, unknown>;
    if (Array.isArray(v.policies)) return 'policy pack';
    if (typeof v.id === 'string' && v.model !== undefined) return 'agent file';
  }
  return 'config';
}

function yamlKindOf(block: FencedBlock): YamlKind {
  try {
    return yamlKind(parseYamlText(block.text));
  } catch {
    return 'config'; // the loader reports the syntax error with the file named
  }
}

function runNode(jsFile: string, cwd: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [jsFile], { cwd, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'], timeout: PROGRAM_TIMEOUT_MS });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'hookgate-doc-examples-'));
after(() => fs.rmSync(tmpRoot, { recursive: true, force: true }));

const docFiles = userDocFiles(ROOT);
const allBlocks = docFiles.flatMap((file) => readFencedBlocks(ROOT, file));

describe('docs: every code block of README.md and docs/*.md', function () {
  this.timeout(PROGRAM_TIMEOUT_MS + 30_000);

  it('finds the doc files and their blocks', () => {
    assert.ok(docFiles.includes('README.md') && docFiles.includes('docs/hook-events.md'), docFiles.join(', '));
    assert.ok(allBlocks.some((b) => b.lang === 'sh') && allBlocks.some((b) => b.lang === 'ts') && allBlocks.some((b) => b.lang === 'yaml'));
  });

  it('has no unmarked block of a language it cannot run, and no mark that contradicts its block', () => {
    const problems: string[] = [];
    for (const b of allBlocks) {
      if (!b.marker && !RUNNABLE.has(b.lang)) {
        problems.push(`${where(b)}: a \`\`\`${b.lang || '(no language)'} block is neither run nor marked; give it a language this spec runs (${[...RUNNABLE].join(', ')}) or mark it <!-- doc-test: output --> / <!-- doc-test: fragment (why) -->`);
      }
      if (b.marker?.kind === 'exit' && b.lang !== 'sh') problems.push(`${where(b)}: "exit N" marks a shell block, not \`\`\`${b.lang}`);
      if (b.lang === 'sh' && b.marker?.kind !== 'walkthrough' && INSTALLS_OR_TESTS.test(b.text)) {
        problems.push(`${where(b)}: installs or tests; such set-up commands are marked walkthrough and run from a clean clone by readme-walkthrough.spec.ts`);
      }
    }
    assert.deepEqual(problems, []);
  });

  for (const b of allBlocks.filter((x) => x.marker && x.marker.kind !== 'exit')) {
    const m = b.marker!;
    // Pending, with the mark: listed in every report, never run.
    it(`${where(b)} (${b.section || 'top'}): marked ${m.kind}${'why' in m ? ` (${m.why})` : ''}, not run here`);
  }

  for (const file of docFiles) {
    const shell = allBlocks.filter((b) => b.file === file && b.lang === 'sh' && (!b.marker || b.marker.kind === 'exit'));
    if (shell.length === 0) continue;
    describe(`${file}: shell blocks, in order, in a copy of the repository`, () => {
      const copy = path.join(tmpRoot, `sh-${file.replace(/\W+/g, '_')}`);
      const bin = path.join(copy, '.doc-test-bin');
      before(() => {
        copyWorkingTree(ROOT, copy);
        writeHookgateCommand(bin, copy);
      });
      for (const b of shell) {
        const expected = b.marker?.kind === 'exit' ? b.marker.code : 0;
        it(title(b, `exits ${expected}`), async function () {
          await expectWorks(this, b, async () => {
            assert.ok(!INSTALLS_OR_TESTS.test(b.text), `${where(b)} installs packages or runs the tests: mark it <!-- doc-test: walkthrough (why) --> (not run here)`);
            const r = await runShell(b.text, copy, bin);
            assert.equal(r.code, expected, `${where(b)} exited ${r.code}\n--- script\n${b.text}--- stdout\n${tail(r.stdout)}\n--- stderr\n${tail(r.stderr)}`);
          });
        });
      }
    });
  }

  const tsBlocks = allBlocks.filter((b) => b.lang === 'ts' && !b.marker);
  describe('ts blocks: compiled under strict against the package, programs run', () => {
    let compiled: Map<FencedBlock, CompiledExample> | undefined;
    const compiledFor = (b: FencedBlock): CompiledExample => {
      compiled ??= new Map(compileExamples(ROOT, path.join(tmpRoot, 'ts'), tsBlocks).map((c) => [c.block, c]));
      return compiled.get(b)!;
    };
    for (const b of tsBlocks) {
      it(title(b, 'compiles under strict'), async function () {
        await expectWorks(this, b, () => {
          const c = compiledFor(b);
          assert.equal(c.errors.length, 0, `${where(b)} does not compile:\n${c.errors.join('\n')}`);
        });
      });
      it(title(b, 'runs to completion when it is a complete program'), async function () {
        const c = compiledFor(b);
        if (!c.isProgram) {
          // A module (it exports something): compiled above, imported by whoever uses it.
          this.skip();
        }
        await expectWorks(this, b, async () => {
          assert.equal(c.errors.length, 0, `${where(b)} does not compile (see the test above)`);
          const cwd = fs.mkdtempSync(path.join(tmpRoot, 'program-'));
          const r = await runNode(c.jsFile, cwd);
          assert.equal(r.code, 0, `${where(b)} exited ${r.code}${r.signal ? ` (${r.signal})` : ''}\n--- stdout\n${tail(r.stdout)}\n--- stderr\n${tail(r.stderr)}`);
        });
      });
    }
  });

  describe('yaml blocks: parsed by the loaders hookgate uses', () => {
    for (const b of allBlocks.filter((x) => x.lang === 'yaml' && !x.marker)) {
      const kind = yamlKindOf(b);
      it(title(b, `loads as ${kind === 'config' ? 'hookgate.config.yaml' : kind === 'agent file' ? 'an agent file' : 'a policy pack'}${kind === 'policy pack' ? ' and passes policy test' : ''}`), async function () {
        await expectWorks(this, b, async () => {
          const dir = fs.mkdtempSync(path.join(tmpRoot, 'yaml-'));
          if (kind === 'config') {
            fs.writeFileSync(path.join(dir, 'hookgate.config.yaml'), b.text);
            loadConfig({ cwd: dir, env: {} });
          } else if (kind === 'agent file') {
            const file = path.join(dir, 'agent.yaml');
            fs.writeFileSync(file, b.text);
            // Sub-agent files the example names are not part of it: stand-ins with the file's name as id.
            const subagents = (parseYamlText(b.text) as { subagents?: unknown }).subagents;
            for (const entry of Array.isArray(subagents) ? subagents : []) {
              if (typeof entry !== 'string' || !/\.ya?ml$/.test(entry)) continue;
              const sub = path.resolve(dir, entry);
              const id = path.basename(entry).replace(/\.ya?ml$/, '');
              fs.writeFileSync(sub, `id: ${id}\nmodel: { provider: scripted, turns: [ { text: ok } ] }\n`);
            }
            const agent = loadAgentFile(file, new AgentRegistry());
            assert.equal(typeof agent.id, 'string');
          } else {
            const file = path.join(dir, 'pack.yaml');
            fs.writeFileSync(file, b.text);
            const { packs, errors } = await loadPacks([file]);
            assert.deepEqual(errors.map((e) => `${e.policyId ?? ''} ${e.field ?? ''}: ${e.message}`), []);
            assert.equal(packs.length, 1);
            const r = await runHookgate(dir, ['policy', 'test', file]);
            assert.equal(r.code, 0, `policy test exited ${r.code}\n${tail(r.stdout)}\n${tail(r.stderr)}`);
          }
        });
      });
    }
  });

  describe('json blocks: parse', () => {
    for (const b of allBlocks.filter((x) => x.lang === 'json' && !x.marker)) {
      it(title(b, 'is valid JSON'), async function () {
        await expectWorks(this, b, () => {
          JSON.parse(b.text);
        });
      });
    }
  });
});
