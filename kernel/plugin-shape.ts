import { PLUGIN_ID_PATTERN, type Plugin } from './plugin.js';

/**
 * What is wrong with `value` as a plugin (a module's default export), or
 * `undefined` when it has a plugin's shape: an object with a kebab-case `id`,
 * a `register` function, optional `start` / `ready` / `stop` / `state`
 * functions, `requires` / `optional` / `provides` lists of tokens, `drivers`
 * as `{ kind, name }` entries and `settings` as a valibot schema.
 */
export function pluginShapeProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `expected a plugin (an object made by definePlugin), got ${describe(value)}`;
  }
  const p = value as Record<string, unknown>;
  if (typeof p.id !== 'string' || !PLUGIN_ID_PATTERN.test(p.id)) return `expected a plugin: its id must be a kebab-case string, got ${describe(p.id)}`;
  const problems: string[] = [];
  if (typeof p.register !== 'function') problems.push(`register must be a function, got ${describe(p.register)}`);
  for (const name of ['start', 'ready', 'stop', 'state'] as const) {
    if (p[name] !== undefined && typeof p[name] !== 'function') problems.push(`${name} must be a function, got ${describe(p[name])}`);
  }
  for (const name of ['requires', 'optional', 'provides'] as const) {
    const list = p[name];
    if (list === undefined) continue;
    if (!Array.isArray(list)) problems.push(`${name} must be a list of tokens, got ${describe(list)}`);
    else list.forEach((t, i) => {
      if (!isToken(t)) problems.push(`${name}[${i}] must be a token (createToken), got ${describe(t)}`);
    });
  }
  if (p.drivers !== undefined) {
    if (!Array.isArray(p.drivers)) problems.push(`drivers must be a list of { kind, name }, got ${describe(p.drivers)}`);
    else p.drivers.forEach((d, i) => {
      const ok = typeof d === 'object' && d !== null && typeof (d as { kind?: unknown }).kind === 'string' && typeof (d as { name?: unknown }).name === 'string';
      if (!ok) problems.push(`drivers[${i}] must be { kind: string, name: string }, got ${describe(d)}`);
    });
  }
  if (p.settings !== undefined && !(typeof p.settings === 'object' && p.settings !== null && (p.settings as { kind?: unknown }).kind === 'schema')) {
    problems.push(`settings must be a valibot schema, got ${describe(p.settings)}`);
  }
  return problems.length === 0 ? undefined : `plugin "${p.id}" is not a valid plugin: ${problems.join('; ')}`;
}

/** Whether `value` has a plugin's shape (see {@link pluginShapeProblem}). */
export function isPlugin(value: unknown): value is Plugin {
  return pluginShapeProblem(value) === undefined;
}

function isToken(t: unknown): boolean {
  return typeof t === 'object' && t !== null && typeof (t as { id?: unknown }).id === 'string' && typeof (t as { key?: unknown }).key === 'symbol';
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  return String(value);
}
