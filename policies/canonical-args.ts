import { isIPv4, isIPv6 } from 'node:net';
import path from 'node:path';
import type { CanonicalArg, CanonicalArgs, CanonicalCommand, CanonicalPath, CanonicalUrl, CanonicalUrlParts } from '../kernel/tools.js';

/**
 * Canonical forms of path, URL and command arguments: what a tool will really
 * use, whatever the spelling. Tool sources may use these helpers in their
 * `canonicalArgs`; the policy engine uses them to derive `canonical` for
 * well-known argument names a source did not describe. All functions are
 * synchronous, pure and linear in their input; none throws.
 */

/** Argument names read as paths, URLs and commands when a source gives no canonical form. */
export const PATH_ARG_NAMES: readonly string[] = ['path', 'file', 'filePath', 'file_path', 'filename', 'fileName', 'dir', 'directory', 'folder'];
export const URL_ARG_NAMES: readonly string[] = ['url', 'uri', 'href', 'endpoint'];
export const COMMAND_ARG_NAMES: readonly string[] = ['command', 'cmd', 'script'];
/** A command given as a word list (`{ argv: ['rm', '-rf', '/'] }`). */
export const ARGV_ARG_NAMES: readonly string[] = ['argv'];

const CANONICAL_KINDS = new Set(['path', 'url', 'command']);
const DERIVED_KIND = new Map<string, 'path' | 'url' | 'command' | 'argv'>([
  ...PATH_ARG_NAMES.map((n) => [n, 'path'] as const),
  ...URL_ARG_NAMES.map((n) => [n, 'url'] as const),
  ...COMMAND_ARG_NAMES.map((n) => [n, 'command'] as const),
  ...ARGV_ARG_NAMES.map((n) => [n, 'argv'] as const),
]);

/**
 * The canonical forms a policy sees: the source's entries (those that are
 * objects with a known `kind`; anything else is ignored), plus derived forms
 * for top-level arguments with a well-known name the source did not describe.
 */
export function canonicalFor(args: unknown, given: unknown): Record<string, CanonicalArg> {
  const out: Record<string, CanonicalArg> = {};
  let hasGiven = false;
  if (given !== null && typeof given === 'object' && !Array.isArray(given)) {
    for (const name in given) {
      const entry = (given as Record<string, unknown>)[name];
      if (!Object.hasOwn(given, name) || entry === null || typeof entry !== 'object') continue;
      if (CANONICAL_KINDS.has((entry as { kind?: unknown }).kind as string)) {
        out[name] = entry as CanonicalArg;
        hasGiven = true;
      }
    }
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return out;
  // A plain loop over a fixed lookup: this runs for every decision.
  for (const name in args) {
    if (!Object.hasOwn(args, name) || (hasGiven && Object.hasOwn(out, name))) continue;
    const kind = DERIVED_KIND.get(name);
    if (kind === undefined) continue;
    const value = (args as Record<string, unknown>)[name];
    let entry: CanonicalArg | undefined;
    if (kind === 'argv') {
      if (Array.isArray(value) && value.every((w) => typeof w === 'string')) entry = canonicalArgv(value as string[]);
    } else if (typeof value === 'string') {
      entry = kind === 'path' ? canonicalPath(value) : kind === 'url' ? canonicalUrl(value) : canonicalCommand(value);
    }
    if (entry !== undefined) {
      derived.add(entry);
      out[name] = entry;
    }
  }
  return out;
}

const derived = new WeakSet<object>();

/**
 * Whether `canonicalFor(args, given)` would derive any form from the
 * arguments (a top-level argument with a well-known name, of the right type,
 * that `given` does not describe). Cheap: it derives nothing.
 */
export function derivesCanonical(args: unknown, given: Readonly<Record<string, unknown>> | undefined): boolean {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return false;
  for (const name in args) {
    if (!Object.hasOwn(args, name) || (given !== undefined && Object.hasOwn(given, name))) continue;
    const kind = DERIVED_KIND.get(name);
    if (kind === undefined) continue;
    const value = (args as Record<string, unknown>)[name];
    if (kind === 'argv' ? Array.isArray(value) && value.every((w) => typeof w === 'string') : typeof value === 'string') return true;
  }
  return false;
}

/**
 * `canonical` without the entries `canonicalFor` derived from the arguments
 * (a pure function of them): what the decision log digests. The very same
 * object when nothing was derived.
 */
export function givenCanonical(canonical: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  let out: Record<string, unknown> | undefined;
  for (const name in canonical) {
    const entry = canonical[name];
    if (entry !== null && typeof entry === 'object' && derived.has(entry)) {
      out ??= { ...canonical };
      delete out[name];
    }
  }
  return out ?? canonical;
}

/**
 * The strings of canonical forms that `args: { '*': ... }` matchers also scan:
 * every string field except `kind`, `raw` (the argument itself, scanned
 * anyway) and `absolute` (a host path, an operator's detail), with nested
 * lists (`words`, `urls`) included.
 */
export function canonicalScanStrings(canonical: CanonicalArgs | undefined): string[] {
  const out: string[] = [];
  if (canonical === undefined) return out;
  const add = (v: unknown, depth: number): void => {
    if (typeof v === 'string') out.push(v);
    else if (depth < 3 && Array.isArray(v)) for (const x of v) add(x, depth + 1);
    else if (depth < 3 && v !== null && typeof v === 'object') for (const x of Object.values(v)) add(x, depth + 1);
  };
  for (const entry of Object.values(canonical)) {
    for (const [field, v] of Object.entries(entry)) if (field !== 'raw' && field !== 'absolute' && field !== 'kind') add(v, 0);
  }
  return out;
}

/** A path normalized lexically: `app//.env/.` and `app/.env/` are `app/.env`. */
export function canonicalPath(raw: string): CanonicalPath {
  return { kind: 'path', raw, path: normalizePath(raw) };
}

/** `/`-separated, without `.`, `..` (where resolvable), `//` or a trailing `/`. */
export function normalizePath(p: string): string {
  // Most paths are already normal: no empty, `.` or `..` segment and no trailing `/`.
  if (p !== '' && !NOT_NORMAL.test(p)) return p;
  const n = path.posix.normalize(p);
  return n.length > 1 && n.endsWith('/') ? n.replace(/\/+$/, '') : n;
}

const NOT_NORMAL = /\/\/|(?:^|\/)\.\.?(?:\/|$)|.\/$/;

/** A URL as Node's WHATWG parser reads it; `raw` only when it does not parse. */
export function canonicalUrl(raw: string): CanonicalUrl {
  return { kind: 'url', raw, ...urlParts(raw) };
}

/** The parts of `text` as a URL, or `{}` when Node cannot parse it. */
export function urlParts(text: string): CanonicalUrlParts {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return {};
  }
  const scheme = u.protocol.replace(/:$/, '').toLowerCase();
  let host = u.hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  host = host.replace(/\.+$/, '');
  const parts: CanonicalUrlParts = { href: u.href, scheme, host };
  const port = u.port !== '' ? Number(u.port) : DEFAULT_PORTS[scheme];
  if (port !== undefined) parts.port = port;
  const ip = ipOf(host);
  if (ip !== undefined) parts.ip = ip;
  return parts;
}

