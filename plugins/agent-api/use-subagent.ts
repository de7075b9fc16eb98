import { ResourceNameConflictError } from './agent-errors.js';
import { defineSubagent, type SubagentDefinition } from './define-subagent.js';
import { requireRenderFrame } from './render-slot.js';

/**
 * Mounts a delegate for this render (a `defineSubagent` value, a spread of
 * one with overrides, or `GeneralSubagent`): the `task` tool lists it and
 * the model delegates to it by name. Also in subagent renders (nested
 * delegation, bounded by the delegation depth). Synchronous;
 * ResourceNameConflictError for a second subagent of the same name in one
 * render, SubagentDefinitionValidationError for a bad definition,
 * AgentRenderError outside a render.
 */
export function useSubagent(subagent: SubagentDefinition): void {
  const frame = requireRenderFrame('useSubagent');
  const defined = defineSubagent(subagent);
  if (frame.subagents.some((s) => s.name === defined.name)) throw new ResourceNameConflictError('subagent', defined.name);
  frame.subagents.push(defined);
}
