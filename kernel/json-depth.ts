import { MAX_ARGUMENT_DEPTH } from './runtime/tool-call-identity.js';

/**
 * How deep a tool's result data may nest (objects and arrays): as deep as the
 * runtime lets tool-call arguments nest. The runtime copies results into the
 * store and hooks; data far deeper than this would end the whole operation
 * there, so the call fails instead (tool-call-execution.ts).
 */
export const MAX_RESULT_DATA_DEPTH = MAX_ARGUMENT_DEPTH;

/**
 * Whether `value` nests objects or arrays more than `max` levels deep (a
 * scalar is depth 0, `{}` depth 1). Iterative, so a hostile depth cannot
 * overflow the stack; stops at the first branch past `max`. Synchronous, pure.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return true;
    for (const inner of Object.values(node)) if (inner !== null && typeof inner === 'object') stack.push([inner, depth + 1]);
  }
  return false;
}
