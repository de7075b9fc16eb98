import type { AgentDefinition } from '../../kernel/agent-definition.js';
import type { ThreadHookHost, ThreadHookLike } from '../../kernel/runtime/thread-hooks-port.js';
import { isThreadHookDefinition } from './define-hook.js';
import type { PreparedThreadHooks } from './thread-hook-chain.js';
import type { SourcedThreadHook } from './thread-hook-set.js';

/**
 * What an operation's selection was worked out from, when nothing of it is
 * the operation's own: the agent's definition, the hooks folder's and the
 * agent's code hooks (lists replaced, never changed, when they change), the
 * hooks given to execAgent in code, the ids `state.threadHooks.code` names,
 * and the definitions of the agent's sub-agents (their `parentThreadHooks`).
 */
interface SelectionKey {
  readonly agent: AgentDefinition;
  readonly folder: readonly SourcedThreadHook[];
  readonly own: readonly SourcedThreadHook[] | undefined;
  readonly code: readonly ThreadHookLike[];
  readonly stateCode: readonly string[] | undefined;
  readonly children: readonly (AgentDefinition | undefined)[];
}

/** The hooks folder's and agent's hooks an operation can see, as `open` reads them. */
export interface KnownHookLists {
  readonly folder: readonly SourcedThreadHook[];
  readonly own: readonly SourcedThreadHook[] | undefined;
}

/**
 * The prepared selection of each agent's last opened operation, reused by the
 * next operation that selects from the same things (the step-loop bench's
 * case: every execAgent of one agent with the same code hooks). Building the
 * set, the selection and the bus handlers per operation cost ~0.15-0.3 M
 * instructions (bench/README.md, "Issue 15"). Not cached:
 * - an operation whose prompt lists hooks: their reason names the operation;
 * - code hooks that are not `defineHook` results: a plain object is
 *   validated again by every execAgent (it may have been changed since);
 * - a selection that failed (THREAD_HOOK_MISSING / INVALID is thrown again);
 * - an agent or sub-agent definition that is not frozen.
 * Entries are keyed by identity: a changed agent definition, folder, agent
 * code hooks, sub-agent definition or code hook list misses and replaces the
 * entry; `forget` drops them when the known hooks change.
 */
export class ThreadHookSelectionCache {
  private readonly byAgent = new Map<string, { readonly key: SelectionKey; readonly hooks: PreparedThreadHooks | undefined }>();

  /** The prepared hooks for this operation (`undefined`: it selects none), or `miss` when they must be worked out. */
  lookup(host: ThreadHookHost, agent: AgentDefinition, known: KnownHookLists): PreparedThreadHooks | undefined | typeof MISS {
    const entry = this.byAgent.get(agent.id);
    if (entry === undefined || !matches(entry.key, host, agent, known)) return MISS;
    return entry.hooks;
  }

  /** Keeps what `open` worked out for this operation, when the operation may share it (see the class). */
  remember(host: ThreadHookHost, agent: AgentDefinition, known: KnownHookLists, hooks: PreparedThreadHooks | undefined): void {
    const selection = host.record.state.threadHooks;
    const children = childDefinitions(host, agent);
    // A definition that can still change (agent definitions from the registry are deep-frozen) is read again every time.
    const frozen = Object.isFrozen(agent) && children.every((child) => child === undefined || Object.isFrozen(child));
    if (!frozen || selection?.prompt !== undefined || !host.codeHooks.every(isThreadHookDefinition)) {
      this.byAgent.delete(agent.id);
      return;
    }
    const key: SelectionKey = {
      agent,
      folder: known.folder,
      own: known.own,
      code: [...host.codeHooks],
      stateCode: selection?.code === undefined ? undefined : [...selection.code],
      children,
    };
    this.byAgent.set(agent.id, { key, hooks });
  }

  /** Forgets every agent's entry (or one agent's). */
  forget(agentId?: string): void {
    if (agentId === undefined) this.byAgent.clear();
    else this.byAgent.delete(agentId);
  }
}

/** What {@link ThreadHookSelectionCache.lookup} answers when the selection must be worked out. */
export const MISS: unique symbol = Symbol('thread hook selection not cached');

function matches(key: SelectionKey, host: ThreadHookHost, agent: AgentDefinition, known: KnownHookLists): boolean {
  if (key.agent !== agent || key.folder !== known.folder || key.own !== known.own) return false;
  const selection = host.record.state.threadHooks;
  if (selection?.prompt !== undefined || !sameItems(key.stateCode, selection?.code)) return false;
  if (!sameItems(key.code, host.codeHooks)) return false;
  const subagents = agent.subagents ?? [];
  if (subagents.length !== key.children.length) return false;
  for (let i = 0; i < subagents.length; i++) if (host.agentDefinition(subagents[i]!) !== key.children[i]) return false;
  return true;
}

function childDefinitions(host: ThreadHookHost, agent: AgentDefinition): (AgentDefinition | undefined)[] {
  return (agent.subagents ?? []).map((id) => host.agentDefinition(id));
}

/** Whether two lists hold the same items (by identity) in the same order; two missing lists are the same. */
function sameItems<T>(a: readonly T[] | undefined, b: readonly T[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
