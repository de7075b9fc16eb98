import jsonata from 'jsonata';
import { describeRe2Error } from './re2-compile.js';
import RE2 from 're2';

/** Functions an expression may not call: `$eval` would compile untrusted text without our limits. */
const FORBIDDEN_FUNCTIONS = new Set(['eval']);

/**
 * Compiles a JSONata expression in the main thread (syntax only; it never runs
 * here), checks every regex literal compiles with re2 and rejects forbidden
 * functions. Returns problems as messages; an empty list means it is loadable.
 */
export function checkJsonata(source: string): string[] {
  let ast: unknown;
  try {
    ast = jsonata(source).ast();
  } catch (err) {
    const e = err as { message?: string; position?: number };
    return [`JSONata does not compile: ${e.message ?? String(err)}${e.position !== undefined ? ` (at ${e.position})` : ''}`];
  }
  const problems: string[] = [];
  walk(ast, (node) => {
    if ((node.type === 'regex' || node.type === 'regexp') && node.value instanceof RegExp) {
      try {
        new RE2(node.value);
      } catch (err) {
        problems.push(describeRe2Error(node.value.source, err));
      }
    }
    const proc = node.procedure as { type?: string; value?: unknown } | undefined;
    if (node.type === 'function' && proc?.type === 'variable' && typeof proc.value === 'string' && FORBIDDEN_FUNCTIONS.has(proc.value)) {
      problems.push(`JSONata function $${proc.value} is not allowed in policies`);
    }
  });
  return problems;
}

function walk(root: unknown, visit: (node: Record<string, unknown>) => void): void {
  const seen = new Set<object>();
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object' || node instanceof RegExp || seen.has(node)) continue;
    seen.add(node);
    if (!Array.isArray(node)) visit(node as Record<string, unknown>);
    for (const child of Object.values(node)) stack.push(child);
  }
}
