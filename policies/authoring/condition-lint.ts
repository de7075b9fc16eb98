import { closestName } from './closest-name.js';
import { formatJsonata, isJsonataFunction, parseJsonata, startOf, type AstNode } from './jsonata-ast.js';
import { allProperties, constsOf, itemsOf, jsonTypeOf, lookupProperty, typesOf, type JsonSchema, type JsonType } from './json-schema-lookup.js';

/** One shape the policy input can have: its schema, and the tool and event it stands for (for messages). */
export interface InputAlternative {
  schema: JsonSchema;
  tool?: string;
  event: string;
}

/** What a sub-expression can be: the schemas it may follow (`alts`), or anything (`open`). No alts and not open: always undefined. */
interface Shape {
  alts: Array<{ schema: JsonSchema; tool?: string; event?: string }>;
  open: boolean;
}

const OPEN: Shape = { alts: [], open: true };
const BOOLEAN: Shape = { alts: [{ schema: { type: 'boolean' } }], open: false };
const NUMBER: Shape = { alts: [{ schema: { type: 'number' } }], open: false };
const STRING: Shape = { alts: [{ schema: { type: 'string' } }], open: false };

/** JSONata functions whose first argument must be a string (a number or an object there is a type error). */
const STRING_FUNCTIONS = new Set(['contains', 'length', 'substring', 'substringBefore', 'substringAfter', 'uppercase', 'lowercase', 'trim', 'pad', 'split', 'match', 'replace', 'base64encode', 'base64decode', 'encodeUrlComponent', 'encodeUrl', 'decodeUrlComponent', 'decodeUrl']);
const RESULT_TYPES: Record<string, Shape> = {
  contains: BOOLEAN, exists: BOOLEAN, not: BOOLEAN, boolean: BOOLEAN,
  length: NUMBER, count: NUMBER, number: NUMBER, sum: NUMBER, max: NUMBER, min: NUMBER, average: NUMBER, floor: NUMBER, ceil: NUMBER, round: NUMBER, abs: NUMBER,
  string: STRING, substring: STRING, substringBefore: STRING, substringAfter: STRING, uppercase: STRING, lowercase: STRING, trim: STRING, pad: STRING, join: STRING,
};

/**
 * Checks a JSONata condition against the shapes of the policy input it will
 * see (one per candidate tool and event): paths that no shape has (always
 * undefined), comparisons that can never hold for the schema's types or enum
 * values, string functions given a non-string (a type error: the policy fails
 * closed), order comparisons across types, and calls of functions JSONata
 * does not have. Returns messages; the expression must already compile.
 */
export function lintCondition(source: string, roots: readonly InputAlternative[], fields: readonly string[]): string[] {
  const ast = parseJsonata(source);
  const root: Shape = { alts: roots.map((r) => ({ schema: r.schema, tool: r.tool, event: r.event })), open: roots.length === 0 };
  const warnings = new Set<string>();
  new ConditionLinter(root, fields, (m) => warnings.add(m)).infer(ast, root, new Map());
  return [...warnings];
}

class ConditionLinter {
  constructor(
    private readonly root: Shape,
    private readonly fields: readonly string[],
    private readonly warn: (message: string) => void,
  ) {}

