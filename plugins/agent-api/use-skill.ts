import { ResourceNameConflictError } from './agent-errors.js';
import { defineSkill, type SkillDefinition } from './define-skill.js';
import { requireRenderFrame } from './render-slot.js';

/**
 * Mounts a skill for this render (a `defineSkill` value, or an inline
 * definition validated the same way): its catalog line goes into the system
 * prompt and the model loads its content with the `activate_skill` tool.
 * Also in subagent renders. Synchronous; ResourceNameConflictError for a
 * second skill of the same name in one render, SkillDefinitionValidationError
 * for a bad definition, AgentRenderError outside a render.
 */
export function useSkill(skill: SkillDefinition): void {
  const frame = requireRenderFrame('useSkill');
  const defined = defineSkill(skill);
  if (frame.skills.some((s) => s.name === defined.name)) throw new ResourceNameConflictError('skill', defined.name);
  frame.skills.push(defined);
}
