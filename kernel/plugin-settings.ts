import * as v from 'valibot';
import { HookgateError } from './errors.js';
import type { Plugin } from './plugin.js';

/**
 * Validates the config's `plugins.settings` against the plugins of one kernel,
 * all of it before any plugin registers: each plugin's section through its
 * own `settings` schema (an absent section as `{}`), a section for a plugin
 * that is not loaded or takes no settings refused. Returns each plugin's
 * validated (and transformed) settings by id. Throws CONFIG_INVALID listing
 * every problem, one per line, each naming the config field:
 * `plugins.settings.greeting-tools.greeting: expected string, got 42`.
 */
export function validatePluginSettings(plugins: readonly Plugin[], settings: Readonly<Record<string, unknown>>): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const problems: string[] = [];
  const ids = new Set(plugins.map((p) => p.id));
  for (const id of Object.keys(settings)) {
    if (!ids.has(id)) problems.push(`plugins.settings.${id}: no plugin with this id is loaded (loaded: ${[...ids].join(', ') || 'none'})`);
  }
  for (const plugin of plugins) {
    const given = Object.hasOwn(settings, plugin.id) ? settings[plugin.id] : undefined;
    if (!plugin.settings) {
      if (given !== undefined) problems.push(`plugins.settings.${plugin.id}: plugin ${plugin.id} takes no settings`);
      continue;
    }
    const result = v.safeParse(plugin.settings, given === undefined ? {} : given);
    if (result.success) out.set(plugin.id, result.output);
    else for (const issue of result.issues) problems.push(`${fieldOf(plugin.id, issue)}: ${issueText(issue)}`);
  }
  if (problems.length > 0) {
    throw new HookgateError('CONFIG_INVALID', problems.join('\n'), { details: { problems } });
  }
  return out;
}

function fieldOf(pluginId: string, issue: v.BaseIssue<unknown>): string {
  const dot = v.getDotPath(issue);
  return `plugins.settings.${pluginId}${dot ? `.${dot}` : ''}`;
}

/** `expected string, got 42` for a type mismatch; a schema's own message (a `v.check`, a custom message) as written. */
function issueText(issue: v.BaseIssue<unknown>): string {
  if (issue.type === 'strict_object' && issue.expected === 'never') return 'unknown key';
  const defaultMessage = issue.message.startsWith('Invalid ');
  if (!defaultMessage) return issue.message;
  if (issue.expected) return `expected ${issue.expected}, got ${issue.received}`;
  return issue.message;
}