  infer(node: AstNode, ctx: Shape, scope: Map<string, Shape>): Shape {
    switch (node.type) {
      case 'path':
        return this.path(node, ctx, scope);
      case 'name':
        return this.path({ type: 'path', steps: [node] }, ctx, scope);
      case 'string':
      case 'number':
      case 'value':
        return { alts: [{ schema: { const: node.value } }], open: false };
      case 'variable':
        return this.variable(node, ctx, scope);
      case 'binary':
        return this.binary(node, ctx, scope);
      case 'function':
        return this.call(node, node.arguments ?? [], ctx, scope);
      case 'apply': {
        const rhs = node.rhs;
        if (rhs?.type === 'function') return this.call(rhs, [node.lhs as AstNode, ...(rhs.arguments ?? [])], ctx, scope);
        this.infer(node.lhs as AstNode, ctx, scope);
        if (rhs) this.infer(rhs, ctx, scope);
        return OPEN;
      }
      case 'condition': {
        if (node.condition) this.infer(node.condition, ctx, scope);
        const then = node.then ? this.infer(node.then, ctx, scope) : OPEN;
        const other = node.else ? this.infer(node.else, ctx, scope) : { alts: [], open: false };
        return union(then, other);
      }
      case 'block': {
        const inner = new Map(scope);
        let last: Shape = { alts: [], open: false };
        for (const e of node.expressions ?? []) last = this.infer(e, ctx, inner);
        return last;
      }
      case 'bind': {
        const value = node.rhs ? this.infer(node.rhs, ctx, scope) : OPEN;
        const target = node.lhs as AstNode | undefined;
        if (target?.type === 'variable') scope.set(String(target.value), value);
        return value;
      }
      case 'lambda': {
        const inner = new Map(scope);
        for (const a of node.arguments ?? []) inner.set(String(a.value), OPEN);
        if (node.body) this.infer(node.body, OPEN, inner);
        return OPEN;
      }
      case 'unary':
        if (node.value === '-') {
          this.infer(node.expression as AstNode, ctx, scope);
          return NUMBER;
        }
        if (node.value === '[') {
          const items = (node.expressions ?? []).map((e) => this.infer(e, ctx, scope));
          if (items.some((s) => s.open)) return { alts: [{ schema: { type: 'array' } }], open: false };
          return { alts: [{ schema: { type: 'array', items: { anyOf: items.flatMap((s) => s.alts.map((a) => a.schema)) } } }], open: false };
        }
        for (const c of childrenOfAny(node)) this.infer(c, ctx, scope);
        return { alts: [{ schema: { type: 'object' } }], open: false };
      default:
        for (const c of childrenOfAny(node)) this.infer(c, ctx, scope);
        return OPEN;
    }
  }

  private variable(node: AstNode, ctx: Shape, scope: Map<string, Shape>): Shape {
    const name = String(node.value);
    let shape = name === '' ? ctx : name === '$' ? this.root : (scope.get(name) ?? OPEN);
    shape = this.stages(node, shape, scope);
    return shape;
  }

  private path(node: AstNode, ctx: Shape, scope: Map<string, Shape>): Shape {
    let shape = ctx;
    const steps = node.steps ?? [];
    let text = '';
    const full = formatJsonata(node);
    steps.forEach((step, i) => {
      if (step.type === 'name') {
        shape = this.step(shape, String(step.value), text, full, step, i === 0 && shape === this.root);
        shape = this.stages(step, shape, scope);
      } else if (step.type === 'wildcard') {
        shape = wildcard(shape);
        shape = this.stages(step, shape, scope);
      } else if (step.type === 'variable' && i === 0) {
        shape = this.variable(step, ctx, scope);
      } else {
        this.infer({ ...step, stages: undefined }, shape, scope);
        shape = this.stages(step, OPEN, scope);
      }
      text = i === 0 ? formatJsonata({ ...step, stages: undefined }) : `${text}.${formatJsonata({ ...step, stages: undefined })}`;
    });
    return shape;
  }

  /** `[predicate]` stages: the predicate sees each item; a number is an index. */
  private stages(step: AstNode, shape: Shape, scope: Map<string, Shape>): Shape {
    for (const stage of step.stages ?? step.predicate ?? []) {
      if (stage.type === 'filter' && stage.expr && stage.expr.type !== 'number') this.infer(stage.expr, itemShape(shape), scope);
    }
    return shape;
  }

  private step(shape: Shape, name: string, parent: string, label: string, node: AstNode, atRoot: boolean): Shape {
    if (shape.open || shape.alts.length === 0) return shape.open ? OPEN : shape;
    const next: Shape = { alts: [], open: false };
    const known = new Set<string>();
    const tools = new Set<string>();
    for (const alt of shape.alts) {
      const schema = itemShape({ alts: [alt], open: false }).alts[0]?.schema ?? alt.schema;
      const r = lookupProperty(schema, name);
      if (r.kind === 'found') next.alts.push({ ...alt, schema: r.schema });
      else if (r.kind === 'open') next.open = true;
      else {
        r.known.forEach((k) => known.add(k));
        if (alt.tool) tools.add(alt.tool);
      }
    }
    if (next.alts.length === 0 && !next.open) this.warn(this.missingMessage(name, parent, label, [...known], [...tools], shape, node, atRoot));
    return next;
  }

