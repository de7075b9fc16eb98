import fs from 'node:fs';
import path from 'node:path';

/**
 * How a block is marked with `<!-- doc-test: … -->` on the line before its fence:
 * - `output`: something hookgate prints (a timeline, an error); compared where a spec runs the command, never run;
 * - `fragment (why)`: part of a file or a listing, not complete on its own; the reason is required;
 * - `walkthrough (why)`: a set-up command that spec/docs/readme-walkthrough.spec.ts runs from a clean clone;
 * - `exit N`: a shell block expected to end with exit code N (0 when unmarked).
 */
export type BlockMarker =
  | { kind: 'output' }
  | { kind: 'fragment'; why: string }
  | { kind: 'walkthrough'; why: string }
  | { kind: 'exit'; code: number };

/** One fenced code block of a markdown file. */
export interface FencedBlock {
  /** The markdown file, relative to the repository root (`README.md`, `docs/models.md`). */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string's first word, lower-cased (`sh`, `ts`, `yaml`; `''` when none). */
  lang: string;
  /** The nearest heading above the block (`''` before the first one). */
  section: string;
  marker?: BlockMarker;
  /** The block's text, without the fences and the fence's indentation, ending in a newline. */
  text: string;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/;
const HEADING = /^#{1,6}\s+(.*?)\s*#*\s*$/;
const MARKER = /^\s*<!--\s*doc-test:\s*(.*?)\s*-->\s*$/;

/** A problem with a `doc-test` marker, with the place it was found. */
export class MarkerError extends Error {}

function parseMarker(body: string, where: string): BlockMarker {
  let m: RegExpExecArray | null;
  if (body === 'output') return { kind: 'output' };
  if ((m = /^(fragment|walkthrough)\s*\((.+)\)$/.exec(body))) return { kind: m[1] as 'fragment' | 'walkthrough', why: m[2]!.trim() };
  if ((m = /^exit\s+(\d{1,3})$/.exec(body))) return { kind: 'exit', code: Number(m[1]) };
  throw new MarkerError(
    `${where}: unknown doc-test marker "${body}"; expected "output", "fragment (why)", "walkthrough (why)" or "exit N"`,
  );
}

/**
 * Every fenced block of a markdown text, in order. A marker comment must be
 * the last non-blank line before the fence; a marker not followed by a fence
 * is an error (it would mark nothing).
 */
export function parseFencedBlocks(markdown: string, file: string): FencedBlock[] {
  const lines = markdown.split('\n');
  const blocks: FencedBlock[] = [];
  let section = '';
  let pending: { marker: BlockMarker; line: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE.exec(line);
    if (fence) {
      const [, indent, ticks, info] = fence;
      const body: string[] = [];
      let j = i + 1;
      for (; j < lines.length; j++) {
        const close = lines[j]!;
        if (close.trim().startsWith(ticks!) && /^[`~]+$/.test(close.trim()) && close.trim().length >= ticks!.length) break;
        body.push(close.startsWith(indent!) ? close.slice(indent!.length) : close.trimStart());
      }
      if (j >= lines.length) throw new MarkerError(`${file}:${i + 1}: code fence is never closed`);
      blocks.push({ file, line: i + 1, lang: info!.toLowerCase(), section, ...(pending ? { marker: pending.marker } : {}), text: body.join('\n') + '\n' });
      pending = undefined;
      i = j;
      continue;
    }
    const marker = MARKER.exec(line);
    if (marker) {
      if (pending) throw new MarkerError(`${file}:${pending.line}: doc-test marker is not followed by a code block`);
      pending = { marker: parseMarker(marker[1]!, `${file}:${i + 1}`), line: i + 1 };
      continue;
    }
    if (line.trim() === '') continue;
    if (pending) throw new MarkerError(`${file}:${pending.line}: doc-test marker is not followed by a code block`);
    const heading = HEADING.exec(line);
    if (heading) section = heading[1]!;
  }
  if (pending) throw new MarkerError(`${file}:${pending.line}: doc-test marker is not followed by a code block`);
  return blocks;
}

/** The user docs whose blocks are run: README.md and every docs/*.md, relative to `root`. */
export function userDocFiles(root: string): string[] {
  const docs = fs
    .readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

/** Reads and parses one doc file under `root`. */
export function readFencedBlocks(root: string, file: string): FencedBlock[] {
  return parseFencedBlocks(fs.readFileSync(path.join(root, file), 'utf8'), file);
}
