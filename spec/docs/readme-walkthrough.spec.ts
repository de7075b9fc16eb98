import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../helpers/cli-process.js';
import { readFencedBlocks, type FencedBlock } from './fenced-blocks.js';
import { runShell, tail, writeHookgateCommand, type ShellResult } from './repo-copy.js';
import { matchesShownOutput } from './timeline-pattern.js';

/*
 * A new user's first minutes, from a clean checkout: `git clone` of this
 * repository's HEAD (committed work only) into a temp folder, the README's
 * first set-up command exactly as written, its output against the timeline
 * the README shows, then every CLI command the README names.
 *
 * Installed packages: `npm install` in a fresh clone would download and
 * compile re2 and better-sqlite3 from source (minutes, and a network). The
 * clone therefore gets a hard-link copy (`cp -al`) of the packages already
 * installed, so `npm install` finds them up to date and runs for real without
 * rebuilding; the link copy is checked to be a real folder (never a symlink to
 * the shared packages), and its lock file is a real copy, since npm rewrites it
 * in place. The second set-up command (`npm test`) is this suite: not run here.
 */

const WALKTHROUGH_TIMEOUT_MS = 8 * 60_000;
const README = readFencedBlocks(ROOT, 'README.md');

/**
 * Commands the walkthrough cannot run as a reader would right after the
 * example, and why; each still gets a test that runs its `--help`.
 */
const HELP_ONLY: Record<string, string> = {
  approve: 'acts on a parked operation; the example ends done',
  reject: 'acts on a parked operation; the example ends done',
  'reject-continue': 'acts on a parked operation; the example ends done',
  resume: 'acts on an operation a crashed process left running',
  abort: 'acts on a running or parked operation',
  'webhook verify': 'a receiver that serves until it is stopped',
  serve: 'a server that runs until it is stopped; spec/cli/serve.spec.ts drives it over HTTP',
  worker: 'runs steps from Redis until it is stopped; spec/plugins/execution-queue drives two of them',
  init: 'writes a project into a folder; spec/cli/init.spec.ts runs it, then run and policy test on what it wrote',
};

/** The README's set-up commands: the lines of its first block, comments dropped. */
function setupCommands(): string[] {
  const first = README[0];
  assert.ok(first && first.lang === 'sh' && first.marker?.kind === 'walkthrough', 'README.md should open with the set-up block, marked <!-- doc-test: walkthrough (…) -->');
  return first.text
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l !== '');
}

function shownTimeline(): FencedBlock {
  const block = README.find((b) => b.section === 'What the first command shows' && b.marker?.kind === 'output');
  assert.ok(block, 'README.md "What the first command shows" should show the timeline in a block marked <!-- doc-test: output -->');
  return block;
}

/** Every `hookgate …` / `node dist/cli.js …` the README's prose and tables name, in order, without repeats. */
function documentedCommands(): string[] {
  const text = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').replace(/^\s*```[\s\S]*?^\s*```[^\n]*$/gm, '');
  const found = new Set<string>();
  for (const m of text.matchAll(/`(?:hookgate|node dist\/cli\.js) ([^`]+)`/g)) found.add(m[1]!.trim());
  // The CLI table's first column also names commands without the `hookgate` prefix (`reject <op>`).
  for (const row of text.matchAll(/^\|\s*(`[^|]*`[^|]*)\|/gm)) {
    for (const span of row[1]!.matchAll(/`([^`]+)`/g)) {
      const words = span[1]!.replace(/^hookgate\s+/, '');
      // A command starts with a lower-case word; config keys (`policies.deadlineMs`) do not.
      if (/^[a-z][a-z-]*(\s|$)/.test(words)) found.add(words.trim());
    }
  }
  // One test per distinct command line: `show <id>` and `show <op>`, `policy check` and `policy check [paths]` are one.
  const byLine = new Map<string, string>();
  for (const c of found) {
    const key = c.replace(/\[[^\]]*\]/g, '').replace(/<(op|id)>/g, '<op>').replace(/\s+/g, ' ').trim();
    if (!byLine.has(key)) byLine.set(key, c);
  }
  return [...byLine.values()];
}