  private missingMessage(name: string, parent: string, path: string, known: string[], tools: string[], shape: Shape, node: AstNode, atRoot: boolean): string {
    const at = startOf(node) !== undefined ? ` (at ${startOf(node)})` : '';
    const events = [...new Set(shape.alts.map((a) => a.event).filter((e): e is string => e !== undefined))];
    if (atRoot) {
      if (name === 'result' || name === 'resultText') {
        return `\`${path}\`${at} is always undefined: \`${name}\` is set only for afterToolCall and onToolCallError, and this policy runs on ${events.join(', ')}`;
      }
      const hint = closestName(name, this.fields);
      return `\`${name}\`${at} is not a field of the policy input${hint ? ` (did you mean \`${hint}\`?)` : ` (fields: ${this.fields.join(', ')})`}: \`${path}\` is always undefined`;
    }
    const hint = closestName(name, known);
    const of = tools.length > 0 ? ` of ${listTools(tools)}` : '';
    const what = parent === 'args' ? `an argument${of} (arguments: ${known.join(', ') || 'none'})` : parent === 'canonical' ? `an argument${of} with a canonical form (canonical: ${known.join(', ') || 'none'})` : `a property of \`${parent}\`${of} (properties: ${known.join(', ') || 'none'})`;
    return `\`${name}\`${at} is not ${what}${hint ? `; did you mean \`${hint}\`?` : ''}: \`${path}\` is always undefined`;
  }

  private binary(node: AstNode, ctx: Shape, scope: Map<string, Shape>): Shape {
    const op = String(node.value);
    const lhsNode = node.lhs as AstNode;
    const rhsNode = node.rhs as AstNode;
    const lhs = this.infer(lhsNode, ctx, scope);
    const rhs = this.infer(rhsNode, ctx, scope);
    const text = () => `\`${formatJsonata(node)}\``;
    if (op === '=' || op === '!=') {
      const why = neverEqual(lhs, rhs, lhsNode, rhsNode);
      if (why) this.warn(`${text()} is ${op === '=' ? 'never true' : 'always true'}: ${why}`);
      return BOOLEAN;
    }
    if (op === 'in') {
      const items = itemShape(rhs);
      const why = neverEqual(lhs, items, lhsNode, rhsNode);
      if (why) this.warn(`${text()} is never true: ${why}`);
      return BOOLEAN;
    }
    if (op === '<' || op === '>' || op === '<=' || op === '>=') {
      const l = definedTypes(lhs);
      const r = definedTypes(rhs);
      if (l && r && l.size > 0 && r.size > 0) {
        const ok = (l.has('number') && r.has('number')) || (l.has('string') && r.has('string'));
        if (!ok) {
          this.warn(
            `${text()} compares ${typeWords(lhs)} (\`${formatJsonata(lhsNode)}\`) with ${typeWords(rhs)} (\`${formatJsonata(rhsNode)}\`): JSONata raises a type error, so the policy fails closed (denies) whenever it is evaluated`,
          );
        }
      }
      return BOOLEAN;
    }
    if (op === 'and' || op === 'or') return BOOLEAN;
    if (op === '&') return STRING;
    if (['+', '-', '*', '/', '%'].includes(op)) return NUMBER;
    return OPEN;
  }

  private call(node: AstNode, args: AstNode[], ctx: Shape, scope: Map<string, Shape>): Shape {
    const proc = node.procedure;
    const shapes = args.map((a) => (a.type === 'operator' ? OPEN : this.infer(a, ctx, scope)));
    if (proc?.type !== 'variable') {
      if (proc) this.infer(proc, ctx, scope);
      return OPEN;
    }
    const name = String(proc.value);
    if (scope.has(name)) return OPEN;
    if (!isJsonataFunction(name)) {
      const hint = closestName(name, KNOWN_FUNCTION_NAMES);
      this.warn(`\`$${name}\`${startOf(proc) !== undefined ? ` (at ${startOf(proc)})` : ''} is not a JSONata function${hint ? ` (did you mean \`$${hint}\`?)` : ''}: calling it is an error, so the policy fails closed (denies) whenever it is evaluated`);
      return OPEN;
    }
    const first = shapes[0];
    if (STRING_FUNCTIONS.has(name) && first && args[0]) {
      const types = definedTypes(first);
      if (types && types.size > 0 && !types.has('string')) {
        this.warn(
          `\`${formatJsonata({ ...node, arguments: args })}\` gives $${name} ${describe(first, args[0])}, but $${name} takes a string: JSONata raises a type error, so the policy fails closed (denies) whenever it is evaluated`,
        );
      }
    }
    return RESULT_TYPES[name] ?? OPEN;
  }
}

const KNOWN_FUNCTION_NAMES = ['sum', 'count', 'max', 'min', 'average', 'string', 'substring', 'substringBefore', 'substringAfter', 'lowercase', 'uppercase', 'length', 'trim', 'pad', 'match', 'contains', 'replace', 'split', 'join', 'number', 'boolean', 'not', 'map', 'filter', 'reduce', 'keys', 'lookup', 'append', 'exists', 'merge', 'each', 'type', 'sort', 'distinct'];

