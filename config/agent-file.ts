import fs from 'node:fs';
import path from 'node:path';
import { HookgateError } from '../kernel/errors.js';
import type { AgentDefinition } from '../kernel/agent-definition.js';
import type { AgentRegistry } from '../kernel/runtime/agent-registry.js';
import { parseYaml } from './parse-yaml.js';

/**
 * Loads an agent file (YAML) and the sub-agent files it lists, and defines
 * them all in the registry. A `subagents` entry ending in .yaml/.yml is a file
 * path relative to the agent file; it is replaced by that agent's id.
 * Throws AGENT_INVALID / CONFIG_UNREADABLE naming the file and key.
 */
export function loadAgentFile(file: string, registry: AgentRegistry, seen = new Set<string>()): AgentDefinition {
  const full = path.resolve(file);
  if (seen.has(full)) throw new HookgateError('AGENT_INVALID', `${file}: sub-agent files include each other in a cycle`);
  seen.add(full);
  let text: string;
  try {
    text = fs.readFileSync(full, 'utf8');
  } catch (err) {
    throw new HookgateError('CONFIG_UNREADABLE', `${file}: cannot read the agent file (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { cause: err });
  }
  const parsed = parseYaml(text);
  if (!parsed.ok) throw new HookgateError('AGENT_INVALID', `${file}: ${parsed.message}`);
  const raw = parsed.value as Record<string, unknown> | null;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new HookgateError('AGENT_INVALID', `${file}: expected a mapping at the top level`);
  if (Array.isArray(raw.subagents)) {
    raw.subagents = raw.subagents.map((entry: unknown) => {
      if (typeof entry === 'string' && /\.ya?ml$/.test(entry)) return loadAgentFile(path.resolve(path.dirname(full), entry), registry, seen).id;
      return entry;
    });
  }
  return registry.define(raw, file);
}