const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443, ws: 80, wss: 443, ftp: 21 };

/**
 * For an IP literal: the IPv4 address it reaches (dotted decimal, also for
 * IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`,
 * IPv4-compatible `::a.b.c.d` and NAT64 `64:ff9b::a.b.c.d` forms), else the
 * IPv6 address in full lowercase compressed form; undefined for names.
 */
export function ipOf(host: string): string | undefined {
  if (isIPv4(host)) return host;
  if (!isIPv6(host)) return undefined;
  const groups = expandIPv6(host);
  if (groups === undefined) return host;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  const v4 = () => `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
  if (zeros(0, 5) && groups[5] === 0xffff) return v4(); // ::ffff:a.b.c.d
  if (zeros(0, 4) && groups[4] === 0xffff && groups[5] === 0) return v4(); // ::ffff:0:a.b.c.d
  if (zeros(0, 6) && (groups[6] !== 0 || groups[7]! > 1)) return v4(); // ::a.b.c.d (not :: or ::1)
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return v4(); // 64:ff9b::a.b.c.d
  return compressIPv6(groups);
}

function expandIPv6(text: string): number[] | undefined {
  let s = text.toLowerCase();
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    const b = tail[1]!.split('.').map(Number);
    s = s.slice(0, -tail[1]!.length) + `${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const parse = (h: string) => (h === '' ? [] : h.split(':').map((g) => parseInt(g, 16)));
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  const fill = 8 - head.length - rest.length;
  if (fill < 0 || (halves.length === 1 && fill !== 0)) return undefined;
  const groups = [...head, ...new Array<number>(halves.length === 2 ? fill : 0).fill(0), ...rest];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

function compressIPv6(groups: number[]): string {
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i > 1) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/** A shell command line as words (see `shellWords`), their text, and the URLs in them. */
export function canonicalCommand(raw: string): CanonicalCommand {
  return commandFrom(raw, shellWords(raw));
}

/** A command given as a word list. */
export function canonicalArgv(raw: readonly string[]): CanonicalCommand {
  return commandFrom([...raw], [...raw]);
}

function commandFrom(raw: unknown, words: string[]): CanonicalCommand {
  const out: CanonicalCommand = { kind: 'command', raw, words, text: words.join(' ') };
  const urls: CanonicalUrlParts[] = [];
  for (const w of words) {
    const at = schemeStart(w);
    if (at < 0) continue;
    const parts = urlParts(w.slice(at));
    if (parts.href !== undefined) urls.push(parts);
  }
  if (urls.length > 0) out.urls = urls;
  return out;
}

/** Where the first `scheme://` in `word` starts, or -1. Linear (a backtracking regex is quadratic on long words). */
function schemeStart(word: string): number {
  for (let sep = word.indexOf('://'); sep > 0; sep = word.indexOf('://', sep + 1)) {
    let start = sep;
    while (start > 0 && /[a-zA-Z0-9+.-]/.test(word[start - 1]!)) start--;
    while (start < sep && !/[a-zA-Z]/.test(word[start]!)) start++;
    if (start < sep) return start;
  }
  return -1;
}

// Runs of characters with no meaning to the tokenizer, appended as one slice.
const PLAIN_RUN = /[^ \t\r\n'"\\$|&;()<>`]+/y;
const QUOTED_RUN = /[^"\\]+/y;

const OPERATORS = ['<<<', '&&', '||', ';;', '|&', '>>', '<<', '>&', '<&', '<(', '>(', '$(', '|', '&', ';', '(', ')', '<', '>', '`'];

/**
 * Splits a POSIX shell command line into words the way the shell would before
 * expansion: quotes removed ('...', "...", $'...' with its escapes),
 * backslash escapes and line continuations applied, comments dropped, and
 * control and redirection operators (`|`, `&&`, `;`, `>`, `<(`, `$(`, a
 * backtick...) split off as words of their own; a newline is `;`. Variables
 * and globs are left as written. Unterminated quotes run to the end.
 */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  const end = () => {
    if (word !== undefined) words.push(word);
    word = undefined;
  };
  let i = 0;
  const n = line.length;
  while (i < n) {
    const c = line[i]!;
    if (c === ' ' || c === '\t' || c === '\r') {
      end();
      i++;
    } else if (c === '\n') {
      end();
      words.push(';');
      i++;
    } else if (c === '\\') {
      if (line[i + 1] === '\n') i += 2;
      else {
        word = (word ?? '') + (line[i + 1] ?? '');
        i += 2;
      }
    } else if (c === "'") {
      const close = line.indexOf("'", i + 1);
      const stop = close < 0 ? n : close;
      word = (word ?? '') + line.slice(i + 1, stop);
      i = stop + 1;
    } else if (c === '$' && line[i + 1] === "'") {
      const [text, next] = ansiCQuoted(line, i + 2);
      word = (word ?? '') + text;
      i = next;
    } else if (c === '"' || (c === '$' && line[i + 1] === '"')) {
      i += c === '$' ? 2 : 1;
      let text = '';
      while (i < n && line[i] !== '"') {
        if (line[i] === '\\' && i + 1 < n && '"\\$`\n'.includes(line[i + 1]!)) {
          if (line[i + 1] !== '\n') text += line[i + 1];
          i += 2;
        } else {
          QUOTED_RUN.lastIndex = i;
          const run = QUOTED_RUN.exec(line);
          const stop = run ? i + run[0].length : i + 1;
          text += line.slice(i, stop);
          i = stop;
        }
      }
      word = (word ?? '') + text;
      i++;
    } else if (c === '#' && word === undefined) {
      while (i < n && line[i] !== '\n') i++;
    } else {
      const op = OPERATORS.find((o) => line.startsWith(o, i));
      if (op !== undefined) {
        end();
        words.push(op);
        i += op.length;
      } else {
        PLAIN_RUN.lastIndex = i + 1;
        const run = PLAIN_RUN.exec(line);
        const stop = run ? i + 1 + run[0].length : i + 1;
        word = (word ?? '') + line.slice(i, stop);
        i = stop;
      }
    }
  }
  end();
  return words;
}

const C_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?' };

/** The text of a `$'...'` word starting after the opening quote, and the index after its closing quote. */
function ansiCQuoted(line: string, start: number): [string, number] {
  let i = start;
  let text = '';
  while (i < line.length && line[i] !== "'") {
    if (line[i] !== '\\' || i + 1 >= line.length) {
      text += line[i++];
      continue;
    }
    const e = line[i + 1]!;
    const hex = /^x([0-9a-fA-F]{1,2})/.exec(line.slice(i + 1, i + 4));
    const uni = e === 'u' ? /^u([0-9a-fA-F]{1,4})/.exec(line.slice(i + 1, i + 6)) : e === 'U' ? /^U([0-9a-fA-F]{1,8})/.exec(line.slice(i + 1, i + 10)) : null;
    const oct = /^[0-7]{1,3}/.exec(line.slice(i + 1, i + 4));
    if (hex) {
      text += String.fromCharCode(parseInt(hex[1]!, 16));
      i += 1 + hex[0].length;
    } else if (uni) {
      const cp = parseInt(uni[1]!, 16);
      text += cp <= 0x10ffff ? String.fromCodePoint(cp) : '';
      i += 2 + uni[1]!.length;
    } else if (oct) {
      text += String.fromCharCode(parseInt(oct[0], 8) & 255);
      i += 1 + oct[0].length;
    } else if (e === 'c' && i + 2 < line.length) {
      text += String.fromCharCode(line.charCodeAt(i + 2) & 31);
      i += 3;
    } else {
      text += C_ESCAPES[e] ?? '\\' + e;
      i += 2;
    }
  }
  return [text, i + 1];
}
