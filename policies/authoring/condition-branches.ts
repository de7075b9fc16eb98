import type { AstNode } from './jsonata-ast.js';
import { formatJsonata } from './jsonata-ast.js';

/**
 * A place where a condition can go two ways: an operand of an `and`/`or`
 * chain (true or false), or the test of a `? :` (then or else). Numbered in
 * one fixed walk of the AST, so the main thread (labels) and a worker
 * (instrumented evaluation) agree on the ids.
 */
export interface BranchPoint {
  id: number;
  kind: 'operand' | 'condition';
  /** For operands: the chain's operator. */
  operator?: 'and' | 'or';
  /** The operand, or the `? :` test, as JSONata text. */
  text: string;
}

/** The name of the recording function instrumented expressions call. */
export const BRANCH_RECORDER = '__hookgate_branch';

/**
 * Lists the branch points of `ast`; with `instrument`, rewrites the AST in
 * place so each operand and each `? :` test `x` becomes
 * `$__hookgate_branch(id, x)`, which returns `x` unchanged (JSONata's `and`,
 * `or` and `? :` still cast it to a boolean, and still short-circuit, so an
 * operand that is not evaluated is not recorded).
 */
export function branchPoints(ast: AstNode, instrument = false): BranchPoint[] {
  const points: BranchPoint[] = [];
  const wrap = (id: number, node: AstNode): AstNode => ({
    type: 'function',
    value: '(',
    position: node.position,
    arguments: [{ type: 'number', value: id, position: node.position }, node],
    procedure: { type: 'variable', value: BRANCH_RECORDER, position: node.position },
  });
  const visit = (node: AstNode | undefined): void => {
    if (node === undefined || node === null || typeof node !== 'object') return;
    if (node.type === 'binary' && (node.value === 'and' || node.value === 'or')) {
      const op = node.value;
      const slots: Array<{ parent: AstNode; key: 'lhs' | 'rhs' }> = [];
      const flatten = (n: AstNode) => {
        for (const key of ['lhs', 'rhs'] as const) {
          const child = n[key] as AstNode;
          if (child?.type === 'binary' && child.value === op) flatten(child);
          else slots.push({ parent: n, key });
        }
      };
      flatten(node);
      for (const { parent, key } of slots) {
        const operand = parent[key] as AstNode;
        const id = points.length;
        points.push({ id, kind: 'operand', operator: op, text: formatJsonata(operand) });
        visit(operand);
        if (instrument) parent[key] = wrap(id, operand);
      }
      return;
    }
    if (node.type === 'condition' && node.condition) {
      const id = points.length;
      const test = node.condition;
      points.push({ id, kind: 'condition', text: formatJsonata(test) });
      visit(test);
      visit(node.then);
      visit(node.else);
      if (instrument) node.condition = wrap(id, test);
      return;
    }
    for (const value of Object.values(node)) {
      const list = Array.isArray(value) ? value.flat() : [value];
      for (const child of list) if (child !== null && typeof child === 'object' && !(child instanceof RegExp) && typeof (child as AstNode).type === 'string') visit(child as AstNode);
    }
  };
  visit(ast);
  return points;
}

/** JSONata's boolean cast (what `and`, `or`, `? :` and a `when` use). */
export function jsonataTruthy(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (Array.isArray(value)) return value.length === 1 ? jsonataTruthy(value[0]) : value.some(jsonataTruthy);
  if (typeof value === 'string') return value.length > 0;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'function') return false;
  return Object.keys(value).length > 0;
}