/** The subcommand words of a documented command (`policy check [paths]` -> `policy check`). */
function subcommand(command: string): string {
  const words: string[] = [];
  for (const w of command.split(/\s+/)) {
    if (/^[<[>|"'-]/.test(w)) break;
    words.push(w);
  }
  return words.join(' ');
}

function shown(r: ShellResult): string {
  return `exit ${r.code}\n--- stdout\n${tail(r.stdout, 40)}\n--- stderr\n${tail(r.stderr, 40)}`;
}

describe('README walkthrough from a clean clone', function () {
  this.timeout(WALKTHROUGH_TIMEOUT_MS);
  let tmp: string;
  let clone: string;
  let bin: string;
  let example: ShellResult | undefined;
  let operationId: string | undefined;

  before(function () {
    this.timeout(WALKTHROUGH_TIMEOUT_MS);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hookgate-walkthrough-'));
    clone = path.join(tmp, 'hookgate');
    try {
      execFileSync('git', ['-C', ROOT, 'rev-parse', '--verify', 'HEAD'], { stdio: 'ignore' });
    } catch {
      assert.fail(`the README walkthrough clones the repository's HEAD: ${ROOT} must be a git checkout with a commit`);
    }
    execFileSync('git', ['clone', '--quiet', ROOT, clone], { stdio: ['ignore', 'ignore', 'pipe'] });
    const installed = fs.realpathSync(path.join(ROOT, 'node_modules'));
    execFileSync('cp', ['-al', installed, path.join(clone, 'node_modules')]);
    const copied = fs.lstatSync(path.join(clone, 'node_modules'));
    assert.ok(copied.isDirectory() && !copied.isSymbolicLink(), 'the clone must have node_modules of its own');
    const lock = path.join(clone, 'node_modules', '.package-lock.json');
    if (fs.existsSync(lock)) {
      const text = fs.readFileSync(lock);
      fs.rmSync(lock);
      fs.writeFileSync(lock, text);
    }
    bin = writeHookgateCommand(path.join(tmp, 'bin'), clone);
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('runs the first set-up command as written (npm install && npm run example)', async () => {
    const [first] = setupCommands();
    assert.equal(first, 'npm install && npm run example');
    assert.ok(!fs.existsSync(path.join(clone, 'dist')), 'a clean clone has no build');
    example = await runShell(first!, clone, bin);
    assert.equal(example.code, 0, shown(example));
    assert.ok(fs.existsSync(path.join(clone, 'dist', 'cli.js')), 'npm run example builds dist/');
  });

  it('prints the timeline the README shows', () => {
    assert.ok(example, 'the set-up command ran');
    // npm prints its own lines first (`> hookgate@… example`); the timeline is what the CLI printed after them.
    const start = example.stdout.indexOf('▶ agent');
    assert.ok(start >= 0, shown(example));
    const timeline = example.stdout.slice(start);
    operationId = /\(operation (op_[0-9a-f-]+)\)/.exec(timeline)?.[1];
    assert.ok(matchesShownOutput(shownTimeline().text, timeline), `README.md:${shownTimeline().line} shows\n${shownTimeline().text}\nthe run printed\n${timeline}`);
    assert.ok(operationId, timeline);
  });

  describe('each command the README names, run as documented in the clone', () => {
    for (const command of documentedCommands()) {
      const sub = subcommand(command);
      const args = (id: string): string =>
        command
          .replace(/\[[^\]]*\]/g, '')
          // A documented id prefix (`show op_01a2318`) stands for a prefix of the example's operation.
          .replace(/\bop_[0-9a-f]{4,}\b/g, id.slice(0, 16))
          .replace(/<(op|id)>/g, id)
          .replace(/<shell>/g, 'bash')
          .replace(/<agent\.yaml>/g, 'examples/hello-files/agent.yaml')
          .trim();
      // Files the reader brings (`--event e.json`) are not in a clone: such a command only shows its help.
      const readersFile = args('op').split(/\s+/).find((w) => !w.startsWith('-') && /[./]/.test(w) && !w.startsWith('examples/'));
      const helpOnly = HELP_ONLY[sub] ?? HELP_ONLY[sub.split(' ')[0]!] ?? (readersFile ? `names a file of the reader's (${readersFile})` : undefined);
      if (helpOnly) {
        it(`hookgate ${command}: its --help exits 0 (${helpOnly})`, async () => {
          const r = await runShell(`hookgate ${sub} --help`, clone, bin);
          assert.equal(r.code, 0, `hookgate ${sub} --help: ${shown(r)}`);
          assert.match(r.stdout, /^Usage: hookgate /m);
        });
        continue;
      }
      it(`hookgate ${command}`, async () => {
        assert.ok(operationId, 'the example ran and printed its operation id');
        const line = args(operationId);
        assert.ok(!/[<>]/.test(line), `"${command}": no example value for its placeholder; add one to readme-walkthrough.spec.ts`);
        const r = await runShell(`hookgate ${line}`, clone, bin);
        assert.equal(r.code, 0, `hookgate ${line}: ${shown(r)}`);
        assert.notEqual(r.stdout.trim(), '', `hookgate ${line} printed nothing`);
        if (/^(show|operations)\b/.test(line)) assert.ok(r.stdout.includes(operationId), `hookgate ${line} should show the example's operation ${operationId}: ${shown(r)}`);
      });
    }
  });

  describe("the README's shell blocks, run in the clone", () => {
    for (const b of README.filter((x) => x.lang === 'sh' && !x.marker)) {
      it(`README.md:${b.line} (${b.section})`, async () => {
        const r = await runShell(b.text, clone, bin);
        assert.equal(r.code, 0, shown(r));
      });
    }
  });
});
