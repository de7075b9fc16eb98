import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/cli-process.js';
import { anchorOf } from './field-tables.js';

/*
 * The docs stand alone: docs/README.md links every doc and every README
 * section, every relative link of the docs resolves (file and heading), and
 * the user docs never send a reader to a design document the package does not
 * ship.
 */

const INDEX = 'docs/README.md';
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', '.git', '.hookgate', 'spec']);

/** Every markdown file of the package, relative to the root. */
function markdownFiles(dir = ROOT): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_FOLDERS.has(entry.name)) out.push(...markdownFiles(path.join(dir, entry.name)));
    } else if (entry.name.endsWith('.md')) out.push(path.relative(ROOT, path.join(dir, entry.name)).split(path.sep).join('/'));
  }
  return out.sort();
}

function read(file: string): string {
  return fs.readFileSync(path.join(ROOT, file), 'utf8');
}

/** The text outside fenced code blocks. */
function prose(markdown: string): string {
  return markdown.replace(/^\s*(```|~~~)[\s\S]*?^\s*\1[^\n]*$/gm, '');
}

/** GitHub's anchors of a markdown file's headings (repeated headings get -1, -2...). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(markdown).matchAll(/^#{1,6}\s+(.*?)\s*#*\s*$/gm)) {
    const base = anchorOf(m[1]!.replace(/`/g, ''));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The relative links of a markdown file: `[text](target)`, external and mail links left out. */
function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

/** Where a link from `from` points: the file (relative to the root) and the anchor, if any. */
function resolveLink(from: string, target: string): { file: string; anchor?: string } {
  const [file, anchor] = target.split('#') as [string, string | undefined];
  const resolved = file === '' ? from : path.posix.normalize(path.posix.join(path.posix.dirname(from), file));
  return { file: resolved, ...(anchor !== undefined ? { anchor } : {}) };
}

/** The docs a package user reads (as-built.md is for developers of hookgate). */
const USER_DOCS = markdownFiles().filter((f) => f !== 'docs/as-built.md' && !f.startsWith('bench/'));

describe('docs: an index, links that resolve, nothing cited that the package does not ship', () => {
  it(`${INDEX} links every markdown file of the package`, () => {
    const linked = new Set(relativeLinks(read(INDEX)).map((t) => resolveLink(INDEX, t).file));
    const missing = markdownFiles().filter((f) => f !== INDEX && !linked.has(f));
    assert.deepEqual(missing, [], `add these to ${INDEX}`);
  });

  it(`${INDEX} links every section of README.md`, () => {
    const linked = new Set(
      relativeLinks(read(INDEX))
        .map((t) => resolveLink(INDEX, t))
        .filter((l) => l.file === 'README.md' && l.anchor !== undefined)
        .map((l) => l.anchor),
    );
    const sections = [...prose(read('README.md')).matchAll(/^##\s+(.*?)\s*$/gm)].map((m) => anchorOf(m[1]!.replace(/`/g, '')));
    assert.ok(sections.length >= 8, sections.join(', '));
    assert.deepEqual(sections.filter((s) => !linked.has(s)), [], `link these README sections from ${INDEX}`);
  });

  it('every relative link of every doc names a file that exists, and a heading of it when it has an anchor', () => {
    const broken: string[] = [];
    for (const from of markdownFiles()) {
      for (const target of relativeLinks(read(from))) {
        const { file, anchor } = resolveLink(from, target);
        if (!fs.existsSync(path.join(ROOT, file))) {
          broken.push(`${from}: (${target}): no file ${file}`);
          continue;
        }
        if (anchor !== undefined && file.endsWith('.md') && !anchors(read(file)).has(anchor)) broken.push(`${from}: (${target}): ${file} has no heading #${anchor}`);
      }
    }
    assert.deepEqual(broken, []);
  });

  it('the user docs cite no design document (document 000/001/003, ARCHITECTURE.md) a package user does not have', () => {
    assert.ok(USER_DOCS.includes('README.md') && USER_DOCS.includes('policies/README.md') && USER_DOCS.includes('docs/hook-events.md'));
    const citing: string[] = [];
    for (const file of USER_DOCS) {
      read(file)
        .split('\n')
        .forEach((line, i) => {
          if (/\bdocuments?\s+0\d\d\b|ARCHITECTURE\.md|\bseeds\//i.test(line)) citing.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    assert.deepEqual(citing, []);
  });
});
