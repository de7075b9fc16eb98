import { HookgateError } from '../errors.js';
import type { ModelProvider, ModelResponse, ToolSpec } from '../model.js';
import type { Message, Usage } from '../messages.js';
import type { RunningOperation } from './running-operation.js';
import { SUBAGENT_IDENTIFIER } from './next-step.js';
import type { RuntimeDeps } from './runtime-deps.js';
import { isDeepFrozen, toolListCovers, type AgentDefinition } from '../agent-definition.js';
import { toolMapOf } from './agent-source-view.js';
import type { ToolEntry } from './call-facts.js';

/** The model provider an agent names, or AGENT/MODEL_NOT_FOUND. */
export function modelFor(deps: RuntimeDeps, op: RunningOperation): ModelProvider {
  const provider = deps.models.get(op.agent.model.provider);
  if (!provider) {
    throw new HookgateError('MODEL_NOT_FOUND', `agent "${op.agent.id}" uses model provider "${op.agent.model.provider}", but no plugin provides it (have: ${[...deps.models.keys()].join(', ') || 'none'})`);
  }
  return provider;
}

/** The allowed tools of a step, by step definition (with the tool map they were taken from). */
const offered = new WeakMap<AgentDefinition, { tools: ReadonlyMap<string, ToolEntry>; specs: readonly ToolSpec[] }>();

/** The tools of the step's map (toolMapOf) that its allow-list covers; worked out once per definition and map. */
function allowedSpecs(deps: RuntimeDeps, agent: AgentDefinition): readonly ToolSpec[] {
  const tools = toolMapOf(agent, deps.tools);
  const known = offered.get(agent);
  if (known !== undefined && known.tools === tools) return known.specs;
  const specs: ToolSpec[] = [];
  for (const { tool } of tools.values()) {
    if (toolListCovers(agent.tools, tool.identifier, tool.apiName)) {
      specs.push({ identifier: tool.identifier, apiName: tool.apiName, description: tool.description, parameters: tool.parameters });
    }
  }
  // Definitions are frozen (so their allow-list cannot change under the cache); anything else is worked out every time.
  if (isDeepFrozen(agent)) offered.set(agent, { tools, specs });
  return specs;
}

/** The tools offered to the model: the step's allowed tools (its agent source's view) plus its sub-agents. */
export function toolsFor(deps: RuntimeDeps, op: RunningOperation): ToolSpec[] {
  // A copy each turn: a provider may keep or change the list it is given.
  const specs: ToolSpec[] = [...allowedSpecs(deps, op.agent)];
  for (const sub of op.agent.subagents ?? []) {
    const description = deps.agents.has(sub) ? deps.agents.get(sub).description : undefined;
    specs.push({
      identifier: SUBAGENT_IDENTIFIER,
      apiName: sub,
      description: description ?? `Delegate a task to the sub-agent "${sub}".`,
      parameters: { type: 'object', properties: { instruction: { type: 'string', description: 'What the sub-agent should do' } }, required: ['instruction'] },
    });
  }
  return specs;
}

/**
 * The messages a model turn sees: instructions, then the active conversation.
 * Built incrementally: the operation keeps its prompt and each turn appends
 * only the messages committed since the last one (a turn costs what it adds,
 * not the whole history). It is rebuilt when the conversation array is
 * replaced (a compaction), when the step's instructions change (an agent
 * source), or after a deferred result filled its placeholder. Providers get
 * it read-only, for the call: the runtime appends to it after the call
 * returns, so a provider that keeps a request copies it.
 */
export function promptMessages(op: RunningOperation): readonly Message[] {
  const instructions = op.agent.instructions || undefined;
  let prompt = op.prompt;
  if (prompt === undefined || prompt.source !== op.messages || prompt.instructions !== instructions) {
    prompt = { source: op.messages, instructions, messages: instructions ? [{ role: 'system', content: instructions }] : [], seen: 0 };
    op.prompt = prompt;
  }
  const source = op.messages;
  for (let i = prompt.seen; i < source.length; i++) prompt.messages.push(promptMessageOf(source[i]!));
  prompt.seen = source.length;
  return prompt.messages;
}

/** A stored message as the model sees it (no ids, positions or dates). */
export function promptMessageOf(m: Message): Message {
  return m.images === undefined
    ? { role: m.role, content: m.content, toolCalls: m.toolCalls, toolCallId: m.toolCallId, toolResult: m.toolResult }
    : { role: m.role, content: m.content, images: m.images };
}

/** Usage with cost from the agent's pricing. */
export function usageOf(op: RunningOperation, response: ModelResponse): Usage {
  const pricing = op.agent.model.pricing;
  const cost = pricing ? (response.usage.promptTokens * pricing.inputPerMillion + response.usage.completionTokens * pricing.outputPerMillion) / 1_000_000 : 0;
  return { ...response.usage, cost };
}

/** Calls the model for one agent turn, streaming text deltas to the timeline. */
export async function callModel(deps: RuntimeDeps, op: RunningOperation, purpose: 'turn' | 'summarize', messages: readonly Message[], turnIndex: number): Promise<ModelResponse> {
  const provider = modelFor(deps, op);
  const operationId = op.record.id;
  try {
    return await provider.complete({
      model: op.agent.model.name ?? '',
      purpose,
      messages,
      tools: purpose === 'turn' ? toolsFor(deps, op) : [],
      signal: op.abort.signal,
      operationId,
      turnIndex,
      modelOptions: op.agent.model as Record<string, unknown>,
      temperature: op.agent.model.temperature,
      maxOutputTokens: op.agent.model.maxOutputTokens,
      onTextDelta: purpose === 'turn' ? (delta) => deps.events.emit({ type: 'text_delta', operationId, delta }) : undefined,
    });
  } catch (err) {
    if (err instanceof HookgateError) throw err;
    throw new HookgateError('MODEL_FAILED', `model provider "${provider.name}" failed: ${(err as Error)?.message ?? String(err)}`, { cause: err });
  }
}
