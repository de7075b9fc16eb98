import type { AgentDefinition } from '../agent-definition.js';
import type { AgentRegistry } from './agent-registry.js';
import { STATIC_AGENT_SOURCE_ID, type AgentSource, type AgentSourceContext, type AgentView } from './agent-source.js';
import { bindStaticView } from './agent-source-view.js';
import type { ToolEntry } from './call-facts.js';

const NO_TOOLS: readonly string[] = Object.freeze([]);

/**
 * The source of agent files and `kernel.agents.define` agents (id `static`):
 * an operation runs the definition it stored at start, whatever the registry
 * holds later, with every tool the kernel's tool sources listed at start.
 * One view per definition object, made once, so a step of a static agent
 * costs a lookup and runs with the very definition it always did. Asked
 * without a stored definition (at start, or by a source that wraps it), it
 * answers from the registry.
 */
export class StaticAgentSource implements AgentSource {
  readonly id = STATIC_AGENT_SOURCE_ID;
  private readonly views = new WeakMap<AgentDefinition, AgentView>();

  constructor(
    private readonly agents: AgentRegistry,
    /** The kernel's tool catalogue (known once the kernel started). */
    private readonly catalogue: () => ReadonlyMap<string, ToolEntry>,
  ) {}

  resolve(ref: string, context: Pick<AgentSourceContext, 'definition'>): AgentView {
    return this.viewOf(context.definition ?? this.agents.get(ref));
  }

  /** The view of a definition (made once per definition object). */
  viewOf(definition: AgentDefinition): AgentView {
    let view = this.views.get(definition);
    if (view === undefined) {
      const tools = this.catalogue();
      view = Object.freeze({
        instructions: definition.instructions,
        model: definition.model,
        tools,
        allowList: definition.tools ?? NO_TOOLS,
        approval: definition.approval,
        limits: definition.limits,
        compaction: definition.compaction,
        subagents: definition.subagents,
        description: definition.description,
      });
      bindStaticView(view, definition, tools);
      this.views.set(definition, view);
    }
    return view;
  }
}
