import jsonata from 'jsonata';

/**
 * The parts of a JSONata AST (`jsonata(expr).ast()`) that the authoring tools
 * read. JSONata does not export types for its AST; these name the fields it
 * sets (see jsonata.js, `processAST`). Every node has `type`; `position` is
 * the offset just past the node's token.
 */
export interface AstNode {
  type: string;
  value?: unknown;
  position?: number;
  steps?: AstNode[];
  stages?: AstNode[];
  predicate?: AstNode[];
  expr?: AstNode;
  lhs?: AstNode | AstNode[][];
  rhs?: AstNode;
  condition?: AstNode;
  then?: AstNode;
  else?: AstNode;
  arguments?: AstNode[];
  procedure?: AstNode;
  expressions?: AstNode[];
  body?: AstNode;
  group?: { lhs: Array<[AstNode, AstNode]> };
  focus?: string;
  index?: string;
  keepArray?: boolean;
  tuple?: boolean;
  [key: string]: unknown;
}

/** Parses a JSONata expression into its AST; throws what JSONata throws on a syntax error. */
export function parseJsonata(source: string): AstNode {
  return jsonata(source).ast() as unknown as AstNode;
}

/** Child nodes of `node`, in source order where JSONata keeps it. */
export function childrenOf(node: AstNode): AstNode[] {
  const out: AstNode[] = [];
  const add = (n: unknown) => {
    if (n !== null && typeof n === 'object' && !(n instanceof RegExp) && typeof (n as AstNode).type === 'string') out.push(n as AstNode);
  };
  for (const key of ['procedure', 'condition', 'then', 'else', 'expr', 'rhs', 'body'] as const) add(node[key]);
  if (Array.isArray(node.lhs)) for (const pair of node.lhs) for (const n of pair) add(n);
  else add(node.lhs);
  for (const key of ['steps', 'stages', 'predicate', 'arguments', 'expressions'] as const) for (const n of node[key] ?? []) add(n);
  for (const pair of node.group?.lhs ?? []) for (const n of pair) add(n);
  return out;
}

/** JSONata text for a node: close to what the author wrote, for messages and reports (not for evaluation). */
export function formatJsonata(node: AstNode | undefined): string {
  if (node === undefined) return '';
  const f = formatJsonata;
  const stages = (n: AstNode) => (n.stages ?? n.predicate ?? []).map((s) => (s.type === 'filter' ? `[${f(s.expr)}]` : s.type === 'index' ? `#$${String(s.value)}` : '')).join('');
  const bind = (n: AstNode) => (n.focus !== undefined ? `@$${n.focus}` : '') + (n.index !== undefined ? `#$${n.index}` : '');
  switch (node.type) {
    case 'path':
      return (node.steps ?? []).map((s, i) => (i > 0 && s.type === 'variable' && s.value === '' ? '$' : f(s))).join('.') + (node.keepArray ? '[]' : '');
    case 'name':
      return quoteName(String(node.value)) + stages(node) + bind(node);
    case 'string':
      return JSON.stringify(node.value) + stages(node);
    case 'number':
      return String(node.value) + stages(node);
    case 'value':
      return String(node.value) + stages(node);
    case 'regex':
    case 'regexp':
      return String(node.value);
    case 'variable':
      return `$${String(node.value)}` + stages(node) + bind(node);
    case 'wildcard':
      return '*' + stages(node) + bind(node);
    case 'descendant':
      return '**' + stages(node);
    case 'parent':
      return '%';
    case 'binary':
      return `${f(node.lhs as AstNode)} ${String(node.value)} ${f(node.rhs)}`;
    case 'apply':
      return `${f(node.lhs as AstNode)} ~> ${f(node.rhs)}`;
    case 'bind':
      return `${f(node.lhs as AstNode)} := ${f(node.rhs)}`;
    case 'condition':
      return `${f(node.condition)} ? ${f(node.then)}${node.else ? ` : ${f(node.else)}` : ''}`;
    case 'function':
    case 'partial':
      return `${f(node.procedure)}(${(node.arguments ?? []).map((a) => (a.type === 'operator' && a.value === '?' ? '?' : f(a))).join(', ')})` + stages(node);
    case 'lambda':
      return `function(${(node.arguments ?? []).map(f).join(', ')}) { ${f(node.body)} }`;
    case 'block':
      return `(${(node.expressions ?? []).map(f).join('; ')})` + stages(node);
    case 'unary':
      if (node.value === '-') return `-${f(node.expression as AstNode)}`;
      if (node.value === '[') return `[${(node.expressions ?? []).map(f).join(', ')}]` + stages(node);
      if (node.value === '{') return `{${((node.lhs as AstNode[][] | undefined) ?? []).map(([k, v]) => `${f(k)}: ${f(v)}`).join(', ')}}`;
      return String(node.value);
    case 'transform':
      return `|${f(node.pattern as AstNode)}|${f(node.update as AstNode)}|`;
    case 'sort':
      return `^(…)`;
    default:
      return String(node.value ?? node.type);
  }
}

function quoteName(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `\`${name}\``;
}

/** Offset of the first character of a node's own token, for "at N" in messages (1-based, like JSONata's errors). */
export function startOf(node: AstNode): number | undefined {
  if (node.type === 'path') return node.steps?.[0] ? startOf(node.steps[0]) : undefined;
  if (node.type === 'binary' || node.type === 'apply') return startOf(node.lhs as AstNode);
  if (node.type === 'condition') return node.condition ? startOf(node.condition) : undefined;
  if (node.type === 'function') return node.procedure ? startOf(node.procedure) : undefined;
  if (node.position === undefined) return undefined;
  if (node.type === 'name' || node.type === 'variable') return node.position - String(node.value).length + (node.type === 'variable' ? 0 : 1);
  return node.position;
}

/**
 * Whether `$name` is one of JSONata's own functions (its `staticFrame`), plus
 * `now` and `millis`, which it binds per evaluation.
 */
export function isJsonataFunction(name: string): boolean {
  return BUILTINS.has(name);
}

/** JSONata 2.x's function library (jsonata.js, `staticFrame`). */
const BUILTINS = new Set([
  'sum', 'count', 'max', 'min', 'average', 'string', 'substring', 'substringBefore', 'substringAfter', 'lowercase', 'uppercase',
  'length', 'trim', 'pad', 'match', 'contains', 'replace', 'split', 'join', 'formatNumber', 'formatBase', 'formatInteger',
  'parseInteger', 'number', 'floor', 'ceil', 'round', 'abs', 'sqrt', 'power', 'random', 'boolean', 'not', 'map', 'zip', 'filter',
  'single', 'reduce', 'sift', 'keys', 'lookup', 'append', 'exists', 'spread', 'merge', 'reverse', 'each', 'error', 'assert', 'type',
  'sort', 'shuffle', 'distinct', 'base64encode', 'base64decode', 'encodeUrlComponent', 'encodeUrl', 'decodeUrlComponent',
  'decodeUrl', 'eval', 'toMillis', 'fromMillis', 'clone', 'now', 'millis',
]);
