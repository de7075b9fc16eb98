import type { ToolResult } from '../kernel/messages.js';
import type { CompiledRedaction } from './policy-types.js';

const BUFFER_THRESHOLD = 64 * 1024;

/**
 * Rewrites a tool result with re2 redactions, in order: the `content` string
 * and every string inside `data` (iteratively, so deep data cannot overflow
 * the stack). Returns a new result, or the very same object when no pattern
 * matched anything; the input is not modified. Linear time.
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
  const next: ToolResult = { ...result, content: rewrite(result.content) };
  if (result.data !== undefined) next.data = mapStrings(result.data, rewrite);
  return changed ? next : result;
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
