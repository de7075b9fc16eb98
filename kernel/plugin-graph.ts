import { HookgateError } from './errors.js';
import { PLUGIN_ID_PATTERN, type Plugin } from './plugin.js';
import type { Token } from './token.js';

/**
 * Validates the whole plugin graph before anything starts and returns the
 * plugins in start order (every provider before its consumers, ties kept in
 * the order given). Throws on the first problem found, naming the plugins.
 *
 * `coreTokens` are bound by the kernel itself and need no provider.
 */
export function orderPlugins(plugins: readonly Plugin[], coreTokens: readonly Token<unknown>[]): Plugin[] {
  const ids = new Set<string>();
  for (const p of plugins) {
    if (typeof p.id !== 'string' || !PLUGIN_ID_PATTERN.test(p.id)) {
      throw new HookgateError('PLUGIN_INVALID_ID', `invalid plugin id ${JSON.stringify(p.id)}: expected kebab-case like "store-sqlite"`, {
        details: { pluginId: p.id },
      });
    }
    if (ids.has(p.id)) {
      throw new HookgateError('PLUGIN_DUPLICATE_ID', `duplicate plugin id "${p.id}": two plugins are registered with it`, { details: { pluginId: p.id } });
    }
    ids.add(p.id);
  }

  const core = new Set(coreTokens.map((t) => t.key));
  const providers = new Map<symbol, Plugin[]>();
  for (const p of plugins) {
    // A token listed twice by one plugin is still one provider.
    for (const t of new Set(p.provides ?? [])) {
      if (core.has(t.key)) {
        throw new HookgateError('PLUGIN_DUPLICATE_PROVIDER', `plugin "${p.id}" provides "${t.id}", which the kernel itself provides`, {
          details: { pluginId: p.id, token: t.id },
        });
      }
      const list = providers.get(t.key) ?? [];
      list.push(p);
      providers.set(t.key, list);
      if (!t.multi && list.length > 1) {
        throw new HookgateError('PLUGIN_DUPLICATE_PROVIDER', `plugins "${list[0]!.id}" and "${p.id}" both provide "${t.id}"; only one may`, {
          details: { plugins: list.map((x) => x.id), token: t.id },
        });
      }
    }
  }

  const deps = new Map<string, string[]>();
  for (const p of plugins) {
    const mine: string[] = [];
    for (const t of p.requires ?? []) {
      if (core.has(t.key)) continue;
      const found = providers.get(t.key);
      if (!found || found.length === 0) {
        throw new HookgateError('PLUGIN_MISSING_REQUIREMENT', `plugin "${p.id}" requires "${t.id}", but no plugin provides it`, {
          details: { pluginId: p.id, token: t.id },
        });
      }
      for (const f of found) if (f.id !== p.id) mine.push(f.id);
    }
    for (const t of p.optional ?? []) {
      for (const f of providers.get(t.key) ?? []) if (f.id !== p.id) mine.push(f.id);
    }
    deps.set(p.id, [...new Set(mine)]);
  }

  // Depth-first topological sort; the stack gives the cycle's path.
  const byId = new Map(plugins.map((p) => [p.id, p]));
  const done = new Set<string>();
  const stack: string[] = [];
  const order: Plugin[] = [];
  const visit = (id: string): void => {
    if (done.has(id)) return;
    const at = stack.indexOf(id);
    if (at >= 0) {
      const path = [...stack.slice(at), id];
      throw new HookgateError('PLUGIN_CYCLE', `plugin dependency cycle: ${path.join(' -> ')}`, { details: { path } });
    }
    stack.push(id);
    for (const d of deps.get(id) ?? []) visit(d);
    stack.pop();
    done.add(id);
    order.push(byId.get(id)!);
  };
  for (const p of plugins) visit(p.id);
  return order;
}