function childrenOfAny(node: AstNode): AstNode[] {
  const out: AstNode[] = [];
  for (const v of Object.values(node)) {
    const list = Array.isArray(v) ? v.flat() : [v];
    for (const n of list) if (n !== null && typeof n === 'object' && !(n instanceof RegExp) && typeof (n as AstNode).type === 'string') out.push(n as AstNode);
  }
  return out;
}

function union(a: Shape, b: Shape): Shape {
  return { alts: [...a.alts, ...b.alts], open: a.open || b.open };
}

/** The shape of one item: arrays are mapped over (JSONata paths and predicates see their items). */
function itemShape(shape: Shape): Shape {
  const out: Shape = { alts: [], open: shape.open };
  for (const alt of shape.alts) {
    const types = typesOf(alt.schema);
    if (types && types.size === 1 && types.has('array')) {
      const items = itemsOf(alt.schema);
      if (items === undefined) out.open = true;
      else out.alts.push({ ...alt, schema: items });
    } else out.alts.push(alt);
  }
  return out;
}

function wildcard(shape: Shape): Shape {
  if (shape.open) return OPEN;
  const out: Shape = { alts: [], open: false };
  for (const alt of itemShape(shape).alts) {
    const props = allProperties(alt.schema);
    if (props === undefined) out.open = true;
    else for (const p of props) out.alts.push({ ...alt, schema: p });
  }
  return out;
}

/** The JSON types a shape's defined values can have; undefined when unknown. */
function definedTypes(shape: Shape): Set<JsonType> | undefined {
  if (shape.open) return undefined;
  const out = new Set<JsonType>();
  for (const alt of shape.alts) {
    const t = typesOf(alt.schema);
    if (t === undefined) return undefined;
    t.forEach((x) => out.add(x));
  }
  return out;
}

function constValues(shape: Shape): unknown[] | undefined {
  if (shape.open || shape.alts.length === 0) return undefined;
  const out: unknown[] = [];
  for (const alt of shape.alts) {
    const c = constsOf(alt.schema);
    if (c === undefined) return undefined;
    out.push(...c);
  }
  return out;
}

/** Why `a = b` can never hold (JSONata's `=` never converts types), or undefined when it can. */
function neverEqual(a: Shape, b: Shape, aNode: AstNode, bNode: AstNode): string | undefined {
  const ta = definedTypes(a);
  const tb = definedTypes(b);
  // An always-undefined side is reported where its path is.
  if (!ta || !tb || ta.size === 0 || tb.size === 0) return undefined;
  const scalar = (t: Set<JsonType>) => [...t].filter((x) => x !== 'array' && x !== 'object');
  const sa = scalar(ta);
  const sb = scalar(tb);
  if (sa.length === ta.size && sb.length === tb.size && !sa.some((x) => sb.includes(x))) return `${describe(a, aNode)}, ${describe(b, bNode)}`;
  const ca = constValues(a);
  const cb = constValues(b);
  if (ca && cb && !ca.some((x) => cb.some((y) => x === y))) return `${describe(a, aNode)}, ${describe(b, bNode)}`;
  return undefined;
}

function describe(shape: Shape, node: AstNode): string {
  const text = `\`${formatJsonata(node)}\``;
  const consts = constValues(shape);
  const tools = [...new Set(shape.alts.map((a) => a.tool).filter((t): t is string => t !== undefined))];
  const first = node.type === 'path' ? node.steps?.[0]?.value : undefined;
  const of = tools.length > 0 && (first === 'args' || first === 'canonical') ? ` (in the input schema of ${listTools(tools)})` : '';
  if (consts && node.type !== 'string' && node.type !== 'number' && node.type !== 'value') {
    return `${text} is ${consts.length === 1 ? JSON.stringify(consts[0]) : `one of ${consts.map((c) => JSON.stringify(c)).join(', ')}`}${of}`;
  }
  const types = [...(definedTypes(shape) ?? [])];
  if (consts && consts.length === 1) return `${text} is ${article(jsonTypeOf(consts[0]))}`;
  return `${text} is ${types.map(article).join(' or ')}${of}`;
}

function typeWords(shape: Shape): string {
  return [...(definedTypes(shape) ?? [])].map(article).join(' or ');
}

function article(t: string): string {
  return t === 'array' || t === 'object' ? `an ${t}` : t === 'null' ? 'null' : `a ${t}`;
}

function listTools(tools: readonly string[]): string {
  return tools.length <= 3 ? tools.join(', ') : `${tools.slice(0, 3).join(', ')} and ${tools.length - 3} more`;
}
