import { HarnessOptionsError } from './agent-errors.js';
import { TASK_TOOL } from './framework-tools.js';
import type { HarnessScope } from './harness.js';
import type { HarnessCall } from './harness-source.js';

/**
 * The delegation of a prompt: the `task` tool while the agent's latest render
 * declares subagents, its roster taken now. HarnessOptionsError when a tool
 * of the prompt is named `task` then (the model could not tell them apart).
 */
export function delegationOf(scope: HarnessScope, tools: readonly { readonly name: string }[]): HarnessCall['delegation'] {
  const rendered = scope.render?.();
  if (rendered === undefined || rendered.subagents.length === 0) return undefined;
  const at = tools.findIndex((t) => t.name === TASK_TOOL);
  if (at >= 0) throw new HarnessOptionsError(`harness.prompt(): tools[${at}] is named "${TASK_TOOL}", the delegation tool of an agent that declares subagents; rename it`, { field: `tools[${at}]` });
  return Object.freeze({ ref: scope.ref ?? scope.identity, levels: 1 + (scope.harnessLevels ?? 0), roster: rendered.resources.subagents, rendered, live: () => scope.render?.() });
}
