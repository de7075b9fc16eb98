import type { ToolResult } from '../kernel/messages.js';
import type { CompiledRedaction } from './policy-types.js';

const BUFFER_THRESHOLD = 64 * 1024;

/**
 * Rewrites a tool result with re2 redactions, in order: the `content` string
 * and every string inside `data` (iteratively, so deep data cannot overflow
 * the stack). Returns a new result, or the very same object when no pattern
 * matched anything; the input is not modified. Linear time.
 *
 * Encoded content (`data.encoding` is base64, hex, latin1 or binary, as
 * `fs/readFile` reports it) is redacted in what it decodes to: the bytes are
 * read as UTF-8 when they are valid UTF-8, else byte for byte (latin1), the
 * patterns applied, and the result encoded again the same way, so a PEM key
 * read as base64 comes back as the base64 of `[REDACTED PRIVATE KEY]`. Text
 * after the encoded part (the truncation note) and then the whole content are
 * also redacted as text.
 */
export function applyRedactions(result: ToolResult, redactions: readonly CompiledRedaction[]): ToolResult {
  if (redactions.length === 0) return result;
  let changed = false;
  const rewrite = (original: string): string => {
    const out = rewriteString(original);
    if (out !== original) changed = true;
    return out;
  };
  const rewriteString = (s: string): string => {
    if (s.length >= BUFFER_THRESHOLD) {
      // re2 works on UTF-8: converting once instead of once per pattern matters on large results.
      let buf = Buffer.from(s);
      for (const r of redactions) buf = r.re.replace(buf, r.replacement);
      return buf.toString();
    }
    let out = s;
    for (const r of redactions) out = r.re.replace(out, r.replacement);
    return out;
  };
  const decoded = decodeContent(result);
  let content = result.content;
  if (decoded !== undefined) {
    const redacted = rewriteString(decoded.text);
    if (redacted !== decoded.text) content = Buffer.from(redacted, decoded.textEncoding).toString(decoded.encoding) + decoded.rest;
  }
  content = rewriteString(content);
  if (content !== result.content) changed = true;
  const next: ToolResult = { ...result, content };
  if (result.data !== undefined) next.data = mapStrings(result.data, rewrite);
  return changed ? next : result;
}

/** Byte encodings of `content` that redaction decodes (`data.encoding`). */
export const CONTENT_ENCODINGS = ['base64', 'hex', 'latin1', 'binary'] as const;
export type ContentEncoding = (typeof CONTENT_ENCODINGS)[number];

export interface DecodedContent {
  encoding: ContentEncoding;
  /** The bytes as text: UTF-8 when they are valid UTF-8, else latin1 (one character per byte). */
  text: string;
  textEncoding: 'utf8' | 'latin1';
  /** What follows the encoded part of `content` (a note such as `[truncated: ...]`), as text. */
  rest: string;
}

const ENCODED_PREFIX: Record<'base64' | 'hex', RegExp> = { base64: /^[A-Za-z0-9+/]*={0,2}/, hex: /^(?:[0-9a-f]{2})*/ };

/**
 * What an encoded result's content says as text, or undefined when the result
 * declares no byte encoding in `data.encoding` or its content is not in it
 * (then it is treated as text). The encoded part is the longest prefix in the
 * encoding's alphabet that decodes and encodes back to itself.
 */
export function decodeContent(result: { content: unknown; data?: unknown }): DecodedContent | undefined {
  const data = result.data as { encoding?: unknown } | null | undefined;
  const encoding = data !== null && typeof data === 'object' ? data.encoding : undefined;
  if (typeof result.content !== 'string' || !(CONTENT_ENCODINGS as readonly unknown[]).includes(encoding)) return undefined;
  const enc = encoding as ContentEncoding;
  const content = result.content;
  let body = content;
  if (enc === 'base64' || enc === 'hex') body = ENCODED_PREFIX[enc].exec(content)![0];
  // latin1 text holds one byte per character; anything above U+00FF is not latin1.
  else if (/[^\u0000-\u00ff]/.test(content)) return undefined;
  const bytes = Buffer.from(body, enc);
  if (bytes.toString(enc) !== body) return undefined;
  const utf8 = bytes.toString('utf8');
  const isUtf8 = Buffer.byteLength(utf8) === bytes.length && Buffer.from(utf8).equals(bytes);
  return { encoding: enc, text: isUtf8 ? utf8 : bytes.toString('latin1'), textEncoding: isUtf8 ? 'utf8' : 'latin1', rest: content.slice(body.length) };
}

/** A copy of `root` with every string passed through `fn`; shared and cyclic references stay shared. */
export function mapStrings(root: unknown, fn: (s: string) => string): unknown {
  if (typeof root === 'string') return fn(root);
  if (root === null || typeof root !== 'object') return root;
  const copies = new Map<object, object>();
  const copyOf = (v: object): { copy: object; fresh: boolean } => {
    const existing = copies.get(v);
    if (existing) return { copy: existing, fresh: false };
    const copy = Array.isArray(v) ? [] : {};
    copies.set(v, copy);
    return { copy, fresh: true };
  };
  const rootCopy = copyOf(root).copy;
  const stack: Array<[object, Record<string, unknown>]> = [[root, rootCopy as Record<string, unknown>]];
  while (stack.length > 0) {
    const [src, dst] = stack.pop()!;
    for (const [k, v] of Object.entries(src)) {
      if (typeof v === 'string') dst[k] = fn(v);
      else if (v !== null && typeof v === 'object') {
        const { copy, fresh } = copyOf(v);
        dst[k] = copy;
        if (fresh) stack.push([v, copy as Record<string, unknown>]);
      } else dst[k] = v;
    }
  }
  return rootCopy;
}
