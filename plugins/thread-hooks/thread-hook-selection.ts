import type { AgentDefinition } from '../../kernel/agent-definition.js';
import { HookgateError } from '../../kernel/errors.js';
import type { OperationRecord } from '../../kernel/store.js';
import type { ThreadHookDefinition } from './define-hook.js';
import type { ThreadHookSet } from './thread-hook-set.js';
import type { HookExecutionContext } from './thread-hook-types.js';

/** A hook an operation selected, with why (its `HookExecutionContext`). */
export interface SelectedThreadHook {
  readonly definition: ThreadHookDefinition;
  readonly context: HookExecutionContext;
}

/** What the scoping is worked out from. */
export interface SelectionInput {
  readonly record: OperationRecord;
  readonly agent: AgentDefinition;
  /** A sub-agent's definition by id (its `parentThreadHooks`). */
  readonly agentDefinition: (agentId: string) => AgentDefinition | undefined;
  /** Every hook this operation can resolve an id to, in run order (hooks folder, agent code hooks, execAgent code hooks). */
  readonly known: ThreadHookSet;
  /** The ids of the agent's code hooks (all of them are the agent's hooks). */
  readonly agentCodeIds: readonly string[];
}

/**
 * Document 003's scoping mapped onto hookgate: which hooks run for an
 * operation, and why.
 * - prompt hooks: execAgent's `promptHooks` (stored as `state.threadHooks.prompt`);
 *   when the prompt lists hooks, only those run (source `prompt`, named by the
 *   operation id), and the agent's own list is not used;
 * - agent hooks: the definition's `threadHooks` ids, the agent's code hooks,
 *   and hooks given to execAgent in code (`state.threadHooks.code`), source
 *   `agent` named by the agent id;
 * - required hooks of enabled direct child relationships: each sub-agent the
 *   agent lists in `subagents` (enabled: listed) may name `parentThreadHooks`;
 *   they run on this thread, source `child` (the sub-agent's id), whatever
 *   the prompt lists.
 * A hook selected twice runs once, with its first reason. Hooks run in the
 * order of `known` (the documented order), not the order of the lists.
 * Throws THREAD_HOOK_MISSING naming the id, who selected it and the agent
 * when an id resolves to no hook of this process.
 */
export function selectThreadHooks(input: SelectionInput): SelectedThreadHook[] {
  const { record, agent, known } = input;
  const reasons = new Map<string, HookExecutionContext>();
  const want = (id: string, context: HookExecutionContext, who: string): void => {
    if (reasons.has(id)) return;
    if (known.get(id) === undefined) {
      throw new HookgateError(
        'THREAD_HOOK_MISSING',
        `${who} selects the thread hook "${id}", but this process knows no hook with that id (agent "${agent.id}", operation ${record.id}): ` +
          'put it in the hooks folder, or give it in code again (hooks given to execAgent in code do not survive a restart)',
        { details: { hookId: id, agentId: agent.id, operationId: record.id, selectedBy: context.source } },
      );
    }
    reasons.set(id, Object.freeze(context));
  };
  const prompt = record.state.threadHooks?.prompt;
  if (prompt !== undefined) {
    const source = Object.freeze({ kind: 'prompt' as const, name: record.id });
    for (const id of prompt) want(id, { source }, `the prompt of operation ${record.id}`);
  } else {
    const source = Object.freeze({ kind: 'agent' as const, name: agent.id });
    for (const id of agent.threadHooks ?? []) want(id, { source }, `agent "${agent.id}"`);
    for (const id of input.agentCodeIds) want(id, { source }, `agent "${agent.id}" (its code hooks)`);
    for (const id of record.state.threadHooks?.code ?? []) want(id, { source }, `execAgent's threadHooks of operation ${record.id}`);
  }
  for (const childId of agent.subagents ?? []) {
    const child = input.agentDefinition(childId);
    if (child?.parentThreadHooks === undefined) continue;
    const source = Object.freeze({ kind: 'child' as const, name: childId, agentId: child.id });
    for (const id of child.parentThreadHooks) want(id, { source }, `sub-agent "${childId}" of agent "${agent.id}" (parentThreadHooks)`);
  }
  const selected: SelectedThreadHook[] = [];
  for (const id of known.ids()) {
    const context = reasons.get(id);
    if (context !== undefined) selected.push({ definition: known.get(id)!.definition, context });
  }
  return selected;
}

/**
 * The hooks an agent selects outside any operation (the user scope): the
 * agent file's `threadHooks`, the agent's code hooks, and the
 * `parentThreadHooks` of its sub-agents, with the same reasons and order as
 * {@link selectThreadHooks}; `agent` is undefined for an agent with no
 * definition (an agent function: its code hooks only). Prompt hooks and
 * hooks given to one execAgent call belong to that operation and are not
 * here. Throws THREAD_HOOK_MISSING as selectThreadHooks does.
 */
export function selectAgentHooks(input: { agentId: string; agent: AgentDefinition | undefined; agentDefinition: (agentId: string) => AgentDefinition | undefined; known: ThreadHookSet; agentCodeIds: readonly string[] }): SelectedThreadHook[] {
  const { agentId, agent, known } = input;
  const reasons = new Map<string, HookExecutionContext>();
  const want = (id: string, context: HookExecutionContext, who: string): void => {
    if (reasons.has(id)) return;
    if (known.get(id) === undefined) {
      throw new HookgateError('THREAD_HOOK_MISSING', `${who} selects the thread hook "${id}", but this process knows no hook with that id (agent "${agentId}", user scope)`, {
        details: { hookId: id, agentId, selectedBy: context.source },
      });
    }
    reasons.set(id, Object.freeze(context));
  };
  const source = Object.freeze({ kind: 'agent' as const, name: agentId });
  for (const id of agent?.threadHooks ?? []) want(id, { source }, `agent "${agentId}"`);
  for (const id of input.agentCodeIds) want(id, { source }, `agent "${agentId}" (its code hooks)`);
  for (const childId of agent?.subagents ?? []) {
    const child = input.agentDefinition(childId);
    if (child?.parentThreadHooks === undefined) continue;
    const childSource = Object.freeze({ kind: 'child' as const, name: childId, agentId: child.id });
    for (const id of child.parentThreadHooks) want(id, { source: childSource }, `sub-agent "${childId}" of agent "${agentId}" (parentThreadHooks)`);
  }
  const selected: SelectedThreadHook[] = [];
  for (const id of known.ids()) {
    const context = reasons.get(id);
    if (context !== undefined) selected.push({ definition: known.get(id)!.definition, context });
  }
  return selected;
}

/** Whether an operation could select any hook at all (cheap: no set is built when it cannot). */
export function mightSelect(record: OperationRecord, agent: AgentDefinition, agentDefinition: (id: string) => AgentDefinition | undefined, agentHasCodeHooks: boolean): boolean {
  const selection = record.state.threadHooks;
  if (selection?.prompt !== undefined && selection.prompt.length > 0) return true;
  if (selection?.prompt === undefined && ((agent.threadHooks?.length ?? 0) > 0 || agentHasCodeHooks || (selection?.code?.length ?? 0) > 0)) return true;
  return (agent.subagents ?? []).some((id) => (agentDefinition(id)?.parentThreadHooks?.length ?? 0) > 0);
}
