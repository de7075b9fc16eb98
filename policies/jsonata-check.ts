import jsonata from 'jsonata';
import { describeRe2Error } from './re2-compile.js';
import RE2 from 're2';

/**
 * Functions an expression may not reach: `$eval` would compile untrusted text
 * without our limits. JSONata resolves a function by looking its name up in
 * the environment (`environment.lookup(name)`), and the only way to write a
 * lookup is a `$name` variable token (names have no escapes, and `$lookup`
 * reads data objects, never the environment). So refusing every variable node
 * with that name (called, passed as a value, partially applied, chained with
 * `~>`, bound with `:=`, a lambda parameter) and every `@$name` / `#$name`
 * binding closes every spelling. The worker also rebinds `$eval` to a function
 * that throws, as a second line.
 */
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
  const problems = new Set<string>();
  walk(ast, (node) => {
    if ((node.type === 'regex' || node.type === 'regexp') && node.value instanceof RegExp) {
      try {
        new RE2(node.value);
      } catch (err) {
        problems.add(describeRe2Error(node.value.source, err));
      }
    }
    const names = [node.type === 'variable' ? node.value : undefined, node.focus, node.index];
    for (const name of names) {
      if (typeof name === 'string' && FORBIDDEN_FUNCTIONS.has(name)) {
        problems.add(`JSONata function $${name} is not allowed in policies (in any form: a call, a reference, an alias or a binding)`);
      }
    }
  });
  return [...problems];
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
